"""Whatever a datagram holds, what syslogrx writes is valid: hostile
datagrams (a forged listener element, a '\\' unescaped in SD values, a ']'
unescaped (which makes it RFC 3164, as syslog-ng reads it), repeated SD-IDs, values that are not UTF-8, more SD-IDs than kept,
C1 controls as U+009B and as a lone 0x9B byte, a BOM before bytes that are
not UTF-8) go through syslogrx with a named listener, and each output is
judged by an oracle that is not syslogrx's: every rfc5424 line by the
strict RFC 5424 reader of tests/support/rfc5424.py (and, over TCP, by
Debian's syslog-ng), every json line by Python's strict UTF-8 decoder and
json module, every raw line by the same decoder for C0/C1 controls. The
elements dropped are exactly the summary's sd_dropped."""
import json
import socket

import pytest

from support.ports import free_tcp_port, free_udp_port
from support import rfc5424
from support.syslog_ng import SyslogNgServer

H = b"<13>1 2026-11-26T10:00:00Z host app - - "
# (datagram, SD elements dropped in rfc5424, in json)
HOSTILE = [
    (H + b'[syslogrx@32473 listener="forged"] forged listener', 1, 1),
    (H + b'[a@1 k="v"][syslogrx@32473 listener="forged"][syslogrx@32473 x="y"] two forged', 2, 2),
    (H + b'[a@1 k="1"][b@1][a@1 k="2"][b@1 z="3"] repeated SD-IDs', 2, 2),
    # a sender's origin: merged into syslogrx's in rfc5424, repeated in json
    (H + b'[origin ip="10.0.0.1"][origin software="x"] own origin twice', 0, 1),
    (H + b'[a@1 p="C:\\dir\\file" e="\\"\\]\\\\" t="end\\\\"] unescaped', 0, 0),
    # a ']' unescaped in a value fails the strict parse: read as RFC 3164,
    # as syslog-ng reads it, the SD as text in MSG
    (H + b'[a@1 k="x]y"] bracket in a value', 0, 0),
    (H + b'[a@1 k="caf\xe9" c="\xc0\xaf" u="\xed\xa0\x80"] not UTF-8 values', 0, 0),
    (H + b'[a@1 k="\xc2\x9b' b'2J" l="\x9b' b'31m" e="\x1b[0m\x7f"] C1 in SD \xc2\x9b' b'2J \x9b' b'1m', 0, 0),
    (H + b'- \xef\xbb\xbf' b'after a BOM \xe9\xff\xc2\x85 not UTF-8', 0, 0),
    (H + b"".join(b"[e%d@1]" % i for i in range(70)) + b" 70 SD-IDs", 6, 6),
    (b"<13>Nov 26 10:00:00 host app: rfc3164 \x9b" b"31m \xc2\x9b" b"2J latin1 \xe9", 0, 0),
    (b"<999>malformed \x9b" b"31m \xc2\x85 \x1b[2J", 0, 0),
]
C1 = {chr(c) for c in range(0x80, 0xa0)}
LONE_C1 = {chr(0xdc00 + c) for c in range(0x80, 0xa0)}   # surrogateescape's lone bytes


def run(syslogrx, tmp_path, fmt):
    port = free_udp_port()
    out = tmp_path / f"out.{fmt}"
    rx = syslogrx("--sockets", "1", "--threads", "1", "--format", fmt, "--output", f"file:{out}",
                  listen=f"edge-a=127.0.0.1:{port}", sequences=False)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for d, _, _ in HOSTILE:
            s.sendto(d, ("127.0.0.1", port))
    rc, _, err = rx.stop()   # SIGTERM drains the socket and the window first
    assert rc == 0, err
    tot = rx.summary["totals"]
    assert tot["received"] == tot["written"] == len(HOSTILE)
    lines = out.read_bytes().split(b"\n")
    assert lines.pop() == b"" and len(lines) == len(HOSTILE)
    return lines, tot


def no_controls(line):
    """No C0 control, DEL or C1 control (U+0080..U+009F, or a lone byte
    0x80..0x9F), read by Python's decoder."""
    text = line.decode("utf-8", errors="surrogateescape")
    bad = [c for c in text if c < " " or c == "\x7f" or c in C1 or c in LONE_C1]
    assert not bad, (bad, line)


