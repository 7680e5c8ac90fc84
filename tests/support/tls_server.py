"""A small PKI made with `openssl` for a test, and Debian's syslog-ng as an
RFC 5425 server (syslog() source, transport("tls"): octet-counted frames
over TLS) that keeps each message as it arrived ($RAWMSG), one per line."""
import os
import subprocess
import time

from support.ports import free_tcp_port
from support.syslog_ng import SyslogNgServer


def _openssl(*args, cwd):
    r = subprocess.run(["openssl"] + list(args), cwd=cwd, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def _leaf(d, name, ca, subject, san, usage):
    ext = os.path.join(d, f"{name}.cnf")
    with open(ext, "w") as f:
        f.write(f"subjectAltName={san}\nextendedKeyUsage={usage}\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-subj", subject,
             "-out", f"{name}.csr", cwd=d)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", f"{name}.pem", cwd=d)


class Pki:
    """ca: signs srv (for 127.0.0.1 and localhost), client, and wrongname
    (for other.example only); otherca signs nothing of ours. Every file is
    readable by all (a test may run syslogrx as nobody)."""

    def __init__(self, d):
        self.dir = str(d)
        os.makedirs(self.dir, exist_ok=True)
        for ca in ("ca", "otherca"):
            _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key",
                     "-subj", f"/CN=syslogrx test {ca}", "-days", "2", "-out", f"{ca}.pem",
                     cwd=self.dir)
        _leaf(self.dir, "srv", "ca", "/CN=syslog server", "IP:127.0.0.1,DNS:localhost",
              "serverAuth")
        _leaf(self.dir, "wrongname", "ca", "/CN=other.example", "DNS:other.example",
              "serverAuth")
        _leaf(self.dir, "client", "ca", "/CN=syslogrx client", "DNS:client.example",
              "clientAuth")
        for f in os.listdir(self.dir):
            os.chmod(os.path.join(self.dir, f), 0o644)

    def path(self, name):
        return os.path.join(self.dir, name)

class SyslogNgTls(SyslogNgServer):
    """syslog-ng on 127.0.0.1:port with a TLS syslog() source; server is the
    Pki name of its certificate; peer_verify "required-trusted" wants a
    client certificate signed by the CA."""

    def __init__(self, work, pki, port=None, server="srv", peer_verify="optional-untrusted"):
        super().__init__(
            os.path.join(str(work), f"sng-tls-{time.monotonic_ns()}"), port or free_tcp_port(),
            'transport("tls") max-connections(8)\n'
            "                 log-iw-size(100000) log-msg-size(70000) flags(store-raw-message)\n"
            f"""                 tls(key-file("{pki.path(server + '.key')}") cert-file("{pki.path(server + '.pem')}")
                     ca-file("{pki.path('ca.pem')}") peer-verify({peer_verify}))""",
            "$RAWMSG\\n")
