# SPDX-License-Identifier: MIT
"""The fault matrix: syslogrx forwarding through Toxiproxy to a real
destination (syslog-ng over TCP or TLS, the OpenTelemetry Collector, a Kafka
broker), a fault set on the proxy under a sequenced load, then a stop in the
middle of the fault (SIGTERM, or kill -9 and a restart), the fault removed
and the books closed by sequence number.

    with World(tmpdir) as w:
        r = run_cell(w, "down", "tcp", "spill")      # a Cell: r.ok, r.why, r.row()

One cell checks what docs/outputs.md#faults promises:
- syslogrx is ready within START_BOUND s (the fault on, or at start);
- /readyz answers 503 (with a disk buffer riding out the outage: 200 naming
  it) and the metrics say the output is down or stalled
  within --stall-timeout + 2 s (for the faults that stop delivery);
- SIGTERM returns, exit 0, within --stop-timeout + 2 s;
- every sequence number sent is delivered or counted (kernel drop,
  abandoned, discarded, given up, dropped by the disk buffer): none
  unaccounted (after kill -9, which counts nothing, only with reliable,
  killed once its disk buffer has written all it received);
  with a disk buffer and SIGTERM (or reliable and kill -9), all delivered
  after a restart with the fault removed, but for what a tcp or tls output
  counted uncertain (written, and its server may have dropped it: TCP
  cannot tell, docs/outputs.md#what-tcp-cannot-know).
tests/integration/outputs/test_chaos.py runs one cell per fault, lab/chaos.py all.
"""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

from support.flows import SDATA
from support.kafka_broker import KafkaBroker
from support.netns_drop import NetnsDrop, new_net
from support.otel_collector import Collector, LogSink
from support.paths import binary
from support.ports import free_tcp_port, free_udp_port
from support.procs import read_json, sysloggen
from support.prom import http_get, parse, scrape, series
from support.reaper import outlives_the_test
from support.syslog_ng import SyslogNg
from support.tls_server import Pki, SyslogNgTls
from support.toxiproxy import Toxiproxy

SENT = 3000             # per cell, at RATE: 3 s of load
RATE = 1000
WINDOW = 500            # fills in half a second of an outage: the disk buffer spills
STALL_TIMEOUT = 3       # --stall-timeout, when syslogrx has it
STOP_TIMEOUT = 5        # --stop-timeout, when syslogrx has it
START_BOUND = 15        # a Kafka output waits up to 5 s for its brokers
SLACK = 2               # the "+ 2 s"
DRAIN_BOUND = 60        # after the fault: the restarted syslogrx empties its disk buffer

OUTPUTS = ("tcp", "tls", "otlp", "kafka")
BUFFERS = ("none", "spill", "reliable")


class SynDrop:
    """A listener on 127.0.0.1:port whose accept queue is full (backlog 0,
    one connection never accepted): the kernel drops every SYN to it, as a
    firewall's DROP rule would, and a connect() waits for its retries."""

    def __init__(self, port):
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", port))
        self.srv.listen(0)
        self.fill = socket.create_connection(("127.0.0.1", port), timeout=5)

    def close(self):
        self.fill.close()
        self.srv.close()


class Fault:
    """What is done to the proxy, and whether it stops delivery (then the
    fault must show on /readyz and in the metrics). A netns fault is done
    to the relay syslogrx then reaches the destination through (NetnsDrop,
    the destination's relay())."""

    def __init__(self, name, toxics, stops, what, at_start=False, netns=False):
        self.name, self.toxics, self.stops, self.what = name, toxics, stops, what
        self.at_start, self.netns = at_start, netns
        self.syn_drop = None

    def apply(self, proxy, relay=None):
        if relay:
            relay.drop()
        if self.name in ("down", "blackholed"):
            proxy.disable()
        if self.name == "blackholed":
            self.syn_drop = SynDrop(proxy.port)
        for stream, kind, attrs in self.toxics:
            proxy.toxic(kind, stream, **attrs)

    def remove(self, proxy, relay=None):
        if relay:
            relay.undrop()
        if self.syn_drop:
            self.syn_drop.close()
            self.syn_drop = None
        proxy.clear()
        proxy.enable()


