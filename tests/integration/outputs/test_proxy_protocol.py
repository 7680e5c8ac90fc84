# SPDX-License-Identifier: MIT
"""--proxy-protocol v1|v2: a connection per sender, opened with a PROXY
header that names the sender and the listener, so that SC4S (its TCP source
with SC4S_SOURCE_PROXYCONNECT=yes) and syslog-ng's proxied-tcp see the
device, not syslogrx.

Judged by independent decoders: Debian's syslog-ng reads v1
(network(transport("proxied-tcp")): its PROXIED_SRCIP, PROXIED_SRCPORT,
PROXIED_DSTIP, PROXIED_DSTPORT), and Debian's haproxy reads v2
(accept-proxy) and hands the connection on to syslog-ng with the addresses
it decoded. The vendor corpus through --format original --proxy-protocol v1
reads, field by field, as syslog-ng reading the same datagrams directly over
UDP. The pool stays within --proxy-connections however many senders come,
and its figures add up."""
import fcntl
import os
import pathlib
import re
import shutil
import signal
import socket
import struct
import tempfile
import termios
import threading
import time

import pytest

from support import parse_oracle
from support.defaults import NOBODY
from support.books import check_books, run_load, summaries
from support.haproxy import HAProxy
from support.load import send_forged
from support.paths import binary
from support.ports import free_tcp_port, free_udp_port
from support.procs import run_cmd, wait_until
from support.reaper import new_netns
from support.prom import parse, scrape, scrape_in, series, value
from support.rx_watch import Receiver, SEQ, listen_for, wait_gone
from support.syslog_ng import SyslogNgProxied
from support.tls_server import Pki

SENDERS = ["127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14"]
PER_SENDER = 500


def send_flows(port, senders, n, rate=None):
    """n datagrams from each sender (flow i from senders[i], bound), in
    rounds, each with its sequence marker; rate: rounds a second, else as
    fast as the socket takes them."""
    socks = []
    try:
        for a in senders:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(s)
            s.bind((a, 0))
        start = time.monotonic()
        for seq in range(n):
            ahead = rate and seq / rate - (time.monotonic() - start)
            if ahead and ahead > 0:
                time.sleep(ahead)
            for flow, s in enumerate(socks):
                s.sendto(b"<13>proxy seq@32473 run=px flow=%d seq=%d" % (flow, seq),
                         ("127.0.0.1", port))
    finally:
        for s in socks:
            s.close()
    return [s for s in senders]


def check_senders(recs, uport, senders, n):
    """Each sender's messages arrived as its own PROXIED_SRCIP, on the
    listener's address and port, every sequence number once and in order."""
    flows = {}
    for srcip, _, dstip, dstport, msg in recs:
        m = SEQ.search(msg)
        assert m, msg
        flow = int(m.group(1))
        assert srcip == senders[flow], (srcip, msg)
        assert (dstip, dstport) == ("127.0.0.1", str(uport))
        flows.setdefault(flow, []).append(int(m.group(2)))
    assert flows == {f: list(range(n)) for f in range(len(senders))}


