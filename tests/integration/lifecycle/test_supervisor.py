"""Crash survival (issue 13): syslogrx --supervise holds the sockets and BPF
objects and runs the receiver as a child on them. kill -9 of the child under
load: a new child takes the same sockets, what the kernel queued meanwhile is
received, and what was in the dead child's window is counted as lost from its
own counters (kept in memory the supervisor shares), so that
sent = written + kernel drops + no-socket drops + reported window loss,
to the message."""
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import log_text, read_json, wait_until
from support.rx_watch import SEQ, Receiver, config_text, listen_for, under_load
from support.books import run_load
from support.tcp_sinks import FrameSink


NOBODY = 65534


@pytest.fixture
def nobody_path(tmp_path):
    """A folder nobody owns (pytest's is root's, mode 0700): --user nobody
    reads its --config there and writes its output and summaries there."""
    d = tempfile.mkdtemp(prefix="srx-i19-sup-")
    os.chown(d, NOBODY, NOBODY)
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("family,user", [(socket.AF_INET, None), (socket.AF_INET6, None),
                                         (socket.AF_INET, "nobody")],
                         ids=["ipv4", "ipv6", "ipv4-user-nobody"])
def test_kill_9_under_load_is_accounted_to_the_message(tmp_path, nobody_path, family, user):
    """With --user nobody the supervisor becomes nobody after binding, before
    any child: each child inherits the user (it could not switch itself)."""
    kills = 3
    listen = listen_for(family)
    where = nobody_path if user else tmp_path
    rx = Receiver(where, listen, "--supervise", "--rcvbuf", "16M",
                  *(["--user", user] if user else []),
                  settings={"sockets": 4, "threads": 2})
    if user:
        for pid in (rx.p.pid, rx.child()):
            with open(f"/proc/{pid}/status") as f:
                st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
            assert st["Uid"].split() == [str(NOBODY)] * 4 and int(st["CapEff"], 16) == 0
    replacements = []

    def crash_repeatedly():
        os.kill(rx.pid, signal.SIGHUP)      # logrotate: forwarded, not a restart
        for _ in range(kills):
            time.sleep(0.4)
            replacements.append(rx.kill_child())

    sent, err, final = under_load(rx, listen, crash_repeatedly)
    with open(f"{rx.summary_path}.supervisor") as f:
        sup = json.load(f)
    assert sup["restarts"] == kills and len(sup["children"]) == kills + 1, sup
    crashed, last = sup["children"][:kills], sup["children"][-1]
    assert all(c["signal"] == 9 and c["replaced_ms"] is not None for c in crashed)
    assert [c["pid"] for c in sup["children"][1:]] == replacements
    assert last["exit_status"] == 0 and last["window_lost"] == 0
    assert last["written"] == final["totals"]["written"]
    lost = sup["window_lost"]
    assert lost == sum(c["taken"] - c["written"] - c["discarded"] for c in crashed)

    t = final["totals"]          # the tracer's maps span all children
    written = sum(c["written"] for c in sup["children"])
    kernel = t["kernel_drops"]["total"] + t["no_socket_drops"]["total"]
    # The README: "One kill -9 can still tear the line being written when it
    # lands inside the output's write(): that batch is then in the file and
    # counted lost." So the file is read record by record, not line by line
    # (a torn line runs into the next child's first one), and what a killed
    # write left in the file is allowed, counted: `extra` messages both in
    # the file and in window_lost, at most what the kills lost.
    with open(rx.out, "rb") as f:
        data = f.read()
    found = {(int(m.group(1)), int(m.group(2))) for m in SEQ.finditer(data)}
    torn = sum(1 for l in data.splitlines() if len(SEQ.findall(l)) != 1)
    extra = len(found) - written
    assert 0 <= extra <= lost, (extra, written, lost)
    assert torn <= kills, torn                  # one torn line per kill at most
    sent_by_flow = {f["flow"]: f["sent"] for f in sent["flows"]}
    assert all(seq < sent_by_flow[flow] for flow, seq in found), "a record nobody sent"
    assert sent["sent"] == written + kernel + lost, (sent["sent"], written, t, lost)
    # The loss is exactly the sequence numbers missing from the file (less
    # those of a torn batch, in the file and counted lost).
    missing = sent["sent"] - len(found)
    assert missing + extra == lost + kernel, (missing, extra, lost, kernel)
    print(f"{kills} kills: sent {sent['sent']} written {written} lost {lost} "
          f"kernel {kernel} torn lines {torn} torn-batch messages in the file {extra}")
    assert "killed by signal 9" in err
    if user:
        assert os.stat(rx.out).st_uid == NOBODY
        assert os.stat(f"{rx.summary_path}.supervisor").st_uid == NOBODY


