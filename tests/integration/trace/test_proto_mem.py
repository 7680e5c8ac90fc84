"""Drops under the kernel's UDP memory limit (net.ipv4.udp_mem) are the
receiving socket's, under PROTO_MEM, as many as the kernel counted.

When a datagram cannot be charged to UDP's global memory account
(`__sk_mem_raise_allocated` fails above udp_mem's hard limit), the kernel
drops it with SKB_DROP_REASON_PROTO_MEM and counts it in the socket's
`sk_drops` (/proc/net/udp "drops"), the count this test holds the tracer to.

udp_mem is global on this kernel (a new network namespace has no
/proc/sys/net/ipv4/udp_mem), so this test lowers the machine's own limit:
only for the length of one bounded burst, restored in a `finally` inside the
test and again by the fixture, whatever happens. While it is low every UDP
socket on the host can drop."""
import json
import os
import socket
import subprocess
import sys

import pytest

from support.paths import binary
from support.procnet import udp_rows
from support.procs import Proc, wait_until

# Serial: it lowers the machine's udp_mem, and every UDP socket of a test
# running beside it could drop (PROTO_MEM) while it is low.
pytestmark = pytest.mark.serial

UDP_MEM = "/proc/sys/net/ipv4/udp_mem"

# One socket with a receive buffer far above the burst (so no SOCKET_RCVBUFF
# drop is possible), reading nothing until asked; then it reads all that is
# queued and prints how many.
HELD_RECEIVER = r"""
import json, os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
s.bind(("127.0.0.1", 0))
s.setblocking(False)
print(json.dumps({"port": s.getsockname()[1], "inode": os.fstat(s.fileno()).st_ino,
                  "cookie": struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 57, 8))[0]}),
      flush=True)
read = 0
for _ in sys.stdin:
    while True:
        try:
            s.recv(65536)
            read += 1
        except BlockingIOError:
            break
    print(read, flush=True)
"""

BURST = 4000   # datagrams: ~9 MB of truesize, far under the 128 MB rcvbuf
SIZE = 1000


def write_udp_mem(value):
    with open(UDP_MEM, "w") as f:
        f.write(value)


@pytest.fixture
def udp_mem_restored():
    """udp_mem as it was, put back on every path (the test restores it itself
    right after its burst; this is the backstop)."""
    with open(UDP_MEM) as f:
        saved = f.read()
    try:
        yield saved
    finally:
        write_udp_mem(saved)
        with open(UDP_MEM) as f:
            assert f.read().split() == saved.split(), "udp_mem not restored"


def sentinel_arrived(inode):
    """The socket holds a datagram or dropped one (/proc/net/udp)."""
    for fields in udp_rows():
        if int(fields[9]) == inode:
            return int(fields[4].split(":")[1], 16) > 0 or int(fields[12]) > 0
    raise AssertionError(f"socket inode {inode} not in /proc/net/udp")


def proc_drops(inode):
    for fields in udp_rows():
        if int(fields[9]) == inode:
            return int(fields[12])
    raise AssertionError(f"socket inode {inode} not in /proc/net/udp")


def test_udp_mem_drops_are_the_sockets_under_proto_mem(procs, udp_mem_restored):
    recv = Proc([sys.executable, "-c", HELD_RECEIVER], stdin=subprocess.PIPE)
    procs.append(recv)
    hello = json.loads(recv.p.stdout.readline())
    port, inode = hello["port"], hello["inode"]
    ud = Proc([binary("udpdrops"), "--port", str(port), "--json", "--interval", "0.2",
               "--count", "300"])
    procs.append(ud)
    line = ud.p.stderr.readline().decode()
    assert "ready" in line, line

    # Loopback delivers in the softirq of the sending CPU's backlog, in order,
    # after sendto returns: a sentinel sent behind the burst from the same
    # socket to a second socket is queued or dropped only once the kernel has
    # taken (or dropped) every datagram of the burst. udp_mem stays low until
    # then, and no longer.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sentinel, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        sentinel.bind(("127.0.0.1", 0))
        s_inode = os.fstat(sentinel.fileno()).st_ino
        msg = (b"<13>test " + b"x" * SIZE)[:SIZE]
        write_udp_mem("1 1 1")
        try:
            sent = 0
            for _ in range(BURST):
                sent += tx.sendto(msg, ("127.0.0.1", port)) == SIZE
            tx.sendto(b"end", sentinel.getsockname())
            wait_until(lambda: sentinel_arrived(s_inode), "the sentinel behind the burst",
                       timeout=10)
        finally:
            write_udp_mem(udp_mem_restored)

    recv.p.stdin.write(b"\n")
    recv.p.stdin.flush()
    read = int(recv.p.stdout.readline())
    dropped = proc_drops(inode)
    assert read + dropped == sent, (read, dropped, sent)
    assert dropped > 0, "nothing dropped above a udp_mem of one page"
    def report_with_the_drops():
        report = json.loads(ud.p.stdout.readline())
        rows = {r["inode"]: r for r in report["sockets"]}
        row = rows.get(inode)
        return report if row and row["drops"]["total"] >= dropped else None

    report = wait_until(report_with_the_drops, "udpdrops counting the PROTO_MEM drops")
    row = {r["inode"]: r for r in report["sockets"]}[inode]
    assert row["cookie"] == hello["cookie"]
    assert row["drops"] == {"total": dropped, "PROTO_MEM": dropped}
    assert report["no_socket"] == {}
    assert ud.stop()[0] == 0
