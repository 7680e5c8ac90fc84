# SPDX-License-Identifier: MIT
"""Receive capacity past the sender: on 2 shared cores the sender's ceiling
(~230,000 msgs/s) hides what the receiver could take. So the receiver is
held (SIGSTOP: the kernel keeps queueing for its sockets), sysloggen fills
big queues as fast as it can, the receiver is released and the drain is
timed (lab/sweeplib/drain.py): the rate no sender on this machine can offer.
The receiver's CPU over the drain (the scheduler's per-thread sums, to the
nanosecond) gives the rate per core.

Every receiver drains the same load in the same run: syslogrx (null output,
raw into a file, json into a file), drainrx (recvmmsg and count) and drainrx
--write (recvmmsg, then one writev a batch into a file: the limit of
writing), 2 threads each. A file cell is reported against both drainrx and
drainrx --write. What drained is what was queued (sent minus the kernel's drops
while held), so the figure is exact whatever the receiver; syslogrx's input
window (10,000 messages) may still hold up to 10,000 of them when the queues
are empty, a bound the report states."""
import json
import os
import shutil
import subprocess
import time

from sweeplib import cells, drain, peers

from . import runner

# Effective bytes per socket: 1000-byte datagrams take 2,304 bytes of queue
# (truesize) here, so 4 x 256M hold ~466,000 of them.
RCVBUF = 256 << 20
SIZE = 1000
COUNT = 400000
SYSLOGRX_NULL = "syslogrx raw, null output"
SYSLOGRX_FILE = "syslogrx raw, file"
SYSLOGRX_JSON_FILE = "syslogrx json, file"
DRAINRX = "drainrx"
DRAINRX_WRITE = "drainrx --write, file"
ORDER = (SYSLOGRX_NULL, SYSLOGRX_FILE, SYSLOGRX_JSON_FILE, DRAINRX, DRAINRX_WRITE)
# json with the whole datagram in every line too (--json-raw): lab/json_cost.py
SYSLOGRX_JSON_RAW_FILE = "syslogrx json --json-raw, file"


class SyslogrxJsonRaw(runner.SyslogrxBench):
    """syslogrx json with --json-raw."""

    def argv(self):
        return super().argv() + ["--json-raw"]


def receiver(name, port, workdir):
    """(receiver object, sysloggen flows): 4 sockets, 2 threads (drainrx: 2
    sockets of twice the buffer, one thread each, and 32 flows so the
    kernel's hash feeds both)."""
    base = {"rcvbuf": RCVBUF, "window": 0, "cost_ns": 0, "duration": 60}
    if name in (DRAINRX, DRAINRX_WRITE):
        return runner.DrainRx(dict(base, receiver="drainrx", sockets=2, threads=2,
                                   rcvbuf=2 * RCVBUF, write=name == DRAINRX_WRITE),
                              port, workdir), 32
    spec = dict(base, receiver="syslogrx", mode="random", sockets=4, threads=2,
                format="json" if "json" in name else "raw",
                output="null" if "null" in name else "file")
    if name == SYSLOGRX_JSON_RAW_FILE:
        return SyslogrxJsonRaw(spec, port, workdir), 1
    return runner.SyslogrxBench(spec, port, workdir), 1


