# SPDX-License-Identifier: MIT
"""The sweep's and the bench's parts. Below them is the test support package
(tests/support: paths, ports, the fake servers), shared with the tests: its
folder goes on sys.path here, once, for every lab script and test that
imports sweeplib or benchlib. lab/ imports nothing else of tests/."""
import os
import sys

_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
