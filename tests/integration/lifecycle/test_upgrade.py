"""Upgrade in place under load (issue 13): kill -USR2 starts the binary at
syslogrx's current path as a new process that inherits the sockets, the BPF
maps and the tracer's links, checks them by cookie and id, and says ready;
only then does the old one stop reading, drain its window to the output and
exit, its summary kept under PATH.PID. Both append to the same file."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

from support.paths import binary
from support.procnet import udp_rows, wait_queues_empty
from support.procs import sysloggen, wait_until
from support.rx_watch import (RATE, Receiver, alive, listen_for, seqs_in_output, under_load,
                              wait_gone)
from support.tcp_sinks import FrameSink
from support.fds import fd_identity, handover_socket


def check_every_seq(out, sent):
    flows = seqs_in_output(out)
    for f in sent["flows"]:
        missing = set(range(f["sent"])) - flows.get(f["flow"], set())
        assert not missing, (f["flow"], len(missing), sorted(missing)[:10])


def all_summaries(rx, final):
    return rx.old_summaries() + [final]


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6], ids=["ipv4", "ipv6"])
def test_20_upgrades_under_load_lose_nothing(tmp_path, family):
    upgrades = 20
    listen = listen_for(family)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "64M",
                  settings={"sockets": 4, "threads": 2})
    first, last = fd_identity(rx.pid), []

    def upgrade_many():
        for _ in range(upgrades):
            assert rx.upgrade() is not None, "".join(rx.lines)
            time.sleep(0.1)
        last.extend(fd_identity(rx.pid))

    sent, err, final = under_load(rx, listen, upgrade_many)
    assert len(rx.olds) == upgrades and "upgrade failed" not in err
    # The same sockets, maps and tracer links, not new ones: the tracer never
    # detached (3 links: kfree_skb, udp_fail_queue_rcv_skb, sk_data_ready).
    assert last[0] == first[0] and len(first[0]) == 4
    assert last[1] == first[1]
    assert last[2] == first[2] and len(first[2]) == 3
    summaries = all_summaries(rx, final)
    assert sent["sent"] >= RATE
    assert sum(s["totals"]["received"] for s in summaries) == sent["sent"]
    for s in summaries:
        assert s["totals"]["written"] == s["totals"]["received"], s["totals"]
        assert s["totals"]["abandoned"] == 0
    # The tracer's maps are handed over too: the last count covers the whole run.
    assert final["totals"]["kernel_drops"]["total"] == 0
    assert final["totals"]["no_socket_drops"]["total"] == 0
    check_every_seq(rx.out, sent)


def test_old_window_drained_on_upgrade_with_slow_output(tmp_path):
    """The output takes 10,000/s of a 30,000/s load: once the old process's
    stats line shows more than 5,000 held in its window, it hands over, and
    writes all of that backlog."""
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "16M",
                  "--window", "200000", "--output-rate", "10000", "--stats-interval", "0.1",
                  settings={"sockets": 4, "threads": 2})

    def held_in_window():
        with rx.cond:
            lines = list(rx.lines)
        held = [int(m.group(1)) for m in (re.search(r" window (\d+)/", l) for l in lines) if m]
        return max(held, default=0)

    def upgrade_with_a_backlog():
        wait_until(lambda: held_in_window() > 5_000, "a backlog of 5,000 in the window")
        assert rx.upgrade() is not None

    sent, err, final = under_load(rx, listen, upgrade_with_a_backlog, rate=30_000)
    old = rx.old_summaries()[0]
    assert old["window"]["hwm"] > 5_000, old["window"]      # it had a backlog
    assert old["totals"]["written"] == old["totals"]["received"]
    assert old["totals"]["received"] + final["totals"]["received"] == sent["sent"]
    assert final["totals"]["kernel_drops"]["total"] == 0
    check_every_seq(rx.out, sent)


def test_tracer_counts_after_upgrades(tmp_path):
    """After two upgrades the tracer is still attached and exact: a burst the
    receiver cannot take is counted, sent = received + kernel drops."""
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "256K",
                  "--window", "1000", "--output-rate", "20000",
                  settings={"sockets": 2, "threads": 1})
    assert rx.upgrade() and rx.upgrade()
    port = int(listen.rsplit(":", 1)[1])
    # Held (SIGSTOP) while the burst comes: what the two 256K queues cannot
    # hold is dropped however fast this machine is.
    os.kill(rx.pid, signal.SIGSTOP)
    try:
        gen = sysloggen(port, "--rate", "0", "--count", "100000", "--size", "200",
                        "--end-markers", "0")
    finally:
        os.kill(rx.pid, signal.SIGCONT)
    wait_queues_empty(port, rx.pid)
    rc, err, final = rx.stop()
    assert rc == 0, err
    t = final["totals"]
    received = sum(s["totals"]["received"] for s in all_summaries(rx, final))
    assert t["kernel_drops"]["total"] > 0, t
    assert t["kernel_drops_match_so_meminfo"] is True
    assert received + t["kernel_drops"]["total"] == gen["sent"]


def test_resize_and_upgrade_together(tmp_path):
    """A resized receiver hands over what is live and the spares: the new
    process selects among the same sockets, and resizes on from there."""
    listen = listen_for(socket.AF_INET6)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "16M", "--max-sockets", "8",
                  settings={"sockets": 4, "threads": 2})

    def resize_and_upgrade():
        rx.resize(6, 2)
        assert rx.upgrade()
        rx.resize(2, 1)
        assert rx.upgrade()
        rx.resize(8, 2)

    sent, err, final = under_load(rx, listen, resize_and_upgrade)
    old = rx.old_summaries()
    assert old[0]["config"]["sockets"] == 6 and old[1]["config"]["sockets"] == 2
    # 4 -> 6 took 2 of the 4 spares; 6 -> 2 made 4 of them spares again;
    # 2 -> 8 took all 6 spares: the pool of 8 bound at start, none closed or
    # opened after the capability drop, every one with the forced rcvbuf.
    states = [x["state"] for x in old[1]["sockets"]]
    assert states.count("live") == 2 and states.count("spare") == 6 and len(states) == 8
    assert [x["state"] for x in final["sockets"]] == ["live"] * 8
    assert {x["rcvbuf"] for x in final["sockets"]} == {16 << 20}
    assert final["config"]["sockets"] == 8 and final["config"]["threads"] == 2
    assert sum(s["totals"]["received"] for s in all_summaries(rx, final)) == sent["sent"]
    assert final["totals"]["kernel_drops"]["total"] == 0
    assert final["totals"]["no_socket_drops"]["total"] == 0
    check_every_seq(rx.out, sent)


def test_failed_upgrade_old_goes_on(tmp_path):
    """The binary at syslogrx's path is replaced by one that does not start:
    the old process says why and goes on; put back, the upgrade succeeds."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "syslogrx"
    shutil.copy(binary("syslogrx"), exe)
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "16M",
                  exe=str(exe), settings={"sockets": 2, "threads": 2})

    def break_then_mend():
        broken = bindir / "broken"
        broken.write_text("#!/bin/sh\necho 'broken build' >&2\nexit 3\n")
        broken.chmod(0o755)
        os.rename(exe, bindir / "good")
        os.rename(broken, exe)
        assert rx.upgrade() is None
        time.sleep(0.3)
        os.rename(bindir / "good", exe)
        assert rx.upgrade() is not None

    sent, err, final = under_load(rx, listen, break_then_mend, rate=20_000)
    assert "broken build" in err and "exited with status 3 before it was ready" in err
    assert f"pid {rx.olds[0]} goes on" in err
    assert sum(s["totals"]["received"] for s in all_summaries(rx, final)) == sent["sent"]
    check_every_seq(rx.out, sent)


