"""The one walk over a parsed page (:class:`Walker`): its text blocks in document order, each
with its features (text, weight, characters in links and in metadata elements, its owner element,
the chrome flags), the element numbering and the ``<main>`` landmark (stage 1 of
:mod:`scrapy_simhash.text.extract`). The native core does the same walk
(:func:`scrapy_simhash.text.native.walk_native`); this one is the reference and the fallback."""

from __future__ import annotations

import re
import time
import unicodedata
from operator import attrgetter
from typing import Any

from lxml import etree

from scrapy_simhash.text import rules
from scrapy_simhash.text.cache import SizedCache

# The walk's rules (text/rules.py), bound here for the walk's lookups.
MAX_BLOCKS = rules.MAX_BLOCKS
_BUDGET_STEP = rules.BUDGET_STEP
_INVISIBLE = rules.INVISIBLE
_CHROME_TAGS = rules.CHROME_TAGS
BLOCK = rules.BLOCK
_NEGATIVE_WORDS = rules.NEGATIVE_WORDS
_NEGATIVE_TOKENS = rules.NEGATIVE_TOKENS
_NEGATIVE_NOT_AFTER = rules.NEGATIVE_NOT_AFTER
_WRAPPER_PARAGRAPHS = rules.WRAPPER_PARAGRAPHS
_META_CLASS_WORDS = rules.META_CLASS_WORDS
_META_CLASS_TOKENS = rules.META_CLASS_TOKENS
_DISPLAY_NONE_RE = rules.DISPLAY_NONE_RE
PUNCT_RE = rules.PUNCT_RE


# Elements whose class/id can make them page chrome: block-level ones but <body> and <html>.
_CLASS_CHROME_TAGS = BLOCK - {"body", "html", "br"}


def _class_words_re(
    words: tuple[str, ...], tokens: tuple[str, ...], not_after: tuple[str, ...] = ()
) -> re.Pattern[str]:
    """A class/id test: one of ``words`` anywhere in the string, or one of ``tokens`` as a whole
    token (after the start, white space, ``_`` or ``-``; before the end, white space, a digit,
    ``_`` or ``-``) where the string up to the token's end does not end with one of ``not_after``.
    The native walk tests the same lists (``HtmlWalker``'s ``ClassWords``)."""
    unless = "".join(f"(?<!{re.escape(w)})" for w in not_after)
    return re.compile("|".join(words) + r"|(?:^|[\s_-])(?:" + "|".join(tokens) + rf"){unless}(?:$|[\s_\d-])")


_NEGATIVE_RE = _class_words_re(_NEGATIVE_WORDS, _NEGATIVE_TOKENS, _NEGATIVE_NOT_AFTER)


# class/id string -> whether it matches: bounded in entries and characters (long generated
# class strings cannot grow them without bound).
_NEGATIVE_CACHE = SizedCache(50_000, 4 << 20)


_ENTITY = etree.Entity


WS_RE = re.compile(r"\s+")


# A heading's permalink sign (Sphinx "¶", "#", "§") is no part of its text.
_HEADING_MARKS = " \t\n¶#§"


def heading_text(text: str) -> str:
    """A heading's text as the title and the content region compare it: whitespace collapsed,
    case-folded, without permalink signs ("" when it has no text)."""
    return WS_RE.sub(" ", text).strip(_HEADING_MARKS).casefold()


# Han, kana and CJK symbols (。、「」): scripts written without spaces between words. Not the
# full-width forms (U+FF00-FFEF): a full-width letter or digit is a Latin letter or digit in
# another width (NFKC maps it back), and "Ｋｉｍ Ｊｏｎｇ" keeps its spaces like "Kim Jong".
CJK = r"\u2e80-\u9fff\uf900-\ufaff"


# Punctuation in both widths (and curly quotes, straight in a half-width copy): a space between
# it and a Han character goes too, so that "科 ， 自" and its half-width variant "科 , 自" both
# lose it.
_ANY_PUNCT = r"!-/:-@\[-`{-~\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u2018\u2019\u201c\u201d"


# Han and kana without the CJK punctuation (U+3000-303F: 。、「」), which counts as punctuation here
# (a half-width copy may write "." for "。").
_HAN_KANA = r"\u2e80-\u2fff\u3040-\u9fff\uf900-\ufaff"


_SPACE_PUNCT = _ANY_PUNCT + r"\u3000-\u303f"


_CJK_SPACE_RE = re.compile(
    rf"(?<=[{_HAN_KANA}]) (?=[{_HAN_KANA}{_SPACE_PUNCT}])|(?<=[{_SPACE_PUNCT}]) (?=[{_HAN_KANA}])"
)


CJK_CHAR_RE = re.compile(rf"[{CJK}\uac00-\ud7af]")  # + Hangul: dense scripts


