"""The receiver end to end: real sockets on loopback, the real BPF balancer.

Each test sends a known number of datagrams and checks the summary's exact
counts and per-socket distribution (needs root: CI runs as root)."""
import json
import os
import socket
import threading
import statistics
import subprocess
import sys

import pytest

from support.load import send_udp
from support.paths import binary
from support.ports import free_udp_port
from support.procs import run_cmd

BIG = "32M"  # rcvbuf large enough that loopback bursts in these tests never drop


def per_socket(summary, key):
    return [s[key] for s in summary["sockets"]]


def assert_nothing_lost(summary, sent):
    t = summary["totals"]
    assert t["received"] == sent, t
    assert t["kernel_drops"]["total"] == 0, t
    assert t["written"] == sent, t
    assert sum(per_socket(summary, "received")) == sent


@pytest.mark.parametrize("sockets", [8, 32])
def test_random_spreads_one_flow_evenly(syslogrx, sockets):
    port = free_udp_port()
    rx = syslogrx("--sockets", str(sockets), "--threads", "2", "--balance", "random",
                  "--rcvbuf", BIG, port=port)
    sent = send_udp("127.0.0.1", port, 200_000, size=200)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    assert_nothing_lost(s, sent)
    got = per_socket(s, "received")
    mean = sent / sockets
    spread = max(abs(g - mean) / mean for g in got)
    print(f"random, {sockets} sockets: per-socket {got}, max deviation {spread:.2%}")
    assert spread < 0.10, got
    # The program's own steered counts are what the sockets received.
    assert per_socket(s, "steered") == got
    assert s["totals"]["selection_failures"] == 0
    assert len({x["cookie"] for x in s["sockets"]}) == sockets
    assert all(x["rcvbuf"] == 32 << 20 for x in s["sockets"])


def test_hash_puts_one_flow_on_one_socket(syslogrx):
    port = free_udp_port()
    rx = syslogrx("--sockets", "8", "--threads", "2", "--balance", "hash", "--rcvbuf", BIG, port=port)
    sent = send_udp("127.0.0.1", port, 20_000)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    assert_nothing_lost(s, sent)
    got = sorted(per_socket(s, "received"))
    assert got[-1] == sent and sum(got[:-1]) == 0, got
    # No program: nothing steered, nothing to fail. Null, not a made-up zero.
    assert per_socket(s, "steered") == [None] * 8
    assert s["totals"]["selection_failures"] is None


def test_hash_spreads_many_flows(syslogrx):
    """The kernel's hash is per 4-tuple: many source ports land on many sockets."""
    port = free_udp_port()
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "hash", "--rcvbuf", BIG, port=port)
    for _ in range(32):
        send_udp("127.0.0.1", port, 100)
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert_nothing_lost(rx.summary, 3200)
    assert sum(1 for g in per_socket(rx.summary, "received") if g) >= 2


def test_roundrobin_gives_exact_equal_shares(syslogrx):
    port = free_udp_port()
    rx = syslogrx("--sockets", "8", "--threads", "2", "--balance", "roundrobin",
                  "--rcvbuf", BIG, port=port)
    sent = send_udp("127.0.0.1", port, 80_000)
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert_nothing_lost(rx.summary, sent)
    assert per_socket(rx.summary, "received") == [10_000] * 8
    assert per_socket(rx.summary, "steered") == [10_000] * 8


# One sender pinned to a CPU: waits for a line on stdin so that both start
# together, sends COUNT datagrams, prints how many.
PINNED_SENDER = r"""
import socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
msg = b"<13>two cpus " + b"x" * 100
print("ready", flush=True)
sys.stdin.readline()
for _ in range(count):
    s.sendto(msg, ("127.0.0.1", port))
print(count, flush=True)
"""


