"""make install: the tree under DESTDIR and PREFIX, the man page (renders
without a warning, names every flag), the unit (systemd-analyze verify)."""
import filecmp
import os
import re
import stat

from conftest import BUILD, ROOT, binary, run_cmd

BINARIES = ["syslogrx", "udpdrops", "udpbalance", "sysloggen", "drainrx"]


def make_install(*args):
    r = run_cmd(["make", "-C", ROOT, "install"] + list(args), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def tree(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, files in os.walk(root) for f in files)


def test_destdir_tree(tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}")
    assert tree(dest) == sorted(
        [f"usr/local/bin/{b}" for b in BINARIES] + [
            "usr/local/share/man/man8/syslogrx.8",
            "usr/local/lib/systemd/system/syslogrx.service",
            "usr/local/lib/systemd/system/syslogrx-unprivileged.service",
            "usr/local/share/doc/syslogrx/syslogrx.conf.example",
            "usr/local/share/doc/syslogrx/syslogrx-alerts.yml",
            "etc/syslogrx/syslogrx.conf",
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

    # A second install keeps the admin's config.
    (dest / "etc/syslogrx/syslogrx.conf").write_text("listen = 0.0.0.0:5514\n")
    make_install(f"DESTDIR={dest}")
    assert (dest / "etc/syslogrx/syslogrx.conf").read_text() == "listen = 0.0.0.0:5514\n"


def test_prefix_usr(tmp_path):
    dest = tmp_path / "root"
    make_install(f"DESTDIR={dest}", "PREFIX=/usr")
    assert (dest / "usr/bin/syslogrx").exists()
    assert (dest / "usr/share/man/man8/syslogrx.8").exists()
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
    # The one with no privilege at all (issue 22), the same way.
    unit = prefix / "lib/systemd/system/syslogrx-unprivileged.service"
    text = unit.read_text()
    assert f"ExecStart={prefix}/bin/syslogrx --config {tmp_path}/etc/syslogrx/syslogrx.conf" \
        in text and "@" not in text.replace("@system-service", "")
    assert "\nCapabilityBoundingSet=\n" in text and "\nPrivateUsers=yes\n" in text
    r = run_cmd(["systemd-analyze", "verify", str(unit)],
                env=dict(os.environ, MANPATH=str(prefix / "share/man")), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "syslogrx" not in r.stdout + r.stderr, r.stdout + r.stderr
