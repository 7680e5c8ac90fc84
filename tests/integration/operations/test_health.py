"""GET /healthz and /readyz (docs/metrics.md#health): on --metrics' listener,
or on --health's alone. Ready flips to 503 when the destination (a real
syslog-ng behind --output tcp:) goes down and the input window fills, and back
to 200 when it comes back, while healthz stays 200: a destination that is down
is no reason to restart the receiver. healthz goes 503 when a worker thread
stops turning its loop (stopped with ptrace, that thread alone), and back.
The --health socket goes with an upgrade (kill -USR2). Under systemd's
WatchdogSec= the pings stop while a thread is stuck."""
import contextlib
import ctypes
import os
import select
import socket

from support.load import send_udp
from support.paths import binary
from support.procs import Proc, run_cmd, wait_until
from support.rx_watch import Receiver, listen_for, wait_gone
from support.ports import free_tcp_port, free_udp_port
from support.prom import http_get as get, scrape
from support.syslog_ng import SyslogNg

HEALTH_STALL_S = 10   # src/rx/report/health.h
# More than the output stage holds in its buffer (1 MiB) and the window
# (200 messages): the window fills behind a destination that is down.
SENT = 10000


def test_ready_follows_the_destination(syslogrx, tmp_path):
    tport, uport, hport = free_tcp_port(), free_udp_port(), free_tcp_port()
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        # --health alone (no --metrics): only the two paths are served.
        rx = syslogrx("--window", "200", "--output", f"tcp:127.0.0.1:{tport}",
                      "--health", str(hport), port=uport)
        line = rx.p.stderr.readline().decode()
        assert f"health on http://127.0.0.1:{hport}/healthz and /readyz" in line, line
        # "starting" until the workers and the output run, then ready.
        wait_until(lambda: get(hport, "/readyz") == (200, "ready\n"), "readyz 200", 30)
        assert get(hport, "/healthz") == (200, "ok\n")
        assert get(hport, "/metrics")[0] == 404

        # The destination goes down; what arrives fills the window (200).
        sng.stop()
        send_udp("127.0.0.1", uport, SENT, size=200)
        status, body = wait_until(lambda: (lambda g: g if g[0] == 503 else None)(
            get(hport, "/readyz")), "readyz 503 with the destination down", 30)
        assert "the input window is full" in body, body
        # Alive all the same: its threads turn.
        assert get(hport, "/healthz") == (200, "ok\n")

        # It comes back: the window drains, ready again.
        sng.start()
        wait_until(lambda: get(hport, "/readyz") == (200, "ready\n"),
                   "readyz 200 with the destination back", 30)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sng.stop()
    t = rx.summary["totals"]
    assert t["received"] + t["kernel_drops"]["total"] == SENT
    assert t["written"] == t["received"] and t["discarded"] == 0


PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
WALL = 0x40000000


def test_ready_names_a_destination_down_while_the_window_has_room(syslogrx, tmp_path):
    """No disk buffer, the destination down, the window empty: ready (nothing
    is lost yet), the outage named as output_up 0 says it; ready plain once
    the output delivers."""
    tport, uport, hport = free_tcp_port(), free_udp_port(), free_tcp_port()
    rx = syslogrx("--window", "200", "--output", f"tcp:127.0.0.1:{tport}",
                  "--health", str(hport), port=uport)
    wait_until(lambda: get(hport, "/readyz") == (
        200, f"ready: tcp:127.0.0.1:{tport} cannot reach its destination; the input window "
        "holds what arrives until it is full\n"), "readyz 200 naming the outage", 30)
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        send_udp("127.0.0.1", uport, 10, size=200)
        wait_until(lambda: get(hport, "/readyz") == (200, "ready\n"),
                   "readyz 200 plain once the output delivers", 30)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sng.stop()
    assert rx.summary["totals"]["written"] == 10


@contextlib.contextmanager
def thread_stopped(pid, name):
    """That thread alone stopped (PTRACE_SEIZE + PTRACE_INTERRUPT: no group
    stop; the others run), until the block ends. A thread names itself once
    it runs, which may come after the receiver says it is ready."""
    wait_until(lambda: thread_named(pid, name, missing_ok=True), f"a thread named {name!r}", 30)
    tid = thread_named(pid, name)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    assert libc.ptrace(PTRACE_SEIZE, tid, None, None) == 0, os.strerror(ctypes.get_errno())
    try:
        assert libc.ptrace(PTRACE_INTERRUPT, tid, None, None) == 0
        os.waitpid(tid, WALL)
        yield tid
    finally:
        libc.ptrace(PTRACE_DETACH, tid, None, None)


