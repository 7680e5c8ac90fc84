"""The house's rule, checked on the tree: every #include points down a floor
or stays in its room (DESIGN.md, README "Layout"); on the Python side, test
modules are leaves and tests/support is the floor below lab/ and the tests.

Floors, bottom first. A file may include its own floor and any floor below it;
include/bpf/ (what the BPF programs share with user space) is below them all.
"""
import ast
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Each entry: a path prefix under src/ (longest match wins) and its floor.
FLOORS = {
    "common/": 0,
    "syslog/": 1, "net/": 1, "gen/": 1,
    "rx/settings/": 2,
    "rx/sink/": 3,
    "rx/path/": 4,
    "rx/life/": 5,
    "rx/report/": 6,
    "rx/main.c": 7,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floor_of(rel):
    best = None
    for prefix, floor in FLOORS.items():
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, floor)
    return best


def sources():
    for dirpath, _, names in os.walk(os.path.join(ROOT, "src")):
        for n in names:
            if n.endswith((".c", ".h")):
                full = os.path.join(dirpath, n)
                yield os.path.relpath(full, os.path.join(ROOT, "src")), full


def test_every_source_file_has_a_floor():
    homeless = [rel for rel, _ in sources() if floor_of(rel) is None]
    assert not homeless, f"files in no room of the house: {homeless}"


def test_includes_point_down():
    upward = []
    for rel, full in sources():
        mine = floor_of(rel)
        with open(full, errors="replace") as f:
            for inc in INCLUDE.findall(f.read()):
                if inc.startswith("bpf/") or inc.endswith(".skel.h"):
                    continue  # include/bpf/ and generated skeletons: below every floor
                theirs = floor_of(inc)
                assert theirs is not None, f"{rel} includes {inc}, which is in no room"
                if theirs[1] > mine[1]:
                    upward.append(f"{rel} ({mine[0]}) includes {inc} ({theirs[0]})")
    assert not upward, "includes that point up a floor:\n" + "\n".join(upward)


def test_shared_headers_live_in_include():
    shared = sorted(os.listdir(os.path.join(ROOT, "include", "bpf")))
    programs = sorted(n[: -len(".bpf.c")] for n in os.listdir(os.path.join(ROOT, "bpf"))
                      if n.endswith(".bpf.c"))
    assert [s[:-2] for s in shared] == programs, (shared, programs)
    assert not [n for n in os.listdir(os.path.join(ROOT, "bpf")) if n.endswith(".h")]


# ---- the Python side: tests/support is the floor of the tests and of lab/ ----
# tests/support (paths, ports, watchers, fake servers) < lab/ (sweeplib,
# benchlib, the scripts) < the tests (tests/integration, tests/lab). A test
# module is a leaf: nothing imports it. lab/ reaches into tests/ only for the
# support package.

def python_files(*tops):
    """(path relative to ROOT, text) of every Python file under tops: *.py and
    the scripts whose first line names python."""
    for top in tops:
        for dirpath, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "corpus")]
            for n in sorted(names):
                full = os.path.join(dirpath, n)
                if not n.endswith(".py"):
                    try:
                        with open(full, "rb") as f:
                            if b"python" not in f.readline():
                                continue
                    except OSError:
                        continue
                with open(full, errors="replace") as f:
                    yield os.path.relpath(full, ROOT), f.read()


def imported_modules(text):
    """The absolute module names a file imports (at any depth, lazily too)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def modules_of_tests():
    """Top-level names importable from tests/ that are not the support
    package: conftest, the test modules, tests/mutants/run and the like."""
    names = set()
    for rel, _ in python_files("tests"):
        parts = rel.split(os.sep)
        if parts[1] != "support" and rel.endswith(".py"):
            names.add(parts[-1][:-3])
    return names


def test_no_module_imports_a_test_module():
    bad = [f"{rel} imports {m}" for rel, text in python_files("tests", "lab", "tools")
           for m in imported_modules(text)
           if any(p.startswith("test_") for p in m.split("."))]
    assert not bad, "test modules are leaves (shared code goes to tests/support):\n" + \
        "\n".join(bad)


def test_lab_does_not_import_tests():
    from_tests = modules_of_tests()
    assert {"conftest", "test_layering", "run"} <= from_tests, from_tests   # the scan sees them
    bad = [f"{rel} imports {m}" for rel, text in python_files("lab")
           for m in imported_modules(text) if m.split(".")[0] in from_tests]
    bad += [f"{rel} puts tests/integration on sys.path" for rel, text in python_files("lab")
            if re.search(r"sys\.path\.\w+\(.*integration", text)]
    assert not bad, "lab/ imports only tests/support of tests/:\n" + "\n".join(bad)


def test_support_is_the_floor():
    """tests/support imports neither a test module, conftest nor lab/."""
    lab = {n[:-3] if n.endswith(".py") else n for n in os.listdir(os.path.join(ROOT, "lab"))}
    below = modules_of_tests() | lab
    bad = [f"{rel} imports {m}" for rel, text in python_files(os.path.join("tests", "support"))
           for m in imported_modules(text) if m.split(".")[0] in below]
    assert not bad, "tests/support imports upward:\n" + "\n".join(bad)
