#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench: syslogrx against the physical limit (drainrx, a receiver that only
drains with recvmmsg; drainrx --write, which also writes each batch with one
writev) and the peers (Debian's syslog-ng in the SC4S layout, rsyslog imudp,
the OpenTelemetry Collector's syslog receiver, Fluent Bit's in_syslog in
three configurations when lab/fluentbit-setup.sh has built it), side by side
in one run, on the same load from sysloggen (an even pace) and from loggen
(SC4S's sender, its start burst included).

  1. zero-drop capacity: the sender's ceiling is measured first (sysloggen
     --rate 0 into drainrx); each receiver then runs the SC4S columns 27,000,
     50,000 and 150,000/s and the ceiling, climbing until a rate drops, then
     bisects between the last good and the first bad rate;
  2. CPU per message (user and system, from /proc/PID/stat) and peak RSS
     (VmHWM) at 50,000/s, as ratios to drainrx and to the best peer;
  3. the tracer's cost: syslogrx with and without --no-trace;
  4. scaling: 1, 4, 32, 128 sockets; 200, 1000, 8000-byte messages;
  5. balancing (benchlib/balance.py): CPU per message of leastloaded and of
     --ordered as ratios to random, and random against leastloaded beside a
     noisy neighbour (a busy loop pinned to one worker's CPU);
  6. receive capacity past the sender: each receiver held (SIGSTOP) while
     sysloggen fills big queues, then released and its drain timed
     (benchlib/capacity.py), per CPU second, against drainrx's;
  7. per-sender counting (benchlib/senders.py): the tracer's time per run
     (kernel.bpf_stats) and syslogrx's CPU per message with --senders 4096
     against --senders 0, as ratios.
  8. the disk buffer's cost (lab/bench_diskbuf.py): CPU per message at
     50,000/s into a healthy TCP destination with no buffer and with
     --disk-buffer-mode reliable, interleaved.
  9. the fair share (benchlib/fair_share.py): a flood at 27,000 and
     150,000/s among fifty quiet senders into workers of a known capacity:
     the quiet senders' loss and the flood's, and the CPU per message, with
     random alone and with --fair-share.

The per-message cost targets (drain per CPU second, CPU per message against
drainrx, --ordered and leastloaded against random, reliable against no
buffer) are ratios within this one run, in report.md's Targets table.

Results in DIR: report.md (targets with PASS/MISS), trials.csv, results.json;
written after every trial, so Ctrl-C keeps what has run. Progress on stderr.

USAGE: lab/bench.py [--quick] [--out DIR] [--duration S] [--steps N] [--balance-only]
                    [--senders-only] [--fair-share-only]

EXAMPLES:
    make bench                                   # the full run, < 30 minutes on 2 cores
    make bench BENCH_ARGS=--quick                # a smoke run, < 2 minutes
    lab/bench.py --out results/bench-lab --duration 5 --steps 2
    lab/bench.py --balance-only                  # part 5 alone, about 3 minutes
    lab/bench.py --senders-only                  # part 7 alone, about 1 minute
    lab/bench.py --fair-share-only               # part 9 alone, about 3 minutes
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweeplib import fluentbit, peers  # noqa: E402
from benchlib import balance, capacity, fair_share, report, runner, senders  # noqa: E402
import bench_diskbuf  # noqa: E402

COLUMNS = [27000, 50000, 150000]    # SC4S's columns that matter on 2 cores
CPU_RATE = 50000
SIZE = 1000
SOCKETS_SCALE = [1, 4, 32, 128]
SIZES_SCALE = [200, 1000, 8000]
RMEM_MAX = "/proc/sys/net/core/rmem_max"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench.py", description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1 s trials, one bisection step, fewer scaling points")
    ap.add_argument("--out", help="results directory (default results/bench-YYYYmmdd-HHMMSS)")
    ap.add_argument("--duration", type=float, help="seconds per trial (default 10; --quick 1)")
    ap.add_argument("--steps", type=int, help="bisection steps (default 4; --quick 1)")
    ap.add_argument("--balance-only", action="store_true",
                    help="run only part 5 (balancing) and write DIR/balance.md")
    ap.add_argument("--senders-only", action="store_true",
                    help="run only part 7 (per-sender counting) and write DIR/senders.md")
    ap.add_argument("--fair-share-only", action="store_true",
                    help="run only part 9 (the fair share) and write DIR/fair_share.md")
    ap.add_argument("--report-only", metavar="DIR",
                    help="rewrite DIR/report.md from DIR/results.json, run nothing")
    a = ap.parse_args(argv)
    if a.duration is None:
        a.duration = 1.0 if a.quick else 10.0
    if a.steps is None:
        a.steps = 1 if a.quick else 4
    if a.duration <= 0 or a.duration > 600:
        ap.error(f"--duration {a.duration:g}: expected 0 < S <= 600")
    if a.steps < 0 or a.steps > 10:
        ap.error(f"--steps {a.steps}: expected 0..10")
    if not a.out:
        a.out = os.path.join(peers.ROOT, "results",
                             "bench-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    return a


class Progress:
    def __init__(self):
        self.start = time.monotonic()

    def log(self, text):
        el = time.monotonic() - self.start
        sys.stderr.write(f"bench [{int(el // 60):2d}:{int(el % 60):02d}] {text}\n")
        sys.stderr.flush()


def machine():
    model = "?"
    mem_kb = 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "model": model, "kernel": platform.release(),
            "mem_gb": mem_kb / (1 << 20), "host": platform.node(),
            "date": datetime.datetime.now().isoformat(timespec="seconds")}