# What weighs 3 in a text with Han (or Hangul): those characters, and punctuation of either width.
_DENSE_RE = re.compile(rf"[{CJK}\uac00-\ud7af{_ANY_PUNCT}]")


_DENSE_RUN_RE = re.compile(rf"{_DENSE_RE.pattern}+")  # removing runs removes the same characters


# Full-width letters and digits: a block with one is read in NFKC (see fold).
_FULL_WIDTH_ALNUM_RE = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*>", re.IGNORECASE)


# The CleanEval corpus format (<text id=URL title=.. encoding=..>page</text>).
CLEANEVAL_RE = re.compile(r"^\s*<text\s+id=[^>]*>", re.IGNORECASE)


#: A NUL: on a page that is not ASCII, a regular expression finds one in half the time of ``in``
#: (CPython's one-character search of a two- or four-byte string).
NUL_RE = re.compile("\x00")


META_CLASS_RE = _class_words_re(_META_CLASS_WORDS, _META_CLASS_TOKENS)


META_CACHE = SizedCache(50_000, 4 << 20)


def cached_search(cache: SizedCache, pattern: re.Pattern[str], attrs: str) -> bool:
    """Whether ``pattern`` matches the lower-cased class/id string ``attrs``; class names repeat
    across the pages of a site, so the answers are kept (in a bounded cache)."""
    found = cache.get(attrs)
    if found is None:
        found = pattern.search(attrs.lower()) is not None
        cache.put(attrs, found)
    return found


def _is_meta_element(el: Any, tag: str) -> bool:
    """<time>, or an element whose class/id says metadata (unless it wraps paragraphs)."""
    meta: bool | None
    if tag == "time":
        meta = True
    elif tag == "body" or tag == "html" or tag == "a":
        return False
    else:
        attrs = el.get("class")
        ident = el.get("id")
        if attrs is None and ident is None:
            return False
        attrs = f"{attrs or ''} {ident or ''}"
        meta = cached_search(META_CACHE, META_CLASS_RE, attrs)
    # "article-info" around the whole story: a wrapper, not a metadata line.
    return meta and not _wraps_paragraphs(el)


def _wraps_paragraphs(el: Any) -> bool:
    """Whether ``el`` holds at least ``_WRAPPER_PARAGRAPHS`` <p>/<br>: a page wrapper, not chrome."""
    return any(count >= _WRAPPER_PARAGRAPHS for count, _ in enumerate(el.iterdescendants("p", "br"), 1))


def fold(text: str) -> str:
    """``text`` as the block signals read it: in NFKC if it has full-width letters or digits.

    Full-width punctuation, common in Chinese, is left alone (NFKC on every Chinese block would
    cost a fifth of the extraction time): the signals count it like its ASCII counterpart.
    """
    if text.isascii() or _FULL_WIDTH_ALNUM_RE.search(text) is None:
        return text
    return unicodedata.normalize("NFKC", text)


def weight_of(blocks: list[Block]) -> int:
    """The weight of a sequence of blocks (each block's :func:`weight`)."""
    return sum(map(_WEIGHT, blocks))


#: A block's weight and text, read without a Python frame per block (``map``).
_WEIGHT, TEXT = attrgetter("weight"), attrgetter("text")


def weight(text: str) -> int:
    """Weight of folded text: a Han character carries about as much as a short Latin word (3).

    In text with Han (or Hangul) characters, punctuation weighs 3 too, whether written
    full-width (as usual in Chinese) or half-width: a full-width copy of a page weighs what the
    original weighs.
    """
    size = len(text)
    if text.isascii() or CJK_CHAR_RE.search(text) is None:
        return size
    return 3 * size - 2 * len(_DENSE_RUN_RE.sub("", text))


class Block:
    __slots__ = ("base", "flags", "links", "meta", "norm", "owner", "teaser", "text", "weight")

    def __init__(self, text: str, links: int, owner: int, meta: int = 0, flags: int = 0) -> None:
        self.text = text
        # The block's signals (weight, punctuation, boilerplate and metadata patterns) are read on
        # its folded form and count punctuation of both widths alike, so that a full-width copy
        # of a page picks the same blocks.
        self.norm = fold(text)
        self.links = links
        self.meta = meta  # characters inside <time> / metadata-class elements
        self.owner = owner
        self.flags = flags  # IN_CHROME_TAG | IN_CHROME_CLASS
        self.weight = weight(self.norm)
        self.base = -2  # _classify_base, computed on first use
        self.teaser = False


#: Block flags: the block sits inside a page-chrome tag (nav, aside, footer, ...: dropped by main
#: content) or inside an element whose class/id says chrome (dropped unless the class/id rules are off).
IN_CHROME_TAG, IN_CHROME_CLASS = 1, 2


class Budget(Exception):
    """The walk ran past its deadline ("budget") or its block cap ("large")."""


