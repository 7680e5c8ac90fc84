# SPDX-License-Identifier: MIT
"""The sweep's results as files: cells.csv, cells.json, table.md, drops.png.

Pure formatting, no processes: tests/test_sweep_table.py tests it on its own.

A *cell* is one run (a dict with the FIELDS below). The Markdown table has one
row per receiver configuration (cell["row"]) and one column per target rate,
in the layout of SC4S's published table; repeats of a (row, rate) are averaged.
"""
import csv
import json
import math

# Column -> type. Order is the CSV's column order.
FIELDS = [
    ("row", str),            # receiver configuration, the table's row label
    ("receiver", str),       # syslogrx | syslog-ng | syslog-ng-ebpf | rsyslog
    ("mode", str),           # hash | random | roundrobin
    ("sockets", int),
    ("threads", int),
    ("rcvbuf", int),         # requested EFFECTIVE bytes (what SO_RCVBUF reports)
    ("rcvbuf_effective", int),  # measured: smallest SO_RCVBUF of the group
    ("window", int),         # 0 = the receiver's own default
    ("cost_ns", int),
    ("size", int),
    ("duration", float),
    ("repeat", int),
    ("sender", str),
    ("rate", int),           # offered: the sender's target, msgs/s
    ("sent", int),
    ("achieved_rate", float),  # the sender's own report
    ("received", int),       # syslogrx: read from its sockets; peers: lines written
    ("written", int),        # lines in the output (syslogrx: its count)
    ("delivered", int),      # distinct sequence numbers that arrived
    ("end_markers", int),    # sysloggen's end markers received (counted in written)
    ("kernel_drops", int),
    ("drops_by_reason", str),  # "REASON:N;REASON:N"
    ("seq_missing", int),    # sent - delivered
    ("drop_pct", float),     # kernel_drops / sent * 100
    ("lost_pct", float),     # seq_missing / sent * 100 (end to end)
    ("cpu_pct", float),      # receiver CPU while the load ran, 100 = one core
    ("peak_rss_kb", int),    # VmHWM at the end
    ("steered_min", int),    # balancer: least and most steered to one socket
    ("steered_max", int),
    ("selection_failures", int),
    ("error", str),          # empty when the cell ran
]
FIELD_TYPES = dict(FIELDS)
FIELD_NAMES = [name for name, _ in FIELDS]

SHORTFALL = 0.02    # the sender fell short when achieved < target * (1 - this)
LOST_EXTRA = 0.5    # points of end-to-end loss beyond kernel drops worth a note


def thousands(n):
    """4500 -> "4,500"."""
    return f"{int(round(n)):,}"


def round_rate(r):
    """An achieved rate as the table shows it: 3 significant digits, whole."""
    if r <= 0:
        return 0
    digits = int(math.floor(math.log10(r))) + 1
    step = 10 ** max(0, digits - 3)
    return int(round(r / step) * step)


def fmt_pct(p):
    if p is None:
        return "-"
    if p == 0:
        return "0.0%"
    if p < 0.05:
        return "<0.1%"   # a drop happened: never shown as 0.0%
    return f"{p:.1f}%"


def aggregate(cells):
    """(row, rate) -> averaged cell values over repeats that ran."""
    groups = {}
    for c in cells:
        groups.setdefault((c["row"], c["rate"]), []).append(c)
    out = {}
    for key, cs in groups.items():
        ok = [c for c in cs if not c.get("error")]
        if not ok:
            out[key] = {"error": cs[-1]["error"], "n": 0}
            continue
        def mean(f):
            vals = [c[f] for c in ok if c.get(f) is not None]
            return sum(vals) / len(vals) if vals else None
        out[key] = {
            "error": "", "n": len(ok),
            "drop_pct": mean("drop_pct"), "lost_pct": mean("lost_pct"),
            "achieved_rate": mean("achieved_rate"),
            "drop_min": min(c["drop_pct"] for c in ok),
            "drop_max": max(c["drop_pct"] for c in ok),
        }
    return out