def relay_flows(syslogrx, tmp_path, version, to_port):
    """SENDERS' flows through syslogrx --proxy-protocol VERSION into
    to_port; returns syslogrx (stopped) and its listening port."""
    uport = free_udp_port()
    rx = syslogrx("--format", "original", "--proxy-protocol", version, "--sockets", "1",
                  "--threads", "1", "--rcvbuf", "8M", "--output", f"tcp:127.0.0.1:{to_port}",
                  port=uport, sequences=False)
    send_flows(uport, SENDERS, PER_SENDER)
    return rx, uport


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_each_sender_arrives_as_itself(syslogrx, tmp_path, version):
    """v1 straight into syslog-ng's proxied-tcp; v2 through haproxy, which
    decodes it and tells syslog-ng what it read."""
    sport = free_tcp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    hap = None
    try:
        to = sport
        if version == "v2":
            to = free_tcp_port()
            hap = HAProxy(str(tmp_path / "haproxy"), to, sport).start()
        rx, uport = relay_flows(syslogrx, tmp_path, version, to)
        total = len(SENDERS) * PER_SENDER
        wait_until(lambda: len(sng.lines()) >= total, f"{total} messages at syslog-ng",
                   timeout=60)
        rc, _, err = rx.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        if hap:
            hap.stop()
        sng.stop()
    t = rx.summary["totals"]
    assert t["received"] == t["written"] == len(recs) == total, (t, len(recs))
    check_senders(recs, uport, SENDERS, PER_SENDER)
    p = rx.summary["proxy"]
    assert p["protocol"] == version
    assert p["opened"] == len(SENDERS) == p["closed"]["stop"] == p["connections_peak"]
    assert p["connections"] == 0
    assert rx.summary["output_resent"] == rx.summary["output_uncertain"] == 0


def test_over_tls_into_proxied_tls(syslogrx, tmp_path):
    """tls:HOST:PORT --proxy-protocol v1 into syslog-ng's proxied-tls (SC4S's
    TLS source with PROXYCONNECT): the header inside each sender's session."""
    pki = Pki(tmp_path / "pki")
    sport = free_tcp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport, pki=pki).start()
    try:
        uport = free_udp_port()
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--sockets", "1",
                      "--threads", "1", "--rcvbuf", "8M", "--output", f"tls:127.0.0.1:{sport}",
                      "--tls-ca", pki.path("ca.pem"), port=uport, sequences=False)
        send_flows(uport, SENDERS, 100)
        wait_until(lambda: len(sng.lines()) >= 100 * len(SENDERS), "every message at syslog-ng")
        rc, _, err = rx.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        sng.stop()
    assert rx.summary["totals"]["written"] == len(recs) == 100 * len(SENDERS)
    check_senders(recs, uport, SENDERS, 100)


def test_an_ipv6_sender_is_named_tcp6(syslogrx, tmp_path):
    """A listener on [::1]: the header says TCP6 with the sender's and the
    listener's IPv6 addresses, as syslog-ng reads them."""
    sport, uport = free_tcp_port(), free_udp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--output",
                      f"tcp:127.0.0.1:{sport}", listen=f"[::1]:{uport}", sequences=False)
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as u:
            u.sendto(b"<13>from ipv6", ("::1", uport))
            port6 = u.getsockname()[1]
        wait_until(lambda: len(sng.lines()) >= 1, "the message at syslog-ng")
        rc, _, err = rx.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        sng.stop()
    assert recs == [("::1", str(port6), "::1", str(uport), b"<13>from ipv6")]


def test_a_server_restart_loses_nothing_uncounted(syslogrx, tmp_path):
    """syslog-ng stopped and started again while SENDERS send: each sender's
    connection is opened again, what it had not acknowledged sent again
    first; a sequence number is missing only as counted output_uncertain
    (acknowledged on a connection the server reset), and arrives at most
    twice only as counted output_resent."""
    sport, mport, uport = free_tcp_port(), free_tcp_port(), free_udp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    n = 3000
    total = n * len(SENDERS)

    def unique():
        return sum(len(set(v)) for v in sng.flows().values())
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--sockets", "1",
                      "--threads", "1", "--rcvbuf", "16M", "--metrics", str(mport), "--output",
                      f"tcp:127.0.0.1:{sport}", port=uport, sequences=False)
        sent = threading.Thread(target=send_flows, args=(uport, SENDERS, n, 2000))
        sent.start()
        try:
            wait_until(lambda: len(sng.lines()) >= 1000, "some messages at syslog-ng")
            sng.stop()
            sng.start()
        finally:
            sent.join(timeout=120)
        # acknowledged, all of it: then the stop, whose FIN syslog-ng answers
        # once it has read everything
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_written_total") == total,
                   "every message acknowledged", timeout=60)
        rc, _, err = rx.stop()
        assert rc == 0, err
        uncertain = rx.summary["output_uncertain"]
        try:
            # a loaded host: syslog-ng may write the last lines late
            wait_until(lambda: unique() >= total - uncertain,
                       "every message not counted uncertain at syslog-ng", timeout=60)
        except AssertionError as e:
            raise AssertionError(f"{e}: {unique()} of {total} at syslog-ng, {uncertain} "
                                 f"counted uncertain, summary {rx.summary}") from None
        flows = sng.flows()
    finally:
        sng.stop()
    s = rx.summary
    assert s["totals"]["received"] == s["totals"]["written"] == n * len(SENDERS)
    missing = sum(n - len(set(flows.get(f, ()))) for f in range(len(SENDERS)))
    twice = sum(len(v) - len(set(v)) for v in flows.values())
    assert missing <= s["output_uncertain"], (missing, s["output_uncertain"])
    assert twice <= s["output_resent"], (twice, s["output_resent"])
    assert s["proxy"]["closed"]["lost"] >= len(SENDERS)


