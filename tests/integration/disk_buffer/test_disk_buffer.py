"""--disk-buffer: a destination outage (spill) or a kill -9 (reliable) loses
nothing that was received.

The destination is Debian's syslog-ng (as in test_tcp_forward.py), stopped
for OUTAGE seconds while sysloggen sends RATE/s into a 10,000-message window.
The issue asks for a 20 s outage; 8 s has the same shape (the window fills
in half a second, the rest of the outage is all on disk or all dropped) and
saves CI time. --balance hash keeps each flow on one socket, so the order
per flow is syslogrx's to keep. --rcvbuf 16M: the kernel queue covers a
worker starved of CPU by the other jobs on a 2-core CI machine (the window
is what the test is about, not the scheduler)."""
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from support.procs import read_json, start_rx, wait_until
from support.prom import parse, scrape, series, value
from support.ports import free_tcp_port, free_udp_port
from support.syslog_ng import SyslogNg
from support.diskbuf_files import segment_header, v1_record
from support.tcp_sinks import FrameSink
from support.flows import (FLOWS, OUTAGE, RATE, SDATA, SEND_SECONDS, by_flow,
                           check_complete_in_order, start_gen)


def rx_args(tport, *extra):
    return ["--sockets", "2", "--threads", "2", "--balance", "hash", "--format", "rfc5424",
            "--window", "10000", "--rcvbuf", "16M", "--output", f"tcp:127.0.0.1:{tport}"] + list(extra)


def metrics_until(mport, done, what, timeout=60):
    """Scrapes syslogrx's /metrics until done(metrics) holds; returns them."""
    deadline = time.monotonic() + timeout
    while True:
        m = parse(scrape(mport))
        if done(m):
            return m
        assert time.monotonic() < deadline, f"{what}: {m}"
        time.sleep(0.1)


def received(m):
    """Every socket's received count, summed."""
    return sum(series(m, "syslogrx_socket_received_total").values())


def stop_ok(p):
    rc, _, err = p.stop()
    assert rc == 0, err


