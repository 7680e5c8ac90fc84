# SPDX-License-Identifier: MIT
"""`make test` says how long it took, phase by phase, also when a phase
fails, and pytest ends with the 10 slowest tests. Checked with `make -n`:
the sub-makes run dry, the timing lines for real."""
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHASES = ["all", "unit", "fuzz", "sanitize-unit", "integration"]


def make_n(*args):
    return subprocess.run(["make", "-n", "-C", ROOT, "--no-print-directory", "test"] + list(args),
                          capture_output=True, text=True, timeout=120)


def timings(out):
    return re.findall(r"^  TIME     (.+?)\s+(\d+) s$", out, re.M)


class MakeTestTiming(unittest.TestCase):
    def test_each_phase_then_the_total(self):
        r = make_n()
        self.assertEqual(r.returncode, 0, r.stderr)
        got = timings(r.stdout)
        self.assertEqual([name for name, _ in got], PHASES + ["make test: all passed"], r.stdout)
        seconds = [int(s) for _, s in got]
        self.assertEqual(seconds, sorted(seconds))  # since make began: never down
        self.assertRegex(r.stdout, r"-m pytest -q --durations=10 tests")

    def test_a_failed_phase_is_timed_and_fails_the_run(self):
        r = make_n("FUZZERS=no-such-target")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual([name for name, _ in timings(r.stdout)], ["all FAILED"], r.stdout)


if __name__ == "__main__":
    unittest.main()
