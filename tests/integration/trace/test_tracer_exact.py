"""The drop tracer is exact: every datagram sent is either received or counted.

A receiver (N sockets, SO_REUSEPORT on one port, tiny SO_RCVBUF, reading
nothing) takes a burst from several flows while `udpdrops --json` runs. Then,
per socket: traced drops == /proc/net/udp drops == SO_MEMINFO drops, and over
the group: sent == received + traced drops. IPv4, IPv6, and inside a network
namespace the test makes.
"""
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from support.paths import binary

SO_MEMINFO = 55          # <asm-generic/socket.h>; 57 is SO_COOKIE
SK_MEMINFO_DROPS = 8

# Receiver: prints {"port", "pid", "socks": [{"inode", "cookie", "rcvbuf"}]},
# then on "drain" reads every socket dry (until two quiet passes) and prints
# per-socket {"inode", "received", "meminfo_drops"}; exits on "exit".
RECEIVER = r"""
import json, os, socket, struct, sys, time
family = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
nsocks, rcvbuf = int(sys.argv[2]), int(sys.argv[3])
socks, port = [], 0
for i in range(nsocks):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((host, port))
    port = s.getsockname()[1]
    socks.append(s)
def info(s):
    return {"inode": os.fstat(s.fileno()).st_ino,
            "cookie": struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 57, 8))[0],
            "rcvbuf": s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)}
def drops(s):
    return struct.unpack("9I", s.getsockopt(socket.SOL_SOCKET, 55, 36))[8]
print(json.dumps({"port": port, "pid": os.getpid(), "socks": [info(s) for s in socks]}), flush=True)
for line in sys.stdin:
    if line.strip() == "exit":
        break
    got = [0] * nsocks
    quiet = 0
    while quiet < 2:
        before = [drops(s) for s in socks]
        n = 0
        for i, s in enumerate(socks):
            while True:
                try:
                    s.recv(65536, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                got[i] += 1
                n += 1
        time.sleep(0.1)
        quiet = quiet + 1 if n == 0 and before == [drops(s) for s in socks] else 0
    print(json.dumps([{"inode": os.fstat(s.fileno()).st_ino, "received": got[i],
                       "meminfo_drops": drops(s)} for i, s in enumerate(socks)]), flush=True)
"""

# Sender: `total` datagrams to host:port from `flows` source sockets, so the
# reuseport hash spreads them; bounded by count.
SENDER = r"""
import socket, sys
family = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
port, total, flows = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
socks = [socket.socket(family, socket.SOCK_DGRAM) for _ in range(flows)]
msg = b"<13>drop test " + b"x" * 186
for i in range(total):
    socks[i % flows].sendto(msg, (host, port))
print(total)
"""


class Lines:
    """Lines of a process's stdout and stderr, read by threads, never blocking."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.out, self.err = queue.Queue(), queue.Queue()
        self.err_text = []
        for stream, q in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()

    @staticmethod
    def _pump(stream, q):
        for line in stream:
            q.put(line)
        q.put(None)

    def line(self, q=None, timeout=20.0):
        q = q or self.out
        try:
            line = q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{self.p.args}: no output within {timeout}s")
        if line is None:
            raise AssertionError(f"{self.p.args}: ended (rc {self.p.wait()}) before a line")
        return line

    def wait_stderr(self, word, timeout=20.0):
        deadline = time.monotonic() + timeout
        while True:
            line = self.line(self.err, max(0.1, deadline - time.monotonic()))
            self.err_text.append(line)
            if word in line:
                return line

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def stop(self, timeout=20.0):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError(f"{self.p.args} did not stop within {timeout}s")


def proc_net_udp(prefix):
    """{inode: drops} from /proc/net/udp{,6} as seen in the (optional) netns."""
    out = subprocess.run(prefix + ["cat", "/proc/net/udp", "/proc/net/udp6"],
                         check=True, capture_output=True, text=True).stdout
    drops = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 13 and f[0].endswith(":") and f[0][:-1].isdigit():
            drops[int(f[9])] = int(f[12])
    return drops


def run_exact(family, prefix, total=20000, nsocks=4, rcvbuf=4096, flows=8):
    recv = Lines(prefix + [sys.executable, "-c", RECEIVER, family, str(nsocks), str(rcvbuf)])
    tracer = None
    try:
        hello = json.loads(recv.line())
        port = hello["port"]
        tracer = Lines(prefix + [binary("udpdrops"), "--port", str(port), "--json",
                                 "--interval", "0.5", "--count", "60"])
        # The tracepoints are attached once "ready" is printed.
        tracer.wait_stderr("ready")

        sent = subprocess.run(prefix + [sys.executable, "-c", SENDER, family, str(port),
                                        str(total), str(flows)],
                              check=True, capture_output=True, text=True, timeout=120)
        assert int(sent.stdout) == total

        recv.send("drain")
        drained = {s["inode"]: s for s in json.loads(recv.line(timeout=60))}
        drained_at = time.time()
        proc = proc_net_udp(prefix)

        # The first report whose reading began after the drain has every count.
        while True:
            report = json.loads(tracer.line())
            if report["time"] > drained_at:
                break
        assert tracer.stop() == 0
        tracer = None
    finally:
        if tracer:
            tracer.stop()
        if recv.p.poll() is None:
            recv.send("exit")
        recv.stop()

    rows = {s["inode"]: s for s in report["sockets"]}
    assert sorted(rows) == sorted(drained), "udpdrops shows exactly the receiver's sockets"
    traced_total = received_total = 0
    for sock in hello["socks"]:
        row, mine = rows[sock["inode"]], drained[sock["inode"]]
        traced = row["drops"]["total"]
        assert row["pid"] == hello["pid"]
        assert row["cookie"] == sock["cookie"]
        assert row["rcvbuf"] == sock["rcvbuf"]
        assert traced == proc[sock["inode"]] == mine["meminfo_drops"], (row, mine)
        # Every drop here is a full receive queue; the cross-check agrees.
        assert row["drops"].get("SOCKET_RCVBUFF", 0) == traced
        assert row["enqueue_failures"] == traced
        if traced:
            assert 0 < row["queue_hwm_bytes"] <= 2 * sock["rcvbuf"]
        traced_total += traced
        received_total += mine["received"]
    assert report["map_full"] == 0
    assert report["no_socket"] == {}
    # Tiny queues, nobody reading: most of the burst must have been dropped.
    assert traced_total > total // 2
    assert total == received_total + traced_total


@pytest.mark.parametrize("family", ["4", "6"])
def test_exact_counts(family):
    run_exact(family, [])


@pytest.mark.parametrize("family", ["4", "6"])
def test_exact_counts_in_netns(netns, family):
    run_exact(family, ["ip", "netns", "exec", netns])
