"""--output tcp: RFC 6587 octet-counted forwarding to a real syslog server.

Debian's syslog-ng, started by the test on loopback with a syslog() TCP
source (which reads octet-counted frames) and a file destination."""
import os
import re
import socket
import subprocess
import time

import pytest

from support.paths import binary
from support.procnet import wait_queues_empty
from support.procs import Proc, run_cmd, sysloggen, wait_until
from support.reaper import netns_name
from support.prom import parse, scrape, value
from support.syslog_ng import SyslogNg
from support.tcp_sinks import tcp_server
from support.ports import free_tcp_port, free_udp_port


def established_to(port):
    """A TCP connection to 127.0.0.1:port is established (/proc/net/tcp)."""
    with open("/proc/net/tcp") as f:
        next(f)
        return any(int(x[2].rsplit(":", 1)[1], 16) == port and x[3] == "01"
                   for x in (line.split() for line in f))


def wait_lines(server, n, timeout=20):
    return server.wait_lines(n, timeout)


def test_forward_every_message(syslogrx, tmp_path):
    tport, uport = free_tcp_port(), free_udp_port()
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        rx = syslogrx("--sockets", "2", "--threads", "2", "--rcvbuf", "8M", "--format", "rfc5424",
                      "--output", f"tcp:127.0.0.1:{tport}", port=uport)
        gen = sysloggen(uport, "--count", 20000, "--rate", 20000, "--size", 300,
                        "--format", "rfc5424")
        rc, _, err = rx.stop()
        assert rc == 0, err
        # 20,000 messages and the flow's 3 end markers (sysloggen's datagrams)
        assert rx.summary["totals"]["written"] == gen["datagrams"] == 20003
        lines = wait_lines(sng, 20003)
    finally:
        sng.stop()
    assert len(lines) == gen["datagrams"] and gen["sent"] == 20000
    assert sum(1 for l in lines if b' end="20000" copies="3"]' in l) == 3
    # Every message arrived whole: its sequence marker is intact.
    seqs = {int(l.split(b'seq="')[1].split(b'"')[0]) for l in lines if b'seq="' in l}
    assert seqs == set(range(20000))


def test_server_restart_loses_nothing_that_fits_in_the_window(syslogrx, tmp_path):
    """syslog-ng stopped mid-stream and started again once syslogrx has seen
    the connection end: the window (100,000) holds what arrives meanwhile and
    it is all forwarded."""
    tport, uport = free_tcp_port(), free_udp_port()
    sng = SyslogNg(tmp_path, tport)
    sng.start()
    try:
        rx = syslogrx("--sockets", "2", "--threads", "2", "--rcvbuf", "8M", "--format", "rfc5424",
                      "--window", "100000", "--output", f"tcp:127.0.0.1:{tport}", port=uport)
        gen = subprocess.Popen([binary("sysloggen"), "--target", f"127.0.0.1:{uport}",
                                "--rate", "5000", "--duration", "5", "--size", "300",
                                "--format", "rfc5424"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        # Events: messages reached syslog-ng; it stops (a clean restart, as a
        # package upgrade does); syslogrx has seen the connection end (none
        # established to the port any more) while the load goes on; it starts
        # again; the load ends and the queues are read empty.
        wait_lines(sng, 1000)
        sng.stop()
        wait_until(lambda: not established_to(tport), "the connection to syslog-ng gone")
        sng.start()
        assert gen.wait(timeout=30) == 0
        wait_queues_empty(uport)
        rc, _, err = rx.stop()
        assert rc == 0, err
        t = rx.summary["totals"]
        assert t["kernel_drops"]["total"] == 0
        assert t["received"] == 25003 and t["written"] == 25003   # + 3 end markers
        lines = wait_lines(sng, 25003)
    finally:
        sng.stop()
    seqs = {int(l.split(b'seq="')[1].split(b'"')[0]) for l in lines if b'seq="' in l}
    assert seqs == set(range(25000)), f"missing {len(set(range(25000)) - seqs)}: {err}"


def test_bad_tcp_target_is_named():
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                 "--output", "tcp:loghost:601", "--duration", "0.2"])
    assert r.returncode == 2
    assert "tcp:loghost:601" in r.stderr


