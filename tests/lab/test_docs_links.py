# SPDX-License-Identifier: MIT
"""Every relative link in README.md and docs/ resolves: the file (or folder)
exists, and a #anchor names a heading of the target page as GitHub makes its
ids (lower case, punctuation dropped, spaces to '-', repeats numbered)."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# [text](target) and [text](target "title"); images too. Not inside code.
INLINE = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:


def pages():
    out = [os.path.join(ROOT, "README.md")]
    docs = os.path.join(ROOT, "docs")
    for dirpath, _, files in os.walk(docs):
        out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".md")]
    return out


def without_code(text):
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def slug(heading):
    s = CODE_SPAN.sub(lambda m: m.group(0).strip("`"), heading)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # a link's text only
    s = s.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # \w keeps letters, digits, '_'
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    seen, out = {}, set()
    for m in HEADING.finditer(text):
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    # explicit <a id="..."> / <a name="..."> anchors
    out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return out


def links(path):
    with open(path, encoding="utf-8") as f:
        text = without_code(f.read())
    for rx in (INLINE, REFERENCE):
        for m in rx.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            yield line, m.group(1)


def broken(path):
    """[(line, target, why)] for every link of the page that does not resolve."""
    out = []
    here = os.path.dirname(path)
    for line, target in links(path):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
        if not os.path.exists(dest):
            out.append((line, target, "no such file"))
            continue
        if anchor and dest.endswith(".md") and anchor not in anchors(dest):
            out.append((line, target, "no such heading"))
    return out


class DocsLinks(unittest.TestCase):
    def test_every_relative_link_resolves(self):
        bad = []
        for page in pages():
            rel = os.path.relpath(page, ROOT)
            bad += [f"{rel}:{line}: {target} ({why})" for line, target, why in broken(page)]
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_there_are_links_to_check(self):
        # A parser that finds nothing passes the test above for any tree.
        n = sum(1 for p in pages() for _ in links(p))
        self.assertGreater(n, 20)

    def test_slugs_follow_github(self):
        self.assertEqual(slug("Disk buffer: an outage or a crash loses nothing that was received"),
                         "disk-buffer-an-outage-or-a-crash-loses-nothing-that-was-received")
        self.assertEqual(slug("File output's dirty pages (`lab/writeback.py`)"),
                         "file-outputs-dirty-pages-labwritebackpy")
        self.assertEqual(slug("--ordered against random"), "--ordered-against-random")

    def test_a_missing_file_and_a_missing_heading_are_found(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "a.md"), "w") as f:
                f.write("# Top\n\n## Two words\n\n[ok](a.md#two-words) [ok](#top) "
                        "[gone](b.md) [bad](a.md#three) `[code](nowhere.md)`\n"
                        "[web](https://example.com/x)\n")
            self.assertEqual([(t, w) for _, t, w in broken(os.path.join(d, "a.md"))],
                             [("b.md", "no such file"), ("a.md#three", "no such heading")])


if __name__ == "__main__":
    unittest.main()
