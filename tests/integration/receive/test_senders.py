"""Kernel drops per sender (issue 25): which source address lost datagrams.

Two senders on different source addresses, one bursting past a slow receiver
and one paced (each datagram waits until the queues are empty, so it can
never meet a full queue): the drops land on the right sender, the per-sender
drops add up exactly to the socket totals and to /proc/net/udp, and for each
sender received + dropped = sent, to the datagram. Then IPv6 (two addresses
on lo inside a test netns), syslog-ng under udpdrops, and a flood of 100,000
forged source addresses against small tables: the tables stay at their
bound, evictions are counted, the totals stay exact, /metrics keeps a fixed
number of series.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from support.paths import binary
from support.procnet import udp_rows
from support.procs import Proc, wait_until
from support.reaper import bpf_ids_held, maps_named, new_netns
from support.ports import free_tcp_port, free_udp_port
from support.prom import scrape
from support.load import send_forged


# Sends from one source address: "burst" as fast as it can; "paced": each
# datagram only once every socket on the destination port has an empty queue
# (read from /proc/net/udp{,6} of the namespace it runs in), so it never meets
# a full one. Prints the number sent.
SENDER = r"""
import socket, sys, time
mode, src, dst, port, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET

def queued():
    n = 0
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table) as f:
            next(f)
            for line in f:
                x = line.split()
                if int(x[1].rsplit(":", 1)[1], 16) == port:
                    n += int(x[4].split(":")[1], 16)
    return n

def drained(deadline):
    while queued():
        assert time.monotonic() < deadline, "queues did not drain"
        time.sleep(0.001)

