#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""json_cost: what json's "raw" key costs, per message, in the drain
benchmark (benchlib/capacity.py: the receiver held, 1000-byte datagrams
queued, released, its CPU read from every thread's schedstat): syslogrx json
into a file as it runs by default (the text once, as msg) and with
--json-raw (the whole datagram again in every line), beside drainrx in the
same round. Prints, per round and receiver, bytes written per message, CPU
per message and drained per CPU second against drainrx; the machine is
shared, so only ratios within one round mean anything.

USAGE: lab/json_cost.py [--rounds N] [--count N] [--out DIR]
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import capacity  # noqa: E402

RECEIVERS = (capacity.SYSLOGRX_JSON_FILE, capacity.SYSLOGRX_JSON_RAW_FILE, capacity.DRAINRX)


def main(argv):
    ap = argparse.ArgumentParser(prog="json_cost.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", type=int, default=capacity.COUNT)
    ap.add_argument("--out", default=None, help="work directory (default: a temporary one)")
    a = ap.parse_args(argv)
    work = a.out or tempfile.mkdtemp(prefix="json_cost.")
    print("| round | receiver | bytes/msg | CPU us/msg | drained per CPU s | x drainrx |")
    print("|---|---|---|---|---|---|")
    for r in range(a.rounds):
        trials = [capacity.drain_trial(n, os.path.join(work, str(i)), a.count)
                  for i, n in enumerate(RECEIVERS)]
        ref = trials[-1].get("per_core")
        for t in trials:
            if t["error"] or not t.get("drained"):
                print(f"| {r + 1} | {t['receiver']} | error: {t['error']} | | | |")
                continue
            bpm = f"{t['output_bytes'] / t['drained']:.0f}" if "output_bytes" in t else "-"
            us = t["cpu_s"] / t["drained"] * 1e6
            x = f"{t['per_core'] / ref:.2f}x" if ref else "-"
            print(f"| {r + 1} | {t['receiver']} | {bpm} | {us:.3f} | {t['per_core']:,.0f} | {x} |")
    if not a.out:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
