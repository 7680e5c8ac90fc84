#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""soak: syslogrx for a long run under rotation and destination restarts.

Two receivers side by side, each fed by its own sysloggen at RATE/2 (RATE in
all, default 100,000/s) for DURATION (default 600 s):
  file  --output file:PATH, the file renamed and syslogrx sent SIGHUP every
        ROTATE s (logrotate's create + postrotate);
  tcp   --output tcp to Debian's syslog-ng (writing a file) with
        --disk-buffer (spill), syslog-ng restarted every RESTART s.
Every 5 s each receiver's RSS is sampled. The books, to the message:
  file  sent = lines in all the rotated files + kernel drops + abandoned
  tcp   sent = received + kernel drops; received = written + disk_buffer.dropped;
        every written sequence number at syslog-ng (duplicates allowed)
  RSS   flat after the first minute: the last sample within 5% of the first
        sample after the first minute (the soak's target).

USAGE: lab/soak.py [--rate N] [--duration S] [--rotate S] [--restart S] [--out DIR]
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from support.paths import BUILD  # noqa: E402
from support.ports import free_port  # noqa: E402
SDATA = re.compile(rb'run="([^"]+)" flow="(\d+)" seq="(\d+)"')


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


class SyslogNg:
    def __init__(self, d, port):
        self.dir, self.port = d, port
        os.makedirs(d, exist_ok=True)
        self.out = os.path.join(d, "received.log")
        self.conf = os.path.join(d, "syslog-ng.conf")
        with open(self.conf, "w") as f:
            f.write(f"""@version: 3.38
options {{ stats-freq(0); keep-hostname(yes); }};
source s_tcp {{ syslog(transport("tcp") ip("127.0.0.1") port({port}) max-connections(4)
                        log-iw-size(100000) log-msg-size(70000)); }};
destination d_file {{ file("{self.out}" template("${{SDATA}}\\n")); }};
log {{ source(s_tcp); destination(d_file); }};
""")
        self.p = None

    def start(self):
        self.p = subprocess.Popen(["/usr/sbin/syslog-ng", "-F", "--no-caps", "-f", self.conf,
                                   "-R", os.path.join(self.dir, "persist"), "-p",
                                   os.path.join(self.dir, "pid"), "-c",
                                   os.path.join(self.dir, "ctl")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise SystemExit("syslog-ng did not listen")

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=30)


def start_rx(name, work, *args):
    port = free_port(socket.SOCK_DGRAM)
    summary = os.path.join(work, f"{name}-summary.json")
    p = subprocess.Popen([os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{port}",
                          "--sockets", "2", "--threads", "2", "--rcvbuf", "16M", "--balance",
                          "hash", "--summary", summary] + list(args),
                         stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, f"{name}.err"), "w"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(os.path.join(work, f"{name}.err")) as f:
            if "ready on" in f.read():
                return p, port, summary
        time.sleep(0.05)
    raise SystemExit(f"{name}: syslogrx did not start")


def start_gen(port, rate, duration, run):
    return subprocess.Popen([os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                             "--rate", str(rate), "--duration", str(duration), "--size", "300",
                             "--sources", "4", "--run-id", run, "--format", "rfc5424", "--json",
                             # the books count datagrams against "sent" (messages):
                             # no end markers, which are datagrams but not in "sent"
                             "--end-markers", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def rss_flat(samples, skip_s=60):
    """The soak's target: the RSS at the end within 5 % of its value after
    the first minute (the window's pool of batches is bounded by size and
    idle time: what grows past that is a leak)."""
    after = [kb for t, kb in samples if t >= skip_s]
    if len(after) < 2:
        return None, after
    first, last = after[0], after[-1]
    return abs(last - first) <= first * 0.05, after


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=int, default=100000)
    ap.add_argument("--duration", type=int, default=600)
    ap.add_argument("--rotate", type=float, default=30)
    ap.add_argument("--restart", type=float, default=120)
    ap.add_argument("--out", help="keep the work directory here (default: a temporary one)")
    a = ap.parse_args(argv)
    work = a.out or tempfile.mkdtemp(prefix="soak.")
    os.makedirs(work, exist_ok=True)
    half = a.rate // 2
    tport = free_port(socket.SOCK_STREAM)
    sng = SyslogNg(os.path.join(work, "sng"), tport)
    sng.start()
    logpath = os.path.join(work, "file-out.log")
    frx, fport, fsum = start_rx("file", work, "--output", f"file:{logpath}")
    trx, tport_udp, tsum = start_rx("tcp", work, "--output", f"tcp:127.0.0.1:{tport}",
                                    "--disk-buffer", os.path.join(work, "buf"))
    fgen, tgen = start_gen(fport, half, a.duration, "soakfile"), start_gen(tport_udp, half, a.duration, "soaktcp")
    start = time.monotonic()
    next_rot, next_restart, next_sample, rotations, restarts = a.rotate, a.restart, 0, 0, 0
    rss = {"file": [], "tcp": []}
    try:
        while fgen.poll() is None or tgen.poll() is None:
            el = time.monotonic() - start
            if el >= next_sample:
                rss["file"].append((el, rss_kb(frx.pid)))
                rss["tcp"].append((el, rss_kb(trx.pid)))
                next_sample += 5
            if el >= next_rot:
                rotations += 1
                os.rename(logpath, f"{logpath}.{rotations}")
                frx.send_signal(signal.SIGHUP)
                next_rot += a.rotate
            if el >= next_restart:
                restarts += 1
                sng.stop()
                time.sleep(2)
                sng.start()
                next_restart += a.restart
            time.sleep(0.2)
        fsent = json.loads(fgen.stdout.read().splitlines()[-1])["sent"]
        tsent = json.loads(tgen.stdout.read().splitlines()[-1])["sent"]
        time.sleep(2)
        for p in (frx, trx):
            p.terminate()
            p.wait(timeout=300)
        time.sleep(2)
    finally:
        sng.stop()
        for p in (frx, trx, fgen, tgen):
            if p.poll() is None:
                p.kill()
    with open(fsum) as f:
        fs = json.load(f)
    with open(tsum) as f:
        ts = json.load(f)
    lines = 0
    for path in glob.glob(logpath + "*"):
        with open(path, "rb") as f:
            lines += sum(1 for _ in f)
    ft = fs["totals"]
    fdrops = ft["kernel_drops"]["total"] + ft["abandoned"]
    tt, db = ts["totals"], ts["disk_buffer"]
    seen = set()
    with open(sng.out, "rb") as f:
        for l in f:
            m = SDATA.search(l)
            if m and m.group(1) == b"soaktcp":
                seen.add((int(m.group(2)), int(m.group(3))))
    fflat, fafter = rss_flat(rss["file"])
    tflat, tafter = rss_flat(rss["tcp"])
    checks = {
        "file: sent = lines + kernel drops + abandoned": fsent == lines + fdrops,
        "file: written = lines": ft["written"] == lines,
        "tcp: sent = received + kernel drops": tsent == tt["received"] + tt["kernel_drops"]["total"],
        "tcp: received = written + disk_buffer.dropped": tt["received"] == tt["written"] + db["dropped"],
        "tcp: every written message at syslog-ng": len(seen) == tt["written"],
        "file: RSS at the end within 5% of minute 1": bool(fflat),
        "tcp: RSS at the end within 5% of minute 1": bool(tflat),
    }
    result = {
        "rate": a.rate, "duration": a.duration, "rotations": rotations, "restarts": restarts,
        "file": {"sent": fsent, "lines": lines, "kernel_drops": ft["kernel_drops"]["total"],
                 "abandoned": ft["abandoned"], "rss_kb_after_1min": [fafter[0], fafter[-1]] if fafter else None},
        "tcp": {"sent": tsent, "received": tt["received"], "written": tt["written"],
                "kernel_drops": tt["kernel_drops"]["total"], "at_server_distinct": len(seen),
                "disk_buffer": db, "rss_kb_after_1min": [tafter[0], tafter[-1]] if tafter else None},
        "checks": checks,
        "rss_kb": rss,
    }
    with open(os.path.join(work, "soak.json"), "w") as f:
        json.dump(result, f, indent=1)
    # 10 minutes at 100,000/s is about 10 GB of logs: counted, not kept.
    for path in glob.glob(logpath + "*") + [sng.out]:
        if os.path.exists(path):
            os.unlink(path)
    print(json.dumps(result, indent=1))
    ok = all(checks.values())
    print(f"soak: {'PASS' if ok else 'FAIL'} ({work})", file=sys.stderr)
    if not a.out and ok:
        shutil.rmtree(work, ignore_errors=True)     # else soak.json, the summaries, stderr stay
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
