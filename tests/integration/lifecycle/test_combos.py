"""Features together (issue 19): every pair an operator runs, under load, with
the books closed: sent = written + counted drops, to the message; what is not
supported together is refused at start (docs/combinations.md keeps the matrix).

Upgrade in place (kill -USR2) with --metrics (the listening socket is handed
over, scrapes answered throughout), with the TCP and the Kafka outputs, with a
disk buffer (DIR/lock handed over, never raced); metrics scraped during live
resizes; the supervisor with metrics, a crash and an upgrade.

These tests read the sequence numbers sysloggen writes into each message from
the output itself: they need no sequence accounting inside syslogrx."""
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error

import pytest

from support.paths import binary
from support.procs import log_text, read_json, run_cmd, sysloggen
from support.rx_watch import Receiver, SEQ, listen_for, seqs_in_output, start_load, stop_load, wait_gone
from support.ports import free_tcp_port, free_udp_port
from support.prom import parse, scrape
from support.otel_collector import Collector, LogSink
from support.tls_server import Pki, SyslogNgTls
from support.tcp_sinks import FrameSink
from support.defaults import NOBODY
from support.books import RATE, check_books, run_load, summaries, upgraded_twice_delivered
from support.fds import handover_socket


class Scraper:
    """GET /metrics every 50 ms on a thread until stopped: every answer, or
    the error in its place (a refused scrape is a failure of the test)."""

    def __init__(self, port):
        self.port = port
        self.samples = []           # (monotonic time, {(name, labels): value})
        self.errors = []
        self.done = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.done.is_set():
            try:
                m = parse(scrape(self.port))
                self.samples.append((time.monotonic(), m))
            except (OSError, urllib.error.URLError) as e:
                self.errors.append(repr(e))
            self.done.wait(0.05)

    def wait_more(self, n=3, timeout=30):
        """Until n more scrapes were answered."""
        want = len(self.samples) + n
        deadline = time.monotonic() + timeout
        while len(self.samples) < want:
            assert time.monotonic() < deadline and not self.errors, self.errors
            time.sleep(0.02)

    def stop(self):
        """Stops (once); the answers' samples."""
        self.done.set()
        self.t.join(timeout=30)
        return [s for _, s in self.samples]


# ---- upgrade x metrics -----------------------------------------------------

def test_upgrade_with_metrics_scraped_throughout(tmp_path):
    """The metrics socket goes with the others: no 'Address already in use',
    every scrape answered before, during and after three upgrades; a counter
    goes back only where a new process took over (never within one)."""
    mport = free_tcp_port()
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "16M", "--metrics", f"127.0.0.1:{mport}",
                  settings={"sockets": 4, "threads": 2})
    sc = Scraper(mport)
    try:
        def upgrades():
            for _ in range(3):
                sc.wait_more()
                assert rx.upgrade() is not None, "".join(rx.lines)
                wait_gone(rx.olds[-1], 60)     # only the new one serves now
                sc.wait_more()
        sent, err, final = run_load(rx, listen, upgrades, scraper=sc)
    finally:
        samples = sc.stop()
    assert sc.errors == [] and len(samples) >= 12, sc.errors
    assert "Address already in use" not in err and "upgrade failed" not in err
    written = [s[("syslogrx_written_total", frozenset())] for s in samples]
    backwards = sum(1 for a, b in zip(written, written[1:]) if b < a)
    assert backwards <= 3, written
    check_books(sent, summaries(rx, final), final, {
        k: sorted(v) for k, v in seqs_in_output(rx.out).items()})


# ---- upgrade x outputs x disk buffer ---------------------------------------

@pytest.mark.parametrize("disk,user", [(None, None), ("spill", None), ("reliable", None),
                                       ("reliable", "nobody")],
                         ids=["none", "spill", "reliable", "reliable-user-nobody"])
