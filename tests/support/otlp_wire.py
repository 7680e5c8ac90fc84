"""OTLP logs read back by hand, for the tests: protobuf (from the field
numbers of opentelemetry-proto) and OTLP/JSON into one shape, a list of
records, each a dict:

    {"timeUnixNano": int, "observedTimeUnixNano": int, "severityNumber": int,
     "severityText": str, "body": str | bytes, "attributes": {key: value}}

where an attribute value is a str, int, bool, bytes or a dict (kvlist).
Nothing here is generated from a schema; no third-party package is used.
"""
import base64
import gzip
import json
import struct


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of one message; value is bytes for type 2."""
    i = 0
    out = []
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wt == 2:
            n, i = _varint(b, i)
            v = bytes(b[i:i + n])
            if len(v) != n:
                raise ValueError("truncated field")
            i += n
        elif wt == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
        out.append((f, wt, v))
    return out


def _anyvalue(b):
    for f, wt, v in fields(b):
        if f == 1:
            return v.decode()
        if f == 2:
            return bool(v)
        if f == 3:
            return v - (1 << 64) if v >= 1 << 63 else v
        if f == 6:
            return _kvlist(v)
        if f == 7:
            return v
    return None


def _kv(b):
    key, val = None, None
    for f, wt, v in fields(b):
        if f == 1:
            key = v.decode()
        elif f == 2:
            val = _anyvalue(v)
    return key, val


def _kvlist(b):
    return dict(_kv(v) for f, wt, v in fields(b) if f == 1)


def _record(b):
    r = {"attributes": {}}
    for f, wt, v in fields(b):
        if f == 1:
            r["timeUnixNano"] = v
        elif f == 2:
            r["severityNumber"] = v
        elif f == 3:
            r["severityText"] = v.decode()
        elif f == 5:
            r["body"] = _anyvalue(v)
        elif f == 6:
            k, val = _kv(v)
            r["attributes"][k] = val
        elif f == 11:
            r["observedTimeUnixNano"] = v
    return r


def decode_protobuf(b):
    recs = []
    for f, _, rl in fields(b):
        assert f == 1
        for f2, _, sl in fields(rl):
            if f2 != 2:
                continue
            for f3, _, lr in fields(sl):
                if f3 == 2:
                    recs.append(_record(lr))
    return recs


def _json_value(v):
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "boolValue" in v:
        return v["boolValue"]
    if "bytesValue" in v:
        return base64.b64decode(v["bytesValue"])
    if "kvlistValue" in v:
        return {kv["key"]: _json_value(kv["value"]) for kv in v["kvlistValue"].get("values", [])}
    return None


def decode_json(b):
    recs = []
    doc = json.loads(b)
    for rl in doc.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for lr in sl.get("logRecords", []):
                r = {"attributes": {}}
                for k in ("timeUnixNano", "observedTimeUnixNano"):
                    if k in lr:
                        r[k] = int(lr[k])
                if "severityNumber" in lr:
                    r["severityNumber"] = int(lr["severityNumber"])
                if "severityText" in lr:
                    r["severityText"] = lr["severityText"]
                if "body" in lr:
                    r["body"] = _json_value(lr["body"])
                for kv in lr.get("attributes", []):
                    r["attributes"][kv["key"]] = _json_value(kv["value"])
                recs.append(r)
    return recs


def decode(body, content_type, content_encoding=""):
    if content_encoding == "gzip":
        body = gzip.decompress(body)
    if "json" in (content_type or ""):
        return decode_json(body)
    return decode_protobuf(body)
