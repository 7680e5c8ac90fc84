"""Between the kernel and the disk: the input window, shutdown, bad datagrams.

Nothing accepted is lost: every received message is written, and what the
receiver could not take is a counted kernel drop (sent = received + drops)."""
import os
import signal
import socket
import time

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import Proc, read_json, run_cmd, sysloggen, wait_until


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


OUTPUT_RATE = 10_000   # a ceiling: a loaded machine only writes slower


def window_run(syslogrx, tmp_path, window, rcvbuf):
    port = free_udp_port()
    out = tmp_path / f"w{window}.log"
    rx = syslogrx("--sockets", "2", "--threads", "2", "--rcvbuf", rcvbuf, "--window", str(window),
                  "--output-rate", str(OUTPUT_RATE), "--output", f"file:{out}", port=port)
    # The burst, 2 s of silence, then a slow tail that is all received: the
    # last sequence number seen is the last one sent, so every kernel drop
    # is a gap the receiver can see.
    gen = sysloggen(port, "--profile", "100000x1,0x2,1000x1", "--size", 200)
    assert gen["sent"] == 101_000
    rc, _, err = rx.stop(timeout=90)   # SIGTERM: the window drains at OUTPUT_RATE
    assert rc == 0, err
    return gen, rx.summary, out


def burst_seconds(gen):
    """An upper bound of the burst's time: the run less its silence and tail
    (2 s and 1 s, never shorter: pacing is never early)."""
    return gen["duration_s"] - 3


def test_big_window_absorbs_a_burst(syslogrx, tmp_path):
    """Output capped at 10,000/s, a burst of 100,000: a 200,000-message
    window takes it all; everything is written after SIGTERM."""
    # 16 MiB of kernel queue beside the window: the workers keep up with the
    # burst, but a loaded host stalls them (the window is what this tests).
    gen, s, out = window_run(syslogrx, tmp_path, 200_000, "16M")
    t = s["totals"]
    assert t["kernel_drops"]["total"] == 0, t
    assert t["received"] == gen["datagrams"] == 101_003     # + the flow's 3 end markers
    assert t["written"] == 101_003
    assert count_lines(out) == 101_003
    # It really held a backlog: at the burst's end at most OUTPUT_RATE per
    # second of it (and a second more) had been written.
    held_at_least = 100_000 - OUTPUT_RATE * (burst_seconds(gen) + 1)
    assert s["window"]["hwm"] >= held_at_least, (s["window"], gen["duration_s"])
    assert s["loss"]["missing"] == 0 and s["loss"]["sequenced"] == 101_000


def test_small_window_pushes_back_to_the_kernel(syslogrx, tmp_path):
    """A 1,000-message window fills: the workers stop reading, the kernel drops
    (counted, per reason), and every received message is still written. The
    drops are at least what the window, the output's ceiling and two 256K
    queues could not take."""
    gen, s, out = window_run(syslogrx, tmp_path, 1_000, "256K")
    t = s["totals"]
    drops = t["kernel_drops"]["total"]
    queues = sum(sock["rcvbuf"] // 200 + 1 for sock in s["sockets"])
    floor = 100_000 - 1_000 - OUTPUT_RATE * (burst_seconds(gen) + 1) - queues
    assert drops >= floor, (drops, floor, gen["duration_s"])
    assert drops > 0, t
    assert t["received"] + drops == gen["datagrams"]      # to the message
    assert t["written"] == t["received"]
    assert count_lines(out) == t["received"]
    assert t["kernel_drops"].get("SOCKET_RCVBUFF", 0) == drops
    assert s["window"]["hwm"] <= 1_000                     # the bound holds exactly
    assert s["window"]["full_seconds"] > 0                 # the workers waited: the drops
    # The sequence gaps are exactly the kernel's drops.
    assert s["loss"]["missing"] + s["loss"]["end_markers_lost"] == drops
    assert s["loss"]["gaps_equal_kernel_drops"] is True


def test_sigterm_writes_what_the_kernel_had_queued(syslogrx, tmp_path):
    """Datagrams queued in the kernel when SIGTERM arrives are ours: a worker
    slowed by --cost-ns leaves a queue, and the stop still writes all of it."""
    port = free_udp_port()
    out = tmp_path / "q.log"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--rcvbuf", "64M", "--cost-ns", "50000",
                  "--output", f"file:{out}", port=port)
    gen = sysloggen(port, "--count", 20000, "--rate", 0, "--size", 200)
    # SIGTERM while the worker is far behind (~1 s of work still queued).
    rc, _, err = rx.stop(timeout=60)
    assert rc == 0, err
    t = rx.summary["totals"]
    assert t["kernel_drops"]["total"] == 0
    assert t["received"] == gen["datagrams"] == 20003    # + the 3 end markers
    assert count_lines(out) == 20003


