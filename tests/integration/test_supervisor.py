"""Crash survival (issue 13): syslogrx --supervise holds the sockets and BPF
objects and runs the receiver as a child on them. kill -9 of the child under
load: a new child takes the same sockets, what the kernel queued meanwhile is
received, and what was in the dead child's window is counted as lost from its
own counters (kept in memory the supervisor shares), so that
sent = written + kernel drops + no-socket drops + reported window loss,
to the message."""
import json
import os
import pathlib
import shutil
import signal
import socket
import tempfile
import time

import pytest

from rx_watch import Receiver, listen_for, seqs_in_output, under_load


NOBODY = 65534


@pytest.fixture
def nobody_path(tmp_path):
    """A folder nobody owns (pytest's is root's, mode 0700): --user nobody
    reads its --config there and writes its output and summaries there."""
    d = tempfile.mkdtemp(prefix="srx-i19-sup-")
    os.chown(d, NOBODY, NOBODY)
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("family,user", [(socket.AF_INET, None), (socket.AF_INET6, None),
                                         (socket.AF_INET, "nobody")],
                         ids=["ipv4", "ipv6", "ipv4-user-nobody"])
def test_kill_9_under_load_is_accounted_to_the_message(tmp_path, nobody_path, family, user):
    """With --user nobody the supervisor becomes nobody after binding, before
    any child: each child inherits the user (it could not switch itself)."""
    kills = 3
    listen = listen_for(family)
    where = nobody_path if user else tmp_path
    rx = Receiver(where, listen, "--supervise", "--rcvbuf", "16M",
                  *(["--user", user] if user else []),
                  settings={"sockets": 4, "threads": 2})
    if user:
        for pid in (rx.p.pid, rx.child()):
            with open(f"/proc/{pid}/status") as f:
                st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
            assert st["Uid"].split() == [str(NOBODY)] * 4 and int(st["CapEff"], 16) == 0
    replacements = []

    def crash_repeatedly():
        os.kill(rx.pid, signal.SIGHUP)      # logrotate: forwarded, not a restart
        for _ in range(kills):
            time.sleep(0.4)
            replacements.append(rx.kill_child())

    sent, err, final = under_load(rx, listen, crash_repeatedly)
    with open(f"{rx.summary_path}.supervisor") as f:
        sup = json.load(f)
    assert sup["restarts"] == kills and len(sup["children"]) == kills + 1, sup
    crashed, last = sup["children"][:kills], sup["children"][-1]
    assert all(c["signal"] == 9 and c["replaced_ms"] is not None for c in crashed)
    assert [c["pid"] for c in sup["children"][1:]] == replacements
    assert last["exit_status"] == 0 and last["window_lost"] == 0
    assert last["written"] == final["totals"]["written"]
    lost = sup["window_lost"]
    assert lost == sum(c["taken"] - c["written"] - c["discarded"] for c in crashed)

    with open(rx.out, "rb") as f:
        lines = sum(1 for _ in f)
    t = final["totals"]          # the tracer's maps span all children
    assert lines == sum(c["written"] for c in sup["children"])
    assert sent["sent"] == lines + t["kernel_drops"]["total"] + \
        t["no_socket_drops"]["total"] + lost, (sent["sent"], lines, t, lost)
    # The loss is exactly the sequence numbers missing from the file.
    flows = seqs_in_output(rx.out)
    missing = sum(f["sent"] - len(flows.get(f["flow"], ())) for f in sent["flows"])
    assert missing == lost + t["kernel_drops"]["total"] + t["no_socket_drops"]["total"]
    assert "killed by signal 9" in err
    if user:
        assert os.stat(rx.out).st_uid == NOBODY
        assert os.stat(f"{rx.summary_path}.supervisor").st_uid == NOBODY
