"""Every thread of syslogrx has a name (top -H, ps -L and a core dump say
which is which): read from /proc/PID/task/*/comm of a running syslogrx with
every kind of thread on."""
import os
import re
import time

from support.load import send_udp
from support.procs import start_until
from support.tcp_sinks import tcp_server
from support.ports import free_tcp_port, free_udp_port
from support.prom import scrape


def thread_names(pid):
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            names.append(f.read().rstrip("\n"))
    return sorted(names)


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().rstrip("\n")


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
    p, lines = start_until(procs, r"supervisor started receiver pid \d+",
                           "--listen", f"127.0.0.1:{port}", "--supervise", "--ordered",
                           "--threads", "2", "--sockets", "4", "--metrics", mport,
                           "--output", "null", "--no-trace")
    child = int(re.search(r"started receiver pid (\d+)", lines[-1]).group(1))
    assert comm(p.p.pid) == "supervisor"
    assert thread_names(p.p.pid) == ["supervisor"]
    assert comm(child) == "syslogrx"
    send_udp("127.0.0.1", port, 100)
    wait_written(mport, 100)
    assert thread_names(child) == sorted(
        ["syslogrx", "worker 0", "worker 1", "output", "reorder", "metrics"])
    rc, _, err = p.stop()
    assert rc == 0, err


def test_disk_buffer_writer_and_workers(procs, tmp_path):
    """--disk-buffer: its writer thread is "diskbuf"; 3 workers are worker 0..2."""
    port, mport = free_udp_port(), free_tcp_port()
    with tcp_server() as (tport, got):
        p, _ = start_until(procs, "metrics on", "--listen", f"127.0.0.1:{port}",
                           "--threads", "3", "--sockets", "3", "--output", f"tcp:127.0.0.1:{tport}",
                           "--disk-buffer", tmp_path / "buf", "--no-trace", "--balance", "hash",
                           "--metrics", mport)
        send_udp("127.0.0.1", port, 100)
        wait_written(mport, 100)
        assert thread_names(p.p.pid) == sorted(
            ["syslogrx", "worker 0", "worker 1", "worker 2", "output", "diskbuf", "metrics"])
        rc, _, err = p.stop()
        assert rc == 0, err
    assert b"".join(got).count(b"<13>test") == 100
