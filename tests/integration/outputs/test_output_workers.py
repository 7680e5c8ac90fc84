"""The workers format a stream sink's lines: each worker formats the batches
it received before the hand-off, and the output thread only writes them. Seen
from outside with gdb (a breakpoint on the formatter that names the thread of
each call), and judged by Python's JSON and UTF-8 decoders: every message
formatted exactly once, byte for byte what was sent, the books closed."""
import json
import socket
import subprocess

import pytest

from support.ports import free_udp_port
from support.procs import start_rx, wait_until

# Counts each call of the formatter by the name of the thread that made it,
# until the process exits; then prints the counts on one line.
GDB_SCRIPT = r'''
import gdb, json
seen = {}
class Hit(gdb.Breakpoint):
    def stop(self):
        name = gdb.selected_thread().name
        seen[name] = seen.get(name, 0) + 1
        return False
Hit("format_message_flags")
gdb.execute("handle all nostop noprint pass")
print("ARMED", flush=True)
gdb.execute("continue")
print("SEEN " + json.dumps(seen), flush=True)
'''


def traced(pid, script):
    g = subprocess.Popen(["gdb", "-q", "-nx", "-batch", "-p", str(pid), "-x", str(script)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in g.stdout:
        if line.startswith("ARMED"):
            return g
    g.wait()
    raise AssertionError("gdb did not set its breakpoint")


def send(port, msgs):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))


def lines_in(out):
    return out.read_bytes().count(b"\n") if out.exists() else 0


@pytest.mark.parametrize("paced", [False, True])
def test_json_is_formatted_by_each_worker(tmp_path, procs, paced):
    """--threads 2 over 2 sockets (worker 0 reads socket 0, worker 1 socket
    1): each message's json line is formatted once, by the worker that
    received it, and by no other thread; with --output-rate (paced per
    message) the output thread formats them all instead."""
    out = tmp_path / "out.json"
    port = free_udp_port()
    script = tmp_path / "count.py"
    script.write_text(GDB_SCRIPT)
    rx = start_rx(tmp_path, procs, "rx", port, "--sockets", "2", "--threads", "2", "--balance",
                  "roundrobin", "--format", "json", "--output", f"file:{out}", "--no-trace",
                  *(["--output-rate", "1000000"] if paced else []), sequences=False)
    g = None
    try:
        g = traced(rx.p.pid, script)
        sent = [f"<13>1 2026-11-26T20:00:00Z host app - - - n={i} caf\u00e9".encode()
                for i in range(58)] + [b"<999>bad", b"<1a>x"]
        send(port, sent)
        wait_until(lambda: lines_in(out) == len(sent), "every line written")
        rx.p.terminate()
        rest, _ = g.communicate(timeout=120)
        rc, _, err = rx.stop(timeout=60)
        assert rc == 0, err
    finally:
        if g and g.poll() is None:
            g.kill()
            g.wait()
    s = rx.summary
    t = s["totals"]
    assert t["received"] == t["written"] == len(sent)
    assert t["malformed"] == 2
    seen = [l for l in rest.splitlines() if l.startswith("SEEN ")]
    assert seen, rest
    if paced:
        want = {"output": len(sent)}
    else:
        want = {f"worker {k['index']}": k["received"] for k in s["sockets"] if k["received"]}
        assert len(want) == 2, s["sockets"]  # round robin: both sockets
    assert json.loads(seen[0][5:]) == want
    got = []
    for line in out.read_bytes().splitlines():
        rec = json.loads(line.decode("utf-8"))
        got.append(rec["raw"] if rec["malformed"] else rec["msg"])
    want_lines = [m.decode().split(" - - - ", 1)[1] for m in sent[:-2]] + ["<999>bad", "<1a>x"]
    assert sorted(got) == sorted(want_lines)
