# SPDX-License-Identifier: MIT
"""make bench: runner.py runs the receivers under load (processes),
report.py turns the trials into ratios, targets and files (pure)."""
import sweeplib  # noqa: F401,E402  (the floor below; it puts tests/support on sys.path)