def thread_named(pid, name, missing_ok=False):
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().strip() == name:
                return int(tid)
    if missing_ok:
        return None
    raise AssertionError(f"no thread {name!r} in {pid}")


def test_healthz_names_a_thread_that_stopped(syslogrx):
    uport, mport = free_udp_port(), free_tcp_port()
    rx = syslogrx("--sockets", "2", "--threads", "2", "--metrics", str(mport), port=uport)
    assert get(mport, "/healthz") == (200, "ok\n")
    wait_until(lambda: get(mport, "/readyz") == (200, "ready\n"), "readyz 200", 30)
    with thread_stopped(rx.p.pid, "worker 1"):
        status, body = wait_until(lambda: (lambda g: g if g[0] == 503 else None)(
            get(mport, "/healthz")), "healthz 503 with a worker stopped", HEALTH_STALL_S + 20)
        assert body.startswith("worker 1: no turn of its loop for "), body
        assert "worker 0" not in body and "main" not in body, body
        # The other threads answer meanwhile: the scrape too.
        assert "syslogrx_build_info" in scrape(mport)
    wait_until(lambda: get(mport, "/healthz") == (200, "ok\n"), "healthz 200 again", 30)
    rc, _, err = rx.stop()
    assert rc == 0, err


def test_health_flag_refusals():
    port = free_udp_port()
    for bad in ("notaport", "127.0.0.1:99999"):
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--health", bad,
                     "--duration", "0.1"])
        assert r.returncode == 2, r.stderr
        assert f"--health {bad}: expected PORT or ADDR:PORT" in r.stderr


def test_health_socket_goes_with_an_upgrade(tmp_path):
    """--health's listening socket is handed over like the metrics one: no
    'Address already in use' after kill -USR2, and the new process answers
    on the same port once the old one is gone."""
    hport = free_tcp_port()
    rx = Receiver(tmp_path, listen_for(socket.AF_INET), "--health", f"127.0.0.1:{hport}")
    wait_until(lambda: get(hport, "/readyz") == (200, "ready\n"), "readyz 200", 30)
    assert rx.upgrade() is not None, "".join(rx.lines)
    wait_gone(rx.olds[-1], 60)      # only the new one serves now
    wait_until(lambda: get(hport, "/readyz") == (200, "ready\n"), "the new one ready", 30)
    assert get(hport, "/healthz") == (200, "ok\n")
    # The one listening now is the new process's socket, handed over.
    listeners = run_cmd(["ss", "-Htlnp", f"sport = :{hport}"]).stdout
    assert f"pid={rx.pid}," in listeners and f"pid={rx.olds[-1]}," not in listeners, listeners
    rc, err, _ = rx.stop()
    assert rc == 0, err
    assert "Address already in use" not in err and "upgrade failed" not in err


def test_watchdog_pings_while_alive(tmp_path, procs):
    """Under systemd with WatchdogSec= ($WATCHDOG_USEC, here 1 s): WATCHDOG=1
    to $NOTIFY_SOCKET (a stand-in socket of the test) every half of it while
    every thread turns; none while a worker is stopped; again once it runs."""
    uport, hport = free_udp_port(), free_tcp_port()
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify"), WATCHDOG_USEC="1000000")
    rx = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{uport}", "--sockets", "2",
               "--threads", "2", "--output", "null", "--health", str(hport)], env=env)
    procs.append(rx)

    def pings(timeout):
        """WATCHDOG=1 messages within timeout seconds (the first ends it)."""
        got = 0
        while select.select([notify], [], [], timeout)[0]:
            got += b"WATCHDOG=1" in notify.recv(4096)
            if got:
                break
        return got

    try:
        wait_until(lambda: pings(1.0), "a first WATCHDOG=1", 30)
        assert pings(2.0), "the pings go on"
        with thread_stopped(rx.p.pid, "worker 0"):
            wait_until(lambda: get(hport, "/healthz")[0] == 503, "healthz 503",
                       HEALTH_STALL_S + 20)
            # The pings queued meanwhile (two a second while it was alive)
            # drain away; then none for 3 s (6 periods).
            for _ in range(2 * (HEALTH_STALL_S + 20) + 10):
                if not pings(3.0):
                    break
            else:
                raise AssertionError("the pings went on with a worker stopped")
        wait_until(lambda: pings(1.0), "WATCHDOG=1 again", 30)
    finally:
        notify.close()
    rc, _, err = rx.stop()
    assert rc == 0, err