def unread(conn):
    """Bytes in conn's receive queue (SIOCINQ)."""
    return struct.unpack("i", fcntl.ioctl(conn.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def test_a_reset_with_a_full_window_is_sent_again_unprompted(syslogrx, tmp_path):
    """A server that stopped reading (a small receive buffer: its window
    shut, most of the sender's messages unacknowledged in syslogrx's socket)
    resets the connection, then syslog-ng takes its port; the sender sends
    nothing more. syslogrx finds the reset itself, opens the sender's
    connection again with its header and sends what was not acknowledged:
    every message arrives as its sender but those the dead server's kernel
    acknowledged and never read, which are exactly output_uncertain."""
    sport, mport, uport = free_tcp_port(), free_tcp_port(), free_udp_port()
    n = 200
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    srv.bind(("127.0.0.1", sport))
    srv.listen(1)
    srv.settimeout(30)
    sng = SyslogNgProxied(tmp_path / "sng", sport)
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--sockets", "1",
                      "--threads", "1", "--stall-timeout", "120", "--metrics", str(mport),
                      "--output", f"tcp:127.0.0.1:{sport}", port=uport, sequences=False)
        send_flows(uport, SENDERS[:1], n)
        conn, _ = srv.accept()

        def received():
            m = parse(scrape(mport))
            return sum(series(m, "syslogrx_socket_received_total").values()) == n
        wait_until(received, f"{n} messages received")
        wait_until(lambda: unread(conn) > 0, "the server's window holding bytes")
        assert value(parse(scrape(mport)), "syslogrx_written_total") < n
        # an RST, what its kernel held unread dropped with it
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
        srv.close()
        sng.start()
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_written_total") == n,
                   "every message acknowledged")
        rc, _, err = rx.stop()
        assert rc == 0, err
        flows = sng.flows()
        recs = sng.records()
    finally:
        srv.close()
        sng.stop()
    s = rx.summary
    assert s["totals"]["received"] == s["totals"]["written"] == n
    got = flows.get(0, [])
    assert {r[0] for r in recs} == {SENDERS[0]}
    assert got == sorted(set(got)), "in order, once each"
    missing = n - len(got)
    assert 0 < n - s["output_uncertain"] and missing == s["output_uncertain"], \
        (missing, s["output_uncertain"])
    assert 0 < s["output_resent"] <= n - s["output_uncertain"], s
    assert s["proxy"]["closed"]["lost"] >= 1 and s["proxy"]["opened"] >= 2


