"""Issue 12: --env-file (SC4S's env_file mapped, its silent misbehaviours
warned), pre-flight warnings against the kernel's limits, and advice after a
loss that, applied to the same load, removes the drops it explains.

The advice tests run the receiver SCHED_FIFO in both runs: other tests share
the 2 cores, and a receiver starved by them for a varying time drops
whatever its settings, which is not the load the advice is about."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import log_text, run_cmd, start_rx

FIFO = ["chrt", "-f", "1"]     # bounded: 2-3 s of load, at most ~1.1 cores
# The kernel's usual net.core.rmem_default, asked for explicitly where a test
# is about "the default buffer": the same on a host tuned as SC4S says
# (rmem_default 512M, which no burst here would fill).
KERNEL_DEFAULT_RCVBUF = 212992


# Held batches cost more than their messages (~2.7 KB each for 1,000-byte
# datagrams): 60,000 of them need more than the default 64 MiB --window-bytes.
BIG_WINDOW = ("--window", "60000", "--window-bytes", "1G")


def stop_rx(p):
    rc, out, err = p.stop()
    assert rc == 0, err
    return p.summary, err


def preflight(summary, check):
    rows = [c for c in summary["preflight"] if c["check"] == check]
    assert len(rows) == 1, summary["preflight"]
    return rows[0]


def sysctl(name, netns=None):
    path = "/proc/sys/" + name.replace(".", "/")
    argv = ["cat", path] if not netns else ["ip", "netns", "exec", netns, "cat", path]
    return [int(v) for v in subprocess.run(argv, capture_output=True, text=True,
                                           check=True).stdout.split()]


def test_env_file_sc4s_mapping_and_warnings(tmp_path, procs, netns):
    """An SC4S env_file with the settings SC4S gets silently wrong: each is
    warned about, each mapped setting is printed, and the summary's config is
    what the mapping says (in a namespace: SC4S listens on 0.0.0.0)."""
    rmem_max = sysctl("net.core.rmem_max", netns)[0]
    # Above rmem_max (SC4S would get 2 x rmem_max), where --rcvbuf (2 x that,
    # at most 1G) allows it; on a host tuned as SC4S says (rmem_max 512M)
    # no SO_RCVBUFF can be above it, and none is warned about.
    so_rcvbuff = min(rmem_max + (1 << 20), 1 << 29)
    above = so_rcvbuff > rmem_max
    port = 5514
    env = tmp_path / "env_file"
    env.write_text(
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=https://splunk.example:8088\n"
        f"SC4S_LISTEN_DEFAULT_UDP_PORT={port}\n"
        "SC4S_SOURCE_LISTEN_UDP_SOCKETS=4\n"
        "SC4S_ENABLE_EBPF=yes\n"
        "SC4S_EBPF_NO_SOCKETS=16 # threads x 4\n"
        f"SC4S_SOURCE_UDP_SO_RCVBUFF={so_rcvbuff}\n"
        "SC4S_SOURCE_UDP_IW_SIZE=200000\n"
        "SC4S_SOURCE_UDP_FETCH_LIMIT=500\n"
        "SC4S_USE_NAME_CACHE=no\n")
    rx = start_rx(tmp_path, procs, "rx", None, "--env-file", env, "--threads", "2",
                  "--duration", "1", prefix=["ip", "netns", "exec", netns], sequences=False)
    s, err = stop_rx(rx)

    # What each setting became, printed, with the line it came from.
    assert f"{env}:2: SC4S_LISTEN_DEFAULT_UDP_PORT={port} -> --listen 0.0.0.0:{port}" in err
    assert f"{env}:3: SC4S_SOURCE_LISTEN_UDP_SOCKETS=4 -> --sockets 4" in err
    assert f"SC4S_SOURCE_UDP_SO_RCVBUFF={so_rcvbuff} -> --rcvbuf {2 * so_rcvbuff}" in err
    assert f"--env-file {env}:1: SC4S_DEST_SPLUNK_HEC_DEFAULT_URL ignored (not for a UDP receiver)" in err
    assert f"--env-file {env}:9: SC4S_USE_NAME_CACHE ignored (not for a UDP receiver)" in err
    # Every line about the file names it and the line it is about.
    env_lines = [l for l in log_text(err).splitlines() if "--env-file" in l]
    assert env_lines and all(re.search(rf"^syslogrx: --env-file {re.escape(str(env))}:\d+: ", l)
                             for l in env_lines), env_lines
    # Where SC4S would misbehave silently.
    warnings = [l for l in err.splitlines() if "--env-file" in l and "WARNING" in l]
    assert any("SC4S_EBPF_NO_SOCKETS=16 but SC4S_SOURCE_LISTEN_UDP_SOCKETS=4" in w for w in warnings), err
    assert any("SC4S_SOURCE_UDP_IW_SIZE is set without SC4S_SOURCE_UDP_IW_USE=yes" in w for w in warnings), err
    assert any("SC4S_SOURCE_UDP_FETCH_LIMIT is set without SC4S_SOURCE_UDP_IW_USE=yes" in w for w in warnings), err
    assert any(f"is above net.core.rmem_max ({rmem_max})" in w and f"{2 * rmem_max} bytes" in w
               for w in warnings) is above, err
    assert len(warnings) == 3 + above, warnings

    # The settings in force, in the summary.
    assert s["listen"] == f"0.0.0.0:{port}"
    assert s["balance"] == "random"
    c = s["config"]
    assert c["sockets"] == 4 and len(s["sockets"]) == 4
    assert c["rcvbuf"] == 2 * so_rcvbuff
    # forced (CAP_NET_ADMIN); an odd half rounds down by one (1G gives 1,073,741,822)
    assert all(2 * so_rcvbuff - 2 <= sock["rcvbuf"] <= 2 * so_rcvbuff for sock in s["sockets"])
    assert c["window"] == 200000 and c["window_bytes"] == 200000 * 1024
    assert c["batch"] == 500
    e = c["env_file"]
    assert e["path"] == str(env)
    mapped = {m["name"]: m for m in e["mapped"]}
    assert mapped["SC4S_ENABLE_EBPF"]["flag"] == "--balance"
    assert mapped["SC4S_ENABLE_EBPF"]["became"] == "random"
    assert mapped["SC4S_EBPF_NO_SOCKETS"]["flag"] is None
    assert mapped["SC4S_SOURCE_UDP_FETCH_LIMIT"]["line"] == 8
    assert all(m["overridden_by"] is None for m in e["mapped"])
    assert e["ignored"] == ["SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "SC4S_USE_NAME_CACHE"]
    assert len(e["warnings"]) == 3 + above


def test_config_file_bad_line_is_an_error(tmp_path):
    conf = tmp_path / "syslogrx.conf"
    conf.write_text("# syslogrx\nsockets = 4\nbalance = fastest\n")
    r = run_cmd([binary("syslogrx"), "--config", str(conf)])
    assert r.returncode == 2
    assert f"{conf}:3: --balance fastest: expected random, roundrobin, leastloaded or hash" in r.stderr


def test_preflight_rcvbuf_above_rmem_max(tmp_path, procs):
    """Without CAP_NET_ADMIN, a --rcvbuf above 2 x net.core.rmem_max is cut
    down: pre-flight says so and names the sysctl. On a host tuned as SC4S
    says (rmem_max 512M) no --rcvbuf (at most 1G) is above it: then the
    largest one is obtained whole and pre-flight says nothing."""
    rmem_max = sysctl("net.core.rmem_max")[0]
    asked = min(4 * rmem_max, 1 << 30)
    capped = 2 * rmem_max < asked
    port = free_udp_port()
    rx = start_rx(tmp_path, procs, "rx", port, "--rcvbuf", asked,
                  "--balance", "hash", "--no-trace", "--duration", "0.5",
                  prefix=["setpriv", "--inh-caps", "-net_admin", "--bounding-set", "-net_admin"],
                  sequences=False)
    s, err = stop_rx(rx)
    got = s["sockets"][0]["rcvbuf"]
    row = preflight(s, "rcvbuf")
    # udp_mem: its own check, from N x the rcvbuf obtained (a 1G rcvbuf may pass it).
    udp_limit = sysctl("net.ipv4.udp_mem")[2] * os.sysconf("SC_PAGESIZE")
    assert preflight(s, "udp_mem")["ok"] is (len(s["sockets"]) * got <= udp_limit)
    if not capped:
        # SO_RCVBUF halves the size asked and doubles it back: an odd half
        # rounds down (1G at rmem_max 512M gives 1,073,741,822).
        assert asked - 2 <= got <= asked and row["ok"] is True and row["fix"] is None, row
        assert "pre-flight rcvbuf: WARNING" not in err, err
        return
    assert got == 2 * rmem_max < asked
    assert row["ok"] is False
    assert f"--rcvbuf {asked} asked, {got} obtained" in row["message"]
    assert f"sysctl -w net.core.rmem_max={asked // 2}" in row["fix"]
    assert f"pre-flight rcvbuf: WARNING: --rcvbuf {asked} asked" in err


def test_preflight_sockets_times_rcvbuf_above_udp_mem(tmp_path, procs):
    """N x rcvbuf above net.ipv4.udp_mem (global, in pages): PROTO_MEM drops
    would come before any buffer is full. Sized from the current limit, which
    is left untouched."""
    pages = sysctl("net.ipv4.udp_mem")
    limit = pages[2] * os.sysconf("SC_PAGESIZE")
    rcvbuf = 1 << 30
    n = limit // rcvbuf + 1
    assert n <= 64, f"udp_mem {pages} is too large for this test"
    port = free_udp_port()
    rx = start_rx(tmp_path, procs, "rx", port, "--sockets", n,
                  "--threads", "1", "--rcvbuf", "1G", "--balance", "hash", "--no-trace",
                  "--duration", "0.5", sequences=False)
    s, err = stop_rx(rx)
    row = preflight(s, "udp_mem")
    assert row["ok"] is False, row
    assert f"{n} sockets x rcvbuf can queue {n * s['sockets'][0]['rcvbuf']} bytes" in row["message"]
    assert "PROTO_MEM" in row["message"]
    assert "sysctl -w net.ipv4.udp_mem=" in row["fix"]
    m = re.search(r'udp_mem="(\d+) (\d+) (\d+)"', row["fix"])
    assert m and int(m.group(3)) * os.sysconf("SC_PAGESIZE") >= limit + n * s["sockets"][0]["rcvbuf"]
    assert "pre-flight udp_mem: WARNING" in err
    assert preflight(s, "rcvbuf")["ok"] is True    # forced: CAP_NET_ADMIN


def loggen(port, rate, seconds, size, stall=None):
    """loggen's one flow; with stall=(after, pid, length) the receiver is
    stopped (SIGSTOP) for `length` seconds, `after` seconds into the load."""
    p = subprocess.Popen(["loggen", "--inet", "--dgram", "--rate", str(rate), "--interval",
                          str(seconds), "--size", str(size), "--active-connections", "1",
                          "127.0.0.1", str(port)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        if stall:
            after, pid, length = stall
            time.sleep(after)
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(length)
            finally:
                os.kill(pid, signal.SIGCONT)
        out, _ = p.communicate(timeout=seconds + 30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    m = re.search(r"average rate.*count=(\d+)", out)
    assert p.returncode == 0 and m, out
    return int(m.group(1))


def advised(summary, flag):
    items = [a for a in summary["advice"] if a.get("flag") == flag]
    return items[0]["value"] if items else None


# What makes a receiver drop at 9,000/s (SC4S measured 0.2% there) is not the
# rate but a stall of the drain: here, where the receiver keeps up with
# loggen's start burst (queue high-water mark ~50K of 208K), the scheduler's
# stalls are what overflow the default buffer, and their length varies with
# whatever else runs. The test makes the stall the same in both runs: the
# receiver runs SCHED_FIFO (no other stall) and is stopped for 100 ms, 1 s
# into the load.
STALL = 0.1

# The advice tests are serial: their receivers run SCHED_FIFO on both cores
# for seconds (a test beside them would starve), and whether the first run
# drops depends on the sender keeping its rate, which other tests' load on
# two cores would take from it.


@pytest.mark.serial
def test_advice_burst_rcvbuf_applied_drops_nothing(tmp_path, procs):
    """loggen's bursty start at 9,000/s into the default rcvbuf, with a
    100 ms stall of the drain, drops a little; the advised --rcvbuf, parsed
    from that run's summary, takes the same load and stall without a drop."""
    port = free_udp_port()
    # A window loggen's start burst cannot fill (10,000 by default): the
    # burst this test asks about is the kernel queue's, not the window's.
    rx = start_rx(tmp_path, procs, "burst", port, "--sockets", "4",
                  "--threads", "2", "--rcvbuf", KERNEL_DEFAULT_RCVBUF, *BIG_WINDOW,
                  prefix=FIFO, sequences=False)
    sent = loggen(port, 9000, 3, 1000, stall=(1.0, rx.p.pid, STALL))
    s, err = stop_rx(rx)
    drops = s["totals"]["kernel_drops"]["total"]
    assert s["totals"]["received"] + drops == sent
    assert 0 < drops < sent * 0.05, "a little"
    value = advised(s, "--rcvbuf")
    assert value, s["advice"]
    assert f"advice: --rcvbuf {value}:" in err
    assert advised(s, "--threads") is None and advised(s, "--balance") is None
    print(f"burst: {drops} of {sent} dropped, hwm {[k['queue_hwm_bytes'] for k in s['sockets']]}, "
          f"advice --rcvbuf {value}")

    port = free_udp_port()
    rx = start_rx(tmp_path, procs, "applied", port, "--sockets", "4",
                  "--threads", "2", "--rcvbuf", value, *BIG_WINDOW, prefix=FIFO, sequences=False)
    sent = loggen(port, 9000, 3, 1000, stall=(1.0, rx.p.pid, STALL))
    s2, err2 = stop_rx(rx)
    assert s2["totals"]["kernel_drops"]["total"] == 0, (value, s2["sockets"])
    assert s2["totals"]["received"] == sent
    assert s2["advice"] == []
    assert "advice:" not in err2


