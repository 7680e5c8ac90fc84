# SPDX-License-Identifier: MIT
"""The limits docs/ quotes are the ones the code defines: each figure below
is read from its page (whitespace folded, so a phrase may span lines) and
from the header or source that defines it. A limit changed in the code and
not on the page, or a page that quotes another, fails here with both."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def defines(path):
    """{NAME: int} of a file's `#define NAME <integer expression>` lines."""
    out = {}
    with open(os.path.join(ROOT, path)) as f:
        for name, expr in re.findall(r"^#define (\w+) ([0-9( )*<xXa-fA-FULL]+)$", f.read(), re.M):
            out[name] = eval(re.sub(r"(?<=[0-9a-fA-F])U?L{1,2}\b", "", expr), {})
    return out


def page(name):
    with open(os.path.join(ROOT, "docs", name)) as f:
        return re.sub(r"\s+", " ", f.read())


def number(text):
    return int(text.replace(",", ""))


HTTP = defines("src/net/http_server.h")
HTTP_C = defines("src/net/http_server.c")
TRACER = defines("include/bpf/tracer.h")
SEQ = defines("src/syslog/seqtrack.h")
with open(os.path.join(ROOT, "src", "net", "http_metrics.c")) as _f:
    BACKLOG = int(re.search(r"listen\(h->fd, (\d+) \* HTTP_SERVER_MAX_CONNECTIONS\)",
                            _f.read()).group(1)) * HTTP["HTTP_SERVER_MAX_CONNECTIONS"]

# (page, pattern: its groups are the figures, in the order of `want`, want)
LIMITS = [
    ("security.md", r"\| connections in all \| ([\d,]+) \|", [HTTP["HTTP_SERVER_MAX_CONNECTIONS"]]),
    ("security.md", r"\| connections per client address \| (\d+) \|",
     [HTTP["HTTP_SERVER_MAX_PER_ADDRESS"]]),
    ("security.md", r"\| from accept to the last byte of the answer \| (\d+) s,",
     [HTTP["HTTP_SERVER_DEADLINE_S"]]),
    ("security.md", r"\| request line and headers \| (\d+) KiB \|",
     [HTTP["HTTP_SERVER_REQUEST_MAX"] // 1024]),
    ("security.md", r"the table: ([\d,]+) slots of [\d.]+ KiB each \(request, answer head, a (\d+) "
     r"KiB answer buffer\).*?at most one per connection for at most (\d+) s \|",
     [HTTP["HTTP_SERVER_MAX_CONNECTIONS"], HTTP["HTTP_SERVER_SCRATCH"] // 1024,
      HTTP["HTTP_SERVER_DEADLINE_S"]]),
    ("security.md", r"one per connection: ([\d,]+) of the process's at most \| out of descriptors "
     r"at accept, the listener rests (\d+) ms",
     [HTTP["HTTP_SERVER_MAX_CONNECTIONS"], HTTP_C["ACCEPT_REST_NS"] // 1000000]),
    ("security.md", r"\| the kernel's accept queue \| ([\d,]+) connections \|", [BACKLOG]),
    ("security.md", r"\(([\d,]+) entries per drop-count map", [TRACER["DROPS_MAX_ENTRIES"]]),
    ("security.md", r"tracker is bounded \(([\d,]+) flows, (\d+) MiB of bitmaps\)",
     [SEQ["SEQTRACK_DEF_FLOWS_MAX"], SEQ["SEQTRACK_DEF_MEMORY_MAX"] >> 20]),
    ("metrics.md", r"\): (\d+) connections per client address \(more are closed as soon as they "
     r"are accepted\), ([\d,]+) in all, and (\d+) seconds from accept",
     [HTTP["HTTP_SERVER_MAX_PER_ADDRESS"], HTTP["HTTP_SERVER_MAX_CONNECTIONS"],
      HTTP["HTTP_SERVER_DEADLINE_S"]]),
    ("metrics.md", r"holds (\d+) of them for (\d+) seconds",
     [HTTP["HTTP_SERVER_MAX_PER_ADDRESS"], HTTP["HTTP_SERVER_DEADLINE_S"]]),
]


def test_every_quoted_limit_is_the_defined_one():
    wrong = []
    for name, pattern, want in LIMITS:
        found = re.findall(pattern, page(name))
        assert found, f"docs/{name}: no text matches {pattern!r} (reworded? update this table)"
        for m in found:
            got = [number(g) for g in (m if isinstance(m, tuple) else (m,))]
            if got != want:
                wrong.append(f"docs/{name}: {pattern!r} quotes {got}, the code defines {want}")
    assert not wrong, "\n".join(wrong)
