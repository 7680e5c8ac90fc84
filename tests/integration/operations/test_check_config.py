"""syslogrx --check-config: what a start would refuse, every problem named,
with nothing bound and no BPF object loaded (strace sees no bind() and no
bpf() call); the settings printed as they would apply, in the config file's
own syntax (so the print read back as --config prints the same)."""
import os
import socket

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import log_text, run_cmd


def check(*args, trace=None):
    argv = [binary("syslogrx"), "--check-config"] + [str(a) for a in args]
    if trace:
        argv = ["strace", "-f", "-qq", "-e", "trace=bind,bpf", "-e", "signal=none", "-o",
                str(trace)] + argv
    return run_cmd(argv, timeout=30)


def test_good_settings_print_as_they_apply_and_nothing_is_bound(tmp_path):
    port, other = free_udp_port(), free_udp_port()
    env = tmp_path / "env_file"
    env.write_text(f"SC4S_LISTEN_DEFAULT_UDP_PORT={port}\nSC4S_SOURCE_LISTEN_UDP_SOCKETS=6\n")
    conf = tmp_path / "syslogrx.conf"
    conf.write_text(f"env-file = {env}\nthreads = 3\notlp-encoding = json\n"
                    f"summary = {tmp_path / 's.json'}\n")
    trace = tmp_path / "trace"
    r = check("--config", conf, "--listen", f"vendor=127.0.0.1:{other}", "--batch", "32",
              "--output", "otlp:http://u:S3cret@127.0.0.1:4318", trace=trace)
    assert r.returncode == 0, r.stderr
    # Not one bind() (a socket, a metrics port) and not one bpf() (a program,
    # a map, a probe) in the whole run, its path-checking child included.
    assert trace.read_text() == "", trace.read_text()
    assert "ready on" not in r.stderr
    assert log_text(r.stderr).splitlines()[-1] == \
        "syslogrx: --check-config: the settings are good; nothing was bound"
    lines = r.stdout.splitlines()
    # The command line's --listen replaces the env-file's; the file's
    # threads and the env-file's sockets under it; a password never shown.
    assert [l for l in lines if l.startswith("listen")] == [f"listen = vendor=127.0.0.1:{other}"]
    for want in ("sockets = 6", "threads = 3", "batch = 32", "otlp-encoding = json",
                 "output = otlp:http://u:***@127.0.0.1:4318/v1/logs", f"summary = {tmp_path / 's.json'}"):
        assert want in lines, (want, lines)
    assert "S3cret" not in r.stdout + r.stderr
    # The print is a config file: read back, it prints itself.
    printed = tmp_path / "printed.conf"
    printed.write_text(r.stdout.replace("u:***@", "u:S3cret@"))
    again = check("--config", printed)
    assert again.returncode == 0, again.stderr
    settings = [l for l in r.stdout.splitlines() if not l.startswith("# config file")]
    assert [l for l in again.stdout.splitlines() if not l.startswith("# config file")] == \
        [l for l in settings if not l.startswith("# env-file")]


def test_every_problem_is_named_not_only_the_first(tmp_path):
    """Combinations, TLS files, an output address, endpoints, a listener
    port another socket holds, two listeners that collide, an unwritable
    path: each its own line, and exit 1."""
    held = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    held.bind(("127.0.0.1", 0))
    taken = held.getsockname()[1]
    p = free_udp_port()
    notpem = tmp_path / "not.pem"
    notpem.write_text("not a certificate\n")
    try:
        r = check("--listen", f"a=127.0.0.1:{taken}", "--listen", f"b=0.0.0.0:{p}",
                  "--listen", f"c=127.0.0.1:{p}", "--json-raw", "--sockets", "2",
                  "--threads", "3", "--output", "tls:127.0.0.1:6514", "--tls-ca", notpem,
                  "--metrics", "9464", "--health", "127.0.0.1:9464",
                  "--summary", "/nonexistent-dir/s.json",
                  "--disk-buffer", "/nonexistent-dir/buffer")
    finally:
        held.close()
    assert r.returncode == 1, r.stdout + r.stderr
    err = log_text(r.stderr)
    wants = [
        # c collides with b's wildcard (the listener check)
        f"--listen 0.0.0.0:{p} and --listen 127.0.0.1:{p}: one address and port in two",
        "--threads 3 is more than --sockets 2",
        "--json-raw needs --format json",
        f"--tls-ca {notpem}:",
        "--metrics 9464 and --health 127.0.0.1:9464: the same address",
        f"--listen 127.0.0.1:{taken}: port {taken} is taken by a socket on 127.0.0.1:{taken}",
        "--summary /nonexistent-dir/s.json: No such file or directory",
        # a second path refused is a problem of its own
        "--disk-buffer /nonexistent-dir/buffer: No such file or directory",
    ]
    for want in wants:
        assert want in err, (want, err)
    assert err.splitlines()[-1] == \
        "syslogrx: --check-config: 8 problem(s); syslogrx would not start", err


@pytest.mark.parametrize("args,named", [
    (["--sockets", "lots"], "--sockets lots"),
    (["--output", "otlp:ftp://127.0.0.1"], "--output otlp:ftp://127.0.0.1: expected"),
    (["--output", "tcp:collector.example:601"], "--output tcp:collector.example:601: expected"),
    (["--user", "srx-no-such-user"], "--user srx-no-such-user: no such user"),
], ids=["value", "url", "tcp-host", "user"])
def test_a_refusal_exits_1_naming_it(args, named):
    """What does not parse (a value, a URL) stops the reading, and still
    exits 1 (not a start's 2) with the flag named."""
    r = check("--listen", f"127.0.0.1:{free_udp_port()}", "--output", "null", *args)
    assert r.returncode == 1, r.stdout + r.stderr
    assert named in r.stderr, r.stderr


def test_a_config_file_only_on_the_command_line(tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("check-config\n")
    r = run_cmd([binary("syslogrx"), "--config", str(conf)], timeout=30)
    assert r.returncode == 2 and "--check-config: only on the command line" in r.stderr, \
        r.stderr
    assert not os.path.exists(tmp_path / "s.json")
