# SPDX-License-Identifier: MIT
"""Closing the books of a run under load: sysloggen's load around some actions
(an upgrade, a resize), then sent = received + counted drops, every process
wrote what it received, every flow's sequence numbers in the output but for
the counted drops."""
import time

from support.procnet import wait_queues_empty
from support.rx_watch import SEQ, start_load, stop_load, wait_gone

RATE = 20_000


def summaries(rx, final):
    return rx.old_summaries() + [final]


def run_load(rx, listen, actions, rate=RATE, scraper=None):
    """actions() under sysloggen's load; then the load stops (and the
    scraper, before the receiver goes) and the receiver (every process that
    ever received) stops. (sent summary, stderr, final)."""
    gen = start_load(listen, rate)
    try:
        time.sleep(0.3)
        actions()
        time.sleep(0.3)
    finally:
        sent = stop_load(gen)
        if scraper:
            scraper.wait_more(1)
            scraper.stop()
    # Every datagram read before SIGTERM: on a loaded host the last process
    # may be seconds behind, and what its stop then finds queued past
    # --drain-timeout is counted abandoned, not received.
    wait_queues_empty(int(listen.rsplit(":", 1)[1]))
    rc, err, final = rx.stop()
    assert rc == 0, err
    return sent, err, final


def check_books(sent, all_s, final, seen, exact=True):
    """sent = received + kernel drops + abandoned (the tracer's maps span every
    process: the final count is the run's), none abandoned; every process
    wrote what it received; each flow's sequence numbers are all in the
    output but for the counted drops."""
    received = sum(s["totals"]["received"] for s in all_s)
    drops = final["totals"]["kernel_drops"]["total"] + final["totals"]["no_socket_drops"]["total"]
    # the books close first (what a stop left queued is counted abandoned),
    # then none of it may be abandoned
    abandoned = sum(s["totals"]["abandoned"] for s in all_s)
    assert sent["sent"] == received + drops + abandoned, (sent["sent"], received, drops, abandoned)
    for s in all_s:
        t = s["totals"]
        assert t["written"] == t["received"] and t["abandoned"] == 0, t
    if exact:
        assert drops == 0, final["totals"]
    missing = 0
    for f in sent["flows"]:
        got = seen.get(f["flow"], ())
        assert len(got) == len(set(got)), f"flow {f['flow']}: duplicates"
        assert set(got) <= set(range(f["sent"]))
        missing += f["sent"] - len(set(got))
    assert missing == drops


def upgraded_twice_delivered(rx, listen, section, delivered_key, records):
    """Two upgrades in place (kill -USR2) under load into a remote output
    (Kafka, OTLP): each process delivered what it wrote and failed nothing;
    records(n) gives the n message bodies the far side holds, each in the
    output once; every sequence number once, but for counted drops."""
    def upgrades():
        for _ in range(2):
            assert rx.upgrade() is not None, "".join(rx.lines)
            wait_gone(rx.olds[-1], 120)
            time.sleep(0.3)     # some load for each process, not a synchronisation
    sent, err, final = run_load(rx, listen, upgrades)
    all_s = summaries(rx, final)
    delivered = sum(s[section][delivered_key] for s in all_s)
    assert delivered == sum(s["totals"]["written"] for s in all_s)
    for s in all_s:
        assert s[section]["undelivered"] == 0 and s[section]["failed"]["total"] == 0, s[section]
    bodies = records(delivered)
    assert len(bodies) == delivered
    flows = {}
    for v in bodies:
        m = SEQ.search(v.encode() if isinstance(v, str) else v)
        assert m, v
        flows.setdefault(int(m.group(1)), []).append(int(m.group(2)))
    check_books(sent, all_s, final, flows, exact=False)
