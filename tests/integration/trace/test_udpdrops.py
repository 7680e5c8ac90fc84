"""udpdrops as an operator runs it: owners, per-socket drops, no-socket drops, flags."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid

import pytest

from support.load import send_udp
from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import Proc, wait_until
from support.reaper import netns_name, new_netns
from support.udpdrops import finish, proc_drops, start_receiver, start_udpdrops


def test_owner_and_cookie(procs):
    recv, hello = start_receiver(procs, n=2)
    ud = start_udpdrops(procs, "--port", str(hello["port"]), "--json",
                        "--interval", "0.2", "--count", "2")
    rc, out, err = finish(ud)
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    report = json.loads(lines[-1])
    rows = sorted(report["sockets"], key=lambda r: r["inode"])
    want = sorted(hello["socks"], key=lambda s: s["inode"])
    assert [r["inode"] for r in rows] == [s["inode"] for s in want]
    for row, sock in zip(rows, want):
        assert row["pid"] == hello["pid"]
        assert row["comm"] == "python3"
        assert row["local"] == f"127.0.0.1:{hello['port']}"
        assert row["cookie"] == sock["cookie"]
        assert row["rcvbuf"] == sock["rcvbuf"]
        assert row["queued"] == 0
        assert row["drops"] == {"total": 0}
    assert report["no_socket"] == {}
    assert isinstance(report["time"], float) and abs(report["time"] - time.time()) < 60


def test_text_table_drops_equal_proc(procs):
    recv, hello = start_receiver(procs, n=1)
    port, inode = hello["port"], hello["socks"][0]["inode"]
    ud = start_udpdrops(procs, "--port", str(port), "--interval", "0.3", "--count", "60")
    send_udp("127.0.0.1", port, 3000)
    want = proc_drops(inode)
    assert want > 1000, "a 4 KiB queue that nobody reads must drop most of 3000"

    # Rows of the text table: PID COMM LOCAL INODE COOKIE RCVBUF QUEUED HWM DROPS REASONS
    deadline = time.monotonic() + 20
    row = None
    while time.monotonic() < deadline:
        line = ud.p.stdout.readline().decode()
        assert line, "udpdrops ended early"
        if "since udpdrops started" in line:
            assert "DROPS" in line
            continue
        f = line.split()
        if len(f) == 10 and f[3] == str(inode) and int(f[8]) == want:
            row = f
            break
    assert row, f"no table row with {want} drops for inode {inode}"
    assert row[0] == str(hello["pid"]) and row[1] == "python3"
    assert row[2] == f"127.0.0.1:{port}"
    assert row[4] == str(hello["socks"][0]["cookie"])
    assert row[9] == f"SOCKET_RCVBUFF:{want}"
    assert ud.stop()[0] == 0


def test_no_socket_drops_per_port(procs):
    port = free_udp_port()
    ud = start_udpdrops(procs, "--port", str(port), "--json", "--interval", "0.3",
                        "--count", "60")
    send_udp("127.0.0.1", port, 37)
    send_udp("::1", port, 5, family=socket.AF_INET6)
    sent_at = time.time()
    while True:
        report = json.loads(ud.p.stdout.readline())
        if report["time"] > sent_at:
            break
    assert report["no_socket"] == {str(port): {"NO_SOCKET": 42}}
    assert report["sockets"] == []
    assert ud.stop()[0] == 0


def test_pid_filter(procs):
    a, hello_a = start_receiver(procs, n=1)
    b, hello_b = start_receiver(procs, n=1)
    ud = start_udpdrops(procs, "--pid", str(hello_a["pid"]), "--json", "--interval", "0.2",
                        "--count", "1")
    rc, out, err = finish(ud)
    assert rc == 0, err
    report = json.loads(out)
    assert [r["inode"] for r in report["sockets"]] == [hello_a["socks"][0]["inode"]]
    assert report["sockets"][0]["pid"] == hello_a["pid"]


def test_count_respected(procs):
    ud = start_udpdrops(procs, "--port", str(free_udp_port()), "--json",
                        "--interval", "0.1", "--count", "3")
    rc, out, err = finish(ud)
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 3
    times = [json.loads(l)["time"] for l in lines]
    assert times == sorted(times)


@pytest.mark.parametrize("argv, flag", [
    (["--interval", "abc"], "--interval"),
    (["--port", "70000"], "--port"),
    (["--count", "0"], "--count"),
    (["--pid", "-3"], "--pid"),
    (["--bogus"], "--bogus"),
])
def test_bad_flag_exits_2(argv, flag):
    r = subprocess.run([binary("udpdrops")] + argv, capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert flag in r.stderr.splitlines()[0]
    assert r.stdout == ""


def test_unprivileged_names_capabilities():
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "--inh-caps=-all", binary("udpdrops"), "--count", "1"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1
    assert "CAP_BPF" in r.stderr and "CAP_PERFMON" in r.stderr
    assert r.stdout == ""


def test_netns_filter(procs):
    """Drops in another namespace are not counted by a udpdrops outside it."""
    ns = netns_name("udpdrops-" + uuid.uuid4().hex[:8])
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        port = free_udp_port()
        inside = start_udpdrops(procs, "--port", str(port), "--json", "--interval", "0.2",
                                "--count", "60", prefix=["ip", "netns", "exec", ns])
        outside = start_udpdrops(procs, "--port", str(port), "--json", "--interval", "0.2",
                                 "--count", "60")
        subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                        "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                        f"[s.sendto(b'x', ('127.0.0.1', {port})) for _ in range(11)]"],
                       check=True, timeout=30)
        sent_at = time.time()
        reports = {}
        for name, ud in (("inside", inside), ("outside", outside)):
            while True:
                report = json.loads(ud.p.stdout.readline())
                if report["time"] > sent_at:
                    reports[name] = report
                    break
        assert reports["inside"]["no_socket"] == {str(port): {"NO_SOCKET": 11}}
        assert reports["outside"]["no_socket"] == {}
        assert inside.stop()[0] == 0 and outside.stop()[0] == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


# Two sockets of one reuseport group with room for everything sent (4 MiB),
# reading nothing until asked. Socket 0 has a classic BPF socket filter that
# drops every datagram (SO_ATTACH_FILTER, "ret #0"): the kernel counts those
# as SOCKET_FILTER drops of socket 0. Each line on stdin: socket 1 is read
# dry and the number read so far is printed.
FILTERED_RECEIVER = r"""
import ctypes, json, os, socket, struct, sys
port = int(sys.argv[1])
socks = []
for i in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("127.0.0.1", port))
    port = s.getsockname()[1]
    socks.append(s)
