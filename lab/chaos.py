#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make chaos: every fault against every output and disk-buffer mode, with a
SIGTERM in the middle of the fault and with a kill -9 and a restart
(tests/support/chaos.py runs each cell; tests/integration/outputs/test_chaos.py
runs one per fault in make test). Prints the matrix as a table (fault x
output x buffer: pass, LIMIT (what TCP cannot know, with the number) or
FAIL, time to ready, to show the fault, to stop,
sent/delivered/lost/counted) and writes it, with the per-fault table of
docs/outputs.md#faults, as markdown (--md) and the cells as JSON (--json).

Bounded: --minutes (default 60) of cells; those not reached are listed as
not run. --faults/--outputs/--buffers/--stops pick a part (comma lists);
--tables-from prints the tables of earlier runs' JSON, merged.

    make chaos
    make chaos CHAOS_ARGS="--outputs tcp,tls --stops term --minutes 20"
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from support import chaos  # noqa: E402
from support.paths import BUILD  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", default=",".join(chaos.FAULTS))
    ap.add_argument("--outputs", default=",".join(chaos.OUTPUTS))
    ap.add_argument("--buffers", default=",".join(chaos.BUFFERS))
    ap.add_argument("--stops", default="term,kill", help="term, kill or both")
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--md", default=os.path.join(BUILD, "chaos.md"))
    ap.add_argument("--json", default=os.path.join(BUILD, "chaos.json"))
    ap.add_argument("--tables-from", metavar="JSON[,JSON]",
                    help="run nothing: print the tables of these earlier runs' --json")
    a = ap.parse_args()
    if a.tables_from:
        done = []
        for path in a.tables_from.split(","):
            with open(path) as f:
                done += [chaos.Cell.from_row(r) for r in json.load(f)]
        print("## The matrix\n\n" + chaos.table(done) + "\n## Faults (docs/outputs.md)\n\n"
              + chaos.faults_table(done) + "\n## kill -9 (docs/outputs.md)\n\n"
              + chaos.kill_table(done))
        return 0
    # every SIGTERM cell before the kill -9 ones: a run cut by --minutes has
    # the first kind whole
    cells = [(f, o, b, s == "kill") for s in a.stops.split(",") for o in a.outputs.split(",")
             for f in a.faults.split(",") for b in a.buffers.split(",")]
    for f, o, b, _ in cells:
        if f not in chaos.FAULTS or o not in chaos.OUTPUTS or b not in chaos.BUFFERS:
            ap.error(f"unknown cell {f} {o} {b}: faults {list(chaos.FAULTS)}, "
                     f"outputs {chaos.OUTPUTS}, buffers {chaos.BUFFERS}")
    done, skipped = [], []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="syslogrx-chaos-") as d, chaos.World(d) as w:
        print(f"syslogrx's fault flags: {sorted(w.flags) or 'none'}", flush=True)
        for f, o, b, kill in cells:
            if time.monotonic() - t0 > a.minutes * 60:
                skipped.append((f, o, b, kill))
                continue
            t = time.monotonic()
            c = chaos.run_cell(w, f, o, b, kill)
            done.append(c)
            with open(a.json, "w") as out:       # a run cut short keeps its cells
                json.dump([c.row() for c in done], out, indent=1)
            print(f"{c.result:5} {f:10} {o:5} {b:8} {'kill' if kill else 'term'}"
                  f" {time.monotonic() - t:5.1f} s  {'; '.join(c.why or c.limit_said)}",
                  flush=True)
    md = "## The matrix\n\n" + chaos.table(done)
    if skipped:
        md += "\nNot run (past --minutes): " + ", ".join(
            f"{f}/{o}/{b}/{'kill' if k else 'term'}" for f, o, b, k in skipped) + "\n"
    md += "\n## Faults (docs/outputs.md)\n\n" + chaos.faults_table(done)
    md += "\n## kill -9 (docs/outputs.md)\n\n" + chaos.kill_table(done)
    print("\n" + md)
    with open(a.md, "w") as f:
        f.write(md)
    with open(a.json, "w") as f:
        json.dump([c.row() for c in done], f, indent=1)
    failed = sum(not c.ok for c in done)
    limit = sum(c.result == "LIMIT" for c in done)
    print(f"{len(done) - failed} of {len(done)} cells passed ({limit} at TCP's documented limit), "
          f"{len(skipped)} not run, "
          f"{(time.monotonic() - t0) / 60:.1f} min; {a.md}, {a.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