def test_upgrade_with_tcp_output(tmp_path, disk, user):
    """Both processes forward to the same server on their own connections;
    with a disk buffer the DIR is handed over (the new process opens it once
    the old one wrote its last record): nothing lost, nothing twice. As
    --user nobody, DIR and its files are nobody's (opened after the drop)."""
    if user:
        tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="srx-i19-ud-"))
        os.chown(tmp_path, NOBODY, NOBODY)
    sink = FrameSink()
    listen = listen_for(socket.AF_INET)
    extra = []
    if disk:
        extra = ["--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", disk]
    if user:
        extra += ["--user", user]
    rx = Receiver(tmp_path, listen, "--rcvbuf", "64M", "--output",
                  f"tcp:127.0.0.1:{sink.port}", *extra,
                  settings={"sockets": 4, "threads": 2})
    try:
        def upgrades():
            for _ in range(2):
                assert rx.upgrade() is not None, "".join(rx.lines)
                wait_gone(rx.olds[-1], 60)
                time.sleep(0.3)
        sent, err, final = run_load(rx, listen, upgrades)
    finally:
        sink.close()
    all_s = summaries(rx, final)
    assert len(sink.msgs) == sum(s["totals"]["written"] for s in all_s)
    if disk:
        for s in all_s:
            d = s["disk_buffer"]
            # Nothing dropped or damaged; and nothing the old process wrote
            # read again by the new one (it had delivered it all).
            assert d["dropped"] == 0 and d["corrupt"] == 0 and d["recovered"] == 0, d
        # Reliable: every batch went through the disk, in each process.
        if disk == "reliable":
            assert all(s["disk_buffer"]["written"] > 0 for s in all_s)
        assert sorted(os.listdir(tmp_path / "db")) == ["lock"]      # all delivered
        if user:
            assert os.stat(tmp_path / "db").st_uid == NOBODY
            assert os.stat(tmp_path / "db" / "lock").st_uid == NOBODY
    # A disk buffer opens last in an upgrade: the kernel queues carry the gap.
    check_books(sent, all_s, final, sink.flows(), exact=not disk)
    if user:
        shutil.rmtree(tmp_path, ignore_errors=True)


def tls_destination():
    """A started syslog-ng TLS source (its own PKI in a folder all can read)
    and syslogrx's flags for it; (server, flags, folder)."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="srx-tls-combo-"))
    os.chmod(work, 0o755)               # nobody reads the PKI, syslog-ng root's dir
    pki = Pki(work / "pki")
    os.chmod(work / "pki", 0o755)
    sng = SyslogNgTls(work, pki, peer_verify="required-trusted").start()
    return sng, ["--output", f"tls:127.0.0.1:{sng.port}", "--tls-ca", pki.path("ca.pem"),
                 "--tls-cert", pki.path("client.pem"), "--tls-key", pki.path("client.key")], work


def tls_flows(lines):
    flows = {}
    for m in lines:
        s = SEQ.search(m)
        assert s, m
        flows.setdefault(int(s.group(1)), []).append(int(s.group(2)))
    return flows


@pytest.mark.parametrize("disk,user", [(None, None), ("reliable", "nobody")],
                         ids=["none", "reliable-user-nobody"])
def test_upgrade_with_tls_output(tmp_path, disk, user):
    """The tls output (RFC 5425, a client certificate) into syslog-ng's TLS
    source, two upgrades under load: each process makes its own session
    (the new one reads the certificate files again, as nobody with --user)
    and ends it with close_notify; nothing lost, nothing twice."""
    sng, extra, work = tls_destination()
    if user:
        tmp_path = work / "rx"
        tmp_path.mkdir()
        os.chown(tmp_path, NOBODY, NOBODY)
    listen = listen_for(socket.AF_INET)
    if disk:
        extra += ["--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", disk]
    if user:
        extra += ["--user", user]
    try:
        rx = Receiver(tmp_path, listen, "--rcvbuf", "64M", *extra,
                      settings={"sockets": 4, "threads": 2})

        def upgrades():
            for _ in range(2):
                assert rx.upgrade() is not None, "".join(rx.lines)
                wait_gone(rx.olds[-1], 60)
                time.sleep(0.3)
        sent, err, final = run_load(rx, listen, upgrades)
        all_s = summaries(rx, final)
        written = sum(s["totals"]["written"] for s in all_s)
        lines = sng.wait_lines(written)
    finally:
        sng.stop()
    assert len(lines) == written
    if disk:
        for s in all_s:
            d = s["disk_buffer"]
            assert d["dropped"] == 0 and d["corrupt"] == 0 and d["recovered"] == 0, d
            # reliable: every message a process received went to the disk
            # first (a process a loaded host gave no datagram wrote none)
            assert d["written"] == s["totals"]["received"], (d, s["totals"])
        assert sum(s["disk_buffer"]["written"] for s in all_s) > 0
        assert sorted(os.listdir(tmp_path / "db")) == ["lock"]
    check_books(sent, all_s, final, tls_flows(lines), exact=not disk)
    shutil.rmtree(work, ignore_errors=True)


# ---- destination down at start x upgrade x disk buffer --------------------------------

@pytest.mark.parametrize("kind", ["tls-reliable-user-nobody",
                                  pytest.param("otlp", marks=pytest.mark.background_build)])
def test_upgrade_while_the_destination_is_down_is_refused_then_works(tmp_path, kind):
    """Started with the destination down, under load: kill -USR2 is refused
    with the reason (the old process would wait for the destination to
    drain its window) and the process goes on; the destination comes up,
    everything held arrives, and an upgrade then works. Books closed."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="srx-down-up-"))
    extra = []
    if kind.startswith("tls"):
        # as nobody: the PKI readable by all, syslogrx's folder nobody's
        os.chmod(work, 0o755)
        pki = Pki(work / "pki")
        os.chmod(work / "pki", 0o755)
        dest = SyslogNgTls(work, pki)
        tmp_path = work / "rx"
        tmp_path.mkdir()
        os.chown(tmp_path, NOBODY, NOBODY)
        extra = ["--output", f"tls:127.0.0.1:{dest.port}", "--tls-ca", pki.path("ca.pem"),
                 "--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode", "reliable",
                 "--user", "nobody"]
        up_again = "connected again"
    else:
        sink = LogSink()
        dest = Collector(forward_to=sink.url)
        extra = ["--output", f"otlp:{dest.url}", "--drain-timeout", "60"]
        up_again = "delivering again"
    listen = listen_for(socket.AF_INET)
    try:
        rx = Receiver(tmp_path, listen, "--rcvbuf", "64M", *extra,
                      settings={"sockets": 4, "threads": 2})
        first = rx.pid

        def actions():
            os.kill(rx.pid, signal.SIGUSR2)
            rx.wait_line("SIGUSR2: ", 0)
            assert rx.pid == first and rx.count("took over") == 0
            dest.start()
            rx.wait_line(up_again, 0, timeout=120)
            assert rx.upgrade() is not None, "".join(rx.lines)
            wait_gone(rx.olds[-1], 120)
            time.sleep(0.3)
        sent, err, final = run_load(rx, listen, actions)
        all_s = summaries(rx, final)
        written = sum(s["totals"]["written"] for s in all_s)
        if kind.startswith("tls"):
            bodies = dest.wait_lines(written, timeout=120)
        else:
            bodies = [r["body"].encode() for r in sink.wait_records(written, timeout=120)]
    finally:
        if kind.startswith("tls"):
            dest.stop()
        else:
            dest.close()
            sink.close()
    assert f"cannot reach its destination: an upgrade now would wait for it to drain the " \
           f"window; ignored, pid {first} goes on" in err, err
    assert len(bodies) == written
    if kind.startswith("tls"):
        for s in all_s:
            assert s["disk_buffer"]["dropped"] == 0 and s["disk_buffer"]["corrupt"] == 0
    check_books(sent, all_s, final, tls_flows(bodies), exact=kind.startswith("tls"))
    shutil.rmtree(work, ignore_errors=True)