def test_supervised_receiver_does_not_resize_passes_sighup_on_child_refuses_usr2(tmp_path):
    """README (Crash survival): "SIGHUP is passed on (the child reopens its
    output; a changed sockets/threads is named as needing a restart). A
    supervised receiver does not resize". What the code does, by signal:
    SIGHUP to the supervisor reaches the child, which reopens its output
    (logrotate) and names the sockets/threads change as needing a restart
    (the config asks for 4 sockets: 2 remain); SIGUSR2 to the child itself
    is refused, named (an upgrade is the supervisor's: `kill -USR2` of the
    supervisor, tested in test_combos.py); one child throughout, nothing
    lost."""
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--supervise", settings={"sockets": 2, "threads": 1})
    rx.wait_line("started receiver pid", 0)
    child = int([l for l in rx.lines if "started receiver pid" in l][-1].rsplit(" ", 1)[1])
    host, port = listen.rsplit(":", 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"<13>before rotation", (host, int(port)))
        wait_until(lambda: rx.out.exists() and rx.out.read_bytes().endswith(b"\n"), "line 1")
        os.rename(rx.out, f"{rx.out}.1")
        rx.cf.write_text(config_text({"sockets": 4, "threads": 2}))
        os.kill(rx.pid, signal.SIGHUP)                  # to the supervisor
        rx.wait_line("a supervised receiver does not resize", 0)
        wait_until(rx.out.exists, "the output reopened by the child")
        os.kill(child, signal.SIGUSR2)                  # upgrade: the child itself
        rx.wait_line("SIGUSR2: a supervised receiver is not upgraded in place (its "
                     "supervisor holds the sockets); ignored", 0)
        s.sendto(b"<13>after rotation", (host, int(port)))
    rc, err, final = rx.stop()
    assert rc == 0, err
    # One child, started once by the supervisor; no upgrade took place.
    assert [l for l in err.splitlines() if "took over" in l] == \
        [l for l in err.splitlines() if f"pid {child} took over" in l and "(supervised)" in l]
    assert err.count("took over") == 1 and "handed over" not in err, err
    assert [l for l in log_text(err).splitlines() if "started receiver pid" in l] == \
        [f"syslogrx: supervisor started receiver pid {child}\n".rstrip("\n")], err
    assert open(f"{rx.out}.1", "rb").read() == b"<13>before rotation\n"
    assert rx.out.read_bytes() == b"<13>after rotation\n"
    assert final["config"]["sockets"] == 2 and len(final["sockets"]) == 2
    assert final["totals"]["received"] == final["totals"]["written"] == 2     # one child, both


