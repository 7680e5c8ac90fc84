"""A stop while the destination is down ends in bounded time and counts
everything it held.

TCP, OTLP or Kafka output to a port where nothing listens, 20,000 sequenced
datagrams at 5,000/s, then SIGTERM mid-outage. With a disk buffer (spill,
reliable) the stop saves what the window and the output stage hold to the
disk, writes the summary and exits 0 at once; the next run, its destination
up (a real TCP syslog server, an OTLP/HTTP server decoding every request, a
real Kafka broker read back with kcat), delivers every sequence number.
Without one it waits --stop-timeout, then exits 0 and counts what it gave
up: sent = written + discarded + given_up + kernel drops + abandoned,
exactly. A second signal gives up at once and writes the summary too."""
import os
import signal
import time

import pytest

from support.otel_collector import LogSink
from support.ports import free_tcp_port, free_udp_port
from support.procs import log_text, sysloggen, Syslogrx, wait_until
from support.rx_watch import SEQ
from support.tcp_sinks import FrameSink

SENT = 20_000
RATE = 5_000
STOP_TIMEOUT = 3


class TcpDest:
    """A TCP syslog server, started when the outage ends."""
    down_args = ()

    def output(self, port):
        return f"tcp:127.0.0.1:{port}"

    def up(self):
        self.sink = FrameSink()
        return self.sink.port

    def seqs(self):
        return self.sink.flows().get(0, [])

    def wait(self, n):
        wait_until(lambda: len(self.seqs()) >= n, "the next run delivers", timeout=60)

    def close(self):
        self.sink.close()


class OtlpDest:
    """An OTLP/HTTP logs server (Python's decoding), the records' bodies the
    datagrams (--otlp-original)."""
    down_args = ("--otlp-original",)

    def output(self, port):
        return f"otlp:http://127.0.0.1:{port}"

    def up(self):
        self.sink = LogSink()
        return self.sink.port

    def seqs(self):
        out = []
        for r in self.sink.records():
            body = r["body"] if isinstance(r["body"], bytes) else r["body"].encode()
            out.append(int(SEQ.search(body).group(2)))
        return out

    def wait(self, n):
        wait_until(lambda: len(self.seqs()) >= n, "the next run delivers", timeout=60)

    def close(self):
        self.sink.close()


class KafkaDest:
    """The module's Kafka broker; a topic of the test's own, made when the
    outage ends (the broker does not create topics)."""
    down_args = ()

    def __init__(self, broker, topic):
        self.broker, self.topic = broker, topic

    def output(self, port):
        return f"kafka:127.0.0.1:{port}/{self.topic}"

    def up(self):
        self.broker.create_topic(self.topic)
        return self.broker.port

    def seqs(self):
        return [int(SEQ.search(v).group(2)) for _, _, v in self.broker.records(self.topic)]

    def wait(self, n):
        self.broker.wait_records(self.topic, n, timeout=120)

    def close(self):
        pass


class OrderedTcpDest(TcpDest):
    """--ordered: the merge hands on all it holds when the stop gives up."""
    down_args = ("--ordered",)


def make_dest(out, request):
    if out == "kafka":
        name = request.node.callspec.id.replace("[", "").replace("]", "")
        return KafkaDest(request.getfixturevalue("broker"), f"stop-{name}")
    return {"tcp": TcpDest, "otlp": OtlpDest, "tcp-ordered": OrderedTcpDest}[out]()


DESTS = ["tcp", "otlp", "kafka"]


def start(tmp_path, procs, name, port, dest, dport, *more):
    d = tmp_path / name
    d.mkdir()
    rx = Syslogrx(d, "--output", dest.output(dport), *dest.down_args, "--rcvbuf", "32M", *more,
                  port=port)
    procs.append(rx)
    return rx


def load(port):
    gen = sysloggen(port, "--count", SENT, "--rate", RATE, "--end-markers", 0)
    assert gen["datagrams"] == SENT
    return gen


def stop_timed(rx, sig=signal.SIGTERM):
    t0 = time.monotonic()
    rc, _, err = rx.stop(sig, timeout=60)
    return rc, err, time.monotonic() - t0


