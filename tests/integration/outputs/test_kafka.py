"""--output kafka: against a real Apache Kafka broker (KRaft, tests/support/kafka_broker.py).

One broker for the whole module, on 127.0.0.1 in the root namespace: every
test but the scale-out one runs syslogrx on the host against it. The
scale-out test builds its own world of namespaces (two receivers, a sender
that is also their router, and a broker in a namespace of its own), so that
every address any process connects to belongs to a namespace the test made.
Everything is torn down at module or test end, even on failure.
"""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from support.paths import binary
from support.procnet import udp_rows, wait_queues_empty
from support.procs import run_cmd, Syslogrx, wait_until
from support.reaper import netns_name
from support.kafka_broker import KafkaBroker
from support.ports import free_tcp_port, free_udp_port
from support.prom import parse, scrape, value
from support.load import send_from

TAG = f"kx{os.getpid() % 100000}"          # veth names (15 characters): others run alongside
NS_A, NS_B, NS_SND, NS_K = (netns_name(f"kafka-{n}") for n in "absk")
NS_BROKER_IP = "10.231.1.1"                 # the scale-out broker, in NS_K
VIP = "10.231.9.9"


def sh(*argv):
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"{' '.join(argv)}: {r.stderr}"
    return r.stdout


def nsx(ns, *argv):
    return sh("ip", "netns", "exec", ns, *argv)


def veth(near_ns, near_end, far_ns, far_end, near_cidr, far_cidr):
    """A veth pair between two namespaces this module created."""
    nsx(near_ns, "ip", "link", "add", near_end, "type", "veth", "peer", "name", far_end,
        "netns", far_ns)
    nsx(near_ns, "ip", "addr", "add", near_cidr, "dev", near_end)
    nsx(near_ns, "ip", "link", "set", near_end, "up")
    nsx(far_ns, "ip", "addr", "add", far_cidr, "dev", far_end)
    nsx(far_ns, "ip", "link", "set", far_end, "up")


def del_netns(*names):
    for n in names:
        subprocess.run(["ip", "netns", "del", n], capture_output=True, timeout=30)


def dest(b, topic):
    return f"kafka:{b.bootstrap}/{topic}"


def bound_sock(host="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.bind((host, 0))
    return s


def sample_messages(n):
    """Mixed syslog: RFC 3164 with hosts, without hostname, RFC 5424, malformed."""
    out = []
    for i in range(n):
        k = i % 10
        if k < 6:
            out.append(b"<13>Nov 22 03:12:00 host%d app%d[%d]: message %06d" % (i % 3, i % 2, i, i))
        elif k < 8:
            out.append(b"<165>1 2026-11-22T03:12:00.003Z host%d app%d - ID47 - message %06d" % (i % 4, i % 2, i))
        elif k == 8:
            out.append(b"<14>message %06d without tag" % i)        # no hostname
        else:
            out.append(b"<999>garbage %06d" % i)                    # malformed: bad PRI
    return out


def expected_key(kind, msg, src):
    if kind == "none":
        return None
    if kind == "source":
        return f"{src[0]}:{src[1]}".encode()
    if msg.startswith(b"<13>"):
        host = msg.split(b" ")[3]
        app = msg.split(b" ")[4].split(b"[")[0]
        return host if kind == "hostname" else app
    if msg.startswith(b"<165>1 "):
        f = msg.split(b" ")
        return f[2] if kind == "hostname" else f[3]
    if msg.startswith(b"<14>") and kind == "app":
        # no stamp: the first word is the TAG, as syslog-ng reads it
        return msg[4:].split(b" ")[0]
    return None


def stop_ok(rx, sig=signal.SIGTERM, timeout=60):
    rc, out, err = rx.stop(sig, timeout)
    assert rc == 0, f"syslogrx exit {rc}: {err}"
    assert "MISMATCH" not in err, err
    return rx.summary, err


@pytest.mark.parametrize("key", ["none", "source", "hostname", "app"])
def test_roundtrip_byte_exact(broker, tmp_path, procs, key):
    """N datagrams in, N records out: values and keys byte-exact, per-key order kept."""
    topic = f"rt-{key}"
    broker.create_topic(topic, partitions=3)
    port = free_udp_port()
    # --balance hash: one flow, one socket, one worker; with --balance random a
    # flow is spread over sockets and workers and its order is not kept.
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--kafka-key", key,
                  "--balance", "hash", "--rcvbuf", "8M", port=port)
    procs.append(rx)
    msgs = sample_messages(3000)
    with bound_sock() as s:
        src = s.getsockname()
        send_from(s, ("127.0.0.1", port), msgs, rate=20000)
    summary, err = stop_ok(rx)

    t = summary["totals"]
    assert t["kernel_drops"]["total"] == 0
    assert t["received"] == len(msgs)
    k = summary["kafka"]
    assert k == {"brokers": broker.bootstrap, "topic": topic, "delivered": len(msgs),
                 "failed": {"total": 0}, "in_flight": 0, "undelivered": 0}
    assert t["written"] == len(msgs) and t["discarded"] == 0
    assert t["malformed"] == len(msgs) // 10

    recs = broker.records(topic)
    assert len(recs) == len(msgs)
    # Values are unique: compare value -> key maps (a null key is None).
    want = {m: expected_key(key, m, src) for m in msgs}
    got = {v: kk for _, kk, v in recs}
    assert got == want
    # Per key, records come out in the order they were sent.
    if key != "none":
        order = {m: i for i, m in enumerate(msgs)}
        by_key = {}
        for part, kk, v in recs:
            if kk is not None:
                by_key.setdefault((part, kk), []).append(order[v])
        for seq in by_key.values():
            assert seq == sorted(seq)
        if key == "source":      # one sender: one key, one partition
            assert len({p for p, _, _ in recs}) == 1