def test_kill_9_twice_with_a_reliable_disk_buffer_counts_the_disk_as_kept(tmp_path):
    """A reliable disk buffer puts every message on disk before the output
    sees it: a child killed with -9 loses none of those, and a child that
    only resends what an earlier one left on disk (taken 0, written > 0) is
    not a negative loss that wraps to 2^64 - n."""
    count = 1000
    sink = FrameSink()
    listen = listen_for(socket.AF_INET)
    host, port = listen.rsplit(":", 1)
    rx = Receiver(tmp_path, listen, "--supervise", "--rcvbuf", "4M",
                  "--output", f"tcp:127.0.0.1:{sink.port}", "--disk-buffer", str(tmp_path / "db"),
                  "--disk-buffer-mode", "reliable", settings={"sockets": 1, "threads": 1})
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(count):
                s.sendto(b"<13>m%05d" % i, (host, int(port)))
        wait_until(lambda: len(sink.msgs) >= count, "every message delivered once")
        rx.kill_child()
        # the last batch was never settled (no later write): the next child
        # sends it again from the disk, and is killed while at it or after
        wait_until(lambda: len(sink.msgs) > count, "the next child resending from the disk")
        rx.kill_child()
        rc, err, final = rx.stop()
    finally:
        sink.close()
    assert rc == 0, err
    sup = read_json(f"{rx.summary_path}.supervisor")
    first, second, last = sup["children"]
    assert sup["restarts"] == 2 and sup["window_lost"] == 0, sup
    assert [c["window_lost"] for c in sup["children"]] == [0, 0, 0], sup
    assert first["taken"] == first["disk_buffer_written"] == count, first
    # A child killed with -9 may not have counted a write the server got
    # (the kill comes between them): the children's written is at most what
    # arrived, never more, and no figure wraps.
    assert second["taken"] == 0 == last["taken"], sup
    assert second["disk_buffer_replayed"] >= second["written"], second
    assert count <= sum(c["written"] for c in sup["children"]) <= len(sink.msgs), sup
    assert all(c[k] < 2**63 for c in sup["children"] for k in ("written", "taken")), sup
    assert {bytes(m) for m in sink.msgs} == {b"<13>m%05d" % i for i in range(count)}
    assert final["disk_buffer"]["msgs"] == 0
    assert "the 1000 it put on the disk buffer are kept" in err, err