def test_upgrade_with_kafka_output(broker, tmp_path):  # noqa: F811
    topic = "i19-upgrade"
    broker.create_topic(topic, partitions=3)
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "64M",
                  "--output", f"kafka:{broker.bootstrap}/{topic}",
                  settings={"sockets": 4, "threads": 2})
    upgraded_twice_delivered(rx, listen, "kafka", "delivered",
                             lambda n: [v for _, _, v in broker.records(topic)])


def test_second_receiver_on_a_disk_buffer_is_refused(tmp_path, procs):
    """Two receivers on one DIR would read each other's segments half
    written: the second is refused at start, naming the pid that holds it."""
    sink = FrameSink()
    db = tmp_path / "db"
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--output", f"tcp:127.0.0.1:{sink.port}",
                  "--disk-buffer", str(db), settings={"sockets": 1, "threads": 1})
    try:
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                     "--output", f"tcp:127.0.0.1:{sink.port}", "--disk-buffer", str(db),
                     "--duration", "5"], timeout=30)
        assert r.returncode == 2, r.stderr
        assert f"--disk-buffer {db}: in use by another syslogrx (pid {rx.pid} holds {db}/lock)" \
            in r.stderr, r.stderr
        assert "ready on" not in r.stderr
    finally:
        rc, err, _ = rx.stop()
        sink.close()
    assert rc == 0, err


# ---- metrics x live resize -------------------------------------------------

