# SPDX-License-Identifier: MIT
"""The benchmark's results as numbers and files: zero-drop capacity from the
search trials, CPU per message and peak RSS, ratios to the drain-only
reference and to the best peer, the targets with PASS/MISS, report.md,
trials.csv, results.json.

Pure: no processes. tests/test_bench_report.py tests it from canned trials.

A *trial* is one run of one receiver under one load (a dict with TRIAL_FIELDS).
Receivers are named by the constants below; every ratio compares figures
measured in the same run of make bench.
"""
import csv
import json
import math
import os

from sweeplib import fluentbit, table
from sweeplib.table import SHORTFALL, thousands

SYSLOGRX_RAW = "syslogrx raw"
SYSLOGRX_JSON = "syslogrx json"
SYSLOGRX_NOTRACE = "syslogrx raw --no-trace"
DRAINRX = "drainrx"
SYSLOG_NG = "syslog-ng"
RSYSLOG = "rsyslog"
OTELCOL = "otelcol syslog"
FLUENTBIT_NAMES = fluentbit.CONFIGS     # its defaults, tuned, share_port
SYSLOGRX_NAMES = (SYSLOGRX_RAW, SYSLOGRX_JSON, SYSLOGRX_NOTRACE)
PEER_NAMES = (SYSLOG_NG, RSYSLOG, OTELCOL) + FLUENTBIT_NAMES
RECEIVER_ORDER = SYSLOGRX_NAMES + (DRAINRX,) + PEER_NAMES

# The targets syslogrx is held to.
CPU_VS_DRAIN_MAX = 0.8      # raw: CPU/msg at most 0.8x the drain-only receiver's
JSON_VS_DRAIN_MAX = 1.0     # json: at most drainrx's
CPU_VS_PEER_MAX = 0.4       # and at most 0.4x the best peer's
TRACER_CAPACITY_MIN = 0.97  # tracing keeps >= 97% of the capacity without it

PASS, MISS, INFO, NA = "PASS", "MISS", "INFO", "N/A"

# What a row measured: sysloggen paces evenly; loggen (SC4S's sender) sends
# about a second's worth at full speed before it settles.
SENDER_LABELS = {"sysloggen": "sysloggen (even pace)",
                 "loggen": "loggen (SC4S's sender, start burst included)"}

# Column -> type; the CSV's column order.
TRIAL_FIELDS = [
    ("phase", str),          # ceiling | search | cpu | scaling | loggen | json_ceiling
    ("receiver", str),       # one of RECEIVER_ORDER
    ("sender", str),         # sysloggen | loggen
    ("sockets", int),
    ("threads", int),
    ("size", int),           # datagram bytes
    ("rate", int),           # offered msgs/s (0: as fast as the sender can)
    ("duration", float),
    ("sent", int),           # the sender's own count
    ("achieved_rate", float),  # the sender's own report
    ("received", int),       # read from the sockets (peers: lines written)
    ("written", int),        # lines in the output (drainrx: received)
    ("kernel_drops", int),   # syslogrx: its summary; others: udpdrops alongside
    ("lost", int),           # sent - written, end to end
    ("drop_pct", float),     # max(kernel_drops, lost) / sent * 100
    ("user_us", float),      # utime per message received, microseconds
    ("sys_us", float),       # stime per message received
    ("cpu_us", float),       # user_us + sys_us
    ("cpu_pct", float),      # receiver CPU over the load, 100 = one core
    ("peak_rss_kb", int),    # VmHWM after the load
    ("rcvbuf_effective", int),
    ("error", str),
]
TRIAL_NAMES = [n for n, _ in TRIAL_FIELDS]


# ---- one trial -------------------------------------------------------------

def finish_trial(t):
    """Derived fields of a trial from what was measured: lost, drop_pct,
    per-message CPU from the tick deltas (user_ticks, sys_ticks, hz)."""
    sent, written = t.get("sent"), t.get("written")
    if sent is not None and written is not None:
        t["lost"] = max(0, sent - written)
        worst = max(t["lost"], t.get("kernel_drops") or 0)
        t["drop_pct"] = round(100.0 * worst / sent, 4) if sent else None
    n = t.get("received")
    if n and t.get("user_ticks") is not None and t.get("hz"):
        t["user_us"] = round(t["user_ticks"] / t["hz"] / n * 1e6, 3)
        t["sys_us"] = round(t["sys_ticks"] / t["hz"] / n * 1e6, 3)
        t["cpu_us"] = round(t["user_us"] + t["sys_us"], 3)
    return t


