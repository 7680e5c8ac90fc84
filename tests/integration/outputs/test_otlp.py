"""--output otlp: against a real OpenTelemetry Collector (built by
lab/otelcol-setup.sh), checking what came OUT of it: the collector forwards
with its otlp_http exporter to a small sink in this test that decodes every
record (tests/support/otel_collector.py, otlp_wire.py). And against
scripted servers for what a collector may answer: 503 with Retry-After, 400,
TLS with a CA file.
"""
import calendar
import glob
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import threading
import time

import pytest

from support import otlp_wire
from support.paths import binary
from support.ports import free_tcp_port, free_udp_port
from support.procnet import udp_rows
from support.procs import run_cmd, sysloggen, Syslogrx, wait_until
from support.otel_collector import Collector, LogSink
from support.prom import parse, scrape, value

HELD_5424 = (b'<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 '
             b'[exampleSDID@32473 iut="3" eventSource="App\\"lication\\]"][x@1 k="v"] '
             b'An application event')
HELD_3164 = b"<38>Mar  5 06:07:08 host1 su[123]: 'su root' failed"
# no stamp (Cisco ASA's default): its time is the receive time
HELD_NO_STAMP = b"<166>%ASA-6-302013: Built inbound TCP connection 1"


@pytest.fixture
def collector():
    sink = LogSink()
    c = Collector(forward_to=sink.url)
    try:
        c.start()
        yield c, sink
    finally:
        c.close()
        sink.close()


def seq_records(recs, run_id):
    """(flow, seq) of sysloggen's records of this run, in arrival order."""
    out = []
    for r in recs:
        sd = r["attributes"].get("structured_data", {}).get("seq@32473")
        if sd and sd.get("run") == run_id and "seq" in sd:
            out.append((int(sd["flow"]), int(sd["seq"])))
    return out


def expected_3164_ns(observed_ns, offset_s):
    """Mar 5 06:07:08 in the zone offset_s east of UTC, in the receive year."""
    year = time.gmtime(observed_ns // 10**9 + offset_s).tm_year
    return (calendar.timegm((year, 3, 5, 6, 7, 8, 0, 0, 0)) - offset_s) * 10**9


@pytest.mark.parametrize("encoding,compression,tz,offset", [
    ("protobuf", "gzip", None, 0),
    ("protobuf", "none", "+02:00", 7200),
    ("json", "gzip", "-05:30", -19800),
    ("json", "none", None, 0),
])
def test_every_sequence_through_the_collector(collector, syslogrx, encoding, compression, tz,
                                              offset):
    col, sink = collector
    port = free_udp_port()
    args = ["--output", f"otlp:{col.url}", "--otlp-encoding", encoding,
            "--otlp-compression", compression, "--window", "100000"]
    if tz:
        args += ["--timezone", tz]
    rx = syslogrx(*args, port=port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(HELD_5424, ("127.0.0.1", port))
        s.sendto(HELD_3164, ("127.0.0.1", port))
        s.sendto(HELD_NO_STAMP, ("127.0.0.1", port))
        src_port = s.getsockname()[1]
    gen = sysloggen(port, "--rate", 50000, "--duration", 1, "--format", "rfc5424",
                    "--end-markers", 0)
    rc, out, err = rx.stop()
    assert rc == 0, err
    summ = rx.summary
    tot, o = summ["totals"], summ["otlp"]
    assert o["encoding"] == encoding and o["compression"] == compression
    assert o["original"] is False
    assert summ["config"]["timezone"] == (tz or "local")
    assert o["failed"]["total"] == 0 and o["undelivered"] == 0 and o["in_flight"] == 0
    assert o["records"] == tot["written"] == tot["received"]
    assert o["last_http_status"] == 200
    if compression == "gzip":
        assert o["bytes_sent"] < o["bytes_raw"]
    else:
        assert o["bytes_sent"] == o["bytes_raw"]
    recs = sink.wait_records(o["records"])
    assert len(recs) == o["records"]

    # every sequence number, once: sent = delivered + counted kernel drops
    seqs = seq_records(recs, gen["run_id"])
    assert len(seqs) == len(set(seqs))
    assert len(seqs) + tot["kernel_drops"]["total"] + tot["abandoned"] == gen["sent"] == 50000
    assert {s for _, s in seqs} <= set(range(gen["sent"]))

    # the held-out messages, field by field
    by_body = {r.get("body"): r for r in recs}
    r = by_body["An application event"]
    assert r["timeUnixNano"] == calendar.timegm((2003, 10, 11, 22, 14, 15)) * 10**9 + 3 * 10**6
    assert r["severityNumber"] == 10 and r["severityText"] == "notice"
    assert r["observedTimeUnixNano"] > 0
    assert r["attributes"] == {
        "priority": 165, "facility": 20, "version": 1,
        "hostname": "mymachine.example.com", "appname": "evntslog", "proc_id": "77",
        "msg_id": "ID47",
        "structured_data": {"exampleSDID@32473": {"iut": "3", "eventSource": 'App"lication]'},
                            "x@1": {"k": "v"}},
        "net.transport": "IP.UDP", "net.peer.ip": "127.0.0.1", "net.peer.port": str(src_port),
    }
    r = by_body["Built inbound TCP connection 1"]
    assert r["timeUnixNano"] == r["observedTimeUnixNano"] > 0
    r = by_body["'su root' failed"]
    assert r["timeUnixNano"] == expected_3164_ns(r["observedTimeUnixNano"], offset)
    assert r["severityNumber"] == 9 and r["severityText"] == "info"
    assert r["attributes"] == {
        "priority": 38, "facility": 4, "hostname": "host1", "appname": "su", "proc_id": "123",
        "net.transport": "IP.UDP", "net.peer.ip": "127.0.0.1", "net.peer.port": str(src_port),
    }


def send(port, msgs):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))


