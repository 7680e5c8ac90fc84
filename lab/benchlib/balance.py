# SPDX-License-Identifier: MIT
"""The bench's balancing phase: what leastloaded and --ordered cost
against random, and what leastloaded buys next to a noisy neighbour.

  cpu      syslogrx (4 sockets, 2 threads, file output, raw) under the same
           sysloggen load (1000-byte messages, one flow, CPU_RATE/s,
           CPU_COUNT messages) with random, leastloaded and random --ordered,
           interleaved and repeated; CPU per message from /proc/PID/stat
           (utime + stime) over the messages received, as ratios to random in
           the same run. The BPF programs' own time per run (kernel.bpf_stats,
           the programs of that syslogrx only) is reported beside it, because
           the enqueue side runs in the sender's softirq, not in syslogrx.
  neighbour  a CPU-bound process pinned to the CPU one worker is pinned to
           (taskset); the other worker has the other CPU; both workers spend
           NEIGHBOUR_COST_NS per message (--cost-ns); random against
           leastloaded at NEIGHBOUR_RATE/s: drops and each worker's share.

  spread   what spreads one flow, and what it costs per message:
           eBPF random, classic BPF random (syslogrx started by root without
           CAP_BPF and CAP_SYS_ADMIN in its bounding set: the SK_REUSEPORT
           load fails, classic BPF runs) and the kernel's hash, all with
           --no-trace (the tracer's cost is part 3's), interleaved and
           repeated. The program runs where the datagram is delivered: on
           loopback, in the sender's softirq, so the sender's CPU (its
           rusage) is reported beside syslogrx's, and both as ratios to hash.

Every number is measured; nothing here is a threshold."""
import json
import os
import resource
import signal
import statistics
import subprocess
import tempfile
import time

from support.paths import BUILD
from support.ports import free_udp_port
HZ = os.sysconf("SC_CLK_TCK")

CPU_RATE = 50000
CPU_COUNT = 500000
SIZE = 1000
NEIGHBOUR_RATE = 16000
NEIGHBOUR_HOGS = 2        # busy loops on worker 1's CPU
# ... at a higher priority than syslogrx: --cost-ns spins on the wall clock, so
# an equal-priority loop only delays a worker; this one takes most of its CPU.
NEIGHBOUR_NICE = -10
NEIGHBOUR_RCVBUF = "4M"   # a few seconds of excess overflow it, as in production
NEIGHBOUR_COST_NS = 40000
NEIGHBOUR_SECONDS = 8
HOG = "while True: pass"

VARIANTS = [("random", []), ("leastloaded", []), ("random", ["--ordered"])]
# (label, --balance, the command's prefix): the spread phase's comparison.
NO_BPF = ["setpriv", "--bounding-set=-bpf,-sys_admin,-perfmon"]
SPREADS = [("eBPF random", "random", []), ("classic BPF random", "random", NO_BPF),
           ("hash", "hash", [])]


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        f = f.read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])     # utime, stime


