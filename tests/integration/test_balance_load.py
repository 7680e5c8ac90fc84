"""--balance leastloaded against random, on the mechanism: one worker made slow
on purpose (--cost-ns 1000,40000: worker 1 spends 40 us per message, so it
takes at most 25,000/s) and one flow at 60,000/s for 5 s into 8 MiB buffers,
which the fast worker alone could take but of which the slow one cannot take
half.

random gives each socket a quarter: the slow worker's two sockets get 30,000/s
and overflow (counted by the tracer, on those sockets only). leastloaded picks
two sockets at random and sends to the one with fewer bytes queued: the slow
worker's sockets back up, so they get less, and nothing is dropped. With equal
workers leastloaded spreads as evenly as random."""
import pytest

from conftest import binary, free_udp_port, run_cmd, sysloggen

SLOW = (1, 3)   # worker t owns sockets t, t+2: worker 1 (the slow one) owns 1 and 3
FAST = (0, 2)


def run(syslogrx, policy, cost, rate, seconds, rcvbuf="8M"):
    port = free_udp_port()
    rx = syslogrx("--sockets", "4", "--threads", "2", "--balance", policy, "--cost-ns", cost,
                  "--rcvbuf", rcvbuf, port=port)
    g = sysloggen(port, "--rate", rate, "--duration", seconds, "--size", 500)
    rc, _, err = rx.stop()
    assert rc == 0, err
    s = rx.summary
    t = s["totals"]
    # The books close to the message, whatever the policy.
    # datagrams: the messages and the flow's end markers
    assert t["received"] + t["kernel_drops"]["total"] + t["abandoned"] == g["datagrams"]
    assert t["selection_failures"] == 0
    assert sum(k["steered"] for k in s["sockets"]) == g["datagrams"]
    return s, g["sent"]


def test_leastloaded_steers_away_from_a_slow_worker(syslogrx):
    rnd, sent = run(syslogrx, "random", "1000,40000", 60000, 5)
    drops = [k["kernel_drops"]["total"] for k in rnd["sockets"]]
    # random: a quarter each; the slow worker's sockets overflow, the fast
    # worker's do not.
    assert sum(drops[i] for i in SLOW) > 0.05 * sent, drops
    assert sum(drops[i] for i in FAST) < 0.1 * sum(drops[i] for i in SLOW), drops

    ll, sent = run(syslogrx, "leastloaded", "1000,40000", 60000, 5)
    assert ll["totals"]["kernel_drops"]["total"] == 0, \
        [(k["steered"], k["kernel_drops"]["total"], k["queue_hwm_bytes"]) for k in ll["sockets"]]
    steered = [k["steered"] for k in ll["sockets"]]
    # Leans to the fast worker (random's share is exactly half).
    assert sum(steered[i] for i in FAST) > 0.55 * sent, steered


@pytest.mark.parametrize("policy", ["random", "leastloaded"])
def test_equal_workers_spread_within_ten_percent(syslogrx, policy):
    s, sent = run(syslogrx, policy, "0", 40000, 2)
    assert s["totals"]["kernel_drops"]["total"] == 0
    for k in s["sockets"]:
        assert abs(k["steered"] - sent / 4) <= 0.1 * sent / 4, [k["steered"] for k in s["sockets"]]


def test_leastloaded_without_cap_perfmon_is_refused_random_is_not():
    # Root keeps CAP_BPF; without CAP_PERFMON (and CAP_SYS_ADMIN, which also
    # allows tracing programs) leastloaded's queue tracking cannot load.
    drop = ["setpriv", "--bounding-set=-perfmon,-sys_admin"]
    port = free_udp_port()
    argv = [binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--duration", "0.3",
            "--no-trace", "--balance"]
    r = run_cmd(drop + argv + ["leastloaded"])
    assert r.returncode == 1
    assert "--balance leastloaded needs CAP_BPF and CAP_PERFMON" in r.stderr, r.stderr
    r = run_cmd(drop + argv + ["random"])
    assert r.returncode == 0, r.stderr
