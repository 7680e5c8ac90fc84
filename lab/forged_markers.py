#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""forged_markers: forged sequence markers against one syslogrx, what they cost.

20,000 sysloggen-style markers, each a new flow number at seq=16777215, sent
to a syslogrx (--sockets 1 --output null, the flags given after the binary);
prints its RSS before and after and the summary's loss section.

USAGE: lab/forged_markers.py BUILD/syslogrx [syslogrx flags...]
  e.g. lab/forged_markers.py build/syslogrx --sequences
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])


def main(argv):
    exe, extra = argv[0], argv[1:]
    work = tempfile.mkdtemp(prefix="forged_markers.")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([exe, "--listen", f"127.0.0.1:{port}", "--sockets", "1", "--threads", "1",
                          "--rcvbuf", "8M", "--output", "null", "--summary",
                          os.path.join(work, "s.json")] + extra, stderr=subprocess.PIPE)
    try:
        assert b"ready on" in p.stderr.readline(), "syslogrx did not start"
        before = rss_kib(p.pid)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:
            for i in range(20000):
                c.sendto(f"<13>Nov 22 03:22:47 h x[1]: seq@32473 run=evil flow={i} "
                         f"seq=16777215 x".encode(), ("127.0.0.1", port))
                if i % 2000 == 1999:
                    time.sleep(0.05)    # under the 8M rcvbuf: no kernel drop
        time.sleep(1)
        after = rss_kib(p.pid)
    finally:
        p.terminate()
        p.wait(timeout=60)
    with open(os.path.join(work, "s.json")) as f:
        s = json.load(f)
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"flags": extra, "rss_kib": [before, after],
                      "received": s["totals"]["received"],
                      "kernel_drops": s["totals"]["kernel_drops"]["total"],
                      "loss": s["loss"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
