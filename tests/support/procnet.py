# SPDX-License-Identifier: MIT
"""UDP sockets as /proc/net/udp{,6} shows them (and TCP ones as /proc/net/tcp{,6}): rows, queued bytes, and the
events a test waits for (queues empty, sockets bound). The lab reads them
the same way (sweeplib's peers and drain)."""
import time

from support.procs import wait_until


TABLES = ("net/udp", "net/udp6")
# Column indexes of a /proc/net/udp row, split on white space.
LOCAL, QUEUES, INODE, DROPS = 1, 4, 9, 12


def udp_rows(port=None, pid="self"):
    """Split rows of /proc/net/udp and udp6 (this namespace, or that of
    process pid); with port, only the sockets bound to it. Columns: LOCAL,
    QUEUES, INODE, DROPS. A kernel without IPv6 has no udp6 table."""
    for table in TABLES:
        try:
            with open(f"/proc/{pid}/{table}") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if port is None or int(fields[LOCAL].rsplit(":", 1)[1], 16) == port:
                        yield fields
        except FileNotFoundError:
            pass


# Column of a /proc/net/tcp row: the connection's state (01 ESTABLISHED,
# 08 CLOSE_WAIT, 0A LISTEN).
STATE = 3


def tcp_rows(port):
    """Split rows of /proc/net/tcp and tcp6 whose local end is port (this
    namespace): LOCAL, STATE."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if int(fields[LOCAL].rsplit(":", 1)[1], 16) == port:
                        yield fields
        except FileNotFoundError:
            pass


def rx_queue(fields):
    """Bytes waiting in the socket's receive queue (tx_queue:rx_queue, hex)."""
    return int(fields[QUEUES].split(":")[1], 16)


def queued_bytes(port, pid="self"):
    """Bytes in the receive queues of every socket bound to port (the
    rx_queue column of /proc/net/udp{,6}, in pid's namespace)."""
    return sum(rx_queue(f) for f in udp_rows(port, pid))


def wait_queues_empty(port, pid="self", timeout=60):
    """Until every socket on port has an empty receive queue: all that
    reached them was read. The event a test waits for after its sender
    ended, instead of a sleep."""
    wait_until(lambda: queued_bytes(port, pid) == 0, f"the queues on port {port} empty",
               timeout)


def wait_for_udp_port(port, timeout=10.0, count=1):
    """Wait until `count` UDP sockets are bound to `port` (any address, v4 or v6)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(udp_rows(port))) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{count} sockets on UDP port {port} did not appear within {timeout}s")
