# SPDX-License-Identifier: MIT
"""A stop ends before the service manager kills it: --stop-timeout's default
plus the grace after the give-up (src/rx/main.c's STOP_GRACE_S) is below
every shipped unit's TimeoutStopSec, and the man page and the docs give the
default and the unit's timeout the code and the units have."""
import glob
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def define(rel, name):
    m = re.search(rf"#define {name} ([0-9.]+)", read(rel))
    assert m, f"{name} not in {rel}"
    return float(m.group(1))


class StopTimeoutTest(unittest.TestCase):
    def test_default_and_grace_fit_every_unit(self):
        default = define("src/rx/settings/config.h", "CONFIG_STOP_TIMEOUT")
        grace = define("src/rx/main.c", "STOP_GRACE_S")
        units = glob.glob(os.path.join(ROOT, "dist", "*.service.in")) + \
            glob.glob(os.path.join(ROOT, "dist", "*.container"))
        self.assertTrue(units)
        for u in units:
            m = re.search(r"^TimeoutStopSec=(\d+)$", open(u).read(), re.M)
            self.assertTrue(m, f"{u}: no TimeoutStopSec")
            self.assertLess(default + grace, int(m.group(1)), u)

    def test_docs_say_the_default_and_the_units_timeout(self):
        default = int(define("src/rx/settings/config.h", "CONFIG_STOP_TIMEOUT"))
        unit = re.search(r"^TimeoutStopSec=(\d+)$", read("dist/syslogrx.service.in"), re.M)
        for rel in ("dist/syslogrx.8", "docs/operating.md", "docs/outputs.md"):
            text = read(rel)
            self.assertIn("stop\\-timeout" if rel.endswith(".8") else "--stop-timeout", text, rel)
            self.assertRegex(text, rf"\b{default}\b", rel)
        for rel in ("dist/syslogrx.8", "docs/operating.md", "docs/outputs.md"):
            self.assertIn(f"TimeoutStopSec={unit.group(1)}", read(rel), rel)
        self.assertIn(f"default {default}", read("src/rx/settings/config_options.c"))


if __name__ == "__main__":
    unittest.main()