def test_503_retry_after_then_200(syslogrx):
    # request 0 is the probe at start (an empty export), 1 the first batch
    sink = LogSink(answer=lambda n, body: (503, {"Retry-After": "2"}, b"busy") if n == 1
                   else None)
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-compression", "none", port=port)
        msgs = [b"<13>Nov 22 03:12:00 h app: m%03d" % i for i in range(20)]
        send(port, msgs)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and \
                sum(len(recs) for _, recs, _ in sink.requests[2:]) < len(msgs):
            time.sleep(0.05)
        rc, out, err = rx.stop()
        assert rc == 0, err
        o = rx.summary["otlp"]
        # the answer to request 1 was 503: request 2 is the same one again
        # (the oldest request is always the next sent), not before Retry-After
        (t1, first, _), (t2, second, _) = sink.requests[1], sink.requests[2]
        assert [r["body"] for r in first] == [r["body"] for r in second]
        assert t2 - t1 >= 2.0
        # every message delivered once past the retry (the batches may split)
        bodies = [r["body"] for _, recs, _ in sink.requests[2:] for r in recs]
        assert sorted(bodies) == [m.split(b": ", 1)[1].decode() for m in msgs]
        assert o["retries"] == 1 and o["records"] == len(msgs) and o["failed"]["total"] == 0
        assert o["batches"] == len(sink.requests) - 2
        assert rx.summary["totals"]["written"] == len(msgs)
        assert "HTTP 503; retrying" in err
    finally:
        sink.close()


