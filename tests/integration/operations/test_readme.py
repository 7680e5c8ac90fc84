"""The README's runnable blocks run as written (the links of README.md and
docs/: tests/lab/test_docs_links.py), by tests/support/doc_blocks.py's
runner: bash -e in a scratch copy of the project, in a session of its own."""
import os
import re

import pytest

from support.doc_blocks import check_block, runnable_blocks, scratch_copy
from support.paths import ROOT

# Serial: the README's blocks run as an operator types them, on the host's
# fixed ports (127.0.0.1:5514, :9464), which a test beside them may not hold.
pytestmark = pytest.mark.serial

README = os.path.join(ROOT, "README.md")


def test_readme_is_short_and_has_runnable_blocks():
    with open(README) as f:
        lines = f.read().splitlines()
    assert len(lines) < 250, f"README.md is {len(lines)} lines: the detail goes in docs/"
    # fresh-machine runs the first `make TARGET` of the README besides make test.
    makes = [l.split("#")[0].strip() for l in lines if re.match(r"^\s*make [a-z0-9-]+", l)]
    assert makes[:2] == ["make run", "make test"], makes
    assert len(runnable_blocks(README)) == 7


@pytest.mark.parametrize("index", range(len(runnable_blocks(README))))
def test_runnable_block(index, tmp_path):
    check_block(runnable_blocks(README)[index], scratch_copy(tmp_path / "project"))
