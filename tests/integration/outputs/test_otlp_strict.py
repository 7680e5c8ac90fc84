"""Valid OTLP records from any bytes, judged by the official protobuf runtime.

A small OTLP/HTTP server here decodes every request with PyPI's protobuf
and opentelemetry-proto (installed into build/pyproto by `make pyproto`): a
strict decoder, which rejects a request holding one string that is not
UTF-8, as a collector built on it does. It answers 400 on any decode error,
which syslogrx counts as failed records (a 400 is not retried). Among 2,000
good datagrams, forged ones carry bad bytes in SD values, the hostname, the
app name, the msgid and an RFC 3164 body: 0 failed records, every record
arrives, and the bad bytes arrive as U+FFFD (strings) or as they were
(bytes_value bodies); a header token with them is read past, as syslog-ng
reads it, and left out. A forged syslogrx@32473 element and a repeated SD-ID
are dropped from structured_data and counted in sd_dropped."""
import gzip
import re
import os
import socket
import subprocess
import sys
import threading

import pytest

from support.paths import ROOT
from support.ports import free_udp_port
from support.otel_collector import OtlpHttpServer, reply_type

PYPROTO = os.path.join(ROOT, "build", "pyproto")


def official_runtime():
    """(ExportLogsServiceRequest, json_format) from build/pyproto, built by
    the Makefile rule when missing."""
    if not os.path.exists(os.path.join(PYPROTO, ".complete")):
        r = subprocess.run(["make", "-C", ROOT, "pyproto"], capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"make pyproto: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    if PYPROTO not in sys.path:
        sys.path.insert(0, PYPROTO)
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    return ExportLogsServiceRequest, json_format


class StrictSink:
    """OTLP/HTTP logs server on 127.0.0.1: every request decoded by the
    official runtime; 200 with its records kept, or 400 with the error."""

    def __init__(self):
        self.request_cls, self.json_format = official_runtime()
        self.lock = threading.Lock()
        self.records = []          # LogRecord messages of accepted requests
        self.errors = []           # decode errors (answered 400)
        self.http = OtlpHttpServer(self.handle)
        self.url = self.http.url

    def handle(self, body, headers):
        ctype = headers.get("Content-Type", "")
        is_json = "json" in ctype
        req = self.request_cls()
        try:
            if headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if is_json:
                self.json_format.Parse(body.decode("utf-8"), req)
            else:
                req.ParseFromString(body)
            status, out = 200, b"{}" if is_json else b""
        except Exception as e:  # any decode error is the client's fault
            status, out = 400, str(e).encode()
        with self.lock:
            if status == 200:
                self.records += [lr for rl in req.resource_logs for sl in rl.scope_logs
                                 for lr in sl.log_records]
            else:
                self.errors.append(out.decode())
        return status, {}, out, reply_type(ctype)

    def close(self):
        self.http.close()


STAMP = b"2026-11-26T10:00:00Z"
# (kind, datagram with %s where its marker goes): the marker is in the
# record's body, whatever the body is
FORGED = [
    (b"forged-sd", b'<14>1 ' + STAMP + b' h app - - [x@1 v="a\xe9b"] %s'),
    (b"forged-sd-escapes",
     b'<14>1 ' + STAMP + b' h app - - [x@1 v="\xc3\\"\xff\\]\xe2\x82"] %s'),
    (b"forged-host", b"<14>1 " + STAMP + b" h\xe9st app - - - %s"),
    (b"forged-app", b"<14>1 " + STAMP + b" h \xe9pp - - - %s"),
    (b"forged-msgid", b"<14>1 " + STAMP + b" h app - \xe9d - %s"),
    (b"forged-3164", b"<13>Nov 26 10:00:00 host app: %s \xe9\xff"),
    (b"forged-3164-host", b"<13>Nov 26 10:00:00 h\xe9st app: %s"),
    # syslogrx's own SD-ID and a repeated one: both dropped (and counted)
    (b"forged-listener",
     b'<14>1 ' + STAMP + b' h app - - [syslogrx@32473 listener="forged"][x@1 v="a\\]b"][x@1 v="c"] %s'),
]
# the SD values as the strict decoder must see them: one U+FFFD per bad byte
FORGED_SD = {b"forged-sd": "a\ufffdb", b"forged-sd-escapes": '\ufffd"\ufffd]\ufffd\ufffd',
             b"forged-listener": "a]b"}
DROPPED = {b"forged-listener": 2}   # SD elements each drops
# a header token with bytes outside 33..126: no attribute, the text the body
FORGED_HEADER = {b"forged-host": "hostname", b"forged-app": "appname", b"forged-msgid": "msg_id",
                 b"forged-3164-host": "hostname"}


def datagrams(n=2000):
    """n good datagrams with the forged ones spread among them:
    [(kind, marker, datagram)], every marker unique ("<kind>/<n>;")."""
    out = []
    for i in range(n):
        m = b"good/%04d;" % i
        if i % 2:
            out.append((b"good", m, b'<14>1 %s host app 7 ID1 [seq@1 n="%d" t="caf\xc3\xa9"] %s'
                        % (STAMP, i, m)))
        else:
            out.append((b"good", m, b"<13>Nov 26 10:00:00 host app[7]: %s" % m))
        if i % 300 == 150:
            out += [(kind, b"%s/%d;" % (kind, i), d % (b"%s/%d;" % (kind, i)))
                    for kind, d in FORGED]
    return out


def body_bytes(lr):
    return lr.body.bytes_value if lr.body.HasField("bytes_value") \
        else lr.body.string_value.encode("utf-8")


def sd_ids(lr):
    return [e.key for kv in lr.attributes if kv.key == "structured_data"
            for e in kv.value.kvlist_value.values]


def sd_value(lr, elem, param):
    for kv in lr.attributes:
        if kv.key == "structured_data":
            for e in kv.value.kvlist_value.values:
                if e.key == elem:
                    for p in e.value.kvlist_value.values:
                        if p.key == param:
                            return p.value.string_value
    return None


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_forged_bytes_fail_no_record(syslogrx, encoding):
    sink = StrictSink()
    try:
        port = free_udp_port()
        rx = syslogrx("--output", f"otlp:{sink.url}", "--otlp-encoding", encoding,
                      "--rcvbuf", "8M", port=port, sequences=False)
        sent = datagrams()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _, _, d in sent:
                s.sendto(d, ("127.0.0.1", port))
        rc, _, err = rx.stop()
        assert rc == 0, err
        tot, o = rx.summary["totals"], rx.summary["otlp"]
        with sink.lock:
            errors, recs = list(sink.errors), list(sink.records)
    finally:
        sink.close()
    assert errors == []
    assert o["failed"]["total"] == 0 and o["undelivered"] == 0
    # the books: sent = received + counted kernel drops; every received one arrived
    assert tot["received"] + tot["kernel_drops"]["total"] == len(sent)
    assert o["records"] == tot["written"] == tot["received"] == len(recs)
    markers = {m: (kind, d) for kind, m, d in sent}
    # a record's marker: the one in its body
    got = [re.search(rb"[a-z0-9-]+/\d+;", body_bytes(lr)).group(0) for lr in recs]
    assert len(got) == len(set(got)) == len(recs)
    assert set(got) <= set(markers)
    if tot["kernel_drops"]["total"] == 0:
        assert set(got) == set(markers)
    assert sum(1 for k, _, _ in sent if k != b"good") == 7 * len(FORGED)
    assert tot["sd_dropped"] == sum(DROPPED.get(markers[m][0], 0) for m in got)
    for m, lr in zip(got, recs):
        kind, d = markers[m]
        ids = sd_ids(lr)
        assert len(ids) == len(set(ids)) and "syslogrx@32473" not in ids, (m, ids)
        if kind in FORGED_SD:
            assert sd_value(lr, "x@1", "v") == FORGED_SD[kind]
        elif kind in FORGED_HEADER:
            assert lr.body.string_value == m.decode(), m
            assert FORGED_HEADER[kind] not in {kv.key for kv in lr.attributes}, m
        elif kind != b"good":
            # a body that is not text arrives byte for byte, as bytes_value
            assert lr.body.HasField("bytes_value"), m
            assert d.endswith(lr.body.bytes_value), m
        else:
            assert lr.body.HasField("string_value"), m
