"""--balance leastloaded against random, on the mechanism: one worker made slow
on purpose (--cost-ns 1000,50000: worker 1 spends 50 us of wall-clock time per
message, so it reads at most 20,000/s whatever else runs) and one flow at
60,000/s for 5 s into 8 MiB buffers.

Why this cannot flake on a loaded machine: every assertion is a bound that
follows from --cost-ns, the steered counts and the buffer sizes, not a rate.
--cost-ns waits on the clock, so being descheduled never makes a worker read
faster; a socket queue holds at most rcvbuf / size datagrams (each is charged
more than its size). So:
- random: the slow worker's sockets are steered about half (counted, not
  assumed) and must drop at least what the worker could not read while the
  sender sent plus what its queues could hold;
- leastloaded: a datagram goes to a slow socket only when it is less loaded
  than the other pick, so with no drop at all the fast worker took at least
  everything the slow one could not have read or queued.
How much each drops and steers is a figure: `make bench` prints "random
against leastloaded beside a noisy neighbour"."""
import pytest

from support.paths import binary
from support.ports import free_udp_port
from support.procs import run_cmd, sysloggen

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
    return s, g


SLOW_COST_NS = 50000
RCVBUF = 8 << 20
SIZE = 500
BATCH = 64          # syslogrx's default --batch: read before its cost is spent
# For random: a worker slow enough (0.5 ms a message, at most 2,000/s) and
# queues small enough (1M) that half of any sender's 300,000 overflow them.
RANDOM_SLOW_COST_NS = 500000
RANDOM_RCVBUF = 1 << 20


def slow_can_take(g, cost_ns=SLOW_COST_NS, rcvbuf=RCVBUF):
    """At most what the slow worker could read while the sender sent, plus
    what its two queues could hold when the sender stopped."""
    sending_s = g["sent"] / g["achieved_rate"]
    return sending_s * 1e9 / cost_ns + BATCH + len(SLOW) * rcvbuf / SIZE


# Serial: its second half asserts no drop at all, which holds only while the
# fast worker gets a core whenever it needs one; tests beside it on two
# cores took it away (17,766 drops on the fast worker's sockets under -n 4).
@pytest.mark.serial
def test_leastloaded_steers_away_from_a_slow_worker(syslogrx):
    rnd, g = run(syslogrx, "random", f"1000,{RANDOM_SLOW_COST_NS}", 60000, 5,
                 rcvbuf=str(RANDOM_RCVBUF))
    drops = [k["kernel_drops"]["total"] for k in rnd["sockets"]]
    steered = [k["steered"] for k in rnd["sockets"]]
    # random: about half to the slow worker's sockets, which must overflow by
    # at least what it could not take; the kernel says which sockets dropped.
    # The floor is positive unless the sender managed under about 4,100/s.
    floor = sum(steered[i] for i in SLOW) - slow_can_take(g, RANDOM_SLOW_COST_NS, RANDOM_RCVBUF)
    assert floor > 0, ("the sender fell too far short to overload the slow worker", g)
    assert sum(drops[i] for i in SLOW) >= floor, (drops, steered, floor)
    cost = f"1000,{SLOW_COST_NS}"
    # The fast worker (1 us a message) is never the one that overflows.
    assert sum(drops[i] for i in FAST) == 0, drops

    ll, g = run(syslogrx, "leastloaded", cost, 60000, 5)
    assert ll["totals"]["kernel_drops"]["total"] == 0, \
        [(k["steered"], k["kernel_drops"]["total"], k["queue_hwm_bytes"]) for k in ll["sockets"]]
    steered = [k["steered"] for k in ll["sockets"]]
    # Nothing dropped: the slow sockets got at most what the slow worker could
    # take; the fast worker got the rest, more than random's half.
    assert sum(steered[i] for i in SLOW) <= slow_can_take(g), steered
    fast = sum(steered[i] for i in FAST)
    assert fast >= g["datagrams"] - slow_can_take(g) > g["datagrams"] / 2, (steered, g)
    print(f"random: slow sockets dropped {sum(drops[i] for i in SLOW)} of {g['datagrams']} "
          f"(floor {floor:.0f}); leastloaded: fast worker {100 * fast / g['datagrams']:.0f}%")


@pytest.mark.parametrize("policy", ["random", "leastloaded"])
def test_equal_workers_spread_within_ten_percent(syslogrx, policy):
    s, g = run(syslogrx, policy, "0", 40000, 2)
    sent = g["sent"]
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
