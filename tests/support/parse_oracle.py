# SPDX-License-Identifier: MIT
"""syslog-ng as the oracle of syslogrx's parse: the same datagrams to a
private Debian syslog-ng that parses them the way SC4S does (a source with
flags(no-parse), then a strict RFC 5424 parse, else RFC 3164 with
guess-timezone) and to syslogrx --format json; both readings brought to the
same fields (host, program, pid, msgid, time as an instant, facility,
severity, SD, msg) for the tests to compare.

The corpus (tests/data/parse_corpus/*.jsonl, see build_corpus.py there)
keeps SC4S's {{ placeholders }}: render() fills them with the current time
in the zone both parsers are given, as SC4S's own tests do."""
import json
import os
import re
import socket
from datetime import datetime
from zoneinfo import ZoneInfo

from support.ports import free_tcp_port, free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import wait_until
from support.syslog_ng import SyslogNgServer

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "data", "parse_corpus")
# The sender's address: syslog-ng's HOST when the message names none.
SENDER = "127.0.0.77"
FIELDS = ("host", "program", "pid", "msgid", "time_us", "facility", "severity", "sd", "msg")


def load(name):
    """[(src, template)] of one corpus file."""
    with open(os.path.join(CORPUS, name)) as f:
        return [(r["src"], r["msg"]) for r in map(json.loads, f)]


def times(now):
    """SC4S's time placeholders (tests/timeutils.py and its tests) at now."""
    us = now.microsecond
    return {
        "bsd": now.strftime("%b %d %H:%M:%S"),
        "iso": now.isoformat(sep="T", timespec="microseconds"),
        "time": now.strftime("%H:%M:%S.%f"),
        "date": now.strftime("%Y-%m-%d"),
        "tzoffset": now.strftime("%z"),
        "tzname": now.strftime("%Z"),
        "epoch": f"{now.timestamp():.6f}",
        "wsatime": f"{now.timestamp():.3f}",
        "millisec": f"{us // 1000:03d}",
        "microsec": f"{us:06d}",
        "year": now.strftime("%Y"),
        "aruba_time": now.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3],
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "iso_header": now.isoformat()[0:23],
        "rsatime": now.strftime("%H:%M:%S,%f")[:-3],
        "avi_time": now.strftime("%H:%M:%S,%f")[:-3],
        "arubadate": now.strftime("%b %d %H:%M:%S %Y"),
        "timestamp_bsd": now.strftime("%b %e %H:%M:%S"),
        "lss_time": now.strftime("%a %b %d %H:%M:%S %Y"),
        "ucm_time": now.strftime("%b %d %Y %I:%M:%S %p.%f")[:-3],
        "bsdyear": now.strftime("%b %d %Y %H:%M:%S"),
    }


def render(src, template, idx, now):
    """The datagram of one corpus entry: placeholders filled, host names
    made from the source file and the entry's index."""
    t = times(now)
    vendor = re.sub(r"^test_|\.py$", "", os.path.basename(src.split(":")[-1])).replace("_", "-")
    fixed = {"host": f"{vendor[:20]}-h{idx:04d}", "hostname": f"{vendor[:20]}-h{idx:04d}",
             "app": "app", "program": "prog", "pid": "1234", "seq": "20", "key": "k1",
             "node_id": "RP/0/RP0/CPU0", "log_type": "TRAFFIC"}

    def one(m):
        name = m.group(1)
        return t.get(name) or fixed.get(name) or t["iso"]
    return re.sub(r"\{\{\s*([a-z_]+)\s*\}\}", one, template).encode("utf-8", "surrogateescape")


def rendered(now=None):
    """[(name, datagram)]: every corpus entry rendered at now (default: the
    current time), in file order."""
    now = now or datetime.now()
    out = []
    for f in sorted(os.listdir(CORPUS)):
        if f.endswith(".jsonl"):
            for i, (src, t) in enumerate(load(f)):
                out.append((f"{src}#{i}", render(src, t, i, now)))
    return out


def as_line(d):
    """The documented line of a datagram (--format original, newline
    framing): its line end off, '\\n' and NUL inside as rsyslog writes
    them."""
    return d.rstrip(b"\n\r\x00").replace(b"\n", b"#012").replace(b"\x00", b"#000")