s = socket.socket(fam, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
s.bind((src, 0))
s.connect((dst, port))
msg = b"<13>senders test " + src.encode() + b" " + b"x" * 150
deadline = time.monotonic() + 60
for i in range(count):
    if mode == "paced":
        drained(deadline)
    s.send(msg)
if mode == "paced":
    drained(deadline)
print(count, flush=True)
"""


def send(mode, src, dst, port, count, netns=None):
    argv = [sys.executable, "-c", SENDER, mode, src, dst, str(port), str(count)]
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1])


def port_rows(port, netns=None):
    """[(rx_queue bytes, drops)] of the sockets on port, in netns if given."""
    cat = ["cat", "/proc/net/udp", "/proc/net/udp6"]
    if netns:
        cat = ["ip", "netns", "exec", netns] + cat
    rows = []
    for line in subprocess.run(cat, capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) < 13 or f[0] == "sl":
            continue
        if int(f[1].rsplit(":", 1)[1], 16) == port:
            rows.append((int(f[4].split(":")[1], 16), int(f[12])))
    return rows


def wait_drained(port, netns=None, timeout=60):
    """Until every queue on port is empty: what was not dropped was read."""
    deadline = time.monotonic() + timeout
    while any(q for q, _ in port_rows(port, netns)):
        assert time.monotonic() < deadline, "the receiver did not drain its queues"
        time.sleep(0.01)


def rounds(port, fast, slow, netns=None, n=3, burst=20_000, paced=40, hold=None):
    """n rounds of a burst from `fast` and paced datagrams from `slow`.
    With hold (a receiver's pid), the receiver is stopped (SIGSTOP) during
    each burst: its queue fills whatever the host's load. Returns
    {address: sent}."""
    dst = "::1" if ":" in fast else "127.0.0.1"
    sent = {fast: 0, slow: 0}
    for _ in range(n):
        if hold:
            os.kill(hold, signal.SIGSTOP)
        try:
            sent[fast] += send("burst", fast, dst, port, burst, netns)
        finally:
            if hold:
                os.kill(hold, signal.SIGCONT)
        sent[slow] += send("paced", slow, dst, port, paced, netns)
    wait_drained(port, netns)
    return sent


def check_attribution(s, sent, fast, slow, proc_drops):
    t, snd = s["totals"], s["senders"]
    drops = t["kernel_drops"]["total"]
    rows = {r["address"]: r for r in snd["rows"]}
    assert set(rows) == {fast, slow}, snd
    # The burst lost, the paced sender did not; the worst is named first.
    assert rows[fast]["dropped"] > 0 and rows[slow]["dropped"] == 0, snd
    assert snd["rows"][0]["address"] == fast
    # Per reason too: every drop here is a full receive buffer.
    assert rows[fast]["kernel_drops"] == {"SOCKET_RCVBUFF": rows[fast]["dropped"]}
    assert rows[slow]["kernel_drops"] == {}
    # Each sender: received + dropped = sent, to the datagram.
    for a in (fast, slow):
        assert rows[a]["received"] + rows[a]["dropped"] == sent[a], (a, rows[a], sent[a])
    assert rows[fast]["loss_ratio"] == pytest.approx(
        rows[fast]["dropped"] / sent[fast], abs=1e-6)
    # The per-sender drops add up to the socket totals and to /proc/net/udp.
    assert sum(r["dropped"] for r in rows.values()) == drops == snd["dropped"] == proc_drops
    assert sum(r["received"] for r in rows.values()) == t["received"] == snd["received"]
    assert t["kernel_drops_match_so_meminfo"] is True
    assert snd["complete"] is True and snd["unattributed_drops"] == 0
    assert snd["evicted"] == {"received_entries": 0, "received": 0, "dropped_entries": 0,
                              "dropped": 0}
    assert snd["rest"] == {"senders": 0, "received": 0, "dropped": 0}


def test_two_senders_ipv4(syslogrx):
    port = free_udp_port()
    # 10,000/s at most, wall-clock: a burst outruns it however loaded the host.
    rx = syslogrx("--sockets", "2", "--threads", "1", "--rcvbuf", "64K", "--cost-ns", "100000",
                  "--stats-interval", "0.2", port=port)
    sent = rounds(port, "127.0.0.2", "127.0.0.3")
    proc_drops = sum(d for _, d in port_rows(port))
    rc, _, err = rx.stop()
    assert rc == 0, err
    check_attribution(rx.summary, sent, "127.0.0.2", "127.0.0.3", proc_drops)
    # The stats lines name the sender losing the most when drops happen:
    # on the window's line, after a listener's line with drops.
    assert re.search(r"stats: 127\.0\.0\.1:\d+ \S+ rx \d+/s drop [1-9]\d* .*\n.*stats: window \d+/\d+ "
                     r"worst 127\.0\.0\.2 drops=\d+ of \d+", err), err


def test_no_trace_counts_received_only(syslogrx):
    """Without the tracer the table has what was read, per sender, and says
    it has no drops (null, not 0)."""
    port = free_udp_port()
    rx = syslogrx("--sockets", "2", "--threads", "2", "--no-trace", port=port)
    sent = {a: send("paced", a, "127.0.0.1", port, n) for a, n in
            (("127.0.0.2", 300), ("127.0.0.3", 200))}
    rc, _, err = rx.stop()
    assert rc == 0, err
    snd = rx.summary["senders"]
    assert snd["drops_traced"] is False and snd["dropped"] is None
    rows = {r["address"]: r for r in snd["rows"]}
    assert {a: r["received"] for a, r in rows.items()} == sent
    assert all(r["dropped"] is None and r["kernel_drops"] is None for r in rows.values())
    # Ordered by received when there are no drops to order by.
    assert [r["address"] for r in snd["rows"]] == ["127.0.0.2", "127.0.0.3"]
    assert snd["received"] == rx.summary["totals"]["received"] == 500


@pytest.fixture(params=[("fd00:25::2", "fd00:25::3"), ("fd00:1::5", "fd00:193::5")],
                ids=["interface-ids-differ", "only-the-prefix-differs"])
def netns6(request):
    """A netns with lo up and two extra IPv6 addresses on it, deleted on every
    path: once differing in the interface ID, once only above it (the same
    low 64 bits: two senders, two rows)."""
    with new_netns("senders-v6", addrs=request.param) as ns:
        yield ns, request.param


def test_two_senders_ipv6(syslogrx, netns6):
    ns, (a, b) = netns6
    port = free_udp_port(socket.AF_INET6)
    rx = syslogrx("--sockets", "2", "--threads", "1", "--rcvbuf", "64K", "--cost-ns", "100000",
                  listen=f"[::1]:{port}", netns=ns)
    sent = rounds(port, a, b, netns=ns)
    proc_drops = sum(d for _, d in port_rows(port, ns))
    rc, _, err = rx.stop()
    assert rc == 0, err
    check_attribution(rx.summary, sent, a, b, proc_drops)


# ---- udpdrops on syslog-ng ------------------------------------------------------

SYSLOG_NG_CONF = """@version: 3.38
options {{ stats-freq(0); use-dns(no); keep-hostname(yes); }};
source s_udp {{ network(transport("udp") ip("127.0.0.1") port({port}) so-rcvbuf(4096)); }};
destination d_file {{ file("{out}" template("${{SOURCEIP}}\\n")); }};
log {{ source(s_udp); destination(d_file); }};
"""


def test_udpdrops_on_syslog_ng(tmp_path, procs):
    port = free_udp_port()
    out = tmp_path / "received.log"
    conf = tmp_path / "syslog-ng.conf"
    conf.write_text(SYSLOG_NG_CONF.format(port=port, out=out))
    ud = Proc([binary("udpdrops"), "--port", str(port), "--json", "--interval", "0.2",
               "--senders-top", "5"])
    procs.append(ud)
    assert "ready" in ud.p.stderr.readline().decode()
    ng = Proc(["/usr/sbin/syslog-ng", "-F", "--no-caps", "-f", str(conf),
               "-R", str(tmp_path / "persist"), "-p", str(tmp_path / "pid"),
               "-c", str(tmp_path / "ctl")])
    procs.append(ng)
    deadline = time.monotonic() + 15
    while not list(udp_rows(port)):
        assert ng.p.poll() is None and time.monotonic() < deadline, "syslog-ng did not bind"
        time.sleep(0.05)

    # syslog-ng held (SIGSTOP) during each burst: its 8 KiB queue overflows.
    sent = rounds(port, "127.0.0.2", "127.0.0.3", burst=5_000, hold=ng.p.pid)
    proc_drops = sum(d for _, d in port_rows(port))
    assert proc_drops > 0
    # A report read after the queues drained: its drops are all of them.
    deadline = time.monotonic() + 30
    while True:
        report = json.loads(ud.p.stdout.readline())
        if report["senders"]["dropped"] == proc_drops:
            break
        assert time.monotonic() < deadline, (report["senders"], proc_drops)
    snd = report["senders"]
    rows = {r["address"]: r["dropped"] for r in snd["rows"]}
    assert set(rows) == {"127.0.0.2"} and rows["127.0.0.2"] == proc_drops, snd
    assert snd["rows"][0]["reasons"] == {"SOCKET_RCVBUFF": proc_drops}
    assert snd["complete"] is True and snd["rest"] == {"senders": 0, "dropped": 0}
    sock_drops = sum(s["drops"]["total"] for s in report["sockets"] if s["drops"])
    assert sock_drops == proc_drops
    # What syslog-ng wrote per source address + udpdrops' drops = sent.
    received = {}
    deadline = time.monotonic() + 30
    while sum(received.values()) < sum(sent.values()) - proc_drops:
        assert time.monotonic() < deadline, (received, sent, proc_drops)
        time.sleep(0.05)
        received = {}
        for line in out.read_text().splitlines() if out.exists() else []:
            received[line] = received.get(line, 0) + 1
    assert received["127.0.0.2"] + rows["127.0.0.2"] == sent["127.0.0.2"]
    assert received["127.0.0.3"] == sent["127.0.0.3"]
    ng.stop()
    assert ud.stop()[0] == 0


# ---- forged addresses ----------------------------------------------------------

def sender_series(text):
    """The sample lines of the per-sender families."""
    return [l for l in text.splitlines()
            if l.startswith(("syslogrx_sender_", "syslogrx_senders_"))]


def test_forged_addresses_bounded(syslogrx):
    port, top, table = free_udp_port(), 5, 1024
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        mport = s.getsockname()[1]
    # 5,000/s per worker at most: the flood outruns it however loaded the host.
    rx = syslogrx("--sockets", "2", "--threads", "2", "--rcvbuf", "16K", "--cost-ns", "200000",
                  "--senders", str(table), "--senders-top", str(top), "--metrics", str(mport),
                  port=port)
    held = set(bpf_ids_held(rx.p.pid, "map"))
    mine = [m for m in maps_named("sender_drops") if m["id"] in held]
    assert len(mine) == 1 and mine[0]["max_entries"] == table, mine
    memlock = mine[0]["bytes_memlock"]
    first = sender_series(scrape(mport))

    sent = send_forged(port, 100_000)
    wait_drained(port)
    # Scrapes show the per-sender rows of the last refresh (every 5 s):
    # wait for one that saw the flood (both tables full).
    wait_until(lambda: scraped_tracked(mport) >= table,
               "a refresh of the per-sender rows after the flood", 30)
    during = sender_series(scrape(mport))
    # The kernel's table kept its size and memory: the LRU is preallocated.
    now = [m for m in maps_named("sender_drops") if m["id"] == mine[0]["id"]]
    assert now[0]["max_entries"] == table and now[0]["bytes_memlock"] == memlock
    proc_drops = sum(d for _, d in port_rows(port))
    rc, _, err = rx.stop()
    assert rc == 0, err

    t, snd = rx.summary["totals"], rx.summary["senders"]
    drops = t["kernel_drops"]["total"]
    assert drops == proc_drops and t["received"] + drops == sent
    assert drops > table and t["received"] > 2 * table, "both tables must overflow"
    # Bounded: at most the kernel's entries and each worker's table.
    assert snd["tracked"] <= table + 2 * table
    assert snd["evicted"]["received_entries"] > 0 and snd["evicted"]["dropped_entries"] > 0
    assert snd["complete"] is False
    # Totals exact: the rows, the rest and what was evicted add up.
    rows = snd["rows"]
    assert len(rows) == top
    assert (sum(r["received"] for r in rows) + snd["rest"]["received"] +
            snd["evicted"]["received"]) == t["received"] == snd["received"]
    assert (sum(r["dropped"] for r in rows) + snd["rest"]["dropped"] + snd["evicted"]["dropped"] +
            snd["unattributed_drops"]) == drops == snd["dropped"]
    # /metrics: the same families, top-N series per family, whatever arrived.
    names = lambda lines: sorted(l.split("{")[0].split(" ")[0] for l in lines)
    per_sender = [l for l in during if l.startswith("syslogrx_sender_")]
    assert len(per_sender) == 2 * top, during
    assert len([l for l in first if l.startswith("syslogrx_sender_")]) == 0
    assert sorted(set(names(first))) == sorted(set(names(during)) - {
        "syslogrx_sender_received_total", "syslogrx_sender_kernel_drops_total"})


# ---- advice ----------------------------------------------------------------------

def test_advice_one_sender_on_hash(syslogrx):
    """One sender's flow overloads the one socket the kernel's hash gives it:
    the advice is --balance random and names the sender. Applied, the same
    sender's datagrams reach every socket and the advice has nothing to say
    about balance."""
    port = free_udp_port()
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "hash", "--rcvbuf", "64K",
                  "--cost-ns", "100000", port=port)
    send("burst", "127.0.0.2", "127.0.0.1", port, 20_000)
    wait_drained(port)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    assert s["senders"]["rows"][0]["address"] == "127.0.0.2"
    assert s["senders"]["rows"][0]["dropped"] == s["totals"]["kernel_drops"]["total"] > 0
    busy = [k for k in s["sockets"] if k["received"]]
    assert len(busy) == 1, "one flow, one socket"
    advice = [a for a in s["advice"] if a.get("flag") == "--balance"]
    assert len(advice) == 1 and advice[0]["value"] == "random", s["advice"]
    assert "sender 127.0.0.2 caused" in advice[0]["why"]

    port = free_udp_port()
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "random", "--rcvbuf", "64K",
                  "--cost-ns", "100000", port=port)
    send("burst", "127.0.0.2", "127.0.0.1", port, 20_000)
    wait_drained(port)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    assert all(k["received"] for k in s["sockets"]), s["sockets"]
    assert not [a for a in s["advice"] if a.get("flag") == "--balance"], s["advice"]


# ---- the cost of a scrape ------------------------------------------------------

def metrics_thread(pid):
    """The thread that answers scrapes (named "metrics" at its first)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().strip() == "metrics":
                return int(tid)
    raise AssertionError("no thread named metrics")


def bpf_calls_of_one_scrape(procs, tid, mport):
    """bpf() system calls the metrics thread made while answering one scrape,
    counted by strace attached to that thread alone."""
    st = Proc(["strace", "-c", "-e", "trace=bpf", "-p", str(tid)])
    procs.append(st)
    attached = st.p.stderr.readline().decode()
    assert "attached" in attached, attached
    text = scrape(mport)
    assert "syslogrx_senders_tracked" in text
    st.p.send_signal(signal.SIGINT)
    rc, _, err = st.stop()
    rows = [l.split() for l in err.splitlines() if l.split()[-1:] == ["bpf"]]
    assert len(rows) == 1, err
    return int(rows[0][3])


def kernel_senders(map_id):
    """(keys, distinct source addresses) in the kernel's per-sender map, as
    bpftool dumps it (a key: the 16-byte address, then the reason)."""
    r = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)], capture_output=True,
                       text=True, check=True, timeout=120)
    keys = json.loads(r.stdout)
    return len(keys), len({tuple(k["key"][:16]) for k in keys})


