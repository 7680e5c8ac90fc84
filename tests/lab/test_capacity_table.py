"""Unit tests of lab/benchlib/capacity.py's report: the drain table against
drainrx and the sender's ceiling. Pure Python, no processes."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab"))
from benchlib import capacity  # noqa: E402


def trial(name, rate, per_core, sender_rate=100000.0, error=""):
    return {"receiver": name, "error": error, "sent": 400000, "dropped": 0, "drained": 400000,
            "seconds": round(400000 / rate, 4) if rate else None, "rate": rate, "per_core": per_core,
            "sender_rate": sender_rate}


def test_table_ratios():
    ts = [trial(capacity.SYSLOGRX_NULL, 640000.0, 784000.0),
          trial(capacity.SYSLOGRX_FILE, 400000.0, 500000.0),
          trial(capacity.SYSLOGRX_JSON_FILE, 0, None, error="syslogrx exited with 1: boom"),
          trial(capacity.DRAINRX, 320000.0, 1250000.0),
          trial(capacity.DRAINRX_WRITE, 500000.0, 800000.0)]
    lines = capacity.table(ts).splitlines()
    assert lines[0].count("|") == lines[1].count("|") == 9
    # null output against drainrx only; a file against drainrx and drainrx --write
    assert lines[2] == ("| syslogrx raw, null output | 400,000 | 640,000 | 784,000 | 2.00x |  | "
                        "100,000 | 6.40x |")
    assert lines[3] == ("| syslogrx raw, file | 400,000 | 400,000 | 500,000 | 1.25x | 0.80x | "
                        "100,000 | 4.00x |")
    assert lines[4].startswith("| syslogrx json, file | error: syslogrx exited with 1")
    assert lines[4].count("|") == 9
    assert lines[5] == ("| drainrx | 400,000 | 320,000 | 1,250,000 | 1.00x |  | 100,000 | "
                        "3.20x |")
    assert lines[6] == ("| drainrx --write, file | 400,000 | 500,000 | 800,000 | 1.56x | 1.00x | "
                        "100,000 | 5.00x |")
    # The bench's own ceiling, measured in the same run, wins over the fill rate.
    lines = capacity.table(ts, ceiling=232000.0).splitlines()
    assert lines[2].endswith("| 232,000 | 2.76x |")
    assert "queued 400,000 1000-byte messages" in capacity.report_text(ts)


def test_no_drainrx_no_ratio():
    lines = capacity.table([trial(capacity.SYSLOGRX_FILE, 500000.0, 700000.0)]).splitlines()
    assert lines[2] == ("| syslogrx raw, file | 400,000 | 500,000 | 700,000 | - | - | 100,000 | "
                        "5.00x |")


def test_where_the_time_goes():
    t = trial(capacity.SYSLOGRX_JSON_FILE, 240000.0, 494000.0)
    t.update(seconds=1.6, cpu_output_s=0.4, cpu_workers_s=0.39, output_bytes=884_000_000,
             plain_write_s=0.31)
    text = capacity.where_text([t, trial(capacity.DRAINRX, 750000.0, 1.1e6)])
    assert text == ("- syslogrx json, file: output thread 0.40 CPU s, workers 0.39 CPU s over the "
                    "1.60 s drain; wrote 884 MB (552 MB/s), a plain writer the same bytes in "
                    "0.31 s (2,852 MB/s); the output thread was off the CPU 75% of the drain.\n")
