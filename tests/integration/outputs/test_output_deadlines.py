"""tcp and tls outputs against destinations that hang instead of failing
(docs/outputs.md#faults): every connect, handshake and close has a deadline,
and a connected server that takes nothing is a stall, shown and mended.

- A port whose SYNs go unanswered (its accept queue full), a TLS server that
  never answers, one that trickles its handshake a byte every 3 s: syslogrx
  is ready at once (the start's attempt ends within START_CONNECT_S) and says
  the destination is "not reachable yet"; the stop returns at once.
- A server that stops reading mid-stream (tcp and tls): within
  --stall-timeout of the output's last progress, one log line, /readyz 503
  naming the output, syslogrx_output_stalled 1; it reconnects; once the
  server reads again every sequence number of the load arrives, although
  the first connection is closed unread (what it held is sent again).
- A server that answers our FIN with a byte a second: the stop returns
  within CLOSE_S of the close.
- A connection reset with messages unread (tcp and tls): what the server
  may not have read is sent again on the next connection, every sequence
  number arrives, the resend counted (output_resent); a stop before the
  resend, or one that gives up on a server that stopped reading, counts
  what the server may not have read (output_uncertain): every sequence
  number delivered or counted."""
import re
import ssl
import time

import pytest

from support.procs import Syslogrx, log_text
from support.flows import FLOWS, by_flow, start_gen
from support.hung_peers import mute_server, syn_dropper, trickle_server
from support.ports import free_tcp_port, free_udp_port
from support.prom import http_get, parse, scrape, value
from support.tcp_sinks import FrameSink
from support.tls_server import Pki

START_CONNECT_S = 2      # src/rx/sink/tcp.c START_CONNECT_MS; otlp.c CONNECT_TIMEOUT_MS
KAFKA_START_S = 5        # src/rx/sink/kafka.c METADATA_TIMEOUT_MS
CLOSE_S = 2              # src/rx/sink/tcp.c CLOSE_MS
STALL_S = 2              # --stall-timeout in these tests
SLACK_S = 2              # for a loaded host


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


def output_args(kind, port, pki):
    if kind == "otlp":
        return ["--output", f"otlp:https://127.0.0.1:{port}/v1/logs",
                "--otlp-ca", pki.path("ca.pem")]
    if kind == "kafka":
        return ["--output", f"kafka:127.0.0.1:{port}/logs"]
    args = ["--output", f"{kind}:127.0.0.1:{port}"]
    return args + (["--tls-ca", pki.path("ca.pem")] if kind == "tls" else [])


def not_reachable(kind, port, why):
    """The start's line for a destination that does not answer."""
    if kind == "otlp":
        return f"--output otlp:https://127.0.0.1:{port}/v1/logs: the collector is not reachable yet"
    if kind == "kafka":
        return f"--output kafka:127.0.0.1:{port}/logs: no broker of 127.0.0.1:{port} answered"
    return f"{kind}:127.0.0.1:{port}: not reachable yet; will retry ({why})"


def server_tls(pki):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki.path("srv.pem"), pki.path("srv.key"))
    return ctx


def start_timed(tmp_path, procs, *args):
    """syslogrx started; (it, seconds to its ready line)."""
    t0 = time.monotonic()
    rx = Syslogrx(tmp_path, *args, port=free_udp_port(),
                  ready_timeout=KAFKA_START_S + SLACK_S + 5)
    procs.append(rx)
    return rx, time.monotonic() - t0


def gone(procs):
    """Kills what a failed test left running: a server's close waits for
    its connections to end."""
    for p in procs:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()


def stop_timed(rx, bound):
    t0 = time.monotonic()
    rc, _, err = rx.stop(timeout=bound + 5)
    took = time.monotonic() - t0
    assert took < bound, f"the stop took {took:.1f}s: {err}"
    return rc, err


HANGS = {
    "syn-dropped": (syn_dropper, "no answer to the connection in time"),
    "mute-tls": (mute_server, "the server did not complete the TLS handshake in time"),
    "trickled-tls": (trickle_server, "the server did not complete the TLS handshake in time"),
}


