# SPDX-License-Identifier: MIT
"""One cell of the sweep: a fresh receiver on a fresh loopback port, the load
from the sender, a settle, a stop, and what each part measured.

Where each number comes from (nothing is estimated):
  sent, achieved_rate  the sender's own report (sysloggen --json summary,
                       loggen's "average rate" line)
  kernel_drops         syslogrx: its summary (its tracer); peers: udpdrops
                       --pid --port --json running alongside (same tracer)
  written, delivered   lines of the output file carrying the sender's marker,
                       and the distinct sequence numbers among them; the
                       OpenTelemetry Collector (no file output): the records
                       its syslog receiver accepted, its own counter, for both
  cpu_pct              receiver's utime+stime (/proc/PID/stat) over the load
  peak_rss_kb          VmHWM (/proc/PID/status) at the end
"""
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time

from support.ports import free_udp_port  # noqa: F401 (the cells' and the bench's port)

from . import peers

BUILD = peers.BUILD
HZ = os.sysconf("SC_CLK_TCK")

SYSLOGGEN_SEQ = re.compile(rb"seq@32473 run=\S+ (flow=\d+ seq=\d+)")
SYSLOGGEN_END = re.compile(rb"seq@32473 run=\S+ flow=\d+ end=\d+ ")
LOGGEN_MARK = re.compile(rb"seq: (\d+),")


class CellError(Exception):
    pass