def test_400_counted_not_retried(syslogrx):
    sink = LogSink(answer=lambda n, body: (400, {}, b"bad data") if n >= 1 else None)
    try:
        port, mport = free_udp_port(), free_tcp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--metrics", f"127.0.0.1:{mport}",
                      port=port)
        msgs = [b"<13>Nov 22 03:12:00 h app: m%03d" % i for i in range(20)]
        send(port, msgs)
        sink.wait_records(len(msgs))
        # /metrics: the same numbers, once the answer is counted
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = parse(scrape(mport))
            if value(m, "syslogrx_otlp_in_flight_records") == 0 and \
                    value(m, "syslogrx_otlp_last_http_status") == 400:
                break
            time.sleep(0.05)
        assert value(m, "syslogrx_otlp_failed_total", reason="http_400") == len(msgs)
        assert value(m, "syslogrx_otlp_records_total") == 0
        assert value(m, "syslogrx_otlp_batches_total") == 0
        assert value(m, "syslogrx_otlp_retries_total") == 0
        rc, out, err = rx.stop()
        assert rc == 0, err
        o, tot = rx.summary["otlp"], rx.summary["totals"]
        # after the probe, each record was sent once: no retry
        assert sorted(r["body"] for _, recs, _ in sink.requests[1:] for r in recs) == \
            [m.split(b": ", 1)[1].decode() for m in msgs]
        assert o["failed"] == {"total": len(msgs), "http_400": len(msgs)}
        assert o["retries"] == 0 and o["records"] == 0 and o["last_http_status"] == 400
        assert tot["discarded"] == len(msgs) and tot["written"] == 0
        assert "HTTP 400" in err and "bad data" in err
    finally:
        sink.close()


def test_partial_success_counted_per_reason(syslogrx):
    # ExportLogsServiceResponse{partial_success{rejected_log_records 1, "too old"}}
    # to every export: one record of each request rejected
    resp = b"\x0a\x0b\x08\x01\x12\x07too old"
    sink = LogSink(answer=lambda n, body: (200, {}, resp) if n >= 1 else None)
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", port=port)
        msgs = [b"<13>Nov 22 03:12:00 h app: m%03d" % i for i in range(10)]
        send(port, msgs)
        sink.wait_records(len(msgs))
        rc, out, err = rx.stop()
        assert rc == 0, err
        o, tot = rx.summary["otlp"], rx.summary["totals"]
        n = len(sink.requests) - 1              # exports after the probe
        assert o["failed"] == {"total": n, "rejected: too old": n}
        assert o["records"] == tot["written"] == len(msgs) - n and tot["discarded"] == n
        assert re.search(r"rejected 1 of \d+ records: too old", err)
    finally:
        sink.close()


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.pem", cwd=d)
    return os.path.join(d, f"{name}.pem")


@pytest.fixture
def tls_sink(tmp_path):
    d = str(tmp_path)
    ca = make_ca(d, "ca")
    make_ca(d, "otherca")
    with open(os.path.join(d, "san.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
            "srv.key", "-out", "srv.csr", cwd=d)
    openssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.cnf", "-out", "srv.pem", cwd=d)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "srv.pem"), os.path.join(d, "srv.key"))
    sink = LogSink(tls=ctx)
    try:
        yield sink, ca, os.path.join(d, "otherca.pem")
    finally:
        sink.close()


def test_tls_with_ca_file_delivers(syslogrx, tls_sink):
    sink, ca, _ = tls_sink
    port = free_udp_port()
    rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-ca", ca, port=port)
    msgs = [b"<13>Nov 22 03:12:00 h app: tls%03d" % i for i in range(10)]
    send(port, msgs)
    recs = sink.wait_records(len(msgs))
    rc, out, err = rx.stop()
    assert rc == 0, err
    assert sorted(r["body"] for r in recs) == sorted(m.split(b": ", 1)[1].decode() for m in msgs)
    assert rx.summary["otlp"]["records"] == len(msgs)


def test_tls_wrong_ca_refused_at_start(tls_sink):
    sink, _, other = tls_sink
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                 "--output", f"otlp:{sink.url}", "--otlp-ca", other])
    assert r.returncode != 0
    assert "cannot reach the collector" in r.stderr and f"--otlp-ca {other}" in r.stderr
    assert len(sink.requests) == 0


