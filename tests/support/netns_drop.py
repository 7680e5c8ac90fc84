# SPDX-License-Identifier: MIT
"""A destination behind a firewall's DROP: a network namespace of the test's
own, a veth to it, and in it a relay on ADDR:PORT that hands each
connection to 127.0.0.1:upstream here (its listening socket is made in the
namespace, its outgoing ones in ours: a socket keeps the namespace it was
made in). drop() adds an nftables rule in the namespace that drops every
packet to PORT: SYNs and data vanish, nothing answers, nothing is reset,
as on a firewall that starts dropping. undrop() removes it; connections it
held then resume, as TCP retransmits.

    with NetnsDrop("chaos", upstream_port) as d:
        ... connect to d.addr:d.port ...
        d.drop(); ...; d.undrop()

A relay made again at the same address and port, one at a time (a Kafka
broker advertises it: its clients come back to it past the bootstrap):

    net, port = new_net(), free_tcp_port()
    with NetnsDrop("chaos", upstream_port, net, port) as d: ...
"""
import contextlib
import ctypes
import itertools
import os
import random
import socket
import subprocess
import threading

from support.procs import wait_until
from support.reaper import new_netns

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_nth = itertools.count(os.getpid())


def new_net():
    """A 10.233.N.0/30 of this process's own: N per process and relay,
    beside other tests' (test_kafka.py's are 10.231)."""
    return f"10.233.{next(_nth) % 256}"


def _run(*argv):
    subprocess.run(argv, check=True, timeout=30, capture_output=True)


def _gone(addr):
    """Until no link here has addr: a namespace deleted is freed by the
    kernel a moment later, with the veth end that had it."""
    wait_until(lambda: not subprocess.run(["ip", "-4", "-o", "addr", "show", "to", addr],
                                          capture_output=True, text=True,
                                          timeout=30).stdout.strip(),
               f"{addr} off the link of a namespace deleted before", timeout=10, every=0.05)


def _listen_in(ns, addr, port=0):
    """A listening TCP socket on addr:port (0: any) made inside ns, by a thread of its
    own (setns moves only the calling thread): this process stays here."""
    out = {}

    def make():
        here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        there = os.open(f"/run/netns/{ns}", os.O_RDONLY)
        try:
            if _libc.setns(there, CLONE_NEWNET):
                raise OSError(ctypes.get_errno(), "setns")
            try:
                s = socket.socket()
                s.bind((addr, port))
                s.listen(16)
                out["sock"] = s
            finally:
                _libc.setns(here, CLONE_NEWNET)
        except OSError as e:
            out["err"] = e
        finally:
            os.close(here)
            os.close(there)
    t = threading.Thread(target=make)
    t.start()
    t.join()
    if "err" in out:
        raise out["err"]
    return out["sock"]


def _pump(src, dst):
    try:
        while data := src.recv(1 << 16):
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


class NetnsDrop:
    def __init__(self, tag, upstream_port, net=None, port=0):
        self.upstream = upstream_port
        self.stack = contextlib.ExitStack()
        self.conns = []
        try:
            self.ns = self.stack.enter_context(new_netns(tag))
            if net:
                _gone(f"{net}.1")
            net = net or new_net()
            n = net.rsplit(".", 1)[1]
            here_end = f"nd{os.getpid() % 100000}-{n}-{random.randrange(100)}"
            self.addr = f"{net}.2"
            _run("ip", "link", "add", here_end, "type", "veth", "peer", "name", "eth0",
                 "netns", self.ns)
            _run("ip", "addr", "add", f"{net}.1/30", "dev", here_end)
            _run("ip", "link", "set", here_end, "up")
            _run("ip", "-n", self.ns, "addr", "add", f"{self.addr}/30", "dev", "eth0")
            _run("ip", "-n", self.ns, "link", "set", "eth0", "up")
            self.srv = _listen_in(self.ns, self.addr, port)
            self.stack.callback(self._stop_accepting)
            self.port = self.srv.getsockname()[1]
        except BaseException:
            self.stack.close()         # the namespace deleted takes the veth with it
            raise
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
                u = socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
            except OSError:
                if self.srv.fileno() < 0:
                    return
                with contextlib.suppress(NameError, OSError):
                    c.close()
                continue
            u.settimeout(None)
            self.conns += [c, u]
            threading.Thread(target=_pump, args=(c, u), daemon=True).start()
            threading.Thread(target=_pump, args=(u, c), daemon=True).start()

    def _stop_accepting(self):
        with contextlib.suppress(OSError):
            self.srv.shutdown(socket.SHUT_RDWR)     # wakes the accept (a close alone does not)
        self.srv.close()

    def drop(self):
        rules = (f"table inet chaos {{\n chain in {{\n type filter hook input priority 0\n"
                 f" tcp dport {self.port} drop\n }}\n}}\n")
        subprocess.run(["ip", "netns", "exec", self.ns, "nft", "-f", "-"], input=rules.encode(),
                       check=True, timeout=30, capture_output=True)

    def undrop(self):
        subprocess.run(["ip", "netns", "exec", self.ns, "nft", "delete", "table", "inet",
                        "chaos"], timeout=30, capture_output=True)

    def cut(self):
        """Every relayed connection closed (between cells)."""
        conns, self.conns = self.conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self):
        self.cut()
        self.stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