FAULTS = {f.name: f for f in (
    Fault("down", [], True, "the proxy disabled: connects refused, connections cut"),
    Fault("blackholed", [], True,
          "from the start: every SYN dropped (a full accept queue), as by a firewall's DROP",
          at_start=True),
    Fault("dropped", [], True,
          "in the middle of the load: a DROP rule in the destination's network namespace, "
          "SYNs and data vanish", netns=True),
    Fault("silent", [("upstream", "timeout", {"timeout": 0}),
                     ("downstream", "timeout", {"timeout": 0})], True,
          "from the start: connects accepted, then nothing passes either way and nothing closes",
          at_start=True),
    Fault("latency", [("upstream", "latency", {"latency": 1000}),
                      ("downstream", "latency", {"latency": 1000})], False,
          "1 s added each way"),
    Fault("bandwidth", [("upstream", "bandwidth", {"rate": 1})], False,
          "1 KB/s toward the destination"),
    Fault("timeout", [("upstream", "timeout", {"timeout": 2000})], True,
          "nothing passes; each connection closed after 2 s"),
    Fault("slow_close", [("downstream", "slow_close", {"delay": 60000})], False,
          "the destination's close reaches syslogrx 60 s late"),
    Fault("reset_peer", [("upstream", "reset_peer", {"timeout": 500})], False,
          "each connection reset (RST) 0.5 s after it opens"),
    Fault("limit_data", [("upstream", "limit_data", {"bytes": 10007})], False,
          "each connection closed after 10,007 bytes: mid-frame"),
)}


def rx_flags():
    """The fault flags this syslogrx has (--stall-timeout, --stop-timeout)."""
    out = subprocess.run([binary("syslogrx"), "--help"], capture_output=True, text=True,
                         timeout=30).stdout
    return {f for f in ("--stall-timeout", "--stop-timeout") if f in out}


# ---- destinations: each behind its own proxy, started once per World ------------------

class Dest:
    """A destination syslogrx reaches through its proxy; relay() is the
    netns faults' way to it: a relay in a network namespace of the cell's
    own to the proxy (deleted with the cell, as a test's must be)."""

    def relay(self):
        return NetnsDrop("chaos", self.proxy.port)

    def delivering(self, run, bound):
        """Some of run has arrived, within bound s: the fault may start."""
        return wait_for(lambda: distinct(delivered(self, run)) > 0, bound)


class SyslogDest(Dest):
    """Debian's syslog-ng, over TCP (${SDATA} ${MSG}) or TLS ($RAWMSG)."""

    def __init__(self, w, tls):
        self.up = free_tcp_port()
        if tls:
            self.pki = Pki(os.path.join(w.dir, "pki"))
            self.server = SyslogNgTls(w.dir, self.pki, port=self.up)
        else:
            self.server = SyslogNg(w.dir, self.up)
        self.server.start()
        outlives_the_test(self.server.p.pid)
        self.proxy = w.tp.proxy("tls" if tls else "tcp", self.up)
        self.kind = "tls" if tls else "tcp"
        self.offset = 0

    def args(self):
        a = ["--output", f"{self.kind}:127.0.0.1:{self.proxy.port}", "--format", "rfc5424"]
        return a + (["--tls-ca", self.pki.path("ca.pem")] if self.kind == "tls" else [])

    def begin(self):
        self.offset = os.path.getsize(self.server.out) if os.path.exists(self.server.out) else 0

    def lines(self):
        if not os.path.exists(self.server.out):
            return []
        with open(self.server.out, "rb") as f:
            f.seek(self.offset)
            return f.read().splitlines()

    def close(self):
        self.server.stop()


