"""Hostile input for the differential tests of the native core against the Python reference
(``tests/text/test_native_html.py``, ``test_native_flat.py``) and for ``bench_native.py``'s fuzzing
at scale: HTML pieces drawn at random, and what each path makes of a page."""

from __future__ import annotations

import glob
import importlib
import os
import random
from pathlib import Path
from typing import Any

from scrapy_simhash.text.extract import extract

ex = importlib.import_module("scrapy_simhash.text.extract")  # the package exports the function too
nat = importlib.import_module("scrapy_simhash.text.native")


# Hostile HTML: pieces drawn at random (also by tests/text/test_native_html.py's hypothesis strategy).
HTML_TAGS = (
    "div p span a b i br td tr table ul li main nav aside footer header section article time h1 h2 "
    "script style noscript template svg pre code font center figure figcaption dialog menu".split()
)


HTML_ATTRS = (
    'class="sidebar"',
    'class="post-meta"',
    'class="content"',
    'id="footer-links"',
    'class="ad_box"',
    "class=byline",
    'class="ＡＢ meta"',
    'role="main"',
    "hidden",
    'style="display: none"',
    'style="DISPLAY:NONE"',
    'style="display:\u017fnone"',
    'style="color:none"',
    'class=""',
    "id",
    'class="x" class="sidebar"',
    'title="' + "x" * 5000 + '"',
    'class="' + "menu " * 300 + '"',
    'data-x="&amp;&lt;&#x4e2d;&bogus;"',
)


HTML_TEXTS = (
    "Hello world. ",
    "中文 文本， 科 技 。 ",
    "ＦＵＬＬ　ｗｉｄｔｈ １２３ ",
    "Posted on 2024-01-02 by admin ",
    "阅读 1234 次 ",
    "&nbsp;&amp;&lt;&gt;&#20013;&#x6587;&bogus;&#0;&#xd800; ",
    "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u3000\u200b ",
    "© 2024 All rights reserved ",
    "we use cookies to accept privacy ",
    "Read more... ",
    "한국어 텍스트 ",
    "İstanbul ſ K ",
    "<!-- a comment --> ",
    "<![CDATA[cdata]]> ",
    "<?pi x?> ",
    "<",
    ">",
    "</",
    "<div",
    "&",
    "\ufffd",
    "😀 ",
)


#: Nesting runs: past the walk's flattening depth (200), sometimes past libxml2's limit.
HTML_DEPTHS = (150, 199, 200, 201, 260, 2100)


HTML_ENCODINGS = ("utf-8", "gb18030", "cp1252", "utf-16", "str")


def random_html(rng: random.Random) -> str | bytes:
    parts: list[str] = []
    for _ in range(rng.randrange(0, 60)):
        kind = rng.randrange(100)
        if kind < 2:  # nesting is costly to parse: rare
            parts.append(f"<{rng.choice(('div', 'span', 'b', 'section'))}>x " * rng.choice(HTML_DEPTHS))
        elif kind < 40:
            parts.append(rng.choice(HTML_TEXTS))
        elif kind < 70:
            attrs = " ".join(rng.choice(HTML_ATTRS) for _ in range(rng.randrange(4)))
            parts.append(f"<{rng.choice(HTML_TAGS)} {attrs}>")
        elif kind < 80:
            parts.append(f"</{rng.choice(HTML_TAGS)}>")
        else:
            parts.append("".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(8))))
    html = "".join(parts)
    encoding = rng.choice(HTML_ENCODINGS)
    return html if encoding == "str" else html.encode(encoding, "replace")


def page_root(page: str | bytes):
    html = ex.decode_html(page)[0] if isinstance(page, bytes) else page
    try:
        return ex.parse_prepared(ex.prepare(html))
    except ex._TooDeep:
        return ex.parse_prepared(ex.flatten(ex.prepare(html)))


