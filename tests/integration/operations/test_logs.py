"""syslogrx's own log lines: sd-daemon priorities when JOURNAL_STREAM names
its stderr (what systemd sets for a unit whose stderr is the journal), a time
and a level word elsewhere; the stats lines, one per listener; the run's
books on one line at exit. JOURNAL_STREAM is set here to the file stderr
really is (and to another), as systemd would: no systemd needed."""
import os
import re
import signal
import subprocess

from support.load import send_udp
from support.paths import binary
from support.ports import free_udp_port
from support.procnet import wait_for_udp_port
from support.procs import LOG_STAMP, log_text, Proc, read_json, wait_until

JOURNAL_LINE = re.compile(r"^<([3467])>syslogrx: ")


def journal_stream_of(path):
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def run_to_file(argv, err_path, journal_stream):
    with open(err_path, "wb") as err:
        env = dict(os.environ, JOURNAL_STREAM=journal_stream(err_path))
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, timeout=30)


def test_journal_stream_of_stderr_gives_every_line_its_priority(tmp_path, procs):
    """Info (ready, books), warning (a bad config on SIGHUP), debug (-v: libbpf's
    lines), error (a bad flag): each line starts with <N>, none without."""
    port = free_udp_port()
    cf = tmp_path / "syslogrx.conf"
    cf.write_text(f"listen = 127.0.0.1:{port}\noutput = null\n")
    err_path = tmp_path / "err"
    err_path.touch()
    env = dict(os.environ, JOURNAL_STREAM=journal_stream_of(err_path))
    with open(err_path, "ab") as err:
        p = subprocess.Popen([binary("syslogrx"), "--config", cf, "-v"], stdout=subprocess.DEVNULL,
                             stderr=err, env=env)
    try:
        wait_until(lambda: "ready on" in err_path.read_text(errors="replace"), "ready line")
        cf.write_text("sockets = many\n")
        p.send_signal(signal.SIGHUP)
        wait_until(lambda: "SIGHUP:" in err_path.read_text(errors="replace"), "SIGHUP warning")
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    lines = err_path.read_text(errors="replace").splitlines()
    assert lines and all(JOURNAL_LINE.match(l) for l in lines), \
        [l for l in lines if not JOURNAL_LINE.match(l)]
    assert [l[1] for l in lines if "ready on" in l] == ["6"]
    assert [l[1] for l in lines if "SIGHUP:" in l] == ["4"]
    assert [l[1] for l in lines if "books:" in l] == ["6"]
    assert any(l[1] == "7" for l in lines), lines

    bad = tmp_path / "bad"
    r = run_to_file([binary("syslogrx"), "--sockets", "many"], bad, journal_stream_of)
    assert r.returncode == 2
    text = bad.read_text()
    assert text.startswith("<3>syslogrx: ") and "--sockets" in text, text


def test_journal_stream_of_another_file_gives_stamps(tmp_path):
    """A JOURNAL_STREAM inherited by a process whose stderr went elsewhere
    names another inode: lines carry the time and level word, no <N>."""
    def elsewhere(path):
        dev, ino = journal_stream_of(path).split(":")
        return f"{dev}:{int(ino) + 1}"

    err = tmp_path / "err"
    port = free_udp_port()
    r = run_to_file([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--output", "null",
                     "--duration", "0.2"], err, elsewhere)
    assert r.returncode == 0
    lines = err.read_text().splitlines()
    assert lines and all(LOG_STAMP.match(l) for l in lines), lines
    ready = [l for l in lines if "ready on" in l]
    assert len(ready) == 1 and " info syslogrx: ready on " in ready[0], ready

    bad = tmp_path / "bad"
    r = run_to_file([binary("syslogrx"), "--sockets", "many"], bad, elsewhere)
    assert r.returncode == 2
    assert re.match(LOG_STAMP.pattern + "syslogrx: .*--sockets", bad.read_text()).group(1) \
        == "error", bad.read_text()


def test_books_line_at_exit_closes_with_the_output(tmp_path, procs):
    """The exit line's figures are the run's: the lines in the output file
    (counted here) and the summary's totals."""
    port = free_udp_port()
    out = tmp_path / "out.log"
    rx = Proc([binary("syslogrx"), "--listen", f"127.0.0.1:{port}", "--output", f"file:{out}",
               "--summary", tmp_path / "s.json"])
    procs.append(rx)
    wait_for_udp_port(port, count=4)
    assert send_udp("127.0.0.1", port, 37, payload=b"<13>books") == 37
    wait_until(lambda: out.exists() and out.read_bytes().count(b"\n") == 37, "37 lines written")
    rc, _, err = rx.stop(signal.SIGTERM)
    assert rc == 0, err
    t = read_json(tmp_path / "s.json")["totals"]
    books = [l for l in log_text(err).splitlines() if "books:" in l]
    assert books == [f"syslogrx: books: received 37, written 37, kernel drops "
                     f"{t['kernel_drops']['total']}, abandoned 0, discarded 0"], err
    assert t["received"] == t["written"] == 37


def test_stats_lines_one_per_listener(tmp_path, procs):
    """Two named listeners: each interval prints one line for each, naming
    it, and one for the window."""
    p1, p2 = free_udp_port(), free_udp_port()
    rx = Proc([binary("syslogrx"), "--listen", f"a=127.0.0.1:{p1}", "--listen",
               f"b=127.0.0.1:{p2}", "--output", "null", "--stats-interval", "0.1",
               "--sockets", "2", "--threads", "1"])
    procs.append(rx)
    seen = ""
    while seen.count("stats: window") < 2:
        line = rx.p.stderr.readline().decode()
        assert line, seen
        seen += line
    rc, _, err = rx.stop(signal.SIGTERM)
    assert rc == 0, err
    stats = [l for l in log_text(seen).splitlines() if "stats:" in l]
    first = stats.index(next(l for l in stats if "stats: a " in l))
    pattern = r"syslogrx: stats: {} [0-9.]+s rx \d+/s drop \d+ q \d+ B, 2 sockets, busiest s\d " \
              r"rx=\d+ drop=\d+ q=\d+"
    assert re.fullmatch(pattern.format("a"), stats[first]), stats
    assert re.fullmatch(pattern.format("b"), stats[first + 1]), stats
    assert re.fullmatch(r"syslogrx: stats: window \d+/\d+", stats[first + 2]), stats
