"""lab/benchlib/balance.py's arithmetic: medians per variant, ratios to random
in the same run, the BPF programs' ns per run, the neighbour's table."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lab"))
from benchlib import balance  # noqa: E402


def trial(policy, extra, cpu, **bpf):
    t = {"policy": policy, "extra": extra, "cpu_us": cpu, "received": 1, "drops": 0}
    t.update({f"bpf_{k}_ns": v for k, v in bpf.items()})
    return t


def test_ratios_are_medians_against_random_of_the_same_run():
    res = {"cpu": [trial("random", "", 2.0, select_socket=40),
                   trial("random", "", 2.2, select_socket=44),
                   trial("random", "", 9.0, select_socket=42),
                   trial("leastloaded", "", 2.4, select_socket=50, pressure_enqueu=30),
                   trial("leastloaded", "", 2.6, select_socket=52, pressure_enqueu=32),
                   trial("random", "--ordered", 3.3)],
           "neighbour": [{"policy": "random", "drop_pct": 10.0, "share_worker0": 0.5},
                         {"policy": "leastloaded", "drop_pct": 0.0, "share_worker0": 0.7}],
           "cpu_rate": 50000, "cpu_count": 500000, "neighbour_rate": 26000,
           "neighbour_cost_ns": 40000}
    s = balance.summarize(res)
    assert s["cpu_us"] == {"random": 2.2, "leastloaded": 2.5, "random --ordered": 3.3}
    assert abs(s["ratio_to_random"]["leastloaded"] - 2.5 / 2.2) < 1e-9
    assert abs(s["ratio_to_random"]["random --ordered"] - 1.5) < 1e-9
    assert s["bpf_ns"]["leastloaded"] == {"pressure_enqueu": 31, "select_socket": 51}
    assert s["bpf_ns"]["random"] == {"select_socket": 42}
    assert s["neighbour"]["leastloaded"] == {"drop_pct": 0.0, "share_worker0": 0.7}
    res["summary"] = s
    md = balance.report_md(res)
    assert "| leastloaded | 2.50 | 1.14x | pressure_enqueu 31, select_socket 51 |" in md
    assert "| random --ordered | 3.30 | 1.50x |  |" in md
    assert "| leastloaded | 0.00% | 70% |" in md
