#!/usr/bin/env python3
"""make mutants: apply each deliberate one-line bug of mutants.txt to a clean
copy of the tree, build what its tests need, run them, and say whether they
caught it.

A mutant is killed when one of its tests fails (or hangs past its timeout).
A mutant that does not build, or whose text is not found exactly once, is an
error of the table, not a kill: the run says so and exits 2.

    tests/mutants/run.py                 every mutant
    MUTANTS=id1,id2 tests/mutants/run.py  some (or: run.py id1 id2)
    MUTANTS_TABLE=FILE tests/mutants/run.py  another table
    tests/mutants/run.py --list          the table, checked against the tree

The clean copy is made once from the working tree (tracked and new files,
with their times) and built there; each mutant starts from a fresh copy of it,
so make rebuilds only the mutated file and what links it. The BPF skeletons and
vmlinux.h are reused unless the mutant is in bpf/.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# MUTANTS_TABLE: another table (a scratch one while writing a test).
TABLE = os.environ.get("MUTANTS_TABLE") or os.path.join(ROOT, "tests", "mutants", "mutants.txt")
FIELDS = ("id", "file", "from", "to", "kill", "why")
UNIT_TIMEOUT = 120
PYTEST_TIMEOUT = 900


class TableError(Exception):
    pass


def parse_table(path=TABLE):
    """Blocks of `key: value` lines separated by blank lines; # comments."""
    mutants, cur = [], {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    mutants.append(cur)
                cur = {}
                continue
            key, sep, value = line.partition(":")
            key = key.strip()
            if not sep or key not in FIELDS:
                raise TableError(f"{path}:{n}: expected one of {', '.join(FIELDS)}: {line!r}")
            if key in cur:
                raise TableError(f"{path}:{n}: {key} given twice")
            cur[key] = value.strip()
    if cur:
        mutants.append(cur)
    seen = set()
    for m in mutants:
        missing = [k for k in FIELDS if k not in m]
        if missing:
            raise TableError(f"mutant {m.get('id', '?')}: missing {', '.join(missing)}")
        if m["id"] in seen:
            raise TableError(f"mutant {m['id']} twice")
        seen.add(m["id"])
        m["kill"] = m["kill"].split()
        for k in m["kill"]:
            if not (k.startswith("unit:") or k.startswith("tests/")):
                raise TableError(f"mutant {m['id']}: kill {k!r} is neither unit:NAME "
                                 "nor a pytest node id")
    return mutants


def mutate(tree, m):
    """Replaces m['from'] by m['to'] in the one line of m['file'] that holds it."""
    path = os.path.join(tree, m["file"])
    with open(path) as f:
        lines = f.read().split("\n")
    hits = [i for i, l in enumerate(lines) if m["from"] in l]
    if len(hits) != 1:
        raise TableError(f"mutant {m['id']}: {m['from']!r} found on {len(hits)} lines of "
                         f"{m['file']} (must be exactly 1)")
    i = hits[0]
    if lines[i].count(m["from"]) != 1:
        raise TableError(f"mutant {m['id']}: {m['from']!r} twice on one line")
    lines[i] = lines[i].replace(m["from"], m["to"])
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return i + 1


def tree_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.lexists(os.path.join(ROOT, p))]


def make(tree, targets, log):
    r = subprocess.run(["make", "-j2", *targets], cwd=tree, stdout=log, stderr=subprocess.STDOUT)
    return r.returncode == 0


def clean_copy(work):
    """The working tree and its build/, built: what every mutant starts from."""
    clean = os.path.join(work, "clean")
    for p in tree_files():
        dst = os.path.join(clean, p)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, p), dst, follow_symlinks=False)
    build = os.path.join(ROOT, "build")
    if os.path.isdir(build):
        shutil.copytree(build, os.path.join(clean, "build"), symlinks=True,
                        ignore=shutil.ignore_patterns("corpus", "*.log", "deb-root"))
    # The package test's Debian root: device nodes and 300 MB, booted
    # read-only (test_deb.py): shared, not copied.
    if os.path.isdir(os.path.join(build, "deb-root")):
        os.symlink(os.path.join(build, "deb-root"), os.path.join(clean, "build", "deb-root"))
    with open(os.path.join(work, "clean-build.log"), "w") as log:
        if not make(clean, ["all"], log):
            raise SystemExit(f"the clean tree does not build: {work}/clean-build.log")
    return clean


