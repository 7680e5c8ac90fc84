# SPDX-License-Identifier: MIT
"""--format original: syslogrx as a byte-exact relay in front of SC4S.

Debian's syslog-ng is the oracle, reading as SC4S's sources do before they
parse (flags(no-parse): $MSG is the bytes as they arrived, written base64
so that nothing is lost on the way to the test). Every datagram of the
parse corpus (device messages of SC4S's vendor tests, syslog-ng's and
rsyslog's parser tests) and a few edge shapes go through syslogrx:

- newline framing into network(): each arrives as the datagram, but for the
  shapes a line cannot carry, named in LINE_CANNOT (their line end left
  off, a '\\n' or NUL inside written #012/#000, and counted);
- octet framing into syslog(): each arrives as syslog-ng's own UDP source
  reads the same datagram sent to it directly, and byte for byte the
  datagram for all but those ending in '\\n' or NUL (which syslog-ng
  trims on both paths);
- the same over TLS;
- octet framing into syslog(), parsed as SC4S parses: the fields of
  syslog-ng's UDP reading of the same datagrams but for HOST where the
  message names none (no PROXY header in syslog()) and the messages its
  TCP sources refuse to parse, each named and counted.

And the time of a message without a stamp: rfc5424 and json carry the
kernel's receive time, so a message held through an outage keeps it;
original adds none, and syslog-ng stamps the arrival."""
import json
import os
import re
import signal
import socket
import time
from collections import Counter
from datetime import datetime, timezone

import pytest

from support.paths import binary
from support.procs import run_cmd, wait_until
from support import parse_oracle
from support.parse_oracle import as_line
from support.books import check_books, run_load, summaries
from support.ports import free_tcp_port, free_udp_port
from support.prom import parse, scrape, value
from support.rx_watch import Receiver, listen_for, wait_gone
from support.tcp_sinks import FrameSink
from support.syslog_ng import SyslogNgNoParse, SyslogNgServer
from support.tls_server import Pki

# Shapes the corpus has none of (it keeps one message per line).
EDGES = {
    "lf-inside": b"<134>%ASA-6-302013: first line\nsecond line",
    "nul-inside": b"<134>%ASA-6-302014: before\x00after",
    "lf-and-nul": b"<13>a\x00\nb\r\nc",
    "trailing-lf": b"<13>Nov 27 10:00:00 host app: ends in LF\n",
    "trailing-crlf": b"<13>Nov 27 10:00:00 host app: ends in CRLF\r\n",
    "trailing-nul": b"<13>Nov 27 10:00:00 host app: ends in NUL\x00",
    # carried exactly by both framings
    "cr-inside": b"<13>Nov 27 10:00:00 host app: a CR\rinside",
    "controls": b"<13>esc \x1b[0m tab\t backslash \\ del \x7f latin1 \xe9 bad \xff\xfe",
    "leading-space": b"  <13>leading spaces",
}
# What newline framing cannot carry byte for byte (the docs name them).
LINE_CANNOT = {"lf-inside", "nul-inside", "lf-and-nul", "trailing-lf", "trailing-crlf",
               "trailing-nul"}
ESCAPED = {"lf-inside", "nul-inside", "lf-and-nul"}

NETWORK_TCP = ('network(ip("127.0.0.1") port({port}) transport("tcp") flags(no-parse) '
               "log-msg-size(70000) max-connections(4))")
SYSLOG_TCP = ('syslog(ip("127.0.0.1") port({port}) transport("tcp") flags(no-parse) '
              "log-msg-size(70000) max-connections(4))")
NETWORK_UDP = ('network(ip("127.0.0.1") port({port}) transport("udp") flags(no-parse) '
               "log-msg-size(70000) so-rcvbuf(4194304))")


def corpus():
    """[(name, datagram)]: the corpus rendered now, then the edge shapes."""
    return parse_oracle.rendered() + list(EDGES.items())


