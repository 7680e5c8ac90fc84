# SPDX-License-Identifier: MIT
"""Destinations on loopback that hang instead of failing, for the outputs'
deadlines: each a context manager that yields its port and closes what it
opened on every path.

- syn_dropper: SYNs go unanswered (a listener whose accept queue is full:
  Linux drops a SYN then, with or without syncookies);
- mute_server: takes every connection, never sends or reads a byte (a TLS
  server that never answers the ClientHello);
- trickle_server: takes every connection and sends a TLS handshake record's
  first bytes one at a time, every `every` seconds (never a whole record)."""
import contextlib
import socket
import threading


@contextlib.contextmanager
def syn_dropper():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fillers = []
    try:
        # Connections nobody accepts until one gets no answer: the queue is
        # full and the next SYN (syslogrx's) is dropped.
        for _ in range(8):
            c = socket.socket()
            c.setblocking(False)
            fillers.append(c)
            c.connect_ex(("127.0.0.1", port))
            probe = socket.socket()
            probe.settimeout(0.5)
            fillers.append(probe)
            try:
                probe.connect(("127.0.0.1", port))
            except (TimeoutError, socket.timeout):
                break
        else:
            raise AssertionError("the accept queue never filled")
        yield port
    finally:
        for c in fillers:
            c.close()
        srv.close()


@contextlib.contextmanager
def _serving(handle):
    """A listener whose connections each get handle(conn, stop) in a thread."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()
    threads = []

    def accept():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            t = threading.Thread(target=handle, args=(c, stop), daemon=True)
            t.start()
            threads.append(t)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        srv.shutdown(socket.SHUT_RDWR)   # wakes the accept (a close alone does not)
        srv.close()
        acceptor.join(timeout=10)
        assert not acceptor.is_alive(), "the acceptor did not end"
        for t in threads:
            t.join(timeout=10)
            assert not t.is_alive(), "a hung peer's connection was not closed"


def _mute(c, stop):
    with c:
        stop.wait()


@contextlib.contextmanager
def mute_server():
    with _serving(_mute) as port:
        yield port


# A TLS record header (handshake, TLS 1.2) announcing 16 KiB, then a
# ServerHello's start: never whole.
_HANDSHAKE = b"\x16\x03\x03\x40\x00\x02\x00\x3f\xfc\x03\x03" + bytes(4096)


@contextlib.contextmanager
def trickle_server(every=3.0):
    def trickle(c, stop):
        with c:
            for b in _HANDSHAKE:
                if stop.wait(every):
                    return
                try:
                    c.send(bytes([b]))
                except OSError:
                    return           # the client gave up
            stop.wait()

    with _serving(trickle) as port:
        yield port
