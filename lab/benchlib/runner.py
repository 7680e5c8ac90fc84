# SPDX-License-Identifier: MIT
"""One trial of the benchmark: a fresh receiver on a fresh loopback port, the
load from the sender, a settle, a stop, and what each part measured.

The peers (syslog-ng in the SC4S layout, rsyslog imudp, the OpenTelemetry
Collector's syslog receiver, Fluent Bit's in_syslog), the sender, the
output count and the settle are lab/sweeplib's: the bench adds syslogrx's
--format/--no-trace, the drain-only reference (build/drainrx) and the CPU
split into user and system time.

Where each number comes from (nothing is estimated):
  sent, achieved_rate  the sender's own report
  kernel_drops         syslogrx: its summary (its tracer; with --no-trace the
                       kernel's SO_MEMINFO counter); others: udpdrops --pid
                       --port running alongside (same tracer)
  written              syslogrx: its summary; drainrx: datagrams it read;
                       peers: lines of the output file with the sender's marker;
                       the collector: the records it accepted (its own counter)
  user/sys ticks       /proc/PID/stat utime/stime, before the load and after
                       the settle (the receiver is fresh, so every message it
                       received was handled inside that window)
  peak_rss_kb          VmHWM (/proc/PID/status) after the load
"""
import json
import os
import shutil
import signal
import time

from sweeplib import cells, fluentbit, peers

from . import report

BUILD = peers.BUILD
HZ = os.sysconf("SC_CLK_TCK")
RCVBUF = 32 << 20      # EFFECTIVE bytes for every receiver (peers get half: the kernel doubles)


class SyslogrxBench(peers.Syslogrx):
    """sweeplib's syslogrx plus the output format and the tracer switch."""

    def argv(self):
        argv = super().argv() + ["--format", self.spec.get("format", "raw")]
        if not self.spec.get("trace", True):
            argv.append("--no-trace")
        return argv