def test_a_connection_per_sender_and_listener(syslogrx, tmp_path):
    """One sender to two listeners: a connection for each, each header
    naming the listener its messages came by."""
    sport, p1, p2 = free_tcp_port(), free_udp_port(), free_udp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--rcvbuf", "8M",
                      "--listen", f"b=127.0.0.1:{p2}", "--output", f"tcp:127.0.0.1:{sport}",
                      listen=f"a=127.0.0.1:{p1}", sequences=False)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind((SENDERS[0], 0))
            for i in range(50):
                u.sendto(b"<13>to a %d" % i, ("127.0.0.1", p1))
                u.sendto(b"<13>to b %d" % i, ("127.0.0.1", p2))
        wait_until(lambda: len(sng.lines()) >= 100, "every message at syslog-ng")
        rc, _, err = rx.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        sng.stop()
    assert len(recs) == 100 and {r[0] for r in recs} == {SENDERS[0]}
    assert all(r[3] == str(p1 if r[4].startswith(b"<13>to a") else p2) for r in recs), recs
    assert rx.summary["proxy"]["opened"] == 2


def test_an_output_per_listener_each_with_its_pool(syslogrx, tmp_path):
    """--output a=tcp:... beside the unnamed output, both with the PROXY
    header: each listener's messages reach its own syslog-ng, each as its
    sender, on its listener's port; none at the other."""
    pa, pb = free_udp_port(), free_udp_port()
    sport_a, sport_b = free_tcp_port(), free_tcp_port()
    sng_a = SyslogNgProxied(tmp_path / "sng-a", sport_a).start()
    sng_b = SyslogNgProxied(tmp_path / "sng-b", sport_b).start()
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--rcvbuf", "8M",
                      "--listen", f"b=127.0.0.1:{pb}", "--output", f"a=tcp:127.0.0.1:{sport_a}",
                      "--output", f"tcp:127.0.0.1:{sport_b}", listen=f"a=127.0.0.1:{pa}",
                      sequences=False)
        for k, (sender, port) in enumerate(((SENDERS[0], pa), (SENDERS[1], pb))):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.bind((sender, 0))
                for i in range(50):
                    u.sendto(b"<13>to %d %d" % (k, i), ("127.0.0.1", port))
        wait_until(lambda: len(sng_a.lines()) >= 50 and len(sng_b.lines()) >= 50,
                   "each listener's messages at its syslog-ng")
        rc, _, err = rx.stop()
        assert rc == 0, err
        got_a, got_b = sng_a.records(), sng_b.records()
    finally:
        sng_a.stop()
        sng_b.stop()
    for got, k, sender, port in ((got_a, 0, SENDERS[0], pa), (got_b, 1, SENDERS[1], pb)):
        assert sorted(r[4] for r in got) == sorted(b"<13>to %d %d" % (k, i) for i in range(50))
        assert {(r[0], r[3]) for r in got} == {(sender, str(port))}, got[:3]


