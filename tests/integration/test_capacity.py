"""Receive capacity past the sender (lab/benchlib/capacity.py): the receiver
is held (SIGSTOP) while sysloggen fills its queues, then released and timed
until they are empty. syslogrx draining to null is several times faster than
the sender on this machine, and the measurement must show it; the count
behind the rate is exact (what drained is what the receiver says it read)."""
import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "lab"))
from benchlib import capacity  # noqa: E402


def test_drain_rate_is_above_the_senders_ceiling(tmp_path):
    trials = [capacity.drain_trial(name, str(tmp_path / str(i)), count=200000)
              for i, name in enumerate((capacity.SYSLOGRX_NULL, capacity.DRAINRX))]
    for t in trials:
        assert t["error"] == "", t
        assert t["sent"] == 200000
        # Held: the queues took what the kernel did not drop; all of it drained
        # and the receiver read exactly that.
        assert t["drained"] == t["sent"] - t["dropped"] == t["received"], t
        assert t["drained"] > 100000, t
        assert t["cpu_s"] > 0 and t["per_core"] > 0
    rx = trials[0]
    assert rx["dropped"] == 0, rx          # 4 x 256M holds 200,000 x 2,304 bytes
    # The sender's ceiling: its rate while filling, with the CPUs to itself.
    assert rx["rate"] > rx["sender_rate"], rx
    md = capacity.table(trials)
    assert "| syslogrx raw, null output | 200,000 |" in md
    assert f"{rx['rate'] / rx['sender_rate']:.2f}x |" in md