def test_original_value_is_every_byte_and_the_record_time_the_receive_time(broker, tmp_path,
                                                                         procs):
    """--format original: a record's value is the datagram, every byte (a
    line break, a NUL and its own line end included); every record's
    timestamp is when syslogrx received it, not when it was produced."""
    topic = "original"
    broker.create_topic(topic, partitions=1)
    port = free_udp_port()
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--format", "original",
                  port=port, sequences=False)
    procs.append(rx)
    msgs = [b"<166>%ASA-6-302013: no stamp", b"<13>a\nb\x00c\r\n", b"<13>ends in NUL\x00",
            b"<13>\xff\xfe bad bytes\t\x1b"]
    with bound_sock() as s:
        t0 = int(time.time() * 1000)
        for m in msgs:
            s.sendto(m, ("127.0.0.1", port))
    summary, err = stop_ok(rx)
    # the kernel stamps a datagram as it arrives, inside the sendto
    t1 = int(time.time() * 1000)
    assert summary["kafka"]["delivered"] == len(msgs)
    assert sorted(v for _, _, v in broker.records(topic)) == sorted(msgs)
    stamps = [int(x) for x in broker.consume(topic, fmt="%T\\n").split()]
    assert len(stamps) == len(msgs) and all(t0 <= t <= t1 + 1 for t in stamps), (t0, stamps, t1)


def test_ordered_keeps_a_spread_flow_in_order(broker, tmp_path, procs):
    """--ordered on the async path: one flow spread by random over 8 sockets
    and 2 threads still lands in its partition in the order it was sent."""
    topic = "ordered"
    broker.create_topic(topic, partitions=3)
    port = free_udp_port()
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--kafka-key", "source",
                  "--balance", "random", "--sockets", "8", "--threads", "2", "--rcvbuf", "8M",
                  "--ordered=100", port=port)
    procs.append(rx)
    msgs = [b"<13>Nov 22 03:12:00 host app: ordered %06d" % i for i in range(5000)]
    with bound_sock() as s:
        send_from(s, ("127.0.0.1", port), msgs, rate=20000)
    summary, err = stop_ok(rx)
    assert summary["totals"]["kernel_drops"]["total"] == 0
    assert summary["kafka"]["delivered"] == len(msgs)
    assert summary["ordering"]["late"] == 0
    # Spread: more than one socket took part of the flow.
    assert sum(1 for k in summary["sockets"] if k["received"]) > 1
    recs = broker.records(topic)
    assert [v for _, _, v in recs] == msgs