def first_line(argv, env=None):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10, env=env)
        return (r.stdout or r.stderr).splitlines()[0].strip()
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def versions():
    rsyslogd, _, libdir = peers.rsyslog_paths()
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    ng = first_line([peers.SYSLOG_NG, "--version"])     # "syslog-ng 3 (3.38.1)"
    rs = first_line([rsyslogd, "-v"], env)                # "rsyslogd  8.2302.0 (aka ..."
    if "(" in ng and ")" in ng:
        ng = "syslog-ng " + ng[ng.index("(") + 1:ng.index(")")]
    rs = "rsyslog " + rs.split()[1] if len(rs.split()) > 1 else rs
    fb = (first_line([fluentbit.FLUENTBIT, "--version"]) if fluentbit.present()
          else "Fluent Bit (absent: not built here)")
    return {"syslog-ng": ng, "rsyslog": rs, "otelcol": otelcol_version(), "fluent-bit": fb}


def otelcol_version():
    """The builder's collector has no --version; `components` names each
    module with its version (".../receiver/syslogreceiver v0.165.0")."""
    try:
        r = subprocess.run([peers.otelcol_path(), "components"], capture_output=True,
                           text=True, timeout=10)
        m = re.search(r"/syslogreceiver v(\S+)", r.stdout)
    except (OSError, subprocess.SubprocessError):
        m = None
    return "OpenTelemetry Collector " + (m.group(1) if m else "?")


def receivers_text(vers):
    return ("syslogrx: 4 sockets, 2 threads, random balancing, rcvbuf 32M, file output "
            "(raw, json; raw with --no-trace for the tracer's cost); drainrx: 1 socket, "
            f"recvmmsg and count, nothing else; {vers['syslog-ng']} (Debian) in the SC4S layout: "
            "4 so-reuseport network() sources, 2 worker threads, fetch limit 1000, file "
            f"destination; {vers['rsyslog']} (Debian's package, unpacked) imudp: 2 threads, "
            f"batch 128, omfile; {vers['otelcol']} with contrib's syslog receiver (UDP, "
            "rfc3164, its defaults: one socket, one reader) into the nop exporter, written = "
            "records it accepted (lab/otelcol/peer-builder-config.yaml); "
            f"{vers.get('fluent-bit', 'Fluent Bit')}: in_syslog (UDP, its rfc3164 parser) "
            "into out_file, as its defaults (`fluent-bit`), with receive_buffer_size and "
            "`threaded on` (`fluent-bit tuned`), and as two such inputs with net.share_port "
            "(`fluent-bit share_port`). Every receive buffer is 32M effective (what SO_RCVBUF "
            "reports) but the collector's and Fluent Bit's defaults, which have no option "
            "for it or do not set it: the system's default, measured.")


