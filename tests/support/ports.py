# SPDX-License-Identifier: MIT
"""Free loopback ports for a receiver, a fake server or a collector under
test: one nobody is bound to is picked, the program binds it next.

They are taken below the kernel's ephemeral range (ip_local_port_range),
where neither bind(0) nor a connect() picks a port: a test's client (a Kafka
or HTTP connection, a sender's socket) cannot take the port between the
pick and the program's bind, however many tests run at once. Each pytest
process (an xdist worker: gw0, gw1, ...) walks its own slice of that span,
from a random point, so two workers never pick the same port and two runs
on one machine rarely do."""
import os
import random
import socket

FIRST = 10000          # below: the well-known and registered ports of daemons
SLICES = 16            # pytest-xdist workers with a slice of their own


def _span():
    """This process's ports: its slice of [FIRST, the ephemeral range's low end)."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    n = int(worker[2:]) % SLICES if worker[2:].isdigit() else 0
    size = (low - FIRST) // SLICES
    return range(FIRST + n * size, FIRST + (n + 1) * size) if size >= 64 else None


_SPAN = _span()
_next = random.randrange(len(_SPAN)) if _SPAN else 0


def free_port(kind, family=socket.AF_INET, host=None):
    global _next
    host = host or ("::1" if family == socket.AF_INET6 else "127.0.0.1")
    if _SPAN is None:       # no room below the ephemeral range: the kernel's pick
        with socket.socket(family, kind) as s:
            s.bind((host, 0))
            return s.getsockname()[1]
    for _ in range(len(_SPAN)):
        port = _SPAN[_next]
        _next = (_next + 1) % len(_SPAN)
        with socket.socket(family, kind) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in {_SPAN}")


def free_udp_port(family=socket.AF_INET):
    """A UDP port nobody is bound to right now, on loopback."""
    return free_port(socket.SOCK_DGRAM, family)


def free_tcp_port(host="127.0.0.1"):
    """A TCP port nobody is bound to right now, on host (loopback)."""
    return free_port(socket.SOCK_STREAM, host=host)
