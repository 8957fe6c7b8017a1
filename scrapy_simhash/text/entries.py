"""An API reference page's own entries (stage 2 of :mod:`scrapy_simhash.text.extract`, after the
content region: :mod:`~scrapy_simhash.text.region`): its member declarations, which the region
leaves out as link lists (their type names link to the types' pages), join its content
(:func:`with_entries`); and whether a page documents members (:func:`has_members`), so that its
member docs are its content, not one member's docs or its class description alone."""

from __future__ import annotations

import re

from scrapy_simhash.text.blocks import IN_CHROME_CLASS, Block
from scrapy_simhash.text.region import BOILERPLATE_RE, LINKS, SHORT, block_kind, is_boilerplate

#: A member's declaration among a page's lines of ASCII: a type ("::"), an arrow ("->", "=>"), a
#: generic ("List<E>"), a call with a parameter ("add(long operand)", not a counter: "Comments(12)"),
#: a line that opens with a declaration's keyword ("data Maybe a", "class Monoid a", "public
#: static long") or a constructor's bar or equals sign ("| Just a", "= Nothing"), or a C function's
#: name alone, three words or more joined by underscores (gi-docgen's and gtk-doc's member lists:
#: "gtk_cell_area_activate").
_ENTRY_RE = re.compile(
    r"::|[-=]>|[A-Za-z_]<[A-Za-z_]|[A-Za-z_]\([^()]*[A-Za-z][^()]*\)|^(?:[|=] |(?:data|newtype|type|class|instance"
    r"|pattern|family|module|struct|enum|union|trait|impl|fn|def|function|interface|public|protected|private"
    r"|static|final|abstract|const|typedef|template|val|var|let)\s)|^[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}$"
)

#: A page's lines of links that are declarations are its entries when it has this many at least (a
#: lone one is a stray line of code in a sidebar's list, or a title with an equals sign).
_MIN_ENTRIES = 2


def with_entries(blocks: list[Block], main: list[Block], landmarked: bool = False) -> list[Block]:
    """``main`` (a subsequence of ``blocks``, the page's blocks or its ``<main>`` landmark's, in page
    order) with the page's own entries: the member declarations that it leaves out as link lists,
    their type names being links to those types' pages (an API reference: Haddock's
    ``unionFileModes :: FileMode -> FileMode -> FileMode``, a Javadoc member summary's ``add(long
    operand)``), where the page has :data:`_MIN_ENTRIES` at least; not chrome, boilerplate or
    markup shown as text, nor a line of links without code. Inside a ``<main>`` landmark
    (``landmarked``) a declaration whose class/id only looks like chrome counts too (rustdoc's
    ``<h3 class="code-header">fn rem_assign(&mut self, rhs: Rhs)</h3>``)."""
    if not main:
        return main
    taken = set(main)
    flags = (0, IN_CHROME_CLASS) if landmarked else (0,)
    entries = [
        b
        for b in blocks
        if b.flags in flags
        and b not in taken
        and (b.base if b.base != -2 else block_kind(b, False)) in (LINKS, SHORT)
        and _is_entry(b.norm)
    ]
    if len(entries) < _MIN_ENTRIES:
        return main
    at = dict(zip(blocks, range(len(blocks))))  # blocks compare by identity
    if any(b not in at for b in main):
        return main  # (a region from outside the landmark: never, but no entry without an order)
    return sorted([*main, *entries], key=at.__getitem__)


#: A page whose content-like blocks outside its region hold this many member declarations at least
#: documents members: an API reference page, whose member docs are its content (``extract._choose``).
_MIN_MEMBERS = 3


def has_members(blocks: list[Block], main: list[Block]) -> bool:
    """Whether ``blocks`` outside ``main`` hold :data:`_MIN_MEMBERS` member declarations or more
    (:func:`_is_entry`: Javadoc's ``public static int nextInt(int startInclusive, ...)``)."""
    taken = set(main)
    return sum(1 for b in blocks if b not in taken and _is_entry(b.norm)) >= _MIN_MEMBERS


#: The first characters that :data:`_ENTRY_RE`'s alternatives anchored at the start can match; each
#: of the others needs ":", ">", "<" or "(" (tested first: a regular expression costs more).
_ENTRY_FIRST = "|=abcdefghijklmnopqrstuvwxyz"


def _is_entry(text: str) -> bool:
    """Whether a line of links is a declaration (ASCII, :data:`_ENTRY_RE`), not boilerplate or markup."""
    return (
        text.isascii()
        and (":" in text or ">" in text or "<" in text or "(" in text or text[0] in _ENTRY_FIRST)
        and _ENTRY_RE.search(text) is not None
        and not (text[0] == "<" and text[-1] == ">")
        and not is_boilerplate(text)
        and not BOILERPLATE_RE.match(text)
    )