def zero_drop(t):
    """Ran, and nothing was dropped or lost: no kernel drop and every
    message sent is in the output."""
    return (not t.get("error") and t.get("sent") is not None and t.get("kernel_drops") == 0
            and t.get("lost") == 0)


def load_rate(t):
    """The load a trial really offered: the target rate, unless the sender
    fell more than SHORTFALL short of it (then what it achieved)."""
    ach = t.get("achieved_rate") or 0.0
    if t.get("rate") and ach >= t["rate"] * (1 - SHORTFALL):
        return float(t["rate"])
    return ach


# ---- the capacity search ---------------------------------------------------

def ladder(columns, ceiling):
    """The rates tried first: the columns below the sender's ceiling, then the
    ceiling itself (rounded down to a thousand)."""
    top = int(ceiling) // 1000 * 1000
    return sorted({c for c in columns if c < top} | {top})


def next_rate(tried, columns, ceiling, steps):
    """The next offered rate of a zero-drop search, or None when it is done.
    tried: [(offered rate, zero_drop)] in the order run. Climb the ladder until
    a rate drops, then bisect between the last good and the first bad rate,
    at most `steps` times, in whole thousands."""
    lad = ladder(columns, ceiling)
    bad = [r for r, ok in tried if not ok]
    if not bad:
        done = {r for r, _ in tried}
        left = [r for r in lad if r not in done]
        return left[0] if left else None
    hi = min(bad)
    good = [r for r, ok in tried if ok and r < hi]
    lo = max(good) if good else 0
    bisected = sum(1 for r, _ in tried if r not in lad)
    if bisected >= steps:
        return None
    mid = int(round((lo + hi) / 2 / 1000.0)) * 1000
    if mid <= lo or mid >= hi:
        return None
    return mid


def capacity(trials, top):
    """Zero-drop capacity from a receiver's search trials: the highest load
    with no drop. reached_top: it held the sender's ceiling (the ladder's top),
    so the receiver was not the bottleneck and the capacity is a lower bound."""
    ok = [t for t in trials if zero_drop(t)]
    tried = sorted(trials, key=lambda t: t["rate"])
    trail = [(t["rate"], t.get("drop_pct"), t.get("error") or "", load_rate(t)) for t in tried]
    if not ok:
        return {"rate": 0.0, "offered": 0, "achieved": None, "reached_top": False,
                "trail": trail}
    best = max(ok, key=lambda t: (t["rate"], load_rate(t)))
    return {"rate": load_rate(best), "offered": best["rate"],
            "achieved": best.get("achieved_rate"), "reached_top": best["rate"] >= top,
            "trail": trail}


# ---- ratios and targets ----------------------------------------------------

