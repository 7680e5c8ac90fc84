"""Promises of docs/ that no other test held to, each written from the
sentence it quotes (not from the code) and each seen to fail on a program
that breaks it (tests/mutants/mutants.txt names the break):

- outputs.md: `--tls-ca FILE` is the CA the server's certificate must chain
  to: with it, neither `$SSL_CERT_FILE` nor the system's store is trusted.
- otlp.md: `syslogrx.listener` is the `--listen` a record came by, with
  several listeners.
- metrics.md: a listener's books (sent to it = received + kernel_drops +
  abandoned) close when the exit drain cannot finish on it.
- metrics.md: `/readyz` answers 503 while the disk buffer is full and what
  arrives is dropped.
- security.md: a URL's userinfo is shown as `***` wherever syslogrx shows
  the URL, a refused `--output` too.
- outputs.md: the TCP output's backoff is 50 ms doubling to 2 s, for every
  outage: a second outage starts again at 50 ms.
- otlp.md: the OTLP retry backoff is 100 ms doubling to 5 s.
- operating.md: `SC4S_LISTEN_DEFAULT_UDP_PORT=P1,P2` gives `default_P1` and
  `default_P2`, alone in the file too.
"""
import json
import os
import re
import signal
import socket
import subprocess
import time
import uuid

import pytest

from support.paths import binary
from support.procnet import wait_queues_empty
from support.reaper import netns_name
from support.load import send_udp
from support.otel_collector import LogSink
from support.ports import free_tcp_port, free_udp_port
from support.procs import log_text, Proc, run_cmd, sysloggen, wait_until
from support.prom import http_get, parse, scrape, value
from support.tls_server import Pki, SyslogNgTls


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


def test_tls_ca_is_the_only_ca_trusted(tmp_path, pki):
    """outputs.md: "`--tls-ca FILE` | the system's CAs | CA certificates (PEM)
    the server's certificate must chain to". The server's CA is put where
    OpenSSL's default store looks ($SSL_CERT_FILE): without --tls-ca that
    store is trusted and syslogrx starts (the control: the environment is
    read); with --tls-ca naming another CA it is refused."""
    empty = tmp_path / "no-certs"
    empty.mkdir()
    env = dict(os.environ, SSL_CERT_FILE=pki.path("ca.pem"), SSL_CERT_DIR=str(empty))
    sng = SyslogNgTls(tmp_path, pki).start()
    try:
        base = [binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                "--output", f"tls:127.0.0.1:{sng.port}"]
        control = Proc(base, env=env)
        try:
            first = control.p.stderr.readline().decode()
        finally:
            rc, _, err = control.stop()
        assert "ready on" in first, first + err
        # Refused: it exits without a ready line (a program that trusts the
        # store says ready at once: stopped, it fails here, not on a timeout).
        other = Proc(base + ["--tls-ca", pki.path("otherca.pem")], env=env)
        first = other.p.stderr.readline().decode()
        rc, _, err = other.stop()
    finally:
        sng.stop()
    err = first + err
    assert rc != 0 and "ready on" not in err, err
    assert f"--output tls:127.0.0.1:{sng.port}: the server's certificate (CN syslog server) " \
           "is refused: " in err, err


def test_otlp_records_name_the_listener_they_came_by(syslogrx):
    """otlp.md: "`syslogrx.listener` | the `--listen` it came by, when
    listeners are named (several `--listen`, ...)". Two listeners, a flow
    to each: every record names its own."""
    sink = LogSink()
    try:
        pa, pb = free_udp_port(), free_udp_port()
        rx = syslogrx("--listen", f"first=127.0.0.1:{pa}", "--listen", f"second=127.0.0.1:{pb}",
                      "--sockets", "1", "--threads", "1", "--output", f"otlp:{sink.url}",
                      "--otlp-compression", "none")
        for port, name in ((pa, "first"), (pb, "second")):
            send_udp("127.0.0.1", port, 20, payload=b"<13>Nov 22 03:12:00 h app: to " +
                     name.encode(), rate=2000)
        recs = sink.wait_records(40)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sink.close()
    got = sorted((r["body"], r["attributes"].get("syslogrx.listener")) for r in recs)
    assert got == sorted([("to first", "first")] * 20 + [("to second", "second")] * 20), got


