# SPDX-License-Identifier: MIT
"""tests/CLAIMS.md holds every promise of docs/, each with what checks it.

A promise is a sentence of docs/*.md (prose, list items and table cells; not
code blocks) with one of the words of PROMISE (docs/testing.md lists them).
Each has a row in tests/CLAIMS.md keyed by a hash of its words: a sentence
reworded or added makes a row missing, one removed makes a row stale, and
the failure names the page, the line and the sentence, with the row to add.
Each row's tests exist (pytest files and functions by ast, unit tests by
their source file); a file name alone is the integration module of that
name, in its feature folder.

    /usr/bin/python3 tests/lab/test_docs_claims.py      the rows to add and to drop
"""
import ast
import hashlib
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from support.paths import integration_module  # noqa: E402

DOCS = os.path.join(ROOT, "docs")
TABLE = os.path.join(ROOT, "tests", "CLAIMS.md")

# The words that make a sentence a promise (docs/testing.md says them).
PROMISE = re.compile(r"\b(?:is|are|be) refused\b|\bnever\b|\bat most\b|\b0600\b"
                     r"|\b(?:is|are) counted\b|\bretries\b|\bsays\b|\b503\b", re.I)
PAGE_MUTANTS = re.compile(r"^\| `([\w.-]+\.md)` \| (.*) \|\s*$")
ROW = re.compile(r"^\| `([\w.-]+\.md)` \| `([0-9a-f]{8})` \| (.*?) \| (.*) \|\s*$")
# `file.py`, `file.py::name`, `::name` (the file before it), `unit test_NAME`
REF = re.compile(r"`((?:[\w/]+\.py)?)(?:::([\w\[\]-]+))?`|`unit (test_\w+)`")


