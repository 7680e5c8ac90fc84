# SPDX-License-Identifier: MIT
"""The disk-buffer and TLS tests' load: FLOWS sysloggen flows in RFC 5424 with
their sequence numbers in SDATA, and the check that every flow arrived
whole and in order; how many of a flow's numbers came out of order (the
--ordered tests hold that to ordering.late)."""
import re
import subprocess

from support.paths import binary


RATE = 20000
OUTAGE = 8
SEND_SECONDS = OUTAGE + 4
FLOWS = 4
SDATA = re.compile(rb'run="([^"]+)" flow="(\d+)" seq="(\d+)"')


def start_gen(port, run, rate=RATE, seconds=SEND_SECONDS):
    return subprocess.Popen([binary("sysloggen"), "--target", f"127.0.0.1:{port}",
                             "--rate", str(rate), "--duration", str(seconds), "--size", "300",
                             "--sources", str(FLOWS), "--run-id", run, "--format", "rfc5424",
                             "--end-markers", "0"],   # these tests count sequence numbers
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def by_flow(lines, run):
    """flow -> the sequence numbers of run, in the order the server wrote them."""
    flows = {}
    for l in lines:
        m = SDATA.search(l)
        if m and m.group(1).decode() == run:
            flows.setdefault(int(m.group(2)), []).append(int(m.group(3)))
    return flows


def check_complete_in_order(flows, sent):
    """Every sequence number of every flow, first arrivals in order (a TCP
    reconnect resends the last second: duplicates allowed, counted)."""
    total = dups = 0
    for f, seqs in flows.items():
        first, seen = [], set()
        for s in seqs:
            if s in seen:
                dups += 1
            else:
                seen.add(s)
                first.append(s)
        assert first == sorted(first), f"flow {f}: out of order"
        missing = set(range(max(seen) + 1)) - seen
        assert not missing, f"flow {f}: {len(seen)} distinct, missing {sorted(missing)[:20]}..."
        total += len(seen)
    assert total == sent, f"{total} distinct of {sent} sent"
    return dups


def below_running_max(seqs):
    """How many numbers come after a higher one of the same flow."""
    top, n = -1, 0
    for v in seqs:
        if v < top:
            n += 1
        top = max(top, v)
    return n
