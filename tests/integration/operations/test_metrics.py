"""--metrics: GET /metrics while syslogrx runs, the same numbers as the summary
at exit, per socket and per drop reason, under a load with drops; valid text
by `promtool check metrics` (Debian's prometheus package, unpacked by
lab/promtool-setup.sh, never run as a service); udpdrops --metrics too."""
import errno
import json
import os
import select
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from support.load import send_udp
from support.paths import binary
from support.procs import Proc, promtool, run_cmd, wait_until
from support.udpdrops import finish, proc_drops, start_receiver, start_udpdrops
from support.prom import parse, scrape, series, value
from support.ports import free_tcp_port, free_udp_port


def check_with_promtool(text):
    r = subprocess.run([promtool(), "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", \
        f"promtool check metrics: rc {r.returncode}\n{r.stdout}{r.stderr}"


def caps_of_threads(pid, at_least=1):
    """{tid: CapEff} of pid's threads, or None while it has fewer than at_least."""
    caps = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    caps[tid] = int(line.split()[1], 16)
    return caps if len(caps) >= at_least else None


COST_NS = 2_000_000


def test_scrape_equals_summary_under_drops(syslogrx):
    port, mport = free_udp_port(), free_tcp_port()
    # Workers of 2 ms a message (at most 1,000/s for both): any sender
    # overflows their 64K queues, the drops are structural.
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", "random", "--rcvbuf", "64K",
                  "--cost-ns", str(COST_NS), "--metrics", str(mport), port=port)
    # A port alone binds loopback.
    line = rx.p.stderr.readline().decode()
    assert f"metrics on http://127.0.0.1:{mport}/metrics" in line, line

    # Before any traffic: served, and every thread (the HTTP server's included) holds no capability.
    m = parse(scrape(mport))
    assert value(m, "syslogrx_build_info", version="0.1") == 1
    assert sum(series(m, "syslogrx_socket_received_total").values()) == 0
    # The workers start after the ready line: every thread once they are up.
    caps = wait_until(lambda: caps_of_threads(rx.p.pid, at_least=4), "the workers' threads")
    assert all(c == 0 for c in caps.values()), caps

    # Scraped all through the load: counters never go backwards.
    scrapes, done = [], threading.Event()

    def scraper():
        while not done.is_set() and len(scrapes) < 500:
            scrapes.append(parse(scrape(mport)))
            time.sleep(0.01)

    th = threading.Thread(target=scraper)
    th.start()
    t0 = time.monotonic()
    try:
        r = run_cmd([binary("sysloggen"), "--target", f"127.0.0.1:{port}", "--count", "60000",
                     "--rate", "200000", "--size", "200", "--json"], timeout=60)
        sending = time.monotonic() - t0
    finally:
        done.set()
        th.join(timeout=30)
    assert r.returncode == 0, r.stderr
    sent = json.loads(r.stdout.splitlines()[-1])["datagrams"]   # messages + end markers
    assert len(scrapes) >= 2
    for a, b in zip(scrapes, scrapes[1:]):
        for key, v in a.items():
            if key[0].endswith("_total"):
                assert b.get(key, 0) >= v, (key, v, b.get(key))

    # Scrape until the workers have emptied the kernel queues and the window
    # and nothing moves any more (bounded): what SIGTERM finds is then nothing.
    prev, deadline = None, time.monotonic() + 30
    while True:
        text = scrape(mport)
        m = parse(text)
        # the window's full time is a clock: compare the rest
        still = {k: v for k, v in m.items() if k[0] != "syslogrx_window_full_seconds_total"}
        if (sum(series(m, "syslogrx_socket_queued_bytes").values()) == 0
                and value(m, "syslogrx_window_messages") == 0 and still == prev):
            break
        prev = still
        assert time.monotonic() < deadline, "syslogrx did not settle within 30 s"
        time.sleep(0.3)
    # 404 elsewhere, 405 for another method.
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(mport, "/other")
    assert e.value.code == 404
    req = urllib.request.Request(f"http://127.0.0.1:{mport}/metrics", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 405

    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    t = s["totals"]
    check_with_promtool(text)

    drops = t["kernel_drops"]["total"]
    # At most what two 2 ms workers read while the sender sent (a batch
    # each besides) and what the four queues held (each datagram takes more
    # than its 200 bytes): the rest was dropped, at any machine's speed.
    can_take = sending * 2 * 1e9 / COST_NS + 2 * 64 + sum(k["rcvbuf"] // 200 + 1
                                                            for k in s["sockets"])
    assert drops >= sent - can_take, (drops, sent, can_take)
    assert t["received"] + drops == sent

    # Per socket and per reason: the scrape is the summary.
    reasons_seen = set()
    for sock in s["sockets"]:
        i = sock["index"]
        assert value(m, "syslogrx_socket_received_total", socket=i) == sock["received"]
        assert value(m, "syslogrx_socket_received_bytes_total", socket=i) == sock["bytes"]
        assert value(m, "syslogrx_socket_truncated_total", socket=i) == sock["truncated"]
        assert value(m, "syslogrx_socket_steered_total", socket=i) == sock["steered"]
        assert value(m, "syslogrx_socket_rcvbuf_bytes", socket=i) == sock["rcvbuf"]
        assert value(m, "syslogrx_socket_queue_hwm_bytes", socket=i) == sock["queue_hwm_bytes"]
        assert value(m, "syslogrx_socket_so_meminfo_drops_total", socket=i) == \
            sock["so_meminfo_drops"]
        scraped = {dict(l)["reason"]: v for l, v in
                   series(m, "syslogrx_socket_kernel_drops_total", socket=i).items()}
        # The reasons the alerts watch are there from the start, at 0.
        assert scraped.pop("PROTO_MEM") == 0
        summary_reasons = {k: v for k, v in sock["kernel_drops"].items() if k != "total"}
        assert scraped == summary_reasons, (i, scraped, summary_reasons)
        assert sock["kernel_drops"]["total"] > 0
        reasons_seen |= set(scraped)
    assert reasons_seen == {"SOCKET_RCVBUFF"}

    assert value(m, "syslogrx_written_total") == t["written"] == t["received"]
    assert value(m, "syslogrx_discarded_total") == t["discarded"]
    # Raw output parses nothing: no malformed count, no series.
    assert t["malformed"] is None and series(m, "syslogrx_malformed_total") == {}
    assert value(m, "syslogrx_abandoned_total") == t["abandoned"]
    assert value(m, "syslogrx_selection_failures_total") == t["selection_failures"]
    assert value(m, "syslogrx_tracer_map_full_total") == t["tracer_map_full"]
    assert value(m, "syslogrx_output_errors_total") == 0
    assert series(m, "syslogrx_no_socket_drops_total") == {(("reason", "NO_SOCKET"),): 0}
    assert value(m, "syslogrx_sequence_gaps") == s["loss"]["missing"]
    w = s["window"]
    assert value(m, "syslogrx_window_hwm_messages") == w["hwm"] > 0
    assert value(m, "syslogrx_window_size_messages") == w["size"]
    assert abs(value(m, "syslogrx_window_full_seconds_total") - w["full_seconds"]) <= 0.0011


# Every counter series the alerting rules watch, as a scrape right after the
# start must show it: at 0 (dist/syslogrx-alerts.yml: increase() sees a first
# burst only as a step from an earlier sample of the same series).
AT_START = [("syslogrx_socket_kernel_drops_total", dict(reason="SOCKET_RCVBUFF")),
            ("syslogrx_socket_kernel_drops_total", dict(reason="PROTO_MEM")),
            ("syslogrx_socket_so_meminfo_drops_total", {}),
            ("syslogrx_no_socket_drops_total", dict(reason="NO_SOCKET")),
            ("syslogrx_window_full_seconds_total", {}),
            ("syslogrx_output_errors_total", {}),
            ("syslogrx_discarded_total", {}),
            ("syslogrx_written_total", {}),
            ("syslogrx_window_messages", {}),
            ("syslogrx_selection_failures_total", {}),
            ("syslogrx_tracer_map_full_total", {})]


def test_series_the_alerts_watch_are_at_zero_from_the_start(syslogrx):
    port, mport = free_udp_port(), free_tcp_port()
    rx = syslogrx("--sockets", "3", "--balance", "random", "--metrics", str(mport), port=port)
    m = parse(scrape(mport))
    for name, labels in AT_START:
        got = series(m, name, **labels)
        # per socket where the family is per socket, else one series
        want = 3 if name.startswith("syslogrx_socket_") else 1
        assert len(got) == want and set(got.values()) == {0}, (name, labels, got)
        if want == 3:
            assert {dict(l)["socket"] for l in got} == {"0", "1", "2"}, (name, got)
    # Nothing else was dropped, so the books are still closed.
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert rx.summary["totals"]["kernel_drops"]["total"] == 0


def test_metrics_flag_refusals(tmp_path):
    port = free_udp_port()
    for bad in ("notaport", "127.0.0.1:99999", "1.2.3:80"):
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--metrics", bad,
                     "--duration", "0.1"])
        assert r.returncode == 2, r.stderr
        assert f"--metrics {bad}: expected PORT or ADDR:PORT" in r.stderr
    # A port in use: the flag and the error named, exit 2, nothing left behind.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        mport = busy.getsockname()[1]
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--metrics",
                     f"127.0.0.1:{mport}", "--duration", "0.1"])
    assert r.returncode == 2, r.stderr
    assert f"--metrics 127.0.0.1:{mport}: Address already in use" in r.stderr


