# SPDX-License-Identifier: MIT
"""The integration tests sit in a folder per feature, and take their helpers
from tests/support.

- tests/integration/ holds conftest.py and feature folders, no test module;
  each folder is one row of tests/README.md's folder table, and the table
  names no folder that is not there.
- No two test modules of tests/ share a file name (pytest imports them by
  it; docs and tests/CLAIMS.md name a module by it alone).
- No test module imports from conftest: a helper is imported from the
  support module that owns it, a fixture is asked for by name.
"""
import ast
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TESTS = os.path.join(ROOT, "tests")
INTEGRATION = os.path.join(TESTS, "integration")
README = os.path.join(TESTS, "README.md")
FOLDER_ROW = re.compile(r"^\| `(\w+)/` \| ")


def readme_folders():
    with open(README, encoding="utf-8") as f:
        return {m.group(1) for m in map(FOLDER_ROW.match, f) if m}


def python_files(top):
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(d, name)


def imports_conftest(text):
    """The line numbers of `import conftest` and `from conftest import`."""
    return [n.lineno for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.ImportFrom) and n.module == "conftest"
            or isinstance(n, ast.Import) and any(a.name == "conftest" for a in n.names)]


def layout_problems():
    problems = []
    folders = readme_folders()
    if not folders:
        return ["tests/README.md: no folder table read: has its format changed?"]
    for name in sorted(os.listdir(INTEGRATION)):
        path = os.path.join(INTEGRATION, name)
        if os.path.isdir(path):
            if name != "__pycache__" and name not in folders:
                problems.append(f"tests/integration/{name}/: not a feature folder of "
                                "tests/README.md's table (add its row, or move its modules)")
        elif name.endswith(".py") and name != "conftest.py":
            problems.append(f"tests/integration/{name}: a module outside a feature folder")
    problems += [f"tests/README.md: feature folder {f}/ does not exist"
                 for f in sorted(folders) if not os.path.isdir(os.path.join(INTEGRATION, f))]
    for path in python_files(INTEGRATION):
        rel = os.path.relpath(path, INTEGRATION)
        if rel.count(os.sep) > 1:
            problems.append(f"tests/integration/{rel}: below a feature folder's own level")
    return problems


def test_integration_modules_are_in_feature_folders():
    problems = layout_problems()
    assert not problems, "\n".join(problems)


def test_no_two_test_modules_share_a_name():
    seen = {}
    for path in python_files(TESTS):
        name = os.path.basename(path)
        if name.startswith("test_"):
            seen.setdefault(name, []).append(os.path.relpath(path, ROOT))
    twice = {n: p for n, p in seen.items() if len(p) > 1}
    assert len(seen) > 60, "too few test modules found: has tests/ moved?"
    assert not twice, twice


def test_no_test_imports_from_conftest():
    bad, read = [], 0
    for path in python_files(TESTS):
        if os.path.basename(path) == "conftest.py":
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        read += 1
        bad += [f"{os.path.relpath(path, ROOT)}:{n}: imports from conftest (import the "
                "helper from its tests/support module)" for n in imports_conftest(text)]
    assert read > 60
    assert not bad, "\n".join(bad)


def test_the_scanners_find_what_they_look_for():
    assert imports_conftest("from conftest import Proc\nimport os\n") == [1]
    assert imports_conftest("import os\nif 1:\n    import conftest\n") == [3]
    assert imports_conftest("from support.procs import Proc\nimport conftests\n") == []
    assert FOLDER_ROW.match("| `receive/` | sockets, listeners |")
    assert not FOLDER_ROW.match("| `receive` | a module |")
    assert {"receive", "outputs", "lab"} <= readme_folders()
