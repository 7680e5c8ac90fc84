"""Secrets stay out of what syslogrx shows: a URL's userinfo and the OTLP
headers reach the collector, and appear in no log line, no summary, no
metric, and not on the command line when they come from --otlp-header-file
or the config file. The summary is 0600."""
import base64
import os
import socket
import stat

from support.paths import binary
from support.procs import run_cmd
from support.otel_collector import LogSink
from support.ports import free_tcp_port, free_udp_port
from support.prom import scrape

PASSWORD, TOKEN, TENANT = "S3cretPass", "T0kenT0ken", "tenant-7f3a"


def test_userinfo_and_headers_reach_the_collector_and_nothing_else(syslogrx, tmp_path):
    sink = LogSink()
    try:
        hf = tmp_path / "otlp-headers"
        hf.write_text(f"# the collector's key\nX-Api-Key={TOKEN}\n")
        os.chmod(hf, 0o600)
        cf = tmp_path / "syslogrx.conf"
        cf.write_text(f"otlp-header = X-Scope-OrgID={TENANT}\n")
        url = sink.url.replace("http://", f"http://svc:{PASSWORD}@")
        port, mport = free_udp_port(), free_tcp_port()
        os.umask(old := os.umask(0o022))
        rx = syslogrx("--verbose", "--config", str(cf), "--output", f"otlp:{url}", "--otlp-header-file",
                      str(hf), "--metrics", f"127.0.0.1:{mport}", port=port)
        with open(f"/proc/{rx.p.pid}/cmdline", "rb") as f:
            cmdline = f.read().decode()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"<13>Nov 22 03:12:00 h app: one", ("127.0.0.1", port))
        sink.wait_records(1)
        scraped = scrape(mport)
        rc, _, err = rx.stop()
        assert rc == 0, err
        err = rx.ready_line + err                   # every line it wrote
    finally:
        sink.close()
    # the collector got them all, with every request (the probe at start too)
    basic = "Basic " + base64.b64encode(f"svc:{PASSWORD}".encode()).decode()
    assert sink.headers and all(h.get("Authorization") == basic and
                                h.get("X-Api-Key") == TOKEN and
                                h.get("X-Scope-OrgID") == TENANT for h in sink.headers)
    with open(rx.summary_path) as f:
        summary_text = f.read()
    shown = sink.url.replace("http://", "http://svc:***@") + "/v1/logs"
    assert rx.summary["config"]["output"] == "otlp:" + shown
    assert rx.summary["otlp"]["url"] == shown
    assert f"otlp: exporting logs to {shown} (" in err, err
    assert f"ready on 127.0.0.1:{port}, exporting OTLP log records to otlp:{shown}" in err, err
    for where, text in (("stderr", err), ("summary", summary_text), ("metrics", scraped)):
        for secret in (PASSWORD, TOKEN):
            assert secret not in text, f"{secret} in {where}"
    assert TOKEN not in cmdline
    assert stat.S_IMODE(os.stat(rx.summary_path).st_mode) == 0o600


def test_header_file_refused_unless_safe(tmp_path):
    """Group- or world-writable, or a symbolic link: refused at start, the
    flag and the file named, the value never shown; readable by others:
    a warning."""
    hf = tmp_path / "otlp-headers"
    hf.write_text(f"X-Api-Key={TOKEN}\n")
    link = tmp_path / "link"
    link.symlink_to(hf)
    argv = [binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}", "--output",
            "otlp:http://127.0.0.1:9", "--duration", "1", "--otlp-header-file"]
    for mode, path, said in ((0o660, hf, "writable by group or others (mode 0660): refused"),
                             (0o622, hf, "writable by group or others (mode 0622): refused"),
                             (0o600, link, "it is a symbolic link: refused")):
        os.chmod(hf, mode)
        r = run_cmd(argv + [str(path)])
        assert r.returncode == 2, r.stderr
        assert f"--otlp-header-file {path}: {said}" in r.stderr, r.stderr
        assert TOKEN not in r.stderr
    # Readable by others but not writable: used, and said.
    os.chmod(hf, 0o644)
    r = run_cmd(argv + [str(hf)])
    assert r.returncode == 0, r.stderr
    assert f"--otlp-header-file {hf}: a secret readable by every user (mode 0644): " \
        "chmod 0600 it" in r.stderr, r.stderr
    os.chmod(hf, 0o600)
    hf.write_text(f"X-Api-Key {TOKEN}\n")
    r = run_cmd(argv + [str(hf)])
    assert r.returncode == 2 and f"--otlp-header-file {hf}:1 ***: expected KEY=VALUE" in r.stderr
    assert TOKEN not in r.stderr