class DrainRx(peers.Receiver):
    """build/drainrx: recvmmsg into a buffer, count, nothing else; with
    spec["write"], also one writev a batch into the output file (--write).
    Its JSON report (stdout) is written when SIGTERM stops it."""

    name = "drainrx"

    def __init__(self, spec, port, workdir):
        super().__init__(spec, port, workdir)
        self.report_path = os.path.join(workdir, "drainrx.json")

    def argv(self):
        # --duration bounds it should the bench die without stopping it.
        return [os.path.join(BUILD, "drainrx"), "--listen", f"127.0.0.1:{self.port}",
                "--sockets", str(self.spec["sockets"]),
                # drainrx passes its value to SO_RCVBUFFORCE, which the kernel doubles
                "--rcvbuf", str(self.spec["rcvbuf"] // 2),
                "--duration", str(int(self.spec["duration"] * 3 + 120)), "--json"] + \
            (["--write", self.output] if self.spec.get("write") else [])

    def start(self):
        import subprocess
        self._err = open(self.stderr_path, "wb")
        self._out = open(self.report_path, "wb")
        self.p = subprocess.Popen(self.argv(), stdout=self._out, stderr=self._err,
                                  start_new_session=True)

    def stop(self, timeout=30.0):
        try:
            return super().stop(timeout)
        finally:
            self._out.close()

    def result(self):
        with open(self.report_path) as f:
            return json.load(f)


# name -> (class, the receiver's spec for sweeplib's peers)
def receiver_spec(name):
    base = {"rcvbuf": RCVBUF, "window": 0, "cost_ns": 0}
    if name.startswith("syslogrx"):
        return SyslogrxBench, dict(base, receiver="syslogrx", mode="random", sockets=4,
                                   threads=2, format="json" if "json" in name else "raw",
                                   trace="--no-trace" not in name)
    if name == report.DRAINRX:
        return DrainRx, dict(base, receiver="drainrx", sockets=1, threads=1)
    if name == report.SYSLOG_NG:
        return peers.SyslogNg, dict(base, receiver="syslog-ng", mode="hash", sockets=4,
                                    threads=2)
    if name == report.RSYSLOG:
        return peers.Rsyslog, dict(base, receiver="rsyslog", mode="hash", sockets=1, threads=2)
    if name == report.OTELCOL:
        return peers.OtelcolSyslog, dict(base, receiver="otelcol", mode="hash", sockets=1,
                                         threads=1)
    if name in report.FLUENTBIT_NAMES:
        n = 2 if name == fluentbit.SHARE_PORT else 1
        return fluentbit.FluentBit, dict(base, receiver="fluent-bit", config=name, mode="hash",
                                         sockets=n, threads=n)
    raise ValueError(f"unknown receiver {name}")


def udpdrops_total(report_obj):
    total = 0
    for s in report_obj.get("sockets", []):
        total += (s.get("drops") or {}).get("total", 0)
    rcvbufs = [s["rcvbuf"] for s in report_obj.get("sockets", []) if s.get("rcvbuf") is not None]
    return total, (min(rcvbufs) if rcvbufs else None)


def syslogrx_counts(t, summary):
    tot = summary["totals"]
    t["received"] = tot["received"]
    t["written"] = tot["written"]
    kd = tot.get("kernel_drops")
    if kd is not None:
        t["kernel_drops"] = kd["total"]
    else:   # --no-trace: the kernel's own per-socket counter
        t["kernel_drops"] = sum(s.get("so_meminfo_drops") or 0 for s in summary["sockets"])
    t["rcvbuf_effective"] = min(s["rcvbuf"] for s in summary["sockets"])


def discard(rx):
    """Kills a trial's receiver, closes its pipes and deletes its output (it
    can be GBs: the configs and logs are kept, not the messages)."""
    rx.kill()
    for fh in ("_err", "_out"):
        try:
            getattr(rx, fh).close()
        except AttributeError:
            pass
    if os.path.exists(rx.output):
        os.unlink(rx.output)


def run_trial(spec, workdir, log=None):
    """spec: phase, receiver (a report name), sender, rate, duration, size and,
    to override the receiver's layout, sockets/threads. Returns the trial."""
    cls, rspec = receiver_spec(spec["receiver"])
    for k in ("sockets", "threads"):
        if spec.get(k):
            rspec[k] = spec[k]
    rspec["duration"] = spec["duration"]
    t = {k: spec.get(k) for k in ("phase", "receiver", "sender", "size", "rate", "duration")}
    t.update(sockets=rspec["sockets"], threads=rspec["threads"], error="", hz=HZ)
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    port = cells.free_udp_port()
    rx = cls(rspec, port, workdir)
    drops = None
    try:
        rx.start()
        rx.wait_ready()
        if not isinstance(rx, peers.Syslogrx):
            drops = cells.JsonLines([os.path.join(BUILD, "udpdrops"), "--pid", str(rx.pid),
                                     "--port", str(port), "--json", "--interval", "0.25"],
                                    "udpdrops", "ready")
            drops.wait_ready()
        c0 = peers.proc_cpu_split(rx.pid)
        t0 = time.monotonic()
        sent = cells.run_sender(spec, port)
        cells.settle(rx, port)
        c1 = peers.proc_cpu_split(rx.pid)
        t1 = time.monotonic()
        t["peak_rss_kb"] = peers.proc_hwm_kb(rx.pid)
        if c0 is None or c1 is None:
            raise cells.CellError(f"{rx.name} exited during the load: "
                                  f"{rx.stderr_text().strip()[-300:]}")
        t["user_ticks"], t["sys_ticks"] = c1[0] - c0[0], c1[1] - c0[1]
        t["cpu_pct"] = round((t["user_ticks"] + t["sys_ticks"]) / HZ / (t1 - t0) * 100, 1)
        # every datagram, end markers included: what written and drops add up to
        t["sent"], t["achieved_rate"] = sent["datagrams"], sent["achieved_rate"]
        if drops:
            t["kernel_drops"], t["rcvbuf_effective"] = udpdrops_total(
                drops.wait_line_after(time.time()))
            drops.stop(signal.SIGINT)
            drops = None
        accepted = rx.accepted()
        rc = rx.stop()
        if isinstance(rx, peers.Syslogrx):
            if rc != 0:
                raise cells.CellError(f"syslogrx exited with {rc}: "
                                      f"{rx.stderr_text().strip()[-300:]}")
            with open(rx.summary_path) as f:
                syslogrx_counts(t, json.load(f))
        elif isinstance(rx, DrainRx):
            if rc != 0:
                raise cells.CellError(f"drainrx exited with {rc}: "
                                      f"{rx.stderr_text().strip()[-300:]}")
            res = rx.result()
            t["received"] = t["written"] = res["received"]
            own = sum(s.get("drops", 0) for s in res.get("per_socket", []))
            t["kernel_drops"] = max(t["kernel_drops"], own)
        elif accepted is not None:
            t["received"] = t["written"] = accepted
        else:
            t["written"], _ = cells.count_output(rx.output, spec["sender"])
            t["received"] = t["written"]
        report.finish_trial(t)
    except (cells.CellError, peers.ReceiverError, OSError, KeyError, ValueError) as e:
        t["error"] = str(e).replace("\n", " ")[:300]
        if log:
            log(f"{spec['receiver']} @ {spec['rate']}/s: {t['error']}")
    finally:
        if drops:
            drops.stop()
        discard(rx)
    return t
