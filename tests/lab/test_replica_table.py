"""Unit tests of lab/sweeplib/replica.py's pure parts: the published table,
each cell's reference, the calibration target and the Markdown layout.
Pure Python, no processes."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab"))
from sweeplib import replica  # noqa: E402


def test_target_is_one_sc4s_worker():
    # 27,000 x 0.406, 50,000 x 0.2082, 150,000 x 0.0682, 350,000 x 0.0312
    caps = [10962, 10410, 10230, 10920]
    assert replica.TARGET_CAPACITY == round(sum(caps) / 4) == 10630


def test_reference_of_each_cell():
    assert replica.published("hash", 16, 27000) == (59.4, "Default SC4S - 16 threads")
    assert replica.published("random", 8, 50000) == (25.45, "eBPF on - 8 threads")
    assert replica.published("hash", 4, 9000) == (0.24, "Default SC4S - 4 threads")
    # Default does not depend on threads: an unpublished count uses the 16-thread row.
    assert replica.published("hash", 2, 150000) == (93.18, "Default SC4S - 16 threads")
    # eBPF does: no reference rather than a guess.
    assert replica.published("random", 2, 27000) == (None, None)
    assert replica.published("hash", 1, 12345) == (None, None)


def cell(mode, threads, rate, drop, **kw):
    c = {"mode": mode, "threads": threads, "rate": rate, "drop_pct": drop, "error": "",
         "achieved_rate": float(rate)}
    c.update(kw)
    return replica.annotate(c)


def test_annotate_difference():
    c = cell("hash", 2, 27000, 61.9)
    assert c["published_drop_pct"] == 59.4 and c["difference"] == 2.5
    c = cell("random", 2, 27000, 6.5)
    assert c["published_drop_pct"] is None and c["difference"] is None


def test_sender_short_has_no_difference():
    c = cell("hash", 2, 150000, 85.0, achieved_rate=68611.0)
    assert c["published_drop_pct"] == 93.18 and c["difference"] is None
    md = replica.markdown([c], [150000], [("hash", 2)], 2)
    assert "| 85.0% (at 68,611/s) |" in md
    assert "| Default SC4S - 2 threads: difference (points) | sender short |" in md
    c = cell("hash", 2, 4500, 0.0, achieved_rate=4345.0)   # 3.4% short: still comparable
    assert c["difference"] == 0.0


def test_markdown_rows():
    cells = [cell("hash", 2, 27000, 61.94), cell("hash", 2, 50000, 79.0),
             cell("random", 2, 27000, 6.5), cell("random", 2, 50000, 56.9, achieved_rate=40000.0)]
    cal = {"target": 10630, "cost_ns": 88000, "capacity": 10680.0,
           "steps": [{"cost_ns": 92000, "capacity": 10100.0}, {"cost_ns": 88000, "capacity": 10680.0}]}
    md = replica.markdown(cells, [27000, 50000], [("hash", 4), ("hash", 2), ("random", 2)], 2, cal)
    lines = md.splitlines()
    assert lines[0] == "| Receiver / Drops rate for EPS (msgs/sec) | 27,000 | 50,000 |"
    assert lines[2] == "| Default SC4S - 4 threads | not run: 2 CPUs here | not run: 2 CPUs here |"
    assert lines[3] == "| Default SC4S - 2 threads: published (Default SC4S - 16 threads) | 59.4% | 79.2% |"
    assert lines[4] == "| Default SC4S - 2 threads: measured (syslogrx hash, 8 sockets) | 61.9% | 79.0% |"
    assert lines[5] == "| Default SC4S - 2 threads: difference (points) | +2.5 | -0.2 |"
    assert lines[6] == ("| eBPF on - 2 threads: published | not published for 2 threads | "
                        "not published for 2 threads |")
    assert lines[7] == ("| eBPF on - 2 threads: measured (syslogrx random, 8 sockets) | 6.5% | "
                        "56.9% (at 40,000/s) |")
    assert lines[8] == "| eBPF on - 2 threads: difference (points) | - | - |"
    assert "--cost-ns 88000 makes one syslogrx worker drain 10,680 msgs/s" in md
    assert "92000 ns -> 10,100/s" in md