@pytest.mark.parametrize("disk", [False, True], ids=["no-disk-buffer", "disk-buffer-spill"])
def test_collector_killed_for_10s(collector, syslogrx, tmp_path, disk):
    col, sink = collector
    port = free_udp_port()
    args = ["--output", f"otlp:{col.url}", "--rcvbuf", "4M", "--drain-timeout", "60"]
    if disk:
        args += ["--disk-buffer", str(tmp_path / "db")]
    rx = syslogrx(*args, port=port)
    gen = subprocess.Popen([binary("sysloggen"), "--target", f"127.0.0.1:{port}", "--json",
                            "--rate", "10000", "--duration", "16", "--format", "rfc5424",
                            "--end-markers", "0"], stdout=subprocess.PIPE, text=True)
    try:
        # mid-stream: once records flow, the collector dies for 10 s
        sink.wait_records(10000)
        col.stop(signal.SIGKILL)
        time.sleep(10)
        col.start()
        out, _ = gen.communicate(timeout=120)
    finally:
        if gen.poll() is None:
            gen.kill()
            gen.wait()
    sent = json.loads(out.splitlines()[-1])
    rc, _, err = rx.stop(timeout=60)
    assert rc == 0, err
    tot, o = rx.summary["totals"], rx.summary["otlp"]
    recs = sink.wait_records(o["records"])
    seqs = seq_records(recs, sent["run_id"])
    assert o["retries"] > 0                      # the outage was seen
    assert o["failed"]["total"] == 0 and o["undelivered"] == 0
    # at least once: a request the collector forwarded but died before
    # answering is sent again, so the sink may hold a few records twice;
    # each is acknowledged once, and none is missing
    unique = set(seqs)
    assert o["records"] == tot["written"] == tot["received"] == len(unique)
    print(f"records the sink holds twice: {len(seqs) - len(unique)}")
    # counted losses: the kernel's drops, and what was still queued when the
    # exit drain found the window full (abandoned)
    drops = tot["kernel_drops"]["total"] + tot["abandoned"]
    assert len(unique) + drops == sent["sent"] == 160000, tot
    if disk:
        db = rx.summary["disk_buffer"]
        assert drops == 0, err                   # spilled, not lost
        assert db["written"] > 0 and db["replayed"] == db["written"] and db["dropped"] == 0


def test_format_json_gains_time_and_sd(syslogrx, tmp_path):
    """--format json carries the same normalised time as OTLP's timeUnixNano
    (RFC 3164 in --timezone) and the structured data parsed."""
    out = tmp_path / "out.json"
    port = free_udp_port()
    rx = syslogrx("--output", f"file:{out}", "--format", "json", "--timezone", "+02:00",
                  port=port)
    send(port, [HELD_5424, HELD_3164])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not out.exists() or
                                           out.read_text().count("\n") < 2):
        time.sleep(0.05)
    rc, _, err = rx.stop()
    assert rc == 0, err
    rows = {r["app_name"]: r for r in map(json.loads, out.read_text().splitlines())}
    r = rows["evntslog"]
    assert r["time_unix_nano"] == calendar.timegm((2003, 10, 11, 22, 14, 15)) * 10**9 + 3 * 10**6
    assert r["sd"] == {"exampleSDID@32473": {"iut": "3", "eventSource": 'App"lication]'},
                       "x@1": {"k": "v"}}
    r = rows["su"]
    assert "sd" not in r
    received = calendar.timegm(time.strptime(r["received"][:19], "%Y-%m-%dT%H:%M:%S")) * 10**9
    assert r["time_unix_nano"] == expected_3164_ns(received, 7200)


