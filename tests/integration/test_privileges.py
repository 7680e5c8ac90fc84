"""--user and capabilities: syslogrx started as root, running as another user
with nothing left, still receiving, balancing and tracing; and the errors a
user meets without privileges, each naming what is missing and the way out."""
import os
import shutil
import tempfile
import time

import pytest

from conftest import Proc, binary, free_udp_port, read_json, run_cmd, sysloggen

NOBODY = 65534


def task_status(pid):
    """{tid: {field: value}} from /proc/PID/task/*/status."""
    tasks = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                tasks[int(tid)] = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
        except FileNotFoundError:
            pass
    return tasks


def wait_for_tasks(pid, n, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tasks = task_status(pid)
        if len(tasks) >= n:
            return tasks
        time.sleep(0.02)
    raise AssertionError(f"syslogrx has {len(task_status(pid))} threads, expected {n}")


def assert_no_privilege(tasks, uid):
    for tid, st in tasks.items():
        assert st["Uid"].split() == [str(uid)] * 4, (tid, st["Uid"])
        assert st["Gid"].split() == [str(uid)] * 4, (tid, st["Gid"])
        for field in ("CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"):
            assert int(st[field], 16) == 0, (tid, field, st[field])
        assert st["NoNewPrivs"] == "1", tid


@pytest.fixture
def nobody_dir():
    """A directory nobody can write the summary into (pytest's tmp is root's)."""
    d = tempfile.mkdtemp(prefix="srx12c-")
    os.chown(d, NOBODY, NOBODY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_user_nobody_keeps_receiving_balancing_and_tracing(nobody_dir, procs):
    port = free_udp_port()
    summary = os.path.join(nobody_dir, "s.json")
    # Small queues and slow workers: the kernel must drop, and the tracer,
    # whose maps are read as nobody, must count every drop.
    rx = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--user", "nobody",
               "--sockets", "4", "--threads", "2", "--balance", "random", "--rcvbuf", "16K",
               "--cost-ns", "100000", "--output", "null", "--summary", summary])
    procs.append(rx)
    assert "ready on" in rx.p.stderr.readline().decode()
    # main, 2 workers, the output stage: every one without a capability.
    assert_no_privilege(wait_for_tasks(rx.p.pid, 4), NOBODY)

    sent = sysloggen(port, "--count", 20000, "--rate", 0, "--size", 200)["datagrams"]
    tasks = task_status(rx.p.pid)
    assert len(tasks) >= 4
    assert_no_privilege(tasks, NOBODY)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = read_json(summary)
    assert os.stat(summary).st_uid == NOBODY
    t = s["totals"]
    # Traced as nobody: drops counted, equal to the kernel's own counter.
    assert t["kernel_drops"]["total"] > 0, t
    assert t["kernel_drops_match_so_meminfo"] is True
    assert sent == t["received"] + t["kernel_drops"]["total"] + t["abandoned"]
    # Balanced as nobody: the BPF program spread the one flow over all 4 sockets.
    for sock in s["sockets"]:
        assert sock["steered"] > 0 and sock["received"] > 0, s["sockets"]
    assert t["selection_failures"] == 0


def test_user_by_number(nobody_dir):
    port = free_udp_port()
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--user", str(NOBODY),
                 "--duration", "0.3", "--output", "null",
                 "--summary", os.path.join(nobody_dir, "s.json")], timeout=20)
    assert r.returncode == 0, r.stderr
    assert os.stat(os.path.join(nobody_dir, "s.json")).st_uid == NOBODY


def test_unknown_user_is_named_before_binding():
    port = free_udp_port()
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}",
                 "--user", "srx12c-no-such-user", "--duration", "5"], timeout=20)
    assert r.returncode == 2, r.stderr
    assert "--user srx12c-no-such-user: no such user" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_user_without_setuid_names_the_capabilities():
    port = free_udp_port()
    # Root, but without CAP_SETUID and CAP_SETGID in its bounding set.
    r = run_cmd(["setpriv", "--bounding-set=-setuid,-setgid", binary("syslogrx"),
                 "--listen", f"127.0.0.1:{port}", "--user", "nobody", "--duration", "5"],
                timeout=20)
    assert r.returncode == 1, r.stderr
    assert "--user nobody" in r.stderr and "CAP_SETUID and CAP_SETGID" in r.stderr
    assert "ready on" not in r.stderr


def test_user_already_that_user_needs_nothing(nobody_dir):
    """Started as USER by a service manager, --user USER just drops what is left."""
    port = free_udp_port()
    r = run_cmd(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 "--inh-caps=-all", binary("syslogrx"), "--listen", f"127.0.0.1:{port}",
                 "--user", "nobody", "--balance", "hash", "--no-trace", "--duration", "0.3",
                 "--output", "null", "--summary", os.path.join(nobody_dir, "s.json")],
                timeout=20)
    assert r.returncode == 0, r.stderr
    assert os.path.exists(os.path.join(nobody_dir, "s.json"))


UNPRIV = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]


@pytest.mark.parametrize("flags,says", [
    ([], "random spread by classic BPF"),                     # and drops from SO_MEMINFO
    (["--balance", "hash"], "drops from SO_MEMINFO"),
    (["--no-trace"], "random spread by classic BPF"),
])
def test_without_capabilities_it_spreads_and_counts(flags, says):
    """No capability: random by classic BPF, drops from SO_MEMINFO, said on
    the ready line (tests/integration/test_unprivileged.py: what they do)."""
    port = free_udp_port()
    r = run_cmd(UNPRIV + [binary("syslogrx"), "--listen", f"127.0.0.1:{port}",
                          "--duration", "0.3", "--output", "null"] + flags, timeout=20)
    assert r.returncode == 0, r.stderr
    ready = [l for l in r.stderr.splitlines() if "ready on" in l]
    assert len(ready) == 1 and says in ready[0], r.stderr
    assert ("drops from SO_MEMINFO" in ready[0]) == ("--no-trace" not in flags)


@pytest.mark.parametrize("policy,caps", [
    ("roundrobin", "CAP_BPF"),
    ("leastloaded", "CAP_BPF and CAP_PERFMON"),
])
def test_policies_with_state_need_ebpf_and_say_so(policy, caps):
    port = free_udp_port()
    r = run_cmd(UNPRIV + [binary("syslogrx"), "--listen", f"127.0.0.1:{port}",
                          "--duration", "5", "--balance", policy], timeout=20)
    assert r.returncode == 1, r.stderr
    assert f"--balance {policy} needs eBPF: {caps} (" in r.stderr, r.stderr
    assert "--balance random spreads by classic BPF" in r.stderr
    assert "ready on" not in r.stderr
