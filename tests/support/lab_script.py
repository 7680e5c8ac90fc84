# SPDX-License-Identifier: MIT
"""A lab script without a .py suffix (lab/sweep) loaded as a module, for the
tests of its functions (the grid it builds, its flags): nothing runs."""
import importlib.machinery
import importlib.util
import os

from support.paths import ROOT


def load(name):
    """lab/NAME as a module (its main() not called)."""
    loader = importlib.machinery.SourceFileLoader(f"lab_{name}",
                                                  os.path.join(ROOT, "lab", name))
    spec = importlib.util.spec_from_loader(f"lab_{name}", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