def test_reliable_kill9_restart_nothing_lost(collector, tmp_path, procs):
    """--disk-buffer reliable: the collector dies mid-stream, syslogrx is
    killed with -9 during the outage; the collector back, a new syslogrx on
    the same DIR sends what the first one left: every sequence number the
    sender sent arrives, duplicates (sent but not acknowledged before the
    kill) counted."""
    col, sink = collector
    buf = tmp_path / "buf"
    rate, seconds = 10000, 6
    args = ["--output", f"otlp:{col.url}", "--disk-buffer", str(buf), "--disk-buffer-mode",
            "reliable", "--rcvbuf", "16M", "--sockets", "2", "--threads", "2"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    u1, u2 = free_udp_port(), free_udp_port()
    a = Syslogrx(tmp_path / "a", *args, port=u1)
    procs.append(a)
    gen = subprocess.Popen([binary("sysloggen"), "--target", f"127.0.0.1:{u1}", "--json",
                            "--rate", str(rate), "--duration", str(seconds), "--sources", "4",
                            "--format", "rfc5424", "--end-markers", "0"],
                           stdout=subprocess.PIPE, text=True)
    try:
        sink.wait_records(rate)                  # flowing: then the collector dies
        col.stop(signal.SIGKILL)
        out, _ = gen.communicate(timeout=60)
    finally:
        if gen.poll() is None:
            gen.kill()
            gen.wait()
    before = json.loads(out.splitlines()[-1])
    # a reads what the kernel holds, all of it to disk: until its window stops moving
    deadline, last = time.monotonic() + 10, None
    while time.monotonic() < deadline:
        queued = sum(int(f[4].split(":")[1], 16) for f in udp_rows(u1))
        if queued == 0 and last == 0:
            break
        last = queued
        time.sleep(0.5)
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(timeout=10)
    assert list(buf.glob("*.seg"))

    col.start()
    b = Syslogrx(tmp_path / "b", *args, port=u2)
    procs.append(b)
    after = sysloggen(u2, "--rate", rate, "--duration", 1, "--format", "rfc5424",
                      "--end-markers", 0)
    want = before["sent"] + after["sent"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        recs = sink.records()
        if len(set(seq_records(recs, before["run_id"]))) == before["sent"] and \
                len(set(seq_records(recs, after["run_id"]))) == after["sent"]:
            break
        time.sleep(0.2)
    rc, _, err = b.stop()
    assert rc == 0, err
    recs = sink.records()
    got_before = seq_records(recs, before["run_id"])
    got_after = seq_records(recs, after["run_id"])
    assert set(got_before) == {(f["flow"], s) for f in before["flows"] for s in range(f["sent"])}
    assert len(set(got_after)) == after["sent"] == len(got_after)
    db = b.summary["disk_buffer"]
    assert db["recovered"] > 0 and db["corrupt"] == 0 and db["dropped"] == 0 and db["msgs"] == 0
    dups = len(got_before) - len(set(got_before))
    print(f"before: {before['sent']} sent, {dups} duplicates, {db['recovered']} recovered")
    assert dups <= db["recovered"]
    assert want == len(set(got_before)) + len(got_after)


def test_sigterm_drains_within_drain_timeout_and_counts_the_rest(syslogrx):
    """A collector that only ever answers 503: at SIGTERM syslogrx keeps
    trying for --drain-timeout, then counts what is left as undelivered and
    names it; the window's books close (received = discarded)."""
    sink = LogSink(answer=lambda n, body: (503, {}, b"overloaded") if n >= 1 else None)
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--drain-timeout", "1", port=port)
        msgs = [b"<13>Nov 22 03:12:00 h app: m%03d" % i for i in range(30)]
        send(port, msgs)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and \
                sum(len(recs) for _, recs, _ in sink.requests[1:]) < len(msgs):
            time.sleep(0.05)
        rc, out, err = rx.stop()
        assert rc == 0, err
        o, tot = rx.summary["otlp"], rx.summary["totals"]
        assert o["undelivered"] == len(msgs) and o["records"] == 0 and o["in_flight"] == 0
        assert o["retries"] >= 1 and o["failed"]["total"] == 0 and o["last_http_status"] == 503
        assert tot["received"] == tot["discarded"] == len(msgs) and tot["written"] == 0
        assert f"{len(msgs)} record(s) not acknowledged within --drain-timeout 1s" in err
    finally:
        sink.close()


def test_upgrade_with_otlp_output(collector, tmp_path):
    """Two upgrades in place (kill -USR2) under load: each process's records
    reach the collector; every sequence number once, but for counted drops."""
    from support.rx_watch import Receiver, listen_for
    from support.books import upgraded_twice_delivered
    col, sink = collector
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "64M", "--output", f"otlp:{col.url}",
                  settings={"sockets": 4, "threads": 2})
    upgraded_twice_delivered(rx, listen, "otlp", "records",
                             lambda n: [r["body"] for r in sink.wait_records(n)])


def test_ordered_keeps_a_spread_flow_in_order(collector, syslogrx):
    """--ordered with the OTLP output: one flow spread by random over 8
    sockets and 2 threads reaches the collector's far side in the order it
    was sent (requests go one at a time, oldest first)."""
    col, sink = collector
    port = free_udp_port()
    rx = syslogrx("--output", f"otlp:{col.url}", "--balance", "random", "--sockets", "8",
                  "--threads", "2", "--rcvbuf", "8M", "--ordered=100", port=port)
    msgs = [b"<13>Nov 22 03:12:00 host app: ordered %06d" % i for i in range(5000)]
    from support.load import send_from
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        send_from(sock, ("127.0.0.1", port), msgs, rate=20000)   # one flow, paced
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    assert s["totals"]["kernel_drops"]["total"] == 0
    assert s["otlp"]["records"] == len(msgs) and s["ordering"]["late"] == 0
    assert sum(1 for k in s["sockets"] if k["received"]) > 1       # spread
    recs = sink.wait_records(len(msgs))
    assert [r["body"] for r in recs] == [m.split(b": ", 1)[1].decode() for m in msgs]



ORIGINALS = [
    HELD_5424,
    HELD_3164,
    b"<13>Nov 26 10:00:00 host app: caf\xe9 \xff not UTF-8",
    b'<14>1 2026-11-26T10:00:00Z h a - - [x@1 v="\xe9"] bad byte in SD',
    b"<13>1 - h a - - - a NUL\x00inside",
    b"<999>malformed\nline",
    b"<14>1 - h a - - - \xef\xbb\xbfBOM, caf\xc3\xa9, tab\t, ESC\x1b[0m, CRLF\r\n",
    b"no PRI at all",
]


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_original_through_the_collector(collector, syslogrx, encoding):
    """--otlp-original: every datagram comes out of the real collector as
    its record's body, byte for byte (a string, or bytesValue when it is not
    UTF-8 text), with the parsed attributes beside it."""
    col, sink = collector
    port = free_udp_port()
    rx = syslogrx("--output", f"otlp:{col.url}", "--otlp-encoding", encoding, "--otlp-original",
                  port=port, sequences=False)
    send(port, ORIGINALS)
    rc, _, err = rx.stop()
    assert rc == 0, err
    tot, o = rx.summary["totals"], rx.summary["otlp"]
    assert tot["received"] + tot["kernel_drops"]["total"] == len(ORIGINALS)
    assert o["records"] == tot["written"] == tot["received"] and o["failed"]["total"] == 0
    assert o["original"] is True
    recs = sink.wait_records(o["records"])
    assert len(recs) == o["records"]
    bodies = [r["body"].encode() if isinstance(r["body"], str) else r["body"] for r in recs]
    if tot["kernel_drops"]["total"] == 0:
        assert sorted(bodies) == sorted(ORIGINALS)
    assert set(bodies) <= set(ORIGINALS)
    by_body = dict(zip(bodies, recs))
    if HELD_5424 in by_body:
        a = by_body[HELD_5424]["attributes"]
        assert a["hostname"] == "mymachine.example.com" and a["msg_id"] == "ID47"
        assert isinstance(by_body[HELD_5424]["body"], str)
    # not UTF-8 text: bytesValue, never a string with U+FFFD
    for d in ORIGINALS[2:5]:
        if d in by_body:
            assert isinstance(by_body[d]["body"], bytes), d


def sd_params_of(body, encoding):
    """[(SD-ID, [(name, value), ...]), ...] of the first record of a request,
    in the order they were sent: a list, not a dict, so that a duplicate
    name shows."""
    if encoding == "json":
        rec = json.loads(body)["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
        sd = next(a["value"]["kvlistValue"]["values"] for a in rec["attributes"]
                  if a["key"] == "structured_data")
        return [(e["key"], [(p["key"], p["value"]["stringValue"])
                            for p in e["value"]["kvlistValue"]["values"]]) for e in sd]

    def one(b, f):
        return next(v for n, _, v in otlp_wire.fields(b) if n == f)

    def kv(b):                       # KeyValue: key 1, AnyValue 2
        return one(b, 1).decode(), one(b, 2)

    def kvlist(anyvalue):            # AnyValue.kvlist_value 6: KeyValueList.values 1
        return [kv(v) for n, _, v in otlp_wire.fields(one(anyvalue, 6)) if n == 1]

    rec = one(one(one(body, 1), 2), 2)   # resourceLogs, scopeLogs, logRecords
    attrs = [kv(v) for n, _, v in otlp_wire.fields(rec) if n == 6]
    sd = next(v for k, v in attrs if k == "structured_data")
    return [(k, [(pk, one(pv, 1).decode()) for pk, pv in kvlist(v)]) for k, v in kvlist(sd)]


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_duplicate_sd_parameter_names_are_all_sent(syslogrx, encoding):
    """otlp.md: "Duplicate parameter names inside one SD element are all
    sent". Judged on the request's own bytes (the sink's decoder keeps
    attributes in a dict, which would hide a duplicate): the element's
    values are every parameter, in the order the sender wrote them."""
    sink = LogSink()
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-encoding", encoding,
                      "--otlp-compression", "none", port=port)
        send(port, [b'<14>1 2026-11-28T00:00:00Z h app - - [dup@1 a="1" a="2" b="3" a="4"] m'])
        assert len(sink.wait_records(1)) == 1
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sink.close()
    body = next(body for _, recs, body in sink.requests if recs)
    assert sd_params_of(body, encoding) == \
        [("dup@1", [("a", "1"), ("a", "2"), ("b", "3"), ("a", "4")])]


def test_at_most_4_requests_outstanding_then_the_window_holds(syslogrx):
    """otlp.md: "Messages are grouped into requests: 1 MiB of records, or
    what arrived in 10 ms; at most 4 requests are outstanding, then the input
    window holds what arrives". The collector answers every request 503
    (Retry-After 1) until released: 10 messages 100 ms apart are 10
    requests' worth; 4 are outstanding (one record each), the other 6 wait
    in the window (which holds all 10: a batch leaves it once answered).
    Released, all 10 arrive."""
    release = threading.Event()
    sink = LogSink(answer=lambda n, body: None if n == 0 or release.is_set()
                   else (503, {"Retry-After": "1"}, b"busy"))
    try:
        port, mport = free_udp_port(), free_tcp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-compression", "none",
                      "--metrics", f"127.0.0.1:{mport}", port=port)
        msgs = [b"<13>Nov 22 03:12:00 h app: m%03d" % i for i in range(10)]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for m in msgs:
                s.sendto(m, ("127.0.0.1", port))
                time.sleep(0.1)             # each its own request (10 ms linger)

        def held():
            m = parse(scrape(mport))
            return (value(m, "syslogrx_otlp_in_flight_records"),
                    value(m, "syslogrx_window_messages"))
        wait_until(lambda: held()[1] == len(msgs) and held()[0] >= 4, "every message taken")
        assert held() == (4, len(msgs))
        release.set()
        wait_until(lambda: held() == (0, 0), "all delivered")
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        release.set()
        sink.close()
    delivered = [r["body"] for _, recs, _ in sink.requests if recs for r in recs]
    assert sorted(set(delivered)) == [m.split(b": ", 1)[1].decode() for m in msgs]
    assert rx.summary["otlp"]["records"] == len(msgs)