def frames(data):
    """RFC 6587 octet-counted frames ("LEN SP MSG") -> [MSG]; all whole."""
    out, i = [], 0
    while i < len(data):
        sp = data.index(b" ", i)
        n = int(data[i:sp])
        out.append(data[sp + 1:sp + 1 + n])
        assert len(out[-1]) == n, "a torn frame"
        i = sp + 1 + n
    return out


@pytest.mark.parametrize("framing", ["octet", "newline"])
def test_frames_a_server_had_unread_are_sent_again(syslogrx, tmp_path, framing):
    """README: "a server that stops with data unread in its socket loses
    them; so after a connection ends, the frames sent in its last second are
    sent again on the next one". The server here takes the first connection
    and never reads it: 50 messages are forwarded into it (syslogrx's own
    count says so), then it closes with them unread (the kernel resets the
    connection: they are gone). Only the resend brings them back: the
    second connection must carry all 50, then the next message. Without
    the mechanism they would be missing and this test fails. The same
    with one message per line (--framing newline)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(30)
    tport, uport, mport = server.getsockname()[1], free_udp_port(), free_tcp_port()
    try:
        rx = syslogrx("--sockets", "1", "--threads", "1", "--metrics", str(mport),
                      "--output", f"tcp:127.0.0.1:{tport}", "--framing", framing, port=uport)
        first, _ = server.accept()
        msgs = [b"<13>unread %03d" % i for i in range(50)]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for m in msgs:
                s.sendto(m, ("127.0.0.1", uport))
            wait_until(lambda: value(parse(scrape(mport)), "syslogrx_written_total") == 50,
                       "50 messages written to the first connection")
            first.close()                       # unread: the connection is reset
            s.sendto(b"<13>after the reset", ("127.0.0.1", uport))
            second, _ = server.accept()
            second.settimeout(30)
            data = b""
            while b"after the reset" not in data:
                chunk = second.recv(65536)
                assert chunk, data
                data += chunk
        rc, _, err = rx.stop()
        second.close()
    finally:
        server.close()
    assert rc == 0, err
    got = frames(data) if framing == "octet" else data.split(b"\n")[:-1]
    assert got == msgs + [b"<13>after the reset"], got
    assert "sent again the 50 message(s) the server had not acknowledged or had in its last second" \
        in err, err


def test_reconnect_backs_off_50_ms_doubling_to_2_s(tmp_path, procs):
    """README: "While the server is down, syslogrx reconnects with backoff
    (50 ms doubling to 2 s)". In a namespace of its own, nothing listens on
    the target port: each connect() is an ActiveOpens in the namespace's
    /proc/net/snmp. Attempt k after the first message can come no sooner
    than the sum of the backoffs before it (a sleep is never early, so this
    cannot flake on a loaded machine; a retry loop without backoff fails it
    at once). The cap bounds the wait from above too: two attempts at the
    cap take 4 s, well under the 9.6 s of a backoff that kept doubling.
    Then a server appears: "connected again", the message arrives."""
    ns = netns_name("tcpbackoff")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        tport, uport = 6514, 5514          # the namespace's own ports: nobody else's
        rx = Proc(["ip", "netns", "exec", ns, binary("syslogrx"), "--listen",
                   f"127.0.0.1:{uport}", "--sockets", "1", "--threads", "1",
                   "--output", f"tcp:127.0.0.1:{tport}"])
        procs.append(rx)
        early = [rx.p.stderr.readline().decode() for _ in range(2)]
        assert "not reachable yet; will retry" in early[0], early
        assert "ready on" in early[1], early

        def opens():
            with open(f"/proc/{rx.p.pid}/net/snmp") as f:
                rows = [l.split() for l in f if l.startswith("Tcp:")]
            return int(rows[1][rows[0].index("ActiveOpens")])

        base = opens()
        t0 = time.monotonic()
        subprocess.run(["ip", "netns", "exec", ns, "python3", "-c",
                        "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                        f".sendto(b'<13>waited for the server', ('127.0.0.1', {uport}))"],
                       check=True, timeout=30)
        seen, times = base, []
        deadline = time.monotonic() + 40
        while len(times) < 10:
            n = opens()
            now = time.monotonic()
            times += [now] * (n - seen)
            seen = n
            assert now < deadline, times
            time.sleep(0.002)
        backoff, earliest = 50, 0.0
        for k, t in enumerate(times[1:], 1):
            earliest += backoff / 1000
            assert t - t0 >= earliest, (k, [round(x - t0, 3) for x in times])
            backoff = min(backoff * 2, 2000)
        # Reached the cap: 50+100+...+1600, then 2 s: the 8th is >= 5.15 s in.
        assert times[7] - t0 >= 5.15
        # The cap is an upper bound too: the 9th and 10th attempts come 2 s
        # after the one before (4 s for both), not 3.2 s and 6.4 s (9.6 s)
        # as doubling on would have them. 3 s of slack for a loaded machine.
        assert times[9] - times[7] < 2 * 2.0 + 3.0, [round(x - t0, 3) for x in times]
        # A server appears: the next attempt connects and the message arrives.
        server = Proc(["ip", "netns", "exec", ns, "python3", "-c",
                       "import socket, sys\n"
                       f"s = socket.socket(); s.bind(('127.0.0.1', {tport})); s.listen(1)\n"
                       "c, _ = s.accept(); data = b''\n"
                       "while b'server' not in data: data += c.recv(4096)\n"
                       "sys.stdout.buffer.write(data)\n"])
        procs.append(server)
        out, _ = server.p.communicate(timeout=30)
        rc, _, err = rx.stop()
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert rc == 0, err
    assert frames(out) == [b"<13>waited for the server"]
    assert "connected again" in err, err


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        return int(next(l for l in f if l.startswith(field + ":")).split()[1]) * 1024


def test_what_the_output_keeps_to_send_again_is_bounded(syslogrx):
    """outputs.md: "The output keeps each buffer it sent until it is
    outside all of these, so its memory is bounded by the socket's send
    buffer, the server's window (at most 32 MiB) and one second of output."
    10 MB/s (10,000 messages of 1,000 bytes a second) for 6 s to a server
    that reads everything through a 64 KiB window (all of it arrives), the
    output paced to 12,000 messages a second (its catch-up after a pause is
    then at most 12 MB in a second): the peak of syslogrx's resident memory
    (VmHWM) over what it had when ready stays within the send buffer the
    kernel may give (tcp_wmem's largest), twice the window, one second of
    output and 24 MiB for all else it holds (an input window of 1,000
    messages: a slower output leaves the rest in the kernel's queue; its
    output buffer, what malloc keeps of what it freed). 6 s of output is
    60 MB."""
    rate, out_rate, size, seconds = 10000, 12000, 1000, 6
    with tcp_server(rcvbuf=64 << 10) as (sport, got):
        port = free_udp_port()
        rx = syslogrx("--output", f"tcp:127.0.0.1:{sport}", "--window", "1000",
                      "--output-rate", str(out_rate), "--rcvbuf", "64M", port=port)
        wait_until(lambda: established_to(sport), "connected to the server")
        ready = status_kib(rx.p.pid, "VmRSS")
        gen = sysloggen(port, "--rate", str(rate), "--size", str(size), "--duration",
                        str(seconds), "--end-markers", "0")
        peak = status_kib(rx.p.pid, "VmHWM")
        rc, _, err = rx.stop()
        assert rc == 0, err
    forwarded = len(frames(b"".join(got)))
    assert forwarded == gen["sent"], (forwarded, gen["sent"])
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        sndbuf = int(f.read().split()[2])
    bound = sndbuf + 2 * (64 << 10) + out_rate * size + (24 << 20)
    assert rx.summary["totals"]["kernel_drops"]["total"] == 0
    print(f"\nresident memory over ready: {peak - ready} bytes, bound {bound}")
    assert peak - ready <= bound, (peak - ready, bound)