def test_upgrade_not_ready_within_10_s_is_killed_old_goes_on(tmp_path):
    """README: if the new process "is not ready within 10 s (it is then
    killed), the old one says why ... and goes on". The binary at syslogrx's
    path is replaced by one that starts and never says ready (it sleeps):
    after 10 s it is killed, by the old process, which keeps receiving; put
    back, the upgrade succeeds."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "syslogrx"
    shutil.copy(binary("syslogrx"), exe)
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "16M",
                  exe=str(exe), settings={"sockets": 2, "threads": 2})
    hung = []

    def hang_then_mend():
        silent = bindir / "silent"
        silent.write_text("#!/bin/sh\nexec sleep 120\n")     # the pid stays the same
        silent.chmod(0o755)
        os.rename(exe, bindir / "good")
        os.rename(silent, exe)
        assert rx.upgrade() is None
        line = [l for l in rx.lines if "did not say ready within" in l]
        assert len(line) == 1, "".join(rx.lines)
        pid = int(re.search(r"the new process (\d+) did not", line[0]).group(1))
        hung.append(pid)
        assert not os.path.exists(f"/proc/{pid}"), "the silent process was not reaped"
        os.rename(bindir / "good", exe)
        assert rx.upgrade() is not None

    sent, err, final = under_load(rx, listen, hang_then_mend, rate=20_000)
    assert (f"upgrade: the new process {hung[0]} did not say ready within 10 s: killed; "
            "this one goes on") in err
    assert f"upgrade failed; pid {rx.olds[0]} goes on" in err
    # The old one went on receiving the whole time: every message, once.
    summaries = all_summaries(rx, final)
    assert sum(s["totals"]["received"] for s in summaries) == sent["sent"]
    check_every_seq(rx.out, sent)


def test_handover_is_checked_not_trusted(tmp_path):
    """A hand-over whose fds are not what it says is refused: a socket with
    another cookie, a socket where a BPF map should be."""
    s, port, cookie = handover_socket()
    fd = s.fileno()
    for body, want in ((f"sock {fd} {cookie + 1} 0\n", f"expected {cookie + 1}"),
                       (f"sock {fd} {cookie} 0\nmap balancer socks {fd} 7\n",
                        "is not a BPF map")):
        memfd = os.memfd_create("handover", 0)
        os.write(memfd, (f"syslogrx-handover 1\nlisten 127.0.0.1:{port}\nthreads 1\n"
                         f"ready -1\n{body}").encode())
        r = subprocess.run([binary("syslogrx"), "--listen", f"127.0.0.1:{port}",
                            "--sockets", "1", "--threads", "1"],
                           env=dict(os.environ, SYSLOGRX_HANDOVER=str(memfd)),
                           pass_fds=(fd, memfd), capture_output=True, text=True, timeout=30)
        os.close(memfd)
        assert r.returncode == 1, r.stderr
        assert want in r.stderr and "ready on" not in r.stderr
    s.close()


def test_a_new_process_that_fails_after_taking_the_disk_buffer_leaves_none(tmp_path):
    """combinations.md: "with a disk buffer the new process says ready
    *before* it has DIR ..., so if it then fails (... DIR unreadable) both
    processes are gone and the service manager's restart takes over". A FIFO
    planted in DIR as a segment (refused, never read) makes the new process
    fail once the old one has handed over and let DIR go: the old one ends
    (exit 0, done after the hand-over), the new one ends with the refusal
    named, and nothing is left running on the port."""
    sink, new = FrameSink(), None
    listen = listen_for(socket.AF_INET)
    db = tmp_path / "db"
    try:
        rx = Receiver(tmp_path, listen, "--output", f"tcp:127.0.0.1:{sink.port}",
                      "--disk-buffer", str(db))
        os.mkfifo(db / "0000000000000099.seg")
        os.kill(rx.p.pid, signal.SIGUSR2)
        rx.wait_line("handed over to pid", 0)
        new = int(re.search(r"handed over to pid (\d+)",
                            next(l for l in rx.lines if "handed over to pid" in l)).group(1))
        assert rx.p.wait(timeout=60) == 0
        wait_gone(new, 60)
        rx.reader.join(timeout=30)
    finally:
        if new and alive(new):              # failed: the sink must not wait on it
            os.kill(new, signal.SIGKILL)
            wait_gone(new, 30)
        sink.close()
    err = "".join(rx.lines)
    assert f"pid {rx.p.pid} done after the hand-over" in err, err
    assert f"--disk-buffer {db}: 0000000000000099.seg is not a regular file: refused" in err, err
    assert not list(udp_rows(int(listen.rsplit(":", 1)[1])))    # no socket left on the port