def test_rfc5424_lines_are_strict_rfc5424(syslogrx, tmp_path):
    lines, tot = run(syslogrx, tmp_path, "rfc5424")
    for line in lines:
        no_controls(line)
        try:
            m = rfc5424.parse(line)
        except rfc5424.Invalid as e:
            pytest.fail(f"{e}: {line!r}")
        ids = m.sd_ids()
        # the sender first, the listener last and only there
        assert ids[0] == "origin" and m.element("origin")[-1] == ("ip", "127.0.0.1"), line
        assert ids[-1] == "syslogrx@32473" and ids.count("syslogrx@32473") == 1, line
        assert m.element("syslogrx@32473") == [("listener", "edge-a")], line
    assert tot["sd_dropped"] == sum(r for _, r, _ in HOSTILE)
    by_text = {line.rsplit(b"] ", 1)[-1]: line for line in lines}
    # the values read back as they were meant: escapes kept, bad bytes U+FFFD
    m = rfc5424.parse(by_text[b"unescaped"])
    assert m.element("a@1") == [("p", "C:\\dir\\file"), ("e", '"]\\'), ("t", "end\\")]
    m = rfc5424.parse(by_text[b"bracket in a value"])
    assert m.sd_ids() == ["origin", "syslogrx@32473"] and m.msg.endswith(b'[a@1 k="x]y"] bracket in a value')
    m = rfc5424.parse(by_text[b"not UTF-8 values"])
    assert m.element("a@1") == [("k", "caf\ufffd"), ("c", "\ufffd\ufffd"),
                                ("u", "\ufffd\ufffd\ufffd")]
    m = rfc5424.parse(by_text[b"repeated SD-IDs"])
    assert m.sd_ids() == ["origin", "a@1", "b@1", "syslogrx@32473"]
    assert m.element("a@1") == [("k", "1")]
    m = rfc5424.parse(by_text[b"own origin twice"])
    assert m.element("origin") == [("ip", "10.0.0.1"), ("software", "x"), ("ip", "127.0.0.1")]
    m = rfc5424.parse(by_text[b"70 SD-IDs"])
    assert m.sd_ids() == ["origin"] + [f"e{i}@1" for i in range(64)] + ["syslogrx@32473"]


def test_json_lines_decode_strictly(syslogrx, tmp_path):
    lines, tot = run(syslogrx, tmp_path, "json")
    for line in lines:
        for i in range(len(line) - 1):   # no C1 as UTF-8 (\u00XX instead)
            assert not (line[i] == 0xc2 and 0x80 <= line[i + 1] < 0xa0), line
        obj = json.loads(line.decode("utf-8", errors="strict"))
        assert obj["listener"] == "edge-a"
        if "sd" in obj:
            assert "syslogrx@32473" not in obj["sd"], line
            # structured_data is the same SD as text: strict RFC 5424 SD (each
            # SD-ID once), and the same SD-IDs as "sd"'s keys, in order
            sd = rfc5424.parse(b"<13>1 - - - - - " + obj["structured_data"].encode())
            assert sd.sd_ids() == list(obj["sd"]), line
    assert tot["sd_dropped"] == sum(j for _, _, j in HOSTILE)
    objs = {json.loads(line)["raw" if b'"malformed":true' in line else "msg"]: json.loads(line)
            for line in lines}
    assert objs["repeated SD-IDs"]["sd"] == {"a@1": {"k": "1"}, "b@1": {}}
    assert objs["C1 in SD \u009b2J \ufffd1m"]["sd"]["a@1"] == {
        "k": "\u009b2J", "l": "\ufffd31m", "e": "\x1b[0m\x7f"}


def test_raw_lines_have_no_controls(syslogrx, tmp_path):
    lines, _ = run(syslogrx, tmp_path, "raw")
    for line in lines:
        no_controls(line)
    # C1 as rsyslog-style octal, by code point or by byte; Latin-1 kept
    assert lines[10] == b"<13>Nov 26 10:00:00 host app: rfc3164 #23331m #2332J latin1 \xe9"


def test_syslog_ng_reads_every_line(syslogrx, tmp_path):
    """The rfc5424 lines forwarded over TCP (RFC 6587 frames) to Debian's
    syslog-ng: it parses each as RFC 5424 (none is its "Error processing log
    message"), and reads the listener syslogrx wrote, not the forged one."""
    tport, port = free_tcp_port(), free_udp_port()
    sng = SyslogNgServer(str(tmp_path / "sng"), tport,
                         'transport("tcp") flags(syslog-protocol) log-msg-size(70000)',
                         "${.SDATA.syslogrx@32473.listener}|${.SDATA.a@1.k}|${MSG}\\n").start()
    try:
        rx = syslogrx("--sockets", "1", "--threads", "1", "--format", "rfc5424",
                      "--output", f"tcp:127.0.0.1:{tport}",
                      listen=f"edge-a=127.0.0.1:{port}", sequences=False)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for d, _, _ in HOSTILE:
                s.sendto(d, ("127.0.0.1", port))
        rc, _, err = rx.stop()
        assert rc == 0, err
        lines = sng.wait_lines(len(HOSTILE))
    finally:
        sng.stop()
    assert len(lines) == len(HOSTILE), lines
    assert not [line for line in lines if b"Error processing log message" in line], lines
    assert all(line.startswith(b"edge-a|") for line in lines), lines
    assert b"edge-a||unescaped" in lines
    # read as RFC 3164: no a@1 element, its text in MSG
    assert any(line.startswith(b"edge-a||") and line.endswith(b' [a@1 k="x]y"] bracket in a value')
               for line in lines), lines