def test_metrics_scraped_during_live_resizes(tmp_path):
    """Scrapes during resizes (4 -> 8 -> 2 -> 6 -> 4, twice): every one
    answered, no counter ever goes backwards (a closed socket's counts stay),
    and the books close."""
    mport = free_tcp_port()
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--max-sockets", "8", "--rcvbuf", "64M",
                  "--metrics", f"127.0.0.1:{mport}", settings={"sockets": 4, "threads": 2})
    sc = Scraper(mport)
    try:
        def resizes():
            for _ in range(2):
                for n in (8, 2, 6, 4):
                    rx.resize(n, min(2, n))
                    sc.wait_more(2)
        sent, err, final = run_load(rx, listen, resizes, scraper=sc)
    finally:
        samples = sc.stop()
    assert sc.errors == [] and len(samples) >= 16
    # Every counter, every label set (each socket's too): never backwards.
    counters = {k for smp in samples for k in smp if k[0].endswith("_total")}
    assert ("syslogrx_written_total", frozenset()) in counters
    assert any(k[0] == "syslogrx_socket_received_total" for k in counters)
    for k in counters:
        series = [smp[k] for smp in samples if k in smp]
        assert all(b >= a for a, b in zip(series, series[1:])), (k, series)
    assert final["config"]["sockets"] == 4
    check_books(sent, [final], final, {k: sorted(v) for k, v in seqs_in_output(rx.out).items()})


# ---- supervisor x metrics x crash x upgrade ----------------------------------

def test_supervisor_with_metrics_a_crash_and_an_upgrade(tmp_path):
    """The supervisor binds --metrics and hands it to each child: scrapes are
    answered by whichever child runs; kill -9 of one (its window counted lost)
    and kill -USR2 of the supervisor (its child stops the usual way, one from
    the binary at the path follows): sent = written + drops + counted loss."""
    mport = free_tcp_port()
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--supervise", "--rcvbuf", "16M",
                  "--metrics", f"127.0.0.1:{mport}", settings={"sockets": 4, "threads": 2})
    sc = Scraper(mport)
    try:
        def crash_and_upgrade():
            sc.wait_more()
            rx.kill_child()
            sc.wait_more()
            started = rx.count("started receiver pid")
            os.kill(rx.p.pid, signal.SIGUSR2)
            rx.wait_line("started receiver pid", started)
            sc.wait_more()
        sent, err, final = run_load(rx, listen, crash_and_upgrade, scraper=sc)
    finally:
        samples = sc.stop()
    # A scrape may wait in the queue while a child is replaced, never fail.
    assert sc.errors == [] and len(samples) >= 9, sc.errors
    sup = read_json(f"{rx.summary_path}.supervisor")
    assert sup["restarts"] == 1 and sup["upgrades"] == 1 and len(sup["children"]) == 3, sup
    crashed, upgraded, last = sup["children"]
    assert crashed["signal"] == 9
    assert upgraded["exit_status"] == 0 and upgraded["window_lost"] == 0
    assert upgraded["taken"] == upgraded["written"] + upgraded["discarded"]
    # The upgraded child's own summary is kept beside the last one's.
    assert read_json(f"{rx.summary_path}.{upgraded['pid']}")["totals"]["written"] == \
        upgraded["written"]
    with open(rx.out, "rb") as f:
        lines = sum(1 for _ in f)
    assert lines == sum(c["written"] for c in sup["children"])
    t = final["totals"]
    drops = t["kernel_drops"]["total"] + t["no_socket_drops"]["total"]
    assert sent["sent"] == lines + drops + sup["window_lost"]
    flows = seqs_in_output(rx.out)
    missing = sum(f["sent"] - len(flows.get(f["flow"], ())) for f in sent["flows"])
    assert missing == sup["window_lost"] + drops


# ---- the hand-over checks the metrics socket too ------------------------------

def test_handover_metrics_item_is_checked():
    """A 'tcp metrics' item that is not a listening TCP socket is refused."""
    s, port, cookie = handover_socket()
    fd = s.fileno()
    memfd = os.memfd_create("handover", 0)
    os.write(memfd, (f"syslogrx-handover 1\nlisten 127.0.0.1:{port}\nthreads 1\nready -1\n"
                     f"sock {fd} {cookie} 0\ntcp metrics - {fd} {cookie}\n").encode())
    r = subprocess.run([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--sockets", "1",
                        "--threads", "1", "--balance", "hash", "--no-trace", "--metrics", "0"],
                       env=dict(os.environ, SYSLOGRX_HANDOVER=str(memfd)),
                       pass_fds=(fd, memfd), capture_output=True, text=True, timeout=30)
    os.close(memfd)
    s.close()
    assert r.returncode == 1, r.stderr
    assert f"hand-over: fd {fd} is not a listening TCP socket" in r.stderr
    assert "ready on" not in r.stderr