def ratio(a, b):
    """a / b, None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def best_peer(values):
    """(name, value) of the best peer: values maps peer name -> figure; lower
    is better (CPU, memory). Missing figures are skipped; None when none."""
    have = [(v, n) for n, v in values.items() if v is not None]
    if not have:
        return None, None
    v, n = min(have)
    return n, v


def best_peer_capacity(caps):
    """(name, rate) of the peer with the highest zero-drop capacity."""
    have = [(c["rate"], n) for n, c in caps.items() if c is not None]
    if not have:
        return None, None
    v, n = max(have)
    return n, v


def summarize(trials, top, cpu_rate, size, hi_rate=150000):
    """Per receiver: capacity from its search trials, and its CPU trial (the
    search or cpu trial at cpu_rate with the default size; also the search
    trial at hi_rate, where per-wake-up costs weigh less). Ratios to drainrx
    and to the best peer for every syslogrx figure."""
    out = {"receivers": {}, "top": top, "cpu_rate": cpu_rate, "hi_rate": hi_rate}
    for name in RECEIVER_ORDER:
        mine = [t for t in trials if t["receiver"] == name and t["sender"] == "sysloggen"
                and t["size"] == size]
        search = [t for t in mine if t["phase"] == "search"]
        cpu = [t for t in mine if t["phase"] in ("search", "cpu") and t["rate"] == cpu_rate
               and not t.get("error")]
        if not search and not cpu:
            continue
        hi = [t for t in search if t["rate"] == hi_rate and not t.get("error")]
        out["receivers"][name] = {
            "capacity": capacity(search, top) if search else None,
            "cpu": cpu[-1] if cpu else None,
            "cpu_hi": hi[-1] if hi else None,
        }
    rx = out["receivers"]

    def fig(name, key):
        r = rx.get(name)
        if not r:
            return None
        if key == "capacity":
            return r["capacity"]["rate"] if r["capacity"] else None
        return r["cpu"].get(key) if r["cpu"] else None

    peer_caps = {n: rx[n]["capacity"] for n in PEER_NAMES if n in rx}
    out["best_peer"] = {}
    out["best_peer"]["capacity"] = best_peer_capacity(peer_caps)
    for key in ("cpu_us", "user_us", "sys_us", "peak_rss_kb"):
        out["best_peer"][key] = best_peer({n: fig(n, key) for n in PEER_NAMES if n in rx})
    out["ratios"] = {}
    for name in SYSLOGRX_NAMES:
        if name not in rx:
            continue
        r = {}
        mine = rx[name]["capacity"]
        drain = rx.get(DRAINRX, {}).get("capacity")
        peer = peer_caps.get(out["best_peer"]["capacity"][0])
        r["capacity"] = {"drainrx": capacity_ratio(mine, drain),
                         "best_peer": capacity_ratio(mine, peer),
                         "drainrx_bound": capacity_bound(mine, drain),
                         "best_peer_bound": capacity_bound(mine, peer)}
        for key in ("cpu_us", "user_us", "sys_us", "peak_rss_kb"):
            r[key] = {"drainrx": ratio(fig(name, key), fig(DRAINRX, key)),
                      "best_peer": ratio(fig(name, key), out["best_peer"][key][1])}
        out["ratios"][name] = r
    return out


def _status(ok):
    if ok is None:
        return NA
    return PASS if ok else MISS


def targets(summary):
    """The targets, each {target, value, status}: status PASS, MISS, INFO
    (reported, no threshold) or N/A (a figure it needs is missing)."""
    rx = summary["receivers"]
    res = []
    for name in (SYSLOGRX_RAW, SYSLOGRX_JSON):
        cap = rx.get(name, {}).get("capacity")
        if cap is None:
            res.append({"target": f"{name}, file output: 0 drops at every rate up to the "
                        "sender's ceiling", "value": "not run", "status": NA})
            continue
        bad = [(r, p, e) for r, p, e, _ in cap["trail"] if e or p]
        if cap["reached_top"] and not bad:
            value = f"0 drops at every rate tried, up to {thousands(cap['offered'])}/s"
            if cap["achieved"] is not None and cap["achieved"] < cap["offered"] * (1 - SHORTFALL):
                value += f" (sender reached {thousands(cap['achieved'])}/s)"
        else:
            first = min(bad)[0] if bad else None
            value = (f"zero-drop capacity {thousands(cap['rate'])}/s; drops from "
                     f"{thousands(first)}/s" if first is not None else "top not reached")
        res.append({"target": f"{name}, file output: 0 drops at every rate up to the "
                    "sender's ceiling ({}/s)".format(thousands(summary["top"])),
                    "value": value, "status": PASS if (cap["reached_top"] and not bad) else MISS})

    ratios = summary["ratios"]
    raw = ratios.get(SYSLOGRX_RAW, {}).get("cpu_us", {})
    cpu_raw = rx.get(SYSLOGRX_RAW, {}).get("cpu") or {}
    cpu_drain = (rx.get(DRAINRX, {}).get("cpu") or {}).get("cpu_us")
    r = raw.get("drainrx")
    res.append({"target": f"{SYSLOGRX_RAW}: CPU/msg <= {CPU_VS_DRAIN_MAX}x drainrx's",
                "value": (f"{fmt_ratio(r)} ({fmt_us(cpu_raw.get('cpu_us'))} vs "
                          f"{fmt_us(cpu_drain)} us/msg)") if r is not None else "-",
                "status": _status(None if r is None else r <= CPU_VS_DRAIN_MAX)})
    peer_name, peer_cpu = summary["best_peer"]["cpu_us"]
    r = raw.get("best_peer")
    res.append({"target": f"{SYSLOGRX_RAW}: CPU/msg <= {CPU_VS_PEER_MAX}x the best peer's",
                "value": (f"{fmt_ratio(r)} ({fmt_us(cpu_raw.get('cpu_us'))} vs {peer_name} "
                          f"{fmt_us(peer_cpu)} us/msg)") if r is not None else "-",
                "status": _status(None if r is None else r <= CPU_VS_PEER_MAX)})

    cpu_json = (rx.get(SYSLOGRX_JSON, {}).get("cpu") or {}).get("cpu_us")
    r = ratios.get(SYSLOGRX_JSON, {}).get("cpu_us", {}).get("drainrx")
    res.append({"target": f"{SYSLOGRX_JSON}: CPU/msg <= {JSON_VS_DRAIN_MAX}x drainrx's",
                "value": (f"{fmt_ratio(r)} ({fmt_us(cpu_json)} vs "
                          f"{fmt_us(cpu_drain)} us/msg)") if r is not None else "-",
                "status": _status(None if r is None else r <= JSON_VS_DRAIN_MAX)})
    r = ratio(cpu_json, cpu_raw.get("cpu_us"))
    extra = None if r is None else cpu_json - cpu_raw["cpu_us"]
    jr = ratios.get(SYSLOGRX_JSON, {}).get("cpu_us", {})
    res.append({"target": "json's extra cost: CPU/msg of json / raw",
                "value": (f"{fmt_ratio(r)} ({extra:+.2f} us/msg; json is "
                          f"{fmt_ratio(jr.get('drainrx'))} drainrx, "
                          f"{fmt_ratio(jr.get('best_peer'))} the best peer)")
                + json_hi_text(summary) if r is not None else "-",
                "status": INFO if r is not None else NA})

    on = rx.get(SYSLOGRX_RAW, {}).get("capacity")
    off = rx.get(SYSLOGRX_NOTRACE, {}).get("capacity")
    r = tracer_capacity_ratio(on, off)
    res.append({"target": f"tracer on keeps >= {TRACER_CAPACITY_MIN:.0%} of the zero-drop "
                "capacity without it",
                "value": (f"{r:.1%} ({thousands(on['rate'])} vs {thousands(off['rate'])}/s"
                          + ("; both hold the sender's ceiling" if on["reached_top"]
                             and off["reached_top"] else "") + ")") if r is not None else "-",
                "status": _status(None if r is None else r >= TRACER_CAPACITY_MIN)})
    cpu_off = (rx.get(SYSLOGRX_NOTRACE, {}).get("cpu") or {}).get("cpu_us")
    r = ratio(cpu_raw.get("cpu_us"), cpu_off)
    res.append({"target": "tracer's CPU cost: CPU/msg with tracing / without",
                "value": f"{fmt_ratio(r)} ({fmt_us(cpu_raw.get('cpu_us'))} vs "
                         f"{fmt_us(cpu_off)} us/msg)" if r is not None else "-",
                "status": INFO if r is not None else NA})
    return res


# Past the sender, per CPU second, at least this share of its reference's:
# drainrx (recvmmsg and count) for null output, drainrx --write (recvmmsg
# and one writev a batch: the limit of writing) for a file. The names are
# benchlib/capacity.py's receivers.
DRAIN_REF = "drainrx"
DRAIN_WRITE_REF = "drainrx --write, file"
DRAIN_PER_CPU_MIN = (("syslogrx raw, null output", 0.9, DRAIN_REF),
                     ("syslogrx raw, file", 0.95, DRAIN_WRITE_REF),
                     ("syslogrx json, file", 0.8, DRAIN_WRITE_REF))
RELIABLE_VS_NONE_MAX = 1.3   # --disk-buffer-mode reliable: CPU/msg vs no buffer
ORDERED_VS_RANDOM_MAX = 1.15  # --ordered: CPU/msg vs random
LEASTLOADED_VS_RANDOM_MAX = 1.15


# json into a file at the sender's ceiling: loggen, one flow, this layout.
JSON_CEILING_RATE = 300000
JSON_CEILING_LAYOUT = {"sockets": 8, "threads": 2}
JSON_FILE_NAMES = (("msg once", "syslogrx json, file"),
                   ("--json-raw", "syslogrx json --json-raw, file"))


def cost_targets(drain=None, balance=None, diskbuf=None, json_ceiling=None):
    """The per-message cost targets (docs/performance.md), each {target, value, status},
    from the same run's drain trials (benchlib/capacity.py: dicts with
    receiver, per_core, error, and for a file drained and output_bytes),
    balance summary (benchlib/balance.py's summarize: ratio_to_random,
    cpu_us), disk buffer medians ({"none", "reliable"}: ns per message) and
    the loggen trial of json into a file at the sender's ceiling (a
    runner.run_trial dict). A missing figure is N/A."""
    res = []
    drain = drain or []

    def per_core(name):
        return next((t["per_core"] for t in drain if t["receiver"] == name
                     and not t.get("error") and t.get("per_core")), None)
    for name, least, ref in DRAIN_PER_CPU_MIN:
        mine, base = per_core(name), per_core(ref)
        r = ratio(mine, base)
        value = (f"{fmt_ratio(r)} ({thousands(mine)} vs {thousands(base)}/CPU s)"
                 if r is not None else "-")
        if ref != DRAIN_REF and mine is not None:
            value += f"; {fmt_ratio(ratio(mine, per_core(DRAIN_REF)))} drainrx's"
        res.append({"target": f"drained per CPU second past the sender, {name}: "
                    f">= {least}x {ref.split(',')[0]}'s",
                    "value": value, "status": _status(None if r is None else r >= least)})
    rr = (balance or {}).get("ratio_to_random", {})
    us = (balance or {}).get("cpu_us", {})
    for key, most in (("random --ordered", ORDERED_VS_RANDOM_MAX),
                      ("leastloaded", LEASTLOADED_VS_RANDOM_MAX)):
        r = rr.get(key)
        res.append({"target": f"{key}: CPU/msg <= {most}x random's",
                    "value": (f"{fmt_ratio(r)} ({fmt_us(us.get(key))} vs "
                              f"{fmt_us(us.get('random'))} us/msg)") if r is not None else "-",
                    "status": _status(None if r is None else r <= most)})
    db = diskbuf or {}
    r = ratio(db.get("reliable"), db.get("none"))
    res.append({"target": f"--disk-buffer-mode reliable, healthy destination: CPU/msg <= "
                f"{RELIABLE_VS_NONE_MAX}x no buffer's",
                "value": (f"{fmt_ratio(r)} ({db['reliable'] / 1000:.2f} vs "
                          f"{db['none'] / 1000:.2f} us/msg)") if r is not None else "-",
                "status": _status(None if r is None else r <= RELIABLE_VS_NONE_MAX)})
    per = []
    for label, name in JSON_FILE_NAMES:
        t = next((t for t in drain if t["receiver"] == name and not t.get("error")
                  and t.get("drained") and t.get("output_bytes")), None)
        if t:
            per.append(f"{label} {thousands(t['output_bytes'] / t['drained'])} B")
    res.append({"target": "json into a file: bytes written per 1000-byte message",
                "value": ", ".join(per) if per else "-", "status": INFO if per else NA})
    t = json_ceiling
    ok = None
    if t and not t.get("error") and t.get("drop_pct") is not None:
        ok = t["drop_pct"] == 0
    res.append({"target": "syslogrx json into a file at the sender's ceiling (loggen, one "
                f"flow, {JSON_CEILING_LAYOUT['sockets']} sockets, "
                f"{JSON_CEILING_LAYOUT['threads']} threads): 0 drops",
                "value": (f"{fmt_drop(t['drop_pct'])} drops at {thousands(t['achieved_rate'])}/s"
                          if ok is not None else "-"),
                "status": _status(ok)})
    return res


def json_hi_text(summary):
    """json / raw at the high rate, where formatting and writing weigh more
    than wake-ups: "; at 150,000/s 1.68x (6.25 vs 3.73 us/msg)", or ""."""
    rx = summary["receivers"]
    j = (rx.get(SYSLOGRX_JSON, {}).get("cpu_hi") or {}).get("cpu_us")
    r = (rx.get(SYSLOGRX_RAW, {}).get("cpu_hi") or {}).get("cpu_us")
    if ratio(j, r) is None:
        return ""
    return (f"; at {thousands(summary.get('hi_rate', 150000))}/s {fmt_ratio(ratio(j, r))} "
            f"({fmt_us(j)} vs {fmt_us(r)} us/msg)")


def capacity_ratio(a, b):
    """Capacity a / capacity b. When both held the sender's ceiling, neither
    was the bottleneck: the ratio is of the offered rates (the same ladder
    step), not of the sender's run-to-run noise."""
    if not a or not b or not b["rate"]:
        return None
    if a["reached_top"] and b["reached_top"]:
        return a["offered"] / b["offered"]
    return a["rate"] / b["rate"]


