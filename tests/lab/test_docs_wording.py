# SPDX-License-Identifier: MIT
"""The manual and the comments describe the product as it is: no issue
numbers, no branch names, no "before/after this work". The history is in
CHANGELOG.md, which this test does not read. Measurements stay (with their
date, machine and command); a word like "branch" in its own sense (a code
path) is fine: only the phrases that speak of the work are refused."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHERE = ["README.md", "docs", "src", "include", "tools", "bpf", "dist", "lab"]
SUFFIXES = (".md", ".c", ".h", ".py", ".sh", ".8", ".in", ".conf", ".yml")

WORK = re.compile(
    r"\bissue\s*#?\d+|\bissues? \d+(?:,\s*\d+)*\b"  # issue 24, issue #24, issues 12, 14
    r"|\bi\d{2}-[a-z]+"                             # i24-perf, i19-input
    r"|\b(?:this|that|the other|another|other|my|our)\s+branch(?:'s|es)?\b"
    r"|\bbranch\s+[a-z0-9]+-[a-z0-9-]+"             # branch reliable-handoff
    r"|\b(?:before|after) (?:this|the) (?:work|change|branch|merge)\b"
    r"|\bon main\b|\bmain's build\b",
    re.I)


def files():
    for top in WHERE:
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            yield path
            continue
        for dirpath, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "results")]
            for n in sorted(names):
                if n.endswith(SUFFIXES) or n in ("sweep",):
                    yield os.path.join(dirpath, n)


def findings(text):
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in WORK.finditer(text)]


class DocsWording(unittest.TestCase):
    def test_nothing_speaks_of_the_work(self):
        bad, seen = [], list(files())
        self.assertGreater(len(seen), 150)
        for f in seen:
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            bad += [f"{os.path.relpath(f, ROOT)}:{line}: {what}" for line, what in findings(text)]
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_the_patterns_catch_the_work_and_spare_the_product(self):
        caught = ["as issue 24 asks", "issue #24",
                  "docs/i19-input.md", "on this branch", "the other branch's default",
                  "1 ms before branch reliable-handoff", "before this work", "failed on main"]
        for t in caught:
            self.assertTrue(findings(t), t)
        spared = ["the error branch returns -EINVAL", "a branch of the tree of sockets",
                  "the main thread", "src/rx/main.c", "2026-11-23, this VM", "i386"]
        for t in spared:
            self.assertFalse(findings(t), t)


if __name__ == "__main__":
    unittest.main()
