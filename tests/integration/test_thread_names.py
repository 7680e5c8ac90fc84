"""Every thread of syslogrx has a name (top -H, ps -L and a core dump say
which is which): read from /proc/PID/task/*/comm of a running syslogrx with
every kind of thread on."""
import os
import re
import socket
import threading
import time
import urllib.request

from conftest import Proc, binary, free_udp_port, send_udp


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def thread_names(pid):
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            names.append(f.read().rstrip("\n"))
    return sorted(names)


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().rstrip("\n")


def start(procs, *args, until):
    """syslogrx with args; returns (Proc, the stderr lines up to the one
    matching `until`)."""
    p = Proc([binary("syslogrx")] + [str(a) for a in args])
    procs.append(p)
    lines = []
    while True:
        line = p.p.stderr.readline().decode()
        assert line, f"syslogrx exited before {until!r}: {''.join(lines)}"
        lines.append(line)
        if re.search(until, line):
            return p, lines


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.status == 200
        return r.read().decode()


def wait_written(mport, n):
    """Poll the metrics until the output has written n messages: by then
    every thread of the path has started and run."""
    deadline = time.monotonic() + 30
    while True:
        m = re.search(r"^syslogrx_written_total (\d+)$", scrape(mport), re.M)
        if m and int(m.group(1)) == n:
            return
        assert time.monotonic() < deadline, f"written {m and m.group(1)}, not {n}"
        time.sleep(0.05)


def test_supervised_receiver_with_ordered_and_metrics(procs):
    """--supervise: the supervisor is named "supervisor"; its receiver (an
    exec of syslogrx) has its workers, output, reorder and metrics threads."""
    port, mport = free_udp_port(), free_tcp_port()
    p, lines = start(procs, "--listen", f"127.0.0.1:{port}", "--supervise", "--ordered",
                     "--threads", "2", "--sockets", "4", "--metrics", mport,
                     "--output", "null", "--no-trace",
                     until=r"supervisor started receiver pid \d+")
    child = int(re.search(r"started receiver pid (\d+)", lines[-1]).group(1))
    assert comm(p.p.pid) == "supervisor"
    assert thread_names(p.p.pid) == ["supervisor"]
    assert comm(child) == "syslogrx"
    # libmicrohttpd names its thread MHD-single; syslogrx's name comes with the first request.
    send_udp("127.0.0.1", port, 100)
    wait_written(mport, 100)
    assert thread_names(child) == sorted(
        ["syslogrx", "worker 0", "worker 1", "output", "reorder", "metrics"])
    rc, _, err = p.stop()
    assert rc == 0, err


def test_disk_buffer_writer_and_workers(procs, tmp_path):
    """--disk-buffer: its writer thread is "diskbuf"; 3 workers are worker 0..2."""
    port, mport = free_udp_port(), free_tcp_port()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    got = []

    def serve():
        conn, _ = server.accept()
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                got.append(data)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        p, _ = start(procs, "--listen", f"127.0.0.1:{port}", "--threads", "3", "--sockets", "3",
                     "--output", f"tcp:127.0.0.1:{server.getsockname()[1]}",
                     "--disk-buffer", tmp_path / "buf", "--no-trace", "--balance", "hash",
                     "--metrics", mport, until="metrics on")
        send_udp("127.0.0.1", port, 100)
        wait_written(mport, 100)
        assert thread_names(p.p.pid) == sorted(
            ["syslogrx", "worker 0", "worker 1", "worker 2", "output", "diskbuf", "metrics"])
        rc, _, err = p.stop()
        assert rc == 0, err
        t.join(timeout=30)
        assert b"".join(got).count(b"<13>test") == 100
    finally:
        server.close()
        t.join(timeout=30)
