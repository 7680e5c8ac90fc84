# SPDX-License-Identifier: MIT
"""Load senders a test drives from Python (sysloggen is the C one)."""
import socket
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
