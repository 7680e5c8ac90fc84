"""The sender in every output: --format rfc5424 into Debian's syslog-ng.

syslogrx forwards over TCP to a syslog-ng that keeps the message's hostname
(keep-hostname(yes), as SC4S does); syslog-ng's $HOST and
${.SDATA.origin.ip} must show the address the datagram came from, not the
forwarder's: from 127.0.0.2 on loopback, and from an IPv6 address in a
network namespace the test makes (syslogrx, syslog-ng and the sender all
inside it)."""
import socket
import subprocess
import time

from support.paths import binary
from support.procs import Syslogrx, wait_until
from support.reaper import netns_name
from support.ports import free_tcp_port, free_udp_port

TEMPLATE = "${HOST}|${.SDATA.origin.ip}|${.SDATA.origin.software}|${MSG}\\n"

# (datagram, its HOST at syslog-ng given sender ADDR, its MSG); ADDR is
# filled in per test. The first is the Cisco ASA line of the field report.
ASA = (b"<166>%ASA-6-302013: Built outbound TCP connection 91 for outside:192.0.2.9/443 "
       b"(192.0.2.9/443) to inside:10.1.1.2/51000 (10.1.1.2/51000)")
CASES = [
    (ASA, None, "Built outbound TCP connection 91 for outside:192.0.2.9/443 "
                "(192.0.2.9/443) to inside:10.1.1.2/51000 (10.1.1.2/51000)", ""),
    (b"<14>1 2026-11-26T10:00:00Z - app 7 ID1 - no hostname in 5424", None,
     "no hostname in 5424", ""),
    (b"<14>1 2026-11-26T10:00:00Z fw1 app 7 ID1 [x@1 a=\"b\"] its own hostname", "fw1",
     "its own hostname", ""),
    (b"<13>Nov 26 10:00:00 bsdhost app[3]: a 3164 hostname", "bsdhost",
     "a 3164 hostname", ""),
    # a sender that writes an origin of its own: its params are kept, the
    # address syslog-ng reports is still the one the datagram came from
    (b"<14>1 2026-11-26T10:00:00Z - app - - [origin software=\"fwos\" ip=\"198.51.100.66\"] "
     b"claims an origin", None, "claims an origin", "fwos"),
]


class SyslogNg:
    """syslog-ng -F with a syslog() TCP source on 127.0.0.1:PORT and a file
    destination, optionally inside a network namespace."""

    def __init__(self, tmp_path, port, netns=None):
        self.dir = tmp_path / f"sng{port}"
        self.dir.mkdir()
        self.out = self.dir / "received.log"
        self.ctl = self.dir / "ctl"
        conf = self.dir / "syslog-ng.conf"
        conf.write_text(f"""@version: 3.38
options {{ stats-freq(0); keep-hostname(yes); use-dns(no); }};
source s_tcp {{ syslog(transport("tcp") ip("127.0.0.1") port({port})); }};
destination d_file {{ file("{self.out}" template("{TEMPLATE}")); }};
log {{ source(s_tcp); destination(d_file); }};
""")
        argv = ["/usr/sbin/syslog-ng", "-F", "--no-caps", "-f", str(conf),
                "-R", str(self.dir / "persist"), "-p", str(self.dir / "pid"), "-c", str(self.ctl)]
        if netns:
            argv = ["ip", "netns", "exec", netns] + argv
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # its control socket answers once the configuration (the source) is up
        wait_until(lambda: self.p.poll() is not None or subprocess.run(
            ["/usr/sbin/syslog-ng-ctl", "stats", "-c", str(self.ctl)],
            capture_output=True).returncode == 0, "syslog-ng's control socket", timeout=30)
        assert self.p.poll() is None, self.p.stdout.read().decode()

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=15)

    def lines(self):
        return self.out.read_text().splitlines() if self.out.exists() else []


def expected(addr):
    return [f"{host or addr}|{addr}|{software}|{msg}" for _, host, msg, software in CASES]


def forward_and_read(tmp_path, uport, tport, listen, send, netns=None):
    """syslogrx --format rfc5424 into syslog-ng; send() sends every case
    once; returns syslog-ng's lines once it holds them all."""
    sng = SyslogNg(tmp_path, tport, netns=netns)
    rx = None
    try:
        rx = Syslogrx(tmp_path, "--format", "rfc5424", "--output", f"tcp:127.0.0.1:{tport}",
                      listen=listen, netns=netns, sequences=False)
        send()
        rc, _, err = rx.stop()
        totals = rx.summary["totals"]
        rx = None
        assert rc == 0, err
        # the books: every datagram received and written to the TCP output
        assert totals["received"] == totals["written"] == len(CASES), totals
        wait_until(lambda: len(sng.lines()) >= len(CASES), "syslog-ng's file", timeout=30)
        return sng.lines()
    finally:
        if rx:
            rx.stop(9)
        sng.stop()


def test_sender_from_127_0_0_2_reaches_syslog_ng(tmp_path):
    uport = free_udp_port()

    def send():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.2", 0))
            for data, *_ in CASES:
                s.sendto(data, ("127.0.0.1", uport))

    lines = forward_and_read(tmp_path, uport, free_tcp_port(), f"127.0.0.1:{uport}", send)
    assert sorted(lines) == sorted(expected("127.0.0.2"))


SENDER6 = "2001:db8:5::7"


def test_sender_from_ipv6_in_a_namespace_reaches_syslog_ng(tmp_path):
    ns = netns_name("origin6")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "-n", ns, "addr", "add", f"{SENDER6}/128", "dev", "lo", "nodad"],
                       check=True)
        uport = 5514  # a namespace of our own: every port is free

        def send():
            script = ("import socket,sys\n"
                      "s=socket.socket(socket.AF_INET6,socket.SOCK_DGRAM)\n"
                      f"s.bind(('{SENDER6}',0))\n"
                      "for d in sys.stdin.buffer.read().split(b'\\0'):\n"
                      f"    s.sendto(d,('::1',{uport}))\n")
            r = subprocess.run(["ip", "netns", "exec", ns, "python3", "-c", script],
                               input=b"\0".join(d for d, *_ in CASES), capture_output=True,
                               timeout=30)
            assert r.returncode == 0, r.stderr

        lines = forward_and_read(tmp_path, uport, 6514, f"[::1]:{uport}", send, netns=ns)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
    assert sorted(lines) == sorted(expected(SENDER6))