def capacity_bound(a, b):
    """How a capacity ratio is to be read: a capacity that held the sender's
    ceiling is only a lower bound, so a/b is ">=" when only a held it, "<="
    when only b did, exact ("") otherwise."""
    if not a or not b:
        return ""
    if a["reached_top"] and not b["reached_top"]:
        return ">="
    if b["reached_top"] and not a["reached_top"]:
        return "<="
    return ""


tracer_capacity_ratio = capacity_ratio


# ---- text ------------------------------------------------------------------

def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


def fmt_bounded(r, bound):
    """A capacity ratio with how to read it: "1.00x", ">=1.29x"."""
    return "-" if r is None else (bound or "") + fmt_ratio(r)


def fmt_us(v):
    return "-" if v is None else f"{v:.2f}"


def fmt_mb(kb):
    return "-" if kb is None else f"{kb / 1024:.1f}"


def fmt_drop(p):
    if p is None:
        return "-"
    if p == 0:
        return "0"
    if p < 0.01:
        return "<0.01%"
    return f"{p:.2f}%"


def trail_text(trail):
    """"27,000: 0 · 50,000: 0 · 150,000: 2.70% · 193,000 (at 171,000): 0"."""
    parts = []
    for rate, pct, err, load in trail:
        at = f" (at {thousands(load)})" if load < rate * (1 - SHORTFALL) else ""
        parts.append(f"{thousands(rate)}{at}: {'error' if err else fmt_drop(pct)}")
    return " · ".join(parts)


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines) + "\n"


