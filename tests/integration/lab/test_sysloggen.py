"""sysloggen end to end: exact counts, exact sizes, parseable markers, flows,
JSON output, flag errors; and drainrx as the counting receiver.

Receivers here are plain Python sockets with a forced 64 MiB SO_RCVBUF, so
a datagram not received is a sysloggen bug, not a drop.
"""
import json
import re
import socket
import subprocess
import threading
import time

from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import Proc

SO_RCVBUFFORCE = 33

RE_3164 = re.compile(
    rb"^<(\d+)>([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (\S+) (\S+)\[(\d+)\]: "
    rb"seq@32473 run=([A-Za-z0-9._:-]+) flow=(\d+) seq=(\d+) ([a-z]*)$")
RE_5424 = re.compile(
    rb"^<(\d+)>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (\S+) (\S+) (\d+) - "
    rb"\[seq@32473 run=\"([A-Za-z0-9._:-]+)\" flow=\"(\d+)\" seq=\"(\d+)\"\](?: ([a-z]*))?$")


RE_END = re.compile(
    rb"seq@32473 run=\"?([A-Za-z0-9._:-]+)\"? flow=\"?(\d+)\"? end=\"?(\d+)\"? copies=\"?(\d+)")


class Receiver:
    """Collects (source port, datagram) until `quiet` seconds pass with nothing;
    the flows' end markers apart, in `ends`."""

    def __init__(self, family=socket.AF_INET, quiet=1.0):
        host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
        self.port = free_udp_port(family)
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        self.sock.bind((host, self.port))
        self.sock.settimeout(quiet)
        self.msgs = []
        self.ends = []
        self.arrivals = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                data, addr = self.sock.recvfrom(70000)
            except socket.timeout:
                if self.msgs:
                    break
                continue
            (self.ends if RE_END.search(data) else self.msgs).append((addr[1], data))
            self.arrivals.append((addr[1], data))

    def wait(self):
        self.thread.join(70)
        self.sock.close()
        return self.msgs


def run(*args, timeout=30):
    return subprocess.run([binary("sysloggen"), *args], capture_output=True, text=True,
                          timeout=timeout)


def parse(data, fmt):
    m = (RE_5424 if fmt == "rfc5424" else RE_3164).match(data)
    assert m, f"unparseable {fmt} datagram: {data[:200]!r}"
    pri, ts, host, app, pid, runid, flow, seq, pad = m.groups()
    return dict(pri=int(pri), host=host.decode(), app=app.decode(), pid=int(pid),
                run=runid.decode(), flow=int(flow), seq=int(seq), pad=pad or b"")


def test_rate_duration_exact():
    rx = Receiver()
    t0 = time.monotonic()
    r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "9000", "--duration", "3",
            "--run-id", "exact9k")
    took = time.monotonic() - t0
    msgs = rx.wait()
    assert r.returncode == 0, r.stderr
    # Paced, never early: message i leaves at start + i / rate at the
    # soonest (how late a loaded machine makes it is a figure, not a test).
    assert took >= (27000 - 1) / 9000, f"took {took:.2f}s"
    assert len(msgs) == 27000
    seqs = sorted(parse(d, "rfc3164")["seq"] for _, d in msgs)
    assert seqs == list(range(27000))
    assert "sent          : 27000" in r.stderr
    assert "send errors   : 0 " in r.stderr


def test_count_unpaced_exact_and_size():
    rx = Receiver()
    r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "0", "--count", "12345",
            "--size", "333")
    msgs = rx.wait()
    assert r.returncode == 0, r.stderr
    assert len(msgs) == 12345
    assert {len(d) for _, d in msgs} == {333}
    assert sorted(parse(d, "rfc3164")["seq"] for _, d in msgs) == list(range(12345))


def test_both_formats_parse_back():
    for fmt in ("rfc3164", "rfc5424"):
        rx = Receiver()
        r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "5000", "--count", "1200",
                "--format", fmt, "--size", "200", "--pri", "134", "--host", "lab-host.example",
                "--run-id", "fmt-" + fmt, "--json")
        msgs = rx.wait()
        assert r.returncode == 0, r.stderr
        assert len(msgs) == 1200
        fields = [parse(d, fmt) for _, d in msgs]
        summary = json.loads(r.stdout.splitlines()[-1])
        for f in fields:
            assert f["pri"] == 134
            assert f["host"] == "lab-host.example"
            assert f["app"] == "sysloggen"
            assert f["run"] == "fmt-" + fmt
            assert f["flow"] == 0
            assert f["pid"] > 0
        assert sorted(f["seq"] for f in fields) == list(range(1200))
        assert {len(d) for _, d in msgs} == {200}
        assert summary["run_id"] == "fmt-" + fmt and summary["format"] == fmt


def test_sources_split_exactly():
    rx = Receiver()
    r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "20000", "--count", "10002",
            "--sources", "4", "--threads", "2", "--json")
    msgs = rx.wait()
    assert r.returncode == 0, r.stderr
    assert len(msgs) == 10002
    by_port = {}
    for port, d in msgs:
        by_port.setdefault(port, []).append(parse(d, "rfc3164"))
    assert len(by_port) == 4
    counts = {}
    for port, fs in by_port.items():
        flows = {f["flow"] for f in fs}
        assert len(flows) == 1, "one source port carries one flow"
        flow = flows.pop()
        assert sorted(f["seq"] for f in fs) == list(range(len(fs)))
        counts[flow] = len(fs)
    assert counts == {0: 2501, 1: 2501, 2: 2500, 3: 2500}
    summary = json.loads(r.stdout.splitlines()[-1])
    assert {f["src_port"]: f["sent"] for f in summary["flows"]} == \
        {p: len(fs) for p, fs in by_port.items()}


