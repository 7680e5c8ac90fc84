# SPDX-License-Identifier: MIT
"""Debian's haproxy as an independent PROXY protocol v2 decoder: a TCP
frontend on 127.0.0.1:port that takes the PROXY header (accept-proxy: v1
or v2), and a backend that hands each connection on to 127.0.0.1:to with
the addresses it decoded, written as a v1 header (send-proxy): what reaches
the far side names the sender only if haproxy read syslogrx's v2 header."""
import os
import signal
import subprocess
import time

from support.procnet import STATE, tcp_rows


class HAProxy:
    def __init__(self, folder, port, to, maxconn=1000):
        os.makedirs(folder, exist_ok=True)
        self.port = port
        self.conf = os.path.join(folder, "haproxy.cfg")
        with open(self.conf, "w") as f:
            f.write(f"""global
    maxconn {maxconn}
defaults
    mode tcp
    timeout connect 5s
    timeout client 120s
    timeout server 120s
frontend relay
    bind 127.0.0.1:{port} accept-proxy
    default_backend far
backend far
    server far 127.0.0.1:{to} send-proxy
""")
        self.p = None

    def start(self):
        # -db: foreground, no daemon; -W off: one process, the test's child
        self.p = subprocess.Popen(["/usr/sbin/haproxy", "-db", "-f", self.conf],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            assert self.p.poll() is None, self.p.stdout.read().decode()
            if any(f[STATE] == "0A" for f in tcp_rows(self.port)):
                return self
            time.sleep(0.05)
        raise AssertionError("haproxy did not listen")

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(timeout=15)
        self.p = None
