# SPDX-License-Identifier: MIT
"""/proc/net/udp and udp6, read one way for the lab: the rows of the sockets
bound to a local port (or every row), as split columns."""

TABLES = ("/proc/net/udp", "/proc/net/udp6")

# Column indexes of a /proc/net/udp row, split on white space.
LOCAL, QUEUES, INODE, DROPS = 1, 4, 9, 12


def udp_rows(port=None):
    """Split rows of both tables; with port, only the sockets bound to it."""
    for table in TABLES:
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if port is None or int(fields[LOCAL].rsplit(":", 1)[1], 16) == port:
                        yield fields
        except FileNotFoundError:
            pass


def rx_queue(fields):
    """Bytes waiting in the socket's receive queue (tx_queue:rx_queue, hex)."""
    return int(fields[QUEUES].split(":")[1], 16)
