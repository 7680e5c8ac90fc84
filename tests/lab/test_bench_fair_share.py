"""lab/benchlib/fair_share.py's arithmetic: medians per variant and flood
rate, the sender's CPU as a ratio to random alone at the same rate, the
table's rows."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lab"))
from benchlib import fair_share  # noqa: E402


def trial(variant, rate, quiet, flood, cpu, achieved=None):
    return {"variant": variant, "flood_rate": rate, "flood_achieved": achieved or rate,
            "quiet_loss": quiet, "flood_loss": flood, "sender_cpu_us": cpu}


def test_medians_and_ratios_per_flood_rate():
    fs = "random --fair-share"
    res = {"trials": [trial("random", 27000, 0.30, 0.70, 2.0),
                      trial("random", 27000, 0.40, 0.72, 2.2),
                      trial("random", 27000, 0.35, 0.90, 9.0),
                      trial(fs, 27000, 0.0, 0.80, 2.4),
                      trial(fs, 27000, 0.0, 0.82, 2.6),
                      trial("random", 150000, 0.9, 0.9, 3.0, achieved=120000),
                      trial(fs, 150000, 0.0, 0.95, 3.3, achieved=118000)],
           "cost_ns": 111111, "quiet": 50, "quiet_rate": 100, "seconds": 5, "size": 200,
           "loadavg_at_start": "1 2 3", "loadavg_at_end": "4 5 6"}
    s = fair_share.summarize(res)
    by = {(r["flood_rate"], r["variant"]): r for r in s}
    assert by[27000, "random"]["quiet_loss"] == 0.35
    assert by[27000, "random"]["sender_cpu_us"] == 2.2
    assert by[27000, fs]["flood_loss"] == 0.81
    assert abs(by[27000, fs]["sender_ratio"] - 2.5 / 2.2) < 1e-9
    assert abs(by[150000, fs]["sender_ratio"] - 1.1) < 1e-9
    res["summary"] = s
    md = fair_share.report_md(res)
    assert "| 27,000/s (27,000) | random --fair-share | 0.0% | 81.0% | 2.50 | 1.14x |" in md
    assert "| 150,000/s (120,000) | random | 90.0% | 90.0% | 3.00 | 1.00x |" in md
    assert "draining 9,000/s" in md and "Load average 1 2 3" in md