def test_a_request_is_at_most_1_mib_of_records(syslogrx):
    """otlp.md: "Messages are grouped into requests: 1 MiB of records, or
    what arrived in 10 ms". The collector answers 503 (Retry-After 1) until
    the window holds 600 datagrams of 8,000 bytes (4.8 MB), then takes
    everything: what the window held goes out in requests of 1 MiB of
    records, each closed by the record that reached 1 MiB (at most one
    record and the request's frame over), none larger."""
    release = threading.Event()
    sink = LogSink(answer=lambda n, body: None if n == 0 or release.is_set()
                   else (503, {"Retry-After": "1"}, b"busy"))
    n, size = 600, 8000
    try:
        port, mport = free_udp_port(), free_tcp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-compression", "none",
                      "--otlp-encoding", "protobuf", "--rcvbuf", "32M",
                      "--metrics", f"127.0.0.1:{mport}", port=port)
        msgs = [b"<13>Nov 22 03:12:00 h app: m%04d " % i for i in range(n)]
        msgs = [m + b"x" * (size - len(m)) for m in msgs]
        send(port, msgs)

        def window():
            return value(parse(scrape(mport)), "syslogrx_window_messages")
        wait_until(lambda: window() == n, "every datagram held in the window")
        release.set()
        wait_until(lambda: window() == 0, "all delivered")
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        release.set()
        sink.close()
    bodies = [body for _, recs, body in sink.requests if recs]
    delivered = [r["body"] for _, recs, _ in sink.requests[1:] if recs for r in recs]
    assert len(set(delivered)) == n
    mib, one_record = 1 << 20, size + 1024
    assert max(len(b) for b in bodies) <= mib + one_record, sorted(len(b) for b in bodies)
    assert sum(len(b) >= mib for b in bodies) >= 3, sorted(len(b) for b in bodies)


