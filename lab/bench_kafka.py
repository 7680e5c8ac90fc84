#!/usr/bin/python3
"""Benchmark (not a test): syslogrx into Kafka vs into a file, same load.

Starts a real Kafka broker (KRaft, tests/support/kafka_broker.py, -Xmx256m)
on loopback, then for each output runs syslogrx, sends the same load with
build/sysloggen and reports, all measured:
  msgs/s        messages written (file) or acknowledged by Kafka (delivered),
                over the time from the first send to syslogrx's exit (the exit
                waits for every delivery report)
  cpu_us/msg    syslogrx's user+sys CPU (wait4 rusage) per written message
  broker_us/msg the broker JVM's CPU over the same run (kafka only)
  drops         kernel drops the tracer counted

Two loads: a paced one under capacity (CPU per message), and one as fast as
sysloggen can send (throughput; drops expected on 2 cores, where the broker,
syslogrx and the sender share the CPUs).

    lab/bench_kafka.py [--count N] [--rate R] [--json]
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
from support.kafka_broker import KafkaBroker  # noqa: E402
from support.paths import BUILD  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime + stime of a running process (all its threads), seconds."""
    return peers.proc_cpu_ticks(pid) / TICK


def run_one(output, count, rate, broker=None, fmt="raw"):
    port = cells.free_udp_port()
    tmp = tempfile.mkdtemp(prefix="bench-kafka-")
    summary = os.path.join(tmp, "summary.json")
    out = ["--output", output] if not output.startswith("file") else \
        ["--output", f"file:{tmp}/out.log"]
    argv = [os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "2",
            "--threads", "1", "--rcvbuf", "32M", "--window", "100000", "--format", fmt,
            "--summary", summary] + out
    rx = subprocess.Popen(argv, stderr=subprocess.PIPE)
    line = rx.stderr.readline().decode()
    if "ready on" not in line:
        rx.kill()
        raise SystemExit(f"syslogrx did not start: {line}{rx.stderr.read().decode()}")
    broker_cpu0 = proc_cpu(broker.proc.pid) if broker else 0.0
    t0 = time.monotonic()
    gen = subprocess.run([os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                          "--count", str(count), "--rate", str(rate), "--size", "200",
                          "--sources", "4", "--end-markers", "0"],   # written vs count
                         capture_output=True, text=True, timeout=600)
    if gen.returncode:
        rx.kill()
        raise SystemExit(f"sysloggen failed: {gen.stderr}")
    time.sleep(0.2)         # what is in the kernel queues reaches the window
    rx.send_signal(signal.SIGTERM)
    _, status, ru = os.wait4(rx.pid, 0)
    elapsed = time.monotonic() - t0
    broker_cpu = (proc_cpu(broker.proc.pid) - broker_cpu0) if broker else None
    err = rx.stderr.read().decode()
    rx.returncode = os.waitstatus_to_exitcode(status)
    if rx.returncode:
        raise SystemExit(f"syslogrx exit {rx.returncode}: {err}")
    with open(summary) as f:
        s = json.load(f)
    subprocess.run(["rm", "-rf", tmp])
    written = s["kafka"]["delivered"] if "kafka" in s else s["totals"]["written"]
    cpu = ru.ru_utime + ru.ru_stime
    return {
        "output": output.split(":")[0], "format": fmt, "rate": rate or "max", "sent": count,
        "written": written, "drops": s["totals"]["kernel_drops"]["total"],
        "seconds": round(elapsed, 2), "msgs_per_s": round(written / elapsed),
        "cpu_us_per_msg": round(cpu * 1e6 / max(written, 1), 2),
        "broker_cpu_us_per_msg": round(broker_cpu * 1e6 / max(written, 1), 2) if broker else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=200000)
    ap.add_argument("--rate", type=int, default=40000, help="paced load, msgs/s")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    b = KafkaBroker(auto_create=False, partitions=1)
    rows = []
    try:
        b.start()
        b.create_topic("bench", partitions=1)
        for rate in (a.rate, 0):
            for output in ("file", f"kafka:{b.bootstrap}/bench"):
                rows.append(run_one(output, a.count, rate, broker=b if "kafka" in output else None))
    finally:
        b.close()
    if a.json:
        for r in rows:
            print(json.dumps(r))
        return
    print(f"{'output':7} {'rate':>7} {'sent':>8} {'written':>8} {'drops':>7} {'secs':>6} "
          f"{'msgs/s':>8} {'cpu_us/msg':>10} {'broker_us/msg':>13}")
    for r in rows:
        print(f"{r['output']:7} {str(r['rate']):>7} {r['sent']:8} {r['written']:8} {r['drops']:7} "
              f"{r['seconds']:6} {r['msgs_per_s']:8} {r['cpu_us_per_msg']:10} "
              f"{str(r['broker_cpu_us_per_msg'] if r['broker_cpu_us_per_msg'] is not None else '-'):>13}")


if __name__ == "__main__":
    main()
