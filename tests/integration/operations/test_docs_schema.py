"""docs/metrics.md's one table is the schema of the summary and the metrics,
checked against the code both ways so the two cannot drift:

- statically: every metric name src/rx/report/metrics.c can emit is in the
  table and every metric of the table is in metrics.c; every key
  src/rx/report/summary.c writes is a part of a key path of the table, and
  every part of a path is a key summary.c writes;
- on a running syslogrx: every family a scrape shows and every key path of
  its summary is in the table, and every path the table lists for a section
  that was on is in the summary (with --ordered, --env-file, --metrics and
  sysloggen's markers; then a TCP output with --disk-buffer)."""
import glob
import json
import os
import re

from support.paths import binary, ROOT
from support.ports import free_tcp_port, free_udp_port
from support.prom import scrape
from support.procs import Proc, read_json, start_until, sysloggen
from support.tcp_sinks import tcp_server

DOC = os.path.join(ROOT, "docs", "metrics.md")
METRICS_C = os.path.join(ROOT, "src", "rx", "report", "metrics.c")
SUMMARY_C = os.path.join(ROOT, "src", "rx", "report", "summary.c")
# An output's own summary object and metrics rows: its sink's stats file.
OUTPUT_STATS_C = sorted(glob.glob(os.path.join(ROOT, "src", "rx", "sink", "*_stats.c")))


def code_of(*paths):
    return "".join(open(p).read() for p in paths)
PLACEHOLDER = "REASON"  # a kernel drop reason or a librdkafka error name