def test_abandoned_is_booked_to_its_own_listener(syslogrx, tmp_path):
    """metrics.md: `listeners[].abandoned`: "the listener's datagrams still
    queued when the exit drain ran out of time", and its books: "sent to it
    = received + kernel_drops + abandoned". A slow output at SIGTERM with a
    burst queued on the second listener only: the first has nothing
    abandoned, the second's books close with its own abandoned."""
    pa, pb = free_udp_port(), free_udp_port()
    out = tmp_path / "slow.log"
    rx = syslogrx("--listen", f"a=127.0.0.1:{pa}", "--listen", f"b=127.0.0.1:{pb}",
                  "--sockets", "1", "--threads", "1", "--rcvbuf", "4M", "--window", "500",
                  "--output-rate", "400", "--output", f"file:{out}")
    send_udp("127.0.0.1", pa, 10, size=100)
    wait_queues_empty(pa)   # a's ten are read before the burst: none left to abandon
    gen = sysloggen(pb, "--count", 5000, "--rate", 0, "--size", 200)
    rc, _, err = rx.stop(timeout=60)
    assert rc == 0, err
    lis = {l["name"]: l for l in rx.summary["listeners"]}
    a, b = lis["a"], lis["b"]
    assert b["abandoned"] > 0, b
    assert (a["received"], a["abandoned"]) == (10, 0), a
    assert b["received"] + b["kernel_drops"] + b["abandoned"] == gen["datagrams"], b
    assert rx.summary["totals"]["abandoned"] == b["abandoned"]


def test_readyz_is_503_while_the_disk_buffer_is_full_and_drops(syslogrx, tmp_path):
    """metrics.md: `/readyz` is 503 with "`... and the disk buffer is full (N of
    M bytes): what arrives is dropped`". The TCP destination is down, the
    1M disk buffer fills and drops (counted in
    syslogrx_disk_buffer_dropped_total): readyz must say so, not 200."""
    tport, uport, mport = free_tcp_port(), free_udp_port(), free_tcp_port()
    rx = syslogrx("--sockets", "1", "--threads", "1", "--window", "200",
                  "--output", f"tcp:127.0.0.1:{tport}", "--disk-buffer", str(tmp_path / "db"),
                  "--disk-buffer-size", "1M", "--metrics", str(mport), port=uport)

    def readyz():
        return http_get(mport, "/readyz")

    def dropped():
        return value(parse(scrape(mport)), "syslogrx_disk_buffer_dropped_total")

    deadline = time.monotonic() + 60
    while not dropped():
        assert time.monotonic() < deadline, "the disk buffer never dropped"
        send_udp("127.0.0.1", uport, 2000, size=400, rate=20000)
    # Asked while it still drops (a little more sent before each question).
    status, body = wait_until(
        lambda: send_udp("127.0.0.1", uport, 50, size=400) and
        (lambda g: g if g[0] == 503 else None)(readyz()),
        "readyz 503 while the disk buffer drops", 30)
    assert "the disk buffer is full (" in body and "what arrives is dropped" in body, body
    rx.stop(sig=9)   # the stop with a destination down is test_disk_buffer.py's


def test_a_refused_output_does_not_show_the_password():
    """security.md: "A URL's userinfo is shown as `***` wherever syslogrx
    shows the URL". An --output of an unknown kind (a URL without `otlp:`)
    is refused naming the flag and the URL, with its password as ***."""
    for url in ("http://svc:S3cretPass@127.0.0.1:4318/v1/logs",
                "otlp:ftp://svc:S3cretPass@127.0.0.1:4318",
                # a broker list is not a URL, but its user:password@ is the same secret
                "kafka:svc:S3cretPass@127.0.0.1:9092/logs"):
        r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}",
                     "--output", url])
        assert r.returncode == 2, r.stderr
        assert f"--output {url.replace('S3cretPass', '***')}: expected" in r.stderr, r.stderr
        assert "S3cretPass" not in r.stderr + r.stdout


def tcp_active_opens(pid):
    with open(f"/proc/{pid}/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Tcp:")]
    return int(rows[1][rows[0].index("ActiveOpens")])