def notes(a, rmem_note):
    n = ["Drops: syslogrx from its summary (kernel_drops from its tracer; SO_MEMINFO with "
         "--no-trace) and sent - written; drainrx, syslog-ng, rsyslog and Fluent Bit from "
         "udpdrops (the same tracer) running alongside, and sent - lines with the sender's "
         "marker in their output. A trial is zero-drop when both are 0.",
         "A rate is the offered (target) rate unless the sender fell more than 2% short of "
         "it; then the capacity is the rate it achieved.",
         f"CPU per message: the receiver's utime and stime deltas (clock ticks of "
         f"{1000 // runner.HZ} ms) from before the load to after its queues emptied and its "
         "output stopped growing, divided by the messages it received; sender and receiver "
         "share the 2 CPUs, so the sender's CPU is not counted.",
         "Every receiver is started fresh on a fresh loopback port for each trial; the "
         "output files are deleted after each trial.",
         "The sender's ceiling is the best of two 3 s runs of sysloggen --rate 0 into "
         "drainrx; the ladder's top is that rate rounded down to a thousand."]
    if rmem_note:
        n.append(rmem_note)
    return n


def save(out, meta, trials):
    """trials.csv and results.json now; report.md too once a summary can be made."""
    report.write_csv(trials, os.path.join(out, "trials.csv"))
    summary = report.summarize(trials, meta["top"], CPU_RATE, SIZE) if meta.get("top") else None
    report.write_json(os.path.join(out, "results.json"), meta, summary, trials)
    if summary:
        with open(os.path.join(out, "report.md"), "w") as f:
            f.write(report.markdown_report(summary, trials, meta))
            if meta.get("drain"):
                f.write("\n## Receive capacity past the sender\n\n"
                        + capacity.report_text(meta["drain"], meta.get("ceiling")))
    return summary


def report_only(out):
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    summary = save(out, res["meta"], res["trials"])
    if not summary:
        print(f"bench: {out}/results.json has no ceiling: nothing to report", file=sys.stderr)
        return 1
    print(open(os.path.join(out, "report.md")).read())
    return 0


def diskbuf_phase(a, prog):
    """Part 7: {mode: median CPU ns per message} for no buffer and reliable."""
    rounds, secs = (1, 3.0) if a.quick else (3, 10.0)
    res = bench_diskbuf.run(["none", "reliable"], bench_diskbuf.RATE, secs, rounds,
                            log=prog.log)
    return res["median_ns"]


