"""The fixtures of the integration tests, in every feature folder below this
one: processes stopped at teardown, a Kafka broker per module, a network
namespace, and the reaper that leaves nothing running. The helpers the tests
call are the support package's (tests/support): the tests import them from
there.

Each test builds its own world (sockets, namespaces, daemons) and takes it down.
These tests need root and BPF; CI runs as root, so they never skip for that.
"""
import ctypes
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# tests/: the support package, for this file and every test module below it
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from support import reaper  # noqa: E402
from support.defaults import NOBODY  # noqa: E402
from support.kafka_broker import KafkaBroker  # noqa: E402
from support.procs import Syslogrx  # noqa: E402
from support.reaper import (PR_SET_CHILD_SUBREAPER, descendants, links_held, new_netns,  # noqa: E402
                            our_netns, reap)


@pytest.fixture
def procs():
    """Processes registered here are stopped at teardown, even when a test fails."""
    started = []
    yield started
    for p in started:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()


@pytest.fixture
def syslogrx(tmp_path, procs):
    """Factory: syslogrx(*flags, port=P) -> a started Syslogrx, stopped at teardown."""
    def start(*args, **kw):
        p = Syslogrx(tmp_path, *args, **kw)
        procs.append(p)
        return p
    return start


@pytest.fixture(scope="module")
def broker():
    """A real Kafka broker (KRaft), one per test module that asks for it."""
    b = None
    try:
        b = KafkaBroker(host="127.0.0.1", auto_create=False, partitions=3, outlives_tests=True)
        b.start()
        b.warm_up()
        yield b
    finally:
        if b:
            b.close()


# tryfirst: xdist names a test's group from its mark in its own hook, which
# runs before this one when this conftest was loaded at start-up (pytest
# given a folder below tests/).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (make integration: --dist loadgroup), the tests of
    a module that take its Kafka broker run in one worker: one broker per
    module, as in one process (a JVM, the slowest start of the suite). The
    tests marked podman are one group, and the first handed out: the longest
    (two image builds, one from source), it then ends while the other
    workers still have tests to run, not after them. The tests that need
    a Go build (the OpenTelemetry Collector, Toxiproxy) are handed out last:
    on a fresh machine those builds run in the background from make test's
    start (a worker waited 158 s for the collector when one came early), and
    every other test can run meanwhile."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("podman"):
            item.add_marker(pytest.mark.xdist_group("podman"))
        elif "broker" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=hand_out_order)


COLLECTOR_FIXTURES = {"collector", "collector_down"}


def hand_out_order(item):
    """0: podman's group; 1: the rest; 2: what needs a Go build of the
    background job (a stable sort: collection order within each)."""
    if item.get_closest_marker("podman"):
        return 0
    if item.get_closest_marker("background_build") or COLLECTOR_FIXTURES & set(item.fixturenames):
        return 2
    return 1


@pytest.fixture
def netns(request):
    """A network namespace of the test's own (lo up), named after its module;
    deleted at teardown."""
    with new_netns(request.module.__name__.removeprefix("test_")) as ns:
        yield ns


@pytest.fixture
def nobody_dir():
    """A directory uid 65534 writes its summary into (pytest's tmp is root's)."""
    d = tempfile.mkdtemp(prefix="srx22-")
    os.chown(d, NOBODY, NOBODY)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------
# Nothing left running. The process-tree reaper, the test netns names and the
# session's final check (support/reaper.py holds the helpers and the state).
#
# pytest is made a child subreaper, so whatever a test starts stays in its
# tree even when its parent exits: upgrade successors, supervised children,
# anything daemonised re-parent to pytest, not to init. After every test,
# every descendant that test left is killed and reaped (a failing assertion
# inside under_load leaves a receiver with BPF attached and 64 MiB buffers:
# it does not outlive the test). At the end of the session the run fails if a
# test left a BPF link or a network namespace behind. The machine is shared,
# so only what this session made counts: links held by this process tree and
# namespaces named with NETNS_PREFIX (per process: an xdist worker's own);
# links of ours held by nobody, created during the run, are counted once for
# the whole run (tests/conftest.py).
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def nothing_left_running():
    """Once per pytest process (each pytest-xdist worker is one): pytest
    becomes a child subreaper; at the end, what its tests left (the reaper
    below) and the BPF links its own tree still holds, and its network
    namespaces. Links held by no process are the run's check, made once
    after every worker (tests/conftest.py): here, another worker's links in
    flight between two of its processes would look like ours."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, \
        os.strerror(ctypes.get_errno())
    yield
    problems = [f"{test}: {what}" for test, what in reaper.left_behind]
    mine = set(descendants()) | {os.getpid()}
    for pid, ids in links_held(mine).items():
        problems.append(f"BPF links {ids} still held by pid {pid}")
    for ns in our_netns():
        problems.append(f"network namespace {ns} left behind")
        reaper.delete_netns(ns)
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
    kept = {p for p, st in reaper.kept.items() if p in now and now[p][1] == st}
    for p in list(kept):
        kept |= set(descendants(p))
    left = {pid: row for pid, row in now.items() if before.get(pid) != row[1] and pid not in kept}
    passed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.passed
    if left:
        holders = links_held(left)
        stuck = reap({pid: row[1] for pid, row in left.items()})
        for pid, ids in holders.items():
            if passed:
                reaper.left_behind.append((request.node.nodeid,
                                     f"pid {pid} ({left[pid][3]}) running with BPF links {ids}"))
        for pid, row in stuck.items():
            reaper.left_behind.append((request.node.nodeid, f"pid {pid} ({row[3]}) could not be killed"))
    for ns in set(our_netns()) - netns_before:
        reaper.delete_netns(ns)
        if passed:
            reaper.left_behind.append((request.node.nodeid, f"network namespace {ns}"))
