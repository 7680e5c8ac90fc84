"""--output tls: RFC 5425 (octet-counted frames over TLS) into Debian's
syslog-ng, with a CA, a server and a client certificate made here with
`openssl` (tls_server.py). syslog-ng keeps each message as it arrived
($RAWMSG): the oracle for the count and the bytes.

Also: a server the CA did not sign, or whose certificate is for another
name, is refused at start with the reason and nothing is delivered; bad
--tls-ca, --tls-cert, --tls-key files are refused naming the flag; the
peer's certificate name reaches the log escaped; a key others can read is
named in a warning; the disk buffer bridges a
restart of the TLS server. (USR2 and --user: test_combos.py.)"""
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

from support.paths import binary
from support.procs import run_cmd, Syslogrx
from support.flows import by_flow, check_complete_in_order, start_gen
from support.prom import parse, scrape, value
from support.tls_server import Pki, SyslogNgTls
from support.ports import free_tcp_port, free_udp_port

N = 20000


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


def tls_args(pki, port, client=True):
    args = ["--output", f"tls:127.0.0.1:{port}", "--tls-ca", pki.path("ca.pem")]
    if client:
        args += ["--tls-cert", pki.path("client.pem"), "--tls-key", pki.path("client.key")]
    return args


def messages():
    """RFC 5424 and RFC 3164, printable: syslogrx's raw format forwards each
    as it came, so syslog-ng's $RAWMSG must be these bytes exactly."""
    out = []
    for i in range(N):
        if i % 2:
            out.append(b'<165>1 2026-11-26T10:00:00.%06dZ host%d app - ID%d '
                       b'[seq@32473 n="%d"] tls message %d with \xc3\xa9 and "quotes"'
                       % (i, i % 7, i % 3, i, i))
        else:
            out.append(b"<13>Nov 26 10:00:00 host%d su[%d]: tls message %d" % (i % 5, i, i))
    return out


def send(port, msgs, per_ms=20):
    """Paced (20 a millisecond at most): a bounded loop, the kernel queue
    (--rcvbuf) takes the rest."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        t0 = time.monotonic()
        for i, m in enumerate(msgs):
            if i % per_ms == 0:
                delay = t0 + i / (per_ms * 1000) - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            s.sendto(m, ("127.0.0.1", port))


@pytest.mark.parametrize("ordered", [False, True], ids=["random", "ordered"])
def test_every_message_arrives_byte_exact_with_a_client_certificate(syslogrx, tmp_path, pki,
                                                                     ordered):
    """With --ordered the one flow, spread over two sockets, arrives in the
    order it was sent."""
    sng = SyslogNgTls(tmp_path, pki, peer_verify="required-trusted").start()
    try:
        port = free_udp_port()
        rx = syslogrx("--sockets", "2", "--threads", "2", "--rcvbuf", "16M",
                      *(["--ordered=100"] if ordered else []),
                      *tls_args(pki, sng.port), port=port)
        msgs = messages()
        send(port, msgs)
        lines = sng.wait_lines(N)
        rc, _, err = rx.stop()
    finally:
        sng.stop()
    assert rc == 0, err
    t = rx.summary["totals"]
    assert t["kernel_drops"]["total"] == 0 and t["received"] == t["written"] == N
    assert rx.summary["output_up"] is True
    assert len(lines) == N
    if ordered:
        assert lines == msgs
    else:
        assert sorted(lines) == sorted(msgs)


def test_config_file_keys(syslogrx, tmp_path, pki):
    """tls-ca, tls-cert, tls-key, tls-name in a --config file, as flags (the
    output on the command line: the test's harness names one)."""
    sng = SyslogNgTls(tmp_path, pki, peer_verify="required-trusted").start()
    conf = tmp_path / "rx.conf"
    conf.write_text(f"tls-ca = {pki.path('ca.pem')}\n"
                    f"tls-cert = {pki.path('client.pem')}\ntls-key = {pki.path('client.key')}\n"
                    f"tls-name = localhost\n")
    try:
        port = free_udp_port()
        rx = syslogrx("--config", str(conf), "--output", f"tls:127.0.0.1:{sng.port}", port=port)
        send(port, [b"<13>Nov 26 10:00:00 h app: from the config file"])
        lines = sng.wait_lines(1)
        rc, _, err = rx.stop()
    finally:
        sng.stop()
    assert rc == 0, err
    assert lines == [b"<13>Nov 26 10:00:00 h app: from the config file"]
    assert rx.summary["config"]["output"] == f"tls:127.0.0.1:{sng.port}"


def refused(args):
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}"] + args,
                timeout=60)
    assert r.returncode != 0, r.stderr
    assert "ready on" not in r.stderr, r.stderr
    return r.stderr