class SyslogNgParse(SyslogNgServer):
    """syslog-ng on UDP 127.0.0.1:port parsing as SC4S does; each message
    one JSON line of the fields compared. proxied_port: also a
    network(transport("proxied-tcp")) source there, as SC4S's with
    SC4S_SOURCE_PROXYCONNECT=yes (HOST from PROXIED_SRCIP where the message
    names none), parsed the same way into its own file (lines_of("proxied")).
    octet_port: also a syslog(transport("tcp")) source there (RFC 6587
    octet counting, SC4S's 601), parsed the same way (lines_of("octet")).
    tls_port, pki (tls_server.Pki): also a syslog(transport("tls")) source
    with pki's server certificate (SC4S's 6514 as syslog()), lines_of("tls")."""

    TEMPLATE = ("$(format-json host=${HOST} program=${PROGRAM} pid=${PID} msgid=${MSGID} "
                "stamp=${S_UNIXTIME}.${S_USEC} recvd=${R_UNIXTIME}.${R_USEC} "
                "facility=${FACILITY_NUM} severity=${SEVERITY_NUM} sd=${SDATA} msg=${MSG})\\n")

    def __init__(self, folder, port, tz, guess=True, proxied_port=None, octet_port=None,
                 tls_port=None, pki=None):
        super().__init__(folder, port, "", "")
        self.tz = tz
        flags = "flags(guess-timezone)" if guess else ""
        conf = f"""@version: 3.38
options {{ stats-freq(0); keep-hostname(yes); use-dns(no); use-fqdn(no); log-msg-size(70000); }};
source s_in {{ network(ip("127.0.0.1") port({port}) transport("udp") flags(no-parse)
                       log-msg-size(70000) so-rcvbuf(4194304)); }};
parser p_5424 {{ syslog-parser(flags(syslog-protocol) drop-invalid(yes)); }};
parser p_3164 {{ syslog-parser({flags}); }};
destination d_file {{ file("{self.out}" template("{self.TEMPLATE}")); }};
log {{
  source(s_in);
  if {{ filter {{ message('^<[0-9]{{1,3}}>1 ') }}; parser(p_5424); }}
  else {{ parser(p_3164); }};
  destination(d_file);
}};
"""
        if proxied_port:
            conf += self._parsed("proxied", f"""network(ip("127.0.0.1") port({proxied_port})
                       transport("proxied-tcp") flags(no-parse) log-msg-size(70000)
                       max-connections(2000) log-iw-size(200000))""",
                                 'rewrite { set("${PROXIED_SRCIP}" value("HOST")); };')
        if octet_port:
            conf += self._parsed("octet", f"""syslog(ip("127.0.0.1") port({octet_port})
                       transport("tcp") flags(no-parse) log-msg-size(70000))""")
        if tls_port:
            conf += self._parsed("tls", f"""syslog(ip("127.0.0.1") port({tls_port})
                       transport("tls") flags(no-parse) log-msg-size(70000)
                       tls(key-file("{pki.path('srv.key')}") cert-file("{pki.path('srv.pem')}")
                           peer-verify(optional-untrusted)))""")
        self.write_conf(conf)

    def _parsed(self, name, driver, rewrite=""):
        """A source of its own, parsed as s_in is, into NAME.log."""
        out = os.path.join(self.dir, f"{name}.log")
        return f"""source s_{name} {{ {driver}; }};
destination d_{name} {{ file("{out}" template("{self.TEMPLATE}")); }};
log {{
  source(s_{name});
  {rewrite}
  if {{ filter {{ message('^<[0-9]{{1,3}}>1 ') }}; parser(p_5424); }}
  else {{ parser(p_3164); }};
  destination(d_{name});
}};
"""

    def lines_of(self, name):
        """What the source NAME (proxied, octet) wrote."""
        path = os.path.join(self.dir, f"{name}.log")
        if not os.path.exists(path):
            return []
        with open(path, "rb") as f:
            return f.read().splitlines()

    def start(self):
        env = dict(os.environ)
        if self.tz is None:
            env.pop("TZ", None)
        else:
            env["TZ"] = self.tz
        self.spawn(env)
        wait_for_udp_port(self.port, timeout=15)
        return self


