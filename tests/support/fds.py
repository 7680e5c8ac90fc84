# SPDX-License-Identifier: MIT
"""The kernel objects a process holds (from /proc/PID/fd and fdinfo): what an
upgrade in place or a restart through the fd store must hand over unchanged."""
import os
import socket

SO_COOKIE = 57                               # <asm-generic/socket.h>


def fd_identity(pid):
    """The kernel objects a process holds: socket inodes, BPF map and link ids."""
    socks, maps, links = set(), set(), set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
        except FileNotFoundError:
            continue
        if target.startswith("socket:"):
            socks.add(target)
        elif target == "anon_inode:bpf-map":
            maps.add(int(info["map_id"]))
        elif target == "anon_inode:bpf_link":
            links.add(int(info["link_id"]))
    return socks, maps, links


def handover_socket():
    """A UDP socket of a reuseport group on 127.0.0.1, as a hand-over names
    it: (the socket, its port, its SO_COOKIE). The caller closes it."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", 0))
    cookie = int.from_bytes(s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8), "little")
    return s, s.getsockname()[1], cookie