def targets_for(m):
    if any(k.startswith("tests/") for k in m["kill"]):
        return ["all"]
    return [f"build/{k[5:]}" for k in m["kill"]]


def run_kills(tree, m, log):
    """'killed by X', or None if every test passed."""
    for k in m["kill"]:
        if k.startswith("unit:"):
            argv, timeout = [os.path.join(tree, "build", k[5:])], UNIT_TIMEOUT
        else:
            argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", k]
            timeout = PYTEST_TIMEOUT
        log.write(f"\n== {' '.join(argv)}\n")
        log.flush()
        try:
            r = subprocess.run(argv, cwd=tree, stdout=log, stderr=subprocess.STDOUT,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"{k} (timeout {timeout} s)"
        if r.returncode != 0:
            return k
    return None


def main(argv):
    try:
        table = parse_table()
    except TableError as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 2
    if "--list" in argv:
        bad = 0
        for m in table:
            with open(os.path.join(ROOT, m["file"])) as f:
                hits = sum(m["from"] in l for l in f.read().split("\n"))
            bad += hits != 1
            note = "" if hits == 1 else f"  ERROR: found on {hits} lines"
            print(f"{m['id']:32} {m['file']:30} {' '.join(m['kill'])}{note}")
        print(f"{len(table)} mutants")
        return 2 if bad else 0
    want = [w for w in os.environ.get("MUTANTS", "").split(",") if w] + \
        [a for a in argv if not a.startswith("-")]
    unknown = [w for w in want if w not in {m["id"] for m in table}]
    if unknown:
        print(f"mutants: unknown id(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    chosen = [m for m in table if not want or m["id"] in want]
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="syslogrx-mutants.")
    print(f"mutants: {len(chosen)} of {len(table)}; logs in {work}", flush=True)
    clean = clean_copy(work)
    survivors, errors, killed = [], [], 0
    try:
        for m in chosen:
            t = time.monotonic()
            tree = os.path.join(work, "m")
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(clean, tree, symlinks=True)
            logpath = os.path.join(work, f"{m['id']}.log")
            with open(logpath, "w") as log:
                try:
                    line = mutate(tree, m)
                except TableError as e:
                    errors.append(m["id"])
                    print(f"  ERROR    {m['id']}: {e}", flush=True)
                    continue
                log.write(f"{m['file']}:{line}: {m['from']}  ->  {m['to']}\n")
                log.flush()
                if not make(tree, targets_for(m), log):
                    errors.append(m["id"])
                    print(f"  ERROR    {m['id']}: does not build (see {logpath})", flush=True)
                    continue
                by = run_kills(tree, m, log)
            took = time.monotonic() - t
            if by:
                killed += 1
                print(f"  killed   {m['id']:28} {took:6.1f} s  by {by}", flush=True)
            else:
                survivors.append(m)
                print(f"  SURVIVED {m['id']:28} {took:6.1f} s  ({m['file']}:{line})", flush=True)
    finally:
        shutil.rmtree(os.path.join(work, "m"), ignore_errors=True)
        shutil.rmtree(clean, ignore_errors=True)
    total = time.monotonic() - t0
    scored = len(chosen) - len(errors)
    print(f"score: {killed}/{scored} killed", end="")
    print(f" ({100.0 * killed / scored:.0f}%)" if scored else "")
    for m in survivors:
        print(f"survivor: {m['id']}: {m['file']}: {m['from']!r} -> {m['to']!r} ({m['why']})")
    if errors:
        print(f"table errors: {', '.join(errors)}")
    print(f"time: {total:.0f} s")
    return 2 if errors else (1 if survivors else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