V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def test_v2_header_on_the_wire(syslogrx):
    """haproxy takes v1 as well: the bytes themselves, read by the
    specification's layout (struct): the v2 signature, PROXY over TCP4, the
    sender's address and port, the listener's, then the message."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(30)
    uport = free_udp_port()
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v2", "--output",
                      f"tcp:127.0.0.1:{srv.getsockname()[1]}", port=uport, sequences=False)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind(("127.0.0.11", 0))
            u.sendto(b"<13>over v2", ("127.0.0.1", uport))
            sport = u.getsockname()[1]
        c, _ = srv.accept()
        with c:
            c.settimeout(30)
            got = b""
            while not got.endswith(b"\n"):
                chunk = c.recv(4096)
                assert chunk, got
                got += chunk
            rc, _, err = rx.stop()
            assert rc == 0, err
    finally:
        srv.close()
    assert got[:12] == V2_SIG
    ver_cmd, fam, length = struct.unpack("!BBH", got[12:16])
    assert (ver_cmd, fam, length) == (0x21, 0x11, 12)
    src, dst, sp, dp = struct.unpack("!4s4sHH", got[16:28])
    assert (socket.inet_ntoa(src), sp) == ("127.0.0.11", sport)
    assert (socket.inet_ntoa(dst), dp) == ("127.0.0.1", uport)
    assert got[28:] == b"<13>over v2\n"


def test_vendor_corpus_reads_as_sent_directly(syslogrx, tmp_path):
    """Every corpus datagram to syslog-ng's UDP source directly, and through
    syslogrx --format original --proxy-protocol v1 into its proxied-tcp
    source, both parsed as SC4S parses (flags(no-parse), strict RFC 5424
    else RFC 3164 with guess-timezone; HOST from PROXIED_SRCIP where the
    message names none): the same fields on both paths for every message a
    line can carry; the others are named."""
    names, grams, direct, proxied, summary = parse_oracle.relayed(
        tmp_path, syslogrx, "proxied", "--proxy-protocol", "v1")
    cannot = {n for n, d in zip(names, grams) if parse_oracle.as_line(d) != d}
    differ = {}
    for n, d, a, b in zip(names, grams, direct, proxied):
        # both syslog-ng's readings: bytes that are not UTF-8 are written alike
        f = parse_oracle.differing(parse_oracle.from_syslog_ng(a),
                                   parse_oracle.from_syslog_ng(b))
        if f:
            differ[n] = f
    # syslog-ng 3.38's own difference between its UDP and TCP sources (the
    # same with transport("tcp") and no syslogrx): a message that looks like
    # RFC 5424 and fails the strict parse falls back to RFC 3164 over UDP,
    # and becomes syslog-ng's parse error over TCP.
    strict_refused = {n for n, d, b in zip(names, grams, proxied)
                      if differ.get(n) == ["malformed"] and re.match(rb"<\d{1,3}>1 ", d)
                      and parse_oracle.from_syslog_ng(b)["malformed"]}
    left = set(differ) - cannot - strict_refused
    assert not left, {n: differ[n] for n in left}
    assert len(strict_refused) < 50, sorted(strict_refused)
    assert len(grams) - len(cannot) >= 300
    # the sender is the device: no message took syslogrx's address as HOST
    assert not any(b'"host":"127.0.0.1"' in line for line in proxied)
    assert summary["proxy"]["opened"] == 1


def test_pool_stays_within_its_bound(syslogrx, tmp_path):
    """2,000 senders (distinct addresses, in a namespace of the test's own),
    one datagram each, through a pool of 32: never more than 32 open,
    opens = closes + open in the metrics, every message arrives once, as its
    sender. syslog-ng takes SC4S's 2,000 connections: it counts a closed
    connection until it has read its end, which lags behind a pool that
    churns (docs/operating.md sizes SC4S's limit well above the pool's)."""
    n, senders = 32, 2000
    sport, mport, uport = free_tcp_port(), free_tcp_port(), free_udp_port()
    with new_netns("proxy") as ns:
        sng = SyslogNgProxied(tmp_path / "sng", sport, max_connections=2000, netns=ns).start()
        try:
            rx = syslogrx("--format", "original", "--proxy-protocol", "v1",
                          "--proxy-connections", str(n), "--rcvbuf", "16M", "--metrics",
                          str(mport), "--output", f"tcp:127.0.0.1:{sport}", port=uport,
                          netns=ns, sequences=False)
            assert send_forged(uport, senders, netns=ns) == senders
            wait_until(lambda: len(sng.lines()) >= senders, f"{senders} messages at syslog-ng",
                       timeout=120)
            m = scrape_in(ns, mport)
            closes = sum(value(m, "syslogrx_proxy_closes_total", reason=r)
                         for r in ("idle", "full", "lost", "stop"))
            assert value(m, "syslogrx_proxy_opens_total") == \
                value(m, "syslogrx_proxy_connections") + closes
            assert value(m, "syslogrx_proxy_connections") <= n
            rc, _, err = rx.stop()
            assert rc == 0, err
            recs = sng.records()
        finally:
            sng.stop()
    t = rx.summary["totals"]
    assert t["received"] == t["written"] == len(recs) == senders
    want = {"127.%d.%d.%d" % (1 + (i >> 16), (i >> 8) & 255, i & 255) for i in range(senders)}
    assert sorted(r[0] for r in recs) == sorted(want)
    p = rx.summary["proxy"]
    assert p["connections_peak"] == n and p["connections"] == 0
    assert p["opened"] == sum(p["closed"].values())
    assert p["closed"]["full"] >= senders - n
    assert p["closed"]["stop"] <= n


def test_refused_where_it_cannot_apply():
    for args, want in [
        (["--output", "kafka:127.0.0.1:9092/t", "--proxy-protocol", "v1"],
         "--proxy-protocol needs --output tcp:HOST:PORT or tls:HOST:PORT"),
        (["--output", "file:/dev/null", "--proxy-protocol", "v2"],
         "--proxy-protocol needs --output tcp:HOST:PORT or tls:HOST:PORT"),
        (["--output", "otlp:http://127.0.0.1:1/v1/logs", "--proxy-protocol", "v1"],
         "--proxy-protocol needs --output tcp:HOST:PORT or tls:HOST:PORT"),
        (["--output", "tcp:127.0.0.1:1", "--proxy-protocol", "v3"],
         "--proxy-protocol v3: expected v1 or v2"),
        (["--output", "tcp:127.0.0.1:1", "--proxy-connections", "10"],
         "--proxy-connections and --proxy-idle need --proxy-protocol"),
        (["--output", "tcp:127.0.0.1:1", "--proxy-protocol", "v1", "--proxy-connections",
          "0"], "--proxy-connections 0: expected 1 to 65536"),
        (["--output", "tcp:127.0.0.1:1", "--proxy-protocol", "v1", "--output-rate", "10"],
         "--proxy-protocol and --output-rate cannot be used together"),
    ]:
        r = run_cmd([binary("syslogrx"), "--listen", "127.0.0.1:0", *args])
        assert r.returncode != 0 and want in r.stderr, (args, r.stderr)


def test_idle_connections_close(syslogrx, tmp_path):
    """--proxy-idle 0.5: a sender's connection closes once it had nothing to
    send that long; the sender's next message opens a new one."""
    sport, mport, uport = free_tcp_port(), free_tcp_port(), free_udp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    try:
        rx = syslogrx("--format", "original", "--proxy-protocol", "v1", "--proxy-idle", "0.5",
                      "--metrics", str(mport), "--output", f"tcp:127.0.0.1:{sport}",
                      port=uport, sequences=False)
        send_flows(uport, SENDERS[:1], 1)
        wait_until(lambda: len(sng.lines()) >= 1, "the first message")
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_proxy_closes_total",
                                 reason="idle") == 1, "the idle close", timeout=10)
        assert value(parse(scrape(mport)), "syslogrx_proxy_connections") == 0
        send_flows(uport, SENDERS[:1], 1)
        wait_until(lambda: len(sng.lines()) >= 2, "the second message")
        rc, _, err = rx.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        sng.stop()
    assert [r[0] for r in recs] == [SENDERS[0]] * 2
    p = rx.summary["proxy"]
    assert p["opened"] == 2 and p["closed"]["idle"] == 1 and p["closed"]["stop"] == 1