def targets_table(tgts):
    return md_table(["Target", "Measured", ""],
                    [[t["target"], t["value"], f"**{t['status']}**"] for t in tgts])


def loggen_trials(trials, name):
    """The receiver's loggen trials that ran (the loggen phase), in order."""
    return [t for t in trials or () if t["receiver"] == name and t["phase"] == "loggen"
            and t["sender"] == "loggen" and not t.get("error")]


def capacity_table(summary, trials=(), absent=None):
    """The search's rows (sysloggen), and per receiver its loggen trials'
    drops beside them; a receiver named in absent ({name: why}) has a row
    saying so."""
    rows = []
    rx, ratios = summary["receivers"], summary["ratios"]
    for name in RECEIVER_ORDER:
        if name in (absent or {}):
            rows.append([name, "-", absent[name], "-", "-", "-"])
            continue
        cap = rx.get(name, {}).get("capacity")
        if cap is not None:
            rate = thousands(cap["rate"]) + (" (sender's ceiling)" if cap["reached_top"] else "")
            r = ratios.get(name, {}).get("capacity", {})
            rows.append([name, SENDER_LABELS["sysloggen"], rate,
                         fmt_bounded(r.get("drainrx"), r.get("drainrx_bound")),
                         fmt_bounded(r.get("best_peer"), r.get("best_peer_bound")),
                         trail_text(cap["trail"])])
        lg = loggen_trials(trials, name)
        if lg:
            rows.append([name, SENDER_LABELS["loggen"], "not searched", "-", "-",
                         trail_text([(t["rate"], t.get("drop_pct"), "", load_rate(t))
                                     for t in lg])])
    return md_table(["Receiver", "Sender", "Zero-drop capacity (msgs/s)", "x drainrx",
                     "x best peer", "Drops at each offered rate tried (msgs/s: % of sent)"],
                    rows)


