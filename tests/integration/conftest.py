"""Shared fixtures for the root integration tests: paths, free ports, a UDP sender.

Each test builds its own world (sockets, namespaces, daemons) and takes it down.
These tests need root and BPF; CI runs as root, so they never skip for that.
"""
import json
import os
import socket
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# SYSLOGRX_BUILD: another build of the same tree (make test-sanitize's build-asan/)
BUILD = os.environ.get("SYSLOGRX_BUILD") or os.path.join(ROOT, "build")


def binary(name):
    path = os.path.join(BUILD, name)
    assert os.access(path, os.X_OK), f"{path} is not built: run make"
    return path


def free_udp_port(family=socket.AF_INET):
    """A UDP port nobody is bound to right now, on loopback."""
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def send_udp(host, port, count, size=200, family=socket.AF_INET, payload=None, rate=None):
    """Send `count` datagrams from ONE source socket (one flow).

    With `rate`, paced in 10 ms slices so a test can stay under what a receiver
    takes. Returns the number sent (sendto failures raise)."""
    msg = payload if payload is not None else (b"<13>test " + b"x" * size)[:size]
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        start = time.monotonic()
        for i in range(count):
            if rate and i % max(1, rate // 100) == 0:
                due = start + i / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            s.sendto(msg, (host, port))
    return count


def read_json(path):
    with open(path) as f:
        return json.load(f)


class Proc:
    """A process started by a test and always reaped by it."""

    def __init__(self, argv, **kw):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)

    def stop(self, sig=15, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            raise AssertionError(f"{self.argv[0]} did not stop within {timeout}s: {err.decode()}")
        return self.p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


@pytest.fixture
def procs():
    """Processes registered here are stopped at teardown, even when a test fails."""
    started = []
    yield started
    for p in started:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()


def udp_rows(port=None, pid="self"):
    """Split rows of /proc/net/udp and udp6 (this namespace, or that of
    process pid); with port, only the sockets bound to it. Columns: 1 local,
    4 queues, 9 inode, 12 drops."""
    for table in (f"/proc/{pid}/net/udp", f"/proc/{pid}/net/udp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if port is None or int(fields[1].rsplit(":", 1)[1], 16) == port:
                    yield fields


def wait_for_udp_port(port, timeout=10.0, count=1):
    """Wait until `count` UDP sockets are bound to `port` (any address, v4 or v6)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(udp_rows(port))) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{count} sockets on UDP port {port} did not appear within {timeout}s")


class Syslogrx(Proc):
    """syslogrx started by a test: waits for its "ready" line; stop() returns
    (exit code, stdout, stderr) and the parsed summary."""

    def __init__(self, tmp_path, *args, port=None, listen=None, summary=True, netns=None,
                 sequences=True):
        self.summary_path = str(tmp_path / "summary.json") if summary else None
        argv = [binary("syslogrx")]
        if listen:
            argv += ["--listen", listen]
        elif port:
            argv += ["--listen", f"127.0.0.1:{port}"]
        if self.summary_path:
            argv += ["--summary", self.summary_path]
        argv += list(args)
        # syslogrx writes to stdout by default (a newcomer sees the messages);
        # these tests count from the summary and never read stdout before exit,
        # so a test that names no output gets the null one it measures with.
        if not any(str(a) in ("--output", "-o") or str(a).startswith("--output=") for a in args):
            argv += ["--output", "null"]
        # The tests close their books with sysloggen's sequence markers, lab-only
        # accounting syslogrx does only when asked; sequences=False for a
        # receiver as it runs by default (the hostile-input tests).
        if sequences:
            argv += ["--sequences"]
        if netns:
            argv = ["ip", "netns", "exec", netns] + argv
        super().__init__(argv)
        # Pre-flight warnings may come first; the ready line ends start-up
        # (EOF: it exited). What came before is kept for stop()'s stderr.
        self.early_err = ""
        while True:
            self.ready_line = self.p.stderr.readline().decode()
            if not self.ready_line or "ready on" in self.ready_line:
                break
            self.early_err += self.ready_line
        if "ready on" not in self.ready_line:
            rc, out, err = self.stop()
            raise AssertionError(f"syslogrx did not start (exit {rc}): {err}")

    def stop(self, sig=15, timeout=30):
        rc, out, err = super().stop(sig, timeout)
        err = self.early_err + err
        self.summary = read_json(self.summary_path) if self.summary_path and os.path.exists(self.summary_path) else None
        return rc, out, err


@pytest.fixture
def syslogrx(tmp_path, procs):
    """Factory: syslogrx(*flags, port=P) -> a started Syslogrx, stopped at teardown."""
    def start(*args, **kw):
        p = Syslogrx(tmp_path, *args, **kw)
        procs.append(p)
        return p
    return start


def run_cmd(argv, timeout=30, **kw):
    """Run to completion; returns CompletedProcess with text output."""
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def sysloggen(port, *args, host="127.0.0.1", timeout=120):
    """Runs build/sysloggen to completion against host:port; returns its JSON
    summary (the last line of --json output)."""
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    r = run_cmd([binary("sysloggen"), "--target", target, "--json"] + [str(a) for a in args],
                timeout=timeout)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    assert lines, r.stderr
    return lines[-1]


def promtool():
    """build/prometheus/usr/bin/promtool: Debian's prometheus package unpacked
    by lab/promtool-setup.sh (never installed or run as a service)."""
    path = os.path.join(BUILD, "prometheus", "usr", "bin", "promtool")
    if not os.access(path, os.X_OK):
        r = run_cmd([os.path.join(ROOT, "lab", "promtool-setup.sh"),
                     os.path.join(BUILD, "prometheus")], timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    return path