@pytest.mark.parametrize("kind,hang", [
    ("tcp", "syn-dropped"), ("tls", "syn-dropped"), ("tls", "mute-tls"), ("tls", "trickled-tls"),
    ("otlp", "syn-dropped"), ("otlp", "mute-tls"), ("otlp", "trickled-tls"),
    ("kafka", "syn-dropped"), ("kafka", "mute-tls")])
def test_a_destination_that_hangs_does_not_hold_the_start(tmp_path, procs, pki, kind, hang):
    server, why = HANGS[hang]
    mport = free_tcp_port()
    with server() as port:
        rx, took = start_timed(tmp_path, procs, "--metrics", str(mport),
                               *output_args(kind, port, pki))
        bound = (KAFKA_START_S if kind == "kafka" else START_CONNECT_S) + SLACK_S
        assert took < bound, f"ready after {took:.1f}s"
        assert not_reachable(kind, port, why) in rx.early_err, rx.early_err
        assert value(parse(scrape(mport)), "syslogrx_output_up") == 0
        rc, err = stop_timed(rx, SLACK_S + 3)
    assert rc == 0, err


@pytest.mark.parametrize("kind", ["tcp", "tls"])
def test_a_server_that_stops_reading_is_a_stall(tmp_path, procs, pki, kind):
    # A server buffer larger than the history's slots (256 KiB): what it
    # holds unread is lost unless the resend covers its window.
    sink = FrameSink(tls=server_tls(pki) if kind == "tls" else None, stall_after=2000,
                     rcvbuf=1 << 20)
    mport = free_tcp_port()
    rate, seconds = 5000, 8
    try:
        rx, _ = start_timed(tmp_path, procs, "--metrics", str(mport), "--format", "rfc5424",
                            "--stall-timeout", str(STALL_S), "--window", "100000",
                            "--rcvbuf", "16M", *output_args(kind, sink.port, pki))
        port = int(rx.argv[rx.argv.index("--listen") + 1].rsplit(":", 1)[1])
        gen = start_gen(port, "stall", rate=rate, seconds=seconds)
        assert sink.stalled.wait(30), "the load never reached the server"
        # The server's window and our send buffer fill; from the output's
        # last progress (written_total's last move) --stall-timeout, then
        # /readyz and the metric say so.
        stalled = (503, f"{kind}:127.0.0.1:{sink.port} is stalled: connected, its destination "
                        "has taken nothing for --stall-timeout; reconnecting\n")
        written, moved = None, time.monotonic()
        while True:
            m = parse(scrape(mport))
            got = http_get(mport, "/readyz")
            if value(m, "syslogrx_written_total") != written:
                written, moved = value(m, "syslogrx_written_total"), time.monotonic()
            if got == stalled and value(m, "syslogrx_output_stalled") == 1:
                break
            assert time.monotonic() - moved < STALL_S + SLACK_S, \
                f"no progress for {time.monotonic() - moved:.1f}s, /readyz still {got}"
            time.sleep(0.05)
        sink.resume()
        assert gen.wait(timeout=60) == 0
        sent = rate * seconds
        t0 = time.monotonic()
        while (got := sum(len(set(v)) for v in by_flow(sink.msgs, "stall").values())) < sent:
            if time.monotonic() - t0 > 60:
                rc, err = stop_timed(rx, CLOSE_S + SLACK_S + 3)
                raise AssertionError(f"{got} of {sent} arrived, {sink.accepted} connections: "
                                     f"{err}")
            time.sleep(0.2)
        # The stall is over once a connection took all it was given for a
        # whole --stall-timeout: more messages after that long clear it.
        t0 = time.monotonic()
        while value(parse(scrape(mport)), "syslogrx_output_stalled") != 0:
            assert time.monotonic() - t0 < STALL_S + 10, "still stalled"
            start_gen(port, "after", rate=100, seconds=0.1).wait(timeout=30)
            time.sleep(0.2)
        assert http_get(mport, "/readyz")[0] == 200
        rc, err = stop_timed(rx, CLOSE_S + SLACK_S + 3)
    finally:
        gone(procs)
        sink.close()
    assert rc == 0, err
    assert err.count("is stalled") == 0 and err.count(": stalled: ") == 1, err
    assert "the server takes messages again (syslogrx_output_stalled 0)" in err, err
    t = rx.summary["totals"]
    assert t["kernel_drops"]["total"] == 0 and t["received"] == t["written"]
    assert rx.summary["output_stalled"] is False and rx.summary["output_up"] is True
    flows = by_flow(sink.msgs, "stall")
    assert len(flows) == FLOWS
    missing = {f: set(range(sent // FLOWS)) - set(v) for f, v in flows.items()}
    assert not any(missing.values()), {f: sorted(m)[:10] for f, m in missing.items()}


@pytest.mark.parametrize("kind", ["tcp", "tls"])
def test_a_server_that_trickles_after_our_fin_does_not_hold_the_stop(tmp_path, procs, pki,
                                                                      kind):
    sink = FrameSink(tls=server_tls(pki) if kind == "tls" else None, trickle_after_eof=True)
    try:
        rx, _ = start_timed(tmp_path, procs, "--format", "rfc5424",
                            *output_args(kind, sink.port, pki))
        port = int(rx.argv[rx.argv.index("--listen") + 1].rsplit(":", 1)[1])
        assert start_gen(port, "fin", rate=1000, seconds=1).wait(timeout=30) == 0
        t0 = time.monotonic()
        while sum(len(v) for v in by_flow(sink.msgs, "fin").values()) < 1000:
            assert time.monotonic() - t0 < 30, "not all arrived"
            time.sleep(0.05)
        rc, err = stop_timed(rx, CLOSE_S + SLACK_S)
    finally:
        gone(procs)
        sink.close()
    assert rc == 0, err
    assert rx.summary["totals"]["written"] == 1000
    # no FIN from the server: what its window may hold unread is counted
    # uncertain, not taken as read
    assert 0 < rx.summary["output_uncertain"] <= 1000, err


def test_a_stall_with_a_reliable_disk_buffer_loses_nothing_to_kill_9(tmp_path, procs, pki):
    """The disk buffer keeps a record as long as the output could send it
    again: a server that stops reading, syslogrx killed with -9 during the
    stall, the server gone with what it held unread; the next syslogrx on
    the same disk buffer, to a server that reads, delivers every sequence
    number. (A record released a second after its write would be lost:
    the stalled server had older ones unread.)"""
    first = FrameSink(stall_after=2000, rcvbuf=1 << 20)
    mport, db = free_tcp_port(), tmp_path / "db"
    rate, seconds = 5000, 8           # more than the server and our socket hold
    flags = ["--format", "rfc5424", "--stall-timeout", str(STALL_S), "--window", "100000",
             "--rcvbuf", "16M", "--disk-buffer", str(db), "--disk-buffer-mode", "reliable"]
    try:
        rx, _ = start_timed(tmp_path, procs, "--metrics", str(mport), *flags,
                            *output_args("tcp", first.port, pki))
        port = int(rx.argv[rx.argv.index("--listen") + 1].rsplit(":", 1)[1])
        gen = start_gen(port, "kill9", rate=rate, seconds=seconds)
        assert gen.wait(timeout=60) == 0
        t0 = time.monotonic()
        while value(parse(scrape(mport)), "syslogrx_output_stalled") != 1:
            assert time.monotonic() - t0 < 30, "no stall"
            time.sleep(0.05)
        rx.p.kill()
        rx.p.wait()
    finally:
        gone(procs)
        first.close()                   # what it held unread is gone
    second = FrameSink()
    try:
        rx2 = Syslogrx(tmp_path, *flags, *output_args("tcp", second.port, pki),
                       port=free_udp_port(), summary=False)
        procs.append(rx2)
        sent = rate * seconds
        msgs = lambda: first.msgs + second.msgs        # noqa: E731
        t0 = time.monotonic()
        while (got := sum(len(set(v)) for v in by_flow(msgs(), "kill9").values())) < sent:
            if time.monotonic() - t0 > 60:
                rc, err = stop_timed(rx2, CLOSE_S + SLACK_S + 3)
                raise AssertionError(f"{got} of {sent} arrived: {err}")
            time.sleep(0.2)
        rc, err = stop_timed(rx2, CLOSE_S + SLACK_S + 3)
    finally:
        gone(procs)
        second.close()
    assert rc == 0, err


@pytest.mark.parametrize("kind", ["tcp", "tls"])
def test_a_stop_is_not_held_by_a_stalled_send(tmp_path, procs, pki, kind):
    """A send blocked on a server that stopped reading waits up to
    --stall-timeout; the stop's --stop-timeout is shorter and wins: the
    stop gives up within it and counts what it held, none unaccounted."""
    # 9 MB of load: more than the server's 64 KiB and our send buffer hold
    sink = FrameSink(tls=server_tls(pki) if kind == "tls" else None, stall_after=2000,
                     rcvbuf=1 << 16)
    stop_s = 2
    try:
        rx, _ = start_timed(tmp_path, procs, "--format", "rfc5424", "--stall-timeout", "600",
                            "--stop-timeout", str(stop_s), "--window", "100000",
                            "--rcvbuf", "16M", *output_args(kind, sink.port, pki))
        port = int(rx.argv[rx.argv.index("--listen") + 1].rsplit(":", 1)[1])
        gen = start_gen(port, "held", rate=10000, seconds=3)
        assert sink.stalled.wait(30), "the load never reached the server"
        assert gen.wait(timeout=60) == 0
        # the books close on 30,000 sent: a number the generator could not
        # send (it says so) would be a gap no figure of ours counts
        said = gen.stderr.read().decode()
        assert "not sent" not in said, said
        rc, err = stop_timed(rx, stop_s + SLACK_S + 3)
    finally:
        gone(procs)
        sink.close()
    assert rc == 0 and "exiting now" not in err, err   # not the last-resort exit
    t = rx.summary["totals"]
    assert t["given_up"] > 0, err
    assert t["received"] == t["written"] + t["discarded"] + t["given_up"], t
    assert f"stop: gave up {t['given_up']} received message(s) not written" in err, err
    # written, and held unread by the server when it closed: counted
    # uncertain, not delivered
    assert_counted(rx, err, sink, "held", 30000, kind)


def assert_counted(rx, err, sink, run, sent, kind):
    """Every sequence number of run delivered to sink or counted (given up,
    uncertain, kernel drops, abandoned); some counted uncertain, and said."""
    s = rx.summary
    t = s["totals"]
    got = sum(len(set(v)) for v in by_flow(sink.msgs, run).values())
    assert got < sent, "nothing lost: the fault did not bite"
    counted = t["given_up"] + s["output_uncertain"] + t["kernel_drops"]["total"] + t["abandoned"]
    assert sent - got <= counted, (sent, got, t, s["output_uncertain"])
    assert 0 < s["output_uncertain"] <= t["written"], (s["output_uncertain"], t)
    # each count said once: a reset connection's, the stop's
    said = sum(int(n) for n in UNCERTAIN.findall(log_text(err)))
    assert said == s["output_uncertain"], err


UNCERTAIN = re.compile(r": (\d+) message\(s\) written .*may not have been read.* \(counted: "
                       r"output_uncertain, syslogrx_output_uncertain_total\)")


def run_to_a_reset(tmp_path, procs, pki, kind, sink, run, seconds, *more):
    """seconds of run at 2,000/s to sink, which resets; then the stop
    (within --stop-timeout 2 or the close's bound, and slack). Returns
    (syslogrx, exit code, stderr); sink closed."""
    try:
        rx, _ = start_timed(tmp_path, procs, "--format", "rfc5424", "--rcvbuf", "16M", *more,
                            *output_args(kind, sink.port, pki))
        port = int(rx.argv[rx.argv.index("--listen") + 1].rsplit(":", 1)[1])
        assert start_gen(port, run, rate=2000, seconds=seconds).wait(timeout=60) == 0
        assert sink.reset.wait(30), "the server never reset"
        rc, err = stop_timed(rx, CLOSE_S + SLACK_S + 3)
    finally:
        gone(procs)
        sink.close()
    return rx, rc, err


RESENT = re.compile(r"sent again the (\d+) message\(s\)")


@pytest.mark.parametrize("kind", ["tcp", "tls"])
def test_a_reset_connection_is_sent_again_and_counted(tmp_path, procs, pki, kind):
    """The server resets its first connection with messages unread: the
    next connection gets what it may not have read first; every sequence
    number arrives, the duplicates no more than output_resent, which the
    summary and the metric agree on, and the log's lines do not pass."""
    sink = FrameSink(tls=server_tls(pki) if kind == "tls" else None, reset_after=300)
    mport = free_tcp_port()
    rate, seconds = 2000, 2
    try:
        rx, _ = start_timed(tmp_path, procs, "--metrics", str(mport), "--format", "rfc5424",
                            "--rcvbuf", "16M", *output_args(kind, sink.port, pki))
        port = int(rx.argv[rx.argv.index("--listen") + 1].rsplit(":", 1)[1])
        assert start_gen(port, "reset", rate=rate, seconds=seconds).wait(timeout=60) == 0
        assert sink.reset.wait(30), "the server never reset"
        sent = rate * seconds
        t0 = time.monotonic()
        while (got := sum(len(set(v)) for v in by_flow(sink.msgs, "reset").values())) < sent:
            assert time.monotonic() - t0 < 30, f"{got} of {sent} arrived"
            time.sleep(0.1)
        metric = value(parse(scrape(mport)), "syslogrx_output_resent_total")
        rc, err = stop_timed(rx, CLOSE_S + SLACK_S + 3)
    finally:
        gone(procs)
        sink.close()
    assert rc == 0, err
    s = rx.summary
    # the resends said, and the buffer a failed send was writing
    said = sum(int(n) for n in RESENT.findall(err))
    assert 0 < said <= s["output_resent"] == metric, (err, s["output_resent"], metric)
    dups = sum(len(v) - len(set(v)) for v in by_flow(sink.msgs, "reset").values())
    assert dups <= s["output_resent"], (dups, s["output_resent"])
    # Everything written once; output_uncertain is an upper bound (what a
    # reset connection carried past what the resend covers: on a loaded host
    # the connection can carry more than that before the server's reset).
    assert s["totals"]["written"] == sent, s["totals"]
    assert s["output_uncertain"] <= sent, s["output_uncertain"]


@pytest.mark.parametrize("kind", ["tcp", "tls"])
def test_a_reset_after_dropping_what_it_read_is_counted(tmp_path, procs, pki, kind):
    """A server that read 2.5 s of messages, kept the first 300 (a proxy
    that dropped the rest) and reset the connection: the resend covers the
    last second; the rest the connection carried is counted uncertain at
    once, not taken as delivered. Every sequence number delivered or
    counted."""
    # a small window: what the server may hold unread stays under a second
    sink = FrameSink(tls=server_tls(pki) if kind == "tls" else None, reset_after=5000,
                     keep=300, rcvbuf=1 << 16)
    rx, rc, err = run_to_a_reset(tmp_path, procs, pki, kind, sink, "dropped", 4)
    assert rc == 0, err
    assert rx.summary["output_resent"] > 0, rx.summary
    assert "the connection was reset: " in err, err
    assert_counted(rx, err, sink, "dropped", 2000 * 4, kind)


@pytest.mark.parametrize("kind", ["tcp", "tls"])
def test_a_stop_before_the_resend_counts_it_uncertain(tmp_path, procs, pki, kind):
    """The server resets its connection with messages unread and refuses
    every later one; the stop gives up after --stop-timeout: the window is
    given up, what the reset connection may not have read is counted
    uncertain, none unaccounted: received = written + discarded + given_up
    and every sequence number delivered or counted."""
    sink = FrameSink(tls=server_tls(pki) if kind == "tls" else None, reset_after=300,
                     refuse_after_reset=True)
    rx, rc, err = run_to_a_reset(tmp_path, procs, pki, kind, sink, "uncertain", 2,
                                 "--stop-timeout", "2")
    assert rc == 0, err
    t = rx.summary["totals"]
    assert t["received"] == t["written"] + t["discarded"] + t["given_up"], t
    assert rx.summary["output_resent"] == 0, rx.summary
    assert_counted(rx, err, sink, "uncertain", 2000 * 2, kind)