def buffers_mapped(trace):
    """The lengths of the anonymous mappings of 2 to 3 MiB that syslogrx's
    threads asked for, from strace -ff -e trace=mmap -o TRACE (a file per
    thread: no call is split across lines). With glibc's mmap threshold
    fixed at 128 KiB each allocation past it is a mapping of its own."""
    text = "".join(open(f).read() for f in glob.glob(f"{trace}.*"))
    return sorted(int(n) for n in re.findall(r"mmap\(NULL, (\d+), PROT_READ\|PROT_WRITE, "
                                             r"MAP_PRIVATE\|MAP_ANONYMOUS", text)
                  if 2 << 20 <= int(n) < 3 << 20)


def test_request_buffers_are_allocated_at_start(syslogrx, tmp_path):
    """otlp.md: "Memory: 4 request buffers of about 2.25 MiB and one gzip
    buffer as large, allocated at start". Under strace (the allocations as
    the kernel is asked for them, each its own mapping): five buffers of 2.2 to 2.3 MiB before
    the ready line, and not one more while 1,000 datagrams of up to 8,000
    bytes go out, gzipped."""
    trace = tmp_path / "mmap.strace"
    sink = LogSink()
    n = 1000
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-compression", "gzip",
                      "--rcvbuf", "64M", port=port,
                      prefix=("env", "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072",
                              "strace", "-ff", "-qq", "-e", "trace=mmap", "-o", str(trace)))
        at_start = buffers_mapped(trace)
        send(port, [b"<13>Nov 22 03:12:00 h app: m%04d " % i + b"x" * (i * 8) for i in range(n)])
        assert len(sink.wait_records(n)) == n
        # SIGTERM to syslogrx itself (strace's child): strace ends with it
        with open(f"/proc/{rx.p.pid}/task/{rx.p.pid}/children") as f:
            os.kill(int(f.read().split()[0]), signal.SIGTERM)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sink.close()
    assert len(at_start) == 5, at_start
    assert all(2.2 * (1 << 20) <= b <= 2.3 * (1 << 20) for b in at_start), at_start
    assert buffers_mapped(trace) == at_start
    assert rx.summary["otlp"]["records"] == n