def wait_run(sng, run, n, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(len(set(v)) for v in by_flow(sng.lines(), run).values()) >= n:
            break
        time.sleep(0.5)
    return sng.lines()


def test_tcp_outage_spill_vs_none(procs, tmp_path):
    """Two receivers side by side, one without a disk buffer and one with
    --disk-buffer (spill), the same server stopped under both."""
    tport, u_plain, u_disk = free_tcp_port(), free_udp_port(), free_udp_port()
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        plain = start_rx(tmp_path, procs, "plain", u_plain, *rx_args(tport))
        disk = start_rx(tmp_path, procs, "disk", u_disk,
                        *rx_args(tport, "--disk-buffer", str(tmp_path / "buf")))
        g_plain, g_disk = start_gen(u_plain, "plain"), start_gen(u_disk, "spill")
        time.sleep(2)
        sng.stop()
        time.sleep(OUTAGE)
        sng.start()
        assert g_plain.wait(timeout=60) == 0 and g_disk.wait(timeout=60) == 0
        sent = RATE * SEND_SECONDS
        lines = wait_run(sng, "spill", sent)
        rc, _, err = disk.stop()
        assert rc == 0, err
        rc, _, perr = plain.stop()
        assert rc == 0, perr
        lines = sng.lines()
    finally:
        sng.stop()
    # Without a disk buffer the kernel dropped, and counted it.
    t = plain.summary["totals"]
    assert t["kernel_drops"]["total"] > 0
    assert t["received"] + t["kernel_drops"]["total"] == sent
    # With spill: nothing dropped anywhere, every message at the server, in order per flow.
    t, db = disk.summary["totals"], disk.summary["disk_buffer"]
    assert t["kernel_drops"]["total"] == 0, err
    assert t["received"] == sent and t["written"] == sent
    assert db["written"] > RATE * (OUTAGE - 2)
    assert db["replayed"] == db["written"]
    assert db["dropped"] == 0 and db["corrupt"] == 0 and db["msgs"] == 0
    assert db["bytes"] == 0 and db["segments"] == 0     # the outage's segment went once sent
    check_complete_in_order(by_flow(lines, "spill"), sent)
    assert not list((tmp_path / "buf").glob("*.seg"))    # all sent: DIR left empty


def first_positions(lines, run):
    """Line index of the first arrival of each (flow, seq) of run."""
    pos = {}
    for i, l in enumerate(lines):
        m = SDATA.search(l)
        if m and m.group(1).decode() == run:
            pos.setdefault((int(m.group(2)), int(m.group(3))), i)
    return pos


def test_reliable_kill9_restart_sends_what_was_left_first(procs, tmp_path):
    """reliable: the sender sends 6 s, the server stops after 3, syslogrx is
    killed with -9 during the outage; a new syslogrx on the same DIR, the
    server back: every message the first one received arrives, before the
    new process's own messages. What was written a second (the TCP output's
    resend window) before the outage is not sent again (the cursor)."""
    tport, u1, u2 = free_tcp_port(), free_udp_port(), free_udp_port()
    buf = tmp_path / "buf"
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        mport = free_tcp_port()
        a = start_rx(tmp_path, procs, "a", u1,
                     *rx_args(tport, "--disk-buffer", str(buf), "--disk-buffer-mode", "reliable",
                              "--stats-interval", "0.5", "--metrics", str(mport)))
        gen = start_gen(u1, "before", seconds=6)
        time.sleep(3)                   # the outage's place in the load, not a synchronisation
        sng.stop()
        assert gen.wait(timeout=30) == 0
        sent = RATE * 6
        # a has read all the kernel held (16M holds the whole load: no drop)
        # and, reliable, written every message of it to disk: its own counters.
        m = metrics_until(mport, lambda m: received(m) == sent and
                          value(m, "syslogrx_disk_buffer_written_total") == sent,
                          "a did not read and write to disk all it was sent")
        a.p.send_signal(signal.SIGKILL)
        a.p.wait(timeout=10)
        assert list(buf.glob("*.seg"))

        sng.start()
        b = start_rx(tmp_path, procs, "b", u2,
                     *rx_args(tport, "--disk-buffer", str(buf), "--disk-buffer-mode", "reliable"))
        gen = start_gen(u2, "after", seconds=1)
        assert gen.wait(timeout=30) == 0
        wait_run(sng, "before", sent)
        wait_run(sng, "after", RATE)
        stop_ok(b)
        lines = sng.lines()
    finally:
        sng.stop()
    db = b.summary["disk_buffer"]
    assert db["recovered"] > 0 and db["corrupt"] == 0 and db["dropped"] == 0
    assert db["msgs"] == 0
    dups = check_complete_in_order(by_flow(lines, "before"), sent)
    check_complete_in_order(by_flow(lines, "after"), RATE)
    # Duplicates: what the first process had sent but not yet seen written
    # when it died, sent again. Allowed, and counted here.
    print(f"before: {sent} sent, {dups} duplicates, {db['recovered']} recovered from disk")
    assert dups <= db["recovered"] < sent - RATE      # the cursor: >= 1 s was not resent
    # What was left went out before the new process's messages of the same flows.
    before, after = first_positions(lines, "before"), first_positions(lines, "after")
    for f in range(FLOWS):
        last_before = max(p for (fl, _), p in before.items() if fl == f)
        first_after = min(p for (fl, _), p in after.items() if fl == f)
        assert last_before < first_after, f"flow {f}"


def test_reliable_hands_over_in_memory_and_reads_back_after_a_crash(procs, tmp_path):
    """reliable, the destination up: every batch is written to disk and handed
    to the output as it is, none read back (1,000 messages: within the
    --window the hand-off may hold, whatever the timing). The destination
    down, then a kill -9 with batches held in memory: nothing is lost, the
    next process reads every one of them back from disk."""
    tport, u1, u2, u3 = free_tcp_port(), free_udp_port(), free_udp_port(), free_udp_port()
    buf = tmp_path / "buf"
    sent = 1000
    rel = ["--disk-buffer", str(buf), "--disk-buffer-mode", "reliable"]
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        a = start_rx(tmp_path, procs, "a", u1, *rx_args(tport, *rel))
        assert start_gen(u1, "up", rate=sent, seconds=1).wait(timeout=30) == 0
        wait_run(sng, "up", sent)
        stop_ok(a)

        sng.stop()
        mport = free_tcp_port()
        b = start_rx(tmp_path, procs, "b", u2,
                     *rx_args(tport, *rel, "--stats-interval", "0.5", "--metrics", str(mport)))
        assert start_gen(u2, "down", rate=sent, seconds=1).wait(timeout=30) == 0
        metrics_until(mport, lambda m: value(m, "syslogrx_disk_buffer_written_total") == sent,
                      "b did not write to disk all it was sent")
        b.p.send_signal(signal.SIGKILL)
        b.p.wait(timeout=10)

        sng.start()
        c = start_rx(tmp_path, procs, "c", u3, *rx_args(tport, *rel))
        lines = wait_run(sng, "down", sent)
        stop_ok(c)
    finally:
        sng.stop()
    db = a.summary["disk_buffer"]
    assert a.summary["totals"]["received"] == sent
    assert (db["written"], db["replayed"], db["read_back"], db["msgs"]) == (sent, sent, 0, 0)
    db = c.summary["disk_buffer"]
    assert (db["recovered"], db["replayed"], db["read_back"]) == (sent, sent, sent)
    assert db["written"] == 0 and db["msgs"] == 0 and db["corrupt"] == 0
    check_complete_in_order(by_flow(lines, "up"), sent)
    check_complete_in_order(by_flow(lines, "down"), sent)


def test_full_disk_buffer_drops_exactly_what_it_counts(procs, tmp_path):
    """A 2 MiB disk buffer and a 4 s outage at 20,000/s: the buffer fills,
    new batches are dropped and counted; everything else arrives."""
    tport, port = free_tcp_port(), free_udp_port()
    buf = tmp_path / "buf"
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        mport = free_tcp_port()
        rx = start_rx(tmp_path, procs, "rx", port,
                      *rx_args(tport, "--disk-buffer", str(buf), "--disk-buffer-size", "2M",
                               "--metrics", str(mport)))
        gen = start_gen(port, "full", seconds=6)
        time.sleep(1)
        sng.stop()
        peak = 0
        for _ in range(40):
            peak = max(peak, sum(f.stat().st_size for f in buf.glob("*.seg")))
            time.sleep(0.1)
        sng.start()
        assert gen.wait(timeout=30) == 0
        sent = RATE * 6
        # The server back: everything read, and all that was not dropped
        # written to it (the window and the disk emptied); after that nothing
        # is written to disk or dropped any more.
        scraped = metrics_until(
            mport, lambda m: received(m) == sent and value(m, "syslogrx_window_messages") == 0
            and value(m, "syslogrx_written_total")
            + value(m, "syslogrx_disk_buffer_dropped_total") == sent,
            "the window and the disk buffer did not drain to the server")
        rc, _, err = rx.stop()
        assert rc == 0, err
        lines = wait_run(sng, "full", sent - rx.summary["disk_buffer"]["dropped"], timeout=30)
    finally:
        sng.stop()
    t, db = rx.summary["totals"], rx.summary["disk_buffer"]
    assert peak <= 2 << 20
    assert t["kernel_drops"]["total"] == 0 and t["received"] == sent
    assert db["dropped"] > 0 and db["corrupt"] == 0
    # The metrics say the same (nothing is dropped after the load).
    assert scraped[("syslogrx_disk_buffer_dropped_total", frozenset())] == db["dropped"]
    for name, field in (("written", "written"), ("replayed", "replayed"),
                        ("read_back", "read_back"), ("corrupt_records", "corrupt")):
        assert scraped[(f"syslogrx_disk_buffer_{name}_total", frozenset())] == db[field], name
    assert t["written"] == sent - db["dropped"]
    flows = by_flow(lines, "full")
    arrived = 0
    for f, seqs in flows.items():
        first = list(dict.fromkeys(seqs))
        assert first == sorted(first), f"flow {f}: out of order"
        arrived += len(first)
    assert arrived + db["dropped"] == sent          # nothing else lost


def sized_payloads(tag, n=400):
    """n datagrams: 192 of 300 to 306 bytes (three full batches of 64 that
    fit the receive slot, 2 KiB at start: packed for the disk), then the
    same with one of 9,000 bytes in 20 and one of 60,000 in 50 (past the
    slot: batches left in their slots)."""
    out = []
    for i in range(n):
        mixed = i >= 192
        size = 60000 if mixed and i % 50 == 25 else 9000 if mixed and i % 20 == 7 \
            else 300 + i % 7
        head = b"<13>%s %05d " % (tag.encode(), i)
        out.append(head + bytes(97 + (i + k) % 26 for k in range(size - len(head))))
    return out


def send_held(rx, port, payloads):
    """The receiver held (SIGSTOP) while the payloads queue, then let go: it
    reads them in full batches, small and long datagrams together."""
    rx.p.send_signal(signal.SIGSTOP)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for p in payloads:
                s.sendto(p, ("127.0.0.1", port))
    finally:
        rx.p.send_signal(signal.SIGCONT)


def test_reliable_keeps_datagrams_of_every_size_byte_exact(procs, tmp_path):
    """reliable, with datagrams of 300 bytes to 60,000 in the same batches
    (the batches whose datagrams all fit their slots are packed back to back
    for the disk; those with a longer one are not): handed over in memory to
    a destination that is up, and, the destination down and the receiver
    killed, read back from disk by the next one. Every datagram arrives byte
    for byte, in the order sent (one socket, one thread)."""
    buf = tmp_path / "buf"
    args = ["--sockets", "1", "--threads", "1", "--format", "raw", "--rcvbuf", "16M",
            "--disk-buffer", str(buf), "--disk-buffer-mode", "reliable"]
    up = sized_payloads("up")
    sink = FrameSink()
    try:
        port = free_udp_port()
        a = start_rx(tmp_path, procs, "a", port, "--output", f"tcp:127.0.0.1:{sink.port}",
                     *args)
        send_held(a, port, up)
        wait_until(lambda: len(sink.msgs) >= len(up), "handed over", timeout=60)
        stop_ok(a)
    finally:
        sink.close()
    assert a.summary["totals"]["kernel_drops"]["total"] == 0
    assert a.summary["disk_buffer"]["written"] == len(up)
    assert sink.msgs == up

    down = sized_payloads("down")
    port, mport = free_udp_port(), free_tcp_port()
    b = start_rx(tmp_path, procs, "b", port, "--output", f"tcp:127.0.0.1:{free_tcp_port()}",
                 "--metrics", str(mport), *args)
    send_held(b, port, down)
    metrics_until(mport, lambda m: value(m, "syslogrx_disk_buffer_written_total") == len(down),
                  "b did not write to disk all it was sent")
    b.p.send_signal(signal.SIGKILL)
    b.p.wait(timeout=10)
    sink = FrameSink()
    try:
        c = start_rx(tmp_path, procs, "c", free_udp_port(),
                     "--output", f"tcp:127.0.0.1:{sink.port}", *args)
        wait_until(lambda: len(sink.msgs) >= len(down), "read back", timeout=60)
        stop_ok(c)
    finally:
        sink.close()
    db = c.summary["disk_buffer"]
    assert (db["recovered"], db["read_back"], db["corrupt"]) == (len(down), len(down), 0)
    assert sink.msgs == down


# ---- what a record keeps, and what a damaged DIR costs ---------------------

HEAD = b"<13>1 2026-11-28T01:00:00.000000Z host app 12 ID7"


def tagged(tag, n):
    """n RFC 5424 messages with no SD, each with its number."""
    return [HEAD + b" - %s %04d" % (tag.encode(), i) for i in range(n)]


def delivered(msg, listener):
    """msg (of tagged) as --format rfc5424 hands it on, by RFC 5424's layout:
    the sender in an origin element, then syslogrx's listener element when
    the message has a listener name."""
    sd = b'[origin ip="127.0.0.1"]'
    if listener:
        sd += b'[syslogrx@32473 listener="%s"]' % listener.encode()
    return HEAD + b" " + sd + msg[len(HEAD) + 2:]


def listen_args(listens):
    """--listen for each of listens: "NAME" (named) or "" (unnamed), on a free port."""
    args, ports = [], []
    for name in listens:
        ports.append(free_udp_port())
        args += ["--listen", f"{name}=127.0.0.1:{ports[-1]}" if name else f"127.0.0.1:{ports[-1]}"]
    return args, ports


ONE = ["--sockets", "1", "--threads", "1", "--format", "rfc5424", "--rcvbuf", "16M"]


def buffer_and_kill(tmp_path, procs, buf, listens, to, payloads):
    """A reliable buffer whose destination is down: payloads sent to listener
    `to` (its position in listens) while the receiver is held, all written to
    disk, then kill -9: they stay in buf for the next run."""
    mport = free_tcp_port()
    args, ports = listen_args(listens)
    rx = start_rx(tmp_path, procs, "buffered", None, *args, *ONE, "--metrics", str(mport),
                  "--output", f"tcp:127.0.0.1:{free_tcp_port()}", "--disk-buffer", str(buf),
                  "--disk-buffer-mode", "reliable")
    send_held(rx, ports[to], payloads)
    metrics_until(mport, lambda m: value(m, "syslogrx_disk_buffer_written_total") == len(payloads),
                  "not all written to disk")
    rx.p.send_signal(signal.SIGKILL)
    rx.p.wait(timeout=10)


def deliver(tmp_path, procs, buf, listens, done, *extra):
    """A run on buf with listens (and extra flags), its destination up, until
    done(its metrics) holds: (its summary, the messages the destination got,
    its stderr, the seconds it took to be ready)."""
    mport = free_tcp_port()
    args, _ = listen_args(listens)
    sink = FrameSink()
    try:
        t0 = time.monotonic()
        rx = start_rx(tmp_path, procs, "delivering", None, *args, *ONE, "--metrics", str(mport),
                      "--output", f"tcp:127.0.0.1:{sink.port}", "--disk-buffer", str(buf),
                      "--disk-buffer-mode", "reliable", *extra)
        ready = time.monotonic() - t0
        metrics_until(mport, done, "the disk buffer was not read back")
        wait_until(lambda: len(sink.msgs) >= value(parse(scrape(mport)), "syslogrx_written_total"),
                   "the destination did not get what was written")
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sink.close()
    return rx.summary["disk_buffer"], sink.msgs, err, ready


def all_replayed(n):
    return lambda m: value(m, "syslogrx_disk_buffer_replayed_total") == n


@pytest.mark.parametrize("first, to, then, name", [
    (["a", "b"], 1, ["b", "a"], "b"),   # the --listen order swapped
    (["a", "b"], 1, ["c"], "b"),        # b gone: its recorded name, not c's
    (["a", "b"], 1, [""], "b"),         # one unnamed listener now: b's still
    ([""], 0, ["a", "b"], None),        # none shown then: none now, not a's
], ids=["swapped", "gone", "unnamed-now", "unnamed-then"])
def test_records_keep_their_listener_by_name(procs, tmp_path, first, to, then, name):
    """Records buffered for one listener are delivered under the name the
    run that received them showed, byte for byte, whatever the next run's
    --listen list is."""
    buf = tmp_path / "buf"
    msgs = tagged("lis", 100)
    buffer_and_kill(tmp_path, procs, buf, first, to, msgs)
    db, got, _, _ = deliver(tmp_path, procs, buf, then, all_replayed(len(msgs)))
    assert (db["recovered"], db["corrupt"]) == (len(msgs), 0)
    assert got == [delivered(m, name) for m in msgs]


def test_version_1_records_keep_their_position(procs, tmp_path):
    """A segment an earlier syslogrx wrote (format version 1: a message's
    listener by its position) is read: positions 0 and 1 are this run's
    first and second listeners, as that run had them; a position this run
    does not have is delivered with no listener name."""
    buf = tmp_path / "buf"
    buf.mkdir(mode=0o700)
    msgs = tagged("v1", 4)
    (buf / "0000000000000001.seg").write_bytes(
        segment_header(1) + v1_record(1, msgs[:2], listener=0) + v1_record(2, msgs[2:3], listener=1)
        + v1_record(3, msgs[3:], listener=5))
    db, got, _, _ = deliver(tmp_path, procs, buf, ["a", "b"], all_replayed(len(msgs)))
    assert (db["recovered"], db["corrupt"]) == (len(msgs), 0)
    assert got == [delivered(msgs[0], "a"), delivered(msgs[1], "a"), delivered(msgs[2], "b"),
                   delivered(msgs[3], None)]


def test_a_huge_sparse_segment_is_refused_at_once(procs, tmp_path):
    """A 20 GiB sparse file named like a segment (no disk used), under a
    --disk-buffer-size that would hold it: start is not held by it (it is
    never read), it is said and left in place; the segment beside it is
    delivered."""
    buf = tmp_path / "buf"
    buf.mkdir(mode=0o700)
    big = buf / "0000000000000001.seg"
    big.write_bytes(segment_header(2))
    os.truncate(big, 20 << 30)
    msgs = tagged("after", 2)
    (buf / "0000000000000002.seg").write_bytes(segment_header(1) + v1_record(1, msgs))
    db, got, err, ready = deliver(tmp_path, procs, buf, [""], all_replayed(len(msgs)),
                                  "--disk-buffer-size", "100G")
    assert ready < 5, f"ready after {ready:.1f} s"
    assert "0000000000000001.seg is 21474836480 bytes, more than any segment syslogrx " \
           "writes" in err, err
    assert big.stat().st_size == 20 << 30
    assert db["segments_refused"] == 1 and db["recovered"] == len(msgs)
    assert got == [delivered(m, None) for m in msgs]


def test_zeroed_middle_of_a_segment_costs_exactly_its_messages(procs, tmp_path):
    """3,000 messages on disk in records of one batch each; the middle third
    of the segment file zeroed (records cut at both ends): every message
    outside it is delivered, and the messages counted lost are exactly
    those that did not arrive, a run of consecutive ones."""
    buf = tmp_path / "buf"
    msgs = tagged("zero", 3000)
    buffer_and_kill(tmp_path, procs, buf, [""], 0, msgs)
    seg, = buf.glob("*.seg")
    size = seg.stat().st_size
    with open(seg, "r+b") as f:
        f.seek(size // 3)
        f.write(bytes(size // 3))
    db, got, err, _ = deliver(tmp_path, procs, buf, [""],
                              lambda m: value(m, "syslogrx_disk_buffer_replayed_total")
                              == value(m, "syslogrx_disk_buffer_recovered_total"))
    want = {delivered(m, None): i for i, m in enumerate(msgs)}
    arrived = [want[m] for m in got]
    assert arrived == sorted(set(arrived))           # in order, no duplicate
    lost = sorted(set(range(len(msgs))) - set(arrived))
    assert lost and lost == list(range(lost[0], lost[-1] + 1))
    assert db["corrupt_msgs"] == len(lost), err
    assert db["corrupt_uncounted"] == 0 and db["recovered"] == len(arrived)
    assert "message(s) in" in err and f"{len(lost)} message(s)" in err, err


@pytest.mark.parametrize("sync_ms", [0, 60000])
def test_disk_buffer_sync_at_most_every_sync_ms(procs, tmp_path, sync_ms):
    """outputs.md, `--disk-buffer-sync MS`: "fdatasync at most this often;
    `0` = after every batch". strace, attached to every thread, counts the
    fdatasync calls (not syslogrx's own count). 20 datagrams sent one at a
    time, each forwarded before the next is sent, are 20 batches, each
    written to disk first (reliable). With 0: one fdatasync or more per
    batch. With a minute, in these few seconds: at most 3 (when the first
    batch is written, a minute after the last sync; at exit, the segment
    and the cursor)."""
    sink, port, rx = FrameSink(), free_udp_port(), None
    try:
        rx = start_rx(tmp_path, procs, "rx", port, "--sockets", "1", "--threads", "1",
                      "--output", f"tcp:127.0.0.1:{sink.port}",
                      "--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", "reliable",
                      "--disk-buffer-sync", str(sync_ms))
        trace = tmp_path / "fdatasync.strace"
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=fdatasync", "-o",
                                   str(trace), "-p", str(rx.p.pid)])

        def all_traced():
            tasks = os.listdir(f"/proc/{rx.p.pid}/task")
            return all(re.search(r"^TracerPid:\s+[1-9]", open(
                f"/proc/{rx.p.pid}/task/{t}/status").read(), re.M) for t in tasks)
        wait_until(all_traced, "strace attached to every thread")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(20):
                s.sendto(b"<13>batch %02d" % i, ("127.0.0.1", port))
                wait_until(lambda: len(sink.msgs) == i + 1, f"message {i} forwarded")
        stop_ok(rx)
        assert tracer.wait(timeout=60) == 0
    finally:
        if rx and rx.p.poll() is None:      # failed midway: the sink must not wait on it
            rx.p.kill()
            rx.p.wait()
        sink.close()
    syncs = sum("fdatasync(" in l for l in trace.read_text().splitlines())
    assert rx.summary["disk_buffer"]["written"] == 20
    if sync_ms == 0:
        assert syncs >= 20, trace.read_text()
    else:
        assert 1 <= syncs <= 3, trace.read_text()


def test_sigterm_sends_what_is_on_disk_too(procs, tmp_path):
    """outputs.md: "on SIGTERM the output sends what is on disk too, as it
    does the window ... for at most `--stop-timeout`". The output is held to
    50 messages a second (`--output-rate`) behind a window of 10, so 200
    messages sent at once are mostly on disk when SIGTERM comes (a
    destination that is up: one that is down at the stop has the window
    saved to disk instead): the stop delivers all 200, and leaves no
    segment."""
    port, mport, n = free_udp_port(), free_tcp_port(), 200
    sink = FrameSink()
    rx = start_rx(tmp_path, procs, "rx", port, "--sockets", "1", "--threads", "1",
                  "--window", "10", "--output-rate", "50", "--metrics", str(mport),
                  "--output", f"tcp:127.0.0.1:{sink.port}", "--disk-buffer", str(tmp_path / "db"))
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(n):
                s.sendto(b"<13>on disk %03d" % i, ("127.0.0.1", port))
        m = metrics_until(mport, lambda m: value(m, "syslogrx_disk_buffer_written_total") +
                          value(m, "syslogrx_window_messages") + len(sink.msgs) >= n,
                          "all taken, most on disk")
        unsent = n - len(sink.msgs) - value(m, "syslogrx_window_messages")
        assert unsent >= n / 2, unsent            # on disk at the SIGTERM
        stop_ok(rx)
    finally:
        if rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
        sink.close()
    assert sorted(sink.msgs) == [b"<13>on disk %03d" % i for i in range(n)]
    db = rx.summary["disk_buffer"]
    assert db["replayed"] == db["written"] > 0 and db["segments"] == 0, db
    assert not list((tmp_path / "db").glob("*.seg"))


def thread_of(pid, name):
    """The tid of pid's thread called name (pthread_setname_np), or None."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().strip() == name:
                return int(tid)
    return None


PWRITEV = {"x86_64": 296, "aarch64": 70}[os.uname().machine]


class WriterHeld:
    """strace holds the disk buffer writer's next record write (pwritev)
    5 s, a disk stalled by dirty-page throttling; held() says the writer is
    inside it (its /proc syscall)."""

    def __init__(self, pid):
        # the writer thread is named a moment after the ready line
        self.pid = pid
        self.writer = wait_until(lambda: thread_of(pid, "diskbuf"), "the diskbuf thread", 10)
        self.tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                                        "trace=pwritev", "-e",
                                        "inject=pwritev:delay_enter=5000000:when=1",
                                        "-p", str(pid)])
        wait_until(self.all_traced, "strace attached to every thread")

    def all_traced(self):
        tasks = os.listdir(f"/proc/{self.pid}/task")
        return all(re.search(r"^TracerPid:\s+[1-9]", open(
            f"/proc/{self.pid}/task/{t}/status").read(), re.M) for t in tasks)

    def held(self):
        with open(f"/proc/{self.pid}/task/{self.writer}/syscall") as f:
            return f.read().split()[0] == str(PWRITEV)


def send_in_tens(port, mport, tag, first, n, writer):
    """Datagrams first..first+n, 10 at a time, each ten sent once the worker
    read the one before; the writer held inside its pwritev after the first
    ten. Returns the last scrape."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(first, first + n):
            s.sendto(b"<13>%s %02d" % (tag, i), ("127.0.0.1", port))
            if i % 10 == 9:
                m = metrics_until(mport, lambda m: received(m) == i + 1,
                                  f"the worker read {i + 1}", 4)
            if i == first + 9:
                wait_until(writer.held, "the writer held in its first pwritev", 4)
    return m


def test_a_worker_never_waits_for_the_disk(procs, tmp_path):
    """outputs.md: "the buffer's own writer thread writes each record with
    one `pwrite` and syncs, so a worker never waits for the disk". strace
    holds the writer's first record write (pwritev) 5 s, a disk stalled by
    dirty-page throttling. 10 datagrams go to the disk first (reliable);
    once the writer is held inside that write (its /proc syscall), 40 more
    come in groups of 10, each sent once the one before was read: the worker
    reads them all meanwhile and the disk has none of them yet; once the
    write goes through, all 50 reach the server."""
    sink, port, mport, n = FrameSink(), free_udp_port(), free_tcp_port(), 50
    rx = None
    try:
        rx = start_rx(tmp_path, procs, "rx", port, "--sockets", "1", "--threads", "1",
                      "--output", f"tcp:127.0.0.1:{sink.port}", "--metrics", str(mport),
                      "--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", "reliable")
        writer = WriterHeld(rx.p.pid)
        m = send_in_tens(port, mport, b"stalled", 0, n, writer)
        assert writer.held() and value(m, "syslogrx_disk_buffer_written_total") == 0
        wait_until(lambda: len(sink.msgs) == n, "all 50 at the server")
        stop_ok(rx)
        assert writer.tracer.wait(timeout=60) == 0
    finally:
        if rx and rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
        sink.close()
    assert sorted(sink.msgs) == [b"<13>stalled %02d" % i for i in range(n)]
    assert rx.summary["totals"]["kernel_drops"]["total"] == 0


def test_reliable_kill_9_loses_exactly_what_the_writer_had_not_written(procs, tmp_path):
    """outputs.md: with reliable, kill -9 loses nothing that reached the disk,
    and exactly what the workers had read and the writer had not yet
    written: received - disk_buffer.written at the kill. The destination is
    down; 10 datagrams reach the disk; the writer is then held inside its
    next write (strace, as above) while 40 more are read; kill -9. The next
    run on the same DIR, the destination up, delivers the 10, and only
    them: the 40 died with the process's memory."""
    down, port, mport = free_tcp_port(), free_udp_port(), free_tcp_port()
    db = tmp_path / "db"
    a = start_rx(tmp_path, procs, "a", port, "--sockets", "1", "--threads", "1",
                 "--output", f"tcp:127.0.0.1:{down}", "--metrics", str(mport),
                 "--disk-buffer", str(db), "--disk-buffer-mode", "reliable")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(10):
            s.sendto(b"<13>kept %02d" % i, ("127.0.0.1", port))
    metrics_until(mport, lambda m: value(m, "syslogrx_disk_buffer_written_total") == 10,
                  "the first 10 on disk")
    writer = WriterHeld(a.p.pid)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"<13>held 10", ("127.0.0.1", port))   # the record the writer is held in
    wait_until(writer.held, "the writer held in its pwritev", 4)
    m = send_in_tens(port, mport, b"held", 11, 39, writer)
    assert writer.held() and received(m) == 50
    assert value(m, "syslogrx_disk_buffer_written_total") == 10, m
    a.p.kill()
    a.p.wait(timeout=10)
    writer.tracer.wait(timeout=30)

    sink = FrameSink()      # the destination back (at another port: the records do not name it)
    try:
        b = start_rx(tmp_path, procs, "b", free_udp_port(), "--output", f"tcp:127.0.0.1:{sink.port}",
                     "--disk-buffer", str(db), "--disk-buffer-mode", "reliable")
        wait_until(lambda: len(sink.msgs) >= 10, "the 10 on disk delivered")
        stop_ok(b)
    finally:
        sink.close()
    assert sorted(sink.msgs) == [b"<13>kept %02d" % i for i in range(10)]
    d = b.summary["disk_buffer"]
    assert d["recovered"] == 10 and d["corrupt"] == 0, d