# ---- supervisor x resize: refused, with the reason -----------------------------

def test_supervisor_does_not_resize_and_says_so(tmp_path):
    """The supervisor holds the sockets: a pool for live resizes is refused at
    start; SIGHUP (forwarded to the child: logrotate) reopens the output and
    names a changed sockets/threads as needing a restart, changing nothing."""
    r = run_cmd([binary("syslogrx"), "--supervise", "--max-sockets", "8",
                 "--listen", f"127.0.0.1:{free_udp_port()}"], timeout=20)
    assert r.returncode == 2
    assert log_text(r.stderr) == ("syslogrx: --supervise and --max-sockets cannot be used together: a "
                        "supervised receiver does not resize (its supervisor holds the "
                        "sockets); change --sockets and --threads with a restart\n")

    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--supervise", settings={"sockets": 4, "threads": 2})
    child = rx.child()
    rx.cf.write_text("sockets = 2\nthreads = 1\n")
    os.kill(rx.p.pid, signal.SIGHUP)
    rx.wait_line("needs a restart", 0)
    assert rx.count("needs a restart") == 1, "".join(rx.lines)
    rc, err, final = rx.stop()
    assert rc == 0, err
    assert f"--sockets/--threads changed in {rx.cf}: a supervised receiver does not resize" in err
    assert rx.child() == child                    # the same child throughout
    assert final["config"]["sockets"] == 4 and final["config"]["threads"] == 2


# ---- systemd's fd store x metrics ------------------------------------------------

def test_fd_store_keeps_the_metrics_socket(tmp_path):
    """The --metrics socket is stored with the others (srx-tcp-metrics-COOKIE):
    a restart through the fd store serves the same listening socket (no
    second bind while the old one might hold it), under load, books closed."""
    from support.fdstore import FdStore
    store = FdStore(tmp_path)
    mport = free_tcp_port()
    listen = listen_for(socket.AF_INET)
    flags = ("--rcvbuf", "64M", "--metrics", f"127.0.0.1:{mport}")
    settings = {"sockets": 4, "threads": 2}
    first_dir, second_dir = tmp_path / "1", tmp_path / "2"
    first_dir.mkdir()
    second_dir.mkdir()
    sc = None
    try:
        rx1 = Receiver(first_dir, listen, *flags, settings=settings,
                       env={"NOTIFY_SOCKET": store.path})
        store.collect()
        stored = [n for n in store.fds if n.startswith("srx-tcp-metrics-")]
        assert len(stored) == 1, sorted(store.fds)
        ino = os.fstat(store.fds[stored[0]]).st_ino
        gen = start_load(listen)
        try:
            sc = Scraper(mport)
            sc.wait_more()
            time.sleep(0.3)
            rc1, err1, s1 = rx1.stop()          # systemctl restart: stop ...
            assert rc1 == 0, err1
            prefix, env, fds = store.restart_argv()
            rx2 = Receiver(second_dir, listen, *flags, settings=settings, prefix=prefix,
                           env=env, pass_fds=fds)
            store.collect()                     # ... and start, from the store
            socks = {os.readlink(f"/proc/{rx2.pid}/fd/{fd}")
                     for fd in os.listdir(f"/proc/{rx2.pid}/fd")}
            assert f"socket:[{ino}]" in socks
            sc.wait_more()                      # answered by the new process
            time.sleep(0.3)
        finally:
            sent = stop_load(gen)
            if sc:
                sc.wait_more(1)
                sc.stop()
        time.sleep(0.5)
        rc2, err2, s2 = rx2.stop()
        assert rc2 == 0, err2
    finally:
        store.close()
    assert "(fd store)" in err2 and "Address already in use" not in err2
    # While no process ran, a scrape waited in the socket's queue: refused never.
    assert sc.errors == [], sc.errors
    flows = seqs_in_output(rx1.out)
    for f, seqs in seqs_in_output(rx2.out).items():
        flows.setdefault(f, set()).update(seqs)
    check_books(sent, [s1, s2], s2, {k: sorted(v) for k, v in flows.items()})


# ---- upgrade x balance modes x --ordered ------------------------------------------

@pytest.mark.parametrize("flags", [["--balance", "hash"], ["--balance", "roundrobin"],
                                   ["--balance", "leastloaded"], ["--ordered"]],
                         ids=["hash", "roundrobin", "leastloaded", "ordered"])