def test_tcp_backoff_starts_again_at_50_ms_after_a_reconnect(procs):
    """outputs.md: "While the server is down, syslogrx reconnects with backoff
    (50 ms doubling to 2 s)": every time it is down. A first outage long
    enough to reach the 2 s cap, a server that takes one message and goes,
    then a second outage: its first four attempts come within
    50 + 100 + 200 ms of each other (2 s of slack for a loaded machine), not
    2 s apart as a backoff left at its cap would have them (6 s).
    Connect attempts are ActiveOpens in a namespace of the test's own."""
    ns = netns_name(f"tcpagain-{uuid.uuid4().hex[:4]}")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        tport, uport = 6514, 5514

        def send(text):
            subprocess.run(["ip", "netns", "exec", ns, "python3", "-c",
                            "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                            f".sendto(b'<13>{text}', ('127.0.0.1', {uport}))"],
                           check=True, timeout=30)

        rx = Proc(["ip", "netns", "exec", ns, binary("syslogrx"), "--listen",
                   f"127.0.0.1:{uport}", "--sockets", "1", "--threads", "1",
                   "--drain-timeout", "1", "--output", f"tcp:127.0.0.1:{tport}"])
        procs.append(rx)
        early = [rx.p.stderr.readline().decode() for _ in range(2)]
        assert "ready on" in early[1], early
        # The first outage: 8 attempts reach the cap (50 + ... + 1600 ms).
        base = tcp_active_opens(rx.p.pid)
        send("one")
        wait_until(lambda: tcp_active_opens(rx.p.pid) >= base + 8, "8 attempts", 30)
        # A server takes the first message and closes: connected, then down.
        server = Proc(["ip", "netns", "exec", ns, "python3", "-c",
                       "import socket, sys\n"
                       f"s = socket.socket(); s.bind(('127.0.0.1', {tport})); s.listen(1)\n"
                       "c, _ = s.accept(); data = b''\n"
                       "while b'one' not in data: data += c.recv(4096)\n"
                       "sys.stdout.buffer.write(data)\n"])
        procs.append(server)
        out, _ = server.p.communicate(timeout=30)
        assert b"<13>one" in out
        connected = tcp_active_opens(rx.p.pid)
        # The second outage: something to send makes it seen.
        times, seen = [], connected
        deadline = time.monotonic() + 30
        while len(times) < 4:
            if not times:
                send("two")
            n = tcp_active_opens(rx.p.pid)
            now = time.monotonic()
            times += [now] * (n - seen)
            seen = n
            assert now < deadline, times
            time.sleep(0.002)
        rx.stop(sig=9)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    spread = times[3] - times[0]
    assert spread < 0.35 + 2.0, [round(t - times[0], 3) for t in times]


def test_otlp_retry_interval_is_capped_at_5_s(syslogrx):
    """otlp.md: 503 and the like: "the same request is sent again ... after an
    exponential backoff from 100 ms doubling to 5 s". A collector that
    answers 503 (no Retry-After) nine times: the retries come no sooner than
    100, 200, ..., 3200 ms, then 5 s three times; the capped three are not
    the 6.4 s of a backoff past its cap (the smallest must be under 6 s: a
    loaded machine makes a wait longer, not all three)."""
    sink = LogSink(answer=lambda n, body: (503, {}, b"busy") if 1 <= n <= 9 else None)
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-compression", "none", port=port)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"<13>Nov 22 03:12:00 h app: retried", ("127.0.0.1", port))
        wait_until(lambda: len(sink.requests) >= 11, "the tenth try", 60)
        rc, _, err = rx.stop()
        assert rc == 0, err
    finally:
        sink.close()
    t = [t for t, _, _ in sink.requests[1:11]]
    gaps = [b - a for a, b in zip(t, t[1:])]
    shown = [round(g, 2) for g in gaps]
    for k, g in enumerate(gaps):
        assert g >= min(0.1 * 2 ** k, 5.0) - 0.01, shown
    assert min(gaps[6:9]) < 6.0, shown
    assert rx.summary["otlp"]["retries"] == 9 and rx.summary["otlp"]["records"] == 1


def test_sc4s_default_port_list_alone_names_its_listeners(syslogrx, tmp_path):
    """operating.md: "a comma list `P1,P2,...` | a listener per port,
    `name_P1`, `name_P2`, ... (`SC4S_LISTEN_DEFAULT_UDP_PORT=514,5514` gives
    `default_514` and `default_5514`)": with no other port in the file."""
    ns = netns_name(f"sc4slist-{uuid.uuid4().hex[:4]}")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        env = tmp_path / "env_file"
        env.write_text("SC4S_LISTEN_DEFAULT_UDP_PORT=514,5514\n")
        rx = syslogrx("--env-file", str(env), "--sockets", "1", "--threads", "1", netns=ns)
        rc, _, err = rx.stop()
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert rc == 0, err
    assert [(l["name"], l["listen"]) for l in rx.summary["listeners"]] == [
        ("default_514", "0.0.0.0:514"), ("default_5514", "0.0.0.0:5514")], rx.summary["listeners"]


def test_sc4s_fetch_limit_becomes_at_most_batch_1024(syslogrx, tmp_path):
    """operating.md: "`SC4S_SOURCE_UDP_FETCH_LIMIT=F` | `--batch F` (at most
    1024)": a larger F starts with --batch 1024, and says so."""
    env = tmp_path / "env_file"
    env.write_text("SC4S_SOURCE_UDP_FETCH_LIMIT=5000\n")
    rx = syslogrx("--env-file", str(env), port=free_udp_port())
    rc, _, err = rx.stop()
    assert rc == 0, err
    assert f"--env-file {env}:1: SC4S_SOURCE_UDP_FETCH_LIMIT=5000 -> --batch 1024" in err, err
    assert rx.summary["config"]["batch"] == 1024


def test_root_by_hand_says_so_once(tmp_path):
    """combinations.md: "Started as root without `--user` and outside systemd
    (no `NOTIFY_SOCKET`, no `INVOCATION_ID`), one line after the ready line
    says so: `syslogrx: running as uid 0 (with no capability left); --user
    USER runs as USER`. A process taking over (upgrade, ...) does not repeat
    it." One upgrade (kill -USR2): the line once in all of stderr."""
    said = "syslogrx: running as uid 0 (with no capability left); --user USER runs as USER\n"
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "INVOCATION_ID")}
    rx = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}", "--sockets", "1",
               "--threads", "1", "--output", "null"], env=env)
    try:
        seen = []
        while not any("ready on" in l for l in seen):
            seen.append(rx.p.stderr.readline().decode())
            assert seen[-1], "".join(seen)
        assert log_text(rx.p.stderr.readline().decode()) == said
        rx.p.send_signal(signal.SIGUSR2)
        while "took over" not in seen[-1]:
            seen.append(rx.p.stderr.readline().decode())
            assert seen[-1], "".join(seen)
        # The new process holds stderr now: stopped, it ends the pipe.
        successor = int(re.search(r"pid (\d+) took over", seen[-1]).group(1))
        rx.p.wait(timeout=30)
        os.kill(successor, signal.SIGTERM)
    finally:
        rc, _, err = rx.stop()
    assert rc == 0, err
    assert said not in log_text("".join(seen) + err), "".join(seen) + err


def test_sysloggen_says_when_it_cannot_keep_up(tmp_path):
    """lab.md: sysloggen "When it cannot keep up it says so and reports the
    rate it achieved". A rate no machine sends (5,000,000/s) to a socket
    that reads nothing: a line per second behind, whose achieved rate is the
    one its --json second reports."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        r = run_cmd([binary("sysloggen"), "--target", f"127.0.0.1:{s.getsockname()[1]}",
                     "--rate", "5000000", "--count", "600000", "--json"], timeout=120)
    assert r.returncode == 0, r.stderr
    seconds = {o["second"]: o for o in map(json.loads, r.stdout.splitlines())
               if o.get("type") == "second"}
    late = re.findall(r"cannot keep up: (\d+) messages behind schedule in second (\d+) "
                      r"\(target 5000000/s, achieved (\d+)/s\)", r.stderr)
    assert late, r.stderr
    for behind, second, achieved in late:
        row = seconds[int(second)]
        assert (int(behind), int(achieved)) == (row["behind"], round(row["rate"])), (row, r.stderr)
