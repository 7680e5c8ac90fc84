"""systemd's file descriptor store (issue 13), with a stand-in for systemd:
syslogrx stores its sockets, BPF maps and tracer links with sd_notify
(FDSTORE=1, FDNAME=what it is, SCM_RIGHTS to $NOTIFY_SOCKET) and says
READY=1; on `systemctl restart` systemd stops it and starts the new one with
the stored fds (LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID). Meanwhile the
sockets are never closed: datagrams wait in their queues and nothing is lost."""
import socket
import time

from support.rx_watch import Receiver, listen_for, seqs_in_output, start_load, stop_load
from support.fds import fd_identity
from support.fdstore import FdStore


def test_restart_through_the_fd_store_loses_nothing(tmp_path):
    store = FdStore(tmp_path)
    listen = listen_for(socket.AF_INET6)
    flags = ("--max-sockets", "6", "--rcvbuf", "64M")
    settings = {"sockets": 4, "threads": 2}
    first_dir, second_dir = tmp_path / "1", tmp_path / "2"
    first_dir.mkdir()
    second_dir.mkdir()
    try:
        rx1 = Receiver(first_dir, listen, *flags, settings=settings,
                       env={"NOTIFY_SOCKET": store.path})
        store.collect()
        names = sorted(store.fds)
        assert sum(n.startswith("srx-sock-") for n in names) == 6       # live + spares
        assert sum(n.startswith("srx-link-tracer-") for n in names) == 3
        assert any(n.startswith("srx-map-balancer-") and n.endswith("-socks") for n in names)
        gen = start_load(listen)
        try:
            time.sleep(0.3)
            # A live resize keeps the pool bound at start: 4 -> 2 makes two
            # sockets spares again (still stored, with the rcvbuf forced at
            # start), 2 -> 5 takes three spares; nothing is opened after the
            # capability drop, so no socket gets a smaller buffer.
            rx1.resize(2, 2)
            rx1.resize(5, 2)
            store.collect(timeout=0.5, until_ready=False)
            assert sum(n.startswith("srx-sock-") for n in store.fds) == 6
            time.sleep(0.3)
            held1 = fd_identity(rx1.pid)        # its maps and tracer links, by kernel id
            rc1, err1, s1 = rx1.stop()          # systemctl restart: stop ...
            assert rc1 == 0, err1
            time.sleep(0.3)                     # ... nobody reads: the queues hold it
            prefix, env, fds = store.restart_argv()
            rx2 = Receiver(second_dir, listen, *flags, settings=settings, prefix=prefix, env=env,
                           pass_fds=fds)
            store.collect()                     # ... and start, from the store
            held2 = fd_identity(rx2.pid)
            time.sleep(0.5)
        finally:
            sent = stop_load(gen)
        time.sleep(0.5)
        rc2, err2, s2 = rx2.stop()
        assert rc2 == 0, err2
    finally:
        store.close()
    assert "(fd store)" in err2
    # The README: the BPF maps and the tracer links survive the restart too:
    # the new process holds the very objects (kernel ids) the old one held.
    assert held1[1] and held2[1] == held1[1], ("BPF maps", held1[1], held2[1])
    assert len(held1[2]) == 3 and held2[2] == held1[2], ("tracer links", held1[2], held2[2])
    # The same sockets (cookies), the same tracer maps (the drops count on).
    live1 = sorted(x["cookie"] for x in s1["sockets"] if x["state"] == "live")
    assert live1 == sorted(x["cookie"] for x in s2["sockets"] if x["state"] == "live")
    assert len(live1) == 5 and s2["config"]["sockets"] == 5
    assert sorted(x["cookie"] for x in s1["sockets"]) == sorted(x["cookie"] for x in s2["sockets"])
    assert [x["state"] for x in s2["sockets"]].count("spare") == 1
    # Every socket has the buffer asked for: none was opened after the drop.
    assert {x["rcvbuf"] for x in s1["sockets"] + s2["sockets"]} == {64 << 20}
    assert s1["totals"]["abandoned"] == 0       # the queues were left to the next one
    assert s1["totals"]["received"] + s2["totals"]["received"] == sent["sent"]
    assert s2["totals"]["kernel_drops"]["total"] == 0
    assert s2["totals"]["no_socket_drops"]["total"] == 0
    flows = seqs_in_output(rx1.out)
    for f, seqs in seqs_in_output(rx2.out).items():
        flows.setdefault(f, set()).update(seqs)
    for f in sent["flows"]:
        assert flows.get(f["flow"]) == set(range(f["sent"])), f["flow"]