def test_upgrade_with_each_balance_mode_and_ordered(tmp_path, flags):
    """Two upgrades under load in each balance mode (the default, random, is
    test_upgrade.py's) and with --ordered (the old process's reorder stage
    writes what it holds): nothing lost, nothing twice."""
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "64M", *flags,
                  settings={"sockets": 4, "threads": 2})

    def upgrades():
        for _ in range(2):
            assert rx.upgrade() is not None, "".join(rx.lines)
            time.sleep(0.3)
    sent, err, final = run_load(rx, listen, upgrades)
    for s in summaries(rx, final):            # every process ran the mode
        assert s["balance"] == (flags[1] if flags[0] == "--balance" else "random")
        assert (s["ordering"] is not None) == (flags == ["--ordered"])
    check_books(sent, summaries(rx, final), final,
                {k: sorted(v) for k, v in seqs_in_output(rx.out).items()})


# ---- supervisor x TCP output x disk buffer x upgrade -------------------------------

@pytest.mark.parametrize("disk", ["spill", "reliable"])
def test_supervisor_upgrade_with_tcp_output_and_disk_buffer(tmp_path, disk):
    """Each child takes DIR/lock in turn (the one stopping lets it go after
    its last write): kill -USR2 of the supervisor under load, nothing lost,
    nothing twice, nothing left in DIR."""
    sink = FrameSink()
    listen = listen_for(socket.AF_INET)
    db = tmp_path / "db"
    rx = Receiver(tmp_path, listen, "--supervise", "--rcvbuf", "64M",
                  "--output", f"tcp:127.0.0.1:{sink.port}", "--disk-buffer", str(db),
                  "--disk-buffer-mode", disk, settings={"sockets": 4, "threads": 2})
    try:
        def upgrade():
            started = rx.count("started receiver pid")
            os.kill(rx.p.pid, signal.SIGUSR2)
            rx.wait_line("started receiver pid", started)
            time.sleep(0.3)
        sent, err, final = run_load(rx, listen, upgrade)
    finally:
        sink.close()
    sup = read_json(f"{rx.summary_path}.supervisor")
    assert sup["upgrades"] == 1 and sup["restarts"] == 0 and len(sup["children"]) == 2, sup
    first = read_json(f"{rx.summary_path}.{sup['children'][0]['pid']}")
    assert len(sink.msgs) == sum(c["written"] for c in sup["children"])
    for s in (first, final):
        d = s["disk_buffer"]
        assert d["dropped"] == 0 and d["corrupt"] == 0 and d["recovered"] == 0, d
    assert sorted(os.listdir(db)) == ["lock"]
    check_books(sent, [first, final], final, sink.flows(), exact=False)


# ---- upgrade x --user ---------------------------------------------------------------

def test_upgrade_as_user_nobody_with_metrics(tmp_path):
    """Running as nobody with no capability, the process still upgrades: the
    new one is started as nobody, adopts the sockets, BPF objects and the
    metrics socket (it could bind none of them itself), and runs as nobody."""
    where = pathlib.Path(tempfile.mkdtemp(prefix="srx-i19-up-"))
    os.chown(where, NOBODY, NOBODY)
    try:
        mport = free_tcp_port()
        listen = listen_for(socket.AF_INET)
        rx = Receiver(where, listen, "--rcvbuf", "16M", "--user", "nobody",
                      "--metrics", f"127.0.0.1:{mport}", settings={"sockets": 4, "threads": 2})
        sc = Scraper(mport)
        try:
            def upgrades():
                for _ in range(2):
                    sc.wait_more()
                    assert rx.upgrade() is not None, "".join(rx.lines)
                    wait_gone(rx.olds[-1], 60)
                    with open(f"/proc/{rx.pid}/status") as f:
                        st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
                    assert st["Uid"].split() == [str(NOBODY)] * 4 and int(st["CapEff"], 16) == 0
                    sc.wait_more()
            sent, err, final = run_load(rx, listen, upgrades, scraper=sc)
        finally:
            sc.stop()
        assert sc.errors == []
        assert os.stat(rx.summary_path).st_uid == NOBODY
        check_books(sent, summaries(rx, final), final,
                    {k: sorted(v) for k, v in seqs_in_output(rx.out).items()})
    finally:
        shutil.rmtree(where, ignore_errors=True)


# ---- live resize x outputs x disk buffer x --ordered x --user -----------------------

@pytest.mark.parametrize("kind", ["tcp", "tcp-disk-spill", "tcp-disk-reliable", "tls", "kafka",
                                  "ordered", "user-nobody", "roundrobin", "leastloaded"])
