"""Closing the books to the last message: sysloggen ends each flow with an end
marker carrying how many it sent, so a loss after the last sequence number
the receiver got (the tail) is counted too, and sequence accounting equals
the kernel's traced drops exactly, however the run ends."""
import json
import re
import signal
import subprocess
import time

from support.paths import binary
from support.ports import free_udp_port

SEQ = re.compile(rb" seq=(\d+) ")


def lines_in(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def tail_drop_run(syslogrx, tmp_path, *gen_args):
    """A calm second, then a 100,000/s burst to the end of the run while the
    receiver is stopped (SIGSTOP) behind a 64K buffer: the queue fills and
    every later datagram, the run's last ones included, is dropped by the
    kernel. Synchronised on events: SIGSTOP once the receiver has written
    100 messages of the calm second (its output file), SIGCONT once the
    sender's own count says its last message is out (its per-second row at
    55,000), which is 2.5 s before its first end marker (--end-pause-ms)."""
    port = free_udp_port()
    out = tmp_path / "tail.log"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--rcvbuf", "64K",
                  "--output", f"file:{out}", port=port)
    gen = subprocess.Popen([binary("sysloggen"), "--target", f"127.0.0.1:{port}", "--json",
                            "--profile", "5000x1,100000x0.5", "--size", "200",
                            "--end-pause-ms", "2500", *gen_args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped = False
    try:
        deadline = time.monotonic() + 30
        while lines_in(out) < 100:
            assert gen.poll() is None and time.monotonic() < deadline, "no calm second"
            time.sleep(0.005)
        rx.p.send_signal(signal.SIGSTOP)
        stopped = True
        for line in gen.stdout:
            row = json.loads(line)
            if row["type"] == "second" and row["cumulative"] == 55_000:
                rx.p.send_signal(signal.SIGCONT)    # the data is out, the markers not yet
            if row["type"] == "summary":
                summary = row
        assert gen.wait(timeout=30) == 0, gen.stderr.read()
    finally:
        rx.p.send_signal(signal.SIGCONT)
        if gen.poll() is None:
            gen.kill()
            gen.wait()
    assert stopped
    rc, _, err = rx.stop()
    assert rc == 0, err
    return summary, rx.summary, out.read_bytes()


def test_tail_drops_are_counted_to_the_last_message(syslogrx, tmp_path):
    gen, s, data = tail_drop_run(syslogrx, tmp_path)
    t, loss = s["totals"], s["loss"]
    drops = t["kernel_drops"]["total"]
    assert gen["sent"] == 55_000 and gen["end_markers"] == 3 and gen["datagrams"] == 55_003
    assert drops > 1000, "the burst must overflow the stopped receiver's queue"
    # The last messages sent were dropped: a receiver alone sees a short gap.
    seqs = [int(x) for x in SEQ.findall(data)]
    assert len(seqs) == loss["received"] == loss["sequenced"]
    assert max(seqs) < gen["sent"] - 1, "the tail was not dropped; the test proves nothing"
    gaps_only = max(seqs) + 1 - len(seqs)
    # With the end marker the tail is counted: missing = sent - received,
    # equal to the kernel's drops to the message.
    assert loss["flows_closed"] == 1 and loss["sent"] == gen["sent"]
    assert loss["end_markers"] == 3 and loss["end_markers_lost"] == 0
    assert loss["missing"] == gen["sent"] - loss["received"] == drops
    assert loss["missing"] - gaps_only == gen["sent"] - 1 - max(seqs)
    assert loss["gaps_equal_kernel_drops"] is True
    # The datagram books close too, end markers included (they are in the output).
    assert t["received"] + drops == gen["datagrams"]
    assert t["written"] == t["received"] == data.count(b"\n")
    assert data.count(b" end=55000 copies=3 ") == 3


def test_without_end_markers_the_tail_is_invisible(syslogrx, tmp_path):
    """The same run with --end-markers 0: the gaps fall short of the kernel's
    drops by exactly the tail, and the summary says they are not equal."""
    gen, s, data = tail_drop_run(syslogrx, tmp_path, "--end-markers", "0")
    t, loss = s["totals"], s["loss"]
    drops = t["kernel_drops"]["total"]
    seqs = [int(x) for x in SEQ.findall(data)]
    assert max(seqs) < gen["sent"] - 1, "the tail was not dropped; the test proves nothing"
    assert gen["datagrams"] == gen["sent"] == 55_000
    assert loss["flows_closed"] == 0 and loss["sent"] is None and loss["end_markers"] == 0
    assert loss["missing"] == max(seqs) + 1 - len(seqs)
    assert drops - loss["missing"] == gen["sent"] - 1 - max(seqs)
    assert loss["gaps_equal_kernel_drops"] is False
    assert t["received"] + drops == gen["sent"]
