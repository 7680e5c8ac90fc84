"""Fluent Bit as a peer of lab/sweep and make bench (lab/sweeplib/fluentbit.py):
the three configurations it is given, how its own counts are read, the
settle's figure, and its rows in the sweep's grid and the bench's layout.
Pure Python, no processes: Fluent Bit itself runs in the sweep and the bench."""
import os
import re
import sys

import pytest

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab")
sys.path.insert(0, LAB)
from benchlib import report, runner  # noqa: E402
from sweeplib import fluentbit  # noqa: E402
from support import lab_script  # noqa: E402


def sections(text):
    """A classic config as [(section, {key: value})], comments skipped."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            out.append((line.strip("[]"), {}))
            continue
        k, v = line.split(None, 1)
        out[-1][1][k] = v
    return out


def test_defaults_tuned_and_share_port_configs():
    got = {n: sections(fluentbit.config(n, 51514, 52020, "/w/out.log", 32 << 20))
           for n in fluentbit.CONFIGS}
    for name, secs in got.items():
        assert secs[0] == ("SERVICE", {"log_level": "warn", "parsers_file": "parsers.conf",
                                       "http_server": "on", "http_listen": "127.0.0.1",
                                       "http_port": "52020"}), name
        assert secs[-1] == ("OUTPUT", {"name": "file", "match": "*", "path": "/w",
                                       "file": "out.log"}), name
    base = {"name": "syslog", "mode": "udp", "listen": "127.0.0.1", "port": "51514",
            "parser": "syslog-rfc3164"}
    tuned = dict(base, receive_buffer_size=str(16 << 20), threaded="on")
    assert [s for s in got["fluent-bit"] if s[0] == "INPUT"] == [("INPUT", base)]
    assert [s for s in got["fluent-bit tuned"] if s[0] == "INPUT"] == [("INPUT", tuned)]
    shared = dict(tuned, **{"net.share_port": "true"})
    assert [s for s in got["fluent-bit share_port"] if s[0] == "INPUT"] == \
        [("INPUT", shared), ("INPUT", shared)]
    with pytest.raises(ValueError):
        fluentbit.config("fluent-bit fast", 1, 2, "/w/out.log", 0)


def test_the_parser_takes_both_senders_lines_whole():
    secs = sections(fluentbit.PARSERS)
    assert secs[0][1]["Name"] == "syslog-rfc3164" and secs[0][1]["Format"] == "regex"
    assert "Time_Key" not in secs[0][1]      # the time stays text: no error per line
    # Onigmo's (?<name>) is Python's (?P<name>); the regex itself between the slashes
    rx = re.compile(secs[0][1]["Regex"].strip("/").replace("(?<", "(?P<"))
    loggen = ("<38>2026-11-28T05:02:08 localhost prg00000[1234]: seq: 0000000001, thread: "
              "0000, runid: 1795842128, stamp: 2026-11-28T05:02:08 PADDPADD")
    sysloggen = "<13>Nov  8 05:02:13 vm sysloggen[3195]: seq@32473 run=6b0a flow=0 seq=1 abc"
    m = rx.match(loggen)
    assert (m["time"], m["host"], m["ident"], m["pid"]) == \
        ("2026-11-28T05:02:08", "localhost", "prg00000", "1234")
    # the markers the books count stay whole in the message
    assert m["message"].startswith("seq: 0000000001,")
    m = rx.match(sysloggen)
    assert (m["time"], m["host"], m["message"]) == \
        ("Nov  8 05:02:13", "vm", "seq@32473 run=6b0a flow=0 seq=1 abc")


def test_counts_from_its_metrics_and_the_settle_figure(monkeypatch, tmp_path):
    m = {"input": {"syslog.0": {"records": 700, "bytes": 1},
                   "syslog.1": {"records": 300, "bytes": 1}},
         "output": {"file.0": {"proc_records": 990, "proc_bytes": 1, "errors": 0}}}
    assert fluentbit.counts(m) == (1000, 990)
    assert fluentbit.counts({}) == (0, 0)
    rx = fluentbit.FluentBit({"config": fluentbit.TUNED, "sockets": 1, "rcvbuf": 0}, 1,
                             str(tmp_path))
    (tmp_path / "out.log").write_bytes(b"x" * 42)
    # records still waiting for a flush: a figure that never repeats
    monkeypatch.setattr(rx, "metrics", lambda: m)
    assert rx.progress() != rx.progress()
    # all flushed: the output's size, which settles
    m["output"]["file.0"]["proc_records"] = 1000
    assert rx.progress() == rx.progress() == 42
    monkeypatch.setattr(rx, "metrics", lambda: None)
    assert rx.progress() != rx.progress()


def test_sweep_grid_has_its_three_rows():
    sweep = lab_script.load("sweep")
    a = sweep.parse_args(["--preset", "sc4s", "--out", "/nonexistent"])
    rows = [r for r in sweep.build_grid(a) if r["receiver"] == "fluent-bit"]
    assert [(r["config"], r["sockets"]) for r in rows] == \
        [("fluent-bit", 1), ("fluent-bit tuned", 1), ("fluent-bit share_port", 2)]
    assert rows[2]["row"] == "Fluent Bit in_syslog (UDP), fluent-bit share_port, " \
                             "2 sockets / 2 threads"


def test_bench_layout_and_peer_names():
    assert report.FLUENTBIT_NAMES == fluentbit.CONFIGS
    for name in fluentbit.CONFIGS:
        cls, spec = runner.receiver_spec(name)
        assert cls is fluentbit.FluentBit and spec["config"] == name
        assert spec["rcvbuf"] == runner.RCVBUF
        assert spec["sockets"] == (2 if name == fluentbit.SHARE_PORT else 1)
        assert name in report.PEER_NAMES