def cell_text(rate, agg):
    """"0.0%", "38.2%", "12.0% (at 221,000/s)", "0.0% [lost 4.1%]", "error"."""
    if agg is None:
        return ""
    if agg["error"]:
        return "error"
    text = fmt_pct(agg["drop_pct"])
    lost = agg.get("lost_pct")
    if lost is not None and agg["drop_pct"] is not None and lost - agg["drop_pct"] > LOST_EXTRA:
        text += f" [lost {lost:.1f}%]"
    ach = agg.get("achieved_rate")
    if ach is not None and ach < rate * (1 - SHORTFALL):
        text += f" (at {thousands(round_rate(ach))}/s)"
    return text


def row_order(cells):
    """Rows in the order their first cell appears (the sweep's run order)."""
    seen = []
    for c in cells:
        if c["row"] not in seen:
            seen.append(c["row"])
    return seen


def markdown_table(cells, rates=None, rows=None):
    """The SC4S layout: rows = receiver configurations, columns = rates."""
    rates = rates or sorted({c["rate"] for c in cells})
    rows = rows or row_order(cells)
    agg = aggregate(cells)
    lines = ["| Receiver / Drops rate for EPS (msgs/sec) | "
             + " | ".join(thousands(r) for r in rates) + " |",
             "|---|" + "---|" * len(rates)]
    for row in rows:
        lines.append(f"| {row} | "
                     + " | ".join(cell_text(r, agg.get((row, r))) for r in rates) + " |")
    return "\n".join(lines) + "\n"


def markdown_report(cells, rates=None, rows=None, title="UDP drop rates", notes=()):
    """table.md: a title, the table, what the cells mean, the run's notes."""
    out = [f"# {title}", "", markdown_table(cells, rates, rows)]
    out.append("Cells: kernel drops / messages sent. `(at N/s)`: the sender reached only "
               "N msgs/s here (more than 2% short of the column's rate), so the drop rate "
               "is for that load. `[lost X%]`: messages missing from the output beyond the "
               "kernel's drops (lost inside the receiver). Repeats are averaged.")
    out.append("")
    for n in notes:
        out.append(f"- {n}")
    return "\n".join(out).rstrip() + "\n"


def _to_text(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


def write_csv(cells, path, names=None):
    """One row per dict, columns `names` (the sweep's FIELD_NAMES by default);
    None is written empty: not measured."""
    names = names or FIELD_NAMES
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for c in cells:
            w.writerow([_to_text(c.get(name)) for name in names])


def parse_value(name, text):
    """A CSV field back to its type: "" is None (absent, not zero), except str."""
    typ = FIELD_TYPES.get(name, str)
    if typ is str:
        return text
    if text == "":
        return None
    return typ(float(text)) if typ is int else typ(text)


def read_csv(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        missing = [n for n in FIELD_NAMES if n not in (r.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a sweep CSV, columns missing: {', '.join(missing)}")
        return [{k: parse_value(k, v) for k, v in row.items()} for row in r]


def write_json(cells, path, meta=None):
    with open(path, "w") as f:
        json.dump({"meta": meta or {}, "cells": cells}, f, indent=1)
        f.write("\n")


def plot(cells, path, rows=None, title="UDP drop rate"):
    """drops.png: drop % against offered rate, one line per row."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = rows or row_order(cells)
    agg = aggregate(cells)
    rates = sorted({c["rate"] for c in cells})
    fig, ax = plt.subplots(figsize=(10, 6))
    for row in rows:
        xs, ys = [], []
        for r in rates:
            a = agg.get((row, r))
            if a and not a["error"] and a["drop_pct"] is not None:
                xs.append(r)
                ys.append(a["drop_pct"])
        if xs:
            ax.plot(xs, ys, marker="o", label=row)
    ax.set_xscale("log")
    ax.set_xticks(rates)
    ax.set_xticklabels([thousands(r) for r in rates], rotation=30)
    ax.minorticks_off()
    ax.set_xlabel("offered rate (msgs/s)")
    ax.set_ylabel("kernel drops (% of sent)")
    ax.set_ylim(-2, 102)
    ax.grid(True, alpha=0.3)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