def test_live_resize_with(request, tmp_path, kind):
    """4 -> 8 -> 2 -> 6 -> 4 under load (--max-sockets 8), with each: nothing
    lost, nothing twice. With --user the same cycle works: a shrink parks
    spares, a grow takes them back (past the pool, see the next test)."""
    where = tmp_path
    extra, sink, topic, sng = [], None, None, None
    if kind == "tls":
        sng, extra, tls_work = tls_destination()
    elif kind.startswith("tcp"):
        sink = FrameSink()
        extra = ["--output", f"tcp:127.0.0.1:{sink.port}"]
        if "disk" in kind:
            extra += ["--disk-buffer", str(tmp_path / "db"), "--disk-buffer-mode",
                      kind.rsplit("-", 1)[1]]
    elif kind == "kafka":
        b = request.getfixturevalue("broker")
        topic = "i19-resize"
        b.create_topic(topic, partitions=3)
        extra = ["--output", f"kafka:{b.bootstrap}/{topic}"]
    elif kind == "ordered":
        extra = ["--ordered"]
    elif kind in ("roundrobin", "leastloaded"):
        extra = ["--balance", kind]
    else:
        where = pathlib.Path(tempfile.mkdtemp(prefix="srx-i19-rs-"))
        os.chown(where, NOBODY, NOBODY)
        extra = ["--user", "nobody"]
    try:
        listen = listen_for(socket.AF_INET)
        rx = Receiver(where, listen, "--max-sockets", "8", "--rcvbuf", "64M", *extra,
                      settings={"sockets": 4, "threads": 2})

        def resizes():
            for n in (8, 2, 6, 4):
                rx.resize(n, min(2, n))
                time.sleep(0.1)
        try:
            sent, err, final = run_load(rx, listen, resizes)
            if sng:
                tls_lines = sng.wait_lines(final["totals"]["written"])
        finally:
            if sink:
                sink.close()
            if sng:
                sng.stop()
                shutil.rmtree(tls_work, ignore_errors=True)
        assert final["config"]["sockets"] == 4
        if sng:
            assert len(tls_lines) == final["totals"]["written"]
            seen = tls_flows(tls_lines)
        elif sink:
            seen = sink.flows()
            assert len(sink.msgs) == final["totals"]["written"]
        elif topic:
            recs = request.getfixturevalue("broker").records(topic)
            assert len(recs) == final["kafka"]["delivered"] == final["totals"]["written"]
            seen = {}
            for _, _, v in recs:
                m = SEQ.search(v.encode() if isinstance(v, str) else v)
                seen.setdefault(int(m.group(1)), []).append(int(m.group(2)))
        else:
            seen = {k: sorted(v) for k, v in seqs_in_output(rx.out).items()}
        check_books(sent, [final], final, seen)
    finally:
        if kind == "user-nobody":
            shutil.rmtree(where, ignore_errors=True)


def test_resize_as_user_past_the_pool_is_refused_with_the_reason(tmp_path):
    """A grow past the sockets bound at start needs a new socket, which
    nobody cannot add to the group root bound (the kernel keeps a reuseport
    group to one uid): the resize fails, says why, changes nothing, and the
    receiver goes on."""
    where = pathlib.Path(tempfile.mkdtemp(prefix="srx-i19-rp-"))
    os.chown(where, NOBODY, NOBODY)
    try:
        listen = listen_for(socket.AF_INET)
        # The kernel's hash: no balancer map sized at start, so a grow
        # opens new sockets (with a balancer it stays within --max-sockets).
        rx = Receiver(where, listen, "--user", "nobody", "--balance", "hash",
                      settings={"sockets": 2, "threads": 1})
        rx.cf.write_text("sockets = 4\nthreads = 1\n")
        os.kill(rx.pid, signal.SIGHUP)
        rx.wait_line("resize failed", 0)
        port = int(listen.rsplit(":", 1)[1])
        sent = sysloggen(port, "--count", 2000, "--rate", 20000, "--end-markers", "0")["sent"]
        time.sleep(0.3)
        rc, err, final = rx.stop()
    finally:
        shutil.rmtree(where, ignore_errors=True)
    assert rc == 0, err
    assert "a socket bound now, as uid 65534, cannot join the group uid 0 bound" in err
    assert final["config"]["sockets"] == 2
    assert final["totals"]["received"] + final["totals"]["kernel_drops"]["total"] == sent


# ---- supervisor x --ordered x kafka ---------------------------------------------------