def tls_driver(kind, pki):
    return (f'{kind}(ip("127.0.0.1") port({{port}}) transport("tls") flags(no-parse) '
            f'log-msg-size(70000) max-connections(4) tls(key-file("{pki.path("srv.key")}") '
            f'cert-file("{pki.path("srv.pem")}") ca-file("{pki.path("ca.pem")}") '
            "peer-verify(optional-untrusted)))")


def send(datagrams, targets, arrived):
    """Each datagram to every target, in chunks of 100, each chunk waited
    for (arrived(n): n have arrived everywhere) so no buffer overflows."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for k in range(0, len(datagrams), 100):
            for d in datagrams[k:k + 100]:
                for t in targets:
                    s.sendto(d, t)
            n = min(k + 100, len(datagrams))
            wait_until(lambda: arrived(n), f"{n} messages at syslog-ng", timeout=60)


def relay(syslogrx, tmp_path, framing, tls, *flags):
    """The corpus through syslogrx --format original --framing framing into
    syslog-ng; returns (names, datagrams, what arrived, syslog-ng's UDP
    reading of them (octet only), the summary)."""
    items = corpus()
    names = [n for n, _ in items]
    grams = [d for _, d in items]
    sources, out = {}, []
    if tls:
        pki = Pki(tmp_path / "pki")
        sources["relay"] = tls_driver("network" if framing == "newline" else "syslog", pki)
        out = ["--output", f"tls:127.0.0.1:{{port}}", "--tls-ca", pki.path("ca.pem")]
    else:
        sources["relay"] = NETWORK_TCP if framing == "newline" else SYSLOG_TCP
        out = ["--output", "tcp:127.0.0.1:{port}"]
    if framing == "octet":
        sources["udp"] = NETWORK_UDP
    ports = {"relay": free_tcp_port(), "udp": free_udp_port()}
    sng = SyslogNgNoParse(str(tmp_path / "sng"), sources, ports)
    sng.start()
    try:
        uport = free_udp_port()
        out = [a.format(port=ports["relay"]) for a in out]
        rx = syslogrx("--format", "original", "--framing", framing, "--rcvbuf", "8M", *out,
                      *flags, port=uport, sequences=False)
        targets = [("127.0.0.1", uport)]
        if framing == "octet":
            targets.append(("127.0.0.1", ports["udp"]))
        send(grams, targets,
             lambda n: len(sng.msgs("relay")) >= n and
             (framing != "octet" or len(sng.msgs("udp")) >= n))
        rc, _, err = rx.stop()
        assert rc == 0, err
        got, udp = sng.msgs("relay"), sng.msgs("udp")
    finally:
        sng.stop()
    return names, grams, got, udp, rx.summary


@pytest.mark.parametrize("tls", [False, True], ids=["tcp", "tls"])
def test_newline_framing_into_network_carries_each_datagram(syslogrx, tmp_path, tls):
    names, grams, got, _, summary = relay(syslogrx, tmp_path, "newline", tls)
    t = summary["totals"]
    assert t["received"] == t["written"] == len(grams) == len(got)
    # syslog-ng's $MSG is the datagram, byte for byte, for every datagram
    # a line can carry; the others are named, and arrive as documented.
    exact = [d for n, d in zip(names, grams) if n not in LINE_CANNOT]
    assert all(as_line(d) == d for d in exact)
    assert sorted(n for n, d in zip(names, grams) if as_line(d) != d) == sorted(LINE_CANNOT)
    assert Counter(got) == Counter(as_line(d) for d in grams)
    assert len(exact) >= 1000
    assert t["line_breaks_escaped"] == len(ESCAPED)
    assert t["malformed"] is None  # nothing parsed


@pytest.mark.parametrize("tls", [False, True], ids=["tcp", "tls"])
def test_octet_framing_into_syslog_carries_every_byte(syslogrx, tmp_path, tls):
    names, grams, got, udp, summary = relay(syslogrx, tmp_path, "octet", tls)
    t = summary["totals"]
    assert t["received"] == t["written"] == len(grams) == len(got)
    # What SC4S would have read over UDP, and the datagram itself but where
    # syslog-ng trims a trailing LF or NUL on both paths.
    assert Counter(got) == Counter(udp)
    trimmed = {n for n, d in zip(names, grams) if d.endswith((b"\n", b"\x00"))}
    assert trimmed == {"trailing-lf", "trailing-crlf", "trailing-nul"}
    assert not Counter(d for n, d in zip(names, grams) if n not in trimmed) - Counter(got)
    assert t["line_breaks_escaped"] == 0


def test_vendor_corpus_over_octet_framing_parses_as_sent_directly(syslogrx, tmp_path):
    """The vendor corpus to syslog-ng's UDP source directly, and through
    syslogrx --format original --framing octet into its
    syslog(transport("tcp")) source (SC4S's 601), both parsed as SC4S
    parses: the same fields on both paths for every message, octet framing
    carrying every byte, but HOST. syslog-ng 3.38's syslog() takes no PROXY
    header, so a message that names no host gets the connection's peer,
    syslogrx, where the direct path gets the device; and the messages that
    look like RFC 5424 and fail the strict parse, which syslog-ng's TCP
    sources refuse where its UDP source falls back to RFC 3164 (the newline
    corpus test through proxied-tcp has the same)."""
    names, grams, direct, octet, _ = parse_oracle.relayed(tmp_path, syslogrx, "octet",
                                                          "--framing", "octet")
    check_octet_corpus(names, grams, direct, octet)


def test_vendor_corpus_over_tls_parses_as_sent_directly(syslogrx, tmp_path):
    """The same over TLS: --output tls with --framing octet into syslog-ng's
    syslog(transport("tls")) source (SC4S's 6514 read as syslog()): what
    differs is what differs over TCP, and nothing else."""
    pki = Pki(tmp_path / "pki")
    names, grams, direct, tls, _ = parse_oracle.relayed(tmp_path, syslogrx, "tls",
                                                        "--framing", "octet", pki=pki)
    check_octet_corpus(names, grams, direct, tls)


def check_octet_corpus(names, grams, direct, octet):
    """Every message parsed the same on both paths but HOST where the
    message names none (syslogrx's address, over a connection without a
    PROXY header) and the RFC 5424 look-alikes syslog-ng's TCP sources
    refuse; at least 300 the same."""
    differ, hostless = {}, set()
    for n, a, b in zip(names, direct, octet):
        a, b = parse_oracle.from_syslog_ng(a), parse_oracle.from_syslog_ng(b)
        f = parse_oracle.differing(a, b)
        if f:
            differ[n] = f
        if not a["malformed"] and a["host"] is None:
            hostless.add(n)
            assert b["malformed"] or b["host"] == "127.0.0.1", (n, b)
    host = {n for n, f in differ.items() if f == ["host"]}
    strict_refused = {n for n, d, b in zip(names, grams, octet)
                      if differ.get(n) == ["malformed"] and re.match(rb"<\d{1,3}>1 ", d)
                      and parse_oracle.from_syslog_ng(b)["malformed"]}
    assert set(differ) == host | strict_refused, \
        {n: differ[n] for n in set(differ) - host - strict_refused}
    assert host == hostless - strict_refused
    assert len(strict_refused) < 50, sorted(strict_refused)
    assert len(grams) - len(differ) >= 300
    print(f"{len(grams)} messages: {len(host)} HOST (none in the message), "
          f"{len(strict_refused)} refused by syslog-ng's TCP source, the rest the same")


def test_ordered_relay_keeps_the_bytes(syslogrx, tmp_path):
    """--ordered merges the workers' batches before the output: the same
    bytes arrive, in the order sent. A hold of 1 s, not the default 5 ms: a
    worker a loaded host stalls past the hold writes late (counted, not
    reordered), and this test is about the bytes."""
    names, grams, got, _, summary = relay(syslogrx, tmp_path, "newline", False,
                                          "--ordered=1000", "--sockets", "2", "--threads", "2")
    assert got == [as_line(d) for d in grams]


def _utc_us(text):
    """'2026-11-22T03:12:00.123456Z' -> microseconds since the epoch."""
    dt = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * 1000000 + dt.microsecond


ASA = b"<166>%ASA-6-302013: Built inbound TCP connection 1 for outside:10.0.0.1/1 (10.0.0.1/1)"


def test_json_time_of_a_message_without_a_stamp_is_its_receive_time(syslogrx, tmp_path):
    out = tmp_path / "out.json"
    uport = free_udp_port()
    rx = syslogrx("--format", "json", "--output", f"file:{out}", port=uport, sequences=False)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(ASA, ("127.0.0.1", uport))
    wait_until(lambda: out.exists() and out.read_bytes().endswith(b"\n"), "the line")
    rc, _, err = rx.stop()
    assert rc == 0, err
    o = json.loads(out.read_bytes())
    assert "timestamp" not in o and o["app_name"] == "%ASA-6-302013"
    assert o["time_unix_nano"] // 1000 == _utc_us(o["received"])


def test_the_receive_time_is_the_kernels_not_the_workers(syslogrx, tmp_path):
    """A message without a stamp carries the time the kernel received it
    (SO_TIMESTAMPNS), not the time a worker read it: sent while syslogrx is
    stopped (SIGSTOP) for 0.5 s, its time is before the stop ended."""
    out = tmp_path / "out.json"
    uport = free_udp_port()
    rx = syslogrx("--format", "json", "--output", f"file:{out}", port=uport, sequences=False)
    os.kill(rx.p.pid, signal.SIGSTOP)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            t0 = time.time()
            s.sendto(ASA, ("127.0.0.1", uport))
            t1 = time.time()
        wait_until(lambda: time.time() > t1 + 0.5, "0.5 s stopped", timeout=10)
    finally:
        os.kill(rx.p.pid, signal.SIGCONT)
    wait_until(lambda: out.exists() and out.read_bytes().endswith(b"\n"), "the line")
    rc, _, err = rx.stop()
    assert rc == 0, err
    o = json.loads(out.read_bytes())
    assert "timestamp" not in o
    # microseconds, the sender's clock read around its sendto
    assert int(t0 * 1e6) - 1000 <= o["time_unix_nano"] // 1000 <= int(t1 * 1e6) + 1000, (t0, t1, o)


@pytest.mark.parametrize("fmt", ["rfc5424", "original"])
def test_a_stampless_message_held_through_an_outage(syslogrx, tmp_path, fmt):
    """syslog-ng is down when the message comes and up 3 s later: in rfc5424
    the message's time is when syslogrx received it (and HOST the sender);
    in original it has none, and syslog-ng stamps its late arrival."""
    tport, uport = free_tcp_port(), free_udp_port()
    sng = SyslogNgServer(str(tmp_path / "sng"), tport,
                         'transport("tcp") flags(no-multi-line)',
                         "${S_UNIXTIME}.${S_USEC} ${R_UNIXTIME}.${R_USEC} ${HOST} ${MSG}\\n")
    rx = syslogrx("--format", fmt, "--framing", "octet", "--output", f"tcp:127.0.0.1:{tport}",
                  port=uport, sequences=False)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.2", 0))
        t0 = time.time()
        s.sendto(ASA, ("127.0.0.1", uport))
        t1 = time.time()
    wait_until(lambda: time.time() > t1 + 3, "3 s of outage", timeout=10)
    sng.start()
    try:
        lines = sng.wait_lines(1)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sng.stop()
    assert len(lines) == 1 and rx.summary["totals"]["written"] == 1
    stamp, arrival, host, msg = lines[0].split(b" ", 3)
    stamp, arrival = float(stamp), float(arrival)
    assert arrival > t1 + 3
    if fmt == "rfc5424":
        assert t0 - 0.001 <= stamp <= t1 + 0.001
        assert host == b"127.0.0.2"
    else:
        assert stamp >= t1 + 3  # syslog-ng's own arrival time
        # syslogrx's address, the connection's (syslog-ng resolves it)
        assert host in (b"127.0.0.1", b"localhost")
    assert b"Built inbound TCP connection 1" in msg


# ---- combinations -----------------------------------------------------------

def test_upgrade_with_original_and_a_reliable_disk_buffer(tmp_path):
    """kill -USR2 twice under load, --format original with octet framing
    (both from the config file) and a reliable disk buffer: each process
    forwards on its own connection, every sequence number arrives and
    nothing is counted lost."""
    sink = FrameSink()
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "64M", "--output", f"tcp:127.0.0.1:{sink.port}",
                  "--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", "reliable",
                  settings={"sockets": 2, "threads": 2, "format": "original",
                            "framing": "octet"})
    try:
        def upgrades():
            for _ in range(2):
                assert rx.upgrade() is not None, "".join(rx.lines)
                wait_gone(rx.olds[-1], 60)
        sent, err, final = run_load(rx, listen, upgrades)
    finally:
        sink.close()
    all_s = summaries(rx, final)
    assert len(sink.msgs) == sum(s["totals"]["written"] for s in all_s)
    assert all(s["disk_buffer"]["dropped"] == 0 and s["disk_buffer"]["corrupt"] == 0
               for s in all_s)
    # original: a frame is the datagram, sysloggen's "<PRI>..." as sent
    assert all(m.startswith(b"<") for m in sink.msgs)
    check_books(sent, all_s, final, sink.flows(), exact=False)


def test_original_through_a_reliable_disk_buffer_and_a_kill_9(syslogrx, tmp_path):
    """syslog-ng down: the corpus goes to disk (reliable), the receiver is
    killed with -9; the next one on the same DIR, syslog-ng up, delivers
    every datagram as --format original writes it, once."""
    grams = [d for _, d in corpus()]
    ports = {"relay": free_tcp_port()}
    sng = SyslogNgNoParse(str(tmp_path / "sng"), {"relay": NETWORK_TCP}, ports)
    buf = tmp_path / "buf"
    out = ["--format", "original", "--output", f"tcp:127.0.0.1:{ports['relay']}",
           "--disk-buffer", str(buf), "--disk-buffer-mode", "reliable"]
    mport, uport = free_tcp_port(), free_udp_port()
    a = syslogrx(*out, "--rcvbuf", "8M", "--metrics", str(mport), "--stats-interval", "0.5",
                 port=uport, sequences=False)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for d in grams:
            s.sendto(d, ("127.0.0.1", uport))
    wait_until(lambda: value(parse(scrape(mport)), "syslogrx_disk_buffer_written_total")
               == len(grams), "every datagram on disk")
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(timeout=10)
    sng.start()
    try:
        b = syslogrx(*out, port=free_udp_port(), sequences=False)
        wait_until(lambda: len(sng.msgs("relay")) >= len(grams), "the corpus at syslog-ng",
                   timeout=60)
        rc, _, err = b.stop()
        assert rc == 0, err
        got = sng.msgs("relay")
    finally:
        sng.stop()
    db = b.summary["disk_buffer"]
    assert db["recovered"] == len(grams) and db["corrupt"] == 0 and db["msgs"] == 0
    assert Counter(got) == Counter(as_line(d) for d in grams)
    assert b.summary["totals"]["line_breaks_escaped"] == len(ESCAPED)


def test_original_is_refused_where_it_cannot_apply(tmp_path):
    """OTLP records are not lines: --format original is refused with the
    flag that carries the datagram; --framing without a tcp or tls output."""
    for args, want in [
        (["--output", "otlp:http://127.0.0.1:1/v1/logs", "--format", "original"],
         "--otlp-original makes the datagram its body"),
        (["--output", "file:/dev/null", "--framing", "newline"],
         "--framing needs --output tcp:HOST:PORT or tls:HOST:PORT"),
        (["--output", "tcp:127.0.0.1:1", "--framing", "lines"],
         "--framing lines: expected octet or newline"),
    ]:
        r = run_cmd([binary("syslogrx"), "--listen", "127.0.0.1:0", *args])
        assert r.returncode != 0 and want in r.stderr, r.stderr