def test_udpdrops_metrics(procs):
    mport = free_tcp_port()
    recv, hello = start_receiver(procs, n=2)
    port = hello["port"]
    ud = start_udpdrops(procs, "--port", str(port), "--interval", "0.2",
                        "--metrics", f"127.0.0.1:{mport}")
    line = ud.p.stderr.readline().decode()
    assert f"metrics on http://127.0.0.1:{mport}/metrics" in line, line
    # The receiver reads nothing: its 4 KB queues overflow.
    send_udp("127.0.0.1", port, 400, size=300)
    # One flow: the kernel's hash puts it on one socket; a series per socket
    # and reason seen, so the other has none.
    kernel = {s["inode"]: proc_drops(s["inode"]) for s in hello["socks"]}
    kernel = {inode: d for inode, d in kernel.items() if d}
    assert sum(kernel.values()) > 0

    deadline, m = time.monotonic() + 10, None
    while time.monotonic() < deadline:
        text = scrape(mport)
        m = parse(text)
        got = {int(dict(l)["inode"]): v for l, v in
               series(m, "udpdrops_socket_drops_total", reason="SOCKET_RCVBUFF").items()}
        if got == kernel:
            break
        time.sleep(0.2)
    assert got == kernel, (got, kernel)
    check_with_promtool(text)
    for s in hello["socks"]:
        labels = dict(pid=hello["pid"], comm="python3", local=f"127.0.0.1:{port}",
                      inode=s["inode"])
        assert value(m, "udpdrops_socket_rcvbuf_bytes", **labels) == s["rcvbuf"]
        loaded = s["inode"] in kernel
        assert (value(m, "udpdrops_socket_queue_hwm_bytes", **labels) > 0) == loaded
        assert (value(m, "udpdrops_socket_queued_bytes", **labels) > 0) == loaded
        assert value(m, "udpdrops_socket_enqueue_failures_total", **labels) == \
            kernel.get(s["inode"], 0)

    # Close the receiver: datagrams to the port now have no socket.
    recv.p.stdin.close()
    recv.p.wait(timeout=10)
    send_udp("127.0.0.1", port, 7, size=50)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m = parse(scrape(mport))
        ns = series(m, "udpdrops_no_socket_drops_total", port=port)
        if ns:
            break
        time.sleep(0.2)
    assert ns == {(("reason", "NO_SOCKET"),): 7}, ns
    rc, _, err = ud.stop()
    assert rc == 0, err


