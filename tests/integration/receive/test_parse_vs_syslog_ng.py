# SPDX-License-Identifier: MIT
"""syslogrx's parse against syslog-ng's (the oracle): device messages from
public sources and the shapes devices really send, each datagram to a
private Debian syslog-ng parsing as SC4S does and to syslogrx --format
json; host, program, pid, msgid, time (an instant), facility, severity, SD
and msg must agree, except where docs/outputs.md lists a deliberate
difference (DIFFERENCES below, each named there)."""
import os
from collections import Counter
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from support.parse_oracle import DIFFERENCES, differing, explained, load, render, run_both
from support.paths import ROOT

TZ = "America/Chicago"
# source file -> at least this many messages (the corpus is built once by
# tests/data/parse_corpus/build_corpus.py from the repositories it names)
SOURCES = {
    "sc4s.jsonl": 600,       # SC4S's vendor test messages
    "syslog_ng.jsonl": 75,   # syslog-ng's own parser tests
    "rsyslog.jsonl": 300,    # rsyslog's test suite
    "shapes.jsonl": 35,      # every shape of the parse's rules
}
MAX_DOCUMENTED = 0.02


def test_differences_are_documented():
    with open(os.path.join(ROOT, "docs", "outputs.md")) as f:
        doc = f.read()
    for name in DIFFERENCES:
        assert f"`{name}`" in doc, name


def test_corpus_parses_as_syslog_ng_does(tmp_path, syslogrx):
    entries = []
    for name, least in SOURCES.items():
        rows = load(name)
        assert len(rows) >= least, (name, len(rows))
        entries += [(name, src, t) for src, t in rows]
    assert len(entries) >= 400
    now = datetime.now(ZoneInfo(TZ))
    grams = [render(src, t, i, now) for i, (_, src, t) in enumerate(entries)]
    pairs = run_both(tmp_path, syslogrx, grams, TZ)
    bad, documented, per = [], Counter(), Counter()
    for (name, _, _), g, (sng, rx) in zip(entries, grams, pairs):
        per[name] += 1
        fields = differing(sng, rx, g)
        if not fields:
            continue
        why = explained(g, sng, rx, fields)
        if why is None:
            bad.append((g, fields, {f: (sng.get(f), rx.get(f)) for f in fields}))
        else:
            documented.update(why)
            documented["(messages)"] += 1
    print(f"corpus: {dict(per)}; documented differences: {dict(documented)}")
    assert not bad, f"{len(bad)} of {len(grams)} differ:\n" + "\n".join(
        f"{g!r}\n    {d}" for g, _, d in bad[:60])
    assert documented["(messages)"] <= MAX_DOCUMENTED * len(grams), documented


def _stamps(now):
    """Datagrams whose time is the rule under test: stamps at and off the
    receive time (quarter hours and not, within 24 h and not, zones that
    exist and not), with and without offsets and years, in summer and winter
    and at the changes of America/Chicago's offset."""
    out = []
    for shift in (0, 3 * 3600, -5 * 3600 - 1800, 45 * 60, 7 * 60, 13 * 3600 + 1200,
                  -11 * 3600, 15 * 3600, 23 * 3600 + 2700, 25 * 3600, 20, 40, 9000, -12600,
                  20700, -34200, 30600, 1800, 45900):
        t = now + timedelta(seconds=shift)
        out.append(f"<13>{t:%b %d %H:%M:%S} h{shift} p: bsd".encode())
        out.append(f"<13>{t:%Y-%m-%dT%H:%M:%S.%f}Z h{shift} p: iso utc".encode())
        out.append(f"<13>{t:%Y-%m-%d %H:%M:%S,%f} h{shift} p: iso local".encode())
        out.append(f"<13>1 {t:%Y-%m-%dT%H:%M:%S}Z h{shift} p - - - 5424 utc".encode())
        out.append(f"<13>1 {t:%Y-%m-%dT%H:%M:%S.%f} h{shift} p - - - 5424 local".encode())
    for wall in ("Jul  1 2025 12:00:00", "Jan 15 2026 12:00:00", "Mar  8 2026 01:59:59",
                 "Mar  8 2026 02:30:00", "Mar  8 2026 03:00:00", "Nov  1 2026 00:59:59",
                 "Nov  1 2026 01:30:00", "Nov  1 2026 02:00:00", "Dec 31 2025 23:59:59"):
        out.append(f"<13>{wall}: h p: year".encode())
        out.append(f"<13>{wall[:6]} {wall[12:]} {wall[7:11]} h p: linksys year".encode())
    return out


@pytest.mark.parametrize("tz,guess", [("America/Chicago", True), ("Asia/Kolkata", False),
                                      ("UTC", True), ("Australia/Eucla", True), (None, True),
                                      ("Europe/Paris", False)])
def test_time_rules_as_syslog_ng(tmp_path, syslogrx, tz, guess):
    """--timezone (a named zone, UTC, none: TZ unset and the host's zone) and
    --guess-timezone against syslog-ng: the same instant for every stamp."""
    now = datetime.now(ZoneInfo(tz) if tz else None).astimezone()
    grams = _stamps(now.replace(tzinfo=None))
    pairs = run_both(tmp_path, syslogrx, grams, tz, guess)
    bad = [(g, sng["time_us"], rx["time_us"]) for g, (sng, rx) in zip(grams, pairs)
           if sng["time_us"] != rx["time_us"]]
    assert not bad, "\n".join(map(repr, bad))