def one_flow(tmp_path, procs, name, *flags):
    port = free_udp_port()
    rx = start_rx(tmp_path, procs, name, port, "--sockets", "4",
                  "--threads", "2", "--cost-ns", "100000", "--rcvbuf", KERNEL_DEFAULT_RCVBUF,
                  *flags, prefix=FIFO, sequences=False)
    # No end markers: they trail the load by 150 ms, and the advice's offered
    # rate is measured from the first datagram to the last.
    r = run_cmd([binary("sysloggen"), "--target", f"127.0.0.1:{port}", "--rate", "11000",
                 "--duration", "2", "--size", "300", "--end-markers", "0", "--json"], timeout=60)
    assert r.returncode == 0, r.stderr
    sent = json.loads(r.stdout.splitlines()[-1])["datagrams"]   # messages + end markers
    s, err = stop_rx(rx)
    assert s["totals"]["received"] + s["totals"]["kernel_drops"]["total"] == sent
    return s, err


@pytest.mark.serial
def test_advice_one_flow_hash_slow_workers(tmp_path, procs):
    """One flow, --balance hash, workers that drain 10,000/s each offered
    11,000/s: the hash puts the flow on one worker; the advice is exactly
    `--balance random` (the README's words), and applying it, parsed from
    the summary, drops nothing: two workers drain 20,000/s of what --cost-ns
    lets them (the drop in the first run is structural: one worker cannot
    read more than 1e9 / 100,000 msgs/s of wall-clock time)."""
    s, err = one_flow(tmp_path, procs, "hash", "--balance", "hash")
    drops = s["totals"]["kernel_drops"]["total"]
    assert drops > 0
    assert sum(1 for sock in s["sockets"] if sock["received"]) == 1   # one flow, one socket
    assert [(a.get("flag"), a.get("value")) for a in s["advice"]] == [("--balance", "random")], \
        s["advice"]
    assert "advice: --balance random:" in err
    flags = ["--balance", advised(s, "--balance")]
    s2, err2 = one_flow(tmp_path, procs, "applied", *flags)
    print(f"one flow: {drops} dropped with hash, {s2['totals']['kernel_drops']['total']} with {flags}")
    assert s2["totals"]["kernel_drops"]["total"] == 0, (drops, s2["totals"], s2["sockets"])
    assert s2["advice"] == [] and "advice:" not in err2
    assert sum(1 for sock in s2["sockets"] if sock["received"]) == 4   # spread: every socket


