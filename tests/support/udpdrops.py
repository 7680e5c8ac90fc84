# SPDX-License-Identifier: MIT
"""udpdrops under test: a receiver that holds sockets with small queues and
reads nothing (drops on demand), udpdrops started until ready and waited for,
and the kernel's own drop count per socket (/proc/net/udp)."""
import json
import subprocess
import sys

from support.paths import binary
from support.procnet import udp_rows
from support.procs import Proc


# A receiver holding `n` sockets on one port with a small queue, reading
# nothing; prints {"port", "pid", "socks": [{"inode", "cookie", "rcvbuf"}]}.
RECEIVER = r"""
import json, os, socket, struct, sys
n, port = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind(("127.0.0.1", port))
    port = s.getsockname()[1]
    socks.append(s)
print(json.dumps({"port": port, "pid": os.getpid(), "socks": [
    {"inode": os.fstat(s.fileno()).st_ino,
     "cookie": struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 57, 8))[0],
     "rcvbuf": s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)} for s in socks]}), flush=True)
sys.stdin.read()
"""


def start_receiver(procs, n=2, port=0, prefix=()):
    p = Proc(list(prefix) + [sys.executable, "-c", RECEIVER, str(n), str(port)],
             stdin=subprocess.PIPE)
    procs.append(p)
    return p, json.loads(p.p.stdout.readline())


def start_udpdrops(procs, *args, prefix=()):
    """udpdrops with its tracepoints attached (it said "ready")."""
    p = Proc(list(prefix) + [binary("udpdrops")] + list(args))
    procs.append(p)
    line = p.p.stderr.readline().decode()
    assert "ready" in line, line
    return p


def finish(p, timeout=30):
    """Waits for udpdrops to end by itself (--count); returns rc, stdout, stderr."""
    try:
        out, err = p.p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.p.kill()
        raise AssertionError(f"udpdrops did not end within {timeout}s")
    return p.p.returncode, out.decode(), err.decode()


def proc_drops(inode):
    for fields in udp_rows():
        if int(fields[9]) == inode:
            return int(fields[12])
    raise AssertionError(f"socket inode {inode} not in /proc/net/udp")
