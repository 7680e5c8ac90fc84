#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""profile_drain: where syslogrx spends its CPU in the drain benchmark
(benchlib/capacity.py: held with SIGSTOP, queues filled, released), as
`perf record -e cpu-clock` (Debian's linux-perf; a VM often has no hardware
events) attached to the receiver for the whole hold-fill-drain, then the top
entries of `perf report` (self time, per symbol).

USAGE: lab/profile_drain.py [--receiver NAME] [--count N] [--repeat N] [--top N] [--callgraph]
                            [--out DIR]

EXAMPLES:
    lab/profile_drain.py                                # raw into null
    lab/profile_drain.py --receiver "syslogrx json, file"
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweeplib import cells, drain, peers  # noqa: E402
from benchlib import capacity, runner  # noqa: E402


def top_entries(data, n):
    """perf report's first n symbol lines (self %, command, object, symbol)."""
    r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                        "--sort", "sym", "--percent-limit", "0.5"],
                       capture_output=True, text=True, timeout=120)
    rows = [ln for ln in r.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
    return rows[:n]


def main(argv):
    ap = argparse.ArgumentParser(prog="profile_drain.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--receiver", default=capacity.SYSLOGRX_NULL,
                    choices=[n for n in capacity.ORDER if n != capacity.DRAINRX])
    ap.add_argument("--count", type=int, default=capacity.COUNT // 2)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=3, help="hold-fill-drain cycles (default 3)")
    ap.add_argument("--callgraph", action="store_true", help="record call chains (perf -g)")
    ap.add_argument("--out", default=os.path.join(peers.ROOT, "results", "profile"))
    a = ap.parse_args(argv)
    if not shutil.which("perf"):
        print("profile_drain: perf is missing: apt-get install linux-perf", file=sys.stderr)
        return 1
    work = os.path.join(a.out, "work")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    data = os.path.join(a.out, a.receiver.replace(" ", "_").replace(",", "") + ".perf.data")
    port = cells.free_udp_port()
    rx, flows = capacity.receiver(a.receiver, port, work)
    perf = None
    try:
        rx.start()
        rx.wait_ready()
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000"]
                                + (["-g"] if a.callgraph else [])
                                + ["-p", str(rx.pid), "-o", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attached (no event to wait for: it prints nothing)
        runs = [drain.hold_and_drain(rx.pid, port,
                                     lambda: capacity.fill(port, a.count, flows)[0])
                for _ in range(a.repeat)]
    finally:
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)
        runner.discard(rx)
    drained = sum(r["drained"] for r in runs)
    secs = sum(r["seconds"] for r in runs)
    print(f"# {a.receiver}: drained {drained:,} in {secs:.2f} s ({drained / secs:,.0f}/s, "
          f"{a.repeat} runs); perf data {data}")
    for line in top_entries(data, a.top):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
