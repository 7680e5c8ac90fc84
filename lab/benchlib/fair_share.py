# SPDX-License-Identifier: MIT
"""The bench's fair-share phase (--fair-share-only): what one flood costs the
quiet senders with random alone and with --fair-share, and what the filter
costs per message.

  syslogrx: 2 sockets, 1 thread, random, --cost-ns COST_NS (a known
  capacity: 1e9 / COST_NS messages/s, with --cost-makeup), RCVBUF buffers.
  Load: one flood from sysloggen (SIZE-byte messages, one flow, from
  127.0.0.1) at each of FLOODS for SECONDS, and QUIET senders at QUIET_RATE/s
  each from their own addresses (127.0.1.x) meanwhile. Per variant and rate:
  the quiet senders' loss and the flood's, from the summary's senders rows
  (sent by the senders' own counts), and the flood sender's CPU per message
  sent (its rusage: on loopback the balancer, the filter and the kernel's
  queueing or drop run in its softirq, charged to it; syslogrx's own CPU is
  the --cost-ns spin, and the filter's tick, ten reads a second of its map,
  is lost in it). What the buffers hold when the load ends is drained after
  it: part of what the flood did not lose. Interleaved and repeated,
  medians.

Every number is measured; nothing here is a threshold."""
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time

from benchlib import balance
from support.load import send_many
from support.paths import BUILD
from support.procnet import queued_bytes

COST_NS = 111111          # 9,000/s drained
FLOODS = [27000, 150000]  # SC4S's columns: 3x and 16x the capacity
QUIET = [(f"127.0.1.{i}", 100) for i in range(1, 51)]
QUIET_RATE = 100
SECONDS = 5
SIZE = 200
RCVBUF = "32M"
VARIANTS = [("random", []), ("random --fair-share", ["--fair-share"])]


def flood(port, rate):
    """sysloggen at rate for SECONDS; (its JSON summary, its CPU seconds)."""
    argv = [os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}", "--rate",
            str(rate), "--size", str(SIZE), "--duration", str(SECONDS), "--json"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return json.loads(out.decode().splitlines()[-1]), ru.ru_utime + ru.ru_stime


def trial(label, extra, rate, work):
    rx = balance.Rx("random", ["--cost-ns", str(COST_NS), "--cost-makeup", "--senders", "4096",
                               "--senders-top", "64"] + extra, work, sockets=2, threads=1,
                    rcvbuf=RCVBUF)
    sent_quiet = {}
    quiet = threading.Thread(target=lambda: sent_quiet.update(
        send_many("127.0.0.1", rx.port, SECONDS, "quiet", QUIET)))
    quiet.start()
    try:
        g, sender_s = flood(rx.port, rate)
    finally:
        quiet.join()
    deadline = time.monotonic() + 120
    while queued_bytes(rx.port) and time.monotonic() < deadline:
        time.sleep(0.1)
    s = rx.stop()
    rows = {r["address"]: r for r in s["senders"]["rows"]}
    got = sum(rows.get(a, {"received": 0})["received"] for a in sent_quiet)
    flood_row = rows.get("127.0.0.1", {"received": 0, "shed": 0})
    return {"variant": label, "flood_rate": rate, "flood_sent": g["datagrams"],
            "flood_achieved": g["achieved_rate"],
            "flood_received": flood_row["received"], "flood_shed": flood_row.get("shed", 0),
            "quiet_sent": sum(sent_quiet.values()), "quiet_received": got,
            "quiet_loss": 1 - got / sum(sent_quiet.values()),
            "flood_loss": 1 - flood_row["received"] / g["datagrams"],
            "sender_cpu_us": sender_s * 1e6 / g["datagrams"] if g["datagrams"] else None}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def run(repeats=3, log=print):
    res = {"trials": [], "cost_ns": COST_NS, "quiet": len(QUIET), "quiet_rate": QUIET_RATE,
           "seconds": SECONDS, "size": SIZE}
    with open("/proc/loadavg") as f:
        res["loadavg_at_start"] = " ".join(f.read().split()[:3])
    with tempfile.TemporaryDirectory(prefix="bench-fair-share-") as work:
        for _ in range(repeats):
            for rate in FLOODS:
                for label, extra in VARIANTS:
                    t = trial(label, extra, rate, work)
                    res["trials"].append(t)
                    log(f"fair share {label} @ {rate:,}/s: quiet lost {t['quiet_loss']:.1%}, "
                        f"flood lost {t['flood_loss']:.1%}, sender {t['sender_cpu_us']:.2f} "
                        f"us/msg")
    with open("/proc/loadavg") as f:
        res["loadavg_at_end"] = " ".join(f.read().split()[:3])
    res["summary"] = summarize(res)
    return res


def summarize(res):
    out = []
    for rate in FLOODS:
        base = None
        for label, _ in VARIANTS:
            ts = [t for t in res["trials"] if t["flood_rate"] == rate and t["variant"] == label]
            row = {k: median([t[k] for t in ts]) for k in
                   ("flood_achieved", "quiet_loss", "flood_loss", "sender_cpu_us")}
            row.update(variant=label, flood_rate=rate)
            base = base or row
            row["sender_ratio"] = (row["sender_cpu_us"] / base["sender_cpu_us"]
                                   if row["sender_cpu_us"] and base["sender_cpu_us"] else None)
            out.append(row)
    return out


def report_md(res):
    cap = 1e9 / res["cost_ns"]
    lines = ["## Fair share: one flood against fifty quiet senders", "",
             f"syslogrx: 2 sockets, 1 thread draining {cap:,.0f}/s (--cost-ns {res['cost_ns']} "
             f"--cost-makeup), random; a flood of {res['size']}-byte messages from sysloggen "
             f"and {res['quiet']} senders at {res['quiet_rate']}/s each from their own "
             f"addresses, {res['seconds']} s; medians. Load average "
             f"{res['loadavg_at_start']} at the start, {res['loadavg_at_end']} at the end.", "",
             "| flood (achieved) | variant | quiet senders lost | the flood lost | "
             "sender CPU us/msg | x random |", "|---|---|---|---|---|---|"]
    for r in res["summary"]:
        lines.append(f"| {r['flood_rate']:,}/s ({r['flood_achieved']:,.0f}) | {r['variant']} | "
                     f"{r['quiet_loss']:.1%} | {r['flood_loss']:.1%} | "
                     f"{r['sender_cpu_us']:.2f} | {r['sender_ratio']:.2f}x |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys
    r = run(repeats=int(sys.argv[1]) if len(sys.argv) > 1 else 3,
            log=lambda x: print(x, file=sys.stderr))
    print(report_md(r))