def cpu_table(summary, trials=(), absent=None):
    """Per receiver its sysloggen trial at cpu_rate and its loggen trial (x
    drainrx: drainrx's loggen trial); an absent receiver's row says why."""
    rows = []
    rx, ratios = summary["receivers"], summary["ratios"]
    drain_lg = loggen_trials(trials, DRAINRX)
    drain_lg = drain_lg[-1].get("cpu_us") if drain_lg else None
    for name in RECEIVER_ORDER:
        if name in (absent or {}):
            rows.append([name, "-", absent[name]] + ["-"] * 10)
            continue
        t = rx.get(name, {}).get("cpu")
        if t is not None:
            r = ratios.get(name, {})
            rows.append([name, SENDER_LABELS["sysloggen"], fmt_us(t.get("user_us")),
                         fmt_us(t.get("sys_us")), fmt_us(t.get("cpu_us")),
                         fmt_ratio(r.get("cpu_us", {}).get("drainrx")),
                         fmt_ratio(r.get("cpu_us", {}).get("best_peer")),
                         fmt_mb(t.get("peak_rss_kb")),
                         fmt_ratio(r.get("peak_rss_kb", {}).get("drainrx")),
                         fmt_ratio(r.get("peak_rss_kb", {}).get("best_peer")),
                         fmt_drop(t.get("drop_pct")), hi_text(rx[name].get("cpu_hi"))])
        lg = loggen_trials(trials, name)
        if lg:
            t = lg[-1]
            rows.append([name, SENDER_LABELS["loggen"], fmt_us(t.get("user_us")),
                         fmt_us(t.get("sys_us")), fmt_us(t.get("cpu_us")),
                         fmt_ratio(ratio(t.get("cpu_us"), drain_lg)), "-",
                         fmt_mb(t.get("peak_rss_kb")), "-", "-", fmt_drop(t.get("drop_pct")),
                         "-"])
    return md_table(["Receiver", "Sender", "user us/msg", "sys us/msg", "CPU us/msg",
                     "x drainrx", "x best peer", "peak RSS MB", "x drainrx", "x best peer",
                     "drops", f"CPU us/msg at {thousands(summary.get('hi_rate', 150000))}/s "
                     "(drops)"], rows)


