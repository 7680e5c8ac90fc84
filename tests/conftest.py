# SPDX-License-Identifier: MIT
"""What holds for the whole run, whichever tests it holds and however many
processes run them: the `serial` marker, and the run's last check that no
BPF link of ours was left behind held by no process.

`make integration` runs the tests in two phases: `-m "not serial" -n N`
(pytest-xdist: N worker processes, each its own pytest session with its own
tests/integration/conftest.py reaper) and then `-m serial`, one process. A
test that changes or measures something the whole machine shares is marked
serial and says why beside the mark.

The check of links held by no process runs once, in the process at the top
of the run (xdist's controller, after every worker has ended, or the only
process): a worker that made it at its own end would see another worker's
links between two processes (handed over by SCM_RIGHTS in an upgrade, say)
as held by nobody. What each test left and what each worker's own tree still
holds is checked in that worker (tests/integration/conftest.py)."""
import os
import shutil
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from support import reaper  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: changes or measures what the whole machine shares (a global "
                   "sysctl, a fixed port, podman's storage, the CPU): run alone, after the "
                   "parallel phase (make integration: -m serial, without -n)")
    config.addinivalue_line(
        "markers", "podman: uses podman's storage and images (the machine's): every such "
                   "test runs in one pytest-xdist worker, one at a time, beside the rest")
    config.addinivalue_line(
        "markers", "background_build: needs what make test builds in the background "
                   "(the OpenTelemetry Collector, Toxiproxy: Go builds): handed out last, so "
                   "no worker waits for a build while other tests could run (a test that "
                   "takes the `collector` or `collector_down` fixture is one without the mark)")


def at_the_top(config):
    """This process runs the whole run: xdist's controller, or no xdist."""
    return not hasattr(config, "workerinput")


def can_see_links():
    return os.geteuid() == 0 and shutil.which("bpftool") is not None


def pytest_sessionstart(session):
    if at_the_top(session.config) and can_see_links():
        reaper.links_before = set(reaper.bpf_links())


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """After the session's fixtures (and, under xdist, every worker) ended:
    links of our programs made during the run that no process holds, and
    the run's namespaces (a worker that died could not delete its own).
    They fail the run."""
    if not at_the_top(session.config) or reaper.links_before is None:
        return
    problems = [f"BPF link {i} (prog {name}) held by no process"
                for i, name in orphan_links().items()]
    for ns in reaper.our_netns(reaper.RUN_NETNS_PREFIX):
        problems.append(f"network namespace {ns} left behind")
        reaper.delete_netns(ns)
    if problems:
        reaper.run_left_behind.extend(problems)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def orphan_links():
    """{id: prog name} of links of our programs made during the run and held
    by no process, twice a second apart: a link whose last holder (another
    session's process) just closed it leaves the kernel's list a moment later."""
    orphans = reaper.unheld_new_links(reaper.links_before)
    if orphans:
        time.sleep(1)
        again = reaper.unheld_new_links(reaper.links_before)
        orphans = {i: n for i, n in orphans.items() if i in again}
    return orphans


def pytest_terminal_summary(terminalreporter):
    if reaper.run_left_behind:
        terminalreporter.write_sep("=", "left behind by this run", red=True)
        for line in reaper.run_left_behind:
            terminalreporter.write_line(line, red=True)
