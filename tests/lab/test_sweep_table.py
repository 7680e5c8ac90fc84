"""Unit tests of lab/sweeplib/table.py: the SC4S-layout Markdown table and the
CSV round trip. Pure Python, no processes."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab"))
from sweeplib import table  # noqa: E402


def cell(row, rate, drop, achieved=None, lost=None, error="", **kw):
    c = {name: None for name in table.FIELD_NAMES}
    sent = rate * 5
    c.update(row=row, receiver="syslogrx", mode="hash", sockets=4, threads=2, rcvbuf=212992,
             window=0, cost_ns=0, size=1000, duration=5.0, repeat=0, sender="sysloggen",
             rate=rate, sent=sent, achieved_rate=float(achieved if achieved else rate),
             drop_pct=drop, lost_pct=drop if lost is None else lost, error=error,
             drops_by_reason="", kernel_drops=int(sent * (drop or 0) / 100))
    c.update(kw)
    return c


def test_thousands_separators():
    assert table.thousands(4500) == "4,500"
    assert table.thousands(350000) == "350,000"
    assert table.thousands(999) == "999"
    assert table.thousands(1234567.4) == "1,234,567"


def test_percentages():
    assert table.fmt_pct(0) == "0.0%"
    assert table.fmt_pct(38.24) == "38.2%"
    assert table.fmt_pct(0.17) == "0.2%"
    # A drop happened: never rounded down to a clean 0.0%.
    assert table.fmt_pct(0.01) == "<0.1%"
    assert table.fmt_pct(None) == "-"


def test_achieved_rate_note_only_beyond_two_percent():
    agg = {"error": "", "drop_pct": 12.0, "lost_pct": 12.0, "achieved_rate": 221_340.0}
    assert table.cell_text(350_000, agg) == "12.0% (at 221,000/s)"
    agg["achieved_rate"] = 343_100.0          # 1.97% short: no note
    assert table.cell_text(350_000, agg) == "12.0%"
    agg["achieved_rate"] = 342_900.0          # 2.03% short: note
    assert table.cell_text(350_000, agg) == "12.0% (at 343,000/s)"
    assert table.cell_text(4500, {"error": "", "drop_pct": 0.0, "lost_pct": 0.0,
                                  "achieved_rate": 4321.0}) == "0.0% (at 4,320/s)"


def test_loss_beyond_kernel_drops_is_shown():
    agg = {"error": "", "drop_pct": 1.0, "lost_pct": 4.1, "achieved_rate": 9000.0}
    assert table.cell_text(9000, agg) == "1.0% [lost 4.1%]"
    agg["lost_pct"] = 1.4
    assert table.cell_text(9000, agg) == "1.0%"


def test_markdown_layout_rows_in_run_order():
    cells = [
        cell("syslogrx random 8 sockets / 2 threads", 4500, 0.0),
        cell("syslogrx random 8 sockets / 2 threads", 350000, 12.0, achieved=221000),
        cell("syslog-ng (SC4S layout, hash) 8 sockets / 2 threads", 4500, 0.0),
        cell("syslog-ng (SC4S layout, hash) 8 sockets / 2 threads", 350000, 93.18),
        cell("rsyslog imudp 1 socket / 2 threads", 4500, 0.0, error="rsyslog exited"),
    ]
    md = table.markdown_table(cells)
    assert md == (
        "| Receiver / Drops rate for EPS (msgs/sec) | 4,500 | 350,000 |\n"
        "|---|---|---|\n"
        "| syslogrx random 8 sockets / 2 threads | 0.0% | 12.0% (at 221,000/s) |\n"
        "| syslog-ng (SC4S layout, hash) 8 sockets / 2 threads | 0.0% | 93.2% |\n"
        "| rsyslog imudp 1 socket / 2 threads | error |  |\n")
    # Rows given explicitly win over run order.
    md = table.markdown_table(cells, rates=[4500], rows=["rsyslog imudp 1 socket / 2 threads",
                                                         "syslogrx random 8 sockets / 2 threads"])
    assert md.splitlines()[2:] == ["| rsyslog imudp 1 socket / 2 threads | error |",
                                   "| syslogrx random 8 sockets / 2 threads | 0.0% |"]


def test_repeats_are_averaged_failed_repeats_ignored():
    cells = [cell("r", 9000, 1.0, repeat=0), cell("r", 9000, 3.0, repeat=1),
             cell("r", 9000, None, repeat=2, error="boom")]
    agg = table.aggregate(cells)[("r", 9000)]
    assert agg["n"] == 2 and agg["drop_pct"] == 2.0
    assert agg["drop_min"] == 1.0 and agg["drop_max"] == 3.0


def test_csv_round_trip(tmp_path):
    cells = [cell("syslogrx hash 4 sockets / 2 threads, rcvbuf 16M", 27000, 66.62,
                  achieved=26123.4, cpu_pct=51.5, peak_rss_kb=16384, steered_min=None,
                  drops_by_reason="SOCKET_RCVBUFF:89919", rcvbuf_effective=16777216),
             cell('odd "row", with comma', 4500, 0.0, error='failed: "x", y')]
    path = tmp_path / "cells.csv"
    table.write_csv(cells, path)
    back = table.read_csv(path)
    assert back == cells
    assert isinstance(back[0]["sent"], int) and isinstance(back[0]["drop_pct"], float)
    assert back[0]["steered_min"] is None      # absent stays absent, not 0
    header = open(path).readline().strip().split(",")
    assert header == table.FIELD_NAMES


def test_read_csv_rejects_other_files(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    try:
        table.read_csv(path)
    except ValueError as e:
        assert "columns missing" in str(e)
    else:
        raise AssertionError("read_csv accepted a CSV without the sweep's columns")


def test_report_and_plot(tmp_path):
    cells = [cell("a", 4500, 0.0), cell("a", 9000, 10.0), cell("b", 4500, 1.0)]
    md = table.markdown_report(cells, title="T", notes=["Machine: 2 CPUs"])
    assert md.startswith("# T\n\n| Receiver / Drops rate")
    assert md.endswith("- Machine: 2 CPUs\n")
    png = tmp_path / "drops.png"
    table.plot(cells, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
