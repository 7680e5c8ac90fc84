"""tests/README.md names only tests that exist, with the counts they have.

Every `file.py::test_name` it names (and every `::test_name` after one, in
the same table cell) is a test function of that file; `file.py` alone is a
file of tests; `file.py (N tests)` and `::pattern_* (N tests)` have exactly N
test functions. Read with ast, not by running pytest: a name that exists only
as text in a docstring does not count. A file name alone is the integration
module of that name, in its feature folder under tests/integration/; a path
says where it is.
"""
import ast
import fnmatch
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from support.paths import integration_module  # noqa: E402

README = os.path.join(ROOT, "tests", "README.md")
# `file.py`, `file.py::name`, `::name`, each maybe followed by " (N tests)"
REF = re.compile(r"`((?:[\w/]+\.py)?)(?:::([\w*]+))?`(?: \((\d+) tests\))?")


def functions_of(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")]


def resolve(name):
    if "/" in name:
        return os.path.join(ROOT, name)
    return integration_module(name) or os.path.join(ROOT, "tests", "integration", name)


def references():
    """(line number, file, test name or None, count or None) per reference
    to a test file; `::name` takes the file named before it in its cell."""
    with open(README) as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            continue
        for cell in line.split("|"):
            current = None
            for m in REF.finditer(cell):
                path, name, count = m.group(1), m.group(2), m.group(3)
                if path and not os.path.basename(path).startswith("test_"):
                    continue  # conftest.py, lab tools: not tests
                if path:
                    current = path
                elif not name:
                    continue
                assert current, f"tests/README.md:{n}: `::{name}` with no file before it"
                yield n, current, name, int(count) if count else None


def test_every_named_test_exists_with_its_count():
    problems, seen = [], 0
    for n, path, name, count in references():
        seen += 1
        full = resolve(path)
        if not os.path.exists(full):
            problems.append(f"line {n}: {path} does not exist")
            continue
        names = functions_of(full)
        if name:
            hits = fnmatch.filter(names, name)
            if not hits:
                problems.append(f"line {n}: {path}::{name} does not exist")
        else:
            hits = names
        if count is not None and len(hits) != count:
            what = f"{path}::{name}" if name else path
            problems.append(f"line {n}: {what} has {len(hits)} tests, the README says {count}")
    assert seen > 50, f"only {seen} references read: has the README's format changed?"
    assert not problems, "\n".join(problems)
