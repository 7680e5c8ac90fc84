# SPDX-License-Identifier: MIT
"""Small files, short functions: no C file in src/ over 800 lines, no C
function in src/ over 120 lines.

Functions are found by Universal Ctags (Debian's universal-ctags, which `make
deps` installs): each definition's first line (its name) to its closing
brace. A checker that finds no function at all fails too, so a missing or
broken ctags cannot make this pass.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120

# Exceptions to the limits, each with its reason (none today). A listed
# entry that fits the limits fails the test: remove it then.
KNOWN_LONG_FILES = {}
KNOWN_LONG_FUNCTIONS = {}


def c_files(top):
    for d, _, names in os.walk(top):
        for n in sorted(names):
            if n.endswith(".c"):
                yield os.path.join(d, n)


def functions(paths):
    """(path, name, lines) of every C function definition in paths."""
    ctags = shutil.which("ctags-universal") or shutil.which("ctags")
    assert ctags, "no ctags: install universal-ctags (make deps does)"
    out = subprocess.run(
        [ctags, "--language-force=C", "--kinds-C=f", "--fields=+ne", "--sort=no", "-o", "-",
         *paths],
        check=True, capture_output=True, text=True).stdout
    found = []
    for row in out.splitlines():
        cols = row.split("\t")
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        assert "line" in fields and "end" in fields, f"ctags gave no line/end: {row}"
        found.append((cols[1], cols[0], int(fields["end"]) - int(fields["line"]) + 1))
    return found


def too_long(root):
    """The files and functions over the limits under root/src, as
    {(path relative to root, function or None): lines}."""
    src = os.path.join(root, "src")
    paths = list(c_files(src))
    over = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE_LINES:
            over[(os.path.relpath(p, root), None)] = n
    fns = functions(paths)
    assert len(fns) >= len(paths) // 2, f"ctags found {len(fns)} functions in {len(paths)} files"
    for path, name, n in fns:
        if n > MAX_FUNCTION_LINES:
            over[(os.path.relpath(path, root), name)] = n
    return over


class CodeSize(unittest.TestCase):
    def test_src_files_and_functions_are_small(self):
        over = too_long(ROOT)
        known = {(f, None) for f in KNOWN_LONG_FILES} | set(KNOWN_LONG_FUNCTIONS)
        bad = [f"{path}{':' + fn + '()' if fn else ''}: {n} lines (most: "
               f"{MAX_FUNCTION_LINES if fn else MAX_FILE_LINES})"
               for (path, fn), n in sorted(over.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
               if (path, fn) not in known]
        self.assertEqual(bad, [], "split by job (a file) or into named steps (a function)")
        stale = sorted(f"{p}{':' + fn if fn else ''}" for p, fn in known - set(over))
        self.assertEqual(stale, [], "within the limits now: remove from KNOWN_LONG_*")

    def test_the_checker_sees_a_long_function_and_a_long_file(self):
        """The checker itself, on a tree made here: a function of 121 lines
        and a file of 801 are found; 120 and 800 are not."""
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "src", "rx"))

            def write(name, body_lines, pad_to=0):
                text = f"int {name}(int x)\n{{\n" + "\tx++;\n" * (body_lines - 4) + "\treturn x;\n}\n"
                text += "\n" * max(0, pad_to - text.count("\n"))
                with open(os.path.join(root, "src", "rx", name + ".c"), "w") as f:
                    f.write(text)

            write("fits", 120, pad_to=800)
            write("long_fn", 121)
            write("long_file", 10, pad_to=801)
            self.assertEqual(too_long(root), {("src/rx/long_fn.c", "long_fn"): 121,
                                              ("src/rx/long_file.c", None): 801})


if __name__ == "__main__":
    unittest.main()
