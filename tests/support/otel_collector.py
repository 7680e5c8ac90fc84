"""A real OpenTelemetry Collector for the OTLP tests, and the small HTTP sink
it forwards to, so a test checks what came OUT of the collector.

    sink = LogSink()                        # OTLP/HTTP server on loopback, a thread
    c = Collector(forward_to=sink.url)      # otlp receiver -> otlp_http exporter
    c.start()                               # waits for "Everything is ready"
    c.stop(signal.SIGKILL); c.start()       # same port: a collector restart
    sink.records()                          # decoded records (otlp_wire.py)
    c.close(); sink.close()

The collector is build/otelcol/otelcol-syslogrx, built once by
lab/otelcol-setup.sh (cached). Its exporter has no sending queue and no batch
processor sits in the pipeline: the collector answers syslogrx only once the
sink has the records, so every 2xx syslogrx counts is a record the sink holds,
and a killed collector loses nothing it acknowledged.
"""
import http.server
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from support import otlp_wire
from support.ports import free_tcp_port
from support.procs import lab_setup, signal_and_reap


def collector_binary():
    """Builds the collector if missing (quick when cached); returns its path."""
    return lab_setup("otelcol-setup.sh", timeout=1800)

class OtlpHttpServer:
    """An HTTP/1.1 server on 127.0.0.1 (https with tls, an ssl context) whose
    every POST is answered by handle(body, headers), which returns (status,
    extra headers, reply body, Content-Type). The one server under both the
    project's decoder (LogSink) and the official runtime's (test_otlp_strict)."""

    def __init__(self, handle, tls=None):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, headers, out, ctype = handle(body, self.headers)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # a collector killed mid-request resets its connection: not an error here
        self.server.handle_error = lambda request, address: None
        if tls:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def reply_type(ctype):
    """The Content-Type of an OTLP/HTTP answer to a request of ctype."""
    return "application/json" if "json" in ctype else "application/x-protobuf"


class LogSink:
    """OTLP/HTTP logs server on 127.0.0.1 that decodes every request it is
    sent. `answer(n, body)` may script the answers: a function of the request
    number (0 = first) and its raw body, returning (status, headers, body) or
    None for 200. Requests are kept as (monotonic time, records, raw body)."""

    def __init__(self, answer=None, tls=None):
        self.lock = threading.Lock()
        self.requests = []
        self.headers = []             # each request's HTTP headers, in order
        self.answer = answer
        self.http = OtlpHttpServer(self.handle, tls)
        self.port, self.url = self.http.port, self.http.url

    def handle(self, body, headers):
        ctype = headers.get("Content-Type", "")
        recs = otlp_wire.decode(body, ctype, headers.get("Content-Encoding", ""))
        with self.lock:
            idx = len(self.requests)
            self.requests.append((time.monotonic(), recs, body))
            self.headers.append(dict(headers))
        scripted = self.answer(idx, body) if self.answer else None
        status, extra, out = scripted or (200, {}, None)
        if out is None:
            out = b"{}" if "json" in ctype else b""
        return status, extra, out, reply_type(ctype)

    def records(self):
        with self.lock:
            return [r for _, recs, _ in self.requests for r in recs]

    def wait_records(self, count, timeout=60):
        """Waits until at least count records arrived (the collector's own
        retries may still be on their way); returns them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            recs = self.records()
            if len(recs) >= count:
                return recs
            time.sleep(0.05)
        return self.records()

    def close(self):
        self.http.close()


CONFIG = """\
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
exporters:
  otlp_http:
    endpoint: {forward}
    encoding: json
    compression: none
    sending_queue:
      enabled: false
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [otlp_http]
"""


# forward_to=None: the debug exporter at its basic verbosity (a count per
# request), for benchmarks: nothing past the collector.
CONFIG_DEBUG = """\
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
exporters:
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [debug]
"""


class Collector:
    def __init__(self, forward_to, port=None):
        self.bin = collector_binary()
        self.port = port or free_tcp_port()
        self.dir = tempfile.mkdtemp(prefix="syslogrx-otelcol-")
        self.config = os.path.join(self.dir, "collector.yaml")
        with open(self.config, "w") as f:
            if forward_to:
                f.write(CONFIG.format(port=self.port, forward=forward_to))
            else:
                f.write(CONFIG_DEBUG.format(port=self.port))
        self.proc = None
        self.log = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout=60):
        self.log = os.path.join(self.dir, f"collector-{time.monotonic_ns()}.log")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([self.bin, "--config", self.config], stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log) as f:
                text = f.read()
            if "Everything is ready" in text:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop(signal.SIGKILL)
        raise AssertionError(f"the collector did not start: {text[-3000:]}")

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            signal_and_reap(self.proc, sig, 30)
        self.proc = None

    def close(self):
        self.stop(signal.SIGKILL)
        shutil.rmtree(self.dir, ignore_errors=True)
