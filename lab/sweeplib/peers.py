# SPDX-License-Identifier: MIT
"""The receivers a cell runs: syslogrx, syslog-ng (Debian's), rsyslog (unpacked
by lab/rsyslog-setup.sh under build/rsyslog), each on loopback with its own
config under the run's directory, started fresh and stopped by pid.

Receive buffers are compared at the same EFFECTIVE size E (what SO_RCVBUF
reports): syslogrx's --rcvbuf takes E; syslog-ng's so-rcvbuf(N) and rsyslog's
rcvbufSize pass N to setsockopt, which the kernel doubles, so they get E/2.
syslog-ng 3.38 uses SO_RCVBUF, capped by net.core.rmem_max: the sweep raises
rmem_max for the run when it is too low (and restores it); rsyslog and
syslogrx use SO_RCVBUFFORCE as root. The effective size is measured anyway.
"""
import os
import re
import signal
import subprocess
import time
import urllib.request

from support.paths import BUILD, ROOT
from support.ports import free_tcp_port
from support.procnet import INODE, rx_queue, udp_rows
SYSLOG_NG = "/usr/sbin/syslog-ng"
RSYSLOG_DIR = os.path.join(BUILD, "rsyslog")
RSYSLOG_SETUP = os.path.join(ROOT, "lab", "rsyslog-setup.sh")
MULTIARCH = "x86_64-linux-gnu"

# syslog-ng's fetch limit, SC4S's default (SC4S_SOURCE_UDP_FETCH_LIMIT).
SC4S_FETCH_LIMIT = 1000


class ReceiverError(Exception):
    pass


def niceness(spec):
    """A preexec_fn raising the process's priority by spec["nice"] (e.g. -10),
    or None: the replica's emulated workers lose less to other load."""
    n = spec.get("nice")
    return (lambda: os.nice(n)) if n else None


def udp_inodes(port):
    """Inodes of the sockets bound to a local UDP port (both families)."""
    return [int(f[INODE]) for f in udp_rows(port)]


def udp_queued(port):
    """Bytes waiting in the port's socket queues (rx_queue), summed."""
    return sum(rx_queue(f) for f in udp_rows(port))