def test_json_value_is_the_line_without_newline(broker, tmp_path, procs):
    topic = "rt-json"
    broker.create_topic(topic, partitions=1)
    port = free_udp_port()
    out_file = tmp_path / "ref.log"
    msgs = sample_messages(500)
    # The same messages through --output file: the reference lines.
    ref = Syslogrx(tmp_path, "--output", f"file:{out_file}", "--format", "json", "--json-raw", "--balance",
                   "hash", "--rcvbuf", "8M", port=port, summary=False)
    procs.append(ref)
    with bound_sock() as s:
        send_from(s, ("127.0.0.1", port), msgs, rate=20000)
    rc, _, err = ref.stop()
    assert rc == 0, err
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--format", "json", "--json-raw",
                  "--balance", "hash", "--rcvbuf", "8M", port=port)
    procs.append(rx)
    with bound_sock() as s:
        src = s.getsockname()
        send_from(s, ("127.0.0.1", port), msgs, rate=20000)
    summary, err = stop_ok(rx)
    assert summary["kafka"]["delivered"] == len(msgs)

    values = [v for _, _, v in broker.records(topic)]
    assert len(values) == len(msgs)
    assert all(not v.endswith(b"\n") for v in values)
    objs = [json.loads(v) for v in values]
    assert [o["raw"].encode() for o in objs] == msgs        # one partition: in order
    assert all(o["source"] == f"127.0.0.1:{src[1]}" for o in objs)
    # The sender is a record header too, as json's "source" has it.
    headers = broker.consume(topic, fmt="%h\\n").splitlines()
    assert headers == [f"source=127.0.0.1:{src[1]}".encode()] * len(msgs)
    # Same lines as the file output, but for the fields that differ per run.
    ref_objs = [json.loads(l) for l in out_file.read_bytes().splitlines()]
    assert [list(o) for o in objs] == [list(o) for o in ref_objs]     # same keys, same order
    for a, b in zip(objs, ref_objs):
        # a message without a stamp has the run's receive time
        stampless = () if "timestamp" in a or a["malformed"] else ("time_unix_nano",)
        for f in ("source", "received", "socket") + stampless:
            a.pop(f), b.pop(f)
    assert objs == ref_objs


def test_json_values_are_utf8_whatever_the_bytes(broker, tmp_path, procs):
    """Bytes that are not UTF-8 (in an SD value, a 3164 body, a malformed
    datagram) make valid UTF-8 json values: Python's strict decoder reads
    each one, every bad byte a U+FFFD."""
    topic = "rt-json-bad"
    broker.create_topic(topic, partitions=1)
    port = free_udp_port()
    msgs = [b'<14>1 2026-11-26T10:00:00Z h a - - [x@1 v="a\xe9b"] sd',
            b"<13>Nov 26 10:00:00 host app: caf\xe9 \xff\xfe",
            b"<999>\xc3\x28 malformed"]
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--format", "json", "--json-raw",
                  "--balance", "hash", port=port, sequences=False)
    procs.append(rx)
    with bound_sock() as s:
        send_from(s, ("127.0.0.1", port), msgs, rate=1000)
    summary, err = stop_ok(rx)
    assert summary["totals"]["received"] == summary["kafka"]["delivered"] == len(msgs)
    objs = [json.loads(v.decode("utf-8")) for _, _, v in broker.records(topic)]
    assert [o["raw"] for o in objs] == [m.decode("utf-8", "replace") for m in msgs]
    assert objs[0]["sd"] == {"x@1": {"v": "a\ufffdb"}}
    assert objs[1]["msg"] == "caf\ufffd \ufffd\ufffd"


def test_unknown_topic_is_an_error_at_start(broker):
    port = free_udp_port()
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--output",
                 dest(broker, "no-such-topic"), "--duration", "5"], timeout=30)
    assert r.returncode not in (0,) and r.returncode > 0, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert broker.bootstrap == f"127.0.0.1:{broker.port}"
    assert "no-such-topic" in lines[0] and f"127.0.0.1:{broker.port}" in lines[0]
    assert "does not exist" in lines[0]
    assert "ready on" not in r.stderr