def test_preflight_privileged_port_without_capability(netns):
    """Port 514 without CAP_NET_BIND_SERVICE: the warning names the
    capability and the sysctl before the bind fails (in a namespace: 514 is
    nobody else's there)."""
    start = sysctl("net.ipv4.ip_unprivileged_port_start", netns)[0]
    assert start > 514
    r = run_cmd(["ip", "netns", "exec", netns, "setpriv", "--inh-caps", "-net_bind_service",
                 "--bounding-set", "-net_bind_service", binary("syslogrx"),
                 "--listen", "127.0.0.1:514", "--balance", "hash", "--no-trace",
                 "--duration", "0.3"])
    assert r.returncode != 0
    assert (f"pre-flight port: WARNING: port 514 is below net.ipv4.ip_unprivileged_port_start "
            f"({start}) and CAP_NET_BIND_SERVICE is missing") in r.stderr
    assert "sysctl -w net.ipv4.ip_unprivileged_port_start=514" in r.stderr


def test_preflight_window_above_memavailable(tmp_path, procs):
    """--window-bytes above MemAvailable is warned about, with the fix; one
    that fits is not. Host-independent: syslogrx runs in its own mount
    namespace where /proc/meminfo is a copy of the real one with
    MemAvailable set to 1 GiB (as LXCFS shows a container its own), so the
    test holds on a machine with more than --window-bytes' most (64G) free."""
    avail = 1 << 30
    with open("/proc/meminfo") as f:
        real = f.read()
    fake = tmp_path / "meminfo"
    fake.write_text(re.sub(r"^MemAvailable:.*$", f"MemAvailable: {avail >> 10:>8} kB", real,
                           flags=re.M))
    for window, ok in ((2 << 30, False), (avail, True)):
        port = free_udp_port()
        prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                  f'mount --bind "{fake}" /proc/meminfo && exec "$0" "$@"']
        rx = start_rx(tmp_path, procs, f"window-{window}", port, "--window-bytes", window,
                      "--balance", "hash", "--no-trace", "--duration", "0.3", prefix=prefix,
                      sequences=False)
        s, err = stop_rx(rx)
        row = preflight(s, "window_memory")
        assert row["ok"] is ok, row
        verb = "fits in" if ok else "is more than"
        assert f"--window-bytes {window} {verb} MemAvailable ({avail} bytes)" in row["message"]
        fix = f"--window-bytes {avail // 2 >> 20}M or less (MemAvailable / 2)"
        assert row["fix"] == (None if ok else fix), row
        assert ("pre-flight window_memory: WARNING" in err) is not ok, err
        assert all(c["ok"] for c in s["preflight"] if c["check"] != "window_memory"), \
            s["preflight"]
