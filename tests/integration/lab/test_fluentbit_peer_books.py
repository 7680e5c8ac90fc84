"""Fluent Bit as the bench runs it (lab/benchlib/runner.py's trial, each of its
three configurations): the books close on a load it can hold (every datagram
sent is a line of its output or a drop the kernel counted), the settle waits
for its once-a-second flush, and net.share_port puts one flow on one input.
The oracle is the sender's own count and the output file's marker lines, not
Fluent Bit's counters. Needs build/fluentbit/fluent-bit (lab/fluentbit-setup.sh
SRC, docs/lab.md): skipped, and saying so, where it is not built."""
import os
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "lab"))
from benchlib import runner  # noqa: E402
from sweeplib import fluentbit  # noqa: E402

pytestmark = pytest.mark.skipif(not fluentbit.present(), reason=fluentbit.ABSENT)


@pytest.mark.parametrize("name", fluentbit.CONFIGS)
@pytest.mark.parametrize("sender", ["sysloggen", "loggen"])
def test_books_close_after_its_flush(name, sender, tmp_path):
    spec = dict(phase="search", receiver=name, rate=2000, duration=2.0, sender=sender,
                size=1000)
    t = runner.run_trial(spec, str(tmp_path / "trial"))
    assert t["error"] == "", t
    assert t["sent"] >= 3000, t
    # what it wrote, counted in its file by the sender's marker, after the
    # settle: every datagram is a line or a kernel drop
    assert t["written"] + t["kernel_drops"] == t["sent"], t
    assert t["written"] > 0 and t["peak_rss_kb"] > 0


def test_share_port_puts_one_flow_on_one_input(tmp_path):
    from sweeplib import cells
    port = cells.free_udp_port()
    spec = {"config": fluentbit.SHARE_PORT, "rcvbuf": 8 << 20, "sockets": 2}
    rx = fluentbit.FluentBit(spec, port, str(tmp_path))
    try:
        rx.start()
        rx.wait_ready()
        sent = cells.run_sender({"sender": "sysloggen", "rate": 1000, "duration": 1.0,
                                 "size": 200}, port)
        cells.settle(rx, port)
        per_input = sorted(v["records"] for v in rx.metrics()["input"].values())
        lines, _ = cells.count_output(rx.output, "sysloggen")
    finally:
        rx.stop()
    assert lines == sent["datagrams"]          # the end markers too
    assert per_input == [0, sent["datagrams"]]
