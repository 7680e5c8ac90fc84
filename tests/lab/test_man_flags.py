"""Every flag syslogrx takes (the argp table of
src/rx/settings/config_options.c, what --help prints) has its entry in
dist/syslogrx.8, as an option heading: a flag missing from the man page is
one an operator cannot look up. The heading gives the flag's short form
(config_options.h's OPT_X = 'c') and its argument as --help names it."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPTIONS_C = os.path.join(ROOT, "src", "rx", "settings", "config_options.c")
OPTIONS_H = os.path.join(ROOT, "src", "rx", "settings", "config_options.h")
MAN = os.path.join(ROOT, "dist", "syslogrx.8")


def help_flags():
    """The long names of the argp table: { "name", OPT_..."""
    return re.findall(r'^\s*\{ "([a-z0-9-]+)", OPT_', open(OPTIONS_C).read(), re.M)


def man_headings():
    """The flags each .TP entry of OPTIONS names on its heading line."""
    text = open(MAN).read()
    options = text[text.index(".SH OPTIONS"):]
    options = options[:options.index("\n.SH ", 1)]
    heads = re.findall(r"^\.TP\n(.*)$", options, re.M)
    return {m.replace("\\-", "-") for h in heads for m in re.findall(r"\\-\\-[a-z0-9\\-]+", h)}


def test_every_help_flag_has_a_man_entry():
    flags = help_flags()
    assert len(flags) >= 50, flags
    missing = [f for f in flags if f"--{f}" not in man_headings()]
    assert not missing, f"flags of --help without an entry in dist/syslogrx.8: {missing}"


def help_entries():
    """{long name: (short letter or None, argument or None)} of the table."""
    with open(OPTIONS_H) as f:
        shorts = dict(re.findall(r"^\s*(OPT_\w+) = '(\w)'", f.read(), re.M))
    with open(OPTIONS_C) as f:
        rows = re.findall(r'^\s*\{ "([a-z0-9-]+)", (OPT_\w+), (NULL|"[^"]*")', f.read(), re.M)
    return {name: (shorts.get(key), None if arg == "NULL" else arg.strip('"'))
            for name, key, arg in rows}


def plain(troff):
    """A man heading's text without its font changes and quotes."""
    return re.sub(r'\\f[BIRP]|"', "", troff).replace("\\-", "-")


def test_each_man_heading_gives_the_short_flag_and_the_argument():
    text = open(MAN).read()
    options = text[text.index(".SH OPTIONS"):]
    heads = [plain(h) for h in re.findall(r"^\.TP\n(.*)$", options, re.M)]
    wrong = []
    for name, (short, arg) in help_entries().items():
        head = next(h for h in heads if re.search(rf"--{name}(?![a-z-])", h))
        if short and not re.search(rf"(^|\s)-{short}\b", head):
            wrong.append(f"--{name}: -{short} missing from {head!r}")
        if arg and arg not in head:
            wrong.append(f"--{name}: argument {arg} (--help) missing from {head!r}")
    assert not wrong, "\n".join(wrong)
