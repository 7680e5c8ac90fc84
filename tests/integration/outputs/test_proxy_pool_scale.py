# SPDX-License-Identifier: MIT
"""--proxy-protocol's pool at scale: 100,000 forged sender addresses (in a
network namespace of the test's own) through a pool of 64 into Debian's
syslog-ng (proxied-tcp, SC4S's 2,000 connections). The pool never holds more
than its bound, its figures add up in the metrics, the receiver's memory
after 100,000 senders is what it was after 1,000 but for the input window
(docs/outputs.md: the pool's slots are allocated at start, and what is not
yet acknowledged is held in the window), and every forged message is
delivered, as its sender, or counted. The receiving end is syslog-ng
itself, not a server of the test's own: it takes about 1,500 connections a
second here, as fast as the pool opens them (a connection per message once
the senders outnumber the pool). 50 s alone, up to 130 s on a loaded host."""
from support.load import send_forged
from support.ports import free_tcp_port, free_udp_port
from support.procs import wait_until
from support.prom import scrape_in, series, value
from support.reaper import new_netns
from support.syslog_ng import SyslogNgProxied

POOL = 64
FIRST, SENDERS = 1000, 100_000
WINDOW_BYTES = 4 << 20
# docs/outputs.md's figure: RSS grows with neither the senders nor the
# connections, only with what the input window holds (bounded by
# --window-bytes), the pool's copies of it until acknowledged (no more
# bytes than that) and the allocator's slack
GROWTH = 2 * WINDOW_BYTES + (2 << 20)


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def test_100000_senders_through_a_pool_of_64(syslogrx, tmp_path):
    sport, mport, uport = free_tcp_port(), free_tcp_port(), free_udp_port()
    with new_netns("proxy") as ns:
        sng = SyslogNgProxied(tmp_path / "sng", sport, max_connections=2000, netns=ns).start()
        try:
            rx = syslogrx("--format", "original", "--proxy-protocol", "v1",
                          "--proxy-connections", str(POOL), "--sockets", "1", "--threads", "1",
                          "--rcvbuf", "64M", "--window-bytes", str(WINDOW_BYTES),
                          "--metrics", str(mport), "--output", f"tcp:127.0.0.1:{sport}",
                          port=uport, netns=ns, sequences=False)

            def settled(n):
                """Every datagram received is written and acknowledged."""
                m = scrape_in(ns, mport)
                got = sum(series(m, "syslogrx_socket_received_total").values())
                drops = sum(series(m, "syslogrx_socket_kernel_drops_total").values())
                return got + drops >= n and value(m, "syslogrx_written_total") == got and \
                    len(sng.lines()) >= got
            assert send_forged(uport, FIRST, netns=ns) == FIRST
            wait_until(lambda: settled(FIRST), f"{FIRST} senders' messages at syslog-ng",
                       timeout=180)
            before = rss(rx.p.pid)
            assert send_forged(uport, SENDERS, netns=ns) == SENDERS
            wait_until(lambda: settled(FIRST + SENDERS), "every message at syslog-ng",
                       timeout=180)
            after = rss(rx.p.pid)
            m = scrape_in(ns, mport)
            closes = sum(value(m, "syslogrx_proxy_closes_total", reason=r)
                         for r in ("idle", "full", "lost", "stop"))
            opens, open_now = value(m, "syslogrx_proxy_opens_total"), \
                value(m, "syslogrx_proxy_connections")
            peak = value(m, "syslogrx_proxy_connections_peak")
            rc, _, err = rx.stop()
            assert rc == 0, err
            recs = sng.records()
        finally:
            sng.stop()
    print(f"RSS after {FIRST} senders {before >> 10} KiB, after {SENDERS} more "
          f"{after >> 10} KiB; opened {opens}")
    assert peak <= POOL and open_now <= POOL
    assert opens == open_now + closes
    assert after - before <= GROWTH, (before, after)
    t = rx.summary["totals"]
    drops = t["kernel_drops"]["total"] + t["no_socket_drops"]["total"]
    assert t["received"] + drops + t["abandoned"] == FIRST + SENDERS, t
    assert t["written"] == t["received"] == len(recs), t
    # each arrived as its sender: the forger's addresses, the first 1,000 twice
    seen = {}
    for r in recs:
        seen[r[0]] = seen.get(r[0], 0) + 1
    want = {"127.%d.%d.%d" % (1 + (i >> 16), (i >> 8) & 255, i & 255) for i in range(SENDERS)}
    assert set(seen) <= want
    assert len(recs) == sum(seen.values())
    assert sum(1 for a, c in seen.items() if c > 1 + (a in first_addrs())) == 0
    p = rx.summary["proxy"]
    assert p["connections_peak"] <= POOL and p["connections"] == 0
    assert p["opened"] == sum(p["closed"].values())


def first_addrs():
    return {"127.1.%d.%d" % (i >> 8, i & 255) for i in range(FIRST)}
