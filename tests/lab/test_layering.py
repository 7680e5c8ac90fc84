"""The house's rule, checked on the tree: every #include points down a floor
or stays in its room (DESIGN.md, README "Layout").

Floors, bottom first. A file may include its own floor and any floor below it;
include/bpf/ (what the BPF programs share with user space) is below them all.
"""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Each entry: a path prefix under src/ (longest match wins) and its floor.
FLOORS = {
    "common/": 0,
    "syslog/": 1, "net/": 1, "gen/": 1,
    "rx/settings/": 2,
    "rx/sink/": 3,
    "rx/path/": 4,
    "rx/life/": 5,
    "rx/report/": 6,
    "rx/main.c": 7,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floor_of(rel):
    best = None
    for prefix, floor in FLOORS.items():
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, floor)
    return best


def sources():
    for dirpath, _, names in os.walk(os.path.join(ROOT, "src")):
        for n in names:
            if n.endswith((".c", ".h")):
                full = os.path.join(dirpath, n)
                yield os.path.relpath(full, os.path.join(ROOT, "src")), full


def test_every_source_file_has_a_floor():
    homeless = [rel for rel, _ in sources() if floor_of(rel) is None]
    assert not homeless, f"files in no room of the house: {homeless}"


def test_includes_point_down():
    upward = []
    for rel, full in sources():
        mine = floor_of(rel)
        with open(full, errors="replace") as f:
            for inc in INCLUDE.findall(f.read()):
                if inc.startswith("bpf/") or inc.endswith(".skel.h"):
                    continue  # include/bpf/ and generated skeletons: below every floor
                theirs = floor_of(inc)
                assert theirs is not None, f"{rel} includes {inc}, which is in no room"
                if theirs[1] > mine[1]:
                    upward.append(f"{rel} ({mine[0]}) includes {inc} ({theirs[0]})")
    assert not upward, "includes that point up a floor:\n" + "\n".join(upward)


def test_shared_headers_live_in_include():
    shared = sorted(os.listdir(os.path.join(ROOT, "include", "bpf")))
    programs = sorted(n[: -len(".bpf.c")] for n in os.listdir(os.path.join(ROOT, "bpf"))
                      if n.endswith(".bpf.c"))
    assert [s[:-2] for s in shared] == programs, (shared, programs)
    assert not [n for n in os.listdir(os.path.join(ROOT, "bpf")) if n.endswith(".h")]
