"""Several listeners in one receiver (--listen [NAME=]ADDR:PORT, repeated):
each its own reuseport group, books closed per listener, every record named
after its listener, SC4S's per-vendor ports from its env_file, the
lifecycle (USR2, SIGHUP, the fd store, --supervise) with several listeners,
and what is not done yet (a live --sockets change), said with the reason.

Drops are made structurally, not by speed: the receiver is held (SIGSTOP)
while three sysloggen flows, one per listener, send at once; listener "b"
(the second: its own balancer and tracer, not the receiver's first)
gets far more than its sockets' buffers hold, "a" and "c" fewer datagrams
than one socket's buffer holds (so they cannot drop). Then it runs again,
reads its queues empty, and stops.
"""
import json
import os
import select
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procnet import udp_rows, wait_for_udp_port
from support.procs import log_text, Proc, read_json, wait_until
from support.defaults import NOBODY
from support.prom import scrape

# uid 65534 with an empty bounding set: no capability at all (classic BPF
# spreads, SO_MEMINFO counts the drops).
NOTHING = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
           "--inh-caps=-all", "--bounding-set=-all"]
RCVBUF = 65536        # each socket's buffer: a few dozen datagrams of 256 bytes
FLOOD = 3000          # to "b": past its 2 x RCVBUF many times over
FEW = 20              # to "a" and "c": with the end markers, fits one buffer


def start(argv, prefix=(), **kw):
    """syslogrx started and ready; what it said up to ready is kept."""
    rx = Proc(list(prefix) + [binary("syslogrx")] + [str(a) for a in argv], **kw)
    try:
        rx.early = read_until(rx, "ready on")
    except AssertionError:
        rx.p.kill()
        rx.p.wait()
        raise
    return rx


def stop(rx, sig=15):
    """rx.stop(), with what read_until had read past its line."""
    rc, out, err = rx.stop(sig)
    return rc, out, getattr(rx, "pending", b"").decode(errors="replace") + err


def read_until(rx, text, fail=None, timeout=60):
    """stderr up to and including the line with text (read from the pipe
    itself, so that select sees what is not read yet); fails at once on a
    line with `fail`, and after timeout seconds."""
    fd = rx.p.stderr.fileno()
    pending = getattr(rx, "pending", b"")
    seen = ""
    deadline = time.monotonic() + timeout
    while True:
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            line = line.decode(errors="replace") + "\n"
            assert not fail or fail not in line, seen + line
            seen += line
            if text in line:
                rx.pending = pending
                return seen
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], \
            f"no {text!r} within {timeout}s: {seen}"
        chunk = os.read(fd, 65536)
        assert chunk, f"exited before saying {text!r}: {seen}"
        pending += chunk


def drops_by_inode(ports):
    """{inode: (drops, queued bytes)} of the sockets on these ports (/proc/net/udp, udp6)."""
    rows = {}
    for port in ports:
        for f in udp_rows(port):
            rows[int(f[9])] = (int(f[12]), int(f[4].split(":")[1], 16))
    return rows