def split_sentences(text):
    """(line, sentence) for each sentence of prose, list items and table
    cells; code blocks, indented blocks and headings are left out."""
    out, para, fenced = [], [], False

    def flush():
        if para:
            joined = " ".join(t for _, t in para)
            for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`(\"*])", joined):
                if s.strip():
                    start = s.strip()[:20]
                    line = next((n for n, t in para if start in t), para[0][0])
                    out.append((line, s.strip()))
        para.clear()

    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fenced = not fenced
            flush()
            continue
        if fenced or (line.startswith("    ") and not para) or line.startswith("#"):
            flush()
            continue
        if not line.strip():
            flush()
            continue
        if line.startswith("|"):
            flush()
            if not re.match(r"^\|[\s|:-]+\|\s*$", line):
                for cell in re.split(r"(?<!\\)\|", line.strip().strip("|")):
                    para.append((n, cell.strip()))
                    flush()
            continue
        if re.match(r"\s*(?:[-*]|\d+\.) ", line):
            flush()
        para.append((n, line.strip()))
    flush()
    return out


def key(sentence):
    words = " ".join(sentence.split())
    return hashlib.sha1(words.encode()).hexdigest()[:8]


def promises():
    """(page, line, key, sentence) for every promise of docs/."""
    for name in sorted(os.listdir(DOCS)):
        if not name.endswith(".md"):
            continue
        with open(os.path.join(DOCS, name), encoding="utf-8") as f:
            for line, s in split_sentences(f.read()):
                if PROMISE.search(s):
                    yield name, line, key(s), s


def rows():
    """(table line, page, key, quote, checked-by cell) of tests/CLAIMS.md."""
    with open(TABLE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = ROW.match(line)
            if m:
                yield (n,) + m.groups()


def functions_of(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def bad_refs(cell):
    """What a row's checked-by cell names that does not exist."""
    bad, current = [], None
    for m in REF.finditer(cell):
        path, name, unit = m.groups()
        if unit:
            if not os.path.exists(os.path.join(ROOT, "tests", "unit", unit + ".c")):
                bad.append(f"tests/unit/{unit}.c")
            continue
        if path:
            if not os.path.basename(path).startswith("test_"):
                continue
            current = os.path.join(ROOT, path) if "/" in path else \
                integration_module(path) or os.path.join(ROOT, "tests", "integration", path)
            if not os.path.exists(current):
                bad.append(path)
                current = None
                continue
        if name and current and name.split("[")[0] not in functions_of(current):
            bad.append(f"{os.path.relpath(current, ROOT)}::{name}")
    return bad


def quote(sentence, n=90):
    s = " ".join(sentence.split()).replace("|", "\\|")
    return s if len(s) <= n else s[:n].rstrip() + " ..."


def differences():
    """(missing promises, stale rows, rows naming what is not there)."""
    have = {(page, k) for _, page, k, _, _ in rows()}
    found = list(promises())
    want = {(page, k) for page, _, k, _ in found}
    missing = [p for p in found if (p[0], p[2]) not in have]
    stale = [r for r in rows() if (r[1], r[2]) not in want]
    broken = [(r, bad_refs(r[4])) for r in rows()]
    broken = [(r, b) for r, b in broken if b or not r[4].strip()]
    return missing, stale, broken


def test_every_promise_of_docs_has_its_row_and_its_tests_exist():
    missing, stale, broken = differences()
    assert len(list(rows())) > 100, "tests/CLAIMS.md: rows not read: has its format changed?"
    problems = []
    for page, line, k, s in missing:
        problems.append(f"docs/{page}:{line}: a promise with no row in tests/CLAIMS.md "
                        f"(key {k}): {' '.join(s.split())}\n  add: | `{page}` | `{k}` | "
                        f"{quote(s)} | TEST, or by hand: `COMMAND`, or no test yet |")
    for n, page, k, q, _ in stale:
        problems.append(f"tests/CLAIMS.md:{n}: row `{k}` of {page} matches no sentence of "
                        f"docs/{page} (reworded or removed?): {q}")
    for (n, page, k, _, cell), bad in broken:
        problems.append(f"tests/CLAIMS.md:{n}: row `{k}` of {page}: "
                        + (f"names what does not exist: {', '.join(bad)}" if bad
                           else "says nothing of what checks it"))
    assert not problems, "\n" + "\n".join(problems)


def page_mutants():
    """{page: (table line, [mutant ids] or the reason there are none)}."""
    out = {}
    with open(TABLE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = PAGE_MUTANTS.match(line)
            if m and not ROW.match(line):
                cell = m.group(2)
                out[m.group(1)] = (n, cell if cell.startswith("none: ")
                                   else re.findall(r"`([\w-]+)`", cell))
    return out


def test_every_page_has_a_mutant_or_says_why():
    sys.path.insert(0, os.path.join(ROOT, "tests", "mutants"))
    import run  # noqa: E402  tests/mutants/run.py
    ids = {m["id"] for m in run.parse_table()}
    table = page_mutants()
    problems = []
    for page in sorted(p for p in os.listdir(DOCS) if p.endswith(".md")):
        if page not in table:
            problems.append(f"docs/{page}: no row in tests/CLAIMS.md's \"Mutants per page\" "
                            f"(its mutant ids)")
            continue
        n, got = table[page]
        if not isinstance(got, list) or not got:
            problems.append(f"tests/CLAIMS.md:{n}: {page}: no mutant named (every page "
                            "has one or more)")
            continue
        problems += [f"tests/CLAIMS.md:{n}: {page}: no mutant {i} in "
                     "tests/mutants/mutants.txt" for i in got if i not in ids]
    problems += [f"tests/CLAIMS.md:{n}: {page}: no such page in docs/"
                 for page, (n, _) in table.items()
                 if not os.path.exists(os.path.join(DOCS, page))]
    assert not problems, "\n" + "\n".join(problems)


def test_the_scanner_finds_promises_and_spares_the_rest():
    text = ("Intro line.\n\nA bad flag is refused at start. It never writes\n"
            "through a symlink; the file is 0600.\n\n```\nnever in code\n```\n\n"
            "| a | b |\n| --- | --- |\n| x | retries with backoff |\n\n"
            "- an item that says `ready`\n- plain item\n\n    never indented\n")
    got = [(n, s) for n, s in split_sentences(text) if PROMISE.search(s)]
    assert got == [(3, "A bad flag is refused at start."),
                   (3, "It never writes through a symlink; the file is 0600."),
                   (12, "retries with backoff"), (14, "- an item that says `ready`")], got
    assert key("a  b\nc") == key("a b c") != key("a b d")
    assert bad_refs("`test_doc_promises.py::test_tls_ca_is_the_only_ca_trusted`") == []
    assert bad_refs("`test_doc_promises.py::no_such`, `unit test_nothing`") == [
        "tests/integration/operations/test_doc_promises.py::no_such", "tests/unit/test_nothing.c"]


if __name__ == "__main__":
    missing, stale, broken = differences()
    for page, line, k, s in missing:
        print(f"| `{page}` | `{k}` | {quote(s)} | no test yet |")
    for n, page, k, q, _ in stale:
        print(f"stale: tests/CLAIMS.md:{n}: {page} {k}: {q}", file=sys.stderr)
    for (n, page, k, _, _), bad in broken:
        print(f"broken: tests/CLAIMS.md:{n}: {page} {k}: {bad}", file=sys.stderr)