def hi_text(t):
    """"3.73 (0)": CPU per message and drops of the search trial at hi_rate."""
    if not t:
        return "-"
    return f"{fmt_us(t.get('cpu_us'))} ({fmt_drop(t.get('drop_pct'))})"


def trials_table(trials, first_col):
    """Scaling and loggen trials: one row each."""
    rows = []
    for t in trials:
        rows.append([first_col(t), thousands(t["rate"]),
                     "-" if t.get("achieved_rate") is None else thousands(t["achieved_rate"]),
                     "error: " + t["error"][:80] if t.get("error") else fmt_drop(t.get("drop_pct")),
                     fmt_us(t.get("user_us")), fmt_us(t.get("sys_us")), fmt_us(t.get("cpu_us")),
                     fmt_mb(t.get("peak_rss_kb"))])
    return md_table(["Run", "offered/s", "achieved/s", "drops", "user us/msg", "sys us/msg",
                     "CPU us/msg", "peak RSS MB"], rows)


def machine_lines(machine):
    return [f"- Machine: {machine.get('nproc')} CPUs ({machine.get('model')}), "
            f"{machine.get('mem_gb', 0):.1f} GB memory, kernel {machine.get('kernel')}",
            f"- Date: {machine.get('date')}"
            + (f" (load average at start: {machine['loadavg_at_start']})"
               if machine.get("loadavg_at_start") else "")]