def sigterm_pending(pid):
    """SIGTERM pending for the whole process (ShdPnd in /proc/PID/status)."""
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(l.split()[1], 16) for l in f if l.startswith("ShdPnd:"))
    return bool(mask & (1 << (signal.SIGTERM - 1)))


def test_second_signal_gives_up_and_counts_what_is_left(tmp_path):
    """A second signal gives up at once: what was not written is counted
    given_up, in one log line and in the summary, which is written; exit 1.
    received = written + discarded + given_up, to the line in the file."""
    port = free_udp_port()
    summary = tmp_path / "s.json"
    out = tmp_path / "f.log"
    p = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "1",
              "--threads", "1", "--rcvbuf", "16M", "--output-rate", "1000", "--window", "50000",
              "--output", f"file:{out}", "--summary", str(summary)])
    assert "ready on" in p.p.stderr.readline().decode()
    t0 = time.monotonic()
    gen = sysloggen(port, "--count", 20000, "--rate", 0, "--size", 200)   # queued when it returns
    p.p.send_signal(signal.SIGTERM)
    # Two SIGTERMs pending at once would be one: the second is sent once the
    # first has been delivered (no longer pending for the process, /proc).
    wait_until(lambda: not sigterm_pending(p.p.pid), "the first SIGTERM delivered")
    p.p.send_signal(signal.SIGTERM)
    elapsed = time.monotonic() - t0
    rc, _, err = p.stop(timeout=10)
    assert rc == 1, err
    assert "second signal: giving up" in err, err
    t = read_json(summary)["totals"]
    left = t["given_up"]
    assert f"stop: gave up {left} received message(s) not written" in err, err
    assert gen["datagrams"] == t["received"] + t["kernel_drops"]["total"] + t["abandoned"], t
    assert t["received"] == t["written"] + t["discarded"] + left, t
    assert t["discarded"] == 0 and count_lines(out) == t["written"], t
    # The output writes at most 1,000/s (and a second more): the rest of
    # the 20,003 (3 end markers) was not written, at any machine's speed.
    assert 20_003 - 1_000 * (elapsed + 1) <= left <= 20_003, (left, elapsed)


def test_sighup_reopens_the_file(syslogrx, tmp_path):
    port = free_udp_port()
    out = tmp_path / "rot.log"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--output", f"file:{out}", port=port)
    rotated = str(out) + ".1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"<13>before rotation", ("127.0.0.1", port))
        # Events, not sleeps: the line is in the file; the move; after SIGHUP
        # the file is there again (reopened: created); the next line goes there.
        wait_until(lambda: out.exists() and out.read_bytes().endswith(b"\n"), "first line")
        os.rename(out, rotated)                   # logrotate's move
        rx.p.send_signal(signal.SIGHUP)
        wait_until(out.exists, "reopened file")
        s.sendto(b"<13>after rotation", ("127.0.0.1", port))
    rc, _, err = rx.stop()                        # SIGTERM writes what is queued
    assert rc == 0, err
    assert open(str(out) + ".1", "rb").read() == b"<13>before rotation\n"
    assert out.read_bytes() == b"<13>after rotation\n"


