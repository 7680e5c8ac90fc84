"""tests/mutants/mutants.txt still fits the tree: each mutant's text is on
exactly one line of its file, and each test named to kill it exists (a unit
test source, or a test function of a pytest file). Cheap, so `make test`
catches a table that an edit elsewhere left behind; `make mutants` then
says whether the tests still catch each bug."""
import ast
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "mutants"))

import run  # noqa: E402  tests/mutants/run.py


def functions_of(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_every_mutant_fits_the_tree():
    table = run.parse_table()
    assert len(table) >= 40
    problems = []
    for m in table:
        with open(os.path.join(ROOT, m["file"])) as f:
            hits = sum(m["from"] in line for line in f.read().split("\n"))
        if hits != 1:
            problems.append(f"{m['id']}: {m['from']!r} on {hits} lines of {m['file']}")
        if m["from"] == m["to"]:
            problems.append(f"{m['id']}: the replacement is the original")
        for k in m["kill"]:
            if k.startswith("unit:"):
                if not os.path.exists(os.path.join(ROOT, "tests", "unit", k[5:] + ".c")):
                    problems.append(f"{m['id']}: no tests/unit/{k[5:]}.c")
                continue
            path, _, name = k.partition("::")
            full = os.path.join(ROOT, path)
            if not os.path.exists(full):
                problems.append(f"{m['id']}: no {path}")
            elif name and name.split("[")[0] not in functions_of(full):
                problems.append(f"{m['id']}: no {k}")
    assert not problems, "\n".join(problems)
