"""syslogrx's own drop accounting, exact: a load it cannot take (small rcvbuf,
a slow worker), and every drop traced per socket, equal to the kernel's two
per-socket counters, with sent == received + traced drops to the message."""
import socket
import subprocess
import time
import uuid

import pytest

from conftest import binary, netns_name, free_udp_port, run_cmd, sysloggen


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
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "random", "--rcvbuf", "64K",
                  "--cost-ns", "20000", "--stats-interval", "0.5", listen=listen, netns=netns)
    argv = [binary("sysloggen"), "--target", f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
            "--count", str(count), "--rate", "200000", "--size", "200", "--json"]
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    r = run_cmd(argv, timeout=60)
    assert r.returncode == 0, r.stderr
    import json
    sent = json.loads(r.stdout.splitlines()[-1])["datagrams"]   # messages + end markers
    time.sleep(1.5)            # the slow workers empty their queues
    kernel = proc_net_udp_drops(port, netns)
    rc, _, err = rx.stop()
    assert rc == 0, err
    return rx.summary, sent, kernel, err


def check_exact(s, sent, kernel):
    t = s["totals"]
    drops = t["kernel_drops"]["total"]
    assert drops > sent * 0.2, "the load must be more than the receiver takes"
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
    # The periodic stats line names each socket's interval counts.
    assert "stats:" in err and " s3 rx=" in err


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
