# SPDX-License-Identifier: MIT
"""Shopify's Toxiproxy between syslogrx and a real destination: a TCP proxy
whose faults ("toxics") are set over its HTTP API while connections run.

    with Toxiproxy() as tp:                        # its own API port, on loopback
        p = tp.proxy("dest", 6514)                 # 127.0.0.1:p.port -> 127.0.0.1:6514
        p.toxic("latency", latency=1000)           # every byte 1 s late, from now on
        p.disable()                                # listener closed, connections cut
        p.enable(); p.clear()                      # healthy again

The server is build/toxiproxy/toxiproxy-server, built once by
lab/toxiproxy-setup.sh (pinned, cached). It is stopped and reaped on every
path: close(), the context manager's exit, or conftest's reaper for a test
that dies between the two.
"""
import json
import signal
import subprocess
import time
import urllib.error
import urllib.request

from support.paths import BUILD
from support.ports import free_tcp_port
from support.procs import lab_setup, signal_and_reap

def server_binary():
    """Builds the server if missing (quick when cached), under the lock that
    make test's background job takes too; returns its path."""
    return lab_setup("toxiproxy-setup.sh", f"{BUILD}/toxiproxy", timeout=900)


class Proxy:
    """One proxy of a Toxiproxy: 127.0.0.1:port -> upstream."""

    def __init__(self, tp, name, port, upstream):
        self.tp, self.name, self.port, self.upstream = tp, name, port, upstream
        self.toxics = []

    def toxic(self, kind, stream="upstream", **attributes):
        """Adds a toxic of that type ("latency", "bandwidth", "timeout",
        "slow_close", "reset_peer", "limit_data", ...) to every connection,
        open and new. upstream: syslogrx -> destination; downstream: back."""
        name = f"{kind}_{stream}_{len(self.toxics)}"
        self.tp.call("POST", f"/proxies/{self.name}/toxics",
                     {"name": name, "type": kind, "stream": stream, "toxicity": 1.0,
                      "attributes": attributes})
        self.toxics.append(name)
        return name

    def clear(self):
        """Removes every toxic this driver added."""
        while self.toxics:
            self.tp.call("DELETE", f"/proxies/{self.name}/toxics/{self.toxics.pop()}")

    def disable(self):
        """Down: the listener closed (connects refused), open connections cut."""
        self.tp.call("POST", f"/proxies/{self.name}", {"enabled": False})

    def enable(self):
        self.tp.call("POST", f"/proxies/{self.name}", {"enabled": True})


class Toxiproxy:
    def __init__(self):
        self.bin = server_binary()
        self.api_port = free_tcp_port()
        self.p = subprocess.Popen([self.bin, "-host", "127.0.0.1", "-port", str(self.api_port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while True:
                assert self.p.poll() is None, \
                    f"toxiproxy exited {self.p.returncode}: {self.p.stderr.read().decode()[-2000:]}"
                try:
                    self.call("GET", "/version")
                    break
                except (OSError, urllib.error.URLError):
                    assert time.monotonic() < deadline, "toxiproxy's API did not answer in 30 s"
                    time.sleep(0.05)
        except BaseException:
            self.close()
            raise
        self.proxies = {}

    def call(self, method, path, body=None):
        """One API request; returns the decoded JSON answer (None if empty).
        A refusal (4xx/5xx) raises with the server's message."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.api_port}{path}", data=data,
                                     method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                text = r.read()
        except urllib.error.HTTPError as e:
            raise AssertionError(f"toxiproxy {method} {path}: {e.code} {e.read()[:500]!r}") from e
        return json.loads(text) if text.strip() else None

    def proxy(self, name, upstream_port, port=None, upstream_host="127.0.0.1"):
        """A proxy from 127.0.0.1:port (free if None) to upstream, enabled."""
        port = port or free_tcp_port()
        self.call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{port}",
                                       "upstream": f"{upstream_host}:{upstream_port}",
                                       "enabled": True})
        self.proxies[name] = Proxy(self, name, port, upstream_port)
        return self.proxies[name]

    def close(self):
        signal_and_reap(self.p, signal.SIGTERM, 10)
        self.p.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
