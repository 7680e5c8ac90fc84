"""What a collector answers is text from the network: a partial success's
errorMessage becomes a metric label, a summary key and a log line. A scripted
collector (otel_collector.LogSink) answers every export with a rejection
whose message is (a) 64 bytes whose 62nd byte starts an em dash, (b) ESC
sequences and a newline that would forge a log line. Judged by independent
oracles: promtool check metrics and Python's strict UTF-8 decoder on the
scrape, Python's json on the summary, the raw bytes of stderr."""
import json
import signal
import socket
import time
import urllib.request

from support.otel_collector import LogSink
from support.ports import free_tcp_port, free_udp_port
from support.procs import log_text, promtool, run_cmd
from support.prom import LABEL, parse, value

DASH = "\u2014".encode()
MSG_CUT = b"0123456789" * 6 + b"0" + DASH          # 64 bytes, byte 62 starts the dash
MSG_ESC = b"bad \x1b[2J\x1b[31mred\nsyslogrx: forged line"
assert len(MSG_CUT) == 64 and MSG_CUT.index(DASH) == 61


def partial_success(msg):
    """ExportLogsServiceResponse{partial_success{rejected_log_records: 1,
    error_message: msg}} by hand (opentelemetry-proto field numbers)."""
    inner = b"\x08\x01\x12" + bytes([len(msg)]) + msg
    return b"\x0a" + bytes([len(inner)]) + inner


def answer(n, body):
    if n == 0:
        return None                                 # the probe at start
    return 200, {}, partial_success(MSG_CUT if n % 2 else MSG_ESC)


def raw_scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return resp.read()


def test_collector_messages_are_sanitised_for_labels_and_logs(syslogrx):
    sink = LogSink(answer=answer)
    try:
        port, mport = free_udp_port(), free_tcp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--metrics", f"127.0.0.1:{mport}",
                      port=port)
        # two groups, each waited for: at least two exports, so both answers
        for g in range(2):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                for i in range(5):
                    s.sendto(b"<13>Nov 22 03:12:00 h app: g%d m%d" % (g, i), ("127.0.0.1", port))
            sink.wait_records(5 * (g + 1))
        exports = len(sink.requests) - 1
        cut = sum(1 for n in range(1, exports + 1) if n % 2)
        esc = exports - cut
        assert cut >= 1 and esc >= 1
        deadline = time.monotonic() + 30
        while True:
            raw = raw_scrape(mport)
            text = raw.decode("utf-8")              # strict: raises on a cut sequence
            m = parse(text)
            if value(m, "syslogrx_otlp_in_flight_records") == 0:
                break
            assert time.monotonic() < deadline, "answers not counted"
            time.sleep(0.05)
        r = run_cmd([promtool(), "check", "metrics"], input=text)
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr
        # the whole message fits the label: kept, dash and all; controls are spaces
        label_cut = "rejected: " + MSG_CUT.decode()
        label_esc = "rejected: bad  [2J [31mred syslogrx: forged line"
        assert value(m, "syslogrx_otlp_failed_total", reason=label_cut) == cut
        assert value(m, "syslogrx_otlp_failed_total", reason=label_esc) == esc

        rx.p.send_signal(signal.SIGTERM)
        _, err = rx.p.communicate(timeout=30)
        assert rx.p.returncode == 0, err
        err = rx.early_err.encode() + err
        with open(rx.summary_path, "rb") as f:
            summary = json.loads(f.read().decode("utf-8"))
        assert summary["otlp"]["failed"] == {"total": exports, label_cut: cut, label_esc: esc}
        # stderr: no ESC byte, no line the collector wrote, valid UTF-8; the
        # message shown with its control bytes as #ooo, once per reason
        err.decode("utf-8")
        assert b"\x1b" not in err
        # (each line read without the time and level a log line starts with)
        lines = log_text(err.decode("utf-8")).split("\n")
        assert not any(l.startswith("syslogrx: forged") for l in lines), err
        assert err.count(b"records: " + MSG_CUT + b"; such") == 1
        assert err.count(b"records: bad #033[2J#033[31mred#012syslogrx: forged line; such") \
            == 1, err
    finally:
        sink.close()


def test_non_2xx_body_is_shown_without_control_bytes(syslogrx):
    """The body of a 400 is shown in the log the same way."""
    body = b"no \x1b[31mway\r\nsyslogrx: forged \xe2\x80"
    sink = LogSink(answer=lambda n, b: (400, {}, body) if n >= 1 else None)
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", port=port)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"<13>Nov 22 03:12:00 h app: one", ("127.0.0.1", port))
        sink.wait_records(1)
        rx.p.send_signal(signal.SIGTERM)
        _, err = rx.p.communicate(timeout=30)
        assert rx.p.returncode == 0, err
        err.decode("utf-8")
        assert b"\x1b" not in err and b"\r" not in err
        assert b"(no #033[31mway#015#012syslogrx: forged \xef\xbf\xbd\xef\xbf\xbd)" in err, err
    finally:
        sink.close()
