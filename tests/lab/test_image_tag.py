# SPDX-License-Identifier: MIT
"""`make image` tags the image with syslogrx's own version, read from the
source that defines it: an empty tag ("localhost/syslogrx:") is an invalid
reference and podman refuses to build. Checked with `make -n`."""
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def program_version():
    """The version from argp_program_version, wherever src/rx defines it."""
    for top, _, files in os.walk(os.path.join(ROOT, "src", "rx")):
        for f in files:
            if f.endswith(".c"):
                m = re.search(r'argp_program_version = "syslogrx ([^"]+)";',
                              open(os.path.join(top, f)).read())
                if m:
                    return m.group(1)
    raise AssertionError("no argp_program_version in src/rx")


class ImageTag(unittest.TestCase):
    def test_the_image_is_tagged_with_the_program_version(self):
        r = subprocess.run(["make", "-n", "-C", ROOT, "--no-print-directory", "image"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        tags = set(re.findall(r"-t (\S+) \.", r.stdout))
        self.assertEqual(tags, {"localhost/syslogrx:" + program_version()}, r.stdout)


if __name__ == "__main__":
    unittest.main()