class Walker:
    """The single pass over the tree: every visible text block with its features (length,
    weight, link and metadata characters, the element that owns it, whether it is inside page
    chrome), plus each element's parent and subtree end. Decisions are made afterwards, over the
    block sequence alone (:func:`_main_blocks`), so that this pass runs once per page."""

    def __init__(self, deadline: float | None = None) -> None:
        self.blocks: list[Block] = []
        self.parent: list[int] = []
        self.end: list[int] = []
        self.pieces: list[str] = []
        self.links = 0
        self.owner = 0
        self.in_meta = 0  # depth of <time> / metadata-class elements around the current one
        self.meta = 0
        self.flags = 0
        self.deadline = deadline
        self.next_check = _BUDGET_STEP
        self.landmark = -1  # the first <main> / role="main" element, if any
        self.core: Any = None  # the native HtmlWalker that walked the page (text.native.walk_native)
        # whether a comment may split a text run (HtmlWalker.comment_runs, read by the native walk)
        self.comments: bool | None = None

    def flush(self) -> None:
        if not self.pieces:
            return
        text = " ".join("".join(self.pieces).split())  # = WS_RE.sub(" ", ...).strip(): same \s
        self.pieces = []
        if text:
            if " " in text and not text.isascii():
                text = _CJK_SPACE_RE.sub("", text)
            size = len(text)
            self.blocks.append(Block(text, min(self.links, size), self.owner, min(self.meta, size), self.flags))
        self.links = 0
        self.meta = 0

    def add(self, text: str, idx: int, in_link: bool) -> None:
        if not self.pieces:
            if text.isspace():
                return
            self.owner = idx
        self.pieces.append(text)
        if in_link:
            self.links += len(text.strip())
        if self.in_meta:
            self.meta += len(text.strip())

    def check_budget(self) -> None:
        """Raise :class:`Budget` past the deadline, or past :data:`MAX_BLOCKS` blocks (checked every
        few thousand elements, so that its cost does not show)."""
        self.next_check = len(self.parent) + _BUDGET_STEP
        if len(self.blocks) > MAX_BLOCKS:
            raise Budget("large")
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise Budget("budget")

    def chrome(self, el: Any, tag: str) -> int:
        """The chrome flag an element adds (0 if none); -1 for an invisible element (skipped with
        its content)."""
        if tag in _INVISIBLE:
            return -1
        flag = IN_CHROME_TAG if tag in _CHROME_TAGS else 0
        keys = el.keys()
        if not keys:
            return flag
        if "hidden" in keys:
            return -1
        if "style" in keys:
            style = el.get("style")
            if "none" in style and _DISPLAY_NONE_RE.search(style):
                return -1
        # Block-level elements only: an inline one (<a class="link">, <span class="date">) is part of
        # its sentence or code line.
        if ("class" in keys or "id" in keys) and tag in _CLASS_CHROME_TAGS:
            attrs = f"{el.get('class') or ''} {el.get('id') or ''}"
            if cached_search(_NEGATIVE_CACHE, _NEGATIVE_RE, attrs) and not _wraps_paragraphs(el):
                flag |= IN_CHROME_CLASS
        return flag

    def walk(self, el: Any, parent: int, in_link: bool, depth: int) -> None:
        parents = self.parent
        idx = len(parents)
        if idx >= self.next_check:
            self.check_budget()
        parents.append(parent)
        self.end.append(0)
        tag = el.tag
        block = tag in BLOCK
        if block and self.pieces:
            self.flush()
        if self.landmark < 0 and (tag == "main" or el.get("role") == "main"):
            self.landmark = idx
        if tag == "a":
            in_link = True
        meta = _is_meta_element(el, tag)
        if meta:
            self.in_meta += 1
        add = self.add
        text = el.text
        if text:
            add(text, idx, in_link)
        if depth < 200:
            chrome = self.chrome
            walk = self.walk
            depth += 1
            for child in el:
                ctag = child.tag
                if ctag.__class__ is str:
                    flag = chrome(child, ctag)
                    if flag == 0 or (flag > 0 and self.flags & flag == flag):
                        walk(child, idx, in_link, depth)
                    elif flag > 0:
                        # Entering chrome: its text never shares a block with text outside it.
                        if self.pieces:
                            self.flush()
                        outer = self.flags
                        self.flags = outer | flag
                        walk(child, idx, in_link, depth)
                        if self.pieces:
                            self.flush()
                        self.flags = outer
                elif ctag is _ENTITY:  # &nbsp; etc. kept as entities in recover mode
                    add(" ", idx, in_link)
                tail = child.tail
                if tail:
                    add(tail, idx, in_link)
        else:  # absurdly deep markup: flatten the rest
            add(" ".join(el.itertext()), idx, in_link)
        if meta:
            self.in_meta -= 1
        if block and self.pieces:
            self.flush()
        self.end[idx] = len(parents)