def walked(root: Any, native: bool) -> tuple[object, ...]:
    """What the native walk or the Python walk makes of the tree ``root``: the blocks (every field,
    their class and teaser flag), element numbering and landmark; ``("stopped", why)`` past the
    caps. ``AssertionError`` when the native walk does not run."""
    walker = ex.Walker()
    try:
        if native:
            assert nat.walk_native(walker, root), nat.HTML_WALKS
        else:
            walker.walk(root, 0, False, 0)
        walker.flush()
        for b in walker.blocks:
            ex.block_kind(b, False)  # classified: natively by the native walk, here by the Python one
    except ex.Budget as stop:  # past MAX_BLOCKS: both stop
        return ("stopped", str(stop))
    blocks = [(b.text, b.norm, b.weight, b.links, b.meta, b.owner, b.flags, b.base, b.teaser) for b in walker.blocks]
    return blocks, walker.parent, walker.end, walker.landmark


def html_outcomes(page: str | bytes, native: bool) -> tuple[object, ...]:
    """What the walk and the extraction make of ``page`` with the native walk or the Python walk:
    :func:`walked` of its tree, and the documents of main content and all visible text (title,
    text, visible, rest, method, coverage). ``AssertionError`` when the native walk does not run."""
    root = page_root(page)
    walk: tuple[object, ...] = () if root is None else walked(root, native)
    docs = []
    for main_content in (True, False):
        doc = extract(page, main_content=main_content, native=native)
        docs.append((doc.title, doc.text, doc.visible, doc.rest, doc.method, doc.coverage, doc.encoding))
    return walk, docs


# Hostile input of the regular-expression fallback (extract.flat_text, _TITLE_RE, _unescape): tag
# names of every list in any case and with the characters re matches to ASCII letters ignoring case
# (the long s, the Kelvin sign, dotted and dotless i), what may follow a name, unclosed and
# mismatched closing tags, every kind of whitespace, references named (HTML5's, cut, with junk
# after) and numeric (long, zero-padded, out of range, surrogates, the replacement table).
FLAT_NAMES = (
    "script style noscript template svg math textarea select object iframe title p br div td tr li "
    "h1 html body a b span x scripts titlex tbody blockquote figcaption".split()
)


FLAT_LOOKALIKES = {"s": "\u017f", "k": "\u212a", "i": "\u0130\u0131"}


FLAT_AFTER = (" ", ">", "\t", "\n", "-", "_", "1", "\u00e9", "\u3000", "/", "", "=", "\x0b")


FLAT_SPACES = " \n\r\t\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2028\u3000\u200b"


FLAT_TEXTS = (
    "word ",
    "中文 ",
    "١٢٣ ",
    "１２ ",
    "😀",
    "x",
    "<!-- c -->",
    "<![CDATA[x]]>",
    "<?pi?>",
    "<",
    ">",
    "</",
    "<!",
    "<1",
    "</ ",
)


def _flat_name(rng: random.Random) -> str:
    out = []
    for c in rng.choice(FLAT_NAMES):
        r = rng.random()
        if c in FLAT_LOOKALIKES and r < 0.15:
            c = rng.choice(FLAT_LOOKALIKES[c])
        elif r < 0.4:
            c = c.upper()
        out.append(c)
    return "".join(out)


def _flat_reference(rng: random.Random, names: list[str]) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return "&" + rng.choice(names)
    if kind == 1:
        name = rng.choice(names).rstrip(";")
        return "&" + name[: rng.randrange(1, len(name) + 1)] + rng.choice(("", ";", "x;", "zz", " ", "\u00e9;"))
    if kind == 2:
        digits = "0" * rng.choice((0, 0, 3, 9000)) + str(
            rng.choice((0, 9, 13, 65, 128, 159, 0xD800, 0xFFFE, 0x10FFFF, 0x110000, 10**12))
        )
        return "&#" + digits + rng.choice(("", ";", ";;", "x"))
    if kind == 3:
        digits = "0" * rng.choice((0, 2, 40)) + format(
            rng.choice((0, 0x41, 0x80, 0x9F, 0xDFFF, 0x1FFFF, 0x110000, 16**20)), "x"
        )
        return "&#" + rng.choice("xX") + digits + rng.choice(("", ";"))
    if kind == 4:
        return rng.choice(("&", "&#", "&#x", "&#;", "&;", "&&amp;", "&#x;", "&" + "a" * 40 + ";"))
    return "&" + "".join(chr(rng.randrange(0x21, 0x3000)) for _ in range(rng.randrange(1, 36)))


