"""syslogrx's own drop accounting, exact: a burst into a held receiver (small
rcvbuf, stopped while the burst comes), and every drop traced per socket,
equal to the kernel's two per-socket counters, with sent == received + traced
drops to the message."""
import json
import os
import re
import signal
import socket
import subprocess
import uuid

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_queues_empty
from support.procs import log_text, run_cmd, sysloggen
from support.reaper import netns_name


def proc_net_udp_drops(port, netns=None):
    """{inode: drops} for the sockets bound to port, from /proc/net/udp{,6}."""
    cat = ["cat", "/proc/net/udp", "/proc/net/udp6"]
    if netns:
        cat = ["ip", "netns", "exec", netns] + cat
    rows = {}
    for line in subprocess.run(cat, capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) < 13 or f[0] == "sl":
            continue
        if int(f[1].rsplit(":", 1)[1], 16) == port:
            rows[int(f[9])] = int(f[12])
    return rows


def overload(syslogrx, listen, host, port, netns=None, count=60_000):
    """A burst into a held receiver: syslogrx is stopped (SIGSTOP) while
    sysloggen sends, so its four 64K queues keep what fits and the kernel
    drops the rest, however fast this machine is. Then it goes on, reads
    its queues empty (the event waited for), and stops."""
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "random", "--rcvbuf", "64K",
                  "--cost-ns", "20000", "--stats-interval", "0.1", listen=listen, netns=netns)
    # The first stats line: the main loop runs (what is read here is kept
    # for stop()'s stderr).
    while "stats:" not in rx.early_err:
        line = rx.p.stderr.readline().decode()
        assert line, rx.early_err
        rx.early_err += line
    argv = [binary("sysloggen"), "--target", f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
            "--count", str(count), "--rate", "200000", "--size", "200", "--json",
            "--end-markers", "0"]
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    os.kill(rx.p.pid, signal.SIGSTOP)
    try:
        r = run_cmd(argv, timeout=60)
    finally:
        os.kill(rx.p.pid, signal.SIGCONT)
    assert r.returncode == 0, r.stderr
    g = json.loads(r.stdout.splitlines()[-1])
    wait_queues_empty(port, rx.p.pid)
    # Each flow's end marker (sysloggen's format), sent once the receiver
    # reads again, so the books close with the tail: missing = drops.
    markers = [f"<13>Nov 22 03:22:47 vm sysloggen[1]: seq@32473 run={g['run_id']} "
               f"flow={f['flow']} end={f['sent']} copies=1 x" for f in g["flows"]]
    script = ("import socket, sys\n"
              f"s = socket.socket(socket.{'AF_INET6' if ':' in host else 'AF_INET'}, "
              "socket.SOCK_DGRAM)\n"
              f"for m in sys.argv[1:]: s.sendto(m.encode(), ({host!r}, {port}))\n")
    cmd = ["python3", "-c", script] + markers
    run_cmd((["ip", "netns", "exec", netns] if netns else []) + cmd, timeout=30, check=True)
    wait_queues_empty(port, rx.p.pid)
    sent = g["datagrams"] + len(markers)
    kernel = proc_net_udp_drops(port, netns)
    rc, _, err = rx.stop()
    assert rc == 0, err
    return rx.summary, sent, kernel, err


def check_exact(s, sent, kernel):
    t = s["totals"]
    drops = t["kernel_drops"]["total"]
    # Held while the burst came: no more was received than the queues hold
    # (each datagram takes more than its 200 bytes of the buffer).
    assert t["received"] <= sum(sock["rcvbuf"] // 200 + 1 for sock in s["sockets"]), t
    assert t["received"] + drops == sent
    assert t["written"] == t["received"]
    assert t["kernel_drops_match_so_meminfo"] is True
    assert len(kernel) == 4
    for sock in s["sockets"]:
        traced = sock["kernel_drops"]["total"]
        assert traced == kernel[sock["inode"]] == sock["so_meminfo_drops"], sock
        assert traced == sum(v for k, v in sock["kernel_drops"].items() if k != "total")
        assert sock["queue_hwm_bytes"] > 0
        assert sock["queue_hwm_bytes"] <= sock["rcvbuf"] + 65536
    # Every drop here is a full receive buffer.
    assert t["kernel_drops"].get("SOCKET_RCVBUFF") == drops
    # The end markers close every flow: the missing messages (the tail
    # included) and the lost end markers are exactly the kernel's drops.
    assert s["loss"]["sequenced"] + s["loss"]["end_markers"] == t["received"]
    assert s["loss"]["missing"] + s["loss"]["end_markers_lost"] == drops
    assert s["loss"]["gaps_equal_kernel_drops"] is True


def test_exact_ipv4(syslogrx):
    port = free_udp_port()
    s, sent, kernel, err = overload(syslogrx, f"127.0.0.1:{port}", "127.0.0.1", port)
    check_exact(s, sent, kernel)
    # The periodic stats: one short line per listener, its busiest socket named.
    assert re.search(rf"stats: 127\.0\.0\.1:{port} [0-9.]+s rx \d+/s drop \d+ q \d+ B, "
                     r"4 sockets, busiest s[0-3] rx=\d+ drop=\d+ q=\d+\n", err), err
    # The exit line: the books as the summary and /proc/net/udp close them.
    assert [l for l in log_text(err).splitlines() if "books:" in l] == [
        f"syslogrx: books: received {sent - sum(kernel.values())}, written "
        f"{sent - sum(kernel.values())}, kernel drops {sum(kernel.values())}, abandoned 0, "
        "discarded 0"], err


def test_exact_ipv6(syslogrx):
    port = free_udp_port(socket.AF_INET6)
    s, sent, kernel, _ = overload(syslogrx, f"[::1]:{port}", "::1", port)
    check_exact(s, sent, kernel)


def test_exact_inside_a_network_namespace(syslogrx):
    ns = netns_name(f"drops-{uuid.uuid4().hex[:8]}")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"], check=True)
        port = 5514  # a fresh namespace: nothing else is bound there
        s, sent, kernel, _ = overload(syslogrx, f"127.0.0.1:{port}", "127.0.0.1", port, netns=ns)
        check_exact(s, sent, kernel)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