# ---- combinations -----------------------------------------------------------

def test_a_resize_and_an_upgrade_under_load(tmp_path):
    """sysloggen's load through --proxy-protocol v1 (from the config file)
    while SIGHUP grows the sockets and kill -USR2 replaces the process, as
    --user nobody: each process opens its own connection for the sender;
    every sequence number arrives once but for counted kernel drops."""
    sport = free_tcp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    listen = listen_for(socket.AF_INET)
    work = pathlib.Path(tempfile.mkdtemp(prefix="srx-proxy-user-"))
    os.chown(work, NOBODY, NOBODY)    # its summary, written as nobody
    try:
        rx = Receiver(work, listen, "--rcvbuf", "64M", "--max-sockets", "4",
                      "--output", f"tcp:127.0.0.1:{sport}", "--user", "nobody",
                      settings={"sockets": 2, "threads": 2, "format": "original",
                                "proxy-protocol": "v1"})

        def actions():
            rx.resize(4, 2, proxy_connections=64)   # a restart's: named, not applied
            assert rx.upgrade() is not None, "".join(rx.lines)
            wait_gone(rx.olds[-1], 60)
        sent, err, final = run_load(rx, listen, actions)
        all_s = summaries(rx, final)
        written = sum(s["totals"]["written"] for s in all_s)
        wait_until(lambda: len(sng.lines()) >= written, f"{written} messages at syslog-ng",
                   timeout=60)
        recs = sng.records()
    finally:
        sng.stop()
        shutil.rmtree(work, ignore_errors=True)
    assert len(recs) == written
    assert err.count(f"--proxy-connections changed in {work / 'syslogrx.conf'}: "
                     "needs a restart") == 1, err
    assert [s["proxy"]["connections_max"] for s in all_s] == [256, 64]
    assert {r[0] for r in recs} == {"127.0.0.1"}
    assert sum(s["proxy"]["opened"] for s in all_s) >= 2
    check_books(sent, all_s, final, {f: s for f, s in sng.flows().items()}, exact=False)


