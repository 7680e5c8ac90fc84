# SPDX-License-Identifier: MIT
"""report/ reads what it says through the snapshot (src/rx/report/snapshot.h)
or through the functions rx/life/receiver.h exports, never a field of struct
receiver itself: the summary, the metrics page and the stats line report the
same numbers by construction, and only life/ knows the receiver's layout. A
reader gets the receiver only to hand it to those functions. The check: in
each reader, no parameter or variable declared `struct receiver *NAME` is
followed by `NAME->` (which also catches `h->NAME->`)."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READERS = [
    "src/rx/report/summary.c",
    "src/rx/report/metrics.c",
    "src/rx/report/stats_line.c",
    "src/rx/report/health.c",
    "src/rx/report/sender_cache.c",
]
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

    def test_readers_read_no_receiver_field(self):
        problems = []
        for rel in READERS:
            with open(os.path.join(ROOT, rel)) as f:
                text = f.read()
            self.assertRegex(text, r"struct receiver \*", rel)
            problems += [f"{rel}:{n}: {line}" for n, line in receiver_field_reads(text)]
        self.assertEqual(problems, [], "read it through the snapshot (rx/report/snapshot.h) or rx/life/receiver.h")


if __name__ == "__main__":
    unittest.main()