def markdown_report(summary, trials, meta):
    """report.md: machine and date, targets, capacity, CPU and memory, tracer
    cost, scaling, the loggen cross-check, how each number was measured."""
    tg = targets(summary) + cost_targets(meta.get("drain"), meta.get("balance"),
                                         meta.get("diskbuf"), meta.get("json_ceiling"))
    out = ["# syslogrx benchmark" + (" (--quick)" if meta.get("quick") else ""), ""]
    out += machine_lines(meta["machine"])
    out.append(f"- Load: {meta['sender']}, {meta['size']}-byte rfc3164 messages, one flow, "
               f"{meta['duration']:g} s per trial; sender and receiver share the CPUs (loopback)")
    out.append(f"- Sender's ceiling (sysloggen --rate 0 into drainrx): "
               f"{thousands(meta['ceiling'])} msgs/s"
               + (f", drainrx dropped {fmt_drop(meta.get('ceiling_drop_pct'))}"
                  if meta.get("ceiling_drop_pct") is not None else ""))
    out.append(f"- Receivers: {meta['receivers_text']}")
    out += ["", "## Targets", "", targets_table(tg)]
    out += ["## Zero-drop capacity", "",
            f"Highest offered rate with no drop in a {meta['duration']:g} s run: the SC4S "
            f"columns first, then the sender's ceiling, then {meta['steps']} bisection steps "
            "between the last good and the first bad rate. `(sender's ceiling)`: no drop at "
            "the top, the receiver was not the bottleneck. The search is sysloggen's (an "
            "even pace); loggen's rows are its trials at "
            f"{thousands(summary['cpu_rate'])}/s, its start burst included.", "",
            capacity_table(summary, trials, meta.get("absent"))]
    out += [f"## CPU per message and peak RSS at {thousands(summary['cpu_rate'])}/s", "",
            f"utime and stime deltas (/proc/PID/stat) over {thousands(meta['cpu_count'])} "
            "messages, divided by the messages received; peak RSS is VmHWM. Ratios are "
            "to drainrx and to the best peer of this run (a loggen row: to drainrx's loggen "
            "trial).", "", cpu_table(summary, trials, meta.get("absent"))]
    out += ["## Tracer cost", ""]
    tracer = [t for t in tg if t["target"].startswith("tracer")]
    out += [md_table(["", "Measured", ""], [[t["target"], t["value"], t["status"]]
                                            for t in tracer])]
    scaling = [t for t in trials if t["phase"] == "scaling"]
    if scaling:
        out += ["## Scaling (syslogrx raw, file output)", "",
                f"At {thousands(summary['cpu_rate'])}/s; sockets vary at "
                f"{meta['size']} bytes, sizes at 4 sockets (threads = min(2, sockets)).", "",
                trials_table(scaling, lambda t: f"{t['sockets']} sockets, {t['size']} B")]
    lg = [t for t in trials if t["phase"] == "loggen"]
    if lg:
        out += ["## loggen cross-check", "",
                "The same receivers under syslog-ng's loggen (the sender of the earlier "
                "measurements).", "", trials_table(lg, lambda t: t["receiver"])]
    out += ["## How it was measured", ""]
    for n in meta.get("notes", []):
        out.append(f"- {n}")
    return "\n".join(out).rstrip() + "\n"


def write_csv(trials, path):
    table.write_csv(trials, path, TRIAL_NAMES)


def read_csv(path):
    """trials.csv back to trials: "" is None (not measured), else typed."""
    types = dict(TRIAL_FIELDS)
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t = {}
            for k, v in row.items():
                typ = types.get(k, str)
                t[k] = v if typ is str else (None if v == "" else typ(float(v)))
            out.append(t)
    return out


def write_json(path, meta, summary, trials):
    def clean(o):
        if isinstance(o, float) and (math.isnan(o) or math.isinf(o)):
            return None
        if isinstance(o, dict):
            return {k: clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        return o
    # Everything computed first, then a rename: a failure never leaves a
    # truncated file where a good one was.
    text = json.dumps(clean({"meta": meta, "summary": summary,
                             "targets": (targets(summary) + cost_targets(
                                 meta.get("drain"), meta.get("balance"), meta.get("diskbuf"),
                                 meta.get("json_ceiling")))
                             if summary else [],
                             "trials": trials}), indent=1) + "\n"
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
