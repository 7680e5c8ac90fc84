#!/usr/bin/env python3
"""The gap of an upgrade in place (kill -USR2) with and without a disk
buffer, under load, with a TCP output: USR2 to the new process's "took over"
line, to the old process gone, and the new process's largest socket queue
(what the kernel held meanwhile); sent = received is checked.

With --disk-buffer the new process reads only once the old one has let DIR
go (DIR/lock): the gap is the old one's drain and final sync.

Usage: lab/upgrade_gap.py [--rate 20000] [--repeat 2]
Run as root. Not a test: numbers only (tests/integration/lifecycle/test_combos.py
asserts the books).
"""
import argparse
import os
import pathlib
import shutil
import socket
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
from support.rx_watch import Receiver, listen_for, wait_gone  # noqa: E402
from support.books import run_load, summaries  # noqa: E402
from support.tcp_sinks import FrameSink  # noqa: E402


def one(disk, rate):
    d = pathlib.Path(tempfile.mkdtemp(prefix="srx-upgrade-gap-"))
    sink = FrameSink()
    try:
        listen = listen_for(socket.AF_INET)
        extra = ["--disk-buffer", str(d / "db"), "--disk-buffer-mode", disk] if disk else []
        rx = Receiver(d, listen, "--rcvbuf", "64M", "--output", f"tcp:127.0.0.1:{sink.port}",
                      *extra, settings={"sockets": 4, "threads": 2})
        t = {}

        def act():
            t0 = time.monotonic()
            rx.upgrade()
            t["took_over_ms"] = (time.monotonic() - t0) * 1000
            wait_gone(rx.olds[-1], 60)
            t["old_gone_ms"] = (time.monotonic() - t0) * 1000
        sent, _, final = run_load(rx, listen, act, rate=rate)
        hwm = max(s["queue_hwm_bytes"] for s in final["sockets"])
        received = sum(s["totals"]["received"] for s in summaries(rx, final))
    finally:
        sink.close()
        shutil.rmtree(d, ignore_errors=True)
    return t, hwm, sent["sent"], received, final["totals"]["kernel_drops"]["total"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    print("disk buffer | USR2 -> took over ms | old gone ms | largest queue B | sent | received | drops")
    for disk in (None, "spill", "reliable"):
        for _ in range(a.repeat):
            t, hwm, sent, received, drops = one(disk, a.rate)
            print(f"{disk or 'none'} | {t['took_over_ms']:.1f} | {t['old_gone_ms']:.1f} | {hwm} | "
                  f"{sent} | {received} | {drops}")


if __name__ == "__main__":
    main()