def test_reliable_disk_buffer_and_a_kill_9(syslogrx, tmp_path):
    """syslog-ng down: SENDERS' messages go to a reliable disk buffer and
    the receiver is killed with -9; the next one on the same DIR, syslog-ng
    up, opens a connection per sender as recorded: each arrives as its
    sender, every sequence number once."""
    sport, mport, uport = free_tcp_port(), free_tcp_port(), free_udp_port()
    out = ["--format", "original", "--proxy-protocol", "v1", "--sockets", "1", "--threads",
           "1", "--rcvbuf", "8M", "--output", f"tcp:127.0.0.1:{sport}",
           "--disk-buffer", str(tmp_path / "buf"), "--disk-buffer-mode", "reliable"]
    n = 100
    a = syslogrx(*out, "--metrics", str(mport), port=uport, sequences=False)
    send_flows(uport, SENDERS, n)
    wait_until(lambda: value(parse(scrape(mport)), "syslogrx_disk_buffer_written_total")
               == n * len(SENDERS), "every message on disk")
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(timeout=10)
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    try:
        b = syslogrx(*out, port=uport, sequences=False)
        wait_until(lambda: len(sng.lines()) >= n * len(SENDERS), "every message at syslog-ng",
                   timeout=60)
        rc, _, err = b.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        sng.stop()
    assert b.summary["disk_buffer"]["recovered"] == n * len(SENDERS)
    check_senders(recs, uport, SENDERS, n)


def test_supervised(tmp_path):
    """--supervise: the supervised child runs the pool as a receiver does."""
    sport = free_tcp_port()
    sng = SyslogNgProxied(tmp_path / "sng", sport).start()
    listen = listen_for(socket.AF_INET)
    try:
        rx = Receiver(tmp_path, listen, "--supervise", "--rcvbuf", "8M", "--format", "original",
                      "--proxy-protocol", "v1", "--sockets", "1", "--threads", "1",
                      "--output", f"tcp:127.0.0.1:{sport}")
        rx.child()
        send_flows(int(listen.rsplit(":", 1)[1]), SENDERS, 50)
        wait_until(lambda: len(sng.lines()) >= 50 * len(SENDERS), "every message at syslog-ng")
        rc, err, final = rx.stop()
        assert rc == 0, err
        recs = sng.records()
    finally:
        sng.stop()
    check_senders(recs, int(listen.rsplit(":", 1)[1]), SENDERS, 50)
