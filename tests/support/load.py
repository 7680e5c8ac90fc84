# SPDX-License-Identifier: MIT
"""Load senders a test drives from Python (sysloggen is the C one)."""
import json
import socket
import subprocess
import sys
import time


def send_udp(host, port, count, size=200, family=socket.AF_INET, payload=None, rate=None):
    """Send `count` datagrams from ONE source socket (one flow).

    With `rate`, paced in 10 ms slices so a test can stay under what a receiver
    takes. Returns the number sent (sendto failures raise)."""
    msg = payload if payload is not None else (b"<13>test " + b"x" * size)[:size]
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        return send_from(s, (host, port), [msg] * count, rate)


def send_from(sock, addr, msgs, rate=None):
    """Send each of msgs from sock to addr, with `rate` paced in 10 ms slices;
    returns the number sent."""
    start = time.monotonic()
    for i, m in enumerate(msgs):
        if rate and i % max(1, rate // 100) == 0:
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        sock.sendto(m, addr)
    return len(msgs)


# Several senders, each from its own source address at its own rate, for
# `seconds` (bounded: at most rate x seconds each), from one process. Each
# datagram carries a sysloggen RFC 3164 marker, flow = the sender's index in
# the list, seq from 0. Prints {source address: datagrams sent} as JSON. A
# sender the host held back makes up at most 50 ms of its rate and skips the
# rest: a quiet sender stays quiet (a burst past its share is what
# --fair-share sheds), and what it sent is counted as sent.
_MANY = r"""
import json, socket, sys, time
dst, port, seconds, run = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
senders = []
for i, spec in enumerate(sys.argv[5:]):
    src, rate = spec.rsplit("=", 1)
    s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.bind((src, 0))
    s.connect((dst, port))
    senders.append([src, float(rate), s, 0, i, 0])
pad = b"x" * 100
start = time.monotonic()
while True:
    el = min(time.monotonic() - start, seconds)
    for x in senders:
        due, lag = int(x[1] * el) - x[5], int(x[1] * 0.05) + 1
        if due - x[3] > lag:
            x[5] += due - x[3] - lag
            due = x[3] + lag
        for _ in range(min(due - x[3], 500)):
            x[2].send(b"<13>load seq@32473 run=%s flow=%d seq=%d %s"
                      % (run.encode(), x[4], x[3], pad))
            x[3] += 1
    if el >= seconds:
        break
    time.sleep(0.0005)
print(json.dumps({x[0]: x[3] for x in senders}))
"""


def send_many(dst, port, seconds, run, rates, netns=None):
    """rates: [(source address, datagrams/s)]; each sends for `seconds`
    (source addresses must be local: 127.0.0.0/8, or a netns's). Returns
    {source address: sent}; flow i of the markers is rates[i]."""
    argv = [sys.executable, "-c", _MANY, dst, str(port), str(seconds), run]
    argv += [f"{a}={r}" for a, r in rates]
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# One datagram from each of n source addresses, 127.1.0.0 upwards (n at most
# 16,711,680), all from one socket and port: each sendmsg names its source
# in an IP_PKTINFO (8 in linux/in.h; Python has no name for it), which
# loopback takes for any 127/8 address. About 100,000/s: a socket, bind and
# close per address were 20 times slower, and on a loaded host outlasted
# the load a test sent beside them.
_FORGER = r"""
import socket, struct, sys
IP_PKTINFO = 8
port, n = int(sys.argv[1]), int(sys.argv[2])
msg = b"<13>forged " + b"x" * 100
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    src = bytes((127, 1 + (i >> 16), (i >> 8) & 255, i & 255))
    info = struct.pack("=i4s4s", 0, src, bytes(4))
    s.sendmsg([msg], [(socket.IPPROTO_IP, IP_PKTINFO, info)], 0, ("127.0.0.1", port))
print(n, flush=True)
"""


def send_forged(port, n, timeout=300, netns=None):
    """Forged senders: one datagram from each of n addresses to 127.0.0.1:port
    (in netns, when given). Returns the number sent."""
    argv = [sys.executable, "-c", _FORGER, str(port), str(n)]
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)
