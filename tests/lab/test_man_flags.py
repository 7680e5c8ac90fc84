"""Every flag syslogrx takes (the argp table of
src/rx/settings/config_options.c, what --help prints) has its entry in
dist/syslogrx.8, as an option heading: a flag missing from the man page is
one an operator cannot look up."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPTIONS_C = os.path.join(ROOT, "src", "rx", "settings", "config_options.c")
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