def test_wrong_ca_is_refused_at_start(tmp_path, pki):
    sng = SyslogNgTls(tmp_path, pki).start()
    try:
        err = refused(["--output", f"tls:127.0.0.1:{sng.port}", "--tls-ca",
                       pki.path("otherca.pem")])
    finally:
        sng.stop()
    assert f"--output tls:127.0.0.1:{sng.port}: the server's certificate (CN syslog server) " \
           "is refused: self-signed certificate in certificate chain (see --tls-ca, --tls-name)" \
           in err, err
    assert sng.lines() == []


def test_wrong_name_is_refused_and_tls_name_names_it(syslogrx, tmp_path, pki):
    sng = SyslogNgTls(tmp_path, pki, server="wrongname").start()
    try:
        err = refused(tls_args(pki, sng.port, client=False))
        assert "the server's certificate (CN other.example) is refused: " \
               "IP address mismatch: it is not for 127.0.0.1" in err, err
        err = refused(tls_args(pki, sng.port, client=False) + ["--tls-name", "another.example"])
        assert "(CN other.example) is refused: hostname mismatch: it is not for another.example" in err, err
        assert sng.lines() == []
        # the name it is for: accepted, delivered
        port = free_udp_port()
        rx = syslogrx(*tls_args(pki, sng.port, client=False), "--tls-name", "other.example",
                      port=port)
        send(port, [b"<13>Nov 26 10:00:00 h app: named right"])
        lines = sng.wait_lines(1)
        rc, _, err = rx.stop()
    finally:
        sng.stop()
    assert rc == 0, err
    assert lines == [b"<13>Nov 26 10:00:00 h app: named right"]


