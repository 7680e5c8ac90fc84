# SPDX-License-Identifier: MIT
"""SC4S's published UDP table, reproduced cell by cell (lab/sweep --preset
sc4s-replica).

SC4S's "Default" rows are one worker's capacity: one loggen flow hashes to
one socket, so one syslog-ng thread takes it all, whatever the machine:
27,000 x (1 - 0.594) = 10,960/s, 50,000 x (1 - 0.7918) = 10,410/s,
150,000 x (1 - 0.9318) = 10,230/s, 350,000 x (1 - 0.9688) = 10,920/s (16
threads). syslogrx costs far less per message, so the replica first
calibrates --cost-ns (with --cost-makeup: a busy worker drains 1e9/N msgs/s
whatever else runs) until one syslogrx worker drains what one SC4S worker
did, under the cells' own conditions (loggen running, output null, SC4S's
rcvbuf), then runs SC4S's method: loggen --inet --dgram -s 1000 --no-framing,
one flow, the six rates, hash as "Default", random (syslogrx's eBPF balancer)
as "eBPF on", sockets = 4 x threads (SC4S's advice), for each thread count
the machine has cores for.

Pure parts (the published table, the cell's reference, the Markdown) are
tested without processes by tests/lab/test_replica_table.py.
"""
import json
import os
import time

from . import cells as cellslib
from . import peers
from .drain import udp_port_stats

RATES = [4500, 9000, 27000, 50000, 150000, 350000]

# The table of ../shared/reference/003 ("Enable eBPF", m5.4xlarge/2xlarge/xlarge).
PUBLISHED = {
    ("hash", 16): [0, 0, 59.4, 79.18, 93.18, 96.88],
    ("random", 16): [0, 0, 0, 0, 49.79, 81.10],
    ("hash", 8): [0, 0.17, 57.52, 77.61, 93.17, 97.57],
    ("random", 8): [0, 0, 0, 25.45, 75.76, 90.16],
    ("hash", 4): [0, 0.24, 66.62, 82.66, 94.31, 97.92],
    ("random", 4): [0, 0, 31.49, 67.02, 93.80, 96.22],
}
PUBLISHED_THREADS = [16, 8, 4]

# Receiver and sender run at this nice value: CPU time other processes on the
# machine take from the emulated worker would read as a slower SC4S worker.
NICE = -10

# The emulated cost is the worker's; a file output would add this disk's
# writeback stalls (shared with whatever else runs) to it. The sequence
# accounting runs all the same.
OUTPUT = "null"

# One SC4S worker: the mean of the 16-thread Default row's capacities at the
# rates where it dropped (10,960, 10,410, 10,230, 10,920).
TARGET_CAPACITY = round(sum(r * (1 - p / 100) for r, p in
                            zip(RATES[2:], PUBLISHED[("hash", 16)][2:])) / 4)

# SC4S's receive buffer: "the default 16 MB" (the reference), as the
# effective size, like lab/sweep's sc4s preset.
SC4S_RCVBUF = 16 << 20
SIZE = 1000
LABEL = {"hash": "Default SC4S", "random": "eBPF on"}


def published(mode, threads, rate):
    """(published drop %, the published row it comes from) for a cell, or
    (None, None). Default rows do not depend on threads (one worker takes the
    flow): a thread count SC4S did not publish is compared with the
    16-thread row, the one the calibration comes from. eBPF rows do depend
    on threads: only the published thread counts have a reference."""
    if rate not in RATES:
        return None, None
    i = RATES.index(rate)
    if (mode, threads) in PUBLISHED:
        return PUBLISHED[(mode, threads)][i], f"{LABEL[mode]} - {threads} threads"
    if mode == "hash":
        return PUBLISHED[("hash", 16)][i], f"{LABEL[mode]} - 16 threads"
    return None, None


def plural(n, word):
    return f"{n} {word}{'s' if n != 1 else ''}"


def measure_capacity(cost_ns, workdir, rate=50000, seconds=3, sockets=4):
    """One syslogrx worker's capacity under a cell's conditions: hash, one
    thread, SC4S's rcvbuf, null output, loggen offering more than it takes.
    The worker is busy from loggen's start until the port's queues are empty
    again, so capacity = received / that time (no guess about what the queue
    held)."""
    os.makedirs(workdir, exist_ok=True)
    port = cellslib.free_udp_port()
    spec = {"sockets": sockets, "threads": 1, "mode": "hash", "rcvbuf": SC4S_RCVBUF,
            "window": 0, "cost_ns": cost_ns, "cost_makeup": True, "nice": NICE,
            "output": OUTPUT}
    rx = peers.Syslogrx(spec, port, workdir)
    try:
        rx.start()
        rx.wait_ready()
        t0 = time.monotonic()
        cellslib.run_sender({"sender": "loggen", "rate": rate, "duration": seconds,
                             "size": SIZE, "nice": NICE}, port)
        deadline = time.monotonic() + 30
        while udp_port_stats(port)[0] and time.monotonic() < deadline:
            time.sleep(0.001)
        t1 = time.monotonic()
        if rx.stop() != 0:
            raise cellslib.CellError(f"syslogrx failed: {rx.stderr_text()[-300:]}")
        with open(rx.summary_path) as f:
            received = json.load(f)["totals"]["received"]
    finally:
        rx.kill()
        if os.path.exists(rx.output):
            os.unlink(rx.output)
    return received / (t1 - t0)


