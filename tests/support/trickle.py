# SPDX-License-Identifier: MIT
"""HTTP clients that never finish a request: each connection sends a request
line and a header, then one byte every interval, never the blank line that
ends the request, and is opened again shortly after the server closes it.
Runs as a process of its own (start_trickle) so that a test's probes never
wait on it for the interpreter, until SIGTERM or its time is up; at the end
it prints one JSON line:
{"opened": N, "closed_by_server": N}.

Also the server's limits as src/net/http_server.h states them."""
import errno
import json
import os
import re
import resource
import selectors
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HEAD = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Trickle: "


def server_limits():
    """{"MAX_CONNECTIONS": 256, "DEADLINE_S": 3, ...} from the header."""
    with open(os.path.join(HERE, "..", "..", "src", "net", "http_server.h")) as f:
        return {m.group(1): int(m.group(2))
                for m in re.finditer(r"#define HTTP_SERVER_(\w+) (\d+)", f.read())}


def trickle_address(i, addresses):
    """Connection i's source address: 127.0.1.1 on, addresses of them."""
    k = i % addresses
    return f"127.0.{1 + k // 250}.{1 + k % 250}"


def start_trickle(proc_cls, port, connections, addresses, seconds, interval=0.5):
    """The clients as a Proc (tests/support/procs.py); its first stdout line
    says they were all opened once."""
    p = proc_cls(["/usr/bin/python3", os.path.abspath(__file__), str(port), str(connections),
                  str(addresses), str(seconds), str(interval)])
    line = p.p.stdout.readline().decode()
    assert line.startswith("opened"), (line, p.p.stderr.read().decode() if p.p.poll() is not None else "")
    return p


def run(port, connections, addresses, seconds, interval):
    # One descriptor a connection, beside the interpreter's own.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = connections + 64
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            sys.exit(f"RLIMIT_NOFILE hard limit {hard} < {need}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    sel = selectors.DefaultSelector()
    conns = {}          # i -> [socket, connected, next byte at]
    reopen = {}         # i -> when
    stats = {"opened": 0, "closed_by_server": 0}
    reopen_after = 0.2

    def open_conn(i):
        s = socket.socket()
        s.setblocking(False)
        s.bind((trickle_address(i, addresses), 0))
        rc = s.connect_ex(("127.0.0.1", port))
        if rc not in (0, errno.EINPROGRESS):
            s.close()
            reopen[i] = time.monotonic() + reopen_after
            return
        conns[i] = [s, False, 0.0]
        sel.register(s, selectors.EVENT_WRITE, i)
        stats["opened"] += 1

    def lost(i):
        s = conns.pop(i)[0]
        sel.unregister(s)
        s.close()
        stats["closed_by_server"] += 1
        reopen[i] = time.monotonic() + reopen_after

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    for i in range(connections):
        open_conn(i)
    print("opened", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop:
        for key, _ in sel.select(timeout=0.05):
            i = key.data
            s, connected, _ = conns[i]
            if not connected:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    lost(i)
                    continue
                try:
                    s.send(HEAD)
                except OSError:
                    lost(i)
                    continue
                conns[i] = [s, True, time.monotonic() + interval]
                sel.modify(s, selectors.EVENT_READ, i)
                continue
            try:
                if s.recv(4096):
                    continue    # an answer: not expected, the request never ends
            except BlockingIOError:
                continue
            except OSError:
                pass
            lost(i)
        now = time.monotonic()
        for i, (s, connected, at) in list(conns.items()):
            if connected and at <= now:
                try:
                    s.send(b"a")
                    conns[i][2] = now + interval
                except BlockingIOError:
                    pass
                except OSError:
                    lost(i)
        for i, at in list(reopen.items()):
            if at <= now:
                del reopen[i]
                open_conn(i)
    for s, _, _ in conns.values():
        s.close()
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]),
        float(sys.argv[5]))
