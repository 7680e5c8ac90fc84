# SPDX-License-Identifier: MIT
"""Nothing left running: the process tree below pytest, the BPF objects a
process holds, the test network namespaces (named NETNS_PREFIX + tag), and the
reaper. tests/integration/conftest.py's fixtures run them after every test and
at the end of each pytest process's session, tests/conftest.py once at the end
of the run (under pytest-xdist, after every worker); state is kept here, once
per process."""
import contextlib
import json
import os
import re
import subprocess
import signal
import time
import uuid

from support.paths import ROOT

PR_SET_CHILD_SUBREAPER = 36

# The test namespaces of this pytest run: rxt<pid of its top process>-, and
# under pytest-xdist each worker (a child of that process, the controller)
# has its own below it, rxt<controller pid>-<worker id>-. The per-test
# reaper and a worker's session check see only their own process's; the
# run's last check (tests/conftest.py) sees every worker's.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
RUN_NETNS_PREFIX = f"rxt{os.getppid() if _XDIST_WORKER else os.getpid()}-"
NETNS_PREFIX = RUN_NETNS_PREFIX + (f"{_XDIST_WORKER}-" if _XDIST_WORKER else "")
# Our programs' names (the BPF_PROG function names, from bpf/*.bpf.c; the
# kernel keeps 15 characters, bpftool shows the whole name from BTF): a link
# on one of them that no process holds (pinned, or in flight in some socket)
# is ours to answer for.
OUR_BPF_PROGS = {m for f in ("balancer", "tracer")
                 for m in re.findall(r'SEC\("[^"]+"\)\s*\nint (?:BPF_PROG\()?(\w+)',
                                     open(os.path.join(ROOT, "bpf", f + ".bpf.c")).read())}
left_behind = []                             # (test, what) for the final check
kept = {}                                    # pid -> starttime: ended by their owner
# The run's own (tests/conftest.py, the process at the top of the run):
links_before = None                          # link ids when the run began
run_left_behind = []                         # what the run's last check found


def outlives_the_test(pid):
    """pid belongs to a module- or session-scoped fixture that ends it itself
    (kafka_broker's broker, restarted inside a test): the per-test reaper
    leaves it and its children alone."""
    with open(f"/proc/{pid}/stat") as f:
        kept[pid] = int(f.read().rsplit(")", 1)[1].split()[19])


def netns_name(tag):
    """The name of a network namespace a test creates: NETNS_PREFIX + tag,
    so the session check finds it if the test does not delete it."""
    return NETNS_PREFIX + tag


@contextlib.contextmanager
def new_netns(tag, addrs=()):
    """A network namespace of the test's own, named netns_name(tag-RANDOM),
    with lo up and addrs (one address each, IPv4 or IPv6) on lo; deleted on
    every path."""
    ns = netns_name(f"{tag}-{uuid.uuid4().hex[:6]}")
    subprocess.run(["ip", "netns", "add", ns], check=True, timeout=30)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True, timeout=30)
        for a in addrs:
            v6 = ":" in a                    # nodad: usable at once, no duplicate detection
            subprocess.run(["ip", "-n", ns, "addr", "add", f"{a}/{128 if v6 else 32}", "dev", "lo"]
                           + (["nodad"] if v6 else []), check=True, timeout=30)
        yield ns
    finally:
        delete_netns(ns)


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


def maps_named(name):
    """bpftool's view of the BPF maps named `name` (a list of dicts: id,
    max_entries, bytes_memlock, ...)."""
    r = subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True,
                       check=True, timeout=30)
    return [m for m in json.loads(r.stdout) if m.get("name") == name]


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


def our_netns(prefix=NETNS_PREFIX):
    try:
        return sorted(n for n in os.listdir("/run/netns") if n.startswith(prefix))
    except FileNotFoundError:
        return []


def delete_netns(ns):
    subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def ours(name):
    """A program name of ours: the whole name (BTF), or the kernel's 15
    characters of it."""
    return name in OUR_BPF_PROGS or \
        (len(name) == 15 and any(p.startswith(name) for p in OUR_BPF_PROGS))


def unheld_new_links(before):
    """{link id: prog name} of the links of our programs not in before that
    no process on the machine holds an fd of."""
    new = {i: n for i, n in bpf_links().items() if i not in before and ours(n)}
    if not new:
        return {}
    held = {i for ids in links_held(int(d) for d in os.listdir("/proc") if d.isdigit())
            .values() for i in ids}
    return {i: n for i, n in new.items() if i not in held}


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