class OtlpDest(Dest):
    """The OpenTelemetry Collector, forwarding to a sink that decodes."""

    def __init__(self, w):
        self.sink = LogSink()
        self.col = Collector(forward_to=self.sink.url)
        self.col.start()
        outlives_the_test(self.col.proc.pid)
        self.proxy = w.tp.proxy("otlp", self.col.port)
        self.first = 0

    def args(self):
        return ["--output", f"otlp:http://127.0.0.1:{self.proxy.port}/v1/logs"]

    def begin(self):
        self.first = len(self.sink.records())

    def lines(self):
        out = []
        for r in self.sink.records()[self.first:]:
            sd = r["attributes"].get("structured_data", {}).get("seq@32473")
            if sd:
                out.append(b'run="%s" flow="%s" seq="%s"' % (
                    sd["run"].encode(), sd["flow"].encode(), sd["seq"].encode()))
        return out

    def close(self):
        self.col.close()
        self.sink.close()


class KafkaDest(Dest):
    """A Kafka broker whose advertised address is the proxy's: every request
    after the bootstrap goes through the fault too. Its clients go where
    the metadata sends them, so a relay in a netns must be where a listener
    of the broker's own advertises: relay() is made again for each netns
    cell at one address and port, to the broker's second listener, whose
    metadata names the relay (the proxy is then not on the way)."""
    TOPIC = "chaos"

    def __init__(self, w):
        port = free_tcp_port()
        self.net, self.relay_port = new_net(), free_tcp_port()
        self.broker = KafkaBroker(advertised_port=port, outlives_tests=True,
                                  workdir=os.path.join(w.dir, "kafka"),
                                  relayed=(f"{self.net}.2", self.relay_port))
        os.makedirs(self.broker.dir, exist_ok=True)
        self.proxy = w.tp.proxy("kafka", self.broker.port, port=port)
        self.broker.start()
        self.broker.create_topic(self.TOPIC, 1)

    def relay(self):
        return NetnsDrop("chaos", self.broker.relayed_port, self.net, self.relay_port)

    def args(self):
        return ["--output", f"kafka:127.0.0.1:{self.proxy.port}/{self.TOPIC}", "--format",
                "rfc5424"]

    def begin(self):
        # nothing is produced now: kcat -e ends at once
        self.offset = self.broker.consume(self.TOPIC, fmt="x").count(b"x")

    def delivering(self, run, bound):
        """kcat -e reads on while records keep coming (to the load's end, and
        a fault "in the middle of the load" would come after it): the first
        record past the cell's start, one partition, is enough."""
        try:
            r = subprocess.run(["kcat", "-C", "-b", self.broker.bootstrap, "-t", self.TOPIC,
                                "-p", "0", "-o", str(self.offset), "-c", "1", "-q", "-f",
                                "%s\\n"], capture_output=True, timeout=bound)
        except subprocess.TimeoutExpired:
            return False
        m = SDATA.search(r.stdout)
        return bool(m) and m.group(1).decode() == run

    def lines(self):
        return self.broker.consume(self.TOPIC, fmt="%s\\n").splitlines()

    def close(self):
        self.broker.close()


class World:
    """Toxiproxy and the destinations, started when a cell first needs them
    and stopped on every path by close()."""

    def __init__(self, folder):
        self.dir = str(folder)
        self.tp = Toxiproxy()
        outlives_the_test(self.tp.p.pid)
        self.dests = {}
        self.flags = rx_flags()
        self.cells = 0

    def dest(self, output):
        if output not in self.dests:
            self.dests[output] = {"tcp": lambda: SyslogDest(self, False),
                                  "tls": lambda: SyslogDest(self, True),
                                  "otlp": lambda: OtlpDest(self),
                                  "kafka": lambda: KafkaDest(self)}[output]()
        return self.dests[output]

    def close(self):
        for d in self.dests.values():
            d.close()
        self.tp.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- syslogrx, watched ---------------------------------------------------------------