def test_peer_certificate_name_is_logged_escaped(tmp_path, pki):
    """A server's certificate is the peer's text: its name with ESC, BEL
    reaches the log as #033, #007, never as the bytes."""
    d = str(tmp_path)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    "ev.key", "-subj", "/CN=evil\x1b[2J\x07name", "-days", "1", "-out", "ev.pem"],
                   cwd=d, check=True, capture_output=True, timeout=60)
    port = free_tcp_port()
    srv = subprocess.Popen(["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-cert",
                            "ev.pem", "-key", "ev.key", "-quiet"], cwd=d,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and srv.poll() is None
            time.sleep(0.05)
        err = refused(["--output", f"tls:127.0.0.1:{port}", "--tls-ca", pki.path("ca.pem")])
    finally:
        srv.kill()
        srv.wait()
    assert "(CN evil#033[2J#007name) is refused: self-signed certificate" in err, err
    assert "\x1b" not in err and "\x07" not in err


@pytest.mark.parametrize("flag,content,says", [
    ("--tls-ca", "not a certificate\n", "--tls-ca {f}: no CA certificate could be read from it"),
    ("--tls-cert", "not a certificate\n", "--tls-cert {f}: no certificate could be read from it"),
    ("--tls-key", "not a key\n", "--tls-key {f}: no private key could be read from it"),
    ("--tls-key", None, "--tls-key {f}: not the key of --tls-cert"),
], ids=["ca", "cert", "key", "key-of-another-cert"])
def test_bad_files_are_refused_naming_the_flag(tmp_path, pki, flag, content, says):
    f = tmp_path / "bad.pem"
    if content is None:
        f = pki.path("srv.key")           # a key, but not the client's
    else:
        f.write_text(content)
    files = {"--tls-ca": pki.path("ca.pem"), "--tls-cert": pki.path("client.pem"),
             "--tls-key": pki.path("client.key")}
    files[flag] = str(f)
    args = ["--output", f"tls:127.0.0.1:{free_tcp_port()}"]    # nobody listens: the file is
    for k, v in files.items():                                  # the error, at start
        args += [k, v]
    err = refused(args)
    assert says.format(f=f) in err, err


def test_tls_flags_without_tls_output_are_refused(pki):
    r = run_cmd([binary("syslogrx"), "--output", "tcp:127.0.0.1:601", "--tls-ca",
                 pki.path("ca.pem")])
    assert r.returncode == 2
    assert "--tls-ca, --tls-cert, --tls-key and --tls-name need --output tls:HOST:PORT" \
        in r.stderr, r.stderr
    r = run_cmd([binary("syslogrx"), "--output", "tls:127.0.0.1:6514", "--tls-cert",
                 pki.path("client.pem")])
    assert r.returncode == 2 and "--tls-cert and --tls-key go together" in r.stderr, r.stderr
    r = run_cmd([binary("syslogrx"), "--output", "tls:loghost:6514"])
    assert r.returncode != 0 and "--output tls:loghost:6514: expected tls:HOST:PORT" \
        in r.stderr, r.stderr


def test_disk_buffer_bridges_a_restart_of_the_tls_server(tmp_path, procs, pki):
    """syslog-ng stopped for 4 s mid-stream and started again on the same
    port: the disk buffer (spill) takes what the window cannot; every
    sequence number arrives, in order per flow (the reconnect's resend of
    the last second may repeat some: counted, allowed)."""
    sng = SyslogNgTls(tmp_path, pki, peer_verify="required-trusted").start()
    port, mport = free_udp_port(), free_tcp_port()
    try:
        rx = Syslogrx(tmp_path, "--sockets", "2", "--threads", "2", "--balance", "hash",
                      "--format", "rfc5424", "--window", "10000", "--rcvbuf", "16M",
                      "--metrics", str(mport), "--disk-buffer", str(tmp_path / "db"),
                      *tls_args(pki, sng.port), port=port)
        procs.append(rx)
        rate, seconds = 10000, 8
        gen = start_gen(port, "tlsrestart", rate=rate, seconds=seconds)
        time.sleep(2)                 # the outage's place in the load, not a synchronisation
        sng.stop()
        deadline = time.monotonic() + 30
        while value(parse(scrape(mport)), "syslogrx_output_up") != 0:
            assert time.monotonic() < deadline, "the output never said it was down"
            time.sleep(0.05)
        time.sleep(4)
        sng.start()
        assert gen.wait(timeout=60) == 0
        sent = rate * seconds
        deadline = time.monotonic() + 120
        while sum(len(set(v)) for v in by_flow(sng.lines(), "tlsrestart").values()) < sent:
            assert time.monotonic() < deadline, "not all arrived"
            time.sleep(0.3)
        rc, _, err = rx.stop()
        lines = sng.lines()
    finally:
        sng.stop()
    assert rc == 0, err
    t, db = rx.summary["totals"], rx.summary["disk_buffer"]
    assert t["kernel_drops"]["total"] == 0 and t["received"] == sent
    assert db["written"] > 0 and db["dropped"] == 0 and db["msgs"] == 0
    dups = check_complete_in_order(by_flow(lines, "tlsrestart"), sent)
    assert "connected again" in err, err
    print(f"tls restart: {sent} sent, {db['written']} spilled, {dups} sent twice")


def test_a_key_others_can_read_is_named_in_a_warning(tmp_path, pki):
    """Said at start, naming the flag and the file; 0600 says nothing."""
    key = tmp_path / "client.key"
    shutil.copy(pki.path("client.key"), key)
    argv = [binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}", "--duration", "1",
            "--output", f"tls:127.0.0.1:{free_tcp_port()}", "--tls-ca", pki.path("ca.pem"),
            "--tls-cert", pki.path("client.pem"), "--tls-key", str(key)]
    warning = f"--tls-key {key}: a secret readable by"
    for mode, who in ((0o644, "every user"), (0o640, "its group"), (0o600, None)):
        os.chmod(key, mode)
        r = run_cmd(argv, timeout=60)
        assert r.returncode == 0, r.stderr
        if who:
            assert f"{warning} {who} (mode {mode:04o}): chmod 0600 it\n" in r.stderr, r.stderr
        else:
            assert warning not in r.stderr, r.stderr
