"""drainrx --write FILE, the bench's limit of writing: every datagram it read
is in FILE as it came, a newline after each, in the order read; nothing is
added, dropped or changed. The oracle is the list of datagrams this test sent
(Python's own bytes), not drainrx's count."""
import json
import os
import socket

from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import Proc, wait_until


def datagrams():
    """Every length class a batch meets: empty, one byte, NUL and high bytes,
    an embedded newline, 1000-byte lines, one of 65,507 (the UDP maximum)."""
    out = [b"", b"x", b"\x00\xff\x80\x9f<13>", b"two\nlines", b"a" * 65507]
    out += [b"<13>Nov 28 04:00:00 host app[1]: n=%06d " % i + bytes([i % 256]) * (i % 1000)
            for i in range(3000)]
    return out


def test_write_holds_every_datagram_byte_exact_in_order(procs, tmp_path):
    port = free_udp_port()
    out = tmp_path / "drain.log"
    rx = Proc([binary("drainrx"), "--listen", f"127.0.0.1:{port}", "--duration", "60",
               "--write", str(out), "--json"])
    procs.append(rx)
    wait_for_udp_port(port)
    sent = datagrams()
    want = b"".join(d + b"\n" for d in sent)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for d in sent:
            s.sendto(d, ("127.0.0.1", port))
    wait_until(lambda: out.stat().st_size >= len(want), "drainrx wrote every datagram")
    rc, stdout, err = rx.stop(timeout=10)
    assert rc == 0, err
    res = json.loads(stdout)
    assert res["received"] == len(sent) and res["write"] == str(out)
    assert out.read_bytes() == want
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_write_through_a_symlink_is_refused_and_named(tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"kept\n")
    link = tmp_path / "link"
    os.symlink(target, link)
    port = free_udp_port()
    rx = Proc([binary("drainrx"), "--listen", f"127.0.0.1:{port}", "--duration", "5",
               "--write", str(link)])
    rc, _, err = rx.stop(sig=0, timeout=10)
    assert rc == 1 and f"--write {link}:" in err and "symbolic link" in err, err
    assert target.read_bytes() == b"kept\n"
