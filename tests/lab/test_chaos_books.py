# SPDX-License-Identifier: MIT
"""make chaos's books (tests/support/chaos.py judge_books): a loss no figure
counts fails a cell, but for the cells where TCP cannot tell
(docs/outputs.md#what-tcp-cannot-know), which say LIMIT with the number;
the disk buffer's check still holds there for anything past it."""
import pytest

from support import chaos


def judged(fault, output, buffer, delivered, counts=None, kill=False, sent=3000):
    c = chaos.Cell(fault, output, buffer, kill)
    c.sent, c.delivered, c.counts = sent, delivered, dict(counts or {})
    c.start_s = 1.0
    chaos.judge_books(c)
    return c


@pytest.mark.parametrize("fault,output", sorted(chaos.TCP_LIMIT))
def test_what_tcp_cannot_know_is_the_limit_not_a_failure(fault, output):
    c = judged(fault, output, "spill", 30)
    assert c.ok and c.result == "LIMIT" and c.limit == 2970, c.why
    row = chaos.table([c]).splitlines()[-1]
    assert "| LIMIT |" in row and "| 2970 (the limit) |" in row, row
    assert "2970 counted nowhere: [the limit of TCP]" in chaos.faults_table([c])


@pytest.mark.parametrize("fault,output", [("timeout", "otlp"), ("timeout", "kafka"),
                                          ("silent", "tls"), ("down", "tcp"),
                                          ("dropped", "tcp")])
def test_an_uncounted_loss_elsewhere_fails(fault, output):
    c = judged(fault, output, "none", 2990, {"given_up": 5})
    assert not c.ok and c.result == "FAIL" and not c.limit, c.why
    assert "5 of 3000 lost and counted nowhere" in c.why[0]
    assert "**5 counted nowhere**" in chaos.faults_table([c])


def test_the_limit_excuses_only_itself():
    """A limit cell that lost more with a disk buffer than its uncounted
    and its uncertain fails; a counted loss is no limit."""
    c = judged("silent", "tcp", "reliable", 2000, {"abandoned": 600})
    assert c.limit == 400 and not c.ok, c.why
    assert "with a reliable disk buffer 1000 of 3000 lost" in c.why[0]
    c = judged("timeout", "tcp", "none", 2000, {"uncertain": 1000})
    assert c.ok and c.result == "pass" and not c.limit


def test_kill_9_is_judged_as_before():
    """kill -9 counts nothing, so no LIMIT, but with reliable, where what
    is not on disk or delivered must be counted."""
    assert judged("timeout", "tcp", "spill", 100, kill=True).result == "pass"
    assert judged("timeout", "tcp", "reliable", 100, kill=True).result == "LIMIT"
    assert judged("timeout", "otlp", "reliable", 100, kill=True).result == "FAIL"


@pytest.mark.parametrize("fault,output,result", [("silent", "tcp", "LIMIT"),
                                                 ("timeout", "tls", "LIMIT"),
                                                 ("silent", "tls", "FAIL"),
                                                 ("dropped", "tcp", "FAIL")])
def test_a_fault_not_shown_fails_but_where_tcp_cannot_tell(fault, output, result):
    """A peer that reads and drops is a reader: /readyz and the metrics
    cannot show it over TCP (the limit, said); anywhere else a fault not
    shown within the bound fails the cell."""
    c = judged(fault, output, "none", 3000)
    c.readyz_s, c.metric_s = None, 7.5
    chaos.judge_shown(c, 5)
    assert c.result == result, (c.why, c.limit_said)
    assert (c.why or c.limit_said) == ["/readyz did not show it within 5 s",
                                       "the metrics did not show it within 5 s"]