def send_all(flows):
    """One sysloggen per (target, run id, count), all at once; their JSON summaries."""
    out = {}
    gen = binary("sysloggen")  # once: binary() copies it, not thread-safe

    def one(target, run, count):
        r = subprocess.run([gen, "--target", target, "--rate", "0",
                            "--count", str(count), "--size", "256", "--run-id", run,
                            "--json"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out[run] = json.loads(r.stdout.strip().splitlines()[-1])

    threads = [threading.Thread(target=one, args=f) for f in flows]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=150)
    assert len(out) == len(flows), out
    return out


def held_burst(rx, ports):
    """Holds the receiver, sends the three flows, lets it go; returns
    (sysloggen summaries, /proc drops per inode while it was held)."""
    pa, pb, pc = ports
    os.kill(rx.p.pid, signal.SIGSTOP)
    try:
        sent = send_all([(f"127.0.0.1:{pa}", "a", FEW), (f"127.0.0.1:{pb}", "b", FLOOD),
                         (f"[::1]:{pc}", "c", FEW)])
        held = drops_by_inode(ports)
    finally:
        os.kill(rx.p.pid, signal.SIGCONT)
    return sent, held


def check_books(s, sent, held, out_path, ports):
    """Per listener: sent = received + kernel drops + abandoned, drops only on
    "b"; per socket, the drops /proc/net/udp counted; every record names the
    listener its flow was sent to."""
    lis = {l["name"]: l for l in s["listeners"]}
    assert sorted(lis) == ["a", "b", "c"], lis
    assert [lis[n]["listen"] for n in "abc"] == [
        f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}", f"[::1]:{ports[2]}"]
    for name in "abc":
        l = lis[name]
        assert l["sockets"] == 2, l
        assert sent[name]["failed"] == 0, sent[name]
        assert sent[name]["datagrams"] == l["received"] + l["kernel_drops"] + l["abandoned"], \
            (name, sent[name], l)
        assert l["abandoned"] == 0, l
    assert lis["b"]["kernel_drops"] > 0, lis["b"]
    assert lis["a"]["kernel_drops"] == 0 and lis["c"]["kernel_drops"] == 0, lis
    # Per socket, against the kernel's own table.
    by_name = {}
    for sock in s["sockets"]:
        assert sock["kernel_drops"]["total"] == held[sock["inode"]][0], (sock, held)
        assert sock["so_meminfo_drops"] == held[sock["inode"]][0], sock
        by_name.setdefault(sock["listener"], []).append(sock)
    # "b"'s one flow was spread (random: its own program on its own group),
    # not hashed onto one socket: each of its sockets filled and dropped.
    assert all(x["received"] > 0 and x["kernel_drops"]["total"] > 0 for x in by_name["b"]), \
        by_name["b"]
    for name in "abc":
        assert sum(x["kernel_drops"]["total"] for x in by_name[name]) == lis[name]["kernel_drops"]
        assert sum(x["received"] for x in by_name[name]) == lis[name]["received"]
    assert sum(held[i][0] for i in held) == sum(l["kernel_drops"] for l in lis.values())
    # Each record, read by Python's own JSON parser, names its listener: the
    # one its run id was sent to.
    counts = records_per_listener(out_path)
    assert counts == {n: lis[n]["received"] for n in "abc"}, (counts, lis)


def run_three(d, prefix=(), extra=()):
    ports = (free_udp_port(), free_udp_port(), free_udp_port(socket.AF_INET6))
    out = d / "out.json"
    rx = start(["--listen", f"a=127.0.0.1:{ports[0]}", "--listen", f"b=127.0.0.1:{ports[1]}",
                "--listen", f"c=[::1]:{ports[2]}", "--sockets", "2", "--threads", "2",
                "--rcvbuf", RCVBUF, "--format", "json", "--json-raw", "--output", f"file:{out}",
                "--summary", d / "s.json"] + list(extra), prefix)
    try:
        for p in ports:
            wait_for_udp_port(p, count=2)
        sent, held = held_burst(rx, ports)
        # Running again: it reads every queue empty, then stops.
        wait_until(lambda: all(q == 0 for _, q in drops_by_inode(ports).values()),
                   "the receive queues read empty")
        rc, _, err = stop(rx)
    finally:
        if rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
    assert rc == 0, err
    return read_json(d / "s.json"), sent, held, out, ports, rx.early + err


def test_three_listeners_books_close_per_listener(tmp_path):
    """Two IPv4 listeners and one IPv6, eBPF balancers and tracers, one flow
    each at once, drops on "b" only."""
    s, sent, held, out, ports, err = run_three(tmp_path)
    assert s["balancer"]["runs"] == "eBPF", s["balancer"]
    check_books(s, sent, held, out, ports)
    # Per listener: the stats of the summary's listeners and its pre-flight.
    checks = {(c["check"], c.get("listener")) for c in s["preflight"]}
    assert {("port", n) for n in "abc"} <= checks, checks
    assert {("rcvbuf", n) for n in "abc"} <= checks, checks
    # The advice names the listener it is for: only "b" lost anything.
    assert s["advice"] and {a.get("listener") for a in s["advice"]} == {"b"}, s["advice"]
    assert "advice (listener b):" in err, err
    check_senders(s)


def check_senders(s):
    """Per-sender drops count every listener's: "b" (the second) dropped
    all of them, sent from 127.0.0.1 (as "a" was, which lost none); ::1
    (to "c") lost none."""
    lis = {l["name"]: l for l in s["listeners"]}
    snd = s["senders"]
    assert snd["drops_traced"] is True, snd
    rows = {r["address"]: r for r in snd["rows"]}
    assert sorted(rows) == ["127.0.0.1", "::1"], rows
    assert rows["127.0.0.1"]["dropped"] == lis["b"]["kernel_drops"] > 0, (rows, lis)
    assert rows["::1"]["dropped"] == 0, rows
    assert rows["127.0.0.1"]["received"] == lis["a"]["received"] + lis["b"]["received"], rows
    assert rows["::1"]["received"] == lis["c"]["received"], rows
    assert snd["dropped"] == lis["b"]["kernel_drops"] and snd["complete"] is True, snd


def test_three_listeners_as_user_nobody(nobody_dir):
    """Bound as root, run as nobody (--user): the same books."""
    s, sent, held, out, ports, _ = run_three(nobody_dir, extra=["--user", "nobody"])
    check_books(s, sent, held, out, ports)
    check_senders(s)


def test_three_listeners_without_privilege(nobody_dir):
    """uid 65534 with no capability: classic BPF spreads each listener,
    SO_MEMINFO counts the drops; the same books."""
    s, sent, held, out, ports, _ = run_three(nobody_dir, prefix=NOTHING)
    assert s["balancer"]["runs"] == "classic BPF", s["balancer"]
    check_books(s, sent, held, out, ports)


def test_metrics_and_stats_per_listener(tmp_path, procs):
    """/metrics labels every socket series with its listener and has a
    series per listener; the stats line gives each listener's counts."""
    pa, pb = free_udp_port(), free_udp_port()
    with socket.socket() as t:  # a TCP port free on loopback
        t.bind(("127.0.0.1", 0))
        mport = t.getsockname()[1]
    rx = start(["--listen", f"x=127.0.0.1:{pa}", "--listen", f"y=127.0.0.1:{pb}",
                "--sockets", "1", "--threads", "1", "--output", "null",
                "--metrics", f"127.0.0.1:{mport}", "--stats-interval", "0.2"])
    procs.append(rx)
    send_all([(f"127.0.0.1:{pa}", "x", 7), (f"127.0.0.1:{pb}", "y", 5)])

    text = wait_until(lambda: (lambda t: t if 'syslogrx_listener_received_total{listener="x"} 10' in t
                               and 'syslogrx_listener_received_total{listener="y"} 8' in t
                               else None)(scrape(mport)), "per-listener series")
    assert 'syslogrx_socket_received_total{socket="0",listener="x"} 10' in text, text
    assert 'syslogrx_socket_received_total{socket="1",listener="y"} 8' in text, text
    # The no-socket drops: a series per listener's port, at 0 from the start.
    no_socket = sorted(l for l in text.splitlines()
                       if l.startswith("syslogrx_no_socket_drops_total"))
    assert no_socket == ['syslogrx_no_socket_drops_total{listener="x",reason="NO_SOCKET"} 0',
                         'syslogrx_no_socket_drops_total{listener="y",reason="NO_SOCKET"} 0'], \
        no_socket
    # one stats line per listener, each named
    text = read_until(rx, "stats: y ")
    assert re.search(r"stats: x \S+ rx \d+/s drop 0 ", text), text
    assert re.search(r"stats: y \S+ rx \d+/s drop 0 ", text), text
    rc, _, err = stop(rx)
    assert rc == 0, err


def test_lifecycle_refused_with_several_listeners(tmp_path, procs):
    """What a SIGHUP cannot change with several listeners is said with the
    reason, and nothing changes: --sockets past the pool each listener bound
    at start, a listener added (the receiver still receives on every
    listener, with its sockets as they were); with --balance hash, a
    --sockets change at all (the threads still change)."""
    pa, pb = free_udp_port(), free_udp_port()
    conf = tmp_path / "rx.conf"
    conf.write_text(f"listen = a=127.0.0.1:{pa}\nlisten = b=127.0.0.1:{pb}\nsockets = 2\n")
    rx = start(["--config", conf, "--output", "null", "--summary", tmp_path / "s.json"])
    procs.append(rx)
    conf.write_text(f"listen = a=127.0.0.1:{pa}\nlisten = b=127.0.0.1:{pb}\nsockets = 3\n")
    os.kill(rx.p.pid, signal.SIGHUP)
    seen = read_until(rx, "resize failed, 2 sockets, 2 threads")
    assert "resize: sockets 3 is more than the 2 each listener bound at start " \
        "(--max-sockets); nothing changed" in seen, seen
    # A listener added by SIGHUP: named as needing a restart, nothing bound.
    pc = free_udp_port()
    conf.write_text(f"listen = a=127.0.0.1:{pa}\nlisten = b=127.0.0.1:{pb}\n"
                    f"listen = c=127.0.0.1:{pc}\nsockets = 2\n")
    os.kill(rx.p.pid, signal.SIGHUP)
    seen = read_until(rx, "resized to 2 sockets, 2 threads", fail="resize failed")
    assert f"--listen changed in {conf}: needs a restart" in seen, seen
    assert not list(udp_rows(pc))
    sent = send_all([(f"127.0.0.1:{pa}", "a", 10), (f"127.0.0.1:{pb}", "b", 10)])
    wait_until(lambda: all(q == 0 for _, q in drops_by_inode((pa, pb)).values()), "queues empty")
    rc, _, err = stop(rx)
    assert rc == 0, err
    s = read_json(tmp_path / "s.json")
    assert {l["name"]: l["received"] for l in s["listeners"]} == {
        "a": sent["a"]["datagrams"], "b": sent["b"]["datagrams"]}, s["listeners"]
    assert [len([x for x in s["sockets"] if x["listener"] == n]) for n in "ab"] == [2, 2]
    # The kernel's hash selects every socket of a group: said at start and
    # at a SIGHUP, which applies the threads.
    hconf = tmp_path / "hash.conf"
    body = f"listen = a=127.0.0.1:{pa}\nlisten = b=127.0.0.1:{pb}\nbalance = hash\n"
    hconf.write_text(body + "sockets = 2\nthreads = 2\n")
    rx = start(["--config", hconf, "--output", "null"])
    procs.append(rx)
    reason = ("with several --listen and --balance hash, a live change of --sockets is not "
              "done (the kernel's hash selects every socket of a group, so a socket leaves "
              "it only by a close): a restart applies it")
    read_until(rx, reason)
    hconf.write_text(body + "sockets = 1\nthreads = 1\n")
    os.kill(rx.p.pid, signal.SIGHUP)
    seen = read_until(rx, "resized to 2 sockets, 1 threads", fail="resize failed")
    assert f"SIGHUP: --sockets 1 not applied: {reason}" in seen, seen
    rc, _, err = stop(rx)
    assert rc == 0, err


def test_sc4s_env_file_per_vendor_ports(tmp_path, procs, netns):
    """SC4S_LISTEN_DEFAULT_UDP_PORT=P1,P2 and SC4S_LISTEN_CISCO_ASA_UDP_PORT=P3
    (SC4S listens on 0.0.0.0: in a namespace of the test's own) give three
    named listeners, and each receives its own flow."""
    p1, p2, p3 = 5514, 5515, 5000
    env = tmp_path / "env_file"
    env.write_text(f"SC4S_LISTEN_DEFAULT_UDP_PORT={p1},{p2}\n"
                   f"SC4S_LISTEN_CISCO_ASA_UDP_PORT={p3}\n"
                   f"SC4S_LISTEN_CISCO_ASA_TCP_PORT={p3}\n")
    out = tmp_path / "out.json"
    rx = start(["--env-file", env, "--sockets", "1", "--threads", "1", "--format", "json", "--json-raw",
                "--output", f"file:{out}", "--summary", tmp_path / "s.json"],
               prefix=["ip", "netns", "exec", netns])
    procs.append(rx)
    for line in log_text(rx.early).splitlines():
        if "--env-file" in line:
            assert line.startswith(f"syslogrx: --env-file {env}:"), line
    assert f"--env-file {env}:3: SC4S_LISTEN_CISCO_ASA_TCP_PORT ignored (not a UDP listener)" \
        in rx.early
    names = {p1: "default_5514", p2: "default_5515", p3: "cisco_asa"}
    for port, name in names.items():
        r = subprocess.run(["ip", "netns", "exec", netns, binary("sysloggen"), "--target",
                            f"127.0.0.1:{port}", "--count", "5", "--run-id", name, "--json"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) == 3 * 8,
               "24 records written")
    rc, _, err = stop(rx)
    assert rc == 0, err
    s = read_json(tmp_path / "s.json")
    assert [(l["name"], l["listen"], l["received"]) for l in s["listeners"]] == [
        ("default_5514", "0.0.0.0:5514", 8), ("default_5515", "0.0.0.0:5515", 8),
        ("cisco_asa", "0.0.0.0:5000", 8)]
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        assert f"run={rec['listener']} " in rec["raw"], rec


def test_kafka_header_names_the_listener(tmp_path, procs):
    """--output kafka: each record carries a "listener" header (read back by
    kcat from a real broker) naming the listener its datagram came by."""
    from support.kafka_broker import KafkaBroker
    b = KafkaBroker(host="127.0.0.1", auto_create=False, partitions=1)
    try:
        b.start()
        b.warm_up()
        b.create_topic("lis", partitions=1)
        pa, pb = free_udp_port(), free_udp_port(socket.AF_INET6)
        rx = start(["--listen", f"edge=127.0.0.1:{pa}", "--listen", f"v6=[::1]:{pb}",
                    "--sockets", "1", "--threads", "1", "--output",
                    f"kafka:{b.bootstrap}/lis", "--summary", tmp_path / "s.json"])
        procs.append(rx)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s4, \
                socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s6:
            for i in range(5):
                s4.sendto(f"<13>to edge {i}".encode(), ("127.0.0.1", pa))
                s6.sendto(f"<13>to v6 {i}".encode(), ("::1", pb))
        b.wait_records("lis", 10)
        rc, _, err = stop(rx)
        assert rc == 0, err
        lines = b.consume("lis", fmt="%h\\t%s\\n").decode().splitlines()
        # every record also carries its sender ("source", ADDR:PORT) before
        # the listener: the address is checked, the port is the socket's own
        got = sorted(re.sub(r"^source=(127\.0\.0\.1|\[::1\]):\d+,", r"source=\1,", l)
                     for l in lines)
        assert got == sorted([f"source=127.0.0.1,listener=edge\t<13>to edge {i}"
                              for i in range(5)] +
                             [f"source=[::1],listener=v6\t<13>to v6 {i}" for i in range(5)]), got
    finally:
        b.close()


def start_flows(ports, flows, rate=10000, count=20000):
    """One paced sysloggen flow per listener (run ids a, b, c), in threads
    that fill flows[run] with its JSON summary; returns the threads."""
    def one(run, target):
        r = subprocess.run([binary("sysloggen"), "--target", target, "--rate", str(rate),
                            "--count", str(count), "--run-id", run, "--json"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        flows[run] = json.loads(r.stdout.strip().splitlines()[-1])

    threads = [threading.Thread(target=one, args=a)
               for a in (("a", f"127.0.0.1:{ports[0]}"), ("b", f"127.0.0.1:{ports[1]}"),
                         ("c", f"[::1]:{ports[2]}"))]
    for t in threads:
        t.start()
    return threads


def finish_flows(senders, flows, ports):
    """Waits for the flows to end and the receive queues to be read empty."""
    for t in senders:
        t.join(timeout=150)
    assert sorted(flows) == ["a", "b", "c"], flows
    wait_until(lambda: all(q == 0 for _, q in drops_by_inode(ports).values()),
               "the receive queues read empty")


def records_per_listener(out):
    """Records per listener in a json output, each checked to name the
    listener its run id was sent to (Python's JSON parser reads them)."""
    got = {"a": 0, "b": 0, "c": 0}
    with open(out, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            run = rec["raw"].split("run=", 1)[1][0]
            assert rec["listener"] == run, rec
            got[run] += 1
    return got


def three_ports():
    """Two free IPv4 ports and one IPv6 (on ::1)."""
    return (free_udp_port(), free_udp_port(), free_udp_port(socket.AF_INET6))


def conf_three(d, ports, more):
    """A --config file in d with the three listeners a, b, c and `more`;
    returns it and its text without the sockets/threads line a SIGHUP changes."""
    body = (f"listen = a=127.0.0.1:{ports[0]}\nlisten = b=127.0.0.1:{ports[1]}\n"
            f"listen = c=[::1]:{ports[2]}\n{more}")
    return d / "rx.conf", body


@pytest.mark.parametrize("who", ["root", "unprivileged"])
def test_three_listeners_through_thread_resizes_under_load(tmp_path, nobody_dir, who):
    """SIGHUP with --config changes --threads live under load (2 -> 1 -> 2)
    with three listeners: per listener, written + kernel drops = sent."""
    ports = three_ports()
    d = tmp_path if who == "root" else nobody_dir
    conf, body = conf_three(d, ports, "sockets = 2\n")
    conf.write_text(body + "threads = 2\n")
    out = d / "out.json"
    rx = start(["--config", conf, "--format", "json", "--json-raw", "--output", f"file:{out}", "--summary",
                d / "s.json"], NOTHING if who == "unprivileged" else ())
    try:
        for p in ports:
            wait_for_udp_port(p, count=2)
        flows = {}
        senders = start_flows(ports, flows)
        wait_until(lambda: out.exists() and out.stat().st_size > 0, "records written")
        for threads in (1, 2):
            conf.write_text(body + f"threads = {threads}\n")
            os.kill(rx.p.pid, signal.SIGHUP)
            read_until(rx, f"resized to 2 sockets, {threads} threads", fail="resize failed")
        finish_flows(senders, flows, ports)
        rc, _, err = stop(rx)
        assert rc == 0, err
    finally:
        if rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
    s = read_json(d / "s.json")
    got = records_per_listener(out)
    for l in s["listeners"]:
        n = l["name"]
        assert flows[n]["failed"] == 0, flows[n]
        assert got[n] == l["received"] and l["abandoned"] == 0, (got, l)
        assert got[n] + l["kernel_drops"] == flows[n]["datagrams"], (n, got, l, flows[n])
    assert s["config"]["threads"] == 2, s["config"]


def upgrade_then_stop(rx, finish):
    """kill -USR2 and wait for the new process to take over; finish() (the
    flows end); then the new process stopped, and the old one. Returns what
    the old one said up to the hand-over; no process is left on any path."""
    new = None
    try:
        os.kill(rx.p.pid, signal.SIGUSR2)
        said = read_until(rx, "done after the hand-over", fail="upgrade failed")
        took = [l for l in said.splitlines() if "took over" in l]
        assert took, said
        new = int(took[0].split("pid ", 1)[1].split()[0])
        finish()
        os.kill(new, signal.SIGTERM)
        wait_until(lambda: pid_gone(new), "the new process stopped")
        rc, _, err = stop(rx)
        assert rc == 0, err
    finally:
        for pid in [rx.p.pid] + ([new] if new else []):
            if not pid_gone(pid):
                os.kill(pid, signal.SIGKILL)
        rx.p.wait(timeout=30)
    return said


def live_per_listener(s):
    """{listener: sockets in selection} from a summary's sockets[]."""
    got = {}
    for sock in s["sockets"]:
        got[sock["listener"]] = got.get(sock["listener"], 0) + (sock["state"] == "live")
    return got


def held_selection_burst(rx, ports):
    """With one socket in selection: the receiver held, a burst to each
    listener lands on one socket of its group only (its queue or its drops
    grow, per /proc/net/udp), not on the spares the shrink left. Returns the
    bursts' sysloggen summaries (run ids ah, bh, ch)."""
    os.kill(rx.p.pid, signal.SIGSTOP)
    try:
        before = {p: {int(f[9]): (int(f[12]), int(f[4].split(":")[1], 16)) for f in udp_rows(p)}
                  for p in ports}
        sent = send_all([(f"127.0.0.1:{ports[0]}", "ah", 200), (f"127.0.0.1:{ports[1]}", "bh", 200),
                         (f"[::1]:{ports[2]}", "ch", 200)])
        after = {p: {int(f[9]): (int(f[12]), int(f[4].split(":")[1], 16)) for f in udp_rows(p)}
                 for p in ports}
    finally:
        os.kill(rx.p.pid, signal.SIGCONT)
    for p in ports:
        took = [i for i in after[p] if after[p][i] != before[p].get(i)]
        assert len(before[p]) == 3 and len(took) == 1, (p, before[p], after[p])
    return sent


@pytest.mark.parametrize("who", ["root", "user-nobody", "unprivileged"])
def test_three_listeners_through_socket_resizes_and_an_upgrade_under_load(tmp_path, nobody_dir,
                                                                          who):
    """SIGHUP with --config changes --sockets live under load (2 -> 1 -> 3
    -> 2, a pool of 3 per listener) on each of three listeners, each with its
    own balancer (or classic BPF program), then kill -USR2 hands every
    listener's group over, spares included: per listener, the records both
    processes wrote + the kernel's drops = what was sent, and each listener
    has the new count in selection."""
    ports = three_ports()
    d = tmp_path if who == "root" else nobody_dir
    conf, body = conf_three(d, ports, "max-sockets = 3\nthreads = 1\n")
    conf.write_text(body + "sockets = 2\n")
    out = d / "out.json"
    prefix = NOTHING if who == "unprivileged" else ()
    extra = ["--user", "nobody"] if who == "user-nobody" else []
    rx = start(["--config", conf, "--format", "json", "--json-raw", "--output", f"file:{out}",
                "--summary", d / "s.json"] + extra, prefix)
    try:
        for p in ports:
            wait_for_udp_port(p, count=3)
        flows = {}
        senders = start_flows(ports, flows, count=40000)
        wait_until(lambda: out.exists() and out.stat().st_size > 0, "records written")
        burst = {}
        for n in (1, 3, 2):
            conf.write_text(body + f"sockets = {n}\n")
            os.kill(rx.p.pid, signal.SIGHUP)
            said = read_until(rx, f"resized to {n} sockets, 1 threads", fail="resize failed")
            assert "not applied" not in said and "nothing changed" not in said, said
            if n == 1:
                burst = held_selection_burst(rx, ports)
        upgrade_then_stop(rx, lambda: finish_flows(senders, flows, ports))
    finally:
        if rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
    s_new = read_json(d / "s.json")
    s_old = read_json(d / f"s.json.{rx.p.pid}")
    assert live_per_listener(s_old) == {"a": 2, "b": 2, "c": 2}, s_old["sockets"]
    assert live_per_listener(s_new) == {"a": 2, "b": 2, "c": 2}, s_new["sockets"]
    # The pool went over with the group: every listener's three sockets.
    assert {l["name"]: l["sockets"] for l in s_new["listeners"]} == {"a": 3, "b": 3, "c": 3}
    drops = {l["name"]: l["kernel_drops"] for l in s_new["listeners"]}
    got = records_per_listener(out)
    for name in "abc":
        assert flows[name]["failed"] == 0, flows[name]
        old = next(l for l in s_old["listeners"] if l["name"] == name)
        new_l = next(l for l in s_new["listeners"] if l["name"] == name)
        assert old["abandoned"] == 0 and new_l["abandoned"] == 0, (old, new_l)
        assert old["received"] + new_l["received"] == got[name], (old, new_l, got)
        sent = flows[name]["datagrams"] + burst[name + "h"]["datagrams"]
        assert got[name] + drops[name] == sent, (name, got, drops, flows[name], burst)
    # Each listener's balancer (or program) spread its flow over its sockets.
    by = {}
    for sock in s_old["sockets"]:
        by.setdefault(sock["listener"], []).append(sock["received"])
    assert all(sum(1 for x in v if x > 0) >= 2 for v in by.values()), by


def pid_gone(pid):
    """Exited (a zombie counts: its parent may be a subreaper that reaps later)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("who", ["root", "user-nobody", "unprivileged"])
def test_three_listeners_through_an_upgrade_under_load(tmp_path, nobody_dir, who):
    """kill -USR2 while three flows, one per listener, run: the new process
    takes every listener's group (checked by cookie, its balancer's map, its
    tracer), and per listener nothing is missing: the records written by
    both processes + the kernel's drops = what was sent; each record names
    its listener."""
    ports = (free_udp_port(), free_udp_port(), free_udp_port(socket.AF_INET6))
    d = tmp_path if who == "root" else nobody_dir
    out = d / "out.json"
    prefix = NOTHING if who == "unprivileged" else ()
    extra = ["--user", "nobody"] if who == "user-nobody" else []
    rx = start(["--listen", f"a=127.0.0.1:{ports[0]}", "--listen", f"b=127.0.0.1:{ports[1]}",
                "--listen", f"c=[::1]:{ports[2]}", "--sockets", "2", "--threads", "2",
                "--format", "json", "--json-raw", "--output", f"file:{out}", "--summary",
                d / "s.json"] + extra, prefix)
    try:
        for p in ports:
            wait_for_udp_port(p, count=2)
        flows = {}
        senders = start_flows(ports, flows)
        wait_until(lambda: out.exists() and out.stat().st_size > 0, "records written")
        said = upgrade_then_stop(rx, lambda: finish_flows(senders, flows, ports))
    finally:
        if rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
    took = [l for l in said.splitlines() if "took over" in l]
    assert f"a=127.0.0.1:{ports[0]}, b=127.0.0.1:{ports[1]}, c=[::1]:{ports[2]}" in took[0], said
    s_new = read_json(d / "s.json")
    s_old = read_json(d / f"s.json.{rx.p.pid}")
    # The new process's drop counts go on from the old one's (the same
    # sockets, the same tracer maps or SO_MEMINFO counters).
    drops = {l["name"]: l["kernel_drops"] for l in s_new["listeners"]}
    got = records_per_listener(out)
    for name in "abc":
        assert flows[name]["failed"] == 0, flows[name]
        assert got[name] + drops[name] == flows[name]["datagrams"], (name, got, drops, flows[name])
        old = next(l for l in s_old["listeners"] if l["name"] == name)
        new_l = next(l for l in s_new["listeners"] if l["name"] == name)
        assert old["received"] > 0 and new_l["received"] > 0, (old, new_l)
        assert old["received"] + new_l["received"] == got[name], (old, new_l, got)


def test_three_listeners_restart_through_the_fd_store(tmp_path):
    """systemd's fd store (a stand-in, support.fdstore.FdStore) with three
    listeners: each listener's sockets stored under a name that says its
    listener, its balancer's maps and tracer too; a SIGHUP shrinks every
    listener from 2 sockets to 1 (a pool of 3 each); stop, then start from
    the store while three flows run: each listener's group comes back with
    1 in selection and its spares, and per listener nothing is missing."""
    from support.fdstore import FdStore
    store = FdStore(tmp_path)
    ports = three_ports()
    out = tmp_path / "out.json"
    conf, body = conf_three(tmp_path, ports, "max-sockets = 3\nthreads = 1\n")
    conf.write_text(body + "sockets = 2\n")
    args = ["--config", conf, "--format", "json", "--json-raw", "--output", f"file:{out}"]
    rx1 = rx2 = None
    try:
        rx1 = start(args + ["--summary", tmp_path / "s1.json"],
                    env={**os.environ, "NOTIFY_SOCKET": store.path})
        store.collect()
        names = sorted(store.fds)
        assert sum(n.startswith("srx-sock-") for n in names) == 9, names
        assert sum(n.startswith("srx-sock-") and n.endswith("-l1") for n in names) == 3, names
        assert sum(n.startswith("srx-sock-") and n.endswith("-l2") for n in names) == 3, names
        assert any(n.startswith("srx-map-balancer2-") for n in names), names
        assert sum(n.startswith("srx-link-tracer1-") for n in names) == 3, names
        flows = {}
        senders = start_flows(ports, flows)
        wait_until(lambda: out.exists() and out.stat().st_size > 0, "records written")
        conf.write_text(body + "sockets = 1\n")
        os.kill(rx1.p.pid, signal.SIGHUP)
        read_until(rx1, "resized to 1 sockets, 1 threads", fail="resize failed")
        rc1, _, err1 = stop(rx1)                 # systemctl restart: stop ...
        assert rc1 == 0, err1
        prefix, env, fds = store.restart_argv()  # ... and start, from the store
        rx2 = start(args + ["--summary", tmp_path / "s2.json"], prefix,
                    env={**os.environ, **env}, pass_fds=fds)
        store.collect()
        finish_flows(senders, flows, ports)
        rc2, _, err2 = stop(rx2)
        assert rc2 == 0, err2
    finally:
        for rx in (rx1, rx2):
            if rx and rx.p.poll() is None:
                rx.p.kill()
                rx.p.wait()
        store.close()
    assert "(fd store)" in rx2.early + err2, err2
    s1, s2 = read_json(tmp_path / "s1.json"), read_json(tmp_path / "s2.json")
    assert sorted(x["cookie"] for x in s1["sockets"]) == sorted(x["cookie"] for x in s2["sockets"])
    assert live_per_listener(s1) == live_per_listener(s2) == {"a": 1, "b": 1, "c": 1}, \
        (s1["sockets"], s2["sockets"])
    assert {l["name"]: l["sockets"] for l in s2["listeners"]} == {"a": 3, "b": 3, "c": 3}
    got = records_per_listener(out)
    for name in "abc":
        l1 = next(l for l in s1["listeners"] if l["name"] == name)
        l2 = next(l for l in s2["listeners"] if l["name"] == name)
        assert l1["abandoned"] == 0, l1           # the queues were left to the next one
        assert l1["received"] + l2["received"] == got[name], (l1, l2, got)
        assert got[name] + l2["kernel_drops"] == flows[name]["datagrams"], (name, got, l2)


def test_three_listeners_supervised_with_a_crash(tmp_path):
    """--supervise with three listeners: the supervisor binds and holds every
    listener's group, each child takes them all over (checked by cookie);
    after a kill -9 of a child under load, sent = written by all children +
    kernel drops + what the supervisor counts lost in the killed child's
    window (the kernel counts what each child took from every listener)."""
    ports = (free_udp_port(), free_udp_port(), free_udp_port(socket.AF_INET6))
    out = tmp_path / "out.json"
    rx = start(["--listen", f"a=127.0.0.1:{ports[0]}", "--listen", f"b=127.0.0.1:{ports[1]}",
                "--listen", f"c=[::1]:{ports[2]}", "--sockets", "2", "--threads", "2",
                "--supervise", "--format", "json", "--json-raw", "--output", f"file:{out}",
                "--summary", tmp_path / "s.json"])
    try:
        child = int(read_until(rx, "supervisor started receiver pid").split("receiver pid ")[1]
                    .split()[0])
        flows = {}
        senders = start_flows(ports, flows)
        wait_until(lambda: out.exists() and out.stat().st_size > 0, "records written")
        os.kill(child, signal.SIGKILL)
        read_until(rx, "killed by signal 9")
        read_until(rx, "supervisor started receiver pid")
        finish_flows(senders, flows, ports)
        rc, _, err = stop(rx)
        assert rc == 0, err
    finally:
        if rx.p.poll() is None:
            rx.p.kill()
            rx.p.wait()
    sup = read_json(tmp_path / "s.json.supervisor")
    final = read_json(tmp_path / "s.json")
    assert sup["restarts"] == 1 and len(sup["children"]) == 2, sup
    assert sorted(l["name"] for l in final["listeners"]) == ["a", "b", "c"]
    written = sum(c["written"] for c in sup["children"])
    # The tracers' maps span both children: the drops of the whole run.
    drops = sum(l["kernel_drops"] + l["no_socket_drops"] for l in final["listeners"])
    sent = sum(f["datagrams"] for f in flows.values())
    assert sent == written + drops + sup["window_lost"], (sent, written, drops, sup)
    # Each record the file holds whole names the listener it was sent to.
    whole = 0
    for line in out.read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line a kill -9 tore (counted lost)
        assert rec["listener"] == rec["raw"].split("run=", 1)[1][0], rec
        whole += 1
    assert whole >= written - sup["window_lost"], (whole, written)
