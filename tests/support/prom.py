# SPDX-License-Identifier: MIT
"""The Prometheus text format as the tests read it: scrape a /metrics endpoint
(status 200, the 0.0.4 content type) or GET a health path, parse every sample line into
{(name, labels): value} (each after a TYPE line of its family, no series
twice), then pick series and values by label."""
import re
import subprocess
import sys
import urllib.error
import urllib.request


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape(port, path="/metrics"):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return resp.read().decode()


def scrape_in(ns, port):
    """parse() of /metrics on 127.0.0.1:port in network namespace ns."""
    r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                        "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
                        f"'http://127.0.0.1:{port}/metrics', timeout=10).read().decode())"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return parse(r.stdout)


def http_get(port, path):
    """(status, body) of GET http://127.0.0.1:port/path, whatever the status
    (/healthz, /readyz)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def parse(text):
    """{(name, frozenset(labels.items())): value}; also checks every sample
    follows a TYPE line of its family."""
    out, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        assert name in typed, f"{name} has no # TYPE line before it"
        key = (name, frozenset(LABEL.findall(labels)))
        assert key not in out, f"duplicate series {line!r}"
        out[key] = float(value)
    return out


def series(m, name, **labels):
    """{label tuple of the non-given labels: value} for name with these labels."""
    want = {(k, str(v)) for k, v in labels.items()}
    return {tuple(sorted(set(l) - want)): v for (n, l), v in m.items()
            if n == name and want <= set(l)}


def value(m, name, **labels):
    got = series(m, name, **labels)
    assert len(got) == 1, f"{name}{labels}: {got}"
    return next(iter(got.values()))