def stop_watch_running(pid):
    """The stop has begun: its watcher thread is there."""
    task = f"/proc/{pid}/task"
    try:
        for tid in os.listdir(task):
            with open(f"{task}/{tid}/comm") as f:
                if f.read().strip() == "stop watch":
                    return True
    except FileNotFoundError:
        pass
    return False


def closes_the_books(s, gen):
    """sent = received + kernel drops + abandoned; received + recovered =
    written + discarded + given_up + disk dropped + left on disk -
    kept_written. Returns the totals."""
    t = s["totals"]
    assert gen["datagrams"] == t["received"] + t["kernel_drops"]["total"] + t["abandoned"], t
    d = s.get("disk_buffer") or {}
    left = d.get("msgs", 0) - d.get("kept_written", 0) + d.get("dropped", 0)
    assert t["received"] + d.get("recovered", 0) == \
        t["written"] + t["discarded"] + t["given_up"] + left, (t, d)
    return t


@pytest.mark.parametrize("out", DESTS)
@pytest.mark.parametrize("mode", ["spill", "reliable"])
def test_stop_saves_to_disk_and_the_next_run_delivers(tmp_path, procs, mode, out, request):
    dest = make_dest(out, request)
    port, down = free_udp_port(), free_tcp_port()
    disk = ["--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", mode]
    rx = start(tmp_path, procs, "down", port, dest, down, *disk)
    gen = load(port)
    rc, err, took = stop_timed(rx)
    assert rc == 0, err
    assert took < 2, f"the stop took {took:.1f}s with the destination down"
    s = rx.summary
    assert s is not None, err
    t = closes_the_books(s, gen)
    assert t["kernel_drops"]["total"] == 0 and t["abandoned"] == 0, t
    assert t["given_up"] == 0 and t["written"] == 0, t
    d = s["disk_buffer"]
    assert d["msgs"] == SENT and d["dropped"] == 0, d
    if mode == "spill":     # the window's and the output's, saved at the stop
        assert t["saved"] > 0 and f"{t['saved']} received message(s) saved" in err, err
    try:
        rx2 = start(tmp_path, procs, "up", free_udp_port(), dest, dest.up(), *disk)
        dest.wait(SENT)
        rc, _, err = rx2.stop()
        assert rc == 0, err
    finally:
        dest.close()
    got = dest.seqs()
    assert set(got) == set(range(SENT)), f"missing {sorted(set(range(SENT)) - set(got))[:10]}"
    assert rx2.summary["disk_buffer"]["recovered"] == SENT


@pytest.mark.parametrize("out", DESTS + ["tcp-ordered"])   # --ordered takes no disk buffer
def test_stop_without_disk_gives_up_after_stop_timeout(tmp_path, procs, out, request):
    dest = make_dest(out, request)
    port, down = free_udp_port(), free_tcp_port()
    rx = start(tmp_path, procs, "down", port, dest, down, "--stop-timeout", str(STOP_TIMEOUT))
    gen = load(port)
    rc, err, took = stop_timed(rx)
    assert rc == 0, err
    assert took < STOP_TIMEOUT + 2, f"the stop took {took:.1f}s"
    t = closes_the_books(rx.summary, gen)
    assert t["written"] == 0 and t["discarded"] == 0 and t["saved"] == 0, t
    assert t["given_up"] == t["received"] > 0, t
    said = [l for l in log_text(err).splitlines() if "stop: gave up" in l]
    assert said == [f"syslogrx: stop: gave up {t['given_up']} received message(s) not written "
                    "(counted: totals.given_up, syslogrx_given_up_total)"], err


def test_second_signal_gives_up_now_and_writes_the_summary(tmp_path, procs):
    port, down = free_udp_port(), free_tcp_port()
    rx = start(tmp_path, procs, "down", port, TcpDest(), down, "--stop-timeout", "60")
    gen = load(port)
    rx.p.send_signal(signal.SIGTERM)
    wait_until(lambda: stop_watch_running(rx.p.pid), "the stop began")
    rc, err, took = stop_timed(rx, signal.SIGINT)
    assert rc == 1, err
    assert took < 5, f"the second signal took {took:.1f}s"
    assert "second signal: giving up" in err, err
    t = closes_the_books(rx.summary, gen)
    assert t["given_up"] > 0 and t["written"] == 0, t