def random_flat(rng: random.Random, names: list[str]) -> str:
    parts: list[str] = []
    for _ in range(rng.randrange(0, 40)):
        kind = rng.randrange(10)
        if kind <= 2:
            parts.append(rng.choice(("<", "</", "<", "</ ")) + _flat_name(rng) + rng.choice(FLAT_AFTER))
        elif kind == 3:
            parts.append(rng.choice(FLAT_SPACES) * rng.randrange(1, 4))
        elif kind <= 5:
            parts.append(_flat_reference(rng, names))
        elif kind == 6:
            parts.append("".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(6))))
        else:
            parts.append(rng.choice(FLAT_TEXTS))
    return "".join(parts)


def flat_outcomes(html: str, native: bool) -> tuple[str | None, str]:
    """The regular-expression fallback's title (``_TITLE_RE`` and ``_unescape``, before
    ``_clean_title``) and text of ``html``, natively or by the Python reference."""
    if native:
        return nat.native_flat_text().document(html)
    match = ex.TITLE_RE.search(html)
    return (ex.unescape(match.group(1)) if match else None), ex.flat_text(html)


def flat_fuzz(n: int, seed: int = 12) -> int:
    """``n`` generated strings (:func:`random_flat`), native vs Python; how many differ."""
    import html.entities

    rng = random.Random(seed)
    names = sorted(html.entities.html5)
    diffs = 0
    for i in range(n):
        page = random_flat(rng, names)
        if flat_outcomes(page, True) != flat_outcomes(page, False):
            diffs += 1
            print(f"  string {i} differs: {page[:300]!r}", flush=True)
    return diffs


_RNG = random.Random(20261123)


# 5,000 made-up words of two or three syllables: enough distinct words for a SimHash.
WORDS = sorted(
    {
        "".join(_RNG.choice("bdfgklmnprstvz") + _RNG.choice("aeiou") for _ in range(_RNG.randint(2, 3)))
        for _ in range(6000)
    }
)[:5000]


def pathological_pages(docs: int) -> dict[str, str | bytes]:
    """Pages that test the bounds (250,000 line breaks, 3,000 nested divs, a 10 MB script...), and
    the ``docs`` largest HTML files under /usr/share/doc."""
    rng = random.Random(7)
    article = " ".join(rng.choice(WORDS) for _ in range(400)) + "."
    out: dict[str, str | bytes] = {
        "br-250k": "<html><head><title>Words</title></head><body>"
        + "<br>".join(rng.choice(WORDS) for _ in range(250_000))
        + "</body></html>",
        "p-50k": "<html><body>" + "".join(f"<p>{rng.choice(WORDS)} {i}</p>" for i in range(50_000)) + "</body></html>",
        "deep-3000": "<html><body>" + "<div>" * 3000 + f"<p>{article}</p></body></html>",
        "script-10mb": (
            "<html><head><script>var x='" + "a" * 10_000_000 + f"';</script></head><body><p>{article}</p></body></html>"
        ).encode(),
        "table-20k": "<html><body><table>"
        + "".join("<tr>" + "".join(f"<td>{rng.choice(WORDS)}</td>" for _ in range(10)) + "</tr>" for _ in range(2000))
        + "</table></body></html>",
    }
    found = glob.glob("/usr/share/doc/**/*.html", recursive=True)
    for path in sorted(found, key=lambda p: (-os.path.getsize(p), p))[:docs]:
        out[path.replace("/usr/share/doc/", "doc:")] = Path(path).read_bytes()
    return out
