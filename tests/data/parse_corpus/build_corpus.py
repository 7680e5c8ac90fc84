# SPDX-License-Identifier: MIT
"""Builds the parse corpus (*.jsonl here) from public repositories, each a
git directory given on the command line (as the `fetch` of the project's
sessions leaves them). Run once; the .jsonl files are what the tests read.

  build_corpus.py SC4S_GIT SYSLOG_NG_GIT RSYSLOG_GIT

Each line is {"src": "<repo>@<commit>:<path>", "msg": "..."}; bytes that
are not UTF-8 are kept as surrogate escapes (json.loads(...).encode("utf-8",
"surrogateescape") gives the datagram back). SC4S's test messages keep their
{{ placeholders }}: tests/support/parse_oracle.py fills them at send time
with the current time, as SC4S's own tests do."""
import ast
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True).stdout


def files(gitdir, pattern):
    names = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
    return [n for n in names if re.fullmatch(pattern, n)]


def head(gitdir):
    return git(gitdir, "rev-parse", "HEAD").decode().strip()


def sc4s(gitdir):
    """String constants of tests/test_*.py holding {{ mark }}: each a
    device message template; the file's first mark="<N>" fills it."""
    out, rev = [], head(gitdir)
    for path in files(gitdir, r"tests/test_[a-z0-9_]+\.py"):
        text = git(gitdir, "show", f"HEAD:{path}").decode()
        marks = re.findall(r'mark\s*=\s*"(<\d+>)"', text)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        seen = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                s = node.value.rstrip("\n")
                if re.search(r"\{\{\s*mark\s*\}\}", s) and "\n" not in s and s not in seen:
                    seen.add(s)
                    s = re.sub(r"\{\{\s*mark\s*\}\}", marks[0] if marks else "<134>", s)
                    out.append({"src": f"splunk/splunk-connect-for-syslog@{rev}:{path}",
                                "msg": s})
    return out


C_STR = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def c_unescape(s):
    return (s.encode("latin-1", "backslashreplace").decode("unicode_escape")
            .encode("latin-1").decode("utf-8", "surrogateescape"))


def syslog_ng(gitdir):
    """C strings of syslog-ng's message parser tests that are datagrams:
    they start with <PRI> or a month name."""
    out, rev = [], head(gitdir)
    for path in ["lib/tests/test_msgparse.c",
                 "modules/syslogformat/tests/test_syslog_format.c"]:
        text = git(gitdir, "show", f"HEAD:{path}").decode()
        seen = set()
        for m in C_STR.finditer(text):
            s = c_unescape(m.group(1))
            if re.match(rf"<\d{{1,3}}>|({MONTHS}) ", s) and len(s) > 8 and s not in seen:
                seen.add(s)
                out.append({"src": f"syslog-ng/syslog-ng@{rev}:{path}", "msg": s})
    return out


def rsyslog(gitdir):
    """Messages rsyslog's test suite sends: tcpflood -M "\\"...\\"" and
    injectmsg_literal "..." with a <PRI> and no shell variable."""
    out, rev = [], head(gitdir)
    for path in files(gitdir, r"tests/[A-Za-z0-9_.-]+\.sh"):
        text = git(gitdir, "show", f"HEAD:{path}").decode("utf-8", "surrogateescape")
        seen = set()
        for m in re.finditer(r'-M ?"\\"(.*?)\\""\s*$', text, re.M):
            s = m.group(1).replace('\\\\\\"', '"').replace('\\"', '"')
            if "$" in s or not re.match(r"<\d{1,3}>", s) or s in seen:
                continue
            seen.add(s)
            out.append({"src": f"rsyslog/rsyslog@{rev}:{path}", "msg": s})
        for m in re.finditer(r'injectmsg_literal "(<\d.*?)"\s*$', text, re.M):
            s = m.group(1).replace('\\"', '"')
            if "$" in s or s in seen:
                continue
            seen.add(s)
            out.append({"src": f"rsyslog/rsyslog@{rev}:{path}", "msg": s})
    return out


def write(name, rows):
    with open(os.path.join(HERE, name), "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=True) + "\n")
    print(name, len(rows))


if __name__ == "__main__":
    write("sc4s.jsonl", sc4s(sys.argv[1]))
    write("syslog_ng.jsonl", syslog_ng(sys.argv[2]))
    write("rsyslog.jsonl", rsyslog(sys.argv[3]))