def test_bad_kafka_opt_is_a_usage_error(broker):
    r = run_cmd([binary("syslogrx"), "--listen", f"127.0.0.1:{free_udp_port()}", "--output",
                 dest(broker, "x"), "--kafka-opt", "no.such.property=1"], timeout=30)
    assert r.returncode == 2, r.stderr
    assert "--kafka-opt no.such.property=1" in r.stderr


def test_permanent_failure_is_counted_and_released(broker, tmp_path, procs):
    """Records over message.max.bytes fail permanently: counted per reason, not
    retried, and their room in the window is given back (the rest flows)."""
    topic = "too-large"
    broker.create_topic(topic, partitions=1)
    port = free_udp_port()
    # A 100-message window: 700 messages only get through if the room of
    # failed ones is given back; the kernel queue absorbs the waits.
    mport = free_tcp_port()
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--window", "100",
                  "--rcvbuf", "8M", "--kafka-opt", "message.max.bytes=1000",
                  "--metrics", str(mport), port=port)
    procs.append(rx)
    small = [b"<13>small %04d" % i for i in range(400)]
    big = [b"<13>big %04d " % i + b"x" * 2000 for i in range(300)]
    msgs = [m for pair in zip(small, big) for m in pair] + small[300:]
    with bound_sock() as s:
        send_from(s, ("127.0.0.1", port), msgs, rate=5000)
    broker.wait_records(topic, len(small))
    # The delivery counters while it runs (issue 12's metrics), then at exit.
    deadline = time.monotonic() + 30
    while True:
        m = parse(scrape(mport))
        if value(m, "syslogrx_kafka_delivered_total") == len(small) and \
                value(m, "syslogrx_kafka_in_flight_messages") == 0:
            break
        assert time.monotonic() < deadline, "deliveries not reported within 30 s"
        time.sleep(0.2)
    summary, err = stop_ok(rx)
    k = summary["kafka"]
    assert value(m, "syslogrx_kafka_failed_total", reason="MSG_SIZE_TOO_LARGE") == len(big)
    assert value(m, "syslogrx_kafka_undelivered_total") == 0
    assert value(m, "syslogrx_discarded_total") == summary["totals"]["discarded"]
    assert value(m, "syslogrx_written_total") == summary["totals"]["written"]
    assert summary["totals"]["kernel_drops"]["total"] == 0
    assert summary["totals"]["received"] == len(msgs)
    assert k["delivered"] == len(small)
    assert k["failed"] == {"total": len(big), "MSG_SIZE_TOO_LARGE": len(big)}
    assert k["undelivered"] == 0 and k["in_flight"] == 0
    assert summary["totals"]["written"] == len(small)
    assert summary["totals"]["discarded"] == len(big)
    assert "MSG_SIZE_TOO_LARGE" in err
    assert sorted(v for _, _, v in broker.records(topic)) == sorted(small)


def test_undelivered_after_drain_timeout(broker, tmp_path, procs):
    """README: on SIGTERM syslogrx waits up to --drain-timeout for delivery
    reports; what is left is counted as kafka.undelivered and named in a
    warning. The broker is frozen (SIGSTOP, by pid) after the first 100 are
    delivered: the next 200 are produced and never acknowledged, exactly.
    A broker that hangs is not a slow one: none acknowledged for
    --stall-timeout shows the output down within it plus 2 s, said once
    (librdkafka's own request timeout is 60 s)."""
    topic = "undelivered"
    broker.create_topic(topic, partitions=1)
    port, mport = free_udp_port(), free_tcp_port()
    stall = 1
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--drain-timeout", "1",
                  "--stall-timeout", str(stall), "--metrics", str(mport), port=port)
    procs.append(rx)
    first = [b"<13>first %04d" % i for i in range(100)]
    then = [b"<13>then %04d" % i for i in range(200)]
    frozen = False
    try:
        with bound_sock() as s:
            send_from(s, ("127.0.0.1", port), first)
            broker.wait_records(topic, len(first))
            deadline = time.monotonic() + 60
            while value(parse(scrape(mport)), "syslogrx_kafka_delivered_total") != len(first):
                assert time.monotonic() < deadline, "first deliveries not reported"
                time.sleep(0.1)
            os.kill(broker.proc.pid, signal.SIGSTOP)
            frozen = True
            send_from(s, ("127.0.0.1", port), then)
        # Every one of them produced, none acknowledged: in flight.
        deadline = time.monotonic() + 60
        while value(parse(scrape(mport)), "syslogrx_kafka_in_flight_messages") != len(then):
            assert time.monotonic() < deadline, "the 200 were not all produced"
            time.sleep(0.1)
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_output_up") == 0,
                   "output_up 0 for a broker that acknowledges nothing", timeout=stall + 2)
        rc, out, err = rx.stop()
    finally:
        if frozen:
            os.kill(broker.proc.pid, signal.SIGCONT)
    assert rc == 0, err
    k, tot = rx.summary["kafka"], rx.summary["totals"]
    assert tot["received"] == len(first) + len(then)
    assert k["delivered"] == len(first)
    assert k["undelivered"] == len(then)
    assert k["failed"] == {"total": 0}
    warning = [l for l in err.splitlines() if "not acknowledged within --drain-timeout" in l]
    assert len(warning) == 1, err
    assert (f"{len(then)} message(s) not acknowledged within --drain-timeout 1s: counted as "
            "undelivered") in warning[0] and topic in warning[0], warning
    # the last: a loaded host's broker may have been slow before the freeze too
    said = [l for l in err.splitlines() if "none acknowledged for --stall-timeout" in l]
    assert said and f"none acknowledged for --stall-timeout {stall * 1000} ms; " \
        "shown down (syslogrx_output_up 0)" in said[-1], err