class JsonLines:
    """A helper process writing one JSON object per line on stdout; keeps them."""

    def __init__(self, argv, name, ready_text):
        self.name = name
        self.lines = []
        self.err_lines = []
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True)
        self._ready = threading.Event()
        self._ready_text = ready_text
        self._t_out = threading.Thread(target=self._read_out, daemon=True)
        self._t_err = threading.Thread(target=self._read_err, daemon=True)
        self._t_out.start()
        self._t_err.start()

    def _read_out(self):
        for line in self.p.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def _read_err(self):
        for line in self.p.stderr:
            text = line.decode(errors="replace").rstrip()
            self.err_lines.append(text)
            if self._ready_text in text:
                self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout=15.0):
        if not self._ready.wait(timeout) or self.p.poll() is not None:
            raise CellError(f"{self.name} did not start: {' '.join(self.err_lines)[-400:]}")

    def wait_line_after(self, t, timeout=5.0):
        """The first report made after wall-clock time t."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for obj in reversed(self.lines):
                if obj.get("time", 0) > t:
                    return obj
            time.sleep(0.05)
        raise CellError(f"{self.name} made no report after the load")

    def stop(self, sig=signal.SIGTERM, timeout=15.0):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self._t_out.join(5)
        self._t_err.join(5)
        return self.p.returncode


def run_sender(spec, port):
    """Offers spec["rate"] msgs/s for spec["duration"] s. Beyond what the
    sender can do it would run longer to send rate x duration: it is stopped
    (SIGINT) after the duration plus a margin, and its report says what it did."""
    dur = spec["duration"]
    if spec["sender"] == "sysloggen":
        argv = [os.path.join(BUILD, "sysloggen"), "--target", f"127.0.0.1:{port}",
                "--rate", str(spec["rate"]), "--duration", str(dur), "--size", str(spec["size"]),
                "--sources", str(spec.get("sources", 1)),
                "--threads", str(spec.get("sender_threads", 1)), "--json"]
    else:
        # SC4S's sender: --no-framing, one connection (one flow)
        argv = ["loggen", "--inet", "--dgram", "--no-framing", "--rate", str(spec["rate"]),
                "--interval", str(int(max(1, round(dur)))), "--size", str(spec["size"]),
                "--active-connections", "1", "127.0.0.1", str(port)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, preexec_fn=peers.niceness(spec))
    try:
        out, err = p.communicate(timeout=dur * 1.1 + 1.5)
    except KeyboardInterrupt:
        p.kill()    # its own session: Ctrl-C did not reach it
        p.wait()
        raise
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
    if spec["sender"] == "sysloggen":
        summary = None
        for line in out.decode(errors="replace").splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if obj.get("type") == "summary":
                summary = obj
        if not summary:
            raise CellError(f"sysloggen gave no summary (exit {p.returncode}): "
                            f"{err.decode(errors='replace').strip()[-300:]}")
        # sent: the sequenced messages; datagrams adds the flows' end markers
        return {"sent": summary["sent"], "achieved_rate": summary["achieved_rate"],
                "run_id": summary["run_id"],
                "datagrams": summary.get("datagrams", summary["sent"])}
    m = re.search(r"average rate = ([\d.]+) msg/sec, count=(\d+)", err.decode(errors="replace"))
    if not m:
        raise CellError(f"loggen gave no report (exit {p.returncode}): "
                        f"{err.decode(errors='replace').strip()[-300:]}")
    return {"sent": int(m.group(2)), "achieved_rate": float(m.group(1)), "run_id": None,
            "datagrams": int(m.group(2))}


def count_output(path, sender, ends=False):
    """(marker lines, distinct sequence numbers) in the receiver's output
    file, and with ends=True the end markers among those lines (sysloggen's).
    Each cell has a fresh receiver and one sender run: every marker in the
    file is that run's. Scanned with C-speed bytes.count and findall: the
    file can be GBs."""
    if not os.path.exists(path):
        return (0, 0, 0) if ends else (0, 0)
    with open(path, "rb") as f:
        data = f.read()
    n_end = 0
    if sender == "sysloggen":
        lines = data.count(b"seq@32473 run=")
        distinct = len(set(SYSLOGGEN_SEQ.findall(data)))
        if ends:
            n_end = len(SYSLOGGEN_END.findall(data))
    else:
        found = LOGGEN_MARK.findall(data)
        lines, distinct = len(found), len(set(found))
    del data
    return (lines, distinct, n_end) if ends else (lines, distinct)


def settle(rx, port, timeout=10.0):
    """Waits until the port's queues are empty and the output stops growing."""
    deadline = time.monotonic() + timeout
    last_size, stable_since = -1, None
    while time.monotonic() < deadline:
        size = rx.progress()
        now = time.monotonic()
        if peers.udp_queued(port) == 0 and size == last_size:
            if stable_since is None:
                stable_since = now
            elif now - stable_since >= 0.4:
                return
        else:
            stable_since = None
        last_size = size
        time.sleep(0.1)


def reasons_text(d):
    return ";".join(f"{k}:{v}" for k, v in sorted(d.items()) if k != "total" and v)


def run_cell(spec, workdir, log=None):
    """Runs one cell; returns the cell dict (with "error" set when it failed)."""
    cell = {k: spec.get(k) for k in ("row", "receiver", "mode", "sockets", "threads", "rcvbuf",
                                     "window", "cost_ns", "size", "duration", "repeat",
                                     "sender", "rate")}
    cell["error"] = ""
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    port = free_udp_port()
    rx = peers.make_receiver(spec, port, workdir)
    drops = balance = None
    try:
        rx.start()
        rx.wait_ready()
        if spec["receiver"] != "syslogrx":
            drops = JsonLines([os.path.join(BUILD, "udpdrops"), "--pid", str(rx.pid), "--port",
                               str(port), "--json", "--interval", "0.25"], "udpdrops", "ready")
            drops.wait_ready()
        if spec["receiver"] == "syslog-ng-ebpf":
            balance = JsonLines([os.path.join(BUILD, "udpbalance"), "--pid", str(rx.pid),
                                 "--port", str(port), "--policy", spec["mode"], "--json",
                                 "--interval", "1"], "udpbalance", "attached")
            balance.wait_ready()
        ticks0, t0 = peers.proc_cpu_ticks(rx.pid), time.monotonic()
        sent = run_sender(spec, port)
        settle(rx, port)
        ticks1, t1 = peers.proc_cpu_ticks(rx.pid), time.monotonic()
        cell["peak_rss_kb"] = peers.proc_hwm_kb(rx.pid)
        if ticks0 is not None and ticks1 is not None:
            cell["cpu_pct"] = round((ticks1 - ticks0) / HZ / (t1 - t0) * 100, 1)
        cell["sent"] = sent["sent"]
        cell["achieved_rate"] = sent["achieved_rate"]
        if drops:
            report = drops.wait_line_after(time.time())
            socks = report["sockets"]
            by_reason = {}
            for s in socks:
                for k, v in (s.get("drops") or {}).items():
                    by_reason[k] = by_reason.get(k, 0) + v
            cell["kernel_drops"] = by_reason.get("total", 0)
            cell["drops_by_reason"] = reasons_text(by_reason)
            rcvbufs = [s["rcvbuf"] for s in socks if s.get("rcvbuf") is not None]
            cell["rcvbuf_effective"] = min(rcvbufs) if rcvbufs else None
            drops.stop(signal.SIGINT)
            drops = None
        if balance:
            balance.stop()
            final = [o for o in balance.lines if o.get("final")]
            if not final:
                raise CellError("udpbalance made no final report: "
                                + " ".join(balance.err_lines)[-300:])
            steered = [s["steered"] for s in final[-1]["sockets"]]
            cell["steered_min"], cell["steered_max"] = min(steered), max(steered)
            cell["selection_failures"] = final[-1]["selection_failures"]
            balance = None
        accepted = rx.accepted()
        rc = rx.stop()
        if rc not in (0, None) and spec["receiver"] == "syslogrx":
            raise CellError(f"syslogrx exited with {rc}: {rx.stderr_text().strip()[-300:]}")
        if accepted is not None:
            # no sequence check here: what it accepted counts as delivered
            cell["written"] = cell["delivered"] = accepted
            cell["end_markers"] = 0
        elif spec["receiver"] != "syslogrx":
            cell["written"], cell["delivered"], cell["end_markers"] = count_output(
                rx.output, spec["sender"], ends=True)
        if spec["receiver"] == "syslogrx":
            with open(rx.summary_path) as f:
                summary = json.load(f)
            tot = summary["totals"]
            cell["received"] = tot["received"]
            cell["written"] = tot["written"]
            kd = tot.get("kernel_drops") or {}
            cell["kernel_drops"] = kd.get("total")
            cell["drops_by_reason"] = reasons_text(kd)
            cell["rcvbuf_effective"] = min(s["rcvbuf"] for s in summary["sockets"])
            steered = [s["steered"] for s in summary["sockets"] if s.get("steered") is not None]
            if steered:
                cell["steered_min"], cell["steered_max"] = min(steered), max(steered)
            cell["selection_failures"] = tot.get("selection_failures")
            loss = summary.get("loss") or {}
            # Its own sequence tracking (sysloggen's and loggen's markers),
            # over what it received: the output may be null.
            cell["delivered"] = loss["sequenced"] - loss.get("duplicates", 0)
            cell["end_markers"] = loss.get("end_markers", 0)
        else:
            cell["received"] = cell["written"]
        n = cell["sent"]
        cell["seq_missing"] = max(0, n - cell["delivered"])
        if n and cell.get("kernel_drops") is not None:
            cell["drop_pct"] = round(100.0 * cell["kernel_drops"] / n, 3)
        cell["lost_pct"] = round(100.0 * cell["seq_missing"] / n, 3) if n else None
    except (CellError, peers.ReceiverError, OSError, KeyError, ValueError) as e:
        cell["error"] = str(e).replace("\n", " ")[:300]
        if log:
            log(f"cell {spec['row']} @ {spec['rate']}: {cell['error']}")
    finally:
        for helper in (balance, drops):
            if helper:
                helper.stop()
        rx.kill()
        try:
            rx._err.close()
        except AttributeError:
            pass
        # The output can be GBs: keep the configs and logs, not the messages.
        if os.path.exists(rx.output):
            os.unlink(rx.output)
    return cell


def sender_ceiling(duration, size, sender="sysloggen"):
    """The sender's most here: --rate 0 into syslogrx draining to null."""
    port = free_udp_port()
    rx = subprocess.Popen([os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{port}",
                           "--sockets", "4", "--threads", "2", "--balance", "random",
                           "--no-trace", "--output", "null"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          start_new_session=True)
    try:
        line = rx.stderr.readline().decode(errors="replace")
        if "ready on" not in line:
            raise CellError(f"syslogrx did not start for the ceiling run: {line.strip()}")
        spec = {"sender": sender, "rate": 0, "duration": duration, "size": size}
        if sender == "loggen":
            spec["rate"] = 10_000_000
        return run_sender(spec, port)["achieved_rate"]
    finally:
        rx.send_signal(signal.SIGTERM)
        try:
            rx.wait(timeout=15)
        except subprocess.TimeoutExpired:
            rx.kill()
            rx.wait()
