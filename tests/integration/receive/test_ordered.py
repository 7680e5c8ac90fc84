"""--ordered: one flow spread over 8 sockets and 2 threads is written in the
order the kernel received it. Without it, random spreading reorders (the
summary's loss.reordered counts it); with it, nothing is reordered, nothing
arrives later than the hold (ordering.late), and the sequence numbers of each
flow in the output file rise strictly. The same with leastloaded, and with 16
flows at once.

The hold here is longer than the 5 ms default: other work shares these two
cores (in CI the sender itself), and a worker that loses its core for longer
than the hold makes its batch late. The README gives the late counts per hold
measured on this machine."""
import re

import pytest

from support.ports import free_udp_port
from support.procs import sysloggen
from support.flows import below_running_max

RATE = 100_000
SECONDS = 1.5
HOLD_MS = 100
SEQ = re.compile(rb"flow=(\d+) seq=(\d+)")


def run(syslogrx, tmp_path, policy, sources, ordered, rate=RATE, seconds=SECONDS,
        hold_ms=HOLD_MS):
    port = free_udp_port()
    out = tmp_path / f"{policy}-{sources}-{ordered}.log"
    args = ["--sockets", "8", "--threads", "2", "--balance", policy, "--rcvbuf", "8M",
            "--window", "100000", "--output", f"file:{out}"]
    if ordered:
        args.append(f"--ordered={hold_ms}")
    rx = syslogrx(*args, port=port)
    g = sysloggen(port, "--rate", rate, "--duration", seconds, "--sources", sources)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    t = s["totals"]
    assert t["received"] + t["kernel_drops"]["total"] + t["abandoned"] == g["datagrams"]
    assert t["written"] == t["received"]
    assert s["loss"]["flows"] == sources
    # Each flow's sequence numbers in the order the output file has them.
    flows = {}
    with open(out, "rb") as f:
        for line in f:
            m = SEQ.search(line)
            if m is None:           # a flow's end marker, not a numbered message
                assert b" end=" in line, line
                continue
            flows.setdefault(int(m[1]), []).append(int(m[2]))
    assert sum(len(v) for v in flows.values()) == t["written"] - s["loss"]["end_markers"]
    return s, flows


def rising(seqs):
    return all(a < b for a, b in zip(seqs, seqs[1:]))


def test_random_spreading_reorders_without_ordered(syslogrx, tmp_path):
    s, flows = run(syslogrx, tmp_path, "random", 1, False)
    assert s["loss"]["reordered"] > 0
    assert not rising(flows[0])
    assert s["ordering"] is None


@pytest.mark.parametrize("policy,sources", [("random", 1), ("leastloaded", 1), ("random", 16)])
def test_ordered_writes_each_flow_in_kernel_order(syslogrx, tmp_path, policy, sources):
    s, flows = run(syslogrx, tmp_path, policy, sources, True)
    o = s["ordering"]
    assert o["hold_ms"] == HOLD_MS
    assert o["merged"] == s["totals"]["written"]
    assert len(flows) == sources
    # The merge's promise: a message leaves kernel order only when it came
    # later than the hold, and then it is counted late. How many are late
    # depends on how long a worker lost its core on this host (a timing,
    # not a behaviour), so the test checks the accounting: every message
    # written below its flow's highest number so far is one of the late ones.
    behind = sum(below_running_max(seqs) for seqs in flows.values())
    assert behind <= o["late"], (behind, o)
    assert s["loss"]["reordered"] <= o["late"], (s["loss"], o)
    if o["late"] == 0:
        for f, seqs in flows.items():
            assert rising(seqs), f


@pytest.mark.parametrize("policy,sources", [("random", 1), ("leastloaded", 1),
                                            ("random", 16), ("leastloaded", 16)])
def test_ordered_leaves_nothing_late_when_no_worker_is_starved(syslogrx, tmp_path, policy,
                                                               sources):
    """The hold itself, not only its accounting: a paced flow (20,000/s for
    1 s, what two workers read in a few ms a batch) with a 2 s hold, a
    thousand times a batch's time. No worker is starved that long, so every
    message is merged within its hold: nothing late, nothing reordered, every
    flow strictly rising in the file. A hold that does nothing writes each
    worker's batch as it comes and fails this."""
    s, flows = run(syslogrx, tmp_path, policy, sources, True, rate=20_000, seconds=1,
                   hold_ms=2000)
    o = s["ordering"]
    assert o["hold_ms"] == 2000
    assert s["totals"]["kernel_drops"]["total"] == 0
    assert o["merged"] == s["totals"]["written"]
    assert len(flows) == sources
    assert o["late"] == 0, o
    assert s["loss"]["reordered"] == 0, s["loss"]
    for f, seqs in flows.items():
        assert seqs == list(range(len(seqs))), f
