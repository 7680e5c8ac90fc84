"""Each output is a module (docs/design.md, "Adding an output"): one table
names the outputs (src/rx/settings/outputs.c), each output's settings file
owns its flags, checks and restart fields, and sink/ opens it. Nothing else
tells the kinds apart: an OUTPUT_ constant anywhere else is a switch on the
kind that the next output would have to find and edit."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KIND = re.compile(r"\bOUTPUT_[A-Z]")
# The registry, the outputs' own settings files and the sinks.
ALLOWED = re.compile(r"^src/rx/(sink/|settings/outputs\.[ch]$|settings/output_[a-z0-9]+\.[ch]$)")


def c_files(*tops):
    for top in tops:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    full = os.path.join(dirpath, n)
                    yield os.path.relpath(full, ROOT), full


def kind_uses(rel, full):
    with open(full, errors="replace") as f:
        return [f"{rel}:{i}: {line.strip()}" for i, line in enumerate(f, 1)
                if KIND.search(line)]


def test_only_the_registry_and_the_sinks_name_an_output_kind():
    found = [u for rel, full in c_files("src", "tools", "bpf") if not ALLOWED.match(rel)
             for u in kind_uses(rel, full)]
    assert not found, "the output kind named outside the registry and sink/:\n" + "\n".join(found)


def test_the_scan_sees_the_kinds():
    """The pattern matches where the kinds are named (a scan that finds
    nothing anywhere would pass the test above for nothing)."""
    assert kind_uses("output_def.h", os.path.join(ROOT, "src/rx/settings/output_def.h"))
    assert not KIND.search("OPT_OUTPUT_RATE SYSLOGRX_OUTPUT_H ADVICE_OUTPUT_BUSY")


def test_every_output_has_one_line_in_each_table():
    """outputs.c's table and the sinks' (sink/registry.c) list the same kinds."""
    with open(os.path.join(ROOT, "src/rx/settings/output_def.h")) as f:
        kinds = re.findall(r"^\s*(OUTPUT_[A-Z]+),", f.read(), re.M)
    kinds.remove("OUTPUT_KINDS")
    for table in ("src/rx/settings/outputs.c", "src/rx/sink/registry.c"):
        with open(os.path.join(ROOT, table)) as f:
            named = [k for k in re.findall(r"\[(OUTPUT_[A-Z]+)\] =", f.read())
                     if k != "OUTPUT_KINDS"]
        assert sorted(named) == sorted(set(named)) == sorted(kinds), (table, named, kinds)
