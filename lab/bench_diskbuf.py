#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_diskbuf: what --disk-buffer costs with a healthy destination.

syslogrx --output tcp to a local TCP sink that reads and discards, at a fixed
rate from sysloggen, three ways in one run, interleaved (ROUNDS times each):
no disk buffer, --disk-buffer (spill: with a healthy destination nothing
should reach the disk) and --disk-buffer-mode reliable (every batch written
to disk, then handed over or read back). CPU per message = syslogrx's user+system time
(/proc/PID/task/*/schedstat) over the messages it received; reported as ratios to the
run without a buffer, medians over the rounds.

USAGE: lab/bench_diskbuf.py [--rate N] [--duration S] [--rounds R] [--out FILE]
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from support.paths import BUILD  # noqa: E402
from support.ports import free_port  # noqa: E402


class TcpSink:
    """Accepts connections and discards what arrives, counting bytes."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.bytes = 0
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        self.srv.settimeout(0.2)
        while not self.stop:
            try:
                c, _ = self.srv.accept()
            except socket.timeout:
                continue
            except OSError:
                return  # closed (close() while waiting): bench.py goes on running
            threading.Thread(target=self._drain, args=(c,), daemon=True).start()

    def _drain(self, c):
        with c:
            while True:
                b = c.recv(1 << 20)
                if not b:
                    return
                self.bytes += len(b)

    def close(self):
        self.stop = True
        self.srv.close()


def cpu_seconds(pid):
    """pid's threads' time on the CPU (schedstat: to the nanosecond; a 3 s
    trial at 50,000/s is only some 10 clock ticks of utime + stime)."""
    ns = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns += int(f.read().split()[0])
        except OSError:
            pass    # a thread that ended just now
    return ns / 1e9


def trial(mode, sink, rate, duration, workdir):
    port = free_port(socket.SOCK_DGRAM)
    summary = os.path.join(workdir, f"summary-{mode}.json")
    buf = os.path.join(workdir, f"buf-{mode}")
    argv = [os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "2",
            "--threads", "2", "--rcvbuf", "8M", "--output", f"tcp:127.0.0.1:{sink.port}",
            "--summary", summary]
    if mode != "none":
        argv += ["--disk-buffer", buf, "--disk-buffer-mode", mode]
    rx = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    line = rx.stderr.readline().decode()
    if "ready on" not in line:
        rx.kill()
        raise SystemExit(f"syslogrx did not start: {line}{rx.stderr.read().decode()}")
    threading.Thread(target=rx.stderr.read, daemon=True).start()
    cpu0 = cpu_seconds(rx.pid)
    gen = subprocess.run([os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                          "--rate", str(rate), "--duration", str(duration), "--size", "300",
                          "--json"], capture_output=True, text=True, timeout=duration + 60)
    time.sleep(0.5)
    cpu = cpu_seconds(rx.pid) - cpu0
    rx.terminate()
    rx.wait(timeout=60)
    with open(summary) as f:
        s = json.load(f)
    shutil.rmtree(buf, ignore_errors=True)
    t = s["totals"]
    sent = json.loads(gen.stdout.splitlines()[-1])["sent"]
    db = s.get("disk_buffer", {})
    return {"mode": mode, "sent": sent, "received": t["received"], "written": t["written"],
            "kernel_drops": t["kernel_drops"]["total"], "cpu_s": cpu,
            "cpu_ns_per_msg": cpu * 1e9 / max(1, t["received"]),
            "disk_written": db.get("written", 0), "disk_replayed": db.get("replayed", 0),
            "disk_read_back": db.get("read_back")}


RATE = 50000


def run(modes, rate, duration, rounds, log=None):
    """The trials, interleaved rounds of each mode; {"trials", "median_ns":
    {mode: median CPU ns per message}}."""
    sink = TcpSink()
    workdir = tempfile.mkdtemp(prefix="bench_diskbuf.")
    trials = []
    try:
        for r in range(rounds):
            for m in modes:
                t = trial(m, sink, rate, duration, workdir)
                trials.append(t)
                if log:
                    log(f"diskbuf round {r + 1} {m:8s} cpu/msg {t['cpu_ns_per_msg']:7.0f} ns  "
                        f"received {t['received']} of {t['sent']}, kernel drops "
                        f"{t['kernel_drops']}, to disk {t['disk_written']}")
    finally:
        sink.close()
        shutil.rmtree(workdir, ignore_errors=True)
    med = {m: statistics.median(t["cpu_ns_per_msg"] for t in trials if t["mode"] == m)
           for m in modes}
    return {"trials": trials, "median_ns": med}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=int, default=RATE)
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", help="write the trials and ratios as JSON here too")
    a = ap.parse_args(argv)
    modes = ["none", "spill", "reliable"]
    res = run(modes, a.rate, a.duration, a.rounds,
              log=lambda text: print(text, file=sys.stderr))
    med = res["median_ns"]
    print(f"\n--disk-buffer, CPU per message at {a.rate}/s into a healthy TCP destination "
          f"(median of {a.rounds} interleaved rounds of {a.duration:g} s):\n")
    print("| mode | CPU per message | ratio to no buffer |")
    print("|---|---|---|")
    for m in modes:
        print(f"| {m} | {med[m] / 1000:.2f} us | {med[m] / med['none']:.2f} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rate": a.rate, "duration": a.duration, "trials": res["trials"],
                       "median_ns": med}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
