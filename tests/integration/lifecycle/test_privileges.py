"""--user and capabilities: syslogrx started as root, running as another user
with nothing left, still receiving, balancing and tracing; and the errors a
user meets without privileges, each naming what is missing and the way out."""
import os
import shutil
import socket
import tempfile
import threading
import time

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import log_text, Proc, read_json, run_cmd, sysloggen
from support.prom import scrape

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
    the ready line (test_receiver.py::test_unprivileged_says_which_capability:
    the capability named)."""
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


# ---- issue 19: no thread of any mode keeps a capability ---------------------

class TcpSink:
    """A TCP destination on loopback that reads and counts lines (--output tcp:)."""

    def __init__(self):
        self.srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(4)
        self.port = self.srv.getsockname()[1]
        self.lines = 0
        self.done = False
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self):
        self.srv.settimeout(0.2)
        while not self.done:
            try:
                c, _ = self.srv.accept()
            except OSError:
                continue
            with c:
                c.settimeout(0.2)
                while not self.done:
                    try:
                        data = c.recv(1 << 16)
                    except socket.timeout:
                        continue
                    if not data:
                        break
                    self.lines += data.count(b"\n")

    def close(self):
        self.done = True
        self.t.join(timeout=10)
        self.srv.close()


def caps_all_zero(tasks):
    """Every thread: nothing in any capability set."""
    for tid, st in tasks.items():
        for field in ("CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"):
            assert int(st[field], 16) == 0, (tid, st.get("Name"), field, st[field])


def read_until(p, what, timeout=60):
    """stderr lines of p up to the one containing what (which is returned)."""
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stderr.readline().decode()
        lines.append(line)
        if what in line:
            return line, lines
        assert line, "".join(lines)
    raise AssertionError("".join(lines))


# (name, extra flags, threads beyond main + 2 workers + the output stage)
MODES = [
    ("plain", [], 0),
    ("ordered", ["--ordered"], 1),                 # the reorder stage
    ("metrics", ["--metrics", "0"], 1),            # the HTTP server's thread
    ("ordered-metrics", ["--ordered", "--metrics", "0"], 2),
    ("tcp", ["--output", "tcp:127.0.0.1:{tcp}"], 0),
    ("disk-buffer", ["--output", "tcp:127.0.0.1:{tcp}", "--disk-buffer", "{dir}"], 1),
    ("supervise", ["--supervise"], 0),
]


@pytest.mark.parametrize("user", [None, "nobody"], ids=["root", "nobody"])
@pytest.mark.parametrize("name,flags,extra", MODES, ids=[m[0] for m in MODES])
def test_no_thread_of_any_mode_keeps_a_capability(nobody_dir, tmp_path, procs, name, flags,
                                                  extra, user):
    # Root without CAP_DAC_OVERRIDE writes only where root may: its own folder.
    where = nobody_dir if user else str(tmp_path)
    port = free_udp_port()
    tcp = TcpSink()
    try:
        argv = [binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "2",
                "--threads", "2", "--summary", os.path.join(where, "s.json")]
        argv += [f.format(tcp=tcp.port, dir=os.path.join(where, "db")) for f in flags]
        if "--output" not in argv:
            argv += ["--output", "null"]
        if user:
            argv += ["--user", user]
        rx = Proc(argv, bufsize=0)       # unbuffered: stop() reads the rest
        procs.append(rx)
        if name == "supervise":
            line, lines = read_until(rx.p, "started receiver pid")
            pid = int(line.rsplit(" ", 1)[1])
            caps_all_zero(task_status(rx.p.pid))      # the supervisor too
        else:
            line, lines = read_until(rx.p, "ready on")
            pid = rx.p.pid
        sent = sysloggen(port, "--count", 5000, "--rate", 50000, "--size", 200)["datagrams"]
        if "--metrics" in flags:
            # Served as nobody too: the numbers after the load, by the HTTP server's thread.
            mline, more = read_until(rx.p, "metrics on http://")
            lines += more
            mport = int(mline.rsplit(":", 1)[1].split("/")[0])
            deadline = time.monotonic() + 30
            while True:
                text = scrape(mport)
                got = [l for l in text.splitlines() if l.startswith("syslogrx_written_total ")]
                # A loaded host may drop some: the books close with the drops.
                drops = sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
                            if l.startswith("syslogrx_socket_kernel_drops_total{"))
                if got and float(got[0].split()[1]) + drops == sent \
                        or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert got == [f"syslogrx_written_total {sent - int(drops)}"], (got, drops)
        tasks = wait_for_tasks(pid, 4 + extra)
        caps_all_zero(tasks)
        for st in tasks.values():
            assert st["Uid"].split() == [str(NOBODY if user else 0)] * 4, st["Uid"]
        rc, _, err = rx.stop()
        assert rc == 0, err
        # Said once, at start, by the process that started (not by a child).
        assert (err + "".join(lines)).count("running as uid 0") == (0 if user else 1), err
    finally:
        tcp.close()


@pytest.mark.parametrize("flags,named", [
    (["--summary", "/root/srx-i19/s.json"], "--summary /root/srx-i19/s.json"),
    (["--output", "file:/root/srx-i19/out.log"], "--output file:/root/srx-i19/out.log"),
    (["--output", "tcp:127.0.0.1:9", "--disk-buffer", "/root/srx-i19-db"],
     "--disk-buffer /root/srx-i19-db"),
], ids=["summary", "output-file", "disk-buffer"])
def test_a_path_the_user_cannot_write_is_refused_at_start(flags, named):
    """Checked as nobody before anything is bound: exit 2 and one line naming
    the flag and the path, not a whole run and a summary lost at exit."""
    port = free_udp_port()
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--user", "nobody",
                 "--duration", "30"] + (["--output", "null"] if "--output" not in flags else [])
                + flags, timeout=20)
    assert r.returncode == 2, r.stderr
    assert log_text(r.stderr) == f"syslogrx: {named}: Permission denied (syslogrx writes it as nobody; " \
                       "checked before starting)\n"
    assert not os.path.exists("/root/srx-i19-db")


def test_root_without_user_is_checked_without_capabilities(nobody_dir):
    """No --user: uid 0 without CAP_DAC_OVERRIDE, so a folder only nobody may
    write is refused at start too."""
    sub = os.path.join(nobody_dir, "private")
    os.mkdir(sub, 0o700)
    os.chown(sub, NOBODY, NOBODY)
    port = free_udp_port()
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--duration", "30",
                 "--output", "null", "--summary", os.path.join(sub, "s.json")], timeout=20)
    assert r.returncode == 2, r.stderr
    assert f"--summary {sub}/s.json: Permission denied (syslogrx writes it as uid 0 without " \
           "capabilities" in r.stderr


@pytest.mark.parametrize("user", [None, "nobody"], ids=["root", "nobody"])
def test_kafka_output_threads_keep_no_capability(broker, nobody_dir, tmp_path, procs, user):  # noqa: F811
    """librdkafka starts its threads in sink_open, after the drop: none holds
    a capability, as root or as nobody."""
    topic = f"i19-caps-{user or 'root'}"
    broker.create_topic(topic, partitions=1)
    where = nobody_dir if user else str(tmp_path)
    port = free_udp_port()
    rx = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "2",
               "--threads", "2", "--output", f"kafka:{broker.bootstrap}/{topic}",
               "--summary", os.path.join(where, "s.json")] + (["--user", user] if user else []),
              bufsize=0)
    procs.append(rx)
    read_until(rx.p, "ready on")
    sent = sysloggen(port, "--count", 2000, "--rate", 20000, "--size", 200)["datagrams"]
    tasks = wait_for_tasks(rx.p.pid, 6)         # main, 2 workers, output, librdkafka's
    caps_all_zero(tasks)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = read_json(os.path.join(where, "s.json"))
    assert s["kafka"]["delivered"] + s["kafka"]["undelivered"] == s["totals"]["written"]
    assert sent == s["totals"]["received"] + s["totals"]["kernel_drops"]["total"]