def send(datagrams, ports, sent_hook=None):
    """Each datagram from SENDER to every port, in order, paced in chunks
    so that no socket buffer overflows: sent_hook(n) waits until n arrived
    everywhere."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((SENDER, 0))
        for k in range(0, len(datagrams), 100):
            for d in datagrams[k:k + 100]:
                for p in ports:
                    s.sendto(d, ("127.0.0.1", p))
            if sent_hook:
                sent_hook(min(k + 100, len(datagrams)))


def _usec(text):
    sec, _, us = text.partition(".")
    return int(sec) * 1000000 + int(us or 0)


def from_syslog_ng(line):
    """syslog-ng's fields; a message it could not parse is {"malformed": True}."""
    o = json.loads(line)
    if o.get("program") == "syslog-ng" and o.get("msg", "").startswith(
            "Error processing log message"):
        return {"malformed": True}
    host = o.get("host")
    return {
        "malformed": False,
        # none in the message: the sender's address; an empty RFC 5424
        # HOSTNAME (two spaces): ""
        "host": None if host in (SENDER, "") else host,
        "program": o.get("program") or None,
        "pid": o.get("pid") or None,
        "msgid": o.get("msgid") or None,
        # no time in the message: syslog-ng stamps it with the receive time
        "time_us": None if o["stamp"] == o["recvd"] else _usec(o["stamp"]),
        "facility": int(o["facility"]),
        "severity": int(o["severity"]),
        "sd": o.get("sd") or None,
        "msg": o.get("msg") or None,
    }


def from_syslogrx(line):
    o = json.loads(line)
    if o["malformed"]:
        return {"malformed": True}
    t = o.get("time_unix_nano")
    if "timestamp" not in o:
        # no time in the message: the receive time, as syslog-ng stamps it
        # with its own (test_original_relay checks it is json's "received")
        t = None
    return {
        "malformed": False,
        "host": o.get("hostname"),
        "program": o.get("app_name"),
        "pid": o.get("procid"),
        "msgid": o.get("msgid"),
        "time_us": None if t is None else t // 1000,
        "facility": o.get("facility"),
        "severity": o.get("severity"),
        "sd": o.get("structured_data"),
        "msg": o.get("msg"),
    }


SD_ELEMENT = re.compile(r'\[([^ \]"=]+)((?: [^ \]"=]+="(?:[^"\\]|\\.)*")*)\]')
SD_PARAM = re.compile(r' ([^ \]"=]+)="((?:[^"\\]|\\.)*)"')


def sd_values(sd):
    """STRUCTURED-DATA as [(SD-ID, [(name, value)])], values with RFC 5424's
    escapes (\\" \\\\ \\]) undone and any other backslash kept: syslog-ng
    writes $SDATA escaped afresh, syslogrx the bytes received."""
    if sd is None:
        return None
    out, pos = [], 0
    while pos < len(sd):
        m = SD_ELEMENT.match(sd, pos)
        if not m:
            return ("unparsed", sd)
        params = [(n, re.sub(r'\\(["\\\]])', r"\1", v)) for n, v in SD_PARAM.findall(m.group(2))]
        out.append((m.group(1), params))
        pos = m.end()
    return out


def _bad_utf8_as_fffd(text):
    """syslog-ng's format-json writes a byte that is not UTF-8 as the text
    \\xNN, syslogrx's json as U+FFFD: both read as U+FFFD."""
    return None if text is None else re.sub(r"\\x[0-9a-f]{2}", "\ufffd", text)


def differing(a, b, datagram=None):
    """The fields on which two readings differ (SD compared by value)."""
    if a["malformed"] or b["malformed"]:
        return [] if a["malformed"] == b["malformed"] else ["malformed"]
    out = []
    for f in FIELDS:
        x, y = a[f], b[f]
        if f == "sd":
            x, y = sd_values(x), sd_values(y)
        elif f == "msg" and datagram is not None:
            try:
                datagram.decode("utf-8")
            except UnicodeDecodeError:
                x = _bad_utf8_as_fffd(x)
        if x != y:
            out.append(f)
    return out


