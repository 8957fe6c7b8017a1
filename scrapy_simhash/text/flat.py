"""The regular-expression fallback of :mod:`scrapy_simhash.text.extract`: a page's text without
parsing it (:func:`flat_text`: invisible elements dropped, block tags as line breaks, entities
unescaped), for pages too large or too deep to walk, and the flattening of a page nested deeper
than libxml2 parses (:func:`flatten`)."""

from __future__ import annotations

import html as htmllib
import re

from scrapy_simhash.text import rules
from scrapy_simhash.text.blocks import BLOCK
from scrapy_simhash.text.charset import MAX_HTML_CHARS

_INVISIBLE_ELEMENTS = rules.INVISIBLE_ELEMENTS


_INVISIBLE_BLOCK_RE = re.compile(rf"<({_INVISIBLE_ELEMENTS})\b.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)


# The same and <title>, whose text is no part of the visible text.
_INVISIBLE_TITLE_RE = re.compile(rf"<({_INVISIBLE_ELEMENTS}|title)\b.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)


_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*>|<![^>]*>")


def _flat_tag(match: re.Match[str]) -> str:
    tag = (match.group(2) or "").lower()
    if tag in ("title", "a"):
        return match.group()
    return "<br>" if tag in BLOCK else ""


def flatten(html: str) -> str:
    """``html`` without nesting: invisible elements removed, block tags turned into <br>, every
    other tag but <title> and <a> removed (for pages nested deeper than libxml2 goes)."""
    return _TAG_RE.sub(_flat_tag, _INVISIBLE_BLOCK_RE.sub(" ", html))


# ``<script`` / ``<style`` and their end tags as ``html.lower()`` has them, found in ``html``
# itself: only ASCII letters lower-case to the letters of these names (U+212A, the Kelvin sign,
# to "k"; U+0130 to two characters), and a character is a word character exactly when its lower
# case is (``tests/text/test_flat.py`` checks both on every code point).
_SCRIPT_START_RE = re.compile(r"<([sS][cC][rR][iI][pP][tT]|[sS][tT][yY][lL][eE])\b")


_SCRIPT_END_RE = {name: re.compile("</" + "".join(f"[{c}{c.upper()}]" for c in name)) for name in ("script", "style")}


def cut(html: str) -> str:
    """The first MAX_HTML_CHARS of ``html`` after removing <script>/<style> blocks (linear time):
    positions found in ``html.lower()``, read in ``html`` itself when they are the same (no U+0130,
    whose lower case is two characters): lower-casing a large page that is not ASCII took 30 ms."""
    text = html.lower() if "\u0130" in html else html
    out: list[str] = []
    size = pos = 0
    while size < MAX_HTML_CHARS:
        match = _SCRIPT_START_RE.search(text, pos)
        if match is None:
            out.append(html[pos:])
            break
        out.append(html[pos : match.start()])
        size += match.start() - pos
        end = _SCRIPT_END_RE[match.group(1).lower()].search(text, match.end())
        if end is None:
            break
        pos = end.start()
    return " ".join(out)[:MAX_HTML_CHARS]


def flat_text(html: str) -> str:
    """All text of ``html`` by regular expressions alone, one block per line (linear, no tree:
    the fallback of a page that runs past its time budget or element cap)."""
    text = _INVISIBLE_TITLE_RE.sub(" ", html)
    text = _BLOCK_TAG_RE.sub("\n", text)
    text = unescape(_TAG_RE.sub("", text))
    text = _BLANKS_RE.sub(" ", text)
    return _LINE_BREAK_RE.sub("\n", text).strip()


_BLOCK_TAG_RE = re.compile(r"</?(?:" + "|".join(sorted(BLOCK, key=len, reverse=True)) + r")\b[^>]*>", re.IGNORECASE)


_BLANKS_RE = re.compile(r"[^\S\n]+")


_LINE_BREAK_RE = re.compile(r" ?\n[\s]*")


_LONG_DECIMAL_REF_RE = re.compile(r"&#([0-9]{8,})")


def _short_decimal(match: re.Match[str]) -> str:
    digits = match.group(1).lstrip("0") or "0"
    return "&#" + (digits if len(digits) <= 7 else "99999999")


def unescape(text: str) -> str:
    """``html.unescape(text)``, where a decimal reference too long for ``int()`` (4,300 digits)
    reads as the number it is: any of 8 digits or more but leading zeros is no code point."""
    if "&#" in text:
        text = _LONG_DECIMAL_REF_RE.sub(_short_decimal, text)
    return htmllib.unescape(text)


TITLE_RE = re.compile(r"<title\b[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