def proc_cpu_split(pid):
    """(utime, stime) of pid, all threads, in clock ticks; None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[11]), int(fields[12])


def proc_cpu_ticks(pid):
    """utime + stime of pid (all threads), in clock ticks; None if gone."""
    split = proc_cpu_split(pid)
    return None if split is None else sum(split)


def proc_hwm_kb(pid):
    """VmHWM (peak RSS) of pid in kB; None if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Receiver:
    """A receiver process: start(), wait_ready(), pid, stop()."""

    name = "?"

    def __init__(self, spec, port, workdir):
        self.spec = spec
        self.port = port
        self.workdir = workdir
        self.output = os.path.join(workdir, "out.log")
        self.stderr_path = os.path.join(workdir, f"{self.name}.stderr")
        self.p = None

    @property
    def pid(self):
        return self.p.pid

    def argv(self):
        raise NotImplementedError

    def env(self):
        return None

    def start(self):
        self.prepare()
        self._err = open(self.stderr_path, "wb")
        self.p = subprocess.Popen(self.argv(), stdout=subprocess.DEVNULL, stderr=self._err,
                                  env=self.env(), start_new_session=True,
                                  preexec_fn=niceness(self.spec))

    def prepare(self):
        pass

    def progress(self):
        """A figure that grows while the receiver still hands messages on (the
        output file's size): settle() waits for it to stop."""
        return os.path.getsize(self.output) if os.path.exists(self.output) else 0

    def accepted(self):
        """Messages handed on, for a receiver that writes no output file
        (None: count the output file's lines instead)."""
        return None

    def stderr_text(self):
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_ready(self, timeout=15.0):
        """Until all its sockets are bound (or it has said it is ready)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise ReceiverError(f"{self.name} exited with {self.p.returncode} before it was "
                                    f"ready: {self.stderr_text().strip()[-500:]}")
            if self.ready():
                return
            time.sleep(0.02)
        raise ReceiverError(f"{self.name} was not ready within {timeout:.0f}s: "
                            f"{self.stderr_text().strip()[-500:]}")

    def ready(self):
        return len(udp_inodes(self.port)) >= self.spec["sockets"]

    def stop(self, timeout=30.0):
        if self.p is None:
            return None
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise ReceiverError(f"{self.name} did not stop within {timeout:.0f}s of SIGTERM")
        finally:
            self._err.close()
        return self.p.returncode

    def kill(self):
        if self.p is not None and self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class Syslogrx(Receiver):
    name = "syslogrx"

    def __init__(self, spec, port, workdir):
        super().__init__(spec, port, workdir)
        self.summary_path = os.path.join(workdir, "summary.json")

    def argv(self):
        s = self.spec
        argv = [os.path.join(BUILD, "syslogrx"), "--listen", f"127.0.0.1:{self.port}",
                "--sockets", str(s["sockets"]), "--threads", str(s["threads"]),
                "--balance", s["mode"],
                "--output", "null" if s.get("output") == "null" else f"file:{self.output}",
                "--summary", self.summary_path,
                # cells count delivered messages by its sequence accounting
                # (the output may be null): lab-only, asked for
                "--sequences"]
        if s["rcvbuf"]:
            argv += ["--rcvbuf", str(s["rcvbuf"])]
        if s["window"]:
            argv += ["--window", str(s["window"])]
        if s.get("window_bytes"):
            argv += ["--window-bytes", str(s["window_bytes"])]
        if s.get("cost_ns"):
            argv += ["--cost-ns", str(s["cost_ns"])]
        if s.get("cost_makeup"):
            argv.append("--cost-makeup")
        if s.get("output_rate"):
            argv += ["--output-rate", str(s["output_rate"])]
        return argv

    def ready(self):
        return "ready on" in self.stderr_text()


def syslog_ng_config(spec, port, output, internal_log):
    """SC4S's UDP layout: N network() sources on one port with so-reuseport(1),
    the same so-rcvbuf and window on each, into one file destination."""
    opts = []
    if spec["rcvbuf"]:
        opts.append(f"so-rcvbuf({spec['rcvbuf'] // 2})")  # the kernel doubles it
    if spec["window"]:
        opts.append(f"log-iw-size({spec['window']})")
        opts.append(f"log-fetch-limit({min(SC4S_FETCH_LIMIT, spec['window'])})")
    else:
        opts.append(f"log-fetch-limit({SC4S_FETCH_LIMIT})")
    lines = ["@version: 3.38",
             "# Generated by lab/sweep: SC4S's UDP source layout, on loopback.",
             "options { stats-freq(0); use-dns(no); use-fqdn(no); chain-hostnames(no);",
             "          keep-hostname(yes); log-msg-size(65536); };",
             "source s_internal { internal(); };",
             f'destination d_internal {{ file("{internal_log}"); }};',
             "log { source(s_internal); destination(d_internal); };",
             "source s_udp {"]
    for i in range(spec["sockets"]):
        lines.append(f'    network(transport("udp") ip("127.0.0.1") port({port}) so-reuseport(1) '
                     f'persist-name("udp_{port}_{i}") {" ".join(opts)});')
    lines += ["};",
              f'destination d_file {{ file("{output}" template("${{MSGHDR}}${{MSG}}\\n")); }};',
              "log { source(s_udp); destination(d_file); };", ""]
    return "\n".join(lines)


class SyslogNg(Receiver):
    name = "syslog-ng"

    def prepare(self):
        self.conf = os.path.join(self.workdir, "syslog-ng.conf")
        self.internal_log = os.path.join(self.workdir, "syslog-ng-internal.log")
        with open(self.conf, "w") as f:
            f.write(syslog_ng_config(self.spec, self.port, self.output, self.internal_log))

    def argv(self):
        w = self.workdir
        return [SYSLOG_NG, "-F", "-f", self.conf, "-R", os.path.join(w, "syslog-ng.persist"),
                "-p", os.path.join(w, "syslog-ng.pid"), "-c", os.path.join(w, "syslog-ng.ctl"),
                f"--worker-threads={self.spec['threads']}"]


def rsyslog_paths():
    libdir = os.path.join(RSYSLOG_DIR, "usr", "lib", MULTIARCH)
    return (os.path.join(RSYSLOG_DIR, "usr", "sbin", "rsyslogd"),
            os.path.join(libdir, "rsyslog"), libdir)


def rsyslog_ensure():
    """Runs lab/rsyslog-setup.sh when build/rsyslog is not usable yet."""
    rsyslogd, moddir, _ = rsyslog_paths()
    if os.access(rsyslogd, os.X_OK) and os.path.exists(os.path.join(moddir, "imudp.so")):
        return
    r = subprocess.run([RSYSLOG_SETUP, RSYSLOG_DIR], capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise ReceiverError(f"lab/rsyslog-setup.sh failed: {r.stderr.strip()[-500:]}")


def rsyslog_config(spec, port, output, workdir):
    """imudp with M threads, batchSize and rcvbufSize, into one file; no
    imuxsock/imklog (nothing of the system's), internal messages kept inside."""
    imudp = [f'threads="{spec["threads"]}"', 'batchSize="128"']
    inp = ['type="imudp"', 'address="127.0.0.1"', f'port="{port}"']
    if spec["rcvbuf"]:
        inp.append(f'rcvbufSize="{spec["rcvbuf"] // 2}"')  # the kernel doubles it
    lines = ["# Generated by lab/sweep: rsyslog imudp on loopback, nothing of the system's.",
             f'global(workDirectory="{workdir}" processInternalMessages="on" '
             'maxMessageSize="64k")',
             f'module(load="imudp" {" ".join(imudp)})']
    if spec["window"]:
        # No input window in rsyslog: its main queue plays that part.
        lines.append(f'main_queue(queue.size="{spec["window"]}")')
    lines += [f'input({" ".join(inp)})',
              'template(name="msgonly" type="string" string="%rawmsg%\\n")',
              f'action(type="omfile" file="{output}" template="msgonly")', ""]
    return "\n".join(lines)


class Rsyslog(Receiver):
    name = "rsyslog"

    def prepare(self):
        rsyslog_ensure()
        self.conf = os.path.join(self.workdir, "rsyslog.conf")
        with open(self.conf, "w") as f:
            f.write(rsyslog_config(self.spec, self.port, self.output, self.workdir))

    def argv(self):
        rsyslogd, moddir, _ = rsyslog_paths()
        return [rsyslogd, "-n", "-f", self.conf, "-M", moddir,
                "-i", os.path.join(self.workdir, "rsyslogd.pid")]

    def env(self):
        e = dict(os.environ)
        e["LD_LIBRARY_PATH"] = rsyslog_paths()[2]
        return e


OTELCOL_DIR = os.path.join(BUILD, "otelcol-peer")
OTELCOL_SETUP = os.path.join(ROOT, "lab", "otelcol-setup.sh")
OTELCOL_CONF = os.path.join(ROOT, "lab", "otelcol", "peer-builder-config.yaml")


def otelcol_path():
    return os.path.join(OTELCOL_DIR, "otelcol-syslogrx")


def otelcol_ensure():
    """Builds the collector with contrib's syslog receiver (lab/otelcol-setup.sh
    with the peer's builder config; cached) when build/otelcol-peer is not
    usable yet."""
    env = dict(os.environ, OTELCOL_CONF=OTELCOL_CONF)
    r = subprocess.run([OTELCOL_SETUP, OTELCOL_DIR], capture_output=True, text=True,
                       timeout=1800, env=env)
    if r.returncode:
        raise ReceiverError(f"lab/otelcol-setup.sh failed: {r.stderr.strip()[-500:]}")


def otelcol_config(spec, port, metrics_port):
    """contrib's syslog receiver on one UDP socket as its docs show it (the
    receiver's defaults: one reader goroutine), into the nop exporter; its own
    telemetry on loopback says how many records it accepted."""
    return "\n".join([
        "# Generated by lab/sweep: the OpenTelemetry Collector's syslog receiver, on loopback.",
        "receivers:",
        "  syslog:",
        "    udp:",
        f'      listen_address: "127.0.0.1:{port}"',
        f"    protocol: {spec.get('protocol', 'rfc3164')}",
        "exporters:",
        "  nop:",
        "service:",
        "  telemetry:",
        "    logs:",
        "      level: warn",
        "    metrics:",
        "      level: basic",
        "      readers:",
        "        - pull:",
        "            exporter:",
        "              prometheus:",
        "                host: 127.0.0.1",
        f"                port: {metrics_port}",
        "  pipelines:",
        "    logs:",
        "      receivers: [syslog]",
        "      exporters: [nop]",
        ""])


ACCEPTED_RE = re.compile(rb"^otelcol_receiver_accepted_log_records(?:_total)?\{[^}]*\} (\S+)$",
                         re.M)


def otelcol_accepted(metrics_text):
    """The syslog receiver's accepted log records in the collector's own
    Prometheus text (bytes); None when the series is not there yet."""
    found = ACCEPTED_RE.findall(metrics_text)
    return int(sum(float(v) for v in found)) if found else None


class OtelcolSyslog(Receiver):
    """The OpenTelemetry Collector (contrib's syslog receiver over UDP), the
    receiver an OpenTelemetry user would pick. One socket: the receiver has
    no SO_REUSEPORT option. It writes no file: what it handed on is its own
    counter of accepted records, read before it is stopped."""

    name = "otelcol"

    def prepare(self):
        if not os.access(otelcol_path(), os.X_OK):
            otelcol_ensure()
        self.metrics_port = free_tcp_port()
        self.conf = os.path.join(self.workdir, "otelcol.yaml")
        with open(self.conf, "w") as f:
            f.write(otelcol_config(self.spec, self.port, self.metrics_port))

    def argv(self):
        return [otelcol_path(), "--config", self.conf]

    def scrape(self):
        """The collector's own telemetry (Prometheus text), None while it does
        not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                        timeout=2) as r:
                return r.read()
        except OSError:
            return None

    def ready(self):
        return len(udp_inodes(self.port)) >= 1 and self.scrape() is not None

    def accepted(self):
        text = self.scrape()
        if text is None:
            raise ReceiverError("otelcol: its telemetry endpoint did not answer")
        # the series appears with the first record
        return otelcol_accepted(text) or 0

    def progress(self):
        return self.accepted()


RECEIVERS = {"syslogrx": Syslogrx, "syslog-ng": SyslogNg, "syslog-ng-ebpf": SyslogNg,
             "rsyslog": Rsyslog, "otelcol": OtelcolSyslog}


def make_receiver(spec, port, workdir):
    if spec["receiver"] == "fluent-bit":
        from .fluentbit import FluentBit    # built on this module's Receiver
        return FluentBit(spec, port, workdir)
    return RECEIVERS[spec["receiver"]](spec, port, workdir)
