"""The README's runnable blocks run as written (the links of README.md and
docs/: tests/lab/test_docs_links.py).

Every ```sh runnable block of README.md runs with bash -e in a scratch
directory that holds a symlink to each top-level entry of the project (so
`build/syslogrx` and `make install DESTDIR=...` work, and whatever a block
writes stays in the scratch directory), in a session of its own: whatever it
started is killed at the end on every path, and the next block starts only
once none of it is left. A `#> TEXT` line in a block is a line its output
must contain."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from support.paths import ROOT

# Serial: the README's blocks run as an operator types them, on the host's
# fixed ports (127.0.0.1:5514, :9464), which a test beside them may not hold.
pytestmark = pytest.mark.serial

README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
BLOCK = re.compile(r"^```sh runnable\n(.*?)^```$", re.M | re.S)
BLOCK_TIMEOUT = 120


def runnable_blocks():
    return BLOCK.findall(open(README).read())


def scratch_copy(path):
    """A directory that looks like the project's root: one symlink per entry."""
    path.mkdir()
    for name in os.listdir(ROOT):
        if name != ".git":
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


def run_block(script, cwd):
    p = subprocess.Popen([sys.executable, "-c", SUBREAPER_BASH, script], cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        kill_group(p.pid)
        out, err = p.communicate()
        raise AssertionError(f"block did not end within {BLOCK_TIMEOUT} s:\n{script}\n"
                             f"--- stdout\n{out}--- stderr\n{err}")
    finally:
        kill_group(p.pid)
    return p.returncode, out, err


def test_readme_is_short_and_has_runnable_blocks():
    lines = open(README).read().splitlines()
    assert len(lines) < 250, f"README.md is {len(lines)} lines: the detail goes in docs/"
    # fresh-machine runs the first `make TARGET` of the README besides make test.
    makes = [l.split("#")[0].strip() for l in lines if re.match(r"^\s*make [a-z0-9-]+", l)]
    assert makes[:2] == ["make run", "make test"], makes
    assert len(runnable_blocks()) == 7


@pytest.mark.parametrize("index", range(len(runnable_blocks())))
def test_runnable_block(index, tmp_path):
    script = runnable_blocks()[index]
    expected = [l[3:] for l in script.splitlines() if l.startswith("#> ")]
    rc, out, err = run_block(script, scratch_copy(tmp_path / "project"))
    assert rc == 0, f"block {index} exited {rc}:\n{script}\n--- stdout\n{out}--- stderr\n{err}"
    for line in expected:
        assert line in out.splitlines(), \
            f"block {index} did not print {line!r}:\n--- stdout\n{out}--- stderr\n{err}"