@pytest.mark.parametrize("kind", ["ordered", "kafka", "tls", "hash", "roundrobin", "leastloaded"])
def test_supervisor_upgrade_with(request, tmp_path, kind):
    """kill -USR2 of the supervisor under load with --ordered (the stopping
    child's reorder stage writes what it holds) or the Kafka output (it
    delivers what it holds before it exits): nothing lost, nothing twice."""
    topic, sng = None, None
    if kind == "tls":
        sng, extra, tls_work = tls_destination()
    elif kind == "kafka":
        b = request.getfixturevalue("broker")
        topic = "i19-supervised"
        b.create_topic(topic, partitions=3)
        extra = ["--output", f"kafka:{b.bootstrap}/{topic}"]
    elif kind == "ordered":
        extra = ["--ordered"]
    else:
        extra = ["--balance", kind]
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--supervise", "--rcvbuf", "64M", *extra,
                  settings={"sockets": 4, "threads": 2})

    def upgrade():
        started = rx.count("started receiver pid")
        os.kill(rx.p.pid, signal.SIGUSR2)
        rx.wait_line("started receiver pid", started)
        time.sleep(0.3)
    try:
        sent, err, final = run_load(rx, listen, upgrade)
        if sng:
            sup = read_json(f"{rx.summary_path}.supervisor")
            tls_lines = sng.wait_lines(sum(c["written"] for c in sup["children"]))
    finally:
        if sng:
            sng.stop()
            shutil.rmtree(tls_work, ignore_errors=True)
    sup = read_json(f"{rx.summary_path}.supervisor")
    assert sup["upgrades"] == 1 and sup["restarts"] == 0 and len(sup["children"]) == 2, sup
    first = read_json(f"{rx.summary_path}.{sup['children'][0]['pid']}")
    if sng:
        assert len(tls_lines) == sum(c["written"] for c in sup["children"])
        seen = tls_flows(tls_lines)
    elif topic:
        recs = b.records(topic)
        assert len(recs) == sum(s["kafka"]["delivered"] for s in (first, final)) == \
            sum(c["written"] for c in sup["children"])
        seen = {}
        for _, _, v in recs:
            m = SEQ.search(v.encode() if isinstance(v, str) else v)
            seen.setdefault(int(m.group(1)), []).append(int(m.group(2)))
    else:
        for x in (first, final):
            assert (x["ordering"] is not None) == (kind == "ordered")
            assert x["balance"] == (kind if kind != "ordered" else "random")
        seen = {k: sorted(v) for k, v in seqs_in_output(rx.out).items()}
    check_books(sent, [first, final], final, seen, exact=False)
    # The stopping child leaves the program on the group its supervisor
    # holds: the next child's datagrams are still spread by it, on every socket.
    steered = [s["steered"] for s in final["sockets"]]
    if kind == "hash":
        assert steered == [None] * 4
    else:
        assert all(n > 0 for n in steered), final["sockets"]


# ---- metrics x balance modes ---------------------------------------------------------------

@pytest.mark.parametrize("policy", ["hash", "roundrobin", "leastloaded"])
def test_metrics_with_each_balance_mode(tmp_path, policy):
    """Scraped under load in each mode (random is test_metrics.py's): every
    scrape answered, no counter backwards; once the load is written, the
    scrape says what was sent, and the summary the same."""
    mport = free_tcp_port()
    listen = listen_for(socket.AF_INET)
    rx = Receiver(tmp_path, listen, "--rcvbuf", "16M", "--balance", policy,
                  "--metrics", f"127.0.0.1:{mport}", settings={"sockets": 4, "threads": 2})
    sc = Scraper(mport)
    written = ("syslogrx_written_total", frozenset())
    try:
        gen = start_load(listen, RATE)
        try:
            sc.wait_more(5)
        finally:
            sent = stop_load(gen)
        deadline = time.monotonic() + 30      # the program's own counter, not a sleep
        while sc.samples[-1][1][written] < sent["sent"] and time.monotonic() < deadline:
            sc.wait_more(1)
        scraped = sc.samples[-1][1][written]
    finally:
        samples = sc.stop()
    rc, err, final = rx.stop()
    assert rc == 0, err
    assert sc.errors == [] and len(samples) >= 5
    for k in {k for smp in samples for k in smp if k[0].endswith("_total")}:
        series = [smp[k] for smp in samples if k in smp]
        assert all(b >= a for a, b in zip(series, series[1:])), (k, series)
    assert scraped == sent["sent"] == final["totals"]["written"]
    assert final["balance"] == policy
    check_books(sent, [final], final, {k: sorted(v) for k, v in seqs_in_output(rx.out).items()})