def fill(port, count, flows):
    """sysloggen --rate 0: count messages as fast as it can. Returns
    (sent, its rate: the sender's ceiling, measured on the way)."""
    r = subprocess.run([os.path.join(peers.BUILD, "sysloggen"), "--target",
                        f"127.0.0.1:{port}", "--rate", "0", "--count", str(count),
                        "--size", str(SIZE), "--sources", str(flows), "--end-markers", "0",
                        "--json"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise cells.CellError(f"sysloggen failed: {r.stderr.strip()[-300:]}")
    s = json.loads(r.stdout.splitlines()[-1])
    return s["sent"], s["achieved_rate"]


def task_ns(pid):
    """{tid: ns on the CPU} of every thread of pid (/proc/PID/task/TID/schedstat:
    the scheduler's own sum, to the nanosecond; utime + stime come in clock
    ticks of 10 ms, a tenth of a 0.1 s drain's CPU); {} if it is gone."""
    out = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
    except OSError:
        pass
    return out


def plain_write(path, nbytes, chunk=1 << 20):
    """Seconds a plain writer takes to write nbytes into a new file at path
    (1 MiB writes, no fsync: the page cache, like syslogrx's file output)."""
    buf = b"x" * chunk
    t0 = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        left = nbytes
        while left > 0:
            left -= os.write(fd, buf[:min(chunk, left)])
    finally:
        os.close(fd)
    secs = time.monotonic() - t0
    os.unlink(path)
    return secs


def drain_trial(name, workdir, count=COUNT):
    """One hold-fill-release-drain of one receiver. Returns a dict: receiver,
    sent, dropped, drained, seconds, rate, cpu_s, per_core (drained per CPU
    second), sender_rate, received (the receiver's own count), error; for
    syslogrx the CPU split between its output thread and its workers
    (cpu_output_s, cpu_workers_s: threads in creation order, main, output,
    workers) and, with a file, output_bytes and plain_write_s (the same bytes
    written by a plain writer into the same directory just after)."""
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    port = cells.free_udp_port()
    rx, flows = receiver(name, port, workdir)
    t = {"receiver": name, "error": ""}
    try:
        rx.start()
        rx.wait_ready()
        box = {}

        def send():
            box["sent"], box["rate"] = fill(port, count, flows)
            return box["sent"]
        k0 = task_ns(rx.pid)
        res = drain.hold_and_drain(rx.pid, port, send)
        k1 = task_ns(rx.pid)
        t.update(res)
        t["sender_rate"] = box["rate"]
        tids = sorted(k1)
        d = {tid: k1[tid] - k0.get(tid, 0) for tid in tids}
        if tids:
            t["cpu_s"] = round(sum(d.values()) / 1e9, 4)
            t["per_core"] = round(res["drained"] / t["cpu_s"], 1) if t["cpu_s"] else None
        if not isinstance(rx, runner.DrainRx) and len(tids) >= 3:
            t["cpu_output_s"] = round(d[tids[1]] / 1e9, 4)
            t["cpu_workers_s"] = round(sum(d[x] for x in tids[2:]) / 1e9, 4)
        rc = rx.stop()
        if rc != 0:
            raise cells.CellError(f"{rx.name} exited with {rc}: {rx.stderr_text()[-300:]}")
        if isinstance(rx, runner.DrainRx):
            t["received"] = rx.result()["received"]
            if os.path.exists(rx.output):
                t["output_bytes"] = os.path.getsize(rx.output)
        else:
            with open(rx.summary_path) as f:
                t["received"] = json.load(f)["totals"]["received"]
            if os.path.exists(rx.output):
                t["output_bytes"] = os.path.getsize(rx.output)
                t["plain_write_s"] = round(plain_write(os.path.join(workdir, "plain.out"),
                                                       t["output_bytes"]), 4)
    except (cells.CellError, peers.ReceiverError, drain.DrainError, OSError, KeyError,
            ValueError) as e:
        t["error"] = str(e).replace("\n", " ")[:300]
    finally:
        runner.discard(rx)
    return t


def writes_file(name):
    """A cell whose receiver writes a file: measured against drainrx --write
    as well as drainrx."""
    return name.endswith(", file")


def table(trials, ceiling=None):
    """Markdown: per receiver the drain rate, per CPU second, vs drainrx and
    (a file cell) vs drainrx --write, and vs the sender's ceiling: `ceiling`
    (the bench measures it in the same run), else the sender's rate while
    filling (the receiver held, the sender had the CPUs to itself)."""
    def ref(name):
        return next((t for t in trials if t["receiver"] == name and not t["error"]), None)

    def vs(t, r):
        return f"{t['rate'] / r['rate']:.2f}x" if r else "-"
    drain, write = ref(DRAINRX), ref(DRAINRX_WRITE)
    lines = ["| Receiver (2 threads) | drained | drain rate (msgs/s) | per CPU second | "
             "x drainrx (rate) | x drainrx --write (rate) | "
             "sender's ceiling (msgs/s) | x sender's ceiling |",
             "|---|---|---|---|---|---|---|---|"]
    for t in trials:
        if t["error"]:
            lines.append(f"| {t['receiver']} | error: {t['error'][:80]} | | | | | | |")
            continue
        pc = f"{t['per_core']:,.0f}" if t.get("per_core") else "-"
        c = ceiling or t["sender_rate"]
        w = vs(t, write) if writes_file(t["receiver"]) else ""
        lines.append(f"| {t['receiver']} | {t['drained']:,} | {t['rate']:,.0f} | {pc} | "
                     f"{vs(t, drain)} | {w} | {c:,.0f} | {t['rate'] / c:.2f}x |")
    return "\n".join(lines) + "\n"


def where_text(trials):
    """Per syslogrx trial: the CPU of its output thread and of its workers,
    and with a file the bytes written against a plain writer's time."""
    out = []
    for t in trials:
        if t["error"] or t.get("cpu_output_s") is None:
            continue
        line = (f"- {t['receiver']}: output thread {t['cpu_output_s']:.2f} CPU s, workers "
                f"{t['cpu_workers_s']:.2f} CPU s over the {t['seconds']:.2f} s drain")
        if t.get("output_bytes") and t.get("plain_write_s"):
            mb = t["output_bytes"] / 1e6
            line += (f"; wrote {mb:,.0f} MB ({mb / t['seconds']:,.0f} MB/s), a plain writer "
                     f"the same bytes in {t['plain_write_s']:.2f} s "
                     f"({mb / t['plain_write_s']:,.0f} MB/s)")
        idle = 1 - t["cpu_output_s"] / t["seconds"] if t["seconds"] else 0
        line += f"; the output thread was off the CPU {100 * idle:.0f}% of the drain"
        out.append(line + ".")
    return "\n".join(out) + ("\n" if out else "")


def report_text(trials, ceiling=None):
    """report.md's section."""
    n = max((t.get("sent") or 0 for t in trials), default=0)
    return ("Receive capacity past the sender: each receiver held (SIGSTOP) while sysloggen "
            f"queued {n:,} {SIZE}-byte messages into {RCVBUF >> 20}M-per-socket buffers, "
            "then released and timed until its queues were empty; drained = sent - kernel "
            "drops while held. Per CPU second: drained / the receiver's CPU time (schedstat) over "
            "the drain. syslogrx's input window may still hold up to 10,000 messages at the "
            "end (at most 2.5%).\n\n" + table(trials, ceiling) + "\n" + where_text(trials))
