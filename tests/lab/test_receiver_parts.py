# SPDX-License-Identifier: MIT
"""struct receiver is built of owned parts (DESIGN.md "Owned parts, not a
blackboard"; docs/design.md "The receiver's parts"): a part's struct is read
and written only by the part's own files; everyone else calls the functions
its header declares. The check, on every C file of src/, tools/ and tests/
outside a part's files (comments and strings ignored):

- no member access through the part's member of struct receiver
  (`r->intake.group`, `held.shell.supervised`);
- no mention of the part's struct types, so that no pointer to one can be
  held outside the part: the single exception is struct receiver's own
  member line in src/rx/life/receiver.h, which embeds the part by value.
"""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# part: its member in struct receiver, its struct types, and its files (the
# header that declares its functions first).
PARTS = {
    "intake": {
        "member": "intake",
        "types": ["rx_intake", "rx_listener"],
        "files": [
            "src/rx/life/intake.h",
            "src/rx/life/intake.c",
            "src/rx/life/intake_report.c",
            "src/rx/life/resize.c",
            "src/rx/life/upgrade.c",
            "src/rx/life/handover_listeners.c",
        ],
    },
    "shell": {
        "member": "shell",
        "types": ["rx_shell"],
        "files": [
            "src/rx/life/shell.h",
            "src/rx/life/shell.c",
        ],
    },
    "pipeline": {
        "member": "pipeline",
        "types": ["rx_pipeline", "rx_route"],
        "files": [
            "src/rx/life/pipeline.h",
            "src/rx/life/pipeline.c",
            "src/rx/life/pipeline_workers.c",
            "src/rx/life/pipeline_report.c",
        ],
    },
}
RECEIVER_H = "src/rx/life/receiver.h"


def strip(text):
    """Comments and string literals blanked, line numbers kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def trespasses(text, part, rel=""):
    """(line number, line) of each place in text that reaches into part."""
    member = re.compile(r"(?:->|\.)\s*%s\s*\.\s*\w" % re.escape(part["member"]))
    types = re.compile(r"\bstruct\s+(?:%s)\b" % "|".join(map(re.escape, part["types"])))
    embed = re.compile(r"^\s*struct\s+%s\s+%s\s*;\s*$" % (re.escape(part["types"][0]),
                                                          re.escape(part["member"])))
    out = []
    for i, line in enumerate(strip(text).split("\n")):
        if rel == RECEIVER_H and embed.match(line):
            continue
        if member.search(line) or types.search(line):
            out.append((i + 1, line.strip()))
    return out


def c_files():
    for top in ("src", "tools", "tests"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    full = os.path.join(dirpath, n)
                    yield os.path.relpath(full, ROOT), full


class ReceiverParts(unittest.TestCase):
    def test_the_check_sees_a_trespass(self):
        part = PARTS["intake"]
        self.assertEqual(trespasses("x = r->intake.live;\n", part), [(1, "x = r->intake.live;")])
        self.assertEqual(trespasses("x = held.intake . group.n;\n", part),
                         [(1, "x = held.intake . group.n;")])
        self.assertEqual(trespasses("\n\tconst struct rx_listener *l = f();\n", part),
                         [(2, "const struct rx_listener *l = f();")])
        self.assertEqual(trespasses("struct rx_intake *in = &r->intake;\n", part),
                         [(1, "struct rx_intake *in = &r->intake;")])
        # Its functions, comments and strings are not a trespass.
        self.assertEqual(trespasses("n = intake_live(r); /* r->intake.live */\n"
                                    "pr_warn(\"r->intake.live\");\n", part), [])
        shell = PARTS["shell"]
        self.assertEqual(trespasses("if (held.shell.supervised)\n", shell),
                         [(1, "if (held.shell.supervised)")])
        self.assertEqual(trespasses("if (shell_supervised(&held.shell))\n", shell), [])
        pipeline = PARTS["pipeline"]
        self.assertEqual(trespasses("flag_set(&r->pipeline.force, 1);\n", pipeline),
                         [(1, "flag_set(&r->pipeline.force, 1);")])
        self.assertEqual(trespasses("n = shared->pipeline.out.counts.written;\n", pipeline),
                         [(1, "n = shared->pipeline.out.counts.written;")])
        self.assertEqual(trespasses("const struct rx_route *rt = f();\n", pipeline),
                         [(1, "const struct rx_route *rt = f();")])
        self.assertEqual(trespasses("pipeline_give_up(&r->pipeline);\n", pipeline), [])
        # The embedding line is allowed in receiver.h only.
        self.assertEqual(trespasses("\tstruct rx_intake intake;\n", part, RECEIVER_H), [])
        self.assertEqual(len(trespasses("\tstruct rx_intake intake;\n", part, "src/x.h")), 1)

    def test_each_part_is_its_files_alone(self):
        problems = []
        seen = {}
        for rel, full in c_files():
            with open(full, errors="replace") as f:
                seen[rel] = f.read()
        for name, part in PARTS.items():
            for own in part["files"]:
                self.assertIn(own, seen, f"{name}: {own} is listed as the part's but missing")
            self.assertIn("struct %s {" % part["types"][0], seen[part["files"][0]])
            self.assertRegex(seen[RECEIVER_H], r"\bstruct %s %s;" % (part["types"][0],
                                                                   part["member"]))
            for rel, text in sorted(seen.items()):
                if rel in part["files"]:
                    continue
                problems += [f"{rel}:{n}: {line}  ({name}'s field)"
                             for n, line in trespasses(text, part, rel)]
        self.assertEqual(problems, [], "\nask the part through its header's functions:\n" +
                         "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
