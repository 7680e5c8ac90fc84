"""lab/sweep end to end on a small grid: 2 modes x 2 rates x 3 s, with a
per-message cost that one syslogrx worker cannot sustain at the higher rate
but two can, plus syslog-ng (SC4S layout) and rsyslog rows.

One flow: with the kernel's hash it lands on one socket, so one worker; with
random it is spread over the 4 sockets of 2 workers."""
import os
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "lab"))
from sweeplib import table  # noqa: E402

SWEEP = os.path.join(ROOT, "lab", "sweep")
# 35 us per message: one worker tops out near 28,000 msgs/s, so at 40,000/s
# the hashed flow's worker falls behind while two workers (20,000/s each,
# 70% of a core) keep up.
COST_NS = 35000
RATES = [20000, 40000]
DURATION = 3

ROWS = ["syslogrx hash 4 sockets / 2 threads, cost 35000 ns",
        "syslogrx random 4 sockets / 2 threads, cost 35000 ns",
        "syslog-ng (SC4S layout, hash) 4 sockets / 2 threads",
        "rsyslog imudp 1 socket / 2 threads"]


def test_small_grid(tmp_path):
    out = tmp_path / "sweep"
    r = subprocess.run([SWEEP, "--modes", "hash,random", "--sockets", "4", "--threads", "2",
                        "--rates", ",".join(map(str, RATES)), "--duration", str(DURATION),
                        "--size", "1000", "--cost-ns", str(COST_NS), "--peer", "syslog-ng",
                        "--peer", "rsyslog", "--no-ceiling", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]

    cells = table.read_csv(out / "cells.csv")
    assert [(c["row"], c["rate"]) for c in cells] == [(row, rate) for row in ROWS
                                                      for rate in RATES]
    by = {(c["row"], c["rate"]): c for c in cells}
    for c in cells:
        assert c["error"] == "", c
        # The sender offered exactly rate x duration (it can, at these rates).
        assert c["sent"] == c["rate"] * DURATION, c
        assert c["size"] == 1000 and c["duration"] == DURATION
        # Every kernel drop is a missing message; nothing arrived twice.
        assert c["seq_missing"] >= c["kernel_drops"] >= 0, c
        assert c["delivered"] + c["seq_missing"] == c["sent"]
        assert c["peak_rss_kb"] > 0 and c["cpu_pct"] > 0
        assert c["drop_pct"] == round(100.0 * c["kernel_drops"] / c["sent"], 3)
    for c in cells:
        if c["receiver"] == "syslogrx":
            # syslogrx's own books close: every gap is a counted kernel drop
            # (sysloggen's 3 end markers come after a pause: none is lost).
            assert c["seq_missing"] == c["kernel_drops"], c
            assert c["end_markers"] == 3, c
            assert c["written"] == c["received"] == c["delivered"] + c["end_markers"], c
            assert c["rcvbuf_effective"] == 212992
        else:
            assert c["written"] == c["delivered"] + c["end_markers"], c
            assert c["end_markers"] == 3, c
            assert c["rcvbuf_effective"] == 212992, c

    hash40, rand40 = by[(ROWS[0], 40000)], by[(ROWS[1], 40000)]
    # One worker cannot keep up: at least the excess over ~28,000/s is dropped...
    assert hash40["drop_pct"] > 15.0, hash40
    assert "SOCKET_RCVBUFF" in hash40["drops_by_reason"]
    # ...while two workers share the load and drop far less.
    assert rand40["drop_pct"] < hash40["drop_pct"] / 2, (rand40, hash40)
    # The balancer steered every datagram: nothing fell back to the hash.
    assert rand40["selection_failures"] == 0
    assert rand40["steered_min"] > 0.2 * rand40["sent"]
    # hash loads no program: its steered counts are absent, not zero.
    assert hash40["steered_min"] is None and hash40["selection_failures"] is None

    md = (out / "table.md").read_text()
    expected = table.markdown_table(cells, RATES, ROWS)
    assert expected in md
    lines = expected.splitlines()
    assert lines[0] == "| Receiver / Drops rate for EPS (msgs/sec) | 20,000 | 40,000 |"
    assert [x.split(" | ")[0].lstrip("| ") for x in lines[2:]] == ROWS
    assert lines[3] == (f"| {ROWS[1]} | {table.cell_text(20000, table.aggregate(cells)[(ROWS[1], 20000)])}"
                        f" | {table.cell_text(40000, table.aggregate(cells)[(ROWS[1], 40000)])} |")
    assert f"| {ROWS[0]} | " in md and f"{hash40['drop_pct']:.1f}%" in lines[2]

    png = (out / "drops.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
    meta = __import__("json").loads((out / "cells.json").read_text())
    assert len(meta["cells"]) == len(cells) and meta["meta"]["interrupted"] is False
