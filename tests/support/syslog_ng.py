# SPDX-License-Identifier: MIT
"""Debian's syslog-ng as a TCP syslog server (syslog() source, octet-counted
frames) on 127.0.0.1:port, keeping ${SDATA} ${MSG} of each message, one per
line: the independent receiver of the TCP output's tests."""
import signal
import socket
import subprocess
import time


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
