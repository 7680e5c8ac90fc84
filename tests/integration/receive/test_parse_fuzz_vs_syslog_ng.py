# SPDX-License-Identifier: MIT
"""A differential fuzzer of the parse, syslog-ng the oracle: headers built
at random from the pieces devices put in them (PRI, spaces, Cisco's
sequence and clock mark, stamps of every shape, hosts, tags, PIDs, colons,
RFC 5424 fields and SD) go to syslog-ng parsing as SC4S does and to
syslogrx --format json; every field must agree, or the difference be one
docs/outputs.md lists. A quarter of them get a byte of header syntax put in
or taken out (PARSE_FUZZ_KEEP: the share left whole). Seeded and bounded:
PARSE_FUZZ_SEED, PARSE_FUZZ_COUNT (make test: 1500; make fuzz runs more)."""
import os
import random
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from support.parse_oracle import differing, explained, run_both

TZ = "America/Chicago"
SEED = int(os.environ.get("PARSE_FUZZ_SEED", "20261128"))
COUNT = int(os.environ.get("PARSE_FUZZ_COUNT", "1500"))

PRIS = ["<13>", "<0>", "<191>", "<34> ", "<165>  ", "", "<6>"]
SEQS = ["", "", "", "20: ", "00042: ", ": ", "7:"]
MARKS = ["", "", "*", "."]
HOSTS = ["h-1", "10.0.0.1", "fe80::1", "2001:db8::7", "host.example.com", "-", "h1:",
         "abc:", "h[1]", "x" * 40]
TAGS = ["app", "app[123]", "CEF:0|V|P", "%ASA-6-302013:", "a/b[9]:", "-", "prog[-]:",
        "p" * 60 + ":", "sshd(pam_unix)[7]:", "[5]:", "tag ", ":", "app[12", "app[1]x:"]
MSGS = ["hello world", "k=v a:b", "", " two", "[x] y", "Message forwarded from h2: z",
        "last message repeated 2 times"]
SD = ["-", '[a b="c"]', "[x@1]", '[a b="c"][d e="\\]f"]', '[a b=c]', '[a b="c"', "[a b=\"c\"]x",
      "[" + "i" * 40 + ' k="v"]']


def _stamp(r, now):
    """A stamp of one of the shapes devices send, at a time near now (whole
    quarter hours and seconds off, for --guess-timezone) or far from it."""
    t = now + timedelta(seconds=r.choice([0, 0, 900 * r.randint(-60, 60), r.randint(-99999, 99999),
                                          86400 * r.randint(-400, 400)]))
    t = t.replace(microsecond=r.randint(0, 999999))
    frac = r.choice(["", "." + f"{t.microsecond:06d}"[:r.randint(1, 6)], ",123",
                     ".123456789"])
    zone = r.choice(["", "Z", "+05:30", "-06:00", "+0100"])
    return r.choice([
        f"{t:%b %d %H:%M:%S}{frac}",
        f"{t:%b} {t.day:2d} {t:%H:%M:%S}",
        f"{t:%b %d %Y %H:%M:%S}" + r.choice(["", ":"]),
        f"{t:%b %d %H:%M:%S %Y}",
        f"{t:%Y-%m-%d}" + r.choice(["T", " "]) + f"{t:%H:%M:%S}{frac}{zone}",
        f"{t:%a %b %d %H:%M:%S %Y}",
        "",
    ])


def _3164(r, now):
    sp = lambda: r.choice([" ", " ", "  "])  # noqa: E731
    head = r.choice(PRIS) + r.choice(SEQS) + r.choice(MARKS) + _stamp(r, now)
    head += r.choice(["", "", ":"])
    if r.random() < 0.8:
        head += sp() + r.choice(HOSTS)
    return head + sp() + r.choice(TAGS) + r.choice([" ", ": ", ""]) + r.choice(MSGS)


def _5424(r, now):
    t = now + timedelta(seconds=r.randint(-99999, 99999))
    stamp = r.choice(["-", f"{t:%Y-%m-%dT%H:%M:%S}Z", f"{t:%Y-%m-%dT%H:%M:%S.%f}+01:00",
                      f"{t:%Y-%m-%dT%H:%M:%S}.123456789-06:00", f"{t:%Y-%m-%dT%H:%M:%S}",
                      f"{t:%Y-%m-%d %H:%M:%S}Z", f"{t:%Y-%m-%dT%H:%M:%S}-0600"])
    fields = [r.choice(["h", "-", "fe80::1", "h:1", "h[1]", "x" * 60]),
              r.choice(["app", "-", "a" * 60]), r.choice(["123", "-", "p" * 130]),
              r.choice(["ID47", "-", "m" * 40])]
    tail = r.choice(["", " msg", " \ufeffbom msg", "x", "  two"])
    return r.choice(PRIS[:3]) + "1 " + stamp + " " + " ".join(fields) + " " + r.choice(SD) + tail


def _mutate(r, text):
    """One in four: a byte of header syntax put in, or one taken out, within
    the first 60 bytes (where the header is)."""
    if r.random() < float(os.environ.get("PARSE_FUZZ_KEEP", "0.75")) or not text:
        return text
    k = r.randrange(min(len(text), 60))
    if r.random() < 0.5:
        return text[:k] + text[k + 1:]
    return text[:k] + r.choice(" :[]<>*.-0123456789TZ,1") + text[k:]


def test_random_headers_parse_as_syslog_ng_does(tmp_path, syslogrx):
    r = random.Random(SEED)
    now = datetime.now(ZoneInfo(TZ)).replace(tzinfo=None)
    grams = [_mutate(r, _5424(r, now) if r.random() < 0.3 else _3164(r, now)).encode()
             for _ in range(COUNT)]
    grams = [g for g in grams if g.strip(b" ")]
    pairs = run_both(tmp_path, syslogrx, grams, TZ)
    bad = []
    for g, (sng, rx) in zip(grams, pairs):
        fields = differing(sng, rx, g)
        if fields and explained(g, sng, rx, fields) is None:
            bad.append(f"{g!r}\n    " + str({f: (sng.get(f), rx.get(f)) for f in fields}))
    assert not bad, f"seed {SEED}: {len(bad)} of {len(grams)} differ:\n" + "\n".join(bad[:40])