def server_conns(mport, state=None):
    """The metrics server's TCP connections (local port mport) as ss sees
    them: [(state, peer address)]."""
    argv = ["ss", "-Htn", "state", state] if state else ["ss", "-Htan"]
    r = run_cmd(argv + [f"sport = :{mport}"])
    assert r.returncode == 0, r.stderr
    rows = []
    for line in r.stdout.splitlines():
        f = line.split()
        if state:   # no state column
            rows.append((state, f[-1].rsplit(":", 1)[0]))
        elif f[0] != "LISTEN":
            rows.append((f[0], f[-1].rsplit(":", 1)[0]))
    return rows


def test_idle_clients_do_not_hold_off_a_scrape(syslogrx):
    """100 connections from 127.0.0.2 that sent a request line and nothing
    more: the server holds a few (its limit per address), refuses the rest at
    once, and a scrape from 127.0.0.1 is answered while those few are still
    held (not after they time out). Once the clients leave nothing is left in
    CLOSE-WAIT."""
    port, mport = free_udp_port(), free_tcp_port()
    rx = syslogrx("--metrics", f"127.0.0.1:{mport}", port=port)
    idle = []
    try:
        for _ in range(100):
            c = socket.socket()
            c.bind(("127.0.0.2", 0))
            c.setblocking(False)
            assert c.connect_ex(("127.0.0.1", mport)) in (0, errno.EINPROGRESS)
            idle.append(c)
        for c in idle:   # each sends its request line once it is connected
            select.select([], [c], [], 10)
            try:
                c.send(b"GET /metrics HTTP/1.1\r\n")
            except OSError:
                pass     # refused already: fine
        # The event: every client is either held by the server (ESTAB on its
        # side) or was closed by it (EOF or reset on ours).
        def settled():
            held = [p for s, p in server_conns(mport, "established") if p == "127.0.0.2"]
            closed = 0
            for c in idle:
                try:
                    closed += c.recv(1, socket.MSG_PEEK) == b""
                except BlockingIOError:
                    pass
                except OSError:
                    closed += 1
            return (len(held), closed) if len(held) + closed == 100 else None
        held, closed = wait_until(settled, "the server held or closed every idle client", 20)
        assert 1 <= held <= 8, (held, closed)

        # A scrape from 127.0.0.1, answered while the idle ones are held.
        m = parse(scrape(mport))
        assert value(m, "syslogrx_build_info", version="0.1") == 1
        still = [p for s, p in server_conns(mport, "established") if p == "127.0.0.2"]
        assert len(still) == held, (still, held)
    finally:
        for c in idle:
            c.close()
    # They left: the server closes its ends (no CLOSE-WAIT kept until a
    # timeout), and scrapes go on.
    wait_until(lambda: not server_conns(mport, "close-wait") and
               not [p for s, p in server_conns(mport) if p == "127.0.0.2"],
               "the server closed what the idle clients left", 4)
    parse(scrape(mport))
    rc, _, err = rx.stop()
    assert rc == 0, err
