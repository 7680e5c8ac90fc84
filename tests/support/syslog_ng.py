# SPDX-License-Identifier: MIT
"""Debian's syslog-ng as the independent syslog server of the output tests:
a syslog() source on 127.0.0.1:port (octet-counted frames, over TCP or TLS),
each message written as a template makes it, one per line. SyslogNg keeps
${SDATA} ${MSG} from TCP; tls_server.SyslogNgTls keeps $RAWMSG from TLS."""
import base64
import os
import signal
import socket
import subprocess
import time

from support.rx_watch import SEQ


class SyslogNgServer:
    """syslog-ng -F with `source` (the options of a syslog() source) on
    127.0.0.1:port, writing each message as `template` into received.log of
    its folder; start() returns once the port accepts connections."""

    def __init__(self, folder, port, source, template):
        self.dir = folder
        os.makedirs(self.dir, exist_ok=True)
        self.port = port
        self.out = os.path.join(self.dir, "received.log")
        self.conf = os.path.join(self.dir, "syslog-ng.conf")
        self.write_conf(f"""@version: 3.38
options {{ stats-freq(0); keep-hostname(yes); }};
source s_in {{ syslog(ip("127.0.0.1") port({port}) {source}); }};
destination d_file {{ file("{self.out}" template("{template}")); }};
log {{ source(s_in); destination(d_file); }};
""")
        self.p = None

    def write_conf(self, text):
        with open(self.conf, "w") as f:
            f.write(text)

    netns = None    # a network namespace to run in (SyslogNgProxied's)

    def spawn(self, env=None):
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        self.p = subprocess.Popen(
            prefix + ["/usr/sbin/syslog-ng", "-F", "--no-caps", "-f", self.conf,
             "-R", os.path.join(self.dir, "persist"), "-p", os.path.join(self.dir, "pid"),
             "-c", os.path.join(self.dir, "ctl")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)

    def listening(self):
        if self.netns:
            r = subprocess.run(["ss", "-N", self.netns, "-Hltn", f"sport = :{self.port}"],
                               capture_output=True, text=True, timeout=30)
            return bool(r.stdout.strip())
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def start(self):
        self.spawn()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.listening():
                return self
            assert self.p.poll() is None, self.p.stdout.read().decode()
            time.sleep(0.05)
        raise AssertionError("syslog-ng did not listen")

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(timeout=15)
        self.p = None

    def lines(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out, "rb") as f:
            return f.read().splitlines()

    def wait_lines(self, n, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(self.lines()) < n:
            time.sleep(0.1)
        return self.lines()


class SyslogNg(SyslogNgServer):
    """TCP (transport("tcp")), up to 4 connections; keeps ${SDATA} ${MSG}."""

    def __init__(self, tmp_path, port):
        super().__init__(os.path.join(str(tmp_path), f"sng{port}"), port,
                         'transport("tcp") max-connections(4)\n'
                         "                 log-iw-size(100000) log-msg-size(70000)",
                         "${SDATA} ${MSG}\\n")


class SyslogNgNoParse(SyslogNgServer):
    """syslog-ng reading as SC4S's sources do before they parse:
    flags(no-parse), so that $MSG is the message's bytes as they arrived.
    sources: {name: driver text} with {port} in it, each given its own free
    port (self.ports[name]) and file; msgs(name) gives the $MSG of each
    message it wrote, decoded from base64 (a line break or NUL survives)."""

    def __init__(self, folder, sources, ports):
        self.ports = dict(ports)
        first = next(iter(self.ports.values()))
        super().__init__(folder, first, "", "")
        conf = ["@version: 3.38",
                "options { stats-freq(0); keep-hostname(yes); use-dns(no); "
                "log-msg-size(70000); };"]
        for name, driver in sources.items():
            conf.append(f"source s_{name} {{ {driver.format(port=self.ports[name])}; }};")
            conf.append(f'destination d_{name} {{ file("{self.file(name)}" '
                        'template("$(base64-encode ${MSG})\\n")); };')
            conf.append(f"log {{ source(s_{name}); destination(d_{name}); }};")
        self.write_conf("\n".join(conf) + "\n")

    def file(self, name):
        return os.path.join(self.dir, f"{name}.log")

    def msgs(self, name):
        if not os.path.exists(self.file(name)):
            return []
        with open(self.file(name), "rb") as f:
            data = f.read()
        # Whole lines only: read while syslog-ng writes, the last may be cut.
        return [base64.b64decode(line) for line in data[:data.rfind(b"\n") + 1].splitlines()]


class SyslogNgProxied(SyslogNgServer):
    """network(transport("proxied-tcp")) on 127.0.0.1:port, as SC4S's TCP
    source with SC4S_SOURCE_PROXYCONNECT=yes (flags(no-parse), up to
    max_connections): each message one line of the PROXY header's four
    fields and its $MSG in base64. records() -> [(srcip, srcport, dstip,
    dstport, msg)]; flows() the sequence markers per flow. pki (a
    tls_server.Pki): transport("proxied-tls") with its server certificate.
    netns: run in that network namespace."""

    def __init__(self, folder, port, max_connections=100, pki=None, netns=None):
        super().__init__(str(folder), port, "", "")
        self.netns = netns
        transport = 'transport("proxied-tcp")'
        if pki:
            transport = (f'transport("proxied-tls") tls(key-file("{pki.path("srv.key")}") '
                         f'cert-file("{pki.path("srv.pem")}") '
                         'peer-verify(optional-untrusted))')
        self.write_conf(f"""@version: 3.38
options {{ stats-freq(0); keep-hostname(yes); use-dns(no); log-msg-size(70000); }};
source s_in {{ network(ip("127.0.0.1") port({port}) {transport} flags(no-parse)
                       log-msg-size(70000) max-connections({max_connections})
                       log-iw-size({max(100000, 100 * max_connections)})); }};
destination d_file {{ file("{self.out}" template(
  "${{PROXIED_SRCIP}} ${{PROXIED_SRCPORT}} ${{PROXIED_DSTIP}} ${{PROXIED_DSTPORT}} $(base64-encode ${{MSG}})\\n")); }};
log {{ source(s_in); destination(d_file); }};
""")

    def records(self):
        out = []
        for line in self.lines():
            f = line.split(b" ")
            out.append((f[0].decode(), f[1].decode(), f[2].decode(), f[3].decode(),
                        base64.b64decode(f[4]) if len(f) > 4 else b""))
        return out

    def flows(self):
        """{flow: [sequence numbers in the order they arrived]}"""
        flows = {}
        for r in self.records():
            m = SEQ.search(r[4])
            if m:
                flows.setdefault(int(m.group(1)), []).append(int(m.group(2)))
        return flows
