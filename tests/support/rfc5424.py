"""A strict RFC 5424 reader, written from the RFC's ABNF (section 6) and its
prose rules, apart from syslogrx's parser and formatter: the oracle the tests
judge rfc5424 output by. It refuses what RFC 5424 refuses and syslog
parsers commonly let through:

- a PRI past 191, a VERSION with a leading zero, a header field longer than
  its limit or with a byte outside PRINTUSASCII (33..126);
- a TIMESTAMP that is not FULL-DATE "T" FULL-TIME with a real calendar date,
  seconds 00-59, at most 6 fraction digits and a "Z" or +hh:mm offset;
- an SD-NAME (SD-ID, PARAM-NAME) outside 1*32 PRINTUSASCII but '=' ']' '"';
- in a PARAM-VALUE, a ']' or a '\\' that is not escaped, a backslash before
  anything but '"' '\\' ']' (6.3.3: those three MUST be escaped), or bytes
  that are not UTF-8 (UTF-8-STRING);
- the same SD-ID twice in one message (6.3.2);
- a MSG after a BOM that is not UTF-8 (MSG-UTF8).

parse(line) returns a Message or raises Invalid naming the rule.
"""
import datetime
from dataclasses import dataclass, field

BOM = b"\xef\xbb\xbf"


class Invalid(ValueError):
    pass


@dataclass
class Message:
    pri: int
    version: int
    timestamp: bytes
    hostname: bytes
    app_name: bytes
    procid: bytes
    msgid: bytes
    sd: list = field(default_factory=list)   # [(sd_id, [(name, value str)])]
    msg: bytes = None
    bom: bool = False

    def sd_ids(self):
        return [i for i, _ in self.sd]

    def element(self, sd_id):
        for i, params in self.sd:
            if i == sd_id:
                return params
        return None


def _printusascii(b):
    return all(33 <= c <= 126 for c in b)


class _Reader:
    def __init__(self, data):
        self.d = data
        self.i = 0

    def peek(self):
        return self.d[self.i] if self.i < len(self.d) else None

    def expect(self, byte, what):
        if self.peek() != byte:
            raise Invalid(f"{what}: {chr(byte)!r} expected at {self.i}")
        self.i += 1

    def token(self, what, limit):
        """A header field: NILVALUE or 1*limit PRINTUSASCII, then SP."""
        end = self.d.find(b" ", self.i)
        if end < 0:
            raise Invalid(f"{what}: no SP after it")
        tok = self.d[self.i:end]
        if not tok or len(tok) > limit or not _printusascii(tok):
            raise Invalid(f"{what}: {tok!r} is not 1*{limit}PRINTUSASCII")
        self.i = end + 1
        return None if tok == b"-" else tok


def _timestamp(tok):
    if tok == b"-":
        return
    s = tok.decode("ascii")
    if len(s) < 20 or s[4] != "-" or s[7] != "-" or s[10] != "T" or s[13] != ":" or s[16] != ":":
        raise Invalid(f"TIMESTAMP {s!r}: not FULL-DATE T FULL-TIME")
    digits = s[0:4] + s[5:7] + s[8:10] + s[11:13] + s[14:16] + s[17:19]
    if not digits.isdigit() or not digits.isascii():
        raise Invalid(f"TIMESTAMP {s!r}: not digits")
    try:
        datetime.date(int(s[0:4]), int(s[5:7]), int(s[8:10]))
    except ValueError:
        raise Invalid(f"TIMESTAMP {s!r}: no such date") from None
    if int(s[11:13]) > 23 or int(s[14:16]) > 59 or int(s[17:19]) > 59:
        raise Invalid(f"TIMESTAMP {s!r}: TIME-HOUR/MINUTE/SECOND out of range")
    rest = s[19:]
    if rest.startswith("."):
        n = 1
        while n < len(rest) and rest[n].isdigit() and rest[n].isascii():
            n += 1
        if not 2 <= n <= 7:
            raise Invalid(f"TIMESTAMP {s!r}: TIME-SECFRAC is 1*6DIGIT")
        rest = rest[n:]
    if rest == "Z":
        return
    if (len(rest) != 6 or rest[0] not in "+-" or rest[3] != ":" or not rest[1:3].isdigit()
            or not rest[4:6].isdigit() or int(rest[1:3]) > 23 or int(rest[4:6]) > 59):
        raise Invalid(f"TIMESTAMP {s!r}: TIME-OFFSET")