def scraped_tracked(mport):
    for line in scrape(mport).splitlines():
        if line.startswith("syslogrx_senders_tracked "):
            return int(float(line.split()[1]))
    raise AssertionError("no syslogrx_senders_tracked")


# n datagrams, one from each source address 127.0.0.0 + first + i.
FORGE_FROM = r"""
import socket, sys
port, n, first = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
msg = b"<13>forged " + b"x" * 100
for i in range(first, first + n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255), 0))
    s.sendto(msg, ("127.0.0.1", port))
    s.close()
"""


def test_scrape_cost_does_not_grow_with_senders(syslogrx, procs):
    """A scrape makes the same number of bpf() calls with 10 senders in the
    kernel's per-sender map as with thousands of forged ones: the tables are
    read every few seconds by the main thread, not by each scrape."""
    port, mport = free_udp_port(), free_tcp_port()
    # Slow workers (1,000 datagrams/s each) and a small buffer: most of each
    # burst is dropped.
    rx = syslogrx("--sockets", "2", "--threads", "2", "--rcvbuf", "16K", "--cost-ns", "1000000",
                  "--senders", "16384", "--senders-top", "5", "--metrics", str(mport), port=port)
    held = set(bpf_ids_held(rx.p.pid, "map"))
    mine = [m for m in maps_named("sender_drops") if m["id"] in held]
    assert len(mine) == 1, mine
    scrape(mport)
    tid = metrics_thread(rx.p.pid)
    calls = {}
    for phase in ("ten", "forged"):
        if phase == "ten":      # 10 senders, a burst of 300 each
            for i in range(10):
                send("burst", f"127.3.0.{i + 1}", "127.0.0.1", port, 300)
        else:                   # 5,000 forged addresses, one datagram each
            r = subprocess.run([sys.executable, "-c", FORGE_FROM, str(port), "5000",
                                str(4 << 16)], capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr
        wait_drained(port)
        keys, addresses = kernel_senders(mine[0]["id"])
        # What scrapes show is refreshed every few seconds: wait for the
        # refresh that has every address the kernel's map holds.
        wait_until(lambda: scraped_tracked(mport) >= addresses,
                   "a refresh of what scrapes show per sender", 30)
        calls[phase] = (bpf_calls_of_one_scrape(procs, tid, mport), keys)
    (ten, ten_keys), (forged, forged_keys) = calls["ten"], calls["forged"]
    assert 1 <= ten_keys <= 40 and forged_keys >= 1100, calls
    assert ten == forged > 0, calls
    rc, _, err = rx.stop()
    assert rc == 0, err