def test_roundrobin_exact_with_senders_on_two_cpus(syslogrx):
    """Senders on CPU 0 and CPU 1 at once: loopback runs the reuseport
    program on the sender's CPU, so two copies of it pick sockets at the same
    time. One position shared by all CPUs (an atomic add) keeps the shares
    exactly equal; a per-CPU or unlocked position does not. 300,000 each:
    an unlocked position loses an update only when both copies run in the
    same few instructions; with 100,000 each, `make mutants` on a machine
    at load 10 saw the shares come out equal (the senders seldom ran at
    once) in 2 runs of 3."""
    if len(os.sched_getaffinity(0) & {0, 1}) < 2:
        pytest.skip("needs CPUs 0 and 1")
    port = free_udp_port()
    rx = syslogrx("--sockets", "8", "--threads", "2", "--balance", "roundrobin",
                  "--rcvbuf", BIG, port=port)
    per_sender = 300_000
    senders = [subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c",
                                 PINNED_SENDER, str(port), str(per_sender)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for cpu in (0, 1)]
    try:
        for p in senders:
            assert p.stdout.readline().strip() == "ready"
        for p in senders:
            p.stdin.write("go\n")
            p.stdin.flush()
        sent = sum(int(p.communicate(timeout=120)[0].strip()) for p in senders)
    finally:
        for p in senders:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert sent == 2 * per_sender
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert_nothing_lost(rx.summary, sent)
    assert per_socket(rx.summary, "steered") == [sent // 8] * 8
    assert per_socket(rx.summary, "received") == [sent // 8] * 8


def test_ipv6(syslogrx):
    port = free_udp_port(socket.AF_INET6)
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "roundrobin",
                  "--rcvbuf", BIG, listen=f"[::1]:{port}")
    sent = send_udp("::1", port, 20_000, family=socket.AF_INET6)
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert rx.summary["listen"] == f"[::1]:{port}"
    assert_nothing_lost(rx.summary, sent)
    assert per_socket(rx.summary, "received") == [5_000] * 4


def test_one_thread_per_socket_and_one_thread_many_sockets(syslogrx):
    """Both worker loops: blocking recvmmsg (one socket) and epoll (several)."""
    for sockets, threads in ((2, 2), (6, 1)):
        port = free_udp_port()
        rx = syslogrx("--sockets", str(sockets), "--threads", str(threads),
                      "--balance", "roundrobin", "--rcvbuf", BIG, port=port)
        sent = send_udp("127.0.0.1", port, 12_000)
        rc, _, err = rx.stop()
        assert rc == 0, err
        assert_nothing_lost(rx.summary, sent)
        assert per_socket(rx.summary, "received") == [12_000 // sockets] * sockets


def test_file_output_is_byte_exact(syslogrx, tmp_path):
    port = free_udp_port()
    out = tmp_path / "out.log"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--output", f"file:{out}", port=port)
    msgs = [b"<13>one", b"<14>two\nlines", b"back\\slash", b"nul\x00byte", b"trailing\n"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert out.read_bytes() == (b"<13>one\n<14>two\\nlines\nback\\\\slash\nnul\\0byte\n"
                                b"trailing\\n\n")
    assert rx.summary["totals"]["written"] == 5


def mixed_sizes():
    """Datagrams whose sizes cross the receive slot both ways: runs of short
    ones, then long ones (up to IPv4's largest, 65507) among them, then short
    again; each says its index and is filled with a letter (nothing raw
    escapes)."""
    sizes = [100] * 150 + [1000, 2047, 2048, 2049, 3000, 65507, 9000, 300, 40000, 5] * 8 \
        + [257, 256, 255] * 100 + [1500] * 100
    msgs = []
    for i, n in enumerate(sizes):
        head = b"<13>m%06d " % i
        msgs.append((head + bytes([97 + i % 26]) * n)[:n] if n >= len(head) else b"x" * n)
    return msgs


class TcpSink:
    """A TCP server that keeps every byte of its one connection: the
    destination a disk buffer needs, read back frame by frame."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]
        self.data = bytearray()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        conn, _ = self.srv.accept()
        with conn:
            while chunk := conn.recv(1 << 20):
                self.data += chunk

    def frames(self):
        """RFC 6587 octet counting: LEN SP MSG, back to back."""
        self.t.join(30)
        assert not self.t.is_alive(), "the receiver did not close its connection"
        self.srv.close()
        out, d = [], bytes(self.data)
        while d:
            n, _, d = d.partition(b" ")
            out.append(d[:int(n)])
            d = d[int(n):]
        return out


@pytest.mark.parametrize("buffer", ["none", "reliable", "spill"])
def test_every_size_arrives_byte_exact(syslogrx, tmp_path, buffer):
    """Datagrams are received straight into the batch's slots, a longer one
    moved past them: what reaches the output, through the window or the disk
    buffer's records and hand-off, is each datagram, whole, in order."""
    port = free_udp_port()
    args = ["--sockets", "1", "--threads", "1", "--rcvbuf", BIG]
    if buffer == "none":
        out = tmp_path / "out.log"
        args += ["--output", f"file:{out}"]
    else:
        sink = TcpSink()
        args += ["--output", f"tcp:127.0.0.1:{sink.port}",
                 "--disk-buffer", str(tmp_path / "buf"), "--disk-buffer-mode", buffer]
    rx = syslogrx(*args, port=port, sequences=False)
    msgs = mixed_sizes()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert rx.summary["totals"]["written"] == len(msgs)
    if buffer == "none":
        got = out.read_bytes().split(b"\n")
        assert got[-1] == b""
        got = got[:-1]
    else:
        got = sink.frames()
    assert got == msgs


@pytest.mark.parametrize("json_raw", [False, True])
def test_json_carries_the_message_once(syslogrx, tmp_path, json_raw):
    """json by default: the text once, as msg (raw only for a malformed
    datagram, its only copy); --json-raw adds the whole datagram to every
    line. Judged by Python's JSON and UTF-8 decoders."""
    port = free_udp_port()
    out = tmp_path / "out.json"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--format", "json", "--output",
                  f"file:{out}", *(["--json-raw"] if json_raw else []), port=port)
    msgs = [b"<13>1 2026-11-22T03:12:00Z host app 7 - - caf\xc3\xa9 \"quoted\"",
            b"<14>Oct 11 22:14:15 host app[7]: tab\there", b"<999>malformed"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))
    rc, _, err = rx.stop()
    assert rc == 0, err
    objs = [json.loads(l.decode("utf-8")) for l in out.read_bytes().splitlines()]
    assert [o.get("msg") for o in objs] == ["caf\u00e9 \"quoted\"", "tab\there", None]
    assert [o["malformed"] for o in objs] == [False, False, True]
    want_raw = [m.decode() for m in msgs] if json_raw else [None, None, msgs[2].decode()]
    assert [o.get("raw") for o in objs] == want_raw
    assert list(objs[0])[-1] == ("raw" if json_raw else "received")


@pytest.mark.parametrize("fmt,output", [("raw", "file"), ("raw", "null"), ("json", "null"),
                                        ("json", "file"), ("rfc5424", "file")])
def test_malformed_is_counted_only_where_the_output_parses(syslogrx, tmp_path, fmt, output):
    """Raw lines and null output need no field: nothing is parsed and
    totals.malformed is null; json and rfc5424 into a file parse every
    message and count exactly the malformed ones: a bad PRI and an empty
    datagram ("<13>1 broken" is RFC 3164 as syslog-ng reads it)."""
    port = free_udp_port()
    out = tmp_path / "out.log"
    dest = f"file:{out}" if output == "file" else "null"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--format", fmt, "--output", dest,
                  port=port)
    msgs = [b"<13>fine", b"<999>bad pri", b"<1a>x", b"", b"<13>1 broken", b"no pri at all"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))
    rc, _, err = rx.stop()
    assert rc == 0, err
    t = rx.summary["totals"]
    assert t["received"] == t["written"] == len(msgs)
    parses = fmt != "raw" and output != "null"
    assert t["malformed"] == (3 if parses else None)
    if fmt == "raw" and output == "file":
        assert out.read_bytes() == b"".join(m + b"\n" for m in msgs)


