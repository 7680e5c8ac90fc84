# SPDX-License-Identifier: MIT
"""The bench's per-sender phase (--senders): what counting per sender costs.

  bpf     syslogrx (2 sockets, 1 thread, rcvbuf 64K, --cost-ns 20000) under a
          load it cannot take (sysloggen, one flow, DROP_RATE/s, DROP_COUNT
          messages), with --senders 4096 and --senders 0, interleaved and
          repeated; the tracer's time per run of each program from
          kernel.bpf_stats (enabled for the phase, restored after), as a ratio
          of on to off in the same run: on_kfree_skb runs once per drop, and
          the per-sender count is in it.
  worker  the same receiver without --cost-ns and a big rcvbuf at CPU_RATE/s
          (no drops): syslogrx's CPU per message (utime + stime over the
          messages received), on against off: the workers' table.

Every number is measured; nothing here is a threshold."""
import os
import statistics
import tempfile

from benchlib import balance

DROP_RATE = 100000
DROP_COUNT = 200000
CPU_RATE = 50000
CPU_COUNT = 300000
STATS = "/proc/sys/kernel/bpf_stats_enabled"
MODES = [("on", ["--senders", "4096"]), ("off", ["--senders", "0"])]


def bpf_trial(mode, extra, work):
    rx = balance.Rx("random", ["--cost-ns", "20000"] + extra, work, sockets=2, threads=1,
                    rcvbuf="64K")
    balance.send(rx.port, DROP_RATE, count=DROP_COUNT)
    progs = balance.prog_stats(rx.p.pid)
    s = rx.stop()
    t = {"mode": mode, "received": s["totals"]["received"],
         "drops": s["totals"]["kernel_drops"]["total"]}
    for name, (cnt, ns) in progs.items():
        t[f"bpf_{name}_ns"] = ns / cnt if cnt else None
        t[f"bpf_{name}_runs"] = cnt
    return t


def cpu_trial(mode, extra, work):
    rx = balance.Rx("random", extra, work, sockets=2, threads=1, rcvbuf="32M")
    t0 = balance.ticks(rx.p.pid)
    balance.send(rx.port, CPU_RATE, count=CPU_COUNT)
    t1 = balance.ticks(rx.p.pid)
    s = rx.stop()
    received = s["totals"]["received"]
    return {"mode": mode, "received": received, "drops": s["totals"]["kernel_drops"]["total"],
            "cpu_us": (t1 - t0) / balance.HZ * 1e6 / received if received else None}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def run(repeats=3, log=print):
    res = {"bpf": [], "cpu": [], "drop_rate": DROP_RATE, "cpu_rate": CPU_RATE}
    with open(STATS) as f:
        old = f.read().strip()
    with tempfile.TemporaryDirectory(prefix="bench-senders-") as work:
        try:
            with open(STATS, "w") as f:
                f.write("1\n")
            for _ in range(repeats):
                for mode, extra in MODES:
                    t = bpf_trial(mode, extra, work)
                    res["bpf"].append(t)
                    log(f"senders bpf {mode}: on_kfree_skb "
                        f"{t.get('bpf_on_kfree_skb_ns') or 0:.0f} ns/run, drops {t['drops']}")
        finally:
            with open(STATS, "w") as f:
                f.write(old + "\n")
        for _ in range(repeats):
            for mode, extra in MODES:
                t = cpu_trial(mode, extra, work)
                res["cpu"].append(t)
                log(f"senders cpu {mode}: {t['cpu_us'] or 0:.2f} us/msg")
    res["summary"] = summarize(res)
    return res


def summarize(res):
    out = {"bpf_ns": {}, "cpu_us": {}}
    names = sorted({k for t in res["bpf"] for k in t if k.startswith("bpf_") and
                    k.endswith("_ns")})
    for mode, _ in MODES:
        ts = [t for t in res["bpf"] if t["mode"] == mode]
        out["bpf_ns"][mode] = {n[4:-3]: median([t.get(n) for t in ts]) for n in names}
        out["cpu_us"][mode] = median([t["cpu_us"] for t in res["cpu"] if t["mode"] == mode])

    def ratio(a, b):
        return a / b if a and b else None
    out["bpf_ratio"] = {n: ratio(out["bpf_ns"]["on"].get(n), out["bpf_ns"]["off"].get(n))
                        for n in out["bpf_ns"]["on"]}
    out["cpu_ratio"] = ratio(out["cpu_us"]["on"], out["cpu_us"]["off"])
    return out


def report_md(res):
    s = res["summary"]
    lines = ["## Per-sender counting: --senders 4096 against --senders 0", "",
             f"BPF: each tracer program's own time per run (kernel.bpf_stats) under "
             f"{res['drop_rate']:,}/s into 2 sockets of 64K read at 50,000/s (most datagrams "
             "dropped: on_kfree_skb runs once per drop); medians of interleaved repeats.", "",
             "| program | on ns/run | off ns/run | on / off |", "|---|---|---|---|"]
    for n, r in s["bpf_ratio"].items():
        on, off = s["bpf_ns"]["on"].get(n), s["bpf_ns"]["off"].get(n)
        lines.append(f"| {n} | {on:.0f} | {off:.0f} | {r:.2f}x |" if r
                     else f"| {n} | - | - | - |")
    on, off, r = s["cpu_us"]["on"], s["cpu_us"]["off"], s["cpu_ratio"]
    lines += ["", f"Workers: syslogrx's CPU per message at {res['cpu_rate']:,}/s, no drops, one "
              "sender: " + (f"on {on:.2f} us, off {off:.2f} us, on / off {r:.2f}x." if r
                            else "not measured.")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys
    r = run(repeats=int(sys.argv[1]) if len(sys.argv) > 1 else 3,
            log=lambda x: print(x, file=sys.stderr))
    print(report_md(r))