def balance_phase(a, out, prog):
    """Part 5: balance.json and balance.md, the latter appended to report.md."""
    res = balance.run(repeats=1 if a.quick else 3, log=prog.log)
    with open(os.path.join(out, "balance.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = balance.report_md(res)
    with open(os.path.join(out, "balance.md"), "w") as f:
        f.write(md)
    if not os.path.exists(os.path.join(out, "report.md")):
        print(md)
    return res


def senders_phase(a, out, prog, part=senders, name="senders"):
    """Part 7 (and 9: part=fair_share): NAME.json and NAME.md, the latter
    appended to report.md."""
    res = part.run(repeats=1 if a.quick else 3, log=prog.log)
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = part.report_md(res)
    with open(os.path.join(out, f"{name}.md"), "w") as f:
        f.write(md)
    if os.path.exists(os.path.join(out, "report.md")):
        with open(os.path.join(out, "report.md"), "a") as f:
            f.write("\n" + md)
    else:
        print(md)
    return 0


def main(argv):
    a = parse_args(argv)
    if a.report_only:
        return report_only(os.path.abspath(a.report_only))
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    prog = Progress()
    if a.balance_only:
        balance_phase(a, out, prog)
        return 0
    if a.senders_only:
        return senders_phase(a, out, prog)
    if a.fair_share_only:
        return senders_phase(a, out, prog, fair_share, "fair_share")
    for tool in ("syslogrx", "sysloggen", "drainrx", "udpdrops"):
        if not os.access(os.path.join(peers.BUILD, tool), os.X_OK):
            print(f"bench: build/{tool} is missing: run make", file=sys.stderr)
            return 1
    if not os.access(peers.SYSLOG_NG, os.X_OK):
        print(f"bench: {peers.SYSLOG_NG} is missing: apt-get install syslog-ng-core",
              file=sys.stderr)
        return 1
    for name, ensure in (("rsyslog", peers.rsyslog_ensure), ("otelcol", peers.otelcol_ensure)):
        try:
            ensure()
        except peers.ReceiverError as e:
            print(f"bench: {name}: {e}", file=sys.stderr)
            return 1
    have_loggen = shutil.which("loggen") is not None
    absent = {} if fluentbit.present() else {n: fluentbit.ABSENT for n in report.FLUENTBIT_NAMES}

    meta = {"argv": argv, "quick": a.quick, "machine": machine(), "sender": "sysloggen",
            "size": SIZE, "duration": a.duration, "steps": a.steps, "columns": COLUMNS,
            "cpu_rate": CPU_RATE, "cpu_count": int(CPU_RATE * a.duration), "absent": absent}
    with open("/proc/loadavg") as f:
        meta["machine"]["loadavg_at_start"] = " ".join(f.read().split()[:3])
    meta["versions"] = versions()
    meta["receivers_text"] = receivers_text(meta["versions"])
    prog.log(f"{meta['machine']['nproc']} CPUs, {meta['machine']['model']}, kernel "
             f"{meta['machine']['kernel']}; results in {out}")

    # syslog-ng sets SO_RCVBUF (not ...FORCE): rmem_max caps what it gets.
    need = runner.RCVBUF // 2
    rmem_old, rmem_note = None, None
    with open(RMEM_MAX) as f:
        cur = int(f.read().split()[0])
    if cur < need:
        with open(RMEM_MAX, "w") as f:
            f.write(f"{need}\n")
        rmem_old = cur
        rmem_note = (f"net.core.rmem_max was raised from {cur} to {need} for the run (and "
                     "restored) so that syslog-ng's SO_RCVBUF gets the size.")
    meta["notes"] = notes(a, rmem_note)

    trials = []
    interrupted = False

    def trial(phase, receiver, rate, duration=a.duration, sender="sysloggen", **kw):
        spec = dict(phase=phase, receiver=receiver, rate=rate, duration=duration,
                    sender=sender, size=kw.pop("size", SIZE), **kw)
        t = runner.run_trial(spec, os.path.join(work, "trial"), log=prog.log)
        trials.append(t)
        what = (f"{phase:8s} {receiver} {t['sockets']}s/{t['size']}B @ "
                f"{report.thousands(rate) if rate else 'max'}/s")
        if not t["error"]:
            prog.log(f"{what}: achieved {report.thousands(t['achieved_rate'])}/s, drops "
                     f"{report.fmt_drop(t['drop_pct'])}, CPU {report.fmt_us(t.get('cpu_us'))} "
                     f"us/msg ({t['cpu_pct']}%)")
        save(out, meta, trials)
        return t

    try:
        # The best of two runs: one run can be held back by a neighbour on
        # a shared host, and the ceiling sets every receiver's ladder.
        runs = [trial("ceiling", report.DRAINRX, 0, duration=min(a.duration, 3.0))
                for _ in range(2)]
        runs = [r for r in runs if not r["error"] and r["achieved_rate"]]
        if not runs:
            prog.log("the sender's ceiling could not be measured")
            return 1
        c = max(runs, key=lambda r: r["achieved_rate"])
        meta["ceiling"] = c["achieved_rate"]
        meta["ceiling_drop_pct"] = c["drop_pct"]
        top = report.ladder(COLUMNS, meta["ceiling"])[-1]
        meta["top"] = top
        prog.log(f"sender's ceiling: {report.thousands(meta['ceiling'])}/s; ladder "
                 + ", ".join(report.thousands(r) for r in report.ladder(COLUMNS, meta["ceiling"])))

        # Past the sender: held receivers drain queues the sender filled.
        meta["drain"] = []
        for name in capacity.ORDER + (capacity.SYSLOGRX_JSON_RAW_FILE,):
            d = capacity.drain_trial(name, os.path.join(work, "drain"),
                                     count=capacity.COUNT // 2 if a.quick else capacity.COUNT)
            meta["drain"].append(d)
            prog.log(f"drain    {name}: " + (d["error"] or
                     f"{report.thousands(d['rate'])}/s ({report.thousands(d['drained'])} in "
                     f"{d['seconds']} s), {report.thousands(d.get('per_core') or 0)} per CPU s"))
            save(out, meta, trials)

        for name in [n for n in report.RECEIVER_ORDER if n not in absent]:
            tried = []
            while True:
                rate = report.next_rate(tried, COLUMNS, meta["ceiling"], a.steps)
                if rate is None:
                    break
                t = trial("search", name, rate)
                tried.append((rate, report.zero_drop(t)))
            if CPU_RATE not in [r for r, _ in tried]:
                trial("cpu", name, CPU_RATE)

        sockets = [1, 128] if a.quick else SOCKETS_SCALE
        sizes = [8000] if a.quick else [s for s in SIZES_SCALE if s != SIZE]
        for n in sockets:
            trial("scaling", report.SYSLOGRX_RAW, CPU_RATE, sockets=n, threads=min(2, n))
        for s in sizes:
            trial("scaling", report.SYSLOGRX_RAW, CPU_RATE, size=s)

        if have_loggen:
            who = [report.SYSLOGRX_RAW] if a.quick else \
                [n for n in (report.SYSLOGRX_RAW, report.DRAINRX) + report.PEER_NAMES
                 if n not in absent]
            for name in who:
                trial("loggen", name, CPU_RATE, sender="loggen")
            # json into a file as fast as loggen sends: the cell of 0 drops
            meta["json_ceiling"] = trial("json_ceiling", report.SYSLOGRX_JSON,
                                         report.JSON_CEILING_RATE, sender="loggen",
                                         **report.JSON_CEILING_LAYOUT)
        else:
            meta["notes"].append("loggen is not installed: no loggen cross-check.")
    except KeyboardInterrupt:
        interrupted = True
        prog.log(f"interrupted: keeping the {len(trials)} trials done")
    finally:
        if rmem_old is not None:
            with open(RMEM_MAX, "w") as f:
                f.write(f"{rmem_old}\n")
        meta["interrupted"] = interrupted
        meta["elapsed_s"] = round(time.monotonic() - prog.start, 1)
        summary = save(out, meta, trials) if trials else None

    if summary and not interrupted:
        try:
            meta["diskbuf"] = diskbuf_phase(a, prog)
        except (OSError, RuntimeError, SystemExit, ValueError, KeyError) as e:
            prog.log(f"disk buffer phase failed: {e}")
        save(out, meta, trials)
        res = balance_phase(a, out, prog)
        if res:
            # report.md again, with the balance targets, then balance.md.
            meta["balance"] = res["summary"]
            save(out, meta, trials)
            with open(os.path.join(out, "report.md"), "a") as f:
                f.write("\n" + balance.report_md(res))
        senders_phase(a, out, prog)
        senders_phase(a, out, prog, fair_share, "fair_share")
    if summary:
        print(open(os.path.join(out, "report.md")).read())
    failed = [t for t in trials if t["error"]]
    if failed:
        prog.log(f"{len(failed)} trial(s) failed; see the error column of trials.csv")
    prog.log(f"done in {meta['elapsed_s']:.0f} s: {out}/report.md")
    return 130 if interrupted else (1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