prog = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0))  # BPF_RET|BPF_K 0
socks[0].setsockopt(socket.SOL_SOCKET, 26, struct.pack("HL", 1, ctypes.addressof(prog)))
socks[1].setblocking(False)
print(json.dumps({"port": port, "inodes": [os.fstat(s.fileno()).st_ino for s in socks]}),
      flush=True)
read = 0
for _ in sys.stdin:
    while True:
        try:
            socks[1].recv(65536)
            read += 1
        except BlockingIOError:
            break
    print(read, flush=True)
"""


def test_socket_filter_drops_are_attributed_per_socket(procs):
    """A socket filter's drops (SOCKET_FILTER) belong to the socket whose
    filter dropped them, under that reason, exactly as many as the kernel's
    own counter says; the group's other socket has none and nothing is "no
    socket". Sent from 64 source ports so that the kernel's hash gives both
    sockets some: filtered + read on the other = sent."""
    recv = Proc([sys.executable, "-c", FILTERED_RECEIVER, "0"], stdin=subprocess.PIPE)
    procs.append(recv)
    hello = json.loads(recv.p.stdout.readline())
    port, (inode0, inode1) = hello["port"], hello["inodes"]
    ud = start_udpdrops(procs, "--port", str(port), "--json", "--interval", "0.2",
                        "--count", "300")
    sent = 0
    for _ in range(64):
        sent += send_udp("127.0.0.1", port, 10)

    def read_on_1():
        recv.p.stdin.write(b"\n")
        recv.p.stdin.flush()
        return int(recv.p.stdout.readline())

    def all_accounted():
        n = read_on_1()
        return (n, proc_drops(inode0)) if n + proc_drops(inode0) == sent else None

    read1, filtered = wait_until(all_accounted, "filtered + read == sent")
    assert filtered > 0 and read1 > 0, (filtered, read1)
    assert proc_drops(inode1) == 0

    def report_with_the_drops():
        report = json.loads(ud.p.stdout.readline())
        rows = {r["inode"]: r for r in report["sockets"]}
        return report if rows[inode0]["drops"]["total"] == filtered else None

    report = wait_until(report_with_the_drops, "udpdrops counting the filter's drops")
    rows = {r["inode"]: r for r in report["sockets"]}
    assert rows[inode0]["drops"] == {"total": filtered, "SOCKET_FILTER": filtered}
    assert rows[inode1]["drops"] == {"total": 0}
    assert report["no_socket"] == {}
    assert ud.stop()[0] == 0


def test_a_full_drop_map_is_counted_never_grown(procs):
    """security.md: "The tracer's maps have a fixed size (16,384 entries per
    drop-count map; a full map is counted in `totals.tracer_map_full`, never
    grown)." syslogrx's tracer watches its own port only, so no sender can
    fill its maps; udpdrops loads the same tracer for every port. In a
    namespace of the test's own, one datagram to each of 17,000 ports that
    no socket holds: 16,384 ports are counted, each once, and the other 616
    drops are counted full (`map_full`), every drop accounted for."""
    ports = range(20000, 37000)
    with new_netns("mapfull") as ns:
        # --count: an upper bound only (10 minutes); the loop below ends it.
        ud = start_udpdrops(procs, "--json", "--interval", "0.1", "--count", "6000",
                            prefix=["ip", "netns", "exec", ns])
        # In batches of 500, each counted before the next: a loaded host
        # defers loopback's softirq to ksoftirqd, and a burst of 17,000 then
        # overflows the backlog (1,000 by default), dropped before UDP sees
        # a port. The backlog is the CPU's, shared with every other test's
        # loopback load: a datagram it drops never reaches UDP, so after 5 s
        # with no count moving it is sent again (a port the map lacks; past
        # the map, as many as map_full lacks), at most 5 times a batch.
        report = None

        def send(ps):
            subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                            f"[s.sendto(b'x', ('127.0.0.1', p)) for p in {list(ps)!r}]"],
                           check=True, timeout=60)

        def counted(r):
            return sum(sum(v.values()) for v in r["no_socket"].values()) + r["map_full"]

        for start in range(ports.start, ports.stop, 500):
            stop = min(start + 500, ports.stop)
            send(range(start, stop))
            resent, last, moved = 0, -1, time.monotonic()
            while True:
                line = ud.p.stdout.readline()
                assert line, f"udpdrops ended before ports below {stop} were counted: {report}"
                report = json.loads(line)
                n = counted(report)
                if n >= stop - ports.start:
                    break
                if n != last:
                    last, moved = n, time.monotonic()
                elif time.monotonic() - moved > 5:
                    assert resent < 5, f"ports below {stop}: {n} counted after 5 resends"
                    lost = [q for q in range(start, stop) if str(q) not in report["no_socket"]]
                    send(lost[-(stop - ports.start - n):] if report["map_full"] else lost)
                    resent, moved = resent + 1, time.monotonic()
        assert ud.stop()[0] == 0
    assert all(r == {"NO_SOCKET": 1} for r in report["no_socket"].values())
    assert {int(p) for p in report["no_socket"]} <= set(ports)
    assert len(report["no_socket"]) == 16384
    assert report["map_full"] == len(ports) - 16384
