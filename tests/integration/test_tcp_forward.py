"""--output tcp: RFC 6587 octet-counted forwarding to a real syslog server.

Debian's syslog-ng, started by the test on loopback with a syslog() TCP
source (which reads octet-counted frames) and a file destination."""
import os
import signal
import socket
import subprocess
import time

from conftest import binary, free_udp_port, run_cmd, sysloggen


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SyslogNg:
    def __init__(self, tmp_path, port):
        self.dir = tmp_path / f"sng{port}"
        self.dir.mkdir(exist_ok=True)
        self.out = self.dir / "received.log"
        self.conf = self.dir / "syslog-ng.conf"
        self.conf.write_text(f"""@version: 3.38
options {{ stats-freq(0); keep-hostname(yes); }};
source s_tcp {{ syslog(transport("tcp") ip("127.0.0.1") port({port}) max-connections(4)
                        log-iw-size(100000) log-msg-size(70000)); }};
destination d_file {{ file("{self.out}" template("${{SDATA}} ${{MSG}}\\n")); }};
log {{ source(s_tcp); destination(d_file); }};
""")
        self.port = port
        self.p = None

    def start(self):
        self.p = subprocess.Popen(
            ["/usr/sbin/syslog-ng", "-F", "--no-caps", "-f", str(self.conf),
             "-R", str(self.dir / "persist"), "-p", str(self.dir / "pid"),
             "-c", str(self.dir / "ctl")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            assert self.p.poll() is None, self.p.stdout.read().decode()
            time.sleep(0.05)
        raise AssertionError("syslog-ng did not listen")

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(timeout=15)

    def lines(self):
        return self.out.read_bytes().splitlines() if self.out.exists() else []


def wait_lines(server, n, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and len(server.lines()) < n:
        time.sleep(0.1)
    return server.lines()


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
    """syslog-ng stopped for ~2 s mid-stream and started again: the window
    (100,000) holds what arrives meanwhile and it is all forwarded."""
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
        time.sleep(1.5)
        sng.stop()            # a clean restart, as a package upgrade does
        time.sleep(2)
        sng.start()
        assert gen.wait(timeout=30) == 0
        time.sleep(1)
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