def test_bad_datagrams_are_all_accounted_for(syslogrx, tmp_path):
    """Empty, binary, 65,000-byte and bad-PRI datagrams do not stop the
    receiver; each is received, counted and written."""
    port = free_udp_port()
    out = tmp_path / "bad.log"
    rx = syslogrx("--sockets", "2", "--threads", "1", "--rcvbuf", "8M", "--format", "json",
                  "--output", f"file:{out}", port=port)
    bad = [b"", bytes(range(256)), b"<13>" + b"A" * 64_996, b"<999>bad pri", b"<1a>x",
           b"<>", b"\xff\xfe\x00garbage", b"<13>fine after all that"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        for m in bad:
            s.sendto(m, ("127.0.0.1", port))
    rc, _, err = rx.stop()          # the queue is read before exit: no wait needed
    assert rc == 0, err
    t = rx.summary["totals"]
    assert t["received"] == len(bad)
    assert t["written"] == len(bad)
    assert t["empty"] == 1
    assert t["bytes"] == sum(len(m) for m in bad)
    assert t["malformed"] >= 4           # empty, bad PRIs at least
    import json
    lines = out.read_bytes().splitlines()
    assert len(lines) == len(bad)
    objs = [json.loads(l) for l in lines]  # every line is valid JSON (UTF-8)
    # no stamp: the first word is the TAG, as syslog-ng reads it
    assert any(o.get("app_name") == "fine" and o.get("msg") == "after all that" for o in objs)
    assert sum(1 for o in objs if o["malformed"]) == t["malformed"]


@pytest.mark.parametrize("mode", [[], ["--supervise"]], ids=["alone", "supervised"])
def test_what_the_exit_drain_cannot_take_is_counted_as_abandoned(syslogrx, tmp_path, mode):
    """A slow output at SIGTERM: the kernel queues are read for 2 s at most
    (as the window makes room: 800 at --output-rate 400); the 4 MiB queue
    holds about 3,000 more, which are read and counted as abandoned, never
    freed uncounted. sent = received + kernel drops + abandoned, and every
    received is written. Supervised, the same: at the final stop no next
    child will read the queues the supervisor holds (at an upgrade one does)."""
    port = free_udp_port()
    out = tmp_path / "slow.log"
    rx = syslogrx(*mode, "--sockets", "1", "--threads", "1", "--rcvbuf", "4M", "--window", "500",
                  "--output-rate", "400", "--output", f"file:{out}", port=port)
    gen = sysloggen(port, "--count", 5000, "--rate", 0, "--size", 200)
    rc, _, err = rx.stop(timeout=60)
    assert rc == 0, err
    t = rx.summary["totals"]
    assert t["abandoned"] > 0, t
    assert t["received"] + t["kernel_drops"]["total"] + t["abandoned"] == gen["datagrams"]
    assert t["written"] == t["received"] == count_lines(out)


def test_loggen_traffic_is_sequence_accounted(syslogrx, tmp_path):
    """syslog-ng's loggen ("seq: N, thread: T, runid: R") is recognised too.
    One socket: spread over several workers one flow is reordered, and the
    summary says so (reordered > 0), which would make this count inexact."""
    port = free_udp_port()
    rx = syslogrx("--sockets", "1", "--threads", "1", "--rcvbuf", "8M", port=port)
    r = run_cmd(["loggen", "--dgram", "--inet", "-r", "5000", "-n", "3000", "-s", "300",
                 "127.0.0.1", str(port)], timeout=60)
    assert r.returncode == 0, r.stderr
    rc, _, err = rx.stop()          # the queue is read before exit: no wait needed
    assert rc == 0, err
    s = rx.summary
    assert s["totals"]["received"] == 3000
    assert s["loss"] == {"sequences": True, "flows_max": 1024, "jump_max": 1 << 20,
                         "sequenced": 3000, "received": 3000, "missing": 0, "duplicates": 0,
                         "reordered": 0, "untracked": 0, "implausible": 0,
                         "flows": 1, "flows_closed": 0, "sent": None,
                         "end_markers": 0, "end_markers_lost": 0,
                         "gaps_equal_kernel_drops": True}