def doc_table():
    """(summary key paths, metric names) of the one table."""
    text = open(DOC).read()
    start = text.index("| summary key | metric |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    assert len(rows) >= 60, len(rows)
    paths, metrics = set(), set()
    for cells in rows:
        assert len(cells) == 5, cells
        paths |= set(re.findall(r"`([a-z_.\[\]A-Z]+)`", cells[0]))
        metrics |= set(re.findall(r"`(syslogrx_[a-z_]+)`", cells[1]))
        assert cells[0] or cells[1], cells
    return {p.replace("[]", "") for p in paths}, metrics


def untraced_only():
    """Key paths whose meaning starts "without the tracer": written only
    when the tracer could not run (SO_MEMINFO stands in)."""
    text = open(DOC).read()
    out = set()
    for line in text[text.index("| summary key | metric |"):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[4].startswith("without the tracer"):
            out |= set(re.findall(r"`([a-z_.\[\]A-Z]+)`", cells[0]))
    return out


def parts(paths):
    return {k for p in paths for k in p.split(".") if k != PLACEHOLDER}


def test_metric_names_match_metrics_c():
    _, documented = doc_table()
    assert OUTPUT_STATS_C
    emitted = set(re.findall(r'"(syslogrx_[a-z_]+)"', code_of(METRICS_C, *OUTPUT_STATS_C)))
    assert len(emitted) >= 35, emitted
    assert not emitted - documented, f"emitted, not in docs/metrics.md: {sorted(emitted - documented)}"
    assert not documented - emitted, f"in docs/metrics.md, not emitted: {sorted(documented - emitted)}"


def test_summary_keys_match_summary_c():
    paths, _ = doc_table()
    code = code_of(SUMMARY_C, *OUTPUT_STATS_C)
    written = set(re.findall(
        r'(?:jw_\w+|write_reasons|write_string_or_null)\(&?w, (?:r, )?"([a-z_]+)"', code))
    assert len(written) >= 90, written
    documented = parts(paths)
    assert not written - documented, f"written, not in docs/metrics.md: {sorted(written - documented)}"
    assert not documented - written, f"in docs/metrics.md, not written: {sorted(documented - written)}"


def json_paths(v, prefix=""):
    """Every key path of a summary; list items share their list's path, and a
    kernel drop reason or error name (upper case) becomes REASON."""
    out = set()
    if isinstance(v, dict):
        for k, x in v.items():
            k = PLACEHOLDER if k.isupper() else k
            p = f"{prefix}.{k}" if prefix else k
            out.add(p)
            out |= json_paths(x, p)
    elif isinstance(v, list):
        for x in v:
            out |= json_paths(x, prefix)
    return out


def check_run(summary, scrape, sections, traced=True):
    paths, metrics = doc_table()
    if traced:
        paths_wanted = paths - untraced_only()
    else:
        paths_wanted = paths
    documented = paths | {p.rsplit(".", i)[0] for p in paths for i in range(1, p.count(".") + 1)}
    seen = json_paths(summary)
    assert not seen - documented, f"in the summary, not in docs/metrics.md: {sorted(seen - documented)}"
    families = set(re.findall(r"^# TYPE (\S+) ", scrape, re.M))
    assert families, scrape
    assert not families - metrics, f"scraped, not in docs/metrics.md: {sorted(families - metrics)}"
    for section in sections:
        want = {p for p in paths_wanted if (p == section or p.startswith(section + "."))
                and PLACEHOLDER not in p}
        assert want, section
        assert not want - seen, f"in docs/metrics.md, not in the summary: {sorted(want - seen)}"


def test_running_summary_and_scrape_are_in_the_table(procs, tmp_path):
    env = tmp_path / "env_file"
    env.write_text("SC4S_SOURCE_LISTEN_UDP_SOCKETS=4\nSC4S_EBPF_NO_SOCKETS=8\n"
                   "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=https://splunk:8088\n")
    port, mport = free_udp_port(), free_tcp_port()
    summary = tmp_path / "s.json"
    # A named listener: the listener keys and labels are in the run too.
    p, lines = start_until(procs, "metrics on", "--listen", f"main=127.0.0.1:{port}",
                           "--env-file", env, "--ordered", "--sequences",
                     "--threads", "2", "--metrics", mport, "--summary", summary,
                     "--output", "null")
    assert any("WARNING" in l for l in lines), lines
    gen = sysloggen(port, "--rate", 20000, "--count", 2000, "--sources", 2)
    text = scrape(mport)
    rc, _, err = p.stop()
    assert rc == 0, err
    s = read_json(summary)
    assert s["totals"]["received"] == gen["datagrams"] - s["totals"]["kernel_drops"]["total"]
    assert s["config"]["env_file"]["warnings"] and s["config"]["env_file"]["ignored"]
    check_run(s, text, ["version", "listen", "balance", "config", "elapsed_seconds", "sockets",
                        "totals", "window", "loss", "ordering", "preflight", "senders",
                        "listeners"])


def test_disk_buffer_summary_and_scrape_are_in_the_table(procs, tmp_path):
    with tcp_server() as (tport, got):
        port, mport = free_udp_port(), free_tcp_port()
        summary = tmp_path / "s.json"
        p, _ = start_until(procs, "metrics on", "--listen", f"127.0.0.1:{port}",
                           "--metrics", mport, "--output", f"tcp:127.0.0.1:{tport}",
                           "--disk-buffer", tmp_path / "buf", "--summary", summary)
        gen = sysloggen(port, "--rate", 20000, "--count", 1000)
        text = scrape(mport)
        rc, _, err = p.stop()
        assert rc == 0, err
    s = read_json(summary)
    assert s["totals"]["written"] == gen["datagrams"] - s["totals"]["kernel_drops"]["total"]
    assert "syslogrx_disk_buffer_bytes" in text
    check_run(s, text, ["disk_buffer"])
    assert json.dumps(s)  # the summary is one JSON document


def test_unprivileged_summary_keys_are_in_the_table(procs, nobody_dir):
    """Without CAP_BPF and CAP_PERFMON (uid 65534, nothing in the bounding
    set): classic BPF spreads, SO_MEMINFO counts, and the summary says so in
    keys the table lists."""
    port, mport = free_udp_port(), free_tcp_port()
    summary = nobody_dir / "s.json"
    p = Proc(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all", binary("syslogrx"),
              "--listen", f"127.0.0.1:{port}", "--metrics", str(mport),
              "--summary", str(summary), "--output", "null"])
    procs.append(p)
    lines = []
    while not any("metrics on" in l for l in lines):
        line = p.p.stderr.readline().decode()
        assert line, "".join(lines)
        lines.append(line)
    gen = sysloggen(port, "--rate", 20000, "--count", 1000)
    text = scrape(mport)
    rc, _, err = p.stop()
    assert rc == 0, err
    s = read_json(summary)
    assert s["balancer"]["runs"] == "classic BPF", s["balancer"]
    assert s["totals"]["kernel_drops_source"] == "SO_MEMINFO"
    assert s["totals"]["received"] + s["totals"]["kernel_drops"]["total"] == gen["datagrams"]
    check_run(s, text, ["balancer", "totals.kernel_drops_source", "totals.kernel_drops.reasons"],
              traced=False)
