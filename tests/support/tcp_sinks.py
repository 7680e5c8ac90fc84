# SPDX-License-Identifier: MIT
"""TCP servers on loopback that keep what they are sent: tcp_server takes one
connection and keeps the bytes; FrameSink takes octet-counted syslog frames
(RFC 6587) and keeps each flow's sequence numbers."""
import contextlib
import socket
import struct
import threading

from support.rx_watch import SEQ


@contextlib.contextmanager
def tcp_server(rcvbuf=None):
    """A TCP server on loopback that takes one connection and keeps what it
    reads: yields (port, chunks); closed and joined on every path. rcvbuf:
    the connection's SO_RCVBUF (the window it advertises)."""
    server = socket.socket()
    if rcvbuf:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
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


def frames(buf):
    """The whole octet-counted frames at the start of buf, and the rest."""
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
    return got, buf


class FrameSink:
    """A TCP syslog server on loopback for --output tcp: reads RFC 6587
    octet-counted frames on every connection (an upgrade's old and new
    process each have one), keeping every message.

    Faults on request: tls (an ssl.SSLContext) serves tls:HOST:PORT;
    stall_after=N stops reading the first connection after N frames, for
    good (closed unread at close(): what it held is lost), and reads no
    later connection before resume(); trickle_after_eof answers the
    client's FIN with one byte a second instead of its own FIN; rcvbuf
    sets the connections' SO_RCVBUF (what a server that stops reading
    holds unread); reset_after=N resets the first connection (RST) after
    N frames, what it held unread lost (with keep=K it kept only the first
    K of them: a proxy that read the rest and dropped it), and with
    refuse_after_reset the server then closes its listener: every later
    connect is refused."""

    def __init__(self, tls=None, stall_after=None, trickle_after_eof=False, rcvbuf=None,
                 reset_after=None, refuse_after_reset=False, keep=None):
        self.srv = socket.socket()
        if rcvbuf:
            self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.msgs = []
        self.conns = []
        self.lock = threading.Lock()
        self.tls = tls
        self.stall_after = stall_after
        self.trickle_after_eof = trickle_after_eof
        self.reset_after, self.refuse_after_reset = reset_after, refuse_after_reset
        self.keep = keep
        self.reset = threading.Event()      # the first connection was reset
        self.stalled = threading.Event()    # the first connection stopped reading
        self.resumed = threading.Event()
        self.closing = threading.Event()
        self.accepted = 0
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.accepted += 1
            t = threading.Thread(target=self._serve, args=(c, self.accepted), daemon=True)
            t.start()
            self.conns.append(t)

    def _serve(self, c, nth):
        with c:
            try:
                if self.tls:
                    c = self.tls.wrap_socket(c, server_side=True)
                if self.stall_after is not None and nth > 1:
                    self.resumed.wait()
                if self.reset_after is not None and nth == 1:
                    self._read_then_reset(c)
                    return
                self._read(c, self.stall_after if nth == 1 else None)
            except (OSError, ValueError):
                if not self.closing.is_set():
                    raise

    def _read(self, c, stall_after):
        if stall_after is not None:
            self._read_then_stop(c, stall_after)
            return
        buf = b""
        while True:
            data = c.recv(1 << 16)
            if not data:
                break
            got, buf = frames(buf + data)
            with self.lock:
                self.msgs.extend(got)
        # a torn frame only from a client killed before close() was called
        assert buf == b"" or self.closing.is_set(), buf[:100]
        while self.trickle_after_eof and not self.closing.wait(1):
            try:
                c.send(b"x")
            except OSError:
                return                       # the client is gone: reset

    def _read_then_reset(self, c):
        """reset_after frames read (as fast as they come: what was read
        past them dropped), then an RST (SO_LINGER 0): what the kernel held
        is dropped with the connection."""
        buf, n = b"", 0
        while n < self.reset_after and (data := c.recv(1 << 16)):
            got, buf = frames(buf + data)
            with self.lock:
                self.msgs.extend(got[:max(0, (self.keep or len(got) + n) - n)])
            n += len(got)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        if self.refuse_after_reset:
            self.srv.shutdown(socket.SHUT_RDWR)     # wakes the accept (a close alone does not)
            self.srv.close()
        c.close()
        self.reset.set()

    def _read_then_stop(self, c, frames):
        """Reads frames whole, not a byte past the last: what follows stays
        in the kernel (over TLS: in the kernel and the record being read),
        unread for good."""
        self._read_frames(c, frames)
        self.stalled.set()
        self.closing.wait()

    def _read_frames(self, c, frames):
        """frames frames read whole, not a byte past the last."""
        for _ in range(frames):
            head = b""
            while not head.endswith(b" "):
                b = c.recv(1)
                if not b:
                    return
                head += b
            body = b""
            while len(body) < int(head):
                d = c.recv(int(head) - len(body))
                if not d:
                    return
                body += d
            with self.lock:
                self.msgs.append(body)

    def resume(self):
        """Later connections are read from now on."""
        self.resumed.set()

    def close(self):
        """After syslogrx is gone: every connection read to its end."""
        self.closing.set()
        self.resumed.set()
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