class Rx:
    """syslogrx with its stderr read by a thread: ready within a bound, a
    stop timed, every line kept."""

    def __init__(self, folder, args, bound):
        self.summary = os.path.join(folder, "summary.json")
        self.port, self.mport = free_udp_port(), free_tcp_port()
        self.lines = []
        t0 = time.monotonic()
        self.p = subprocess.Popen(
            [binary("syslogrx"), "--listen", f"127.0.0.1:{self.port}", "--metrics",
             str(self.mport), "--summary", self.summary, "--sequences"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.ready_s = None
        while time.monotonic() - t0 < bound and self.p.poll() is None:
            if any("ready on" in l for l in self.lines):
                self.ready_s = time.monotonic() - t0
                break
            time.sleep(0.02)

    def _read(self):
        for raw in self.p.stderr:
            self.lines.append(raw.decode(errors="replace").rstrip("\n"))

    def metrics(self):
        try:
            return parse(scrape(self.mport))
        except OSError:
            return {}

    def total(self, m, name):
        return sum(series(m, name).values())

    def stop(self, sig, bound):
        """Sends sig; (seconds to exit or None past bound, exit code). Past
        the bound a second SIGTERM, then SIGKILL: a cell never hangs."""
        t0 = time.monotonic()
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            self.p.wait(timeout=bound)
            took = time.monotonic() - t0
        except subprocess.TimeoutExpired:
            took = None
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.reader.join(timeout=10)
        return took, self.p.returncode

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def summary_json(self):
        return read_json(self.summary) if os.path.exists(self.summary) else None


def counted(s):
    """What a summary counts as lost for good or maybe lost: {reason:
    messages}. These are apart (docs/metrics.md's books); a Kafka or OTLP
    output's undelivered and failed are among discarded and given_up, so
    not added again. A tcp or tls output's uncertain are among written:
    what the server may not have read, which TCP cannot tell."""
    if not s:
        return {}
    t = s["totals"]
    out = {"kernel_drops": (t["kernel_drops"] or {}).get("total") or 0,
           "abandoned": t.get("abandoned") or 0,
           "discarded": t.get("discarded") or 0,
           "given_up": t.get("given_up") or 0,
           "uncertain": s.get("output_uncertain") or 0}
    if s.get("disk_buffer"):
        out["disk_dropped"] = s["disk_buffer"].get("dropped") or 0
        # records a kill -9 tore, counted by the next run
        out["disk_corrupt"] = s["disk_buffer"].get("corrupt_msgs") or 0
    return {k: v for k, v in out.items() if v}


class Cell:
    def __init__(self, fault, output, buffer, kill):
        self.fault, self.output, self.buffer, self.kill = fault, output, buffer, kill
        self.why = []
        self.start_s = self.restart_s = self.readyz_s = self.metric_s = self.stop_s = None
        self.rc = None
        self.readyz_said = self.log = ""
        self.sent = self.delivered = self.dups = 0
        self.limit = 0      # lost and counted nowhere, the cell being in TCP_LIMIT
        self.limit_said = []    # what else TCP_LIMIT's cell could not show
        self.counts = {}

    @property
    def ok(self):
        return not self.why

    @property
    def result(self):
        return "FAIL" if self.why else "LIMIT" if self.limit or self.limit_said else "pass"

    @property
    def lost(self):
        return self.sent - self.delivered

    @property
    def unaccounted(self):
        return max(0, self.lost - sum(self.counts.values()))

    @classmethod
    def from_row(cls, r):
        """A Cell again from its row (lab/chaos.py --tables-from)."""
        c = cls(r["fault"], r["output"], r["buffer"], r["stop"] == "kill -9")
        for k in ("why", "start_s", "restart_s", "readyz_s", "metric_s", "stop_s", "rc", "sent",
                  "delivered"):
            setattr(c, k, r[k])
        c.dups, c.counts, c.readyz_said, c.log = r["duplicates"], r["counted"], r["readyz"], r["log"]
        c.limit, c.limit_said = r.get("limit", 0), r.get("limit_said", [])
        return c

    def row(self):
        """The cell as a dict, for lab/chaos.py's table and its JSON."""
        return {"fault": self.fault, "output": self.output, "buffer": self.buffer,
                "stop": "kill -9" if self.kill else "SIGTERM", "ok": self.ok, "why": self.why,
                "start_s": self.start_s, "restart_s": self.restart_s, "readyz_s": self.readyz_s,
                "metric_s": self.metric_s, "stop_s": self.stop_s, "rc": self.rc,
                "sent": self.sent, "delivered": self.delivered, "duplicates": self.dups,
                "lost": self.lost, "counted": self.counts, "unaccounted": self.unaccounted,
                "limit": self.limit, "limit_said": self.limit_said, "result": self.result,
                "readyz": self.readyz_said, "log": self.log}


def fault_shown(rx, m):
    """The metrics say the output does not deliver: output_up 0, or stalled."""
    up = series(m, "syslogrx_output_up")
    stalled = series(m, "syslogrx_output_stalled")
    return any(v == 0 for v in up.values()) or any(v == 1 for v in stalled.values())


def watch_fault(cell, rx, t0, bound):
    """Until both /readyz and the metrics show the fault, or bound s."""
    while time.monotonic() - t0 < bound and rx.p.poll() is None:
        if cell.readyz_s is None:
            try:
                code, body = http_get(rx.mport, "/readyz")
            except OSError:
                code, body = 0, ""
            # 503; or, while a disk buffer takes the outage, ready (keep
            # sending here: nothing is lost) with the fault named
            if code == 503 or (code == 200 and "cannot reach its destination" in body):
                cell.readyz_s, cell.readyz_said = time.monotonic() - t0, body.strip()
        if cell.metric_s is None and fault_shown(rx, rx.metrics()):
            cell.metric_s = time.monotonic() - t0
        if cell.readyz_s is not None and cell.metric_s is not None:
            return
        time.sleep(0.1)


def delivered(dest, run):
    """{flow: [seq, ...]} of run at the destination, duplicates kept."""
    flows = {}
    for line in dest.lines():
        m = SDATA.search(line)
        if m and m.group(1).decode() == run:
            flows.setdefault(int(m.group(2)), []).append(int(m.group(3)))
    return flows


def distinct(flows):
    return sum(len(set(v)) for v in flows.values())


def load(port, run, out):
    """sysloggen's sequenced load, in a thread; its summary into out."""
    def send():
        out.append(sysloggen(port, "--count", SENT, "--rate", RATE, "--sources", 2,
                             "--size", 300, "--run-id", run, "--format", "rfc5424",
                             "--end-markers", 0))
    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


def wait_for(cond, bound):
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def on_disk(rx):
    """A reliable disk buffer has written (or counted dropped) every message
    read: what a kill -9 may cost is then nothing (what the workers read and
    the writer has not yet written dies with the process: docs/outputs.md,
    test_disk_buffer.py::test_reliable_kill_9_loses_exactly_what_the_writer_had_not_written)."""
    m = rx.metrics()
    return bool(m) and rx.total(m, "syslogrx_disk_buffer_written_total") + rx.total(
        m, "syslogrx_disk_buffer_dropped_total") >= rx.total(m, "syslogrx_socket_received_total")


def restart(cell, folder, args):
    """The next syslogrx on the same disk buffer, in folder/restart."""
    os.makedirs(os.path.join(folder, "restart"))
    rx = Rx(os.path.join(folder, "restart"), args, START_BOUND)
    cell.restart_s = rx.ready_s
    if rx.ready_s is None:
        cell.why.append(f"restart not ready within {START_BOUND} s: " + " | ".join(rx.lines[-3:]))
    return rx


# The cells whose loss no figure can count: a peer that takes the bytes and
# drops them, over a protocol with no acknowledgement of its own
# (docs/outputs.md#what-tcp-cannot-know). Their uncounted loss is the
# documented limit (LIMIT), not a failure, and so is the fault not shown on
# /readyz and the metrics (to syslogrx such a peer is a reader); every other
# check holds.
TCP_LIMIT = {("timeout", "tcp"), ("timeout", "tls"), ("silent", "tcp")}


def judge_shown(cell, bound):
    """/readyz and the metrics showed the fault within bound s; in a
    TCP_LIMIT cell what they cannot show (a peer that reads and drops is a
    reader: docs/outputs.md#faults) is the limit too, said as such."""
    for what, s in (("/readyz", cell.readyz_s), ("the metrics", cell.metric_s)):
        if s is None or s > bound:
            said = f"{what} did not show it within {bound} s"
            if (cell.fault, cell.output) in TCP_LIMIT:
                cell.limit_said.append(said)
            else:
                cell.why.append(said)


def judge_books(cell):
    """The books' checks, on a cell whose sent, delivered and counts are
    in: none unaccounted (TCP_LIMIT's cells: their uncounted loss is the
    limit), none lost with a disk buffer but what is counted uncertain."""
    # kill -9 counts nothing: what memory held is lost by design (reliable
    # excepted, below); its books are the restart's and the disk's
    if not cell.unaccounted or (cell.kill and cell.buffer != "reliable"):
        pass
    elif (cell.fault, cell.output) in TCP_LIMIT:
        cell.limit = cell.unaccounted
    else:
        cell.why.append(f"{cell.unaccounted} of {cell.sent} lost and counted nowhere "
                        f"(delivered {cell.delivered}, counted {cell.counts})")
    # what a tcp or tls output wrote and its server may have dropped
    # (uncertain) is past what a disk buffer can know to keep
    keeps_all = cell.buffer == "reliable" or (cell.buffer == "spill" and not cell.kill)
    if keeps_all and cell.lost > cell.counts.get("uncertain", 0) + cell.limit:
        cell.why.append(f"with a {cell.buffer} disk buffer {cell.lost} of {cell.sent} lost "
                        f"({cell.counts.get('uncertain', 0)} of them counted uncertain)")


def run_cell(w, fault_name, output, buffer, kill=False):
    """One cell of the matrix; returns its Cell (cell.ok, cell.why)."""
    fault = FAULTS[fault_name]
    cell = Cell(fault_name, output, buffer, kill)
    w.cells += 1
    run = f"{fault_name}-{output}-{buffer}-{w.cells}"
    folder = os.path.join(w.dir, run)
    os.makedirs(folder)
    dest = w.dest(output)
    dest.proxy.disable()                 # whatever an earlier cell left open is cut
    dest.proxy.enable()
    dest.begin()
    stall = "--stall-timeout" in w.flags
    stopper = "--stop-timeout" in w.flags
    args = dest.args() + ["--window", str(WINDOW), "--drain-timeout", "2"]
    # the destination in a network namespace of the cell's own: a relay
    # there (deleted with the cell, as a test's must be)
    relay = dest.relay() if fault.netns else None
    if relay:
        at = f"127.0.0.1:{dest.proxy.port}"
        args = [a.replace(at, f"{relay.addr}:{relay.port}") for a in args]
        if output == "tls":
            args += ["--tls-name", "localhost"]   # the server's certificate names 127.0.0.1
    if buffer != "none":
        args += ["--disk-buffer", os.path.join(folder, "db"), "--disk-buffer-mode", buffer]
    if stall:
        args += ["--stall-timeout", str(STALL_TIMEOUT)]
    if stopper:
        args += ["--stop-timeout", str(STOP_TIMEOUT)]
    summaries = []
    rx = rx2 = None
    try:
        if fault.at_start:
            fault.apply(dest.proxy, relay)
        rx = Rx(folder, args, START_BOUND)
        cell.start_s = rx.ready_s
        if rx.ready_s is None:
            cell.why.append(f"not ready within {START_BOUND} s: " + " | ".join(rx.lines[-3:]))
            return cell
        sent = []
        gen = load(rx.port, run, sent)
        t0 = time.monotonic()
        if not fault.at_start:
            if not dest.delivering(run, 20):
                cell.why.append("nothing delivered before the fault")
            fault.apply(dest.proxy, relay)
            t0 = time.monotonic()
        logged = len(rx.lines)
        show_bound = (STALL_TIMEOUT if stall else 0) + SLACK
        watch_fault(cell, rx, t0, show_bound + 1)
        if fault.stops:
            if not stall:
                cell.why.append("syslogrx has no --stall-timeout")
            judge_shown(cell, show_bound)
        gen.join(timeout=SENT / RATE + 30)
        cell.sent = sent[0]["sent"] if sent else 0
        # every datagram read or dropped by the kernel before the stop
        wait_for(lambda: rx.total(rx.metrics(), "syslogrx_socket_received_total")
                 + rx.total(rx.metrics(), "syslogrx_socket_kernel_drops_total") >= cell.sent, 10)
        cell.log = next((l for l in rx.lines[logged:] if "syslogrx" in l), "")
        if kill:
            if buffer == "reliable" and not wait_for(lambda: on_disk(rx), 10):
                cell.why.append("the disk buffer had not written what was received "
                                "within 10 s")
            rx.kill()
        else:
            bound = (STOP_TIMEOUT if stopper else 30) + SLACK
            cell.stop_s, cell.rc = rx.stop(signal.SIGTERM, bound)
            if not stopper:
                cell.why.append("syslogrx has no --stop-timeout")
            if cell.stop_s is None:
                cell.why.append(f"SIGTERM did not return within {bound} s")
            elif cell.rc != 0:
                cell.why.append(f"exit {cell.rc} after SIGTERM: " + " | ".join(rx.lines[-2:]))
            summaries.append(rx.summary_json())
            if summaries[-1] is None:
                cell.why.append("no summary after SIGTERM")
        if kill:
            rx2 = restart(cell, folder, args)     # the fault still on
        fault.remove(dest.proxy, relay)
        if buffer != "none" and rx2 is None:
            rx2 = restart(cell, folder, args)
        if rx2 is not None and rx2.ready_s is not None:
            def emptied():
                # what the disk held handed to the output (a TCP output's
                # last batch is acknowledged only by a later write: the
                # disk's count stays up while no new message comes)
                # (a restart that recovered nothing may not connect at all)
                m = rx2.metrics()
                recovered = rx2.total(m, "syslogrx_disk_buffer_recovered_total")
                return m and rx2.total(m, "syslogrx_window_messages") == 0 and \
                    rx2.total(m, "syslogrx_disk_buffer_replayed_total") >= recovered and \
                    not (recovered and fault_shown(rx2, m))
            if not wait_for(emptied, DRAIN_BOUND):
                m = rx2.metrics()
                held = {k: rx2.total(m, k) for k in ("syslogrx_window_messages",
                        "syslogrx_disk_buffer_recovered_total", "syslogrx_disk_buffer_replayed_total",
                        "syslogrx_output_up")}
                cell.why.append(f"the restarted syslogrx did not deliver within {DRAIN_BOUND} s: "
                                f"{held}")
            took, rc = rx2.stop(signal.SIGTERM, 30)
            if took is None or rc != 0:
                cell.why.append(f"the restarted syslogrx: stop {took}, exit {rc}")
            summaries.append(rx2.summary_json())
        # the destination's last writes (uncertain ones may come too),
        # then the books
        want = cell.sent - sum(sum(n for k, n in counted(s).items() if k != "uncertain")
                               for s in summaries)
        wait_for(lambda: distinct(delivered(dest, run)) >= want, 15)
        flows = delivered(dest, run)
        cell.delivered = distinct(flows)
        cell.dups = sum(len(v) for v in flows.values()) - cell.delivered
        for s in summaries:
            for k, v in counted(s).items():
                cell.counts[k] = cell.counts.get(k, 0) + v
        judge_books(cell)
        return cell
    finally:
        for r in (rx, rx2):
            if r is not None:
                r.kill()
        fault.remove(dest.proxy, relay)
        if relay:
            relay.close()


def table(cells):
    """The matrix as a markdown table, one row per cell."""
    def s(v):
        return "-" if v is None else f"{v:.1f}"
    rows = ["| fault | output | buffer | stop | result | ready s | readyz s | metric s | "
            "stop s | sent | delivered | lost | counted | unaccounted |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        cnt = ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items())) or "0"
        rows.append(f"| {c.fault} | {c.output} | {c.buffer} | {'kill -9' if c.kill else 'TERM'} "
                    f"| {c.result} | {s(c.start_s)} | {s(c.readyz_s)} | "
                    f"{s(c.metric_s)} | {s(c.stop_s)} | {c.sent} | {c.delivered} | {c.lost} | "
                    f"{cnt} | {c.unaccounted}{' (the limit)' if c.limit else ''} |")
    return "\n".join(rows) + "\n"


def _short(text, n):
    """text cut at a word before n characters, for a table cell."""
    text = text.replace("|", "\\|").replace("`", "'")
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " ..."


def faults_table(cells):
    """docs/outputs.md's "Faults" table: per fault and output, what syslogrx
    does (its first log line in the fault, the stop's time per buffer), what
    an operator sees (/readyz, the metrics, per buffer) and what is lost or
    counted, per buffer (SIGTERM cells; kill -9 ones are the matrix's)."""
    rows = ["| fault | output | what syslogrx does | what an operator sees | lost or counted |",
            "| --- | --- | --- | --- | --- |"]
    seen = {}
    for c in cells:
        if not c.kill:
            seen.setdefault((c.fault, c.output), []).append(c)
    for (f, o), cs in seen.items():
        does = []
        late = [c.buffer for c in cs if c.start_s is None]
        if late:
            does.append(f"not ready within {START_BOUND} s ({', '.join(late)})")
        log = next((c.log for c in cs if c.log), "")
        if log:
            does.append("logs `" + _short(re.sub(r"^(\S+ \w+ )?syslogrx: \S+: ", "", log), 100)
                        + "`")
        stops = [f"{c.buffer} {c.stop_s:.1f} s" if c.stop_s is not None else f"{c.buffer} past its bound"
                 for c in cs if c.start_s is not None]
        if stops:
            does.append("SIGTERM: " + ", ".join(stops))
        shown = [c for c in cs if c.readyz_s is not None]
        ready = next((c.readyz_said.splitlines()[0] for c in shown if c.readyz_said), "")
        sees = ("`/readyz` 503 with " + ", ".join(c.buffer for c in shown)
                + f" ({_short(ready, 70)})" if shown else "`/readyz` 200")
        if any(c.limit_said for c in cs):
            sees += " (a peer that reads and drops is a reader: [the limit of TCP]" \
                "(#what-tcp-cannot-know))"
        metric = [c.buffer for c in cs if c.metric_s is not None]
        if metric:
            sees += "; `syslogrx_output_up` 0 or `_stalled` 1 with " + ", ".join(metric)
        lost = []
        for c in cs:
            if c.start_s is None:
                continue
            cnt = ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items()))
            lost.append(f"{c.buffer}: " + (f"{c.lost} lost" if c.lost else "none lost")
                        + (f" ({cnt})" if cnt else "")
                        + (f", {c.unaccounted} counted nowhere: [the limit of TCP]"
                           "(#what-tcp-cannot-know)" if c.limit else
                           f", **{c.unaccounted} counted nowhere**" if c.unaccounted else ""))
        rows.append(f"| {f} | {o} | {'; '.join(does) or '-'} | {sees} | "
                    f"{'; '.join(lost) or '-'} |")
    return "\n".join(rows) + "\n"


def kill_table(cells):
    """docs/outputs.md's kill -9 table: per fault and output, per buffer,
    what never reached the destination once the next syslogrx (started with
    the fault still on, then the fault removed) delivered what it could,
    and what its summary counted (the killed process counts nothing: what
    its memory held is lost by design, `reliable` excepted)."""
    rows = ["| fault | output | none | spill | reliable |", "| --- | --- | --- | --- | --- |"]
    seen = {}
    for c in cells:
        if c.kill:
            seen.setdefault((c.fault, c.output), {})[c.buffer] = c
    for (f, o), by in seen.items():
        cols = []
        for b in BUFFERS:
            c = by.get(b)
            if c is None:
                cols.append("-")
                continue
            cnt = ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items()))
            cols.append(("none lost" if not c.lost else f"{c.lost} lost")
                        + (f" ({cnt})" if cnt else "")
                        + ("" if c.ok else " **FAIL**"))
        rows.append(f"| {f} | {o} | " + " | ".join(cols) + " |")
    return "\n".join(rows) + "\n"