def _sender(port, msgs, rate, done):
    with bound_sock() as s:
        done["sent"] = send_from(s, ("127.0.0.1", port), msgs, rate=rate)


def scale_out_netns():
    """The scale-out world, every namespace made here. NS_SND is the sender
    and the router: a veth to each receiver (NS_A, NS_B) and one to the
    broker's namespace (NS_K), forwarding on; A, B and K route everything via
    NS_SND. The VIP is on lo in A and B, and NS_SND reaches it over an ECMP
    route hashed on addresses and ports (policy 1): the sender's own flows
    are locally generated and hashed there."""
    for ns in (NS_SND, NS_A, NS_B, NS_K):
        sh("ip", "netns", "add", ns)
        nsx(ns, "ip", "link", "set", "lo", "up")
    veth(NS_SND, f"{TAG}s1", NS_A, f"{TAG}a1", "10.231.3.1/30", "10.231.3.2/30")
    veth(NS_SND, f"{TAG}s2", NS_B, f"{TAG}b2", "10.231.4.1/30", "10.231.4.2/30")
    veth(NS_SND, f"{TAG}sk", NS_K, f"{TAG}k1", "10.231.1.2/30", f"{NS_BROKER_IP}/30")
    nsx(NS_SND, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
    nsx(NS_SND, "sysctl", "-q", "-w", "net.ipv4.fib_multipath_hash_policy=1")
    nsx(NS_SND, "ip", "route", "add", f"{VIP}/32", "nexthop", "via", "10.231.3.2",
        "nexthop", "via", "10.231.4.2")
    nsx(NS_A, "ip", "route", "add", "default", "via", "10.231.3.1")
    nsx(NS_B, "ip", "route", "add", "default", "via", "10.231.4.1")
    nsx(NS_K, "ip", "route", "add", "default", "via", "10.231.1.2")
    for ns in (NS_A, NS_B):
        nsx(ns, "ip", "addr", "add", f"{VIP}/32", "dev", "lo")


def test_scale_out_two_instances_behind_ecmp(tmp_path, procs):
    """Two syslogrx in two namespaces behind one ECMP route to a VIP, the same
    topic on a broker in a third namespace: every message arrives exactly
    once and the summaries add up."""
    topic = "scale-out"
    names = (NS_A, NS_B, NS_SND, NS_K)
    del_netns(*names)
    kb = None
    try:
        scale_out_netns()
        kb = KafkaBroker(host=NS_BROKER_IP, netns=NS_K, auto_create=False, partitions=3)
        kb.start()
        kb.warm_up()
        kb.create_topic(topic, partitions=4)

        port = 5514
        rxs = []
        for ns in (NS_A, NS_B):
            d = tmp_path / ns
            d.mkdir()
            rx = Syslogrx(d, "--output", dest(kb, topic), "--kafka-key", "source",
                          listen=f"{VIP}:{port}", netns=ns)
            procs.append(rx)
            rxs.append(rx)
        flows, per_flow = 16, 300
        script = f"""
import socket, time
socks = []
for f in range({flows}):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("{VIP}", {port}))      # one route lookup per flow, ports hashed
    socks.append(s)
for i in range({per_flow}):
    for f, s in enumerate(socks):
        s.send(b"<13>Nov 22 03:12:00 flow%02d app: seq %06d" % (f, i))
    time.sleep(0.002)
"""
        subprocess.run(["ip", "netns", "exec", NS_SND, "python3", "-c", script], check=True,
                       timeout=120)
        summaries = [stop_ok(rx)[0] for rx in rxs]
        sent = flows * per_flow
        received = [s["totals"]["received"] for s in summaries]
        drops = [s["totals"]["kernel_drops"]["total"] for s in summaries]
        delivered = [s["kafka"]["delivered"] for s in summaries]
        print(f"scale-out: sent {sent} received per instance {received} delivered {delivered}")
        assert all(s["kafka"]["brokers"] == f"{NS_BROKER_IP}:{kb.port}" for s in summaries)
        assert sum(drops) == 0
        assert sum(received) == sent
        assert delivered == received
        assert all(r > 0 for r in received), f"ECMP sent everything one way: {received}"

        recs = kb.records(topic)            # kcat runs in NS_K
        values = [v for _, _, v in recs]
        assert len(values) == sent
        assert len(set(values)) == sent
        assert set(values) == {b"<13>Nov 22 03:12:00 flow%02d app: seq %06d" % (f, i)
                               for f in range(flows) for i in range(per_flow)}
        # A flow is one 5-tuple: ECMP sends it to one instance, so its records
        # all carry one source key.
        keys_per_flow = {}
        for _, k, v in recs:
            keys_per_flow.setdefault(v.split(b" ")[3], set()).add(k)
        assert all(len(ks) == 1 for ks in keys_per_flow.values())
    finally:
        for rx in procs:
            if rx.p.poll() is None:
                rx.p.kill()
                rx.p.wait()
        if kb:
            kb.close()
        del_netns(*names)       # takes the veth pairs with them


def test_broker_outage_mid_stream(broker, tmp_path, procs):
    """The broker is killed (SIGKILL, by pid) mid-stream and restarted on the
    same port and data: every message that fitted in the window arrives, the
    rest are kernel drops the tracer counted: sent = delivered + kernel drops,
    exactly. Kept last: it restarts the module's broker."""
    topic = "outage"
    broker.create_topic(topic, partitions=1)
    port = free_udp_port()
    window = 2000
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--window", str(window),
                  "--rcvbuf", "64K", "--drain-timeout", "60", port=port)
    procs.append(rx)
    n, rate = 15000, 1500
    msgs = [b"<13>Nov 22 03:12:00 h app: outage %06d" % i for i in range(n)]
    # Events, not times: the first 1,000 reach the broker, the broker dies,
    # the other 14,000 are sent (far past a 2,000 window and a 64K queue, at
    # any speed), and the broker comes back once the kernel drops.
    first, done = 1000, {}
    _sender(port, msgs[:first], rate, done)
    # Each of the first 1,000 is in the broker or was dropped by the kernel
    # (a worker starved on a loaded host overflows a 64K queue): counted.
    def kernel_drops():
        return sum(int(f[12]) for f in udp_rows(port))
    wait_until(lambda: broker.consume(topic, fmt="x").count(b"x") + kernel_drops() >= first,
               "the first 1,000 delivered or dropped", timeout=60)
    dropped_before = kernel_drops()
    broker.stop(signal.SIGKILL)
    t = threading.Thread(target=_sender, args=(port, msgs[first:], rate, done))
    t.start()
    try:
        wait_until(lambda: kernel_drops() > dropped_before,
                   "kernel drops behind the full window", timeout=60)
        broker.start()          # same port, same data dir; ~5 s to come up
    finally:
        t.join(timeout=120)
    assert done.get("sent") == n - first
    # Everything sent is read from the queues; the drain waits for the broker.
    wait_queues_empty(port)
    summary, err = stop_ok(rx, timeout=120)

    tot, k = summary["totals"], summary["kafka"]
    drops = tot["kernel_drops"]["total"]
    assert drops > 0, "waited for above"
    assert summary["window"]["hwm"] == window
    assert tot["received"] + drops == n
    assert k["failed"] == {"total": 0}
    assert k["undelivered"] == 0 and k["in_flight"] == 0
    assert k["delivered"] == tot["received"]
    assert n == k["delivered"] + drops                  # the claim, exactly

    values = [v for _, _, v in broker.records(topic)]
    distinct = set(values)
    duplicates = len(values) - len(distinct)
    assert distinct <= set(msgs)
    assert len(distinct) == k["delivered"]
    # At-least-once allows duplicates; the idempotent producer (the default)
    # lets the broker drop retried batches it already has, so there are none.
    print(f"outage: sent {n} received {tot['received']} delivered {k['delivered']} "
          f"kernel drops {drops} records {len(values)} duplicates {duplicates} "
          f"window hwm {summary['window']['hwm']} full {summary['window']['full_seconds']}s")
    assert duplicates == 0


