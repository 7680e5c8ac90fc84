# SPDX-License-Identifier: MIT
"""TCP servers on loopback that keep what they are sent: tcp_server takes one
connection and keeps the bytes; FrameSink takes octet-counted syslog frames
(RFC 6587) and keeps each flow's sequence numbers."""
import contextlib
import socket
import threading

from support.rx_watch import SEQ


@contextlib.contextmanager
def tcp_server():
    """A TCP server on loopback that takes one connection and keeps what it
    reads: yields (port, chunks); closed and joined on every path."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    got = []

    def serve():
        try:
            conn, _ = server.accept()
        except OSError:
            return  # closed before anyone connected
        with conn:
            while data := conn.recv(65536):
                got.append(data)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield server.getsockname()[1], got
    finally:
        server.close()
        t.join(timeout=30)


class FrameSink:
    """A TCP syslog server on loopback for --output tcp: reads RFC 6587
    octet-counted frames on every connection (an upgrade's old and new
    process each have one), keeping every message."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.msgs = []
        self.conns = []
        self.lock = threading.Lock()
        self.closing = False
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            t = threading.Thread(target=self._read, args=(c,), daemon=True)
            t.start()
            self.conns.append(t)

    def _read(self, c):
        buf = b""
        with c:
            while True:
                data = c.recv(1 << 16)
                if not data:
                    break
                buf += data
                got = []
                while True:
                    sp = buf.find(b" ")
                    if sp < 0:
                        break
                    n = int(buf[:sp])
                    if len(buf) < sp + 1 + n:
                        break
                    got.append(buf[sp + 1:sp + 1 + n])
                    buf = buf[sp + 1 + n:]
                with self.lock:
                    self.msgs.extend(got)
        assert buf == b"", buf[:100]

    def close(self):
        """After syslogrx is gone: every connection read to its end."""
        self.srv.close()
        for t in self.conns:
            t.join(timeout=60)
            assert not t.is_alive(), "a TCP output connection was not closed"

    def flows(self):
        flows = {}
        for m in self.msgs:
            s = SEQ.search(m)
            assert s, m
            flows.setdefault(int(s.group(1)), []).append(int(s.group(2)))
        return flows
