# SPDX-License-Identifier: MIT
"""What the tests and the lab scripts share: paths (ROOT, BUILD), free ports,
processes, /proc/net/udp, the reaper, load senders, the watchers and the fake
servers. The floor below tests/integration, tests/lab and lab/: it imports
none of them (tests/lab/test_layering.py checks)."""
