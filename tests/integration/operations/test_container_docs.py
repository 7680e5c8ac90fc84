"""docs/container.md's `sh` blocks run as written (tests/support/doc_blocks.py's
runner, as test_readme runs the README's), with podman's settings only as the
page gives them: CONTAINERS_CONF is taken out of the environment.

The build block (`make image`, from the page's own first block) reaches
Debian's archive from the host's network, in a scratch folder holding a copy
of the build context (podman copies a symbolic link of the context as a
link). Every other block runs in a network namespace of the test's own
(entered with nsenter: podman's host network is then that namespace), so the
page's fixed ports (514, 601, 5514, 5516) are the block's alone. The
containers a block names are removed after it on every path: they are
conmon's children, not the block's."""
import os
import re
import subprocess

import pytest

from support.paths import ROOT
from support.doc_blocks import check_block, runnable_blocks, scratch_copy
from support.reaper import new_netns

# podman's storage and images are the machine's, and the build block tags
# localhost/syslogrx:VERSION, which the other blocks run: the podman tests
# run in one process, one at a time (conftest).
pytestmark = pytest.mark.podman

PAGE = os.path.join(ROOT, "docs", "container.md")
# What dist/Containerfile COPYs, and .containerignore that says so.
CONTEXT = ("Makefile", "vmlinux", "include", "bpf", "src", "tools", "dist", ".containerignore")
BUILD_TIMEOUT = 900
RUN_TIMEOUT = 180
ENV = {k: v for k, v in os.environ.items() if k != "CONTAINERS_CONF"}


def test_every_sh_block_of_the_page_runs():
    with open(PAGE) as f:
        text = f.read()
    assert not re.findall(r"^```sh$", text, re.M), "a ```sh block the test does not run"
    blocks = runnable_blocks(PAGE)
    assert len(blocks) == 5
    assert blocks[0].startswith("make image")


@pytest.mark.parametrize("index", range(len(runnable_blocks(PAGE))))
def test_runnable_block(index, tmp_path):
    script = runnable_blocks(PAGE)[index]
    names = set(re.findall(r"--name (\S+)", script))
    try:
        if script.startswith("make image"):
            check_block(script, scratch_copy(tmp_path / "project", copies=CONTEXT),
                        timeout=BUILD_TIMEOUT, env=ENV)
            return
        with new_netns("doc") as ns:
            check_block(script, scratch_copy(tmp_path / "project"), timeout=RUN_TIMEOUT,
                        netns=ns, env=ENV)
    finally:
        for name in names:
            subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True,
                           env=ENV, timeout=120)