def run_both(tmp_path, syslogrx, datagrams, tz, guess=True):
    """[(syslog-ng's reading, syslogrx's reading)] of each datagram, both in
    zone tz (None: neither is told one, TZ unset) and guessing zones or not."""
    sng_port, rx_port = free_udp_port(), free_udp_port()
    sng = SyslogNgParse(str(tmp_path / "sng"), sng_port, tz, guess).start()
    try:
        out = tmp_path / "rx.json"
        args = (["--timezone", tz] if tz else []) + (["--guess-timezone"] if guess else [])
        rx = syslogrx("--sockets", "1", "--threads", "1", "--format", "json",
                      "--output", f"file:{out}", *args, port=rx_port)
        def arrived(n):
            wait_until(lambda: len(sng.lines()) >= n, f"{n} messages at syslog-ng", timeout=60)
            wait_until(lambda: out.exists() and out.read_bytes().count(b"\n") >= n,
                       f"{n} messages from syslogrx", timeout=60)
        send(datagrams, [sng_port, rx_port], arrived)
        rc, _, err = rx.stop()
        assert rc == 0, err
        got_sng = sng.lines()
    finally:
        sng.stop()
    got_rx = out.read_bytes().splitlines()
    assert len(got_sng) == len(got_rx) == len(datagrams), (len(got_sng), len(got_rx))
    return [(from_syslog_ng(a), from_syslogrx(b)) for a, b in zip(got_sng, got_rx)]


def relayed(tmp_path, syslogrx, source, *flags, pki=None):
    """The corpus to syslog-ng's UDP source directly, and through syslogrx
    --format original FLAGS --output tcp into syslog-ng's SOURCE source
    (proxied, octet: SyslogNgParse's; tls: --output tls, trusting pki's
    CA), both parsed as SC4S parses. Returns (names, datagrams, direct
    lines, relayed lines, syslogrx's summary)."""
    items = rendered()
    names = [n for n, _ in items]
    grams = [d for _, d in items]
    sng_port, tport, rx_port = free_udp_port(), free_tcp_port(), free_udp_port()
    sng = SyslogNgParse(str(tmp_path / "sng"), sng_port, None, pki=pki,
                        **{f"{source}_port": tport})
    sng.start()
    out = ["--output", f"tcp:127.0.0.1:{tport}"]
    if pki:
        out = ["--output", f"tls:127.0.0.1:{tport}", "--tls-ca", pki.path("ca.pem")]
    try:
        rx = syslogrx("--format", "original", *flags, "--sockets", "1", "--threads", "1",
                      "--rcvbuf", "8M", *out, port=rx_port, sequences=False)

        def arrived(n):
            wait_until(lambda: len(sng.lines()) >= n and len(sng.lines_of(source)) >= n,
                       f"{n} messages on both paths", timeout=60)
        send(grams, [sng_port, rx_port], arrived)
        rc, _, err = rx.stop()
        assert rc == 0, err
        direct, relay = sng.lines(), sng.lines_of(source)
    finally:
        sng.stop()
    assert len(direct) == len(relay) == len(grams)
    return names, grams, direct, relay, rx.summary


def _unprintable(text):
    return text is not None and any(not 33 <= ord(c) <= 126 for c in text)


# name in docs/outputs.md -> (fields, when it explains a difference)
DIFFERENCES = {
    # a HOSTNAME or TAG token with bytes outside 33..126 (a tab, UTF-8):
    # syslogrx consumes it as syslog-ng does but leaves the field out
    "header-bytes": ({"host", "program"}, lambda g, sng, rx: (
        (sng["host"] == rx["host"] or (_unprintable(sng["host"]) and rx["host"] is None)) and
        (sng["program"] == rx["program"] or
         (_unprintable(sng["program"]) and rx["program"] is None)))),
    # SD names with '[' or '.': syslog-ng's $SDATA writes some of them
    # %-encoded or split at a dot; syslogrx keeps them as received
    "sd-names": ({"sd"}, lambda g, sng, rx: rx["sd"] is not None and re.search(
        r'\.|\[[^\]]*\[', re.sub(r'"(?:[^"\\]|\\.)*"', '""', rx["sd"])) is not None),
    # a clock out of range (06:59:75): syslog-ng's mktime() carries it its
    # own way; syslogrx adds the seconds up
    "clock-range": ({"time_us"}, lambda g, sng, rx: any(
        int(h) > 23 or int(m) > 59 or int(s) > 60
        for h, m, s in re.findall(rb"(\d\d):(\d\d):(\d\d)", g[:48]))),
    # a PRI outside 0..191, or without digits or '>': malformed for syslogrx
    "pri-range": ({"malformed"}, lambda g, sng, rx: rx["malformed"] and re.match(
        rb"<(\d*)(>|$)", g) is not None),
}


def explained(g, sng, rx, fields):
    """The documented differences that explain every differing field, or None."""
    names, left = [], set(fields)
    for name, (covers, when) in DIFFERENCES.items():
        if left & covers and when(g, sng, rx):
            names.append(name)
            left -= covers
    return None if left else names