def test_duration_ends_by_itself(tmp_path):
    port = free_udp_port()
    summary = tmp_path / "s.json"
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--duration", "0.5",
                 "--summary", str(summary)], timeout=20)
    assert r.returncode == 0, r.stderr
    assert summary.exists()


# ---- errors a user meets: one clear line, exit 2 ---------------------------------

def test_port_in_use_is_named(tmp_path):
    port = free_udp_port()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", port))
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--duration", "1"])
    assert r.returncode == 2
    assert f"127.0.0.1:{port}" in r.stderr and "in use" in r.stderr


def test_foreign_reuseport_socket_is_refused(tmp_path):
    """A same-user SO_REUSEPORT socket on the port would join our group."""
    port = free_udp_port()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind(("127.0.0.1", port))
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--duration", "1"])
    assert r.returncode == 2
    assert "other socket(s) already bound" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--listen", "localhost:x"], "--listen localhost:x"),
    (["--listen", "256.1.1.1:514"], "--listen 256.1.1.1:514"),
    (["--listen", "192.0.2.1:5514", "--no-trace"], "no such local address"),
    (["--sockets", "2", "--threads", "4"], "--threads 4 is more than --sockets 2"),
    (["--frobnicate"], "--frobnicate"),
    (["--rcvbuf", "lots"], "--rcvbuf lots"),
])
def test_bad_flags_are_named(args, needle):
    r = run_cmd([binary("syslogrx"), "--duration", "1"] + args)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2, r.stderr


def test_unprivileged_says_which_capability(tmp_path):
    port = free_udp_port()
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
    r = run_cmd(drop + [binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--duration", "1",
                        "--no-trace", "--balance", "roundrobin"])
    assert r.returncode == 1
    assert "CAP_BPF" in r.stderr and "--balance random" in r.stderr
    # hash with no tracer needs no privilege at all, nor does random.
    for policy in ("hash", "random"):
        r = run_cmd(drop + [binary("syslogrx"), "--listen", f"127.0.0.1:{port}",
                            "--duration", "0.3", "--no-trace", "--balance", policy])
        assert r.returncode == 0, r.stderr