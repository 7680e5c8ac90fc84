"""Shared fixtures for the root integration tests: paths, free ports, a UDP sender.

Each test builds its own world (sockets, namespaces, daemons) and takes it down.
These tests need root and BPF; CI runs as root, so they never skip for that.
"""
import atexit
import json
import os
import shutil
import stat
import tempfile
import socket
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# SYSLOGRX_BUILD: another build of the same tree (make test-sanitize's build-asan/)
BUILD = os.environ.get("SYSLOGRX_BUILD") or os.path.join(ROOT, "build")


def others_can_reach(path):
    """Every folder above path lets other users through (o+x)."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if not os.stat(d).st_mode & stat.S_IXOTH:
            return False
        if d == "/":
            return True
        d = os.path.dirname(d)


_RUN_BIN = []


def binary(name):
    """The built program. A checkout under a private home (a fresh machine's
    /root is 0700) is out of reach of uid 65534, which tests run syslogrx as
    (--user, setpriv, supervised and upgraded children exec it again): then a
    copy in a world-readable folder of the session's, as an installed binary
    would be."""
    path = os.path.join(BUILD, name)
    assert os.access(path, os.X_OK), f"{path} is not built: run make"
    if others_can_reach(path):
        return path
    if not _RUN_BIN:
        d = tempfile.mkdtemp(prefix="syslogrx-bin-")
        os.chmod(d, 0o755)
        atexit.register(shutil.rmtree, d, True)
        _RUN_BIN.append(d)
    copy = os.path.join(_RUN_BIN[0], name)
    if not os.path.exists(copy) or os.stat(copy).st_mtime < os.stat(path).st_mtime:
        shutil.copy2(path, copy + ".new")
        os.rename(copy + ".new", copy)
    return copy


def userns_refused():
    """Why this host refuses an unprivileged user namespace, or None. Inside
    a chroot (a CI service's root, fresh-machine's) the kernel refuses
    unshare(CLONE_NEWUSER) with EPERM, for us and for what we start, a
    container's systemd included (PrivateUsers=yes). Probed, not guessed."""
    r = subprocess.run(["unshare", "--user", "--map-root-user", "true"],
                       capture_output=True, text=True, timeout=30)
    if r.returncode == 0:
        return None
    return ("this host refuses a user namespace (inside a chroot the kernel does: "
            f"EPERM): {r.stderr.strip()}")


def free_udp_port(family=socket.AF_INET):
    """A UDP port nobody is bound to right now, on loopback."""
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def send_udp(host, port, count, size=200, family=socket.AF_INET, payload=None, rate=None):
    """Send `count` datagrams from ONE source socket (one flow).

    With `rate`, paced in 10 ms slices so a test can stay under what a receiver
    takes. Returns the number sent (sendto failures raise)."""
    msg = payload if payload is not None else (b"<13>test " + b"x" * size)[:size]
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        start = time.monotonic()
        for i in range(count):
            if rate and i % max(1, rate // 100) == 0:
                due = start + i / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            s.sendto(msg, (host, port))
    return count


def read_json(path):
    with open(path) as f:
        return json.load(f)


class Proc:
    """A process started by a test and always reaped by it."""

    def __init__(self, argv, **kw):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)

    def stop(self, sig=15, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            raise AssertionError(f"{self.argv[0]} did not stop within {timeout}s: {err.decode()}")
        return self.p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


@pytest.fixture
def procs():
    """Processes registered here are stopped at teardown, even when a test fails."""
    started = []
    yield started
    for p in started:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()


def udp_rows(port=None, pid="self"):
    """Split rows of /proc/net/udp and udp6 (this namespace, or that of
    process pid); with port, only the sockets bound to it. Columns: 1 local,
    4 queues, 9 inode, 12 drops."""
    for table in (f"/proc/{pid}/net/udp", f"/proc/{pid}/net/udp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if port is None or int(fields[1].rsplit(":", 1)[1], 16) == port:
                    yield fields


def queued_bytes(port, pid="self"):
    """Bytes in the receive queues of every socket bound to port (the
    rx_queue column of /proc/net/udp{,6}, in pid's namespace)."""
    return sum(int(f[4].split(":")[1], 16) for f in udp_rows(port, pid))


def wait_queues_empty(port, pid="self", timeout=60):
    """Until every socket on port has an empty receive queue: all that
    reached them was read. The event a test waits for after its sender
    ended, instead of a sleep."""
    wait_until(lambda: queued_bytes(port, pid) == 0, f"the queues on port {port} empty",
               timeout)


def wait_for_udp_port(port, timeout=10.0, count=1):
    """Wait until `count` UDP sockets are bound to `port` (any address, v4 or v6)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(udp_rows(port))) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{count} sockets on UDP port {port} did not appear within {timeout}s")


class Syslogrx(Proc):
    """syslogrx started by a test: waits for its "ready" line; stop() returns
    (exit code, stdout, stderr) and the parsed summary."""

    def __init__(self, tmp_path, *args, port=None, listen=None, summary=True, netns=None,
                 sequences=True):
        self.summary_path = str(tmp_path / "summary.json") if summary else None
        argv = [binary("syslogrx")]
        if listen:
            argv += ["--listen", listen]
        elif port:
            argv += ["--listen", f"127.0.0.1:{port}"]
        if self.summary_path:
            argv += ["--summary", self.summary_path]
        argv += list(args)
        # syslogrx writes to stdout by default (a newcomer sees the messages);
        # these tests count from the summary and never read stdout before exit,
        # so a test that names no output gets the null one it measures with.
        if not any(str(a) in ("--output", "-o") or str(a).startswith("--output=") for a in args):
            argv += ["--output", "null"]
        # The tests close their books with sysloggen's sequence markers, lab-only
        # accounting syslogrx does only when asked; sequences=False for a
        # receiver as it runs by default (the hostile-input tests).
        if sequences:
            argv += ["--sequences"]
        if netns:
            argv = ["ip", "netns", "exec", netns] + argv
        super().__init__(argv)
        # Pre-flight warnings may come first; the ready line ends start-up
        # (EOF: it exited). What came before is kept for stop()'s stderr.
        self.early_err = ""
        while True:
            self.ready_line = self.p.stderr.readline().decode()
            if not self.ready_line or "ready on" in self.ready_line:
                break
            self.early_err += self.ready_line
        if "ready on" not in self.ready_line:
            rc, out, err = self.stop()
            raise AssertionError(f"syslogrx did not start (exit {rc}): {err}")

    def stop(self, sig=15, timeout=30):
        rc, out, err = super().stop(sig, timeout)
        err = self.early_err + err
        self.summary = read_json(self.summary_path) if self.summary_path and os.path.exists(self.summary_path) else None
        return rc, out, err


@pytest.fixture
def syslogrx(tmp_path, procs):
    """Factory: syslogrx(*flags, port=P) -> a started Syslogrx, stopped at teardown."""
    def start(*args, **kw):
        p = Syslogrx(tmp_path, *args, **kw)
        procs.append(p)
        return p
    return start


def run_cmd(argv, timeout=30, **kw):
    """Run to completion; returns CompletedProcess with text output."""
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def sysloggen(port, *args, host="127.0.0.1", timeout=120):
    """Runs build/sysloggen to completion against host:port; returns its JSON
    summary (the last line of --json output)."""
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    r = run_cmd([binary("sysloggen"), "--target", target, "--json"] + [str(a) for a in args],
                timeout=timeout)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    assert lines, r.stderr
    return lines[-1]


def promtool():
    """build/prometheus/usr/bin/promtool: Debian's prometheus package unpacked
    by lab/promtool-setup.sh (never installed or run as a service)."""
    path = os.path.join(BUILD, "prometheus", "usr", "bin", "promtool")
    if not os.access(path, os.X_OK):
        r = run_cmd([os.path.join(ROOT, "lab", "promtool-setup.sh"),
                     os.path.join(BUILD, "prometheus")], timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    return path


# ---------------------------------------------------------------------------
# Nothing left running (issue 21). A separate block: the process-tree reaper,
# the test netns names and the session's final check.
#
# pytest is made a child subreaper, so whatever a test starts stays in its
# tree even when its parent exits: upgrade successors, supervised children,
# anything daemonised re-parent to pytest, not to init. After every test,
# every descendant that test left is killed and reaped (a failing assertion
# inside under_load leaves a receiver with BPF attached and 64 MiB buffers:
# it does not outlive the test). At the end of the session the run fails if a
# test left a BPF link or a network namespace behind. The machine is shared,
# so only what this session made counts: links held by this process tree (or
# held by nobody, ours by program name, created during the session) and
# namespaces named with NETNS_PREFIX.
# ---------------------------------------------------------------------------
import ctypes
import re
import signal

PR_SET_CHILD_SUBREAPER = 36
NETNS_PREFIX = f"rxt{os.getpid()}-"
# Our programs' names (the BPF_PROG function names, from bpf/*.bpf.c; the
# kernel keeps 15 characters, bpftool shows the whole name from BTF): a link
# on one of them that no process holds (pinned, or in flight in some socket)
# is ours to answer for.
OUR_BPF_PROGS = {m for f in ("balancer", "tracer")
                 for m in re.findall(r'SEC\("[^"]+"\)\s*\nint (?:BPF_PROG\()?(\w+)',
                                     open(os.path.join(ROOT, "bpf", f + ".bpf.c")).read())}
_left_behind = []                             # (test, what) for the final check
_kept = {}                                    # pid -> starttime: ended by their owner


def outlives_the_test(pid):
    """pid belongs to a module- or session-scoped fixture that ends it itself
    (kafka_broker's broker, restarted inside a test): the per-test reaper
    leaves it and its children alone."""
    with open(f"/proc/{pid}/stat") as f:
        _kept[pid] = int(f.read().rsplit(")", 1)[1].split()[19])


def netns_name(tag):
    """The name of a network namespace a test creates: NETNS_PREFIX + tag,
    so the session check finds it if the test does not delete it."""
    return NETNS_PREFIX + tag


def _proc_table():
    """{pid: (ppid, starttime, state, comm)} of every process now."""
    table = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        rest = stat.rsplit(")", 1)[1].split()
        table[int(d)] = (int(rest[1]), int(rest[19]), rest[0], comm)
    return table


def descendants(root=None):
    """{pid: (ppid, starttime, state, comm)} of every process below root
    (default: this pytest), found by walking ppid chains in /proc."""
    root = root or os.getpid()
    table = _proc_table()
    children = {}
    for pid, row in table.items():
        children.setdefault(row[0], []).append(pid)
    found, todo = {}, [root]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in found:
                found[c] = table[c]
                todo.append(c)
    return found


def bpf_ids_held(pid, kind):
    """Ids of the BPF objects of a kind ("link", "map", "prog") that process
    pid holds an fd of, in fd order (from /proc/PID/fdinfo: Debian's bpftool
    shows no holder pids); [] when the process is gone."""
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return []
    ids = []
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                m = re.search(rf"^{kind}_id:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            ids.append(int(m.group(1)))
    return ids


def links_held(pids):
    """{pid: [BPF link ids it holds an fd of]} for those of pids holding any."""
    held = {}
    for pid in pids:
        ids = bpf_ids_held(pid, "link")
        if ids:
            held[pid] = ids
    return held


def bpf_links():
    """{link id: prog name} of every BPF link on the machine."""
    def show(what):
        r = subprocess.run(["bpftool", "-j", what, "show"], capture_output=True, text=True,
                           timeout=30)
        return json.loads(r.stdout or "[]") if r.returncode == 0 else []
    progs = {p["id"]: p.get("name", "") for p in show("prog")}
    return {l["id"]: progs.get(l.get("prog_id"), "") for l in show("link")}


def our_netns():
    try:
        return sorted(n for n in os.listdir("/run/netns") if n.startswith(NETNS_PREFIX))
    except FileNotFoundError:
        return []


def reap(pids, timeout=30):
    """SIGKILL each of pids (pid -> starttime) still the same process, then
    wait until none is left: our children are reaped here; grandchildren
    re-parent to us (subreaper) as their parents die and are reaped in turn.
    Returns those still there after the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        table = _proc_table()
        left = {p: table[p] for p in pids if p in table and table[p][1] == pids[p]}
        if not left:
            return {}
        for pid, (ppid, _, state, _) in left.items():
            if state != "Z":
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if ppid == os.getpid():
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
        if time.monotonic() > deadline:
            return left
        time.sleep(0.02)


@pytest.fixture(scope="session", autouse=True)
def nothing_left_running():
    """Once per session: pytest becomes a child subreaper; at the end, the
    final check (BPF links and network namespaces this session left)."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, \
        os.strerror(ctypes.get_errno())
    links_before = set(bpf_links())
    yield
    problems = [f"{test}: {what}" for test, what in _left_behind]
    mine = set(descendants()) | {os.getpid()}
    for pid, ids in links_held(mine).items():
        problems.append(f"BPF links {ids} still held by pid {pid}")

    def ours(name):     # the whole name (BTF), or the kernel's 15 characters of it
        return name in OUR_BPF_PROGS or \
            (len(name) == 15 and any(p.startswith(name) for p in OUR_BPF_PROGS))

    def unheld_new():
        new = {i: n for i, n in bpf_links().items() if i not in links_before and ours(n)}
        if not new:
            return {}
        held = {i for ids in links_held(int(d) for d in os.listdir("/proc") if d.isdigit())
                .values() for i in ids}
        return {i: n for i, n in new.items() if i not in held}

    # Twice, a second apart: a link whose last holder (another session's
    # process) just closed it leaves the kernel's list a moment later.
    orphans = unheld_new()
    if orphans:
        time.sleep(1)
        again = unheld_new()
        orphans = {i: n for i, n in orphans.items() if i in again}
    for i, name in orphans.items():
        problems.append(f"BPF link {i} (prog {name}) held by no process")
    for ns in our_netns():
        problems.append(f"network namespace {ns} left behind")
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
    assert not problems, "left behind by this session:\n  " + "\n  ".join(problems)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture(autouse=True)
def reap_what_the_test_left(request):
    """After every test (after its own fixtures ended what they know of): kill
    and reap every process the test left in pytest's tree, delete its
    namespaces. Left by a test that passed, a process holding a BPF link or
    a namespace is a defect: the session check names it (the test's failure
    explains one it left on failing)."""
    before = {pid: row[1] for pid, row in descendants().items()}
    netns_before = set(our_netns())
    yield
    now = descendants()
    kept = {p for p, st in _kept.items() if p in now and now[p][1] == st}
    for p in list(kept):
        kept |= set(descendants(p))
    left = {pid: row for pid, row in now.items() if before.get(pid) != row[1] and pid not in kept}
    passed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.passed
    if left:
        holders = links_held(left)
        stuck = reap({pid: row[1] for pid, row in left.items()})
        for pid, ids in holders.items():
            if passed:
                _left_behind.append((request.node.nodeid,
                                     f"pid {pid} ({left[pid][3]}) running with BPF links {ids}"))
        for pid, row in stuck.items():
            _left_behind.append((request.node.nodeid, f"pid {pid} ({row[3]}) could not be killed"))
    for ns in set(our_netns()) - netns_before:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        if passed:
            _left_behind.append((request.node.nodeid, f"network namespace {ns}"))


def wait_until(cond, what, timeout=30):
    """Polls cond() until it returns something true (returned); fails naming
    what after timeout seconds. For events: a file's state, a counter."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert time.monotonic() < deadline, f"{what}: not within {timeout}s"
        time.sleep(0.01)
