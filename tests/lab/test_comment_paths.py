# SPDX-License-Identifier: MIT
"""Comments name files that exist, and include guards name their file.

- Every path a C comment names (in src/, include/, tools/, bpf/, tests/unit,
  tests/fuzz) exists: `src/rx/path/window.c`, a layer path as the includes
  write it (`rx/path/diskbuf.h`, `net/http_metrics`: a .c or .h of that
  stem), a top-level folder's path (`docs/operating.md`), or a bare file name
  somewhere in the tree (`sink.h`). What lives outside the tree is listed in
  ELSEWHERE, with where it is.
- Every header's guard is SYSLOGRX_ followed by the end of its path, the
  file name last (`include/bpf/balancer.h`: SYSLOGRX_BPF_BALANCER_H or
  SYSLOGRX_BALANCER_H; `src/rx/sink/kafka.h`: SYSLOGRX_SINK_KAFKA_H), its
  #define is the same name, and no two headers share one.
"""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

C_DIRS = ["src", "include", "tools", "bpf", "tests/unit", "tests/fuzz"]
TREE = ["src", "include", "tools", "bpf", "tests", "lab", "docs", "dist", "vmlinux"]
TOP = ["src", "include", "tools", "bpf", "tests", "lab", "docs", "dist"]
LAYERS = ["common", "net", "syslog", "gen", "rx"]

# Named in comments, not in this tree: the name, and where it is.
ELSEWHERE = {
    "net/core/sock_reuseport.c": "the Linux kernel's source",
    "crc32_simd.c": "Chromium's zlib",
    "collector/logs/v1/logs_service.proto": "opentelemetry-proto",
    "logs/v1/logs.proto": "opentelemetry-proto",
    "common/v1/common.proto": "opentelemetry-proto",
}

# Comments and literals in one pass, so a "/*" inside a string is no comment.
C_TOKENS = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
EXT = r"(?:c|h|py|md|sh|yml|yaml|in|conf|service|supp|proto|txt|json)"
PATH = re.compile(
    r"(?<![\w./-])("
    r"(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\." + EXT +  # anything with a file's extension
    r"|(?:" + "|".join(TOP + LAYERS) + r")/[\w./-]*\w"  # or under a folder of ours
    r")(?![\w/])")
# a.b.c (an IPv4 address's parts), not a file.
NOT_A_PATH = re.compile(r"^[a-z](?:\.[a-z])+$")
GUARD = re.compile(r"^#ifndef\s+(\w+)\s*\n#define\s+(\w+)", re.M)


def c_files(dirs=C_DIRS, ext=(".c", ".h")):
    out = []
    for top in dirs:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(ext)]
    return sorted(out)


def tree_names():
    names = set(os.listdir(ROOT))
    for top in TREE:
        for _, dirs, files in os.walk(os.path.join(ROOT, top)):
            names.update(files)
            names.update(dirs)
    return names


def exists(path, names):
    if path in ELSEWHERE or NOT_A_PATH.match(path):
        return True
    if "/" not in path:
        stem = path[:-len(".skel.h")] if path.endswith(".skel.h") else None
        return path in names or (stem is not None and
                                 os.path.exists(os.path.join(ROOT, "bpf", stem + ".bpf.c")))
    for base in ("", "src", "include"):
        p = os.path.join(ROOT, base, path)
        if os.path.exists(p) or os.path.exists(p + ".c") or os.path.exists(p + ".h"):
            return True
    return False


def comment_paths(text):
    """(line, path) for each path named in the C text's comments."""
    for m in C_TOKENS.finditer(text):
        if m.group(0)[0] in "\"'":
            continue
        for p in PATH.finditer(m.group(0)):
            yield text.count("\n", 0, m.start() + p.start()) + 1, p.group(1)


def missing_paths(files, names):
    out = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        out += [f"{os.path.relpath(f, ROOT)}:{line}: {p}"
                for line, p in comment_paths(text) if not exists(p, names)]
    return out


def guard_errors(headers):
    out, owner = [], {}
    for f in headers:
        rel = os.path.relpath(f, ROOT)
        with open(f, encoding="utf-8") as fh:
            m = GUARD.search(fh.read())
        if not m:
            out.append(f"{rel}: no #ifndef/#define guard")
            continue
        guard, define = m.groups()
        parts = [re.sub(r"\W", "_", p).upper() for p in rel[:-2].split("/")]
        allowed = {"SYSLOGRX_" + "_".join(parts[i:]) + "_H" for i in range(len(parts))}
        if guard not in allowed:
            out.append(f"{rel}: guard {guard} does not name the file "
                       f"(e.g. SYSLOGRX_{parts[-1]}_H)")
        if define != guard:
            out.append(f"{rel}: #ifndef {guard} but #define {define}")
        if guard in owner:
            out.append(f"{rel}: guard {guard} is also {owner[guard]}'s")
        owner.setdefault(guard, rel)
    return out


class CommentPaths(unittest.TestCase):
    def test_every_path_a_comment_names_exists(self):
        files = c_files()
        self.assertGreater(len(files), 100)
        bad = missing_paths(files, tree_names())
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_the_scan_sees_paths(self):
        # A pattern that matches nothing passes the test above for any tree.
        n = sum(1 for f in c_files() for _ in comment_paths(open(f, encoding="utf-8").read()))
        self.assertGreater(n, 100)

    def test_a_stale_path_is_found(self):
        text = ('/* see src/rx/output_sync.c and rx/path/window.h */\n'
                'const char *s = "/* src/nowhere.c */"; // and gone.h\n')
        self.assertEqual(list(comment_paths(text)),
                         [(1, "src/rx/output_sync.c"), (1, "rx/path/window.h"), (2, "gone.h")])
        names = tree_names()
        self.assertFalse(exists("src/rx/output_sync.c", names))
        self.assertTrue(exists("rx/path/window.h", names))
        self.assertFalse(exists("gone.h", names))


class IncludeGuards(unittest.TestCase):
    def test_every_guard_names_its_file(self):
        headers = c_files(["src", "include", "tools", "tests/unit", "tests/fuzz"], (".h",))
        self.assertGreater(len(headers), 50)
        bad = guard_errors(headers)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
