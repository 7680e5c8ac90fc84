"""Unit tests of lab/benchlib/report.py: the zero-drop search, capacity,
ratios to drainrx and to the best peer, PASS/MISS, the Markdown tables and
the CSV. Pure Python, from canned trials: no processes."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab"))
from benchlib import report as R  # noqa: E402

COLUMNS = [27000, 50000, 150000]
TOP = 193000


def trial(receiver, rate, drops=0, lost=None, achieved=None, phase="search", cpu=None,
          rss=None, size=1000, sender="sysloggen", error=""):
    """A finished trial: sent = rate x 10 s; cpu = (user_us, sys_us)."""
    sent = rate * 10
    t = {"phase": phase, "receiver": receiver, "sender": sender, "sockets": 4, "threads": 2,
         "size": size, "rate": rate, "duration": 10.0, "sent": sent,
         "achieved_rate": float(achieved if achieved is not None else rate),
         "kernel_drops": drops, "error": error, "hz": 100, "peak_rss_kb": rss}
    t["written"] = t["received"] = sent - (drops if lost is None else lost)
    if cpu:
        # ticks that give exactly these microseconds per received message
        t["user_ticks"] = cpu[0] * t["received"] / 1e6 * 100
        t["sys_ticks"] = cpu[1] * t["received"] / 1e6 * 100
    return R.finish_trial(t)


def run(receiver, drops_by_rate, cpu, rss, achieved=None):
    """A search: trials at each rate, the one at 50,000/s carrying CPU and RSS."""
    out = []
    for rate, drops in drops_by_rate:
        ach = (achieved or {}).get(rate)
        out.append(trial(receiver, rate, drops, achieved=ach,
                         cpu=cpu if rate == 50000 else None, rss=rss if rate == 50000 else None))
    return out


def canned():
    return (run(R.SYSLOGRX_RAW, [(27000, 0), (50000, 0), (150000, 0), (TOP, 0)], (1.0, 3.5),
                16384)
            + run(R.SYSLOGRX_JSON, [(27000, 0), (50000, 0), (150000, 0), (TOP, 0)], (1.5, 3.5),
                  16384)
            + run(R.SYSLOGRX_NOTRACE, [(27000, 0), (50000, 0), (150000, 0), (TOP, 0)],
                  (1.0, 3.25), 8192, achieved={TOP: 180000.0})
            + run(R.DRAINRX, [(27000, 0), (50000, 0), (150000, 0), (TOP, 0)], (0.0, 3.0), 2048)
            + run(R.SYSLOG_NG, [(27000, 0), (50000, 135), (38000, 0), (44000, 12)],
                  (4.0, 6.0), 12288)
            + run(R.RSYSLOG, [(27000, 0), (50000, 0), (150000, 7500), (100000, 0),
                              (125000, 10)], (3.0, 9.0), 4096))


# ---- one trial ---------------------------------------------------------------

def test_finish_trial_cpu_per_message_and_drops():
    t = {"sent": 500000, "written": 499000, "kernel_drops": 600, "received": 499000,
         "user_ticks": 50, "sys_ticks": 150, "hz": 100}
    R.finish_trial(t)
    assert t["lost"] == 1000
    # the worse of kernel drops and end-to-end loss
    assert t["drop_pct"] == 0.2
    # 0.5 s user / 499,000 messages
    assert t["user_us"] == round(0.5 / 499000 * 1e6, 3) == 1.002
    assert t["sys_us"] == 3.006
    assert t["cpu_us"] == 4.008


def test_zero_drop_needs_no_kernel_drop_and_no_loss():
    assert R.zero_drop(trial(R.DRAINRX, 50000))
    assert not R.zero_drop(trial(R.DRAINRX, 50000, drops=1))
    assert not R.zero_drop(trial(R.DRAINRX, 50000, drops=0, lost=1))
    assert not R.zero_drop(trial(R.DRAINRX, 50000, error="syslog-ng exited"))


def test_load_rate_is_offered_unless_the_sender_fell_short():
    assert R.load_rate(trial(R.DRAINRX, 150000, achieved=147100)) == 150000.0   # 1.93% short
    assert R.load_rate(trial(R.DRAINRX, 150000, achieved=146900)) == 146900.0   # 2.07% short
    assert R.load_rate({"rate": 0, "achieved_rate": 191234.5}) == 191234.5


# ---- search ------------------------------------------------------------------

def test_ladder_is_the_columns_below_the_ceiling_then_the_ceiling():
    assert R.ladder(COLUMNS, 193522.7) == [27000, 50000, 150000, 193000]
    assert R.ladder(COLUMNS, 120400) == [27000, 50000, 120000]
    assert R.ladder(COLUMNS, 150000) == [27000, 50000, 150000]


def test_search_climbs_then_bisects_a_bounded_number_of_steps():
    seq = []
    outcome = {27000: True, 50000: True, 150000: False}   # good up to 80,000
    while True:
        r = R.next_rate([(x, outcome.get(x, x <= 80000)) for x in seq], COLUMNS, 193522, 3)
        if r is None:
            break
        seq.append(r)
    assert seq == [27000, 50000, 150000, 100000, 75000, 88000]


def test_search_stops_at_the_top_when_nothing_drops():
    tried = [(27000, True), (50000, True), (150000, True), (193000, True)]
    assert R.next_rate(tried, COLUMNS, 193522, 4) is None
    assert R.next_rate(tried[:2], COLUMNS, 193522, 4) == 150000


def test_search_below_the_first_column_and_with_no_steps():
    assert R.next_rate([(27000, False)], COLUMNS, 193522, 2) == 14000
    assert R.next_rate([(27000, False)], COLUMNS, 193522, 0) is None
    # nothing left between two neighbouring thousands
    assert R.next_rate([(27000, True), (28000, False)], [27000, 28000], 30000, 5) is None


def test_capacity_and_whether_it_held_the_ceiling():
    trials = canned()
    ng = R.capacity([t for t in trials if t["receiver"] == R.SYSLOG_NG], TOP)
    assert ng["rate"] == 38000.0 and ng["offered"] == 38000 and not ng["reached_top"]
    assert [x[:2] for x in ng["trail"]] == [(27000, 0.0), (38000, 0.0), (44000, 0.0027),
                                            (50000, 0.027)]
    nt = R.capacity([t for t in trials if t["receiver"] == R.SYSLOGRX_NOTRACE], TOP)
    # held the top, but the sender reached only 180,000/s there
    assert nt["reached_top"] and nt["rate"] == 180000.0 and nt["offered"] == TOP
    none = R.capacity([trial(R.RSYSLOG, 27000, drops=5)], TOP)
    assert none["rate"] == 0.0 and not none["reached_top"]


# ---- ratios and targets ------------------------------------------------------

def test_ratio_handles_missing_and_zero():
    assert R.ratio(3.0, 2.0) == 1.5
    assert R.ratio(None, 2.0) is None
    assert R.ratio(3.0, None) is None
    assert R.ratio(3.0, 0) is None


def test_best_peer_is_the_lowest_cost_and_the_highest_capacity():
    assert R.best_peer({"syslog-ng": 10.0, "rsyslog": 12.0}) == ("syslog-ng", 10.0)
    assert R.best_peer({"syslog-ng": None, "rsyslog": 12.0}) == ("rsyslog", 12.0)
    assert R.best_peer({"syslog-ng": None}) == (None, None)
    caps = {"syslog-ng": {"rate": 38000.0}, "rsyslog": {"rate": 100000.0}}
    assert R.best_peer_capacity(caps) == ("rsyslog", 100000.0)


def test_summary_ratios_to_drainrx_and_best_peer():
    s = R.summarize(canned(), TOP, 50000, 1000)
    raw = s["ratios"][R.SYSLOGRX_RAW]
    assert s["best_peer"]["cpu_us"] == ("syslog-ng", 10.0)
    assert raw["cpu_us"]["drainrx"] == 4.5 / 3.0
    assert raw["cpu_us"]["best_peer"] == 4.5 / 10.0
    assert raw["user_us"]["best_peer"] == 1.0 / 3.0     # rsyslog's user time is the lowest
    assert s["best_peer"]["peak_rss_kb"] == ("rsyslog", 4096)
    assert raw["peak_rss_kb"]["drainrx"] == 8.0
    # both held the ceiling: offered against offered
    assert raw["capacity"]["drainrx"] == 1.0 and raw["capacity"]["drainrx_bound"] == ""
    # rsyslog (100,000/s) is the best peer by capacity; syslogrx is a lower bound
    assert raw["capacity"]["best_peer"] == TOP / 100000
    assert raw["capacity"]["best_peer_bound"] == ">="


def test_targets_pass_and_miss():
    st = [(t["target"], t["status"]) for t in R.targets(R.summarize(canned(), TOP, 50000,
                                                                      1000))]
    assert st == [
        ("syslogrx raw, file output: 0 drops at every rate up to the sender's ceiling "
         "(193,000/s)", "PASS"),
        ("syslogrx json, file output: 0 drops at every rate up to the sender's ceiling "
         "(193,000/s)", "PASS"),
        ("syslogrx raw: CPU/msg <= 0.8x drainrx's", "MISS"),          # 1.5x
        ("syslogrx raw: CPU/msg <= 0.4x the best peer's", "MISS"),    # 0.45x
        ("syslogrx json: CPU/msg <= 1.0x drainrx's", "MISS"),         # 1.67x
        ("json's extra cost: CPU/msg of json / raw", "INFO"),
        ("tracer on keeps >= 97% of the zero-drop capacity without it", "PASS"),
        ("tracer's CPU cost: CPU/msg with tracing / without", "INFO"),
    ]
    values = [t["value"] for t in R.targets(R.summarize(canned(), TOP, 50000, 1000))]
    assert values[2] == "1.50x (4.50 vs 3.00 us/msg)"
    assert values[3] == "0.45x (4.50 vs syslog-ng 10.00 us/msg)"
    assert values[4] == "1.67x (5.00 vs 3.00 us/msg)"
    assert values[5] == ("1.11x (+0.50 us/msg; json is 1.67x drainrx, 0.50x the best peer)")
    assert values[6] == "100.0% (193,000 vs 180,000/s; both hold the sender's ceiling)"
    assert values[7] == "1.06x (4.50 vs 4.25 us/msg)"


def test_cpu_targets_against_drainrx_pass_at_the_bound():
    # raw 2.40 us (0.8x drainrx's 3.00), json 3.00 us (1.0x): both exactly at the bound.
    trials = [t for t in canned() if t["receiver"] not in (R.SYSLOGRX_RAW, R.SYSLOGRX_JSON)]
    trials += run(R.SYSLOGRX_RAW, [(50000, 0)], (0.4, 2.0), 16384)
    trials += run(R.SYSLOGRX_JSON, [(50000, 0)], (1.0, 2.0), 16384)
    tg = {t["target"]: t for t in R.targets(R.summarize(trials, TOP, 50000, 1000))}
    assert tg["syslogrx raw: CPU/msg <= 0.8x drainrx's"]["status"] == "PASS"
    assert tg["syslogrx json: CPU/msg <= 1.0x drainrx's"]["status"] == "PASS"
    assert tg["syslogrx json: CPU/msg <= 1.0x drainrx's"]["value"] == \
        "1.00x (3.00 vs 3.00 us/msg)"


def test_json_bytes_and_the_json_ceiling_cell():
    """Bytes per message of json (msg once, --json-raw) from the drain's
    files; the loggen cell PASSes on 0 drops only, and a failed trial is N/A."""
    drain = [{"receiver": "syslogrx json, file", "per_core": 1.0, "error": "",
              "drained": 200000, "output_bytes": 247400000},
             {"receiver": "syslogrx json --json-raw, file", "per_core": 1.0, "error": "",
              "drained": 200000, "output_bytes": 449200000}]

    def cells(ceiling):
        return R.cost_targets(drain, None, None, ceiling)[-2:]
    b, c = cells({"error": "", "drop_pct": 0.0, "achieved_rate": 122058.6})
    assert (b["value"], b["status"]) == ("msg once 1,237 B, --json-raw 2,246 B", "INFO")
    assert c["status"] == "PASS" and c["value"].endswith("drops at 122,059/s"), c
    _, c = cells({"error": "", "drop_pct": 0.01, "achieved_rate": 122058.6})
    assert c["status"] == "MISS"
    _, c = cells({"error": "boom", "drop_pct": None, "achieved_rate": None})
    assert (c["value"], c["status"]) == ("-", "N/A")


def test_cost_targets_from_drain_balance_and_disk_buffer():
    drain = [{"receiver": "syslogrx raw, null output", "per_core": 900000.0, "error": ""},
             {"receiver": "syslogrx raw, file", "per_core": 700000.0, "error": ""},
             {"receiver": "syslogrx json, file", "per_core": None, "error": "boom"},
             {"receiver": "drainrx", "per_core": 1000000.0, "error": ""},
             {"receiver": "drainrx --write, file", "per_core": 736842.0, "error": ""}]
    balance = {"cpu_us": {"random": 0.80, "leastloaded": 0.88, "random --ordered": 0.96},
               "ratio_to_random": {"random": 1.0, "leastloaded": 1.1,
                                   "random --ordered": 1.2}}
    tg = R.cost_targets(drain, balance, {"none": 500.0, "reliable": 650.0})
    assert [(t["target"], t["status"]) for t in tg] == [
        ("drained per CPU second past the sender, syslogrx raw, null output: >= 0.9x "
         "drainrx's", "PASS"),                                          # exactly 0.9x
        ("drained per CPU second past the sender, syslogrx raw, file: >= 0.95x "
         "drainrx --write's", "PASS"),                                  # 0.95x
        ("drained per CPU second past the sender, syslogrx json, file: >= 0.8x "
         "drainrx --write's", "N/A"),                                   # its trial failed
        ("random --ordered: CPU/msg <= 1.15x random's", "MISS"),
        ("leastloaded: CPU/msg <= 1.15x random's", "PASS"),
        ("--disk-buffer-mode reliable, healthy destination: CPU/msg <= 1.3x no buffer's",
         "PASS"),                                                       # exactly 1.3x
        ("json into a file: bytes written per 1000-byte message", "N/A"),  # no file trial
        ("syslogrx json into a file at the sender's ceiling (loggen, one flow, 8 sockets, "
         "2 threads): 0 drops", "N/A"),                                  # not run
    ]
    assert tg[0]["value"] == "0.90x (900,000 vs 1,000,000/CPU s)"
    # a file cell against both: the limit of writing (the target) and the drain
    assert tg[1]["value"] == "0.95x (700,000 vs 736,842/CPU s); 0.70x drainrx's"
    drain[-1]["per_core"] = 737000.0
    assert R.cost_targets(drain)[1]["status"] == "MISS"                 # 0.9498x
    drain.pop()
    assert (R.cost_targets(drain)[1]["value"], R.cost_targets(drain)[1]["status"]) == \
        ("-; 0.70x drainrx's", "N/A")                                   # no drainrx --write
    assert tg[3]["value"] == "1.20x (0.96 vs 0.80 us/msg)"
    assert tg[5]["value"] == "1.30x (0.65 vs 0.50 us/msg)"
    # Nothing measured: every row N/A, never PASS.
    assert {t["status"] for t in R.cost_targets()} == {"N/A"}


def test_targets_miss_on_drops_and_on_tracer_capacity():
    trials = [t for t in canned() if t["receiver"] != R.SYSLOGRX_RAW]
    trials += run(R.SYSLOGRX_RAW, [(27000, 0), (50000, 0), (150000, 0), (TOP, 40),
                                   (172000, 0), (183000, 3)], (1.0, 3.5), 16384)
    s = R.summarize(trials, TOP, 50000, 1000)
    tg = R.targets(s)
    assert tg[0]["status"] == "MISS"
    assert tg[0]["value"] == "zero-drop capacity 172,000/s; drops from 183,000/s"
    # 172,000 / 180,000 (what the sender reached without the tracer) = 95.6%
    assert tg[6]["status"] == "MISS"
    assert tg[6]["value"] == "95.6% (172,000 vs 180,000/s)"


def test_missing_figures_are_na_not_pass():
    trials = [t for t in canned() if t["receiver"] not in (R.DRAINRX, R.SYSLOG_NG, R.RSYSLOG)]
    st = [t["status"] for t in R.targets(R.summarize(trials, TOP, 50000, 1000))]
    assert st[2:4] == ["N/A", "N/A"]


# ---- text --------------------------------------------------------------------

def test_formats():
    assert R.fmt_ratio(1.5) == "1.50x" and R.fmt_ratio(None) == "-"
    assert R.fmt_bounded(1.2934, ">=") == ">=1.29x" and R.fmt_bounded(None, ">=") == "-"
    assert R.fmt_drop(0) == "0" and R.fmt_drop(0.004) == "<0.01%" and R.fmt_drop(2.7) == "2.70%"
    assert R.fmt_drop(None) == "-"
    assert R.fmt_mb(16384) == "16.0" and R.fmt_us(3.14159) == "3.14"
    assert R.trail_text([(150000, 0.0, "", 150000.0), (193000, 2.5, "", 171000.4),
                         (200000, None, "boom", 0.0)]) == \
        "150,000: 0 · 193,000 (at 171,000): 2.50% · 200,000 (at 0): error"


def test_markdown_tables():
    s = R.summarize(canned(), TOP, 50000, 1000)
    cap = R.capacity_table(s).splitlines()
    assert cap[0] == ("| Receiver | Sender | Zero-drop capacity (msgs/s) | x drainrx | "
                      "x best peer | Drops at each offered rate tried (msgs/s: % of sent) |")
    assert cap[1] == "|---|---|---|---|---|---|"
    assert cap[2] == ("| syslogrx raw | sysloggen (even pace) | 193,000 (sender's ceiling) | "
                      "1.00x | >=1.93x | 27,000: 0 · 50,000: 0 · 150,000: 0 · 193,000: 0 |")
    assert cap[6] == ("| syslog-ng | sysloggen (even pace) | 38,000 | - | - | 27,000: 0 · "
                      "38,000: 0 · 44,000: <0.01% · 50,000: 0.03% |")
    cpu = R.cpu_table(s).splitlines()
    assert cpu[0].startswith("| Receiver | Sender | user us/msg |")
    assert cpu[0].endswith("| drops | CPU us/msg at 150,000/s (drops) |")
    assert cpu[2] == ("| syslogrx raw | sysloggen (even pace) | 1.00 | 3.50 | 4.50 | 1.50x | "
                      "0.45x | 16.0 | 8.00x | 4.00x | 0 | - (0) |")
    assert cpu[5] == ("| drainrx | sysloggen (even pace) | 0.00 | 3.00 | 3.00 | - | - | 2.0 | "
                      "- | - | 0 | - (0) |")
    # syslog-ng never ran 150,000/s; rsyslog did, with drops
    assert cpu[6].endswith("| 0.03% | - |") and cpu[7].endswith("| 0 | - (0.50%) |")


def test_peer_tables_have_both_senders_each_row_labelled():
    fb = R.FLUENTBIT_NAMES[1]
    trials = canned() + run(fb, [(27000, 0), (50000, 400)], (9.0, 11.0), 30000)
    trials += [trial(name, 50000, drops=d, phase="loggen", sender="loggen", cpu=c, rss=1024)
               for name, d, c in ((R.DRAINRX, 0, (0.0, 2.5)), (R.SYSLOG_NG, 15000, (4.0, 6.0)),
                                  (fb, 60000, (10.0, 10.0)))]
    trials.append(trial(R.RSYSLOG, 50000, phase="loggen", sender="loggen", error="boom"))
    s = R.summarize(trials, TOP, 50000, 1000)
    absent = {R.FLUENTBIT_NAMES[0]: "absent: not built"}
    cap = R.capacity_table(s, trials, absent).splitlines()
    ng = [l for l in cap if l.startswith("| syslog-ng |")]
    assert ng[1] == ("| syslog-ng | loggen (SC4S's sender, start burst included) | not searched "
                     "| - | - | 50,000: 3.00% |")
    assert [l.split(" | ")[1] for l in cap if l.startswith(f"| {fb} |")] == \
        ["sysloggen (even pace)", "loggen (SC4S's sender, start burst included)"]
    # an absent configuration is a row that says so; a failed loggen trial is no row
    assert f"| {R.FLUENTBIT_NAMES[0]} | - | absent: not built | - | - | - |" in cap
    assert len([l for l in cap if l.startswith("| rsyslog |")]) == 1
    assert not any(l.startswith(f"| {R.FLUENTBIT_NAMES[2]} |") for l in cap)
    cpu = R.cpu_table(s, trials, absent).splitlines()
    rows = [l for l in cpu if l.startswith(f"| {fb} |")]
    assert rows[0].startswith(f"| {fb} | sysloggen (even pace) | 9.00 | 11.00 | 20.00 | ")
    # a loggen row against drainrx's loggen trial (2.50 us/msg)
    assert rows[1] == (f"| {fb} | loggen (SC4S's sender, start burst included) | 10.00 | 10.00 | "
                       "20.00 | 8.00x | - | 1.0 | - | - | 12.00% | - |")
    assert f"| {R.FLUENTBIT_NAMES[0]} | - | absent: not built |" + " - |" * 10 in cpu
    # Fluent Bit is a peer: its figures take part in the best peer
    assert fb in R.PEER_NAMES and s["best_peer"]["cpu_us"] == ("syslog-ng", 10.0)
    tt = R.targets_table(R.targets(s)).splitlines()
    assert tt[5] == ("| syslogrx raw: CPU/msg <= 0.4x the best peer's | 0.45x (4.50 vs syslog-ng "
                     "10.00 us/msg) | **MISS** |")


def test_report_has_machine_date_and_sections(tmp_path):
    trials = canned() + [trial(R.SYSLOGRX_RAW, 50000, phase="scaling", cpu=(1.0, 2.0),
                               rss=1024, size=200),
                         trial(R.SYSLOGRX_RAW, 50000, phase="loggen", sender="loggen",
                               cpu=(1.0, 2.5), rss=1024)]
    meta = {"machine": {"nproc": 2, "model": "AMD EPYC", "kernel": "6.18.44", "mem_gb": 23.5,
                        "date": "2026-11-22T03:49:06"},
            "sender": "sysloggen", "size": 1000, "duration": 10.0, "ceiling": 193522.7,
            "ceiling_drop_pct": 0.0, "receivers_text": "as configured", "steps": 4,
            "cpu_count": 500000, "notes": ["a note"]}
    md = R.markdown_report(R.summarize(trials, TOP, 50000, 1000), trials, meta)
    lines = md.splitlines()
    assert lines[0] == "# syslogrx benchmark"
    assert lines[2] == "- Machine: 2 CPUs (AMD EPYC), 23.5 GB memory, kernel 6.18.44"
    assert lines[3] == "- Date: 2026-11-22T03:49:06"
    assert "- Sender's ceiling (sysloggen --rate 0 into drainrx): 193,523 msgs/s, drainrx " \
           "dropped 0" in lines
    for h in ("## Targets", "## Zero-drop capacity", "## CPU per message and peak RSS at "
              "50,000/s", "## Tracer cost", "## Scaling (syslogrx raw, file output)",
              "## loggen cross-check", "## How it was measured"):
        assert h in lines
    assert "| 4 sockets, 200 B | 50,000 | 50,000 | 0 | 1.00 | 2.00 | 3.00 | 1.0 |" in lines
    assert "| syslogrx raw | 50,000 | 50,000 | 0 | 1.00 | 2.50 | 3.50 | 1.0 |" in lines
    assert lines[-1] == "- a note"


def test_csv_and_json_files(tmp_path):
    trials = canned()
    R.write_csv(trials, tmp_path / "trials.csv")
    with open(tmp_path / "trials.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(trials)
    assert list(rows[0].keys()) == R.TRIAL_NAMES
    assert rows[1]["receiver"] == "syslogrx raw" and rows[1]["cpu_us"] == "4.5"
    assert rows[0]["cpu_us"] == ""           # not measured: empty, not 0
    s = R.summarize(trials, TOP, 50000, 1000)
    R.write_json(tmp_path / "results.json", {"top": TOP}, s, trials)
    with open(tmp_path / "results.json") as f:
        back = json.load(f)
    assert back["meta"] == {"top": TOP}
    assert [t["status"] for t in back["targets"]] == \
        [t["status"] for t in R.targets(s) + R.cost_targets()]
    assert len(back["trials"]) == len(trials)


def test_csv_round_trip(tmp_path):
    trials = canned()
    R.write_csv(trials, tmp_path / "trials.csv")
    back = R.read_csv(tmp_path / "trials.csv")
    assert [t["cpu_us"] for t in back] == [t.get("cpu_us") for t in trials]
    assert back[0]["rate"] == 27000 and isinstance(back[0]["rate"], int)
    assert back[0]["user_us"] is None and back[0]["error"] == ""
    # the same summary from the CSV as from the trials themselves
    assert R.targets(R.summarize(back, TOP, 50000, 1000)) == \
        R.targets(R.summarize(trials, TOP, 50000, 1000))