def prog_ids(pid):
    """Ids of the BPF programs process pid holds (program and link fds)."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_stats(pid):
    """{name: (run_cnt, run_time_ns)} of the BPF programs process pid holds."""
    ids = prog_ids(pid)
    try:
        r = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                           timeout=10)
        progs = json.loads(r.stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    out = {}
    for p in progs:
        if p["id"] in ids and "run_cnt" in p:
            out[p["name"]] = (p["run_cnt"], p["run_time_ns"])
    return out


class Rx:
    def __init__(self, policy, extra, workdir, sockets=4, threads=2, rcvbuf="32M", prefix=()):
        self.port = free_udp_port()
        self.summary = os.path.join(workdir, "summary.json")
        self.out = os.path.join(workdir, "out.log")
        argv = list(prefix) + [os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{self.port}",
                "--sockets", str(sockets), "--threads", str(threads), "--balance", policy,
                "--rcvbuf", rcvbuf, "--output", f"file:{self.out}", "--summary", self.summary,
                "--duration", "120"] + extra
        # stderr to a file: a pipe nobody drains could block it.
        self.err = os.path.join(workdir, "stderr")
        with open(self.err, "wb") as e:
            self.p = subprocess.Popen(argv, stderr=e)
        deadline = time.monotonic() + 10
        while True:
            with open(self.err) as f:
                text = f.read()
            if "ready on" in text:
                break
            if self.p.poll() is not None or time.monotonic() > deadline:
                self.p.kill()
                self.p.wait()
                raise RuntimeError(f"syslogrx did not start: {text.strip()}")
            time.sleep(0.02)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=60)
        with open(self.summary) as f:
            s = json.load(f)
        os.unlink(self.out)
        return s


def send(port, rate, count=None, seconds=None):
    argv = [os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}", "--rate",
            str(rate), "--size", str(SIZE), "--json"]
    argv += ["--count", str(count)] if count else ["--duration", str(seconds)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    return json.loads(r.stdout.splitlines()[-1])


def cpu_trial(policy, extra, workdir):
    rx = Rx(policy, extra, workdir)
    t0 = ticks(rx.p.pid)
    send(rx.port, CPU_RATE, count=CPU_COUNT)
    time.sleep(0.5)     # the queues empty, the output catches up
    t1 = ticks(rx.p.pid)
    progs = prog_stats(rx.p.pid)
    s = rx.stop()
    received = s["totals"]["received"]
    t = {"policy": policy, "extra": " ".join(extra), "received": received,
         "drops": s["totals"]["kernel_drops"]["total"],
         "cpu_us": (t1 - t0) / HZ * 1e6 / received if received else None}
    for name, (cnt, ns) in progs.items():
        t[f"bpf_{name}_ns"] = ns / cnt if cnt else None
    if s.get("ordering"):
        t["late"] = s["ordering"]["late"]
        t["lag_max_ms"] = s["ordering"]["lag_max_ms"]
    return t


def spread_trial(label, policy, prefix, workdir):
    """CPU per message of syslogrx and of the sender, and the spread, for
    one way of spreading one flow over 4 sockets."""
    rx = Rx(policy, ["--no-trace"], workdir, prefix=prefix)
    with open(rx.err) as f:
        ready = f.read()
    t0 = ticks(rx.p.pid)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    g = send(rx.port, CPU_RATE, count=CPU_COUNT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    time.sleep(0.5)     # the queues empty, the output catches up
    t1 = ticks(rx.p.pid)
    s = rx.stop()
    received = s["totals"]["received"]
    sender_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    per_socket = [k["received"] for k in s["sockets"]]
    return {"variant": label, "runs": s["balancer"]["runs"], "ready": ready.strip(),
            "received": received, "sent": g["datagrams"],
            "drops": sum(k["so_meminfo_drops"] or 0 for k in s["sockets"]),
            "busiest_share": max(per_socket) / received if received else None,
            "cpu_us": (t1 - t0) / HZ * 1e6 / received if received else None,
            "sender_cpu_us": sender_s * 1e6 / g["datagrams"] if g["datagrams"] else None}


def tids(pid):
    return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))


def neighbour_trial(policy, workdir):
    """Worker 0 on CPU 0, worker 1 on CPU 1 with a busy loop beside it."""
    rx = Rx(policy, ["--cost-ns", str(NEIGHBOUR_COST_NS)], workdir, rcvbuf=NEIGHBOUR_RCVBUF)
    # Threads in creation order: main, the output stage, then worker 0, 1
    # (started just after the "ready" line).
    deadline = time.monotonic() + 5
    while len(tids(rx.p.pid)) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    t = tids(rx.p.pid)
    if len(t) != 4:
        raise RuntimeError(f"syslogrx has {len(t)} threads, expected 4")
    workers = t[-2:]
    hogs = [subprocess.Popen(["nice", "-n", str(NEIGHBOUR_NICE), "taskset", "-c", "1",
                              "/usr/bin/python3", "-c", HOG])
            for _ in range(NEIGHBOUR_HOGS)]
    try:
        subprocess.run(["taskset", "-p", "-c", "0", str(workers[0])], capture_output=True,
                       check=True)
        subprocess.run(["taskset", "-p", "-c", "1", str(workers[1])], capture_output=True,
                       check=True)
        g = send(rx.port, NEIGHBOUR_RATE, seconds=NEIGHBOUR_SECONDS)
        time.sleep(1.0)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    s = rx.stop()
    steered = [k["steered"] for k in s["sockets"]]
    drops = [k["kernel_drops"]["total"] for k in s["sockets"]]
    return {"policy": policy, "sent": g["sent"], "drops": sum(drops),
            "drop_pct": 100.0 * sum(drops) / g["sent"] if g["sent"] else None,
            "share_worker0": (steered[0] + steered[2]) / sum(steered) if sum(steered) else None,
            "drops_worker1": drops[1] + drops[3], "drops_worker0": drops[0] + drops[2]}


def run(repeats=3, log=print):
    """Both parts; returns a dict for results.json and report_md()."""
    res = {"cpu": [], "neighbour": [], "cpu_rate": CPU_RATE, "cpu_count": CPU_COUNT,
           "neighbour_rate": NEIGHBOUR_RATE, "neighbour_cost_ns": NEIGHBOUR_COST_NS}
    stats_path = "/proc/sys/kernel/bpf_stats_enabled"
    with open(stats_path) as f:
        stats_old = f.read().strip()
    with tempfile.TemporaryDirectory(prefix="bench-balance-") as work:
        try:
            with open(stats_path, "w") as f:
                f.write("1\n")
            for i in range(repeats):
                for policy, extra in VARIANTS:
                    t = cpu_trial(policy, extra, work)
                    res["cpu"].append(t)
                    log(f"balance cpu {policy} {' '.join(extra)}: {t['cpu_us']:.2f} us/msg, "
                        f"drops {t['drops']}")
            res["spread"] = []
            for i in range(repeats):
                for label, policy, prefix in SPREADS:
                    t = spread_trial(label, policy, prefix, work)
                    res["spread"].append(t)
                    log(f"balance spread {label} ({t['runs']}): {t['cpu_us']:.2f} us/msg, "
                        f"sender {t['sender_cpu_us']:.2f} us/msg, busiest socket "
                        f"{t['busiest_share']:.0%}")
        finally:
            with open(stats_path, "w") as f:
                f.write(stats_old + "\n")
        for i in range(max(1, repeats - 1)):
            for policy in ("random", "leastloaded"):
                t = neighbour_trial(policy, work)
                res["neighbour"].append(t)
                log(f"balance neighbour {policy}: drops {t['drop_pct']:.2f}%, worker 0 took "
                    f"{t['share_worker0']:.0%}")
    res["summary"] = summarize(res)
    return res


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(res):
    by = {}
    for t in res["cpu"]:
        key = t["policy"] + (" " + t["extra"] if t["extra"] else "")
        by.setdefault(key, []).append(t)
    out = {"cpu_us": {k: median([t["cpu_us"] for t in v]) for k, v in by.items()}}
    base = out["cpu_us"].get("random")
    out["ratio_to_random"] = {k: (v / base if base and v else None)
                              for k, v in out["cpu_us"].items()}
    names = set()
    for t in res["cpu"]:
        names |= {k for k in t if k.startswith("bpf_")}
    out["bpf_ns"] = {k: {n[4:-3]: median([t.get(n) for t in v]) for n in sorted(names)
                         if any(t.get(n) for t in v)} for k, v in by.items()}
    sp = {}
    for t in res.get("spread", []):
        sp.setdefault(t["variant"], []).append(t)
    out["spread"] = {k: {m: median([t[m] for t in v])
                         for m in ("cpu_us", "sender_cpu_us", "busiest_share")}
                     for k, v in sp.items()}
    for k, v in out["spread"].items():
        v["runs"] = sp[k][0]["runs"]
        h = out["spread"].get("hash", {})
        for m in ("cpu_us", "sender_cpu_us"):
            v[m + "_x_hash"] = v[m] / h[m] if v[m] and h.get(m) else None
    nb = {}
    for t in res["neighbour"]:
        nb.setdefault(t["policy"], []).append(t)
    out["neighbour"] = {k: {"drop_pct": median([t["drop_pct"] for t in v]),
                            "share_worker0": median([t["share_worker0"] for t in v])}
                        for k, v in nb.items()}
    return out


def report_md(res):
    s = res["summary"]
    lines = ["## Balancing: leastloaded and --ordered against random", "",
             f"CPU per message of syslogrx (4 sockets, 2 threads, raw to a file) at "
             f"{res['cpu_rate']:,}/s, {res['cpu_count']:,} messages of {SIZE} bytes, one flow; "
             "medians of the interleaved repeats. BPF: each program's own time per run "
             "(kernel.bpf_stats; the enqueue side runs in the sender's softirq).", "",
             "| variant | CPU us/msg | x random | BPF ns per run |", "|---|---|---|---|"]
    for k, v in s["cpu_us"].items():
        bpf = ", ".join(f"{n} {ns:.0f}" for n, ns in s["bpf_ns"].get(k, {}).items())
        r = s["ratio_to_random"].get(k)
        lines.append(f"| {k} | {v:.2f} | {r:.2f}x | {bpf} |" if v and r
                     else f"| {k} | - | - | |")
    if s.get("spread"):
        lines += ["", "### One flow without privilege: classic BPF random, eBPF random, hash", "",
                  f"syslogrx --no-trace, 4 sockets, 2 threads, {res['cpu_rate']:,}/s, "
                  f"{res['cpu_count']:,} messages of {SIZE} bytes, one flow; classic BPF is "
                  "syslogrx started by root with CAP_BPF, CAP_SYS_ADMIN and CAP_PERFMON out "
                  "of its bounding set. The program runs in the delivering softirq: on "
                  "loopback, the sender's, so the sender's CPU per message is beside "
                  "syslogrx's. Medians of the interleaved repeats; ratios to hash in the "
                  "same run.", "",
                  "| variant | runs | syslogrx us/msg | x hash | sender us/msg | x hash "
                  "| busiest socket |", "|---|---|---|---|---|---|---|"]
        for k, v in s["spread"].items():
            def f(x, fmt):
                return format(x, fmt) if x is not None else "-"
            lines.append(f"| {k} | {v['runs']} | {f(v['cpu_us'], '.2f')} | "
                         f"{f(v['cpu_us_x_hash'], '.2f')}x | {f(v['sender_cpu_us'], '.2f')} | "
                         f"{f(v['sender_cpu_us_x_hash'], '.2f')}x | "
                         f"{f(v['busiest_share'], '.0%')} |")
    lines += ["", f"Noisy neighbour: {NEIGHBOUR_HOGS} busy loops at nice {NEIGHBOUR_NICE} pinned "
              f"(taskset) to worker 1's CPU; worker 0 alone on the other; --cost-ns {res['neighbour_cost_ns']} for both; "
              f"{res['neighbour_rate']:,}/s for {NEIGHBOUR_SECONDS} s, "
              f"rcvbuf {NEIGHBOUR_RCVBUF}.", "",
              "| policy | drops | worker 0's share |", "|---|---|---|"]
    for k, v in s["neighbour"].items():
        lines.append(f"| {k} | {v['drop_pct']:.2f}% | {v['share_worker0']:.0%} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys
    r = run(repeats=int(sys.argv[1]) if len(sys.argv) > 1 else 3,
            log=lambda x: print(x, file=sys.stderr))
    print(report_md(r))