def calibrate(workdir, target=TARGET_CAPACITY, log=print, tolerance=0.03, tries=5):
    """--cost-ns such that one worker drains `target` msgs/s. A worker spends
    cost + b ns per message, b its own work plus what other load on the CPUs
    takes from it (measured, not assumed): each step estimates b from every
    measurement so far (the median: one run slowed by a neighbour does not
    swing the next step) and sets cost = 1e9 / target - b. It stops within
    `tolerance` or after `tries` steps and keeps the measured step closest
    to the target."""
    cost = int(1e9 / target) - 1500
    steps = []
    for _ in range(tries):
        cap = measure_capacity(cost, workdir)
        steps.append({"cost_ns": cost, "capacity": round(cap, 1)})
        log(f"calibration: --cost-ns {cost} -> one worker {cap:,.0f} msgs/s "
            f"(target {target:,})")
        if abs(cap - target) <= tolerance * target:
            break
        extra = sorted(1e9 / s["capacity"] - s["cost_ns"] for s in steps)
        b = extra[len(extra) // 2] if len(extra) % 2 else \
            (extra[len(extra) // 2 - 1] + extra[len(extra) // 2]) / 2
        nxt = max(0, int(1e9 / target - b))
        cost = nxt if nxt != cost else cost + (1 if cap > target else -1)
    best = min(steps, key=lambda s: abs(s["capacity"] - target))
    return {"target": target, "cost_ns": best["cost_ns"], "capacity": best["capacity"],
            "steps": steps}


def cell_spec(mode, threads, rate, cost_ns, duration, sockets=None):
    return {"receiver": "syslogrx", "sender": "loggen", "mode": mode, "threads": threads,
            "sockets": sockets or 4 * threads, "rcvbuf": SC4S_RCVBUF, "window": 0,
            "cost_ns": cost_ns, "size": SIZE, "duration": duration, "rate": rate,
            "sources": 1, "repeat": 0, "nice": NICE, "output": OUTPUT, "cost_makeup": True,
            "row": f"{LABEL[mode]} - {plural(threads, 'thread')}"}


# The sender fell this far short of a column's rate: the cell measured another
# load than SC4S's, so it has no difference (the table says so).
SHORT = 0.10


def sender_short(cell):
    ach = cell.get("achieved_rate")
    return ach is not None and ach < cell["rate"] * (1 - SHORT)


def annotate(cell):
    """Adds the reference: published_drop_pct, published_row, difference
    (None when there is no published figure or the sender fell short)."""
    pub, row = published(cell["mode"], cell["threads"], cell["rate"])
    cell["published_drop_pct"] = pub
    cell["published_row"] = row
    d = cell.get("drop_pct")
    ok = pub is not None and d is not None and not sender_short(cell)
    cell["difference"] = round(d - pub, 2) if ok else None
    return cell


def fmt_pct(p):
    return "-" if p is None else f"{p:.1f}%" if p else "0%"


def fmt_diff(d):
    return "-" if d is None else f"{d:+.1f}"


def markdown(cells, rates, rows, cpus, calibration=None):
    """rows: [(mode, threads)] in table order. Each row: published, measured
    and difference lines; rows the machine cannot run say so."""
    by = {(c["mode"], c["threads"], c["rate"]): c for c in cells}
    head = ("| Receiver / Drops rate for EPS (msgs/sec) | "
            + " | ".join(f"{r:,}" for r in rates) + " |")
    lines = [head, "|---|" + "---|" * len(rates)]
    for mode, t in rows:
        name = f"{LABEL[mode]} - {plural(t, 'thread')}"
        if t > cpus:
            lines.append(f"| {name} | " + " | ".join(
                f"not run: {plural(cpus, 'CPU')} here" for _ in rates) + " |")
            continue
        pubs = [published(mode, t, r) for r in rates]
        src = next((row for _, row in pubs if row), None)
        pub_label = f"published ({src})" if src else "published"
        lines.append(f"| {name}: {pub_label} | " + " | ".join(
            fmt_pct(p) if p is not None else f"not published for {plural(t, 'thread')}"
            for p, _ in pubs) + " |")
        ms = []
        for r in rates:
            c = by.get((mode, t, r))
            if not c:
                ms.append("")
            elif c.get("error"):
                ms.append("error")
            else:
                text = fmt_pct(c["drop_pct"])
                ach = c.get("achieved_rate")
                if ach is not None and ach < r * 0.98:
                    text += f" (at {ach:,.0f}/s)"
                ms.append(text)
        lines.append(f"| {name}: measured (syslogrx {mode}, {plural(4 * t, 'socket')}) | "
                     + " | ".join(ms) + " |")
        diffs = []
        for r in rates:
            c = by.get((mode, t, r))
            if not c or c.get("error"):
                diffs.append("")
            elif c.get("published_drop_pct") is not None and sender_short(c):
                diffs.append("sender short")
            else:
                diffs.append(fmt_diff(c.get("difference")))
        lines.append(f"| {name}: difference (points) | " + " | ".join(diffs) + " |")
    out = "\n".join(lines) + "\n"
    if calibration:
        out += (f"\nCalibration: --cost-ns {calibration['cost_ns']} makes one syslogrx worker "
                f"drain {calibration['capacity']:,.0f} msgs/s (target {calibration['target']:,}/s,"
                f" one SC4S worker from the published Default rows); steps: "
                + ", ".join(f"{s['cost_ns']} ns -> {s['capacity']:,.0f}/s"
                            for s in calibration["steps"]) + ".\n")
    return out
