"""udpbalance on a SO_REUSEPORT group the test owns: a Python receiver with 4
sockets on one port counting what each socket gets.

One flow (one source socket): the kernel's hash sends it all to one socket;
with udpbalance --policy random every socket gets its share and the steered
counts equal what each socket received; after udpbalance exits the hash is
back. Groups it cannot take whole are refused with the reason."""
import json
import signal
import socket
import sys
import time

from support.load import send_udp
from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import Proc, run_cmd

# The receiver: sockets on one port; SIGUSR1 prints the counts per inode so
# far, SIGTERM prints them and exits. argv: port, then one family per socket
# ("4" or "6"), then "reuse" or "noreuse", then optionally the index of a
# socket never read (a receiver that stalls on one socket).
RECEIVER = r"""
import json, os, select, signal, socket, sys
port = int(sys.argv[1]); fams = sys.argv[2].split(","); reuse = sys.argv[3] == "reuse"
unread = int(sys.argv[4]) if len(sys.argv) > 4 else -1
socks = []
for fam in fams:
    s = socket.socket(socket.AF_INET6 if fam == "6" else socket.AF_INET, socket.SOCK_DGRAM)
    if reuse:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("::1" if fam == "6" else "127.0.0.1", port))
    s.setblocking(False)
    socks.append(s)
inodes = [os.fstat(s.fileno()).st_ino for s in socks]
counts = [0] * len(socks)
flags = {"report": False, "stop": False}
signal.signal(signal.SIGUSR1, lambda *a: flags.__setitem__("report", True))
signal.signal(signal.SIGTERM, lambda *a: flags.__setitem__("stop", True))
print(json.dumps({"inodes": inodes}), flush=True)
while True:
    try:
        ready, _, _ = select.select([s for i, s in enumerate(socks) if i != unread], [], [], 0.05)
    except InterruptedError:
        ready = []
    for s in ready:
        i = socks.index(s)
        while True:
            try:
                s.recv(65536)
            except BlockingIOError:
                break
            counts[i] += 1
    if flags["report"] or flags["stop"]:
        flags["report"] = False
        print(json.dumps({"counts": dict(zip(map(str, inodes), counts))}), flush=True)
    if flags["stop"]:
        break
"""


class Receiver(Proc):
    def __init__(self, port, families=("4",) * 4, reuse=True, unread=None):
        super().__init__([sys.executable, "-c", RECEIVER, str(port), ",".join(families),
                          "reuse" if reuse else "noreuse"]
                         + ([str(unread)] if unread is not None else []))
        self.inodes = json.loads(self.p.stdout.readline())["inodes"]

    def counts(self):
        self.p.send_signal(signal.SIGUSR1)
        return {int(k): v for k, v in json.loads(self.p.stdout.readline())["counts"].items()}

    def wait_total(self, total, timeout=20.0):
        """Counts once `total` datagrams have arrived (bounded wait)."""
        deadline = time.monotonic() + timeout
        while True:
            c = self.counts()
            if sum(c.values()) >= total or time.monotonic() > deadline:
                return c
            time.sleep(0.05)


def delta(after, before):
    return {k: after[k] - before.get(k, 0) for k in after}


def udpbalance(pid, port, *extra):
    return [binary("udpbalance"), "--pid", str(pid), "--port", str(port), *extra]


def test_random_spreads_one_flow_and_detach_brings_the_hash_back(procs):
    port = free_udp_port()
    rx = Receiver(port)
    procs.append(rx)
    wait_for_udp_port(port, count=4)

    # Before: the kernel's hash puts one flow on one socket.
    send_udp("127.0.0.1", port, 2000, size=200, rate=20000)
    before = rx.wait_total(2000)
    assert sorted(before.values()) == [0, 0, 0, 2000]

    ub = Proc(udpbalance(rx.p.pid, port, "--policy", "random", "--json", "--interval", "0.2"))
    procs.append(ub)
    line = ub.p.stderr.readline().decode()
    assert "attached: random over 4 sockets" in line, line

    n = 8000
    send_udp("127.0.0.1", port, n, size=200, rate=20000)
    during = delta(rx.wait_total(2000 + n), before)
    rc, out, err = ub.stop()
    assert rc == 0, err
    assert "detached: the kernel's hash is back" in err

    # Every message arrived, and each socket got its share (mean 2000; 10% is
    # five standard deviations of a fair 1-in-4 draw).
    assert sum(during.values()) == n
    for inode, got in during.items():
        assert abs(got - n / 4) <= 0.1 * n / 4, during

    reports = [json.loads(x) for x in out.splitlines()]
    final = reports[-1]
    assert final["final"] is True and all(not r["final"] for r in reports[:-1])
    steered = {s["inode"]: s["steered"] for s in final["sockets"]}
    assert steered == during
    assert final["selection_failures"] == 0
    assert {s["inode"] for s in final["sockets"]} == set(rx.inodes)
    # Cookies are the kernel's: distinct and non-zero.
    cookies = [s["cookie"] for s in final["sockets"]]
    assert len(set(cookies)) == 4 and 0 not in cookies

    # After: the hash is back, one flow on one socket again.
    send_udp("127.0.0.1", port, 2000, size=200, rate=20000)
    after = delta(rx.wait_total(2000 + n + 2000), rx_counts_sum(before, during))
    assert sorted(after.values()) == [0, 0, 0, 2000]
    rx.stop()


def rx_counts_sum(a, b):
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


