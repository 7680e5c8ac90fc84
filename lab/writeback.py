#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""writeback: what syslogrx's file output leaves dirty in the page cache, and
how steady its write rate is, on this machine's disk.

syslogrx --format json --output file:DIR/out.log takes sysloggen's load
(RATE/s of 1000-byte messages for SECONDS); every 100 ms the output file's
size and /proc/meminfo's Dirty + Writeback are sampled. Printed: bytes
written, the most Dirty + Writeback above what it was before the run (it is
the whole machine's: other jobs' writes count too), and the output's write
rate per 100 ms interval (median, 5th percentile, the longest run of
intervals in which it wrote nothing: a stall of the output thread).

USAGE: lab/writeback.py [--syslogrx PATH] [--rate N] [--seconds S] [--dir DIR]

EXAMPLES:
    lab/writeback.py                                  # this tree's build
    lab/writeback.py --syslogrx /work/main/build/syslogrx
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweeplib import cells, peers  # noqa: E402


def dirty_kb():
    out = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(("Dirty:", "Writeback:")):
                out += int(line.split()[1])
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="writeback.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--syslogrx", default=os.path.join(peers.BUILD, "syslogrx"))
    ap.add_argument("--rate", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--dir", default="/var/tmp")
    a = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="writeback.", dir=a.dir)
    out = os.path.join(work, "out.log")
    port = cells.free_udp_port()
    err = open(os.path.join(work, "stderr"), "wb")
    rx = subprocess.Popen([a.syslogrx, "--listen", f"127.0.0.1:{port}", "--sockets", "4",
                           "--threads", "2", "--rcvbuf", "64M", "--format", "json",
                           "--output", f"file:{out}", "--summary", os.path.join(work, "s.json")],
                          stdout=subprocess.DEVNULL, stderr=err)
    gen = None
    try:
        deadline = time.monotonic() + 10
        while "ready on" not in open(os.path.join(work, "stderr")).read():
            if rx.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("syslogrx did not start")
            time.sleep(0.02)
        base = dirty_kb()
        gen = subprocess.Popen([os.path.join(peers.BUILD, "sysloggen"), "--target",
                                f"127.0.0.1:{port}", "--rate", str(a.rate), "--duration",
                                str(a.seconds), "--size", "1000"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sizes, dirty = [], []
        end = time.monotonic() + a.seconds + 2
        while time.monotonic() < end:
            sizes.append(os.path.getsize(out) if os.path.exists(out) else 0)
            dirty.append(dirty_kb() - base)
            time.sleep(0.1)
        gen.wait(timeout=30)
    finally:
        if gen and gen.poll() is None:
            gen.kill()
        rx.terminate()
        rx.wait(timeout=60)
        err.close()
        shutil.rmtree(work, ignore_errors=True)
    rates = [(b - a_) / 0.1 / 1e6 for a_, b in zip(sizes, sizes[1:])]
    busy = rates[:int(a.seconds * 10)]
    longest = run = 0
    for r in busy[5:]:      # past the start
        run = run + 1 if r == 0 else 0
        longest = max(longest, run)
    print(f"{a.syslogrx}: {sizes[-1] / 1e6:,.0f} MB written in {a.seconds:g} s at {a.rate:,}/s; "
          f"Dirty+Writeback at most {max(dirty) / 1024:,.0f} MB above the start; write rate per "
          f"100 ms: median {statistics.median(busy):,.0f} MB/s, 5th percentile "
          f"{sorted(busy)[len(busy) // 20]:,.0f} MB/s, longest stall {longest * 100} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
