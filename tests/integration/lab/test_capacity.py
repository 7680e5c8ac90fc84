"""Receive capacity past the sender (lab/benchlib/capacity.py): the receiver
is held (SIGSTOP) while sysloggen fills its queues, then released and timed
until they are empty. What is asserted here is the measurement's behaviour:
the count behind the rate is exact (what drained is what the receiver says it
read), and the table reports each trial's own numbers, recomputed here from
the trial, not by the code that wrote it. How much faster than the sender
syslogrx drains is a figure: `make bench` prints it ("Receive capacity past
the sender", x sender's ceiling, both measured in the same run)."""
import os
import sys

from support.paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "lab"))
from benchlib import capacity  # noqa: E402

COUNT = 200000


def test_drain_trials_count_exactly_and_the_table_reports_them(tmp_path):
    names = (capacity.SYSLOGRX_NULL, capacity.DRAINRX)
    trials = [capacity.drain_trial(name, str(tmp_path / str(i)), count=COUNT)
              for i, name in enumerate(names)]
    for t in trials:
        assert t["error"] == "", t
        assert t["sent"] == COUNT
        # Held: the queues took what the kernel did not drop; all of it drained
        # and the receiver read exactly that.
        assert t["drained"] == t["sent"] - t["dropped"] == t["received"], t
        assert t["drained"] > 0 and t["seconds"] > 0 and t["cpu_s"] > 0, t
        assert t["per_core"] == round(t["drained"] / t["cpu_s"], 1)
    rx, ref = trials
    assert rx["dropped"] == 0, rx          # 4 x 256M holds 200,000 x 2,304 bytes

    # The table, one row per trial in order, each cell from that trial.
    rows = [l for l in capacity.table(trials).splitlines() if l.startswith("| ")][1:]
    assert len(rows) == len(trials)
    for row, t in zip(rows, trials):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 8, row
        assert cells[0] == t["receiver"]
        assert int(cells[1].replace(",", "")) == t["drained"]
        assert abs(int(cells[2].replace(",", "")) - t["rate"]) <= 0.5
        assert abs(int(cells[3].replace(",", "")) - t["per_core"]) <= 0.5
        assert cells[4] == f"{t['rate'] / ref['rate']:.2f}x"
        assert cells[5] == ""                                # not a file: no drainrx --write
        assert abs(int(cells[6].replace(",", "")) - t["sender_rate"]) <= 0.5
        assert cells[7] == f"{t['rate'] / t['sender_rate']:.2f}x"
    assert rows[1].split("|")[5].strip() == "1.00x"         # drainrx against itself