def test_broker_outage_with_disk_buffer_spill(broker, tmp_path, procs):
    """--disk-buffer (spill): the broker killed mid-stream until 1 MiB has
    spilled to disk, at 10,000/s into a 10,000-message window: the kernel
    drops nothing, and every message reaches the topic, in order per flow.
    Kept last with the other outage test: it restarts the module's broker."""
    topic = "outage_spill"
    broker.create_topic(topic, partitions=1)
    port = free_udp_port()
    mport = free_tcp_port()
    rx = Syslogrx(tmp_path, "--output", dest(broker, topic), "--window", "10000",
                  "--metrics", str(mport),
                  "--sockets", "2", "--threads", "2", "--balance", "hash", "--rcvbuf", "4M",
                  "--format", "rfc5424", "--drain-timeout", "60",
                  "--disk-buffer", str(tmp_path / "buf"), port=port)
    procs.append(rx)
    rate, seconds, flows = 10000, 16, 4
    gen = subprocess.Popen([binary("sysloggen"), "--target", f"127.0.0.1:{port}", "--rate",
                            str(rate), "--duration", str(seconds), "--size", "300", "--sources",
                            str(flows), "--run-id", "kspill", "--format", "rfc5424",
                            "--end-markers", "0"],      # counted by sequence numbers
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    buf = tmp_path / "buf"

    def spilled():
        return sum(f.stat().st_size for f in buf.glob("*.seg")) if buf.exists() else 0

    try:
        # Events: the broker dies once records reach it (syslogrx's own
        # count of acknowledged ones), and comes back once the window is full
        # and 1 MiB has gone to the disk buffer.
        wait_until(lambda: value(parse(scrape(mport)), "syslogrx_kafka_delivered_total") >= 100,
                   "100 records acknowledged", timeout=60)
        broker.stop(signal.SIGKILL)
        wait_until(lambda: spilled() > 1 << 20, "1 MiB spilled to the disk buffer", timeout=60)
        broker.start()
    finally:
        assert gen.wait(timeout=120) == 0
    sent = rate * seconds
    broker.wait_records(topic, sent, timeout=120)
    summary, err = stop_ok(rx, timeout=120)
    tot, k, db = summary["totals"], summary["kafka"], summary["disk_buffer"]
    assert tot["kernel_drops"]["total"] == 0, err
    assert tot["received"] == sent and k["delivered"] == sent
    assert db["written"] > 0 and db["replayed"] == db["written"]
    assert db["dropped"] == 0 and db["corrupt"] == 0 and db["msgs"] == 0
    seqs = {}
    for _, _, v in broker.records(topic):
        m = re.search(rb'flow="(\d+)" seq="(\d+)"', v)
        seqs.setdefault(int(m.group(1)), []).append(int(m.group(2)))
    assert sum(len(s) for s in seqs.values()) == sent     # idempotent producer: no duplicates
    for f, s in seqs.items():
        assert s == list(range(len(s))), f"flow {f}: missing or out of order"
    print(f"kafka spill: sent {sent}, spilled {db['written']}, kernel drops 0")