def test_under_systemd_the_supervisor_says_ready_once(tmp_path):
    """combinations.md (supervisor x unit): "the supervisor says READY=1 once
    the first child is up; children do not use the fd store". A stand-in
    $NOTIFY_SOCKET (SO_PASSCRED: the kernel names each sender's pid) through
    a start and a kill -9 of the child: one READY=1, the supervisor's, and
    no FDSTORE=1 from anyone."""
    path = str(tmp_path / "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)
    notify.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    got = []

    def take(timeout):
        notify.settimeout(timeout)
        while True:
            try:
                msg, anc, _, _ = notify.recvmsg(4096, socket.CMSG_SPACE(12) + socket.CMSG_SPACE(64))
            except socket.timeout:
                return
            pid = next(struct.unpack("3i", d[:12])[0] for lvl, typ, d in anc
                       if lvl == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS)
            got.append((pid, msg.decode()))
    try:
        rx = Receiver(tmp_path, listen_for(socket.AF_INET), "--supervise",
                      env={"NOTIFY_SOCKET": path})
        first = rx.child()
        wait_until(lambda: take(0.2) or any("READY=1" in m for _, m in got), "READY=1")
        assert rx.kill_child() != first
        rc, err, _ = rx.stop()
        take(0.5)
    finally:
        notify.close()
    assert rc == 0, err
    ready = [pid for pid, m in got if "READY=1" in m.splitlines()]
    assert ready == [rx.p.pid], got
    assert not [m for _, m in got if "FDSTORE=1" in m], got


WINDOW = 2000


def test_kill_9_with_a_spill_buffer_never_under_counts_the_loss(tmp_path):
    """operating.md: "With a spill buffer, disk records the output had taken
    but not yet written when the kill landed are counted lost although the
    next child sends them (at most what the output holds at once: the loss
    is never under-counted)." A supervised receiver forwards over TCP at
    --output-rate 20,000/s under a load of 50,000/s, so it spills to disk
    and its output reads the disk back; its child is killed -9 twice
    meanwhile. Every message missing at the server is counted (kernel drops
    and the supervisor's window_lost): missing <= counted. And the count is
    over by at most what the output holds at once, per kill: its batches
    come from the input window (--window 2000), so counted - missing <=
    2 x 2,000 (what the child put on the disk is kept, not counted lost)."""
    sink = FrameSink()
    listen = listen_for(socket.AF_INET)
    db = tmp_path / "db"
    rx = Receiver(tmp_path, listen, "--supervise", "--rcvbuf", "64M",
                  "--output", f"tcp:127.0.0.1:{sink.port}", "--output-rate", "20000",
                  "--window", str(WINDOW), "--disk-buffer", str(db), "--disk-buffer-mode", "spill",
                  settings={"sockets": 2, "threads": 2})
    try:
        def crash_while_spilling():
            for _ in range(2):
                wait_until(lambda: any(db.glob("*.seg")), "a segment on disk")
                rx.kill_child()
                time.sleep(0.5)         # the new child reads the disk back
        # The load must outrun --output-rate or nothing spills.
        sent, err, final = run_load(rx, listen, crash_while_spilling, rate=50_000)
    except BaseException:
        sink.srv.close()        # the receiver still holds its connection: the reaper ends it
        raise
    sink.close()
    sup = read_json(f"{rx.summary_path}.supervisor")
    assert sup["restarts"] == 2, sup
    t = final["totals"]
    kernel = t["kernel_drops"]["total"] + t["no_socket_drops"]["total"]
    found = {(int(m.group(1)), int(m.group(2))) for m in map(SEQ.search, sink.msgs) if m}
    by_flow = {f["flow"]: f["sent"] for f in sent["flows"]}
    assert all(seq < by_flow[flow] for flow, seq in found), "a message nobody sent"
    missing = sent["sent"] - len(found)
    assert missing <= sup["window_lost"] + kernel, (missing, sup["window_lost"], kernel)
    assert sup["window_lost"] + kernel - missing <= sup["restarts"] * WINDOW, \
        (missing, sup["window_lost"], kernel)
    assert sorted(os.listdir(db)) == ["lock"]          # the disk all sent at the end
    print(f"sent {sent['sent']} missing {missing} counted lost {sup['window_lost']} "
          f"kernel {kernel}")


def test_duration_ends_the_supervised_run(tmp_path):
    """--duration is the run's, supervised or not: the child's clean exit at
    its end ends the supervisor with 0 (not a restart for another one), and
    the supervisor's summary says no restart."""
    summary = tmp_path / "summary.json"
    p = subprocess.run([binary("syslogrx"), "--supervise", "--duration", "1",
                        "--listen", listen_for(socket.AF_INET), "--output", "null",
                        "--summary", str(summary)],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    assert "ran its --duration; stopping" in p.stderr, p.stderr
    sup = read_json(f"{summary}.supervisor")
    assert sup["restarts"] == 0 and len(sup["children"]) == 1, sup


def test_the_supervisor_never_reads_nor_writes_a_message(tmp_path):
    """security.md: "`--supervise`: the supervisor (it never parses or
    writes a message)". strace, attached to every thread of the supervisor
    while its child receives and writes 500 messages: the supervisor makes
    no receive call at all, and none of its reads or writes carries a
    message's text (its waits for the child are seen: the trace is live).
    The child wrote all 500 (the messages did arrive)."""
    port = free_udp_port()
    rx = Receiver(tmp_path, f"127.0.0.1:{port}", "--supervise")
    rx.child()
    trace = tmp_path / "supervisor.strace"
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-s", "4096", "-o", str(trace),
                               "-e", "trace=read,readv,pread64,preadv,recvfrom,recvmsg,recvmmsg,"
                               "write,writev,pwrite64,pwritev,sendto,sendmsg,sendmmsg,wait4",
                               "-p", str(rx.p.pid)])
    try:
        def all_traced():
            tasks = os.listdir(f"/proc/{rx.p.pid}/task")
            return all(re.search(r"^TracerPid:\s+[1-9]", open(
                f"/proc/{rx.p.pid}/task/{t}/status").read(), re.M) for t in tasks)
        wait_until(all_traced, "strace attached to every thread of the supervisor")
        n = 500
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(n):
                s.sendto(b"<13>Nov 22 03:12:00 h app: supervised-%04d" % i, ("127.0.0.1", port))
        wait_until(lambda: rx.out.exists() and rx.out.read_bytes().count(b"supervised-") == n,
                   "the child wrote every message")
        # its waits for the child (every 200 ms): the trace is live
        wait_until(lambda: "wait4(" in trace.read_text(), "the supervisor's wait in the trace")
    finally:
        tracer.send_signal(signal.SIGINT)          # detaches
        tracer.wait(timeout=30)
    rc, err, _ = rx.stop()
    assert rc == 0, err
    calls = trace.read_text()
    assert not re.search(r"\brecv(?:from|msg|mmsg)\(", calls), calls[-3000:]
    assert "supervised-" not in calls, calls[-3000:]
