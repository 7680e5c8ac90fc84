# SPDX-License-Identifier: MIT
"""Free loopback ports for a receiver under test: the kernel picks one, the
socket is closed, the receiver binds it next."""
import socket


def free_port(kind):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_udp_port():
    return free_port(socket.SOCK_DGRAM)


def free_tcp_port():
    return free_port(socket.SOCK_STREAM)
