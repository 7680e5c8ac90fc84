# SPDX-License-Identifier: MIT
"""A page's runnable blocks run as written (test_readme for README.md,
test_container_docs for docs/container.md).

Every ```sh runnable block runs with bash -e in a scratch directory that
holds a symlink to each top-level entry of the project (so `build/syslogrx`
and `make install DESTDIR=...` work, and whatever a block writes stays in the
scratch directory), in a session of its own: whatever it started is killed at
the end on every path, and the next block starts only once none of it is
left. A `#> TEXT` line in a block is a line its output must contain."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from support.paths import ROOT

BLOCK = re.compile(r"^```sh runnable\n(.*?)^```$", re.M | re.S)
BLOCK_TIMEOUT = 120


def runnable_blocks(page):
    with open(page) as f:
        return BLOCK.findall(f.read())


def expected_lines(script):
    """The `#> TEXT` lines of a block: lines its output must contain."""
    return [l[3:] for l in script.splitlines() if l.startswith("#> ")]


def scratch_copy(path, copies=()):
    """A directory that looks like the project's root: one symlink per
    entry, a copy of those named in `copies` (podman build copies a
    context's symbolic links as links, not what they point to)."""
    path.mkdir()
    for name in os.listdir(ROOT):
        if name in copies:
            copy = shutil.copytree if os.path.isdir(os.path.join(ROOT, name)) else shutil.copy2
            copy(os.path.join(ROOT, name), path / name)
        elif name != ".git":
            os.symlink(os.path.join(ROOT, name), path / name)
    return path


def group_members(pgid):
    members = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, split after it
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(pid))
    return members


def kill_group(pgid):
    """SIGKILL the block's session and wait until none of it is left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 30
    while group_members(pgid):
        assert time.monotonic() < deadline, f"processes of group {pgid} outlived SIGKILL"
        time.sleep(0.05)


# The block's bash is a child subreaper, as an operator's shell is under init:
# pytest is one (conftest), so a process the block orphans (the old syslogrx's
# successor after an upgrade) would otherwise stay a zombie of pytest's, and
# the block's `kill -0` would see it alive for ever. bash reaps what it adopts.
SUBREAPER_BASH = ("import ctypes, os, sys\n"
                  "ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER\n"
                  "os.execvp('bash', ['bash', '-e', '-o', 'pipefail', '-c', sys.argv[1]])\n")


def run_block(script, cwd, timeout=BLOCK_TIMEOUT, netns=None, env=None):
    """(exit code, stdout, stderr) of the block; in network namespace
    `netns` if given (its ports are the block's alone), entered with nsenter:
    `ip netns exec` mounts a sysfs of its own, without the cgroup mounts a
    container runtime needs."""
    argv = [sys.executable, "-c", SUBREAPER_BASH, script]
    if netns:
        argv = ["nsenter", f"--net=/run/netns/{netns}", "--", *argv]
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p.pid)
        out, err = p.communicate()
        raise AssertionError(f"block did not end within {timeout} s:\n{script}\n"
                             f"--- stdout\n{out}--- stderr\n{err}")
    finally:
        kill_group(p.pid)
    return p.returncode, out, err


def check_block(script, cwd, **kw):
    """Runs the block; it exits 0 and prints each of its `#> ` lines."""
    rc, out, err = run_block(script, cwd, **kw)
    assert rc == 0, f"block exited {rc}:\n{script}\n--- stdout\n{out}--- stderr\n{err}"
    for line in expected_lines(script):
        assert line in out.splitlines(), \
            f"block did not print {line!r}:\n{script}\n--- stdout\n{out}--- stderr\n{err}"
    return out, err