def test_end_markers_close_each_flow():
    """After a flow's last message, K copies of an end marker with the count it
    sent, from the flow's own source port, same size; none with --end-markers 0."""
    rx = Receiver()
    r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "20000", "--count", "1001",
            "--sources", "2", "--end-markers", "4", "--end-pause-ms", "20", "--json")
    msgs = rx.wait()
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["sent"] == 1001 and summary["end_markers"] == 8
    assert summary["datagrams"] == 1009
    assert len(msgs) == 1001 and len(rx.ends) == 8
    assert {len(d) for _, d in rx.ends} == {256}
    sent = {f["src_port"]: f["sent"] for f in summary["flows"]}
    for port, d in rx.ends:
        run_id, flow, end, copies = RE_END.search(d).groups()
        assert run_id.decode() == summary["run_id"]
        assert int(end) == sent[port] and int(copies) == 4
    assert sorted(sent.values()) == [500, 501]
    assert all(f["end_markers"] == 4 for f in summary["flows"])
    # after every message of its flow: the last datagrams of each source port
    for port in sent:
        mine = [d for p, d in rx.arrivals if p == port]
        assert all(RE_END.search(d) for d in mine[-4:])
    rx = Receiver()
    r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "0", "--count", "100",
            "--end-markers", "0", "--json")
    rx.wait()
    summary = json.loads(r.stdout.splitlines()[-1])
    assert r.returncode == 0 and not rx.ends and summary["datagrams"] == 100


def test_json_rows_and_summary():
    rx = Receiver()
    r = run("--target", f"127.0.0.1:{rx.port}", "--rate", "4500", "--duration", "2.5", "--json")
    msgs = rx.wait()
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    seconds = [x for x in rows if x["type"] == "second"]
    summary = rows[-1]
    assert summary["type"] == "summary" and rows.count(summary) == 1
    assert [x["second"] for x in seconds] == [1, 2, 3]
    assert sum(x["sent"] for x in seconds) == 11250
    assert seconds[-1]["cumulative"] == 11250
    assert summary["planned"] == 11250 and summary["sent"] == 11250
    assert summary["failed"] == 0 and summary["target_rate"] == 4500
    assert summary["duration_s"] >= (11250 - 1) / 4500     # paced, never early
    assert len(msgs) == 11250


def test_ipv6_target():
    rx = Receiver(socket.AF_INET6)
    r = run("--target", f"[::1]:{rx.port}", "--rate", "0", "--count", "500",
            "--format", "rfc5424")
    msgs = rx.wait()
    assert r.returncode == 0, r.stderr
    assert len(msgs) == 500


def test_no_listener_is_not_fatal():
    port = free_udp_port()
    r = run("--target", f"127.0.0.1:{port}", "--rate", "0", "--count", "200", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["sent"] + summary["failed"] == 200


def test_bad_flags_exit_2():
    port = free_udp_port()
    t = f"127.0.0.1:{port}"
    cases = [
        (["--target", t, "--rate", "fast", "--count", "1"], "--rate"),
        (["--target", "localhost:1", "--count", "1"], "--target"),
        (["--target", t, "--count", "1", "--format", "json"], "--format"),
        (["--target", t, "--count", "1", "--size", "20"], "--size"),
        (["--target", t, "--count", "1", "--sources", "0"], "--sources"),
        (["--target", t, "--count", "1", "--threads", "3"], "--threads"),
        (["--target", t, "--profile", "100"], "--profile"),
        (["--target", t, "--profile", "10x1", "--rate", "5"], "--profile"),
        (["--target", t, "--count", "1", "--run-id", "bad id"], "--run-id"),
        (["--target", t, "--count", "1", "--duration", "1"], "--duration"),
        (["--target", t, "--count", "1", "--no-such-flag"], "--no-such-flag"),
    ]
    for args, flag in cases:
        r = run(*args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert flag in r.stderr, (args, r.stderr)
    r = run("--target", t, "--count", "1", "--size", "20")
    assert re.search(r"the minimum is \d+", r.stderr), r.stderr


def test_drainrx_seq_and_monitor(procs):
    port = free_udp_port()
    rx = Proc([binary("drainrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "2",
               "--duration", "20", "--idle", "1", "--seq", "--json"])
    procs.append(rx)
    wait_for_udp_port(port, count=2)
    r = run("--target", f"127.0.0.1:{port}", "--profile", "6000x1,0x1", "--sources", "3",
            "--pid", str(rx.p.pid))
    assert r.returncode == 0, r.stderr
    assert "records   write (b)     write   secs |  % cpu" in r.stderr
    assert "- Summary" in r.stderr and "Process     : drainrx" in r.stderr
    rc, out, err = rx.stop(timeout=10)
    assert rc == 0, err
    res = json.loads(out)
    # the flows' end markers come after the silence: drainrx, idle for 1 s,
    # may stop before some arrive; those it read are counted apart
    assert res["received"] == 6000 + res["seq"]["end_markers"]
    assert res["seq"]["received"] == 6000 and res["seq"]["missing"] == 0
    assert res["seq"]["duplicates"] == 0 and res["seq"]["flows"] == 3
    assert sorted(f["received"] for f in res["seq"]["per_flow"]) == [2000, 2000, 2000]
