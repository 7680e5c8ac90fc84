#!/usr/bin/env python3
"""Pacing benchmark: how close sysloggen and loggen hold a target rate.

For each rate, each sender sends for SECS seconds to build/drainrx (the C
reference receiver: recvmmsg, 10 ms arrival bins from the first datagram).
Reported per run:
  per-second   counts in whole seconds from the first arrival, and the worst
               |count - rate| / rate among them
  sliding      the worst 1 s window slid in 10 ms steps (every window, not only
               the ones aligned to the first arrival)
  delivered    datagrams counted, and the rate over the arrival span
"max" sends as fast as possible (sysloggen --rate 0, loggen -r 100000000);
there the error columns are meaningless and only the achieved rate counts.

Usage: lab/pacing_bench.py [--secs 5] [--rates 4500,9000,27000,50000,150000,max]
                             [--senders sysloggen,loggen] [--size 256] [--json]
Run as root (drainrx forces a 64 MiB SO_RCVBUF). Not a test: numbers only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import sweeplib  # noqa: F401 (puts tests/support on sys.path)
from support.paths import BUILD
from support.ports import free_udp_port
from support.procnet import udp_rows



def wait_bound(port, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(udp_rows(port)):
            return
        time.sleep(0.02)
    raise RuntimeError(f"drainrx did not bind port {port}")


def sender_cmd(sender, rate, secs, size, port):
    if sender == "sysloggen":
        return [os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                "--rate", "0" if rate == "max" else str(rate), "--duration", str(secs),
                "--size", str(size), "--end-markers", "0"]   # pacing only: no tail
    r = "100000000" if rate == "max" else str(rate)
    return ["loggen", "--dgram", "--inet", "-r", r, "-I", str(secs), "-s", str(size),
            "127.0.0.1", str(port)]


def one_run(sender, rate, secs, size):
    port = free_udp_port()
    rx = subprocess.Popen([os.path.join(BUILD, "drainrx"), "--listen", f"127.0.0.1:{port}",
                           "--duration", str(secs + 15), "--idle", "1", "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_bound(port)
        tx = subprocess.run(sender_cmd(sender, rate, secs, size, port), capture_output=True,
                            text=True, timeout=secs + 30)
        out, err = rx.communicate(timeout=secs + 30)
    finally:
        if rx.poll() is None:
            rx.kill()
            rx.wait()
    if rx.returncode != 0:
        raise RuntimeError(f"drainrx failed: {err}")
    res = json.loads(out)
    bins = res["bins"]
    per_bin = 1000 // res["bin_ms"]
    full = len(bins) // per_bin
    per_second = [sum(bins[i * per_bin:(i + 1) * per_bin]) for i in range(full)]
    row = {"sender": sender, "rate": rate, "secs": secs, "received": res["received"],
           "span_s": res.get("span_s", 0), "per_second": per_second,
           "sender_rc": tx.returncode}
    row["achieved"] = res["received"] / row["span_s"] if row["span_s"] else 0
    if rate != "max" and full:
        # whole seconds only: the last partial second is not a window
        row["worst_second_pct"] = max(abs(c - rate) / rate * 100 for c in per_second)
        row["first_second_pct"] = (per_second[0] - rate) / rate * 100
        slide = [sum(bins[i:i + per_bin]) for i in range(0, len(bins) - per_bin + 1)]
        row["worst_sliding_pct"] = max(abs(c - rate) / rate * 100 for c in slide)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--rates", default="4500,9000,27000,50000,150000,max")
    ap.add_argument("--senders", default="sysloggen,loggen")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rates = [r if r == "max" else int(r) for r in a.rates.split(",")]
    senders = a.senders.split(",")
    if "loggen" in senders and not shutil.which("loggen"):
        sys.exit("loggen not found (apt-get install syslog-ng-core)")
    rows = []
    if not a.json:
        print(f"{'sender':>10} {'rate':>7} {'received':>9} {'achieved/s':>11} "
              f"{'1st s %':>8} {'worst s %':>9} {'worst slide %':>13}  per-second")
    for rate in rates:
        for s in senders:
            row = one_run(s, rate, a.secs, a.size)
            rows.append(row)
            if a.json:
                print(json.dumps(row), flush=True)
                continue
            f = lambda k: f"{row[k]:+.2f}" if k in row else "-"
            print(f"{s:>10} {str(rate):>7} {row['received']:>9} {row['achieved']:>11.0f} "
                  f"{f('first_second_pct'):>8} {f('worst_second_pct'):>9} "
                  f"{f('worst_sliding_pct'):>13}  {row['per_second']}", flush=True)


if __name__ == "__main__":
    main()
