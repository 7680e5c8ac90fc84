"""make install: the tree under DESTDIR and PREFIX, the man pages (render
without a warning, name every flag of --help), the unit (systemd-analyze
verify), the logrotate and sysctl.d files; make install-lab: the lab tools
apart from the daemon."""
import filecmp
import os
import re
import stat

import pytest

from support.paths import binary, BUILD, ROOT
from support.procs import run_cmd

BINARIES = ["syslogrx", "udpdrops", "udpbalance"]
LAB_TOOLS = ["sysloggen", "drainrx"]


def make_install(*args, target="install"):
    r = run_cmd(["make", "-C", ROOT, target] + list(args), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def tree(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, files in os.walk(root) for f in files)


def test_destdir_tree(tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}")
    assert tree(dest) == sorted(
        [f"usr/local/bin/{b}" for b in BINARIES] +
        [f"usr/local/share/man/man8/{b}.8" for b in BINARIES] + [
            "usr/local/lib/systemd/system/syslogrx.service",
            "usr/local/lib/systemd/system/syslogrx-unprivileged.service",
            "usr/local/share/doc/syslogrx/syslogrx.conf.example",
            "usr/local/share/doc/syslogrx/syslogrx-alerts.yml",
            "usr/local/share/doc/syslogrx/LICENSE",
            "etc/syslogrx/syslogrx.conf",
            "etc/logrotate.d/syslogrx",
            "usr/local/lib/sysctl.d/60-syslogrx.conf",
        ])
    for b in BINARIES:
        path = dest / "usr/local/bin" / b
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
        assert filecmp.cmp(path, os.path.join(BUILD, b), shallow=False)
    unit = (dest / "usr/local/lib/systemd/system/syslogrx.service").read_text()
    assert "ExecStart=/usr/local/bin/syslogrx --config /etc/syslogrx/syslogrx.conf\n" in unit
    assert "@" not in unit.replace("@system-service", "")
    assert (dest / "etc/syslogrx/syslogrx.conf").read_text() == \
        open(os.path.join(ROOT, "dist/syslogrx.conf")).read()
    assert filecmp.cmp(dest / "usr/local/share/doc/syslogrx/syslogrx-alerts.yml",
                       os.path.join(ROOT, "dist/syslogrx-alerts.yml"), shallow=False)

    for path, src in [("etc/logrotate.d/syslogrx", "dist/logrotate/syslogrx"),
                      ("usr/local/lib/sysctl.d/60-syslogrx.conf", "dist/sysctl.d/60-syslogrx.conf")]:
        assert stat.S_IMODE((dest / path).stat().st_mode) == 0o644, path
        assert filecmp.cmp(dest / path, os.path.join(ROOT, src), shallow=False), path

    # A second install keeps the admin's config and logrotate file.
    (dest / "etc/syslogrx/syslogrx.conf").write_text("listen = 0.0.0.0:5514\n")
    (dest / "etc/logrotate.d/syslogrx").write_text("# the admin's\n")
    make_install(f"DESTDIR={dest}")
    assert (dest / "etc/syslogrx/syslogrx.conf").read_text() == "listen = 0.0.0.0:5514\n"
    assert (dest / "etc/logrotate.d/syslogrx").read_text() == "# the admin's\n"


def test_install_lab_puts_the_lab_tools_apart(tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}", target="install-lab")
    assert tree(dest) == sorted(f"usr/local/libexec/syslogrx/{b}" for b in LAB_TOOLS)
    for b in LAB_TOOLS:
        path = dest / "usr/local/libexec/syslogrx" / b
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
        assert filecmp.cmp(path, os.path.join(BUILD, b), shallow=False)
    make_install(f"DESTDIR={dest}", "PREFIX=/usr", "LIBEXECDIR=/usr/lib", target="install-lab")
    assert (dest / "usr/lib/syslogrx/sysloggen").exists()


def test_prefix_usr(tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}", "PREFIX=/usr")
    assert (dest / "usr/bin/syslogrx").exists()
    assert (dest / "usr/share/man/man8/syslogrx.8").exists()
    assert (dest / "usr/lib/sysctl.d/60-syslogrx.conf").exists()  # where systemd-sysctl reads
    unit = (dest / "usr/lib/systemd/system/syslogrx.service").read_text()
    assert "ExecStart=/usr/bin/syslogrx --config /etc/syslogrx/syslogrx.conf\n" in unit


def test_man_page_renders_without_warnings_and_names_every_flag(tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}")
    page = str(dest / "usr/local/share/man/man8/syslogrx.8")
    r = run_cmd(["groff", "-man", "-ww", "-z", page])
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", r.stderr
    r = run_cmd(["man", "--warnings", "-l", page], env=dict(os.environ, MANWIDTH="100"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = r.stdout
    assert "SYNOPSIS" in text and "SIGHUP" in text and "EXAMPLES" in text
    # Every long flag of --help is in the page.
    help_text = run_cmd([binary("syslogrx"), "--help"]).stdout
    flags = set(re.findall(r"--([a-z][a-z-]+)", help_text.split("\n\n  ", 1)[-1]))
    flags -= {"help", "usage", "version"}
    assert len(flags) >= 20, flags
    missing = sorted(f for f in flags if f"--{f}" not in text)
    assert not missing, f"not in syslogrx.8: {missing}"


def help_flags(tool):
    """Every flag --help lists, long and short: {"--port", "-p", ...}."""
    out = run_cmd([binary(tool), "--help"]).stdout
    flags = set()
    for line in out.splitlines():
        m = re.match(r"^\s+(?:(-\S), )?(--[a-z][a-z-]*)", line)
        if m:
            flags |= {f for f in m.groups() if f}
    return flags


@pytest.mark.parametrize("tool", ["udpdrops", "udpbalance"])
def test_tool_man_page_renders_and_names_every_flag(tool, tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}")
    page = str(dest / f"usr/local/share/man/man8/{tool}.8")
    r = run_cmd(["groff", "-man", "-ww", "-z", page])
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", r.stderr
    r = run_cmd(["man", "--warnings", "-l", page], env=dict(os.environ, MANWIDTH="100"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = r.stdout
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "PRIVILEGES", "EXIT STATUS",
                    "EXAMPLES", "SEE ALSO"):
        assert re.search(rf"^{section}$", text, re.M), f"{tool}.8 has no {section}"
    flags = help_flags(tool)
    assert len(flags) >= 14, flags
    # A flag is named where it is a word: "--senders" is not "--senders-top".
    missing = sorted(f for f in flags
                     if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text))
    assert not missing, f"not in {tool}.8: {missing}"


def test_sysctl_file_is_what_the_preflight_asks_for():
    """60-syslogrx.conf parses as sysctl.d(5) lines, names settings this kernel
    has, and gives rmem_max what syslogrx's own pre-flight asks for the shipped
    config (syslogrx run with that config and no CAP_NET_ADMIN is the oracle)."""
    settings = {}
    with open(os.path.join(ROOT, "dist/sysctl.d/60-syslogrx.conf")) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            m = re.fullmatch(r"(-?)([a-z0-9_.]+)\s*=\s*(\S+)", line)
            assert m, f"line {n}: not KEY = VALUE: {line!r}"
            settings[m.group(2)] = m.group(3)
    assert settings, "no setting"
    for key in settings:
        r = run_cmd(["sysctl", "-n", key])
        assert r.returncode == 0, f"{key}: {r.stderr}"
    with open(os.path.join(ROOT, "dist/syslogrx.conf")) as f:
        conf = dict(re.findall(r"^([a-z-]+)\s*=\s*(\S+)", f.read(), re.M))
    rcvbuf = int(conf["rcvbuf"].rstrip("M")) << 20
    assert int(settings["net.core.rmem_max"]) == rcvbuf // 2
    # syslogrx's pre-flight, with the shipped config and no CAP_NET_ADMIN.
    r = run_cmd(["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-net_admin",
                 binary("syslogrx"), "--config", os.path.join(ROOT, "dist/syslogrx.conf"),
                 "--listen", "127.0.0.1:0", "--output", "null", "--summary", "/dev/null",
                 "--no-trace", "--duration", "1"], timeout=60)
    assert r.returncode == 0, r.stderr
    host_max = int(run_cmd(["sysctl", "-n", "net.core.rmem_max"]).stdout)
    asked = re.findall(r"pre-flight rcvbuf: WARNING: .*fix: sysctl -w net\.core\.rmem_max=(\d+)",
                       r.stderr)
    if host_max < rcvbuf // 2:
        assert asked == [settings["net.core.rmem_max"]], r.stderr
    else:  # a host tuned higher: nothing asked, and the file asks for no more than it has
        assert asked == [] and int(settings["net.core.rmem_max"]) <= host_max, r.stderr


def test_logrotate_file_parses_and_reopens_by_signal(tmp_path):
    """logrotate -d (debug: nothing done) reads the installed file without an
    error; it renames and signals (no copytruncate, no create)."""
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}")
    conf = dest / "etc/logrotate.d/syslogrx"
    r = run_cmd(["logrotate", "-d", "-s", str(tmp_path / "state"), str(conf)])
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "error" not in out.lower(), out
    assert "rotating pattern: /var/log/syslogrx/*.log" in out, out
    text = conf.read_text()
    directives = {l.split()[0] for l in text.splitlines()
                  if l.startswith("\t") and not l.startswith("\t\t")}
    assert "copytruncate" not in directives and "nocreate" in directives, directives
    assert "systemctl kill --kill-whom=main --signal=HUP" in text


def test_unit_passes_systemd_analyze_verify(tmp_path):
    """Installed where its ExecStart exists, with the man page on MANPATH (verify
    checks both), and no DESTDIR: the unit as systemd would load it."""
    prefix = tmp_path / "usr"
    make_install(f"PREFIX={prefix}", f"SYSCONFDIR={tmp_path / 'etc'}")
    unit = prefix / "lib/systemd/system/syslogrx.service"
    assert f"ExecStart={prefix}/bin/syslogrx --config {tmp_path}/etc/syslogrx/syslogrx.conf" \
        in unit.read_text()
    r = run_cmd(["systemd-analyze", "verify", str(unit)],
                env=dict(os.environ, MANPATH=str(prefix / "share/man")), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "syslogrx" not in r.stdout + r.stderr, r.stdout + r.stderr
    # The one with no privilege at all, the same way.
    unit = prefix / "lib/systemd/system/syslogrx-unprivileged.service"
    text = unit.read_text()
    assert f"ExecStart={prefix}/bin/syslogrx --config {tmp_path}/etc/syslogrx/syslogrx.conf" \
        in text and "@" not in text.replace("@system-service", "")
    assert "\nCapabilityBoundingSet=\n" in text and "\nPrivateUsers=yes\n" in text
    r = run_cmd(["systemd-analyze", "verify", str(unit)],
                env=dict(os.environ, MANPATH=str(prefix / "share/man")), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "syslogrx" not in r.stdout + r.stderr, r.stdout + r.stderr