def test_leastloaded_steers_away_from_a_socket_nobody_reads(procs):
    """One socket of four is never read: random keeps sending it a quarter,
    leastloaded only what it takes for its queue to be the longest."""
    port = free_udp_port()
    rx = Receiver(port, unread=0)
    procs.append(rx)
    wait_for_udp_port(port, count=4)
    ub = Proc(udpbalance(rx.p.pid, port, "--policy", "leastloaded", "--json", "--interval", "0.2"))
    procs.append(ub)
    line = ub.p.stderr.readline().decode()
    assert "attached: leastloaded over 4 sockets" in line, line

    n = 8000
    send_udp("127.0.0.1", port, n, size=200, rate=20000)
    # The unread socket's datagrams are counted by the steered counts only.
    deadline = time.monotonic() + 20
    while True:
        rc = ub.p.poll()
        assert rc is None
        got = rx.counts()
        if sum(got.values()) >= n - 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    rc, out, err = ub.stop()
    assert rc == 0, err
    final = json.loads(out.splitlines()[-1])
    steered = {s["inode"]: s["steered"] for s in final["sockets"]}
    assert final["selection_failures"] == 0
    assert sum(steered.values()) == n
    unread = rx.inodes[0]
    # Random would put n/4 = 2000 there; the queue tracking stops it early.
    assert steered[unread] < 0.05 * n, steered
    for inode in rx.inodes[1:]:
        assert steered[inode] == got[inode], (steered, got)
    rx.stop()

    r = run_cmd(udpbalance(rx.p.pid, port, "--policy", "leastloaded", "--keep"))
    assert r.returncode == 2
    assert "--keep cannot be used with --policy leastloaded" in r.stderr, r.stderr


def test_keep_leaves_the_program_attached(procs):
    port = free_udp_port()
    rx = Receiver(port)
    procs.append(rx)
    wait_for_udp_port(port, count=4)
    r = run_cmd(udpbalance(rx.p.pid, port, "--policy", "roundrobin", "--keep", "--count", "1",
                           "--interval", "0.1", "--json"))
    assert r.returncode == 0, r.stderr
    assert "left attached (--keep)" in r.stderr
    # Round robin from the program, still there after udpbalance exited:
    # 400 datagrams of one flow, exactly 100 per socket.
    send_udp("127.0.0.1", port, 400, size=100, rate=20000)
    counts = rx.wait_total(400)
    assert sorted(counts.values()) == [100, 100, 100, 100]
    rx.stop()


def test_refuses_a_port_shared_with_another_process(procs):
    port = free_udp_port()
    a = Receiver(port, families=("4",) * 2)
    procs.append(a)
    b = Receiver(port, families=("4",))
    procs.append(b)
    wait_for_udp_port(port, count=3)
    r = run_cmd(udpbalance(a.p.pid, port, "--policy", "random"))
    assert r.returncode != 0
    assert f"refusing port {port}: it also has sockets of other processes: pid {b.p.pid} " \
        in r.stderr, r.stderr
    # Nothing was attached: one flow still goes to one socket of the three.
    send_udp("127.0.0.1", port, 300, size=100)
    deadline = time.monotonic() + 20
    while True:
        ca, cb = a.counts(), b.counts()
        if sum(ca.values()) + sum(cb.values()) >= 300 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert sorted(list(ca.values()) + list(cb.values())) == [0, 0, 300]
    a.stop()
    b.stop()


def test_refuses_what_is_not_one_reuseport_group(procs):
    # A socket without SO_REUSEPORT.
    port = free_udp_port()
    rx = Receiver(port, families=("4",), reuse=False)
    procs.append(rx)
    wait_for_udp_port(port)
    r = run_cmd(udpbalance(rx.p.pid, port, "--policy", "random"))
    assert r.returncode != 0
    assert "has no SO_REUSEPORT: it is not in a reuseport group" in r.stderr, r.stderr
    rx.stop()

    # IPv4 and IPv6 sockets on one port: two groups.
    port = free_udp_port()
    rx = Receiver(port, families=("4", "4", "6", "6"))
    procs.append(rx)
    wait_for_udp_port(port, count=4)
    r = run_cmd(udpbalance(rx.p.pid, port, "--policy", "random"))
    assert r.returncode != 0
    assert "has both IPv4 (127.0.0.1:%d) and IPv6 ([::1]:%d) sockets" % (port, port) in r.stderr
    rx.stop()

    # No socket on the port at all.
    rx = Receiver(free_udp_port(), families=("4",))
    procs.append(rx)
    other = free_udp_port()
    r = run_cmd(udpbalance(rx.p.pid, other, "--policy", "random"))
    assert r.returncode != 0
    assert f"has no UDP socket on port {other}" in r.stderr, r.stderr
    rx.stop()


def test_bad_flags_exit_2():
    for argv, text in ((["--pid", "x", "--port", "1", "--policy", "random"], "--pid"),
                       (["--pid", "1", "--port", "70000", "--policy", "random"], "--port"),
                       (["--pid", "1", "--port", "1", "--policy", "hash"], "--policy"),
                       (["--pid", "1", "--port", "1"], "required")):
        r = run_cmd([binary("udpbalance")] + argv)
        assert r.returncode == 2, (argv, r.stderr)
        assert text in r.stderr


def test_attaches_again_right_after_a_previous_run(procs):
    """A socket leaves a sockarray only when the old map is freed (after an
    RCU grace period): a second udpbalance started at once must still take
    the group, waiting out the moment the kernel says EBUSY."""
    port = free_udp_port()
    rx = Receiver(port)
    procs.append(rx)
    wait_for_udp_port(port, count=4)
    for run in range(3):
        ub = Proc(udpbalance(rx.p.pid, port, "--policy", "roundrobin", "--interval", "0.2"))
        procs.append(ub)
        line = ub.p.stderr.readline().decode()
        assert "attached: roundrobin over 4 sockets" in line, (run, line)
        rc, _, err = ub.stop()
        assert rc == 0, err
    rx.stop()
