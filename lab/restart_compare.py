#!/usr/bin/env python3
"""Messages lost by one restart under load: syslog-ng stopped and started
(SC4S's way to apply an upgrade) against syslogrx done the same way, and
syslogrx's own ways: kill -USR2 (upgrade in place) and kill -9 of a
supervised receiver (--supervise).

Each run: a fresh loopback port, sysloggen at RATE msgs/s with 4 flows for
SECS seconds, the restart at 1/3 of it; then every (flow, seq) is looked for
in the output file. lost = sent - distinct sequence numbers written. The
"gap" column is the time the restart step took as seen from here (stop to
the new process bound / ready), not a measure of loss.

Usage: lab/restart_compare.py [--rate 50000] [--secs 6] [--repeat 3] [--out DIR]
Run as root. Not a test: numbers only (the tests assert syslogrx's side).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "lab"))
from sweeplib.cells import free_udp_port  # noqa: E402
from sweeplib.peers import BUILD, SyslogNg, udp_inodes  # noqa: E402

SEQ = re.compile(rb"seq@32473 run=\S+ flow=(\d+) seq=(\d+)")
SOCKETS, THREADS, RCVBUF = 4, 2, 16 << 20


def wait_for(cond, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.002)
    raise RuntimeError("timed out")


class Syslogrx:
    """syslogrx with stderr in a file, waited on by its lines."""

    def __init__(self, port, workdir, *extra):
        self.err = os.path.join(workdir, f"syslogrx.{time.monotonic_ns()}.stderr")
        self.out = os.path.join(workdir, "out.log")
        argv = [os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{port}",
                "--sockets", str(SOCKETS), "--threads", str(THREADS), "--rcvbuf", str(RCVBUF),
                "--output", f"file:{self.out}", "--summary", os.path.join(workdir, "s.json")]
        self.f = open(self.err, "wb")
        self.p = subprocess.Popen(argv + list(extra), stdout=subprocess.DEVNULL, stderr=self.f,
                                  start_new_session=True)
        wait_for(lambda: "ready on" in self.text())

    def text(self):
        with open(self.err, errors="replace") as f:
            return f.read()

    def pids(self, pattern):
        return [int(x) for x in re.findall(pattern, self.text())]


def run_load(port, rate, secs, action, workdir):
    gen = subprocess.Popen([os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                            "--rate", str(rate), "--duration", str(secs), "--sources", "4",
                            "--size", "200", "--json"], stdout=subprocess.PIPE, text=True)
    time.sleep(secs / 3)
    t0 = time.monotonic()
    action()
    gap_ms = (time.monotonic() - t0) * 1000
    out, _ = gen.communicate(timeout=secs * 4 + 30)
    sent = json.loads(out.strip().splitlines()[-1])
    time.sleep(0.5)
    return sent, gap_ms


def distinct(path):
    seen = set()
    with open(path, "rb") as f:
        for line in f:
            m = SEQ.search(line)
            if m:
                seen.add((int(m.group(1)), int(m.group(2))))
    return len(seen)


def syslog_ng_restart(rate, secs, workdir):
    port = free_udp_port()
    spec = {"sockets": SOCKETS, "threads": THREADS, "rcvbuf": RCVBUF, "window": 0}
    ng = SyslogNg(spec, port, workdir)
    ng.start()
    ng.wait_ready()
    box = {}

    def restart():
        ng.stop()
        box["ng"] = SyslogNg(spec, port, workdir)
        box["ng"].start()
        box["ng"].wait_ready()

    sent, gap = run_load(port, rate, secs, restart, workdir)
    box["ng"].stop()
    return sent, gap, ng.output


def syslogrx_restart(rate, secs, workdir):
    port = free_udp_port()
    rx = Syslogrx(port, workdir)
    box = {}

    def restart():
        rx.p.send_signal(signal.SIGTERM)
        rx.p.wait()
        box["rx"] = Syslogrx(port, workdir)

    sent, gap = run_load(port, rate, secs, restart, workdir)
    box["rx"].p.send_signal(signal.SIGTERM)
    box["rx"].p.wait()
    return sent, gap, rx.out


def syslogrx_usr2(rate, secs, workdir):
    port = free_udp_port()
    rx = Syslogrx(port, workdir)

    def upgrade():
        rx.p.send_signal(signal.SIGUSR2)
        wait_for(lambda: "took over" in rx.text())

    sent, gap = run_load(port, rate, secs, upgrade, workdir)
    new = rx.pids(r"pid (\d+) took over")[-1]
    rx.p.wait()
    os.kill(new, signal.SIGTERM)
    wait_for(lambda: not udp_inodes(port), 30)
    return sent, gap, rx.out


def syslogrx_kill9(rate, secs, workdir):
    port = free_udp_port()
    rx = Syslogrx(port, workdir, "--supervise")

    def crash():
        child = rx.pids(r"started receiver pid (\d+)")[-1]
        os.kill(child, signal.SIGKILL)
        wait_for(lambda: f"replaced pid {child} by" in rx.text())

    sent, gap = run_load(port, rate, secs, crash, workdir)
    rx.p.send_signal(signal.SIGTERM)
    rx.p.wait()
    return sent, gap, rx.out


SCENARIOS = [
    ("syslog-ng 3.38 (SC4S layout): stop, start", syslog_ng_restart),
    ("syslogrx: stop, start", syslogrx_restart),
    ("syslogrx: kill -USR2 (upgrade in place)", syslogrx_usr2),
    ("syslogrx --supervise: kill -9 of the receiver", syslogrx_kill9),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=int, default=50_000)
    ap.add_argument("--secs", type=float, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="restart-compare-")
    rows = []
    for name, fn in SCENARIOS:
        for r in range(a.repeat):
            workdir = os.path.join(out, f"{fn.__name__}-{r}")
            os.makedirs(workdir, exist_ok=True)
            sent, gap, path = fn(a.rate, a.secs, workdir)
            got = distinct(path)
            rows.append({"scenario": name, "run": r, "sent": sent["sent"], "written": got,
                         "lost": sent["sent"] - got, "gap_ms": round(gap, 1)})
            print(json.dumps(rows[-1]), flush=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(f"\n| restart ({a.rate:,} msgs/s, {SOCKETS} sockets, 16 MiB rcvbuf) "
          "| runs | messages lost per restart | gap (ms) |")
    print("|---|---|---|---|")
    for name, _ in SCENARIOS:
        rs = [x for x in rows if x["scenario"] == name]
        lost = ", ".join(f"{x['lost']:,}" for x in rs)
        gaps = ", ".join(f"{x['gap_ms']:.0f}" for x in rs)
        print(f"| {name} | {len(rs)} | {lost} | {gaps} |")
    print(f"\nresults in {out}")


if __name__ == "__main__":
    main()
