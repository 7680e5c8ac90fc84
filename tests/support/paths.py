# SPDX-License-Identifier: MIT
"""Where the tree and its build are: ROOT, BUILD (SYSLOGRX_BUILD names another
build of the same tree, make test-sanitize's build-asan/), and the built
programs as a test or a lab script runs them."""
import atexit
import glob
import os
import shutil
import stat
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("SYSLOGRX_BUILD") or os.path.join(ROOT, "build")
# The integration tests, a folder per feature (receive, trace, outputs, ...).
INTEGRATION = os.path.join(ROOT, "tests", "integration")


def integration_module(name):
    """The path of the integration test module named NAME (test_x.py) in
    its feature folder, or None: a module's file name is unique across the
    folders (tests/lab/test_test_layout.py), so the docs name it alone."""
    hits = glob.glob(os.path.join(INTEGRATION, "*", name))
    return hits[0] if len(hits) == 1 else None


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
