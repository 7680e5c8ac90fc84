"""No circles inside a room (DESIGN.md: "No two files call each other,
inside a room too"): within each folder of src/rx, the files, each .c with
its .h, form no loop of includes and calls. A loop is two files that each
need the other (diskbuf.c and its writer, a snapshot and its cache): a
file with an arrow back up, which `farm-studio look` draws in ochre.

A file A points at file B when A includes B's header, or names a function
or an object that B alone defines (a call, or a table holding it)."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A definition at file scope that another file can name: a function or an
# object, not static, starting at column 0.
FUNC_DEF = re.compile(r"^(?!static\b|typedef\b|struct\b[^(]*;|#|\s)[A-Za-z_][^;=]*?\b(\w+)\s*\([^;]*$",
                      re.M)
OBJ_DEF = re.compile(r"^(?!static\b|extern\b|#|\s)(?:const\s+)?(?:struct|enum)?\s*\w+\s*"
                     r"(?:\*\s*const\s*)?\*?\s*(\w+)\s*(?:\[\w*\])?\s*=", re.M)
WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def rooms():
    """{room: [files]}: a room is a path under src/ without its extension."""
    out = {}
    for dirpath, _, names in os.walk(os.path.join(SRC, "rx")):
        for n in names:
            if n.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(dirpath, n), SRC)
                out.setdefault(rel[:-2], []).append(rel)
    return out


def arrows(includes=True):
    """{room: {room it points at}} for the rooms of src/rx: by calls and
    names, and by includes unless includes is false."""
    texts = {}
    for room, files in rooms().items():
        for f in files:
            with open(os.path.join(SRC, f), errors="replace") as fh:
                texts[f] = fh.read()
    owner = {}
    for f, text in texts.items():
        if f.endswith(".c"):
            body = strip(text)
            for name in FUNC_DEF.findall(body) + OBJ_DEF.findall(body):
                owner.setdefault(name, set()).add(f[:-2])
    graph = {}
    for f, text in texts.items():
        me = f[:-2]
        out = graph.setdefault(me, set())
        for inc in INCLUDE.findall(text) if includes else ():
            if inc.endswith(".h") and inc[:-2] != me and inc.startswith("rx/"):
                out.add(inc[:-2])
        if not f.endswith(".c"):
            continue  # a header's names are declarations: it points by its includes
        # a member (c->supervise, .open = ...) is no name of a file
        for w in set(WORD.findall(re.sub(r"(->|\.)\s*\w+", " ", strip(text)))):
            if len(owner.get(w, ())) == 1:
                (them,) = owner[w]
                if them != me:
                    out.add(them)
    return graph


def loops(graph):
    """The strongly connected components of more than one room (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def inside_rooms(graph):
    """The arrows between files of one folder."""
    return {v: {w for w in ws if os.path.dirname(w) == os.path.dirname(v)}
            for v, ws in graph.items()}


def test_no_two_files_of_a_room_call_each_other():
    bad = loops(inside_rooms(arrows(includes=False)))
    assert not bad, "files that call each other inside one room:\n" + "\n".join(
        " <-> ".join(c) for c in bad)


# Rooms whose files also include no header of a file that needs them: no
# arrow runs back up (life/ too: the parts' files include their own headers,
# never receiver.h, and receiver.c wires them).
NO_ARROW_BACK_UP = ("rx/settings", "rx/sink", "rx/path", "rx/report", "rx/life")


def test_no_arrow_runs_back_up():
    graph = inside_rooms(arrows())
    bad = [c for c in loops(graph) if os.path.dirname(c[0]) in NO_ARROW_BACK_UP]
    assert not bad, "files that include or call each other in a loop:\n" + "\n".join(
        " <-> ".join(c) for c in bad)


def test_the_scan_sees_calls_and_includes():
    """It finds what it must: a call to another file's function, a table
    naming another file's object, an include."""
    graph = arrows()
    assert "rx/sink/kafka" in graph["rx/sink/registry"]         # sink_kafka_open
    assert "rx/settings/output_kafka" in graph["rx/settings/outputs"]  # output_kafka
    assert "rx/path/output_stage" in graph["rx/path/output_msg"]       # include
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