def _sd_name(r, what):
    start = r.i
    while r.peek() is not None and 33 <= r.peek() <= 126 and r.peek() not in b'=]"':
        r.i += 1
    name = r.d[start:r.i]
    if not 1 <= len(name) <= 32:
        raise Invalid(f"{what}: {name!r} is not 1*32 SD-NAME characters")
    return name.decode("ascii")


def _param_value(r):
    """Up to the closing '"': escapes undone, the bytes UTF-8."""
    out = bytearray()
    while True:
        c = r.peek()
        if c is None:
            raise Invalid("PARAM-VALUE: no closing '\"'")
        if c == ord('"'):
            r.i += 1
            break
        if c == ord("\\"):
            nxt = r.d[r.i + 1:r.i + 2]
            if nxt not in (b'"', b"\\", b"]"):
                raise Invalid(f"PARAM-VALUE: '\\' before {nxt!r} (6.3.3: escape only \" \\ ])")
            out += nxt
            r.i += 2
            continue
        if c == ord("]"):
            raise Invalid("PARAM-VALUE: ']' not escaped (6.3.3)")
        out.append(c)
        r.i += 1
    try:
        return out.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise Invalid(f"PARAM-VALUE: not UTF-8: {e}") from None


def _structured_data(r):
    if r.peek() == ord("-"):
        r.i += 1
        return []
    elems = []
    if r.peek() != ord("["):
        raise Invalid("STRUCTURED-DATA: NILVALUE or '[' expected")
    while r.peek() == ord("["):
        r.i += 1
        sd_id = _sd_name(r, "SD-ID")
        if any(sd_id == e for e, _ in elems):
            raise Invalid(f"SD-ID {sd_id!r} twice in one message (6.3.2)")
        params = []
        while r.peek() == ord(" "):
            r.i += 1
            name = _sd_name(r, "PARAM-NAME")
            r.expect(ord("="), "SD-PARAM")
            r.expect(ord('"'), "SD-PARAM")
            params.append((name, _param_value(r)))
        r.expect(ord("]"), "SD-ELEMENT")
        elems.append((sd_id, params))
    return elems


def parse(line):
    """One RFC 5424 message (bytes, without the line's '\\n')."""
    r = _Reader(line)
    r.expect(ord("<"), "PRI")
    end = line.find(b">")
    pri = line[1:end] if end > 0 else b""
    if not (1 <= len(pri) <= 3 and pri.isdigit() and int(pri) <= 191):
        raise Invalid(f"PRI {pri!r}")
    r.i = end + 1
    sp = line.find(b" ", r.i)
    version = line[r.i:sp] if sp > 0 else b""
    if not (1 <= len(version) <= 3 and version.isdigit() and version[0:1] != b"0"):
        raise Invalid(f"VERSION {version!r}")
    r.i = sp + 1
    ts = r.token("TIMESTAMP", 64)
    _timestamp(ts or b"-")
    m = Message(int(pri), int(version), ts, r.token("HOSTNAME", 255), r.token("APP-NAME", 48),
                r.token("PROCID", 128), r.token("MSGID", 32))
    m.sd = _structured_data(r)
    if r.i == len(line):
        return m
    r.expect(ord(" "), "SP before MSG")
    msg = line[r.i:]
    if msg.startswith(BOM):
        m.bom = True
        msg = msg[len(BOM):]
        try:
            msg.decode("utf-8", errors="strict")
        except UnicodeDecodeError as e:
            raise Invalid(f"MSG-UTF8: not UTF-8 after the BOM: {e}") from None
    m.msg = msg or None
    return m
