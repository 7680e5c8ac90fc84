# SPDX-License-Identifier: MIT
"""The summary and the metrics page are written from the snapshot
(src/rx/report/snapshot.h), so the two report the same numbers by
construction: neither writer reads a field of struct receiver itself. A
writer gets the receiver only to hand it to snapshot_* functions. The check:
in each writer, no parameter or variable declared `struct receiver *NAME` is
followed by `NAME->`."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WRITERS = ["src/rx/report/summary.c", "src/rx/report/metrics.c"]
DECL = re.compile(r"struct\s+receiver\s*\*\s*(?:const\s+)?(\w+)")


def receiver_field_reads(text):
    """(line number, line) of each `NAME->` where NAME is declared a struct
    receiver pointer anywhere in the file (comments ignored)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    names = set(DECL.findall(text))
    if not names:
        return []
    use = re.compile(r"\b(?:%s)\s*->" % "|".join(map(re.escape, sorted(names))))
    return [(i + 1, line.strip()) for i, line in enumerate(text.split("\n")) if use.search(line)]


class ReportReadsSnapshot(unittest.TestCase):
    def test_the_check_sees_a_field_read(self):
        self.assertEqual(receiver_field_reads("void f(struct receiver *rx)\n{\n\tg(rx->cfg);\n}\n"),
                         [(3, "g(rx->cfg);")])
        self.assertEqual(receiver_field_reads("void f(struct receiver *r)\n{ /* r->cfg */ }\n"), [])

    def test_writers_read_no_receiver_field(self):
        problems = []
        for rel in WRITERS:
            with open(os.path.join(ROOT, rel)) as f:
                text = f.read()
            self.assertRegex(text, r"struct receiver \*", rel)
            problems += [f"{rel}:{n}: {line}" for n, line in receiver_field_reads(text)]
        self.assertEqual(problems, [], "read it through the snapshot (rx/report/snapshot.h)")


if __name__ == "__main__":
    unittest.main()
