# SPDX-License-Identifier: MIT
"""`make test` says how long it took, phase by phase, also when a phase
fails, and pytest ends with the 10 slowest tests. Checked with `make -n`:
the sub-makes run dry, the timing lines for real."""
import os
import re
import shutil
import subprocess
import tempfile
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


def bg_start(tmp, *flags):
    """What make test's first line does to start the background job, as
    make parses it with these flags: a probe makefile read after the
    project's prints it and runs nothing (-f, unlike --eval, leaves
    MAKEFLAGS as make test sees it)."""
    probe = os.path.join(tmp, "probe.mk")
    with open(probe, "w") as f:
        f.write('bg-probe:\n\t@echo "$(test_bg_start)"\n')
    # as `make test` typed in a shell: cwd, not -C (-C adds -w to
    # MAKEFLAGS), and no MAKEFLAGS from a make this test runs under
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "-f", "Makefile", "-f", probe, *flags, "bg-probe"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


class BackgroundJob(unittest.TestCase):
    """The set-ups' background job starts under every make but a dry run
    (whose line shows it instead): V=0's --no-print-directory in MAKEFLAGS
    is no -n."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_started_for_real(self):
        for flags in ([], ["-j2"], ["-k"], ["V=1"]):
            with self.subTest(flags=flags):
                self.assertIn("setsid nice -n 10 sh -c", bg_start(self.tmp, *flags))

    def test_shown_under_a_dry_run(self):
        for flags in (["-n"], ["-kn"], ["-n", "-j2"]):
            with self.subTest(flags=flags):
                out = bg_start(self.tmp, *flags)
                self.assertIn("background: ", out)
                self.assertNotIn("setsid", out.replace('echo "background', ""))


if __name__ == "__main__":
    unittest.main()
