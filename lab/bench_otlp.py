#!/usr/bin/python3
"""Benchmark (not a test): syslogrx into a real OpenTelemetry Collector
(OTLP/HTTP, protobuf and JSON) against raw lines into a file, same load,
one run, reported as ratios to the file output; then the highest rate of a
ladder that the collector takes with zero kernel drops.

The collector is build/otelcol/otelcol-syslogrx (lab/otelcol-setup.sh) with
its debug exporter at basic verbosity: nothing leaves it. All measured:
  cpu_us/msg   syslogrx's user+sys CPU (wait4 rusage) per written message
               (otlp: acknowledged by the collector)
  ratio        cpu_us/msg over the file output's in this run
  col_us/msg   the collector's CPU over the same run (otlp only)
  drops        kernel drops the tracer counted

    lab/bench_otlp.py [--count N] [--rate R] [--ladder R1,R2,...] [--json]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
sys.path.insert(0, os.path.join(ROOT, "lab"))
from sweeplib import cells, peers  # noqa: E402
from support.otel_collector import Collector  # noqa: E402
from support.paths import BUILD  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime + stime of a running process (all its threads), seconds."""
    return peers.proc_cpu_ticks(pid) / TICK


def run_one(kind, count, rate, col=None, window="100000", extra=()):
    port = cells.free_udp_port()
    tmp = tempfile.mkdtemp(prefix="bench-otlp-")
    summary = os.path.join(tmp, "summary.json")
    if kind == "file":
        out = ["--output", f"file:{tmp}/out.log", "--format", "raw"]
    else:
        out = ["--output", f"otlp:{col.url}", "--otlp-encoding", kind.split("-")[1]]
    argv = [os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "2",
            "--threads", "1", "--rcvbuf", "32M", "--window", window,
            "--summary", summary] + out + list(extra)
    rx = subprocess.Popen(argv, stderr=subprocess.PIPE)
    line = rx.stderr.readline().decode()
    if "ready on" not in line:
        rx.kill()
        raise SystemExit(f"syslogrx did not start: {line}{rx.stderr.read().decode()}")
    col_cpu0 = proc_cpu(col.proc.pid) if col and kind != "file" else 0.0
    gen = subprocess.run([os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                          "--count", str(count), "--rate", str(rate), "--size", "200",
                          "--sources", "4", "--end-markers", "0", "--format", "rfc5424"],
                         capture_output=True, text=True, timeout=600)
    if gen.returncode:
        rx.kill()
        raise SystemExit(f"sysloggen failed: {gen.stderr}")
    time.sleep(0.2)         # what is in the kernel queues reaches the window
    rx.send_signal(signal.SIGTERM)
    _, status, ru = os.wait4(rx.pid, 0)
    col_cpu = (proc_cpu(col.proc.pid) - col_cpu0) if col and kind != "file" else None
    err = rx.stderr.read().decode()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"syslogrx exit {status}: {err}")
    with open(summary) as f:
        s = json.load(f)
    subprocess.run(["rm", "-rf", tmp])
    written = s["otlp"]["records"] if "otlp" in s else s["totals"]["written"]
    cpu = ru.ru_utime + ru.ru_stime
    row = {"output": kind, "rate": rate, "sent": count, "written": written,
           "drops": s["totals"]["kernel_drops"]["total"],
           "cpu_us_per_msg": round(cpu * 1e6 / max(written, 1), 3),
           "collector_cpu_us_per_msg":
               round(col_cpu * 1e6 / max(written, 1), 2) if col_cpu is not None else None}
    if "otlp" in s:
        row["bytes_per_msg_raw"] = round(s["otlp"]["bytes_raw"] / max(written, 1), 1)
        row["bytes_per_msg_sent"] = round(s["otlp"]["bytes_sent"] / max(written, 1), 1)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=200000)
    ap.add_argument("--rate", type=int, default=40000, help="paced load, msgs/s")
    ap.add_argument("--ladder", default="25000,50000,100000,150000,200000",
                    help="rates for the zero-drop search (3 s each, window 10000)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    col = Collector(forward_to=None)
    rows, ladder = [], []
    try:
        col.start()
        for kind in ("file", "otlp-protobuf", "otlp-json"):
            rows.append(run_one(kind, a.count, a.rate, col))
        base = rows[0]["cpu_us_per_msg"]
        for r in rows:
            r["ratio_to_file"] = round(r["cpu_us_per_msg"] / base, 2) if base else None
        for rate in (int(x) for x in a.ladder.split(",")):
            r = run_one("otlp-protobuf", rate * 3, rate, col, window="10000")
            ladder.append(r)
            if r["drops"]:
                break
    finally:
        col.close()
    zero = max((r["rate"] for r in ladder if r["drops"] == 0), default=0)
    if a.json:
        for r in rows + ladder:
            print(json.dumps(r))
        print(json.dumps({"zero_drop_rate_otlp_protobuf": zero}))
        return
    print(f"CPU per message at {a.rate}/s, {a.count} messages of 200 bytes (rfc5424), "
          "ratios to raw lines into a file in this run:")
    print(f"{'output':14} {'written':>8} {'drops':>6} {'cpu_us/msg':>10} {'ratio':>6} "
          f"{'col_us/msg':>10} {'B/msg raw':>9} {'B/msg sent':>10}")
    for r in rows:
        print(f"{r['output']:14} {r['written']:8} {r['drops']:6} {r['cpu_us_per_msg']:10} "
              f"{r['ratio_to_file']:6} {str(r['collector_cpu_us_per_msg'] or '-'):>10} "
              f"{str(r.get('bytes_per_msg_raw', '-')):>9} {str(r.get('bytes_per_msg_sent', '-')):>10}")
    print("zero-drop ladder into the collector (otlp protobuf gzip, window 10000, 3 s per rate):")
    for r in ladder:
        print(f"  {r['rate']:>7}/s  sent {r['sent']:8}  written {r['written']:8}  drops {r['drops']}")
    print(f"highest rate with zero kernel drops: {zero}/s")


if __name__ == "__main__":
    main()
