# SPDX-License-Identifier: MIT
"""LICENSE is the MIT licence every source file's SPDX header names (the BPF
programs: GPL-2.0 OR MIT, for the kernel's GPL-only helpers), and every C,
header and Python source carries such a header."""
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPDX = re.compile(r"SPDX-License-Identifier:\s*(.+?)\s*(?:\*/)?$", re.M)


def sources():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.c", "*.h"],
                         capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if not f.startswith("vmlinux/")]


class License(unittest.TestCase):
    def test_license_is_mit(self):
        with open(os.path.join(ROOT, "LICENSE")) as f:
            text = f.read()
        self.assertEqual(text.splitlines()[0], "MIT License")
        self.assertIn("Copyright (c) 2026 the syslogrx authors", text)
        self.assertIn('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND', text)

    def test_every_c_source_says_mit(self):
        files = sources()
        self.assertGreater(len(files), 100)
        bad = []
        for f in files:
            with open(os.path.join(ROOT, f)) as fh:
                m = SPDX.search(fh.read(2000))
            if not m or m.group(1) not in ("MIT", "GPL-2.0 OR MIT"):
                bad.append(f"{f}: {m.group(1) if m else 'no SPDX-License-Identifier'}")
        self.assertEqual(bad, [], "\n" + "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
