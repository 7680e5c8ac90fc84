# SPDX-License-Identifier: MIT
"""Free loopback ports for a receiver, a fake server or a collector under
test: the kernel picks one, the socket is closed, the program binds it next."""
import socket


def free_port(kind, family=socket.AF_INET, host=None):
    host = host or ("::1" if family == socket.AF_INET6 else "127.0.0.1")
    with socket.socket(family, kind) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def free_udp_port(family=socket.AF_INET):
    """A UDP port nobody is bound to right now, on loopback."""
    return free_port(socket.SOCK_DGRAM, family)


def free_tcp_port(host="127.0.0.1"):
    """A TCP port nobody is bound to right now, on host (loopback)."""
    return free_port(socket.SOCK_STREAM, host=host)
