"""HTML to text: charset decoding, title and main-content extraction.

The only module of :mod:`scrapy_simhash` that knows about markup. It turns a page (``bytes`` as
downloaded, or an already decoded ``str``) into a :class:`Document`: a cleaned title and the page's
main text, one paragraph per line, without navigation, footers, sidebars, link lists and other
template text that pages of one site share. It reads no ``SIMHASH_*`` setting; the callers decide
whether to ask for the main content (``main_content=True``) or all visible text.

Decoding (:func:`decode_html`) follows this order: byte-order mark, the caller's ``encoding``, the
HTTP ``Content-Type`` charset, ``<meta charset>`` / ``<meta http-equiv>``, then sniffing: strict
UTF-8, strict GB18030 (the superset of GB2312 and GBK, common on Chinese pages that declare
nothing), else cp1252 with replacement characters. It never raises on undecodable bytes.

Main-content extraction is a small, fast heuristic on ``lxml`` in the spirit of readability,
jusText and text-density methods. It has two stages, so that a native port can reproduce it
decision for decision:

1. **One walk** over the tree (:class:`_Walker`) produces the page's text blocks, in document
   order, each with its features: its text (whitespace collapsed; spaces between Han characters
   dropped), weight (a Han character weighs 3 Latin ones; see :func:`_weight`), characters inside
   links and inside metadata elements (``<time>``, class/id meta, info, byline, date...), the
   element that owns it (elements are numbered in document order, with each one's parent and
   subtree end), and two chrome flags: inside a chrome tag (``nav``, ``aside``, ``footer``,
   ``header``, ``menu``, ``dialog``, ``figure``) or inside a block-level element whose class/id says
   sidebar, menu, comment, share, related, ad... (unless it wraps 5+ ``<p>``/``<br>``: a page
   wrapper). Blocks break at block-level tags, ``<br>`` and chrome boundaries. Invisible elements
   (``script``, ``style``, ``hidden``, ``display:none``...) are skipped with their content. The walk
   also notes the first ``<main>`` / ``role="main"`` element. The native core does this walk when it is
   installed (:meth:`_Walker.walk_native`: the same blocks, read from libxml2's nodes); this
   Python walk is the reference and the fallback.
2. **Decisions over the block sequence** (:func:`_choose`), which never look at the tree again:
   each block is classed good / short / link list / metadata (:func:`_classify_base`: link
   density, length, sentence punctuation (``，。；`` too), boilerplate patterns such as copyright
   lines, cookie banners, "责任编辑", "分享到"; metadata: bylines, datelines and counters, blocks
   made mostly of dates, numbers and words such as "posted", "views", "发布", "阅读"; teasers
   ending in "..." on a page with several); the signals are width-invariant (full-width letters
   and digits read as ASCII, full-width punctuation counted like ASCII). Then, in order:
   (a) blocks outside the ``<main>`` landmark are dropped when it holds 50+ characters;
   (b) the content region (:func:`_main_blocks`): each block's score goes to its element and
   ancestors with decay (readability), the best element is widened to a near ancestor with much
   more good text, and its leading and trailing non-good blocks and link lists are trimmed;
   (c) under 250 characters: again with the class/id chrome rule off, longer result kept;
   (d) under 300 characters and a fifth of the text: the "relaxed" region (every block that is not
   a link list, boilerplate or metadata counts as content: a table or list of short lines) if it
   holds what was found and twice as much; (e) "page": when the region's good text is under a
   quarter of the good text outside chrome (or, inside a ``<main>`` landmark, a region of no
   paragraph weighs under a quarter of the landmark's content-like blocks: an API reference page
   of short lines), every block outside chrome that is not a link list, boilerplate or metadata;
   (f) "list": when what was found weighs under a fifth of all blocks outside chrome and link
   lists make up most of them, those blocks with the link lists (an index page); (g) under 50
   characters: all visible text.

Bounded: pages over :data:`MAX_HTML_CHARS` are cut after their scripts and styles are removed; a
page nested deeper than libxml2's 2048 levels is flattened (block tags become ``<br>``, other tags
but ``<title>``/``<a>`` go) and parsed again ("deep"); a page with more than :data:`MAX_ELEMENTS`
start tags or :data:`MAX_BLOCKS` text blocks, or (opt-in: ``time_budget``) whose walk runs past
its time budget, gets its text by regular expressions alone ("large" / "budget"). Measured token F1 (``benchmarks/bench_extract.py``): see the README.
"""

from __future__ import annotations

import codecs
import html as htmllib
import re
import threading
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

from lxml import etree
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
)

from scrapy_simhash import _native
from scrapy_simhash.text.features import SizedCache

__all__ = ["MAX_BLOCKS", "MAX_ELEMENTS", "MAX_HTML_CHARS", "Document", "decode_html", "extract"]

#: Pages longer than this (in characters after decoding) are cut to this size before parsing,
#: after their ``<script>``/``<style>`` blocks are removed, so that a multi-megabyte page costs a
#: bounded time (under 0.5 s) instead of seconds or minutes. Main content beyond this point is lost.
MAX_HTML_CHARS = 1_000_000

#: Bytes beyond this are not decoded at all (a margin over :data:`MAX_HTML_CHARS` for scripts
#: that get removed and for multi-byte characters).
_MAX_HTML_BYTES = 4 * MAX_HTML_CHARS

#: If the main-content text is shorter than this many characters, :func:`extract` returns all
#: visible text instead (a page whose content the heuristic cannot find is better fingerprinted
#: whole than as an empty string).
_MIN_MAIN_CHARS = 50

#: Below this many characters of main content, extraction is tried again without the class/id
#: rules, and the longer result is kept.
_RETRY_CHARS = 250

#: Below this many characters of main content, and this share of the page's visible text, it is
#: tried again with every block that is not a link list, boilerplate or metadata counted as
#: content (a page whose content is a table or list of short lines); that text is kept if it
#: holds the first one and is at least this many times longer (a short article keeps its own
#: text, not its headline too).
_RELAXED_CHARS = 300
_RELAXED_SHARE = 0.2
_RELAXED_GAIN = 2

#: When the content region holds less than this share of the weight of the page's content-like
#: blocks (sentences, code: outside page chrome, neither link lists, boilerplate nor metadata),
#: every block outside page chrome that is not a link list, boilerplate or metadata is the text
#: (``method="page"``).
_COVERAGE = 0.25

#: A page cut into more text blocks than this is not judged block by block: its text is found by
#: regular expressions (``method="large"``); each block costs a few microseconds per decision.
MAX_BLOCKS = 20_000

#: A block of this weight or more is a paragraph (see the landmark rule of ``_choose``).
_PARAGRAPH_WEIGHT = 100

#: When what was found holds less than this share of the weight of all blocks outside page
#: chrome, the page is a listing: its link lists are its text too (``method="list"``).
_LIST_SHARE = 0.2

#: A page with more elements than this is not walked: its text is found by regular expressions
#: (``method="large"``), which bounds the time of a page made of hundreds of thousands of tiny
#: elements (a walk costs about a microsecond per element and a block classification a few).
MAX_ELEMENTS = 60_000


@dataclass(frozen=True)
class Document:
    """A page reduced to what its fingerprint should see.

    ``title`` is the page title without a site-name prefix/suffix (``""`` if none); ``text`` is
    the main content (or all visible text), one block per line; ``encoding`` is the Python codec
    name the bytes were decoded with, or ``None`` when the page was given as ``str``; ``method``,
    ``coverage`` and ``visible`` say how the text was found and how much of the page it holds.
    """

    title: str
    text: str
    encoding: str | None
    #: How ``text`` was found: "main" (the content region), "relaxed" (a table or list of short
    #: lines), "page" (all content-like blocks: the region held too little of them), "list" (an index or listing
    #: page: its link lists too), "visible" (all
    #: visible text: too little content), "all" (``main_content=False``), "deep" (nested deeper
    #: than libxml2 parses: flattened first), "large" / "budget" (past the element cap / the time
    #: budget: text by regular expressions), "empty" (nothing to parse).
    method: str = "main"
    #: Share of the page's visible text (by weight: a Han character counts 3) that ``text`` holds.
    coverage: float = 1.0
    #: All visible text of the page, one block per line (what site templates are learned from).
    visible: str = ""
    #: Every content-like block of the page (not chrome, link lists, bylines, dates or counters;
    #: on a hub page, the link lists of ``text``'s container, which outweigh it) that is not in
    #: ``text``, in page order, one block per line: the change sketch covers it with ``text``, so
    #: that an edit outside the fingerprinted part of a page is seen.
    rest: str = ""


# --------------------------------------------------------------------------- decoding


def _resolve(label: str | None) -> str | None:
    """Python codec name for an encoding label (GB2312/GBK -> gb18030), or None if unknown."""
    if not label:
        return None
    try:
        return resolve_encoding(label.strip())
    except Exception:  # noqa: BLE001 - junk labels (NUL bytes, non-ASCII) are "unknown"
        return None


def _decodes_strictly(data: bytes, encoding: str) -> str | None:
    """``data`` decoded strictly, allowing a multi-byte character cut at the end; else None."""
    try:
        decoder = codecs.getincrementaldecoder(encoding)("strict")
        return decoder.decode(data, final=False)
    except (UnicodeDecodeError, LookupError):
        return None


_SNIFFED = ("utf-8", "gb18030")
_HIGH_BYTES = bytes(range(128, 256))
_MAX_SNIFF_ERRORS = 16
_SNIFF_ERROR_RATIO = 200  # at most one undecodable spot per 200 non-ASCII bytes


def _is_utf16_or_32(encoding: str) -> bool:
    return encoding.replace("-", "").replace("_", "").lower().startswith(("utf16", "utf32"))


def decode_html(
    body: bytes, *, encoding: str | None = None, content_type: str | bytes | None = None
) -> tuple[str, str]:
    """Decode an HTML body; return ``(text, encoding used)`` (a Python codec name).

    Order: byte-order mark; ``encoding`` (the caller knows best: decoded with replacement
    characters); the charset of ``content_type`` (an HTTP ``Content-Type`` value, ``str`` or
    ``bytes`` as in ``response.headers.get("Content-Type")``); a
    ``<meta charset>`` / ``<meta http-equiv="Content-Type">`` in the first 4 KB; then sniffing:
    strict UTF-8, strict GB18030, else cp1252 with replacement. GB2312 and GBK labels decode as
    GB18030 (their superset). A declared charset that the bytes contradict is overruled by valid
    UTF-8 (a page in a legacy encoding with non-ASCII text is practically never valid UTF-8), and
    a declared charset that fails is still used, with replacement characters. Never raises on
    undecodable bytes. Reads no settings.

    Raises TypeError if ``body`` is not bytes-like, ValueError if ``encoding`` is not a known
    encoding label.
    """
    if isinstance(body, (bytearray, memoryview)):
        body = bytes(body)
    if not isinstance(body, bytes):
        raise TypeError(
            f"body must be bytes, got {type(body).__name__}; pass response.body "
            "(or give already decoded text to extract())"
        )
    explicit = None
    if encoding is not None:
        if not isinstance(encoding, str):
            raise TypeError(f"encoding must be a str or None, got {type(encoding).__name__}")
        explicit = _resolve(encoding)
        if explicit is None:
            raise ValueError(
                f"encoding={encoding!r} is not a known encoding label; use a name such as "
                "'utf-8' or 'gbk', or None to detect it"
            )
    if len(body) > _MAX_HTML_BYTES:
        body = body[:_MAX_HTML_BYTES]

    bom_encoding, bom = read_bom(body)
    if bom_encoding is not None:
        enc = _resolve(bom_encoding) or "utf-8"
        return body[len(bom or b"") :].decode(enc, "replace"), enc
    if explicit is not None:
        return body.decode(explicit, "replace"), explicit

    declared = None
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    if content_type:
        declared = _resolve(http_content_type_encoding(content_type))
    if declared is None:
        declared = html_body_declared_encoding(body)
        if declared is not None and _is_utf16_or_32(declared):
            declared = "utf-8"  # a meta tag in ASCII bytes cannot really mean UTF-16/32
    if declared is not None:
        if declared != "utf-8" and not body.isascii():
            text = _decodes_strictly(body, "utf-8")
            if text is not None:
                return text, "utf-8"
        return body.decode(declared, "replace"), declared

    for enc in _SNIFFED:
        text = _decodes_strictly(body, enc)
        if text is not None:
            return text, enc
    # A page cut in the middle of a character, or with a stray byte, is still UTF-8 or GB18030
    # if (almost) all its other non-ASCII bytes decode; cp1252 text fails on most of them.
    non_ascii = len(body) - len(body.translate(None, _HIGH_BYTES))
    for enc in _SNIFFED:
        text = body.decode(enc, "replace")
        errors = text.count("\ufffd")
        if errors <= _MAX_SNIFF_ERRORS and errors * _SNIFF_ERROR_RATIO <= non_ascii:
            return text, enc
    return body.decode("cp1252", "replace"), "cp1252"


_SCRIPT_START_BYTES_RE = re.compile(rb"<(script|style)\b")


def _strip_scripts_bytes(body: bytes) -> bytes:
    """``body`` without its <script>/<style> elements, so that a page with a huge inline script
    keeps its text within the decoding cut (ASCII-compatible encodings; UTF-16 pages are cut as
    they are). Linear: each element's end is found with ``bytes.find``."""
    if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return body
    lower = body.lower()
    out: list[bytes] = []
    pos = 0
    while True:
        match = _SCRIPT_START_BYTES_RE.search(lower, pos)
        if match is None:
            out.append(body[pos:])
            break
        out.append(body[pos : match.start()])
        end = lower.find(b"</" + match.group(1), match.end())
        if end < 0:
            break
        pos = end
    return b" ".join(out)


# --------------------------------------------------------------------------- tree walk

# Never text: skipped in both modes (with their content; their tail text is kept). Not <head>:
# libxml2 puts the whole <body> inside <head> after an unknown tag there (<sohu_cms_include>).
_INVISIBLE = frozenset(
    "title script style noscript template svg math canvas object embed iframe frame frameset "
    "select datalist option optgroup textarea button input audio video source track map area "
    "param link meta base".split()
)
# Page chrome: also skipped in main-content mode.
_CHROME_TAGS = frozenset("nav aside footer header menu dialog figure figcaption".split())
# Tags that start a new text block.
_BLOCK = frozenset(
    "address article aside blockquote body caption center dd details dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html legend li main menu nav "
    "ol p pre section summary table tbody td tfoot th thead tr ul br".split()
)

# Elements whose class/id can make them page chrome: block-level ones but <body> and <html>.
_CLASS_CHROME_TAGS = _BLOCK - {"body", "html", "br"}

# class/id words of page chrome (substrings: long words; whole tokens: short ones).
_NEGATIVE_RE = re.compile(
    r"sidebar|side-bar|footer|breadcrumb|crumbs|comment|navbar|navigation|menu|share|sharing|"
    r"social|related|recommend|advert|sponsor|banner|popup|modal|cookie|newsletter|subscribe|"
    r"copyright|pagination|pager|disqus|masthead|toolbar|widget|promo|outbrain|taboola|caption|"
    r"gallery|slideshow|carousel|"
    r"(?:^|[\s_-])(?:nav|ad|ads|adv|tags?|foot|header|hd|login|signup|rss|links?|"
    r"topbar|bottom|print|hidden|hide)(?:$|[\s_\d-])"
)
# An element with such a class/id that holds this many <p>/<br> is a wrapper of the page, not chrome
# ("penci_sidebar", "header-style-2" on a container): it is walked, and link density decides.
_WRAPPER_PARAGRAPHS = 5

# class/id string -> whether it matches: bounded in entries and characters (long generated
# class strings cannot grow them without bound).
_NEGATIVE_CACHE = SizedCache(50_000, 4 << 20)
_DISPLAY_NONE_RE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_ENTITY = etree.Entity
_WS_RE = re.compile(r"\s+")
# Han, kana and CJK symbols (。、「」): scripts written without spaces between words. Not the
# full-width forms (U+FF00-FFEF): a full-width letter or digit is a Latin letter or digit in
# another width (NFKC maps it back), and "Ｋｉｍ Ｊｏｎｇ" keeps its spaces like "Kim Jong".
_CJK = r"\u2e80-\u9fff\uf900-\ufaff"
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
_CJK_CHAR_RE = re.compile(rf"[{_CJK}\uac00-\ud7af]")  # + Hangul: dense scripts
# What weighs 3 in a text with Han (or Hangul): those characters, and punctuation of either width.
_DENSE_RE = re.compile(rf"[{_CJK}\uac00-\ud7af{_ANY_PUNCT}]")
_DENSE_RUN_RE = re.compile(rf"{_DENSE_RE.pattern}+")  # removing runs removes the same characters
# Full-width letters and digits: a block with one is read in NFKC (see _fold).
_FULL_WIDTH_ALNUM_RE = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
# Sentence punctuation, full-width too (the block signals below accept both widths).
_PUNCT_RE = re.compile(r"[.,;:!?，。；：！？、．]")
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*>", re.IGNORECASE)
# The CleanEval corpus format (<text id=URL title=.. encoding=..>page</text>).
_CLEANEVAL_RE = re.compile(r"^\s*<text\s+id=[^>]*>", re.IGNORECASE)
_SCRIPT_START_RE = re.compile(r"<(script|style)\b")


# class/id words of metadata lines (byline, dateline, counters): whole tokens, or these substrings.
_META_CLASS_RE = re.compile(
    r"byline|dateline|timestamp|pubdate|publishdate|postmeta|post-meta|entry-meta|article-meta|"
    r"postinfo|post-info|article-info|view-count|viewcount|"
    r"(?:^|[\s_-])(?:meta|info|date|datetime|time|stats|counter|views?|author)(?:$|[\s_\d-])"
)
_META_CACHE = SizedCache(50_000, 4 << 20)


def _cached_search(cache: SizedCache, pattern: re.Pattern[str], attrs: str) -> bool:
    """Whether ``pattern`` matches the lower-cased class/id string ``attrs``; class names repeat
    across the pages of a site, so the answers are kept (in a bounded cache)."""
    found = cache.get(attrs)
    if found is None:
        found = pattern.search(attrs.lower()) is not None
        cache.put(attrs, found)
    return found


def _is_meta_element(el, tag: str) -> bool:
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
        meta = _cached_search(_META_CACHE, _META_CLASS_RE, attrs)
    # "article-info" around the whole story: a wrapper, not a metadata line.
    return meta and not _wraps_paragraphs(el)


def _wraps_paragraphs(el) -> bool:
    """Whether ``el`` holds at least ``_WRAPPER_PARAGRAPHS`` <p>/<br>: a page wrapper, not chrome."""
    for count, _ in enumerate(el.iterdescendants("p", "br"), 1):
        if count >= _WRAPPER_PARAGRAPHS:
            return True
    return False


def _fold(text: str) -> str:
    """``text`` as the block signals read it: in NFKC if it has full-width letters or digits.

    Full-width punctuation, common in Chinese, is left alone (NFKC on every Chinese block would
    cost a fifth of the extraction time): the signals count it like its ASCII counterpart.
    """
    if text.isascii() or _FULL_WIDTH_ALNUM_RE.search(text) is None:
        return text
    return unicodedata.normalize("NFKC", text)


def _weight(text: str) -> int:
    """Weight of folded text: a Han character carries about as much as a short Latin word (3).

    In text with Han (or Hangul) characters, punctuation weighs 3 too, whether written
    full-width (as usual in Chinese) or half-width: a full-width copy of a page weighs what the
    original weighs.
    """
    size = len(text)
    if text.isascii() or _CJK_CHAR_RE.search(text) is None:
        return size
    return 3 * size - 2 * len(_DENSE_RUN_RE.sub("", text))


class _Block:
    __slots__ = ("base", "flags", "links", "meta", "norm", "owner", "teaser", "text", "weight")

    def __init__(self, text: str, links: int, owner: int, meta: int = 0, flags: int = 0) -> None:
        self.text = text
        # The block's signals (weight, punctuation, boilerplate and metadata patterns) are read on
        # its folded form and count punctuation of both widths alike, so that a full-width copy
        # of a page picks the same blocks.
        self.norm = _fold(text)
        self.links = links
        self.meta = meta  # characters inside <time> / metadata-class elements
        self.owner = owner
        self.flags = flags  # _IN_CHROME_TAG | _IN_CHROME_CLASS
        self.weight = _weight(self.norm)
        self.base = -2  # _classify_base, computed on first use
        self.teaser = False


#: Block flags: the block sits inside a page-chrome tag (nav, aside, footer, ...: dropped by main
#: content) or inside an element whose class/id says chrome (dropped unless the class/id rules are off).
_IN_CHROME_TAG, _IN_CHROME_CLASS = 1, 2

#: Elements walked before the walk checks its time budget again.
_BUDGET_STEP = 2048


class _Budget(Exception):
    """The walk ran past its deadline ("budget") or its block cap ("large")."""


class _Walker:
    """The single pass over the tree: every visible text block with its features (length,
    weight, link and metadata characters, the element that owns it, whether it is inside page
    chrome), plus each element's parent and subtree end. Decisions are made afterwards, over the
    block sequence alone (:func:`_main_blocks`), so that this pass runs once per page."""

    def __init__(self, deadline: float | None = None) -> None:
        self.blocks: list[_Block] = []
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

    def flush(self) -> None:
        if not self.pieces:
            return
        text = " ".join("".join(self.pieces).split())  # = _WS_RE.sub(" ", ...).strip(): same \s
        self.pieces = []
        if text:
            if " " in text and not text.isascii():
                text = _CJK_SPACE_RE.sub("", text)
            size = len(text)
            self.blocks.append(_Block(text, min(self.links, size), self.owner, min(self.meta, size), self.flags))
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
        """Raise :class:`_Budget` past the deadline, or past :data:`MAX_BLOCKS` blocks (checked every
        few thousand elements, so that its cost does not show)."""
        self.next_check = len(self.parent) + _BUDGET_STEP
        if len(self.blocks) > MAX_BLOCKS:
            raise _Budget("large")
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Budget("budget")

    def chrome(self, el, tag: str) -> int:
        """The chrome flag an element adds (0 if none); -1 for an invisible element (skipped with
        its content)."""
        if tag in _INVISIBLE:
            return -1
        flag = _IN_CHROME_TAG if tag in _CHROME_TAGS else 0
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
            if _cached_search(_NEGATIVE_CACHE, _NEGATIVE_RE, attrs) and not _wraps_paragraphs(el):
                flag |= _IN_CHROME_CLASS
        return flag

    def walk_native(self, root) -> bool:
        """:meth:`walk` of ``root`` by the native core (:func:`_native_walk`): the same blocks
        (classified: :func:`_classify_base`), element numbering, landmark and stops. False (counted there) when it cannot run: not
        installed, an lxml it was not verified on, a tree it does not handle."""
        remaining = None if self.deadline is None else self.deadline - time.perf_counter()
        result = _native_walk(root, remaining, MAX_BLOCKS, _BUDGET_STEP)
        if result is None:
            return False
        if result[0] != "ok":
            raise _Budget(result[0])
        blocks, self.parent, self.end, self.landmark, self.next_check = result[1:]
        new = _Block.__new__
        for text, links, owner, meta, flags, weight, base, teaser in blocks:
            if weight < 0:  # full-width letters or digits: folded (NFKC) and classified here
                self.blocks.append(_Block(text, links, owner, meta, flags))
                continue
            block = new(_Block)
            block.text = block.norm = text
            block.links = links
            block.meta = meta
            block.owner = owner
            block.flags = flags
            block.weight = weight
            block.base = base  # _classify_base's, natively
            block.teaser = teaser
            self.blocks.append(block)
        return True

    def walk(self, el, parent: int, in_link: bool, depth: int) -> None:
        parents = self.parent
        idx = len(parents)
        if idx >= self.next_check:
            self.check_budget()
        parents.append(parent)
        self.end.append(0)
        tag = el.tag
        block = tag in _BLOCK
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


# --------------------------------------------------------------------------- main content

_GOOD, _SHORT, _LINKS, _META = 2, 1, 0, -1
_SENTENCE_END = frozenset(".!?。！？．\"”’'＂＇")
_ELLIPSES = ("...", "…", "．．．", "更多>>", "详细>>", "更多＞＞", "详细＞＞", "more", "More")

# Short lines that are page furniture wherever they appear (start of the line) ...
_BOILERPLATE_RE = re.compile(
    r"^(?:copyright|©|[(（]c[)）]|all rights reserved|版权所有|责任编辑|编辑[:：]|分享到|分享至|"
    r"相关(?:链接|新闻|阅读|文章|报道|专题)|上一篇|下一篇|上一页|下一页|打印本页|关闭窗口|返回顶部|"
    r"返回首页|【?(?:打印|关闭|字体|收藏|评论|推荐)|点击(?:这里|此处)|share this|share on|"
    r"related (?:articles|posts|stories|content)|advertisement|read more|sign up|subscribe|"
    r"follow us|click here|posted in|filed under|tags?[:：])",
    re.IGNORECASE,
)
# ... or anywhere in a block of modest size (copyright lines, cookie banners).
_BOILERPLATE_ANY_RE = re.compile(
    r"all rights reserved|版权所有|copyright ©|©\s*\d{4}|"
    r"\bcookies?\b.{0,300}\b(?:consent|privacy|polic(?:y|ies)|accept)",
    re.IGNORECASE | re.DOTALL,
)


def _boilerplate_any(text: str) -> bool:
    """``_BOILERPLATE_ANY_RE.search(text) is not None``, skipping the search when ``text`` holds
    none of the strings that each of its alternatives needs (most blocks)."""
    if not text.isascii() and _ASCII_LETTER_LOOKALIKE_RE.search(text) is not None:
        return _BOILERPLATE_ANY_RE.search(text) is not None
    low = text.lower()
    if "©" in text or "版权所有" in text or "all rights reserved" in low or "cookie" in low:
        return _BOILERPLATE_ANY_RE.search(text) is not None
    return False


#: The content region grows to an ancestor at most this many levels up (wrappers with no more
#: good text do not count) that holds at least this many times its good text.
_EXTEND_RATIO = 1.5
_EXTEND_LEVELS = 3
#: A block with 33-60% link text is a link list unless it is a sentence at least this heavy.
_LINKED_SENTENCE_WEIGHT = 150
#: Blocks lighter than this can be metadata lines (bylines, datelines, counters) ...
_META_MAX_WEIGHT = 200
#: ... if at least this share of their characters is inside <time> / metadata-class elements ...
_META_MARKUP_SHARE = 0.5
#: ... or if at most this share of their words is not a date, time, number or metadata word,
#: and at most this many words (Latin script) / characters (Han) are not.
_META_OTHER_SHARE = 1 / 3
_META_OTHER_WORDS = 3
_META_OTHER_HAN = 6

# Words that make a line metadata, besides a year: they "say" it ...
_META_KEYWORDS = frozenset(
    "views viewed reads comments likes shares replies posted published updated modified edited ago".split()
)
# ... and words that are metadata too but also common in lines that are not: they only count.
_META_WORDS = _META_KEYWORDS | frozenset(
    "by on at and last view read comment like share reply written min mins minute minutes hour "
    "hours day days week weeks month months year years am pm utc gmt est edt cst cdt pst pdt bst "
    "cet cest jst january february march april june july august september october november "
    "december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday "
    "thursday friday saturday sunday mon tue tues thu thur thurs fri".split()
)
# Han metadata words that say it (their characters count as metadata) ...
_META_HAN_KEYWORD_RE = re.compile(r"阅读|浏览|评论|点击|发布|更新|来源|作者|时间|日期|发表|次数")
# ... dates and times written with 年月日 (a number with its unit: one token), weekdays.
_META_HAN_DATE_RE = re.compile(r"\d+\s*[年月日号时点分秒次]|星期[一二三四五六日天]|周[一二三四五六日]|上午|下午")
# Han and kana one by one, numbers with their separators ("12,877", "2024-09-14", "08:15"),
# words of other scripts; punctuation (full-width too) is no token.
_HAN = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_META_TOKEN_RE = re.compile(rf"[{_HAN}]|\d[\d,.:/\-，．：／－]*|[^\W\d_{_HAN}]+")
# A year (1900-2099, not "1999.99") or a numeric date: a line with one says it is metadata.
_YEAR_RE = re.compile(r"(?:19|20)\d\d(?!\d|[.,．，]\d)|\d{1,4}[-/.－／．]\d{1,2}[-/.－／．]\d{1,4}")


# Cheap first test: a line with none of these cannot say it is metadata (most short lines).
_META_SAYS_RE = re.compile(
    "|".join([_YEAR_RE.pattern, *sorted(_META_KEYWORDS), _META_HAN_KEYWORD_RE.pattern]), re.IGNORECASE
)


_DIGIT_RE = re.compile(r"\d")
_META_KEYWORDS_SORTED = tuple(sorted(_META_KEYWORDS))
# The only non-ASCII characters that match an ASCII letter case-insensitively in ``re`` or whose
# lower() holds one (İ ı ſ K): without them, a keyword is in ``text.lower()`` exactly when
# _META_SAYS_RE's keyword alternatives match ``text``.
_ASCII_LETTER_LOOKALIKE_RE = re.compile("[\u0130\u0131\u017f\u212a]")


def _meta_says(text: str, low: str) -> bool:
    """``_META_SAYS_RE.search(text) is not None`` (``low`` is ``text.lower()``), in a fraction of
    its time: without a digit only its keywords can match, and they are looked up as substrings."""
    if _DIGIT_RE.search(text) is not None:
        return _META_SAYS_RE.search(text) is not None
    if not text.isascii():
        if _ASCII_LETTER_LOOKALIKE_RE.search(text) is not None:
            return _META_SAYS_RE.search(text) is not None
        if _META_HAN_KEYWORD_RE.search(text) is not None:
            return True
    for word in _META_KEYWORDS_SORTED:
        if word in low:
            return True
    return False


def _is_meta_text(text: str) -> bool:
    """Whether a short line is mostly dates, times, numbers and words like views/posted/发布.

    It must also hold a word that says so (views, updated, 发布...) or a year, so that a price
    list, a bare time or "Tue - Sat 4PM" (opening hours) is not metadata.
    """
    low = text.lower()
    if not _meta_says(text, low):
        return False
    meta = 0
    said = False
    if not low.isascii():
        found = _META_HAN_KEYWORD_RE.findall(low)
        if found:
            said = True
            meta += sum(len(m) for m in found)
            low = _META_HAN_KEYWORD_RE.sub(" ", low)
        found = _META_HAN_DATE_RE.findall(low)
        if found:
            said = said or any(_YEAR_RE.match(m) for m in found)
            meta += len(found)
            low = _META_HAN_DATE_RE.sub(" ", low)
    other = other_words = other_han = 0
    for token in _META_TOKEN_RE.findall(low):
        if token[0].isdigit():
            meta += 1
            said = said or _YEAR_RE.match(token) is not None
        elif token in _META_WORDS:
            meta += 1
            said = said or token in _META_KEYWORDS
        else:
            other += 1
            if _CJK_CHAR_RE.match(token):  # one Han / kana character (or a Hangul word)
                other_han += 1
            else:
                other_words += 1
    if not said:
        return False
    return (
        other <= _META_OTHER_SHARE * (meta + other)
        and other_words <= _META_OTHER_WORDS
        and other_han <= _META_OTHER_HAN
    )


#: Share of a block's score credited to its element, parent, grandparent, ... (readability).
_DECAY = (1.0, 1.0, 0.5, 1 / 9, 1 / 12, 1 / 15)


def _classify_base(block: _Block) -> int:
    """_GOOD (content-like), _SHORT (neutral), _LINKS (link list / boilerplate) or _META, before
    the page-level teaser and relaxed rules (see :func:`_kind`); sets ``block.teaser``."""
    weight = block.weight
    text = block.norm
    density = block.links / len(block.text)  # both counted on the text as written
    punct = len(_PUNCT_RE.findall(text))
    sentence = text[-1] in _SENTENCE_END
    if density > 0.6 or (density > 0.33 and (punct < 2 or (weight < _LINKED_SENTENCE_WEIGHT and not sentence))):
        return _LINKS
    if weight < 1000 and (_boilerplate_any(text) or (weight < 200 and _BOILERPLATE_RE.match(text))):
        return _LINKS
    if text[0] == "<" and text[-1] == ">":
        return _LINKS  # markup shown as text (<noscript> in <head>)
    if weight < _META_MAX_WEIGHT and (
        (block.meta >= _META_MARKUP_SHARE * len(block.text) and not (sentence and punct >= 2)) or _is_meta_text(text)
    ):
        return _META  # byline, dateline, view counter: differs between copies of one article
    block.teaser = weight < 600 and text.endswith(_ELLIPSES)
    if weight >= 160 or (weight >= 60 and punct >= 2) or (weight >= 100 and sentence):
        return _GOOD
    return _SHORT


def _kind(block: _Block, teasers: bool, relaxed: bool = False) -> int:
    """The block's class on its page: a teaser of another article (a block cut with "..." on a
    page with several) is _SHORT; ``relaxed`` (a page whose content is a table or a list of short
    lines): every other block that is not a link list, boilerplate or metadata is _GOOD."""
    base = block.base
    if base == -2:
        base = block.base = _classify_base(block)
    if base <= _LINKS:
        return base
    if teasers and block.teaser:
        return _SHORT
    return _GOOD if relaxed else base


def _main_blocks(walker: _Walker, blocks: list[_Block], relaxed: bool = False) -> list[_Block]:
    """The content region's blocks among ``blocks`` (a subsequence of ``walker.blocks``)."""
    if not blocks:
        return []
    n = len(walker.parent)
    parent = walker.parent
    good = [0] * n  # good text in each element's subtree
    score = [0.0] * n
    # Several blocks cut short with "..." are a list of teasers of other articles; one is more
    # likely a paywall's cut.
    teasers = sum(1 for b in blocks if b.norm.endswith(_ELLIPSES)) >= 2
    kinds = [_kind(block, teasers, relaxed) for block in blocks]
    for block, kind in zip(blocks, kinds):
        value: float
        if kind == _GOOD:
            value = block.weight - block.links
            good[block.owner] += value
        elif kind == _LINKS:
            value = -block.weight
        else:
            value = -block.weight / 4
        # Readability-style locality: a block counts fully for its element and that element's
        # parent, half for the grandparent, little beyond. A list of teasers, each in its own
        # small box, then scores less than an article whose paragraphs are siblings.
        i = block.owner
        for decay in _DECAY:
            score[i] += value * decay
            if not i:
                break
            i = parent[i]
    for i in range(n - 1, 0, -1):  # children come after their parent in document order
        good[parent[i]] += good[i]
    best, best_score = 0, None
    for i in range(n):
        if good[i] and (best_score is None or score[i] > best_score):
            best, best_score = i, score[i]
    if best_score is None:
        return []
    # The best-scoring element can hold only part of the article: one <p> of a table-layout page
    # whose paragraphs sit in a <font> beside link lists, one of several body columns of a news
    # page. Widen it while a near ancestor has much more good text (not up to <body>, which would
    # bring in the teasers of other articles).
    while best:
        up = parent[best]
        levels = 1
        while up and good[up] == good[best]:
            up = parent[up]
            levels += 1
        if levels <= _EXTEND_LEVELS and good[up] >= _EXTEND_RATIO * good[best]:
            best = up
        else:
            break
    lo, hi = best, walker.end[best]
    inside = [(b, k) for b, k in zip(blocks, kinds) if lo <= b.owner < hi]
    # Trim leading and trailing non-good blocks (bylines, "related" lists, share bars).
    first = next((i for i, (_, k) in enumerate(inside) if k == _GOOD), None)
    if first is None:
        return []
    last = max(i for i, (_, k) in enumerate(inside) if k == _GOOD)
    return [b for b, k in inside[first : last + 1] if k > _LINKS]


# --------------------------------------------------------------------------- title

# " - ", " | ", " :: ", "--", "——", "|", a bare "-" between Han characters ("新闻-搜狐"), and "_"
# beside a space or a character outside ASCII ("新闻_搜狐", "iPhone15_新浪"), not inside an ASCII
# identifier ("CMAKE_BUILD_TYPE — CMake" is "CMAKE_BUILD_TYPE", not "CMAKE").
_TITLE_SEP_RE = re.compile(
    rf"\s+[-|–—·:»«]{{1,2}}\s+|\s*(?:-{{2,}}|——|[|｜])\s*|(?<=[{_CJK}])-(?=[{_CJK}])"
    r"|\s+_{1,2}\s*|_{1,2}\s+|(?<=[^\x00-\x7f])_{1,2}\s*|_{1,2}(?=[^\x00-\x7f])"
)


def _clean_title(title: str, headings: list[str] = ()) -> str:  # type: ignore[assignment]
    """The page's own title: of the parts of ``title`` (split at " - ", " | ", " — ", "_"...),
    the first that a heading of the page repeats ("Foo — Django 3.2 documentation" with <h1>Foo</h1>:
    "Foo", not the site name, also when the site's name is a heading too, as mdBook's menu title
    is; a part under 4 characters as a whole word: "u64 - Rust" with <h1>Primitive Type u64</h1>,
    only where no longer part is repeated: "A - Keywords - Book" with <h2>Appendix A: Keywords</h2>
    is "Keywords"), else the heaviest one."""
    title = _WS_RE.sub(" ", title).strip()
    parts = [p.strip() for p in _TITLE_SEP_RE.split(title)]
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return title
    repeated = [part for part in parts if any(_repeats(part.casefold(), heading) for heading in headings)]
    if repeated:  # the first, a part of 4 characters or more before a shorter one ("A - Keywords")
        return next((part for part in repeated if len(part) >= 4), repeated[0])
    return max(parts, key=lambda part: _weight(_fold(part)))  # first of equals: max() keeps the first maximum


def _repeats(part: str, heading: str) -> bool:
    """Whether a case-folded title part and heading say the same: equal, one inside the other
    (4 characters or more), or a shorter part a whole word of the heading."""
    if len(part) >= 4:
        return part in heading or heading in part
    return part == heading or re.search(rf"(?<!\w){re.escape(part)}(?!\w)", heading) is not None


# A heading's permalink sign (Sphinx "¶", "#", "§") is no part of its text.
_HEADING_MARKS = " \t\n¶#§"


def _heading(text: str) -> str:
    """A heading's itertext as :func:`_clean_title` compares it ("" when it has no text)."""
    return _WS_RE.sub(" ", text).strip(_HEADING_MARKS).casefold()


def _headings(root) -> list[str]:
    """The first <h1> (else <h2>) texts of the page's first <main>, else of the whole page,
    case-folded, without permalink signs: the page's own headings, not a header's site name
    (mdBook's menu-bar <h1>, a theme's site-title <h1> above an <h2> article title)."""
    main = next(root.iter("main"), None)
    return (_first_headings(main) if main is not None else None) or _first_headings(root)


def _first_headings(root) -> list[str]:
    out = []
    for tag in ("h1", "h2"):
        for el in root.iter(tag):
            text = _heading("".join(el.itertext()))
            if text:
                out.append(text)
            if len(out) >= 3:
                break
        if out:
            break
    return out


def _find_title(root, native: bool = True) -> str:
    """The page's title: its <title>, else its og:title / twitter:title, else its first <h1>
    (natively read from the tree when the native walk runs: ``HtmlWalker.title_parts``)."""
    parts = _native_title_parts(root) if native else None
    if parts is None:
        return _find_title_python(root)
    title, meta, headings, h1 = parts
    for text in (title, meta):
        if text is not None and text.strip():
            return _clean_title(text, [_heading(h) for h in headings])
    return _WS_RE.sub(" ", h1).strip() if h1 is not None else ""


def _find_title_python(root) -> str:
    for el in root.iter("title"):
        text = "".join(el.itertext())
        if text.strip():
            return _clean_title(text, _headings(root))
        break
    for el in root.iter("meta"):
        if (el.get("property") or el.get("name") or "").lower() in ("og:title", "twitter:title"):
            content = el.get("content")
            if content and content.strip():
                return _clean_title(content, _headings(root))
    for el in root.iter("h1"):
        text = "".join(el.itertext())
        if text.strip():
            return _WS_RE.sub(" ", text).strip()
    return ""


# --------------------------------------------------------------------------- public API

_LOCAL = threading.local()  # an lxml parser must not be shared between threads


def _parser() -> etree.HTMLParser:
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = etree.HTMLParser(
            encoding="utf-8",
            recover=True,
            remove_comments=True,
            remove_pis=True,
            no_network=True,
            huge_tree=True,  # depth up to 2048 (then _DEEP); text is capped by MAX_HTML_CHARS
        )
    return parser


class _TooDeep(Exception):
    """libxml2 stopped at its depth limit: the rest of the page is missing from the tree."""


def _prepare(html: str) -> str:
    html = _XML_DECL_RE.sub("", html, count=1)
    html = _CLEANEVAL_RE.sub("", html, count=1)
    if "\x00" in html:
        html = html.replace("\x00", "")
    if len(html) > MAX_HTML_CHARS:
        html = _cut(html)
    return html


def _parse(html: str):
    """The root element of prepared ``html``, or None if there is nothing to parse. Raises
    :class:`_TooDeep` when libxml2 gave up at its nesting limit (it keeps only what came before)."""
    if not html.strip():
        return None
    parser = _parser()
    try:
        root = etree.fromstring(html.encode("utf-8", "replace"), parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        root = None
    for error in parser.error_log:
        if error.type_name == "ERR_RESOURCE_LIMIT" or "Excessive depth" in error.message:
            raise _TooDeep
    return root


_INVISIBLE_ELEMENTS = "script|style|noscript|template|svg|math|textarea|select|object|iframe"
_INVISIBLE_BLOCK_RE = re.compile(rf"<({_INVISIBLE_ELEMENTS})\b.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)
# The same and <title>, whose text is no part of the visible text.
_INVISIBLE_TITLE_RE = re.compile(rf"<({_INVISIBLE_ELEMENTS}|title)\b.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*>|<![^>]*>")


def _flat_tag(match: re.Match[str]) -> str:
    tag = (match.group(2) or "").lower()
    if tag in ("title", "a"):
        return match.group()
    return "<br>" if tag in _BLOCK else ""


def _flatten(html: str) -> str:
    """``html`` without nesting: invisible elements removed, block tags turned into <br>, every
    other tag but <title> and <a> removed (for pages nested deeper than libxml2 goes)."""
    return _TAG_RE.sub(_flat_tag, _INVISIBLE_BLOCK_RE.sub(" ", html))


def _cut(html: str) -> str:
    """The first MAX_HTML_CHARS of ``html`` after removing <script>/<style> blocks (linear time)."""
    lower = html.lower()
    out: list[str] = []
    size = pos = 0
    while size < MAX_HTML_CHARS:
        match = _SCRIPT_START_RE.search(lower, pos)
        if match is None:
            out.append(html[pos:])
            break
        out.append(html[pos : match.start()])
        size += match.start() - pos
        end = lower.find("</" + match.group(1), match.end())
        if end < 0:
            break
        pos = end
    return " ".join(out)[:MAX_HTML_CHARS]


def _flat_text(html: str) -> str:
    """All text of ``html`` by regular expressions alone, one block per line (linear, no tree:
    the fallback of a page that runs past its time budget or element cap)."""
    text = _INVISIBLE_TITLE_RE.sub(" ", html)
    text = _BLOCK_TAG_RE.sub("\n", text)
    text = _unescape(_TAG_RE.sub("", text))
    text = _BLANKS_RE.sub(" ", text)
    return _LINE_BREAK_RE.sub("\n", text).strip()


_BLOCK_TAG_RE = re.compile(r"</?(?:" + "|".join(sorted(_BLOCK, key=len, reverse=True)) + r")\b[^>]*>", re.IGNORECASE)
_BLANKS_RE = re.compile(r"[^\S\n]+")
_LINE_BREAK_RE = re.compile(r" ?\n[\s]*")
_LONG_DECIMAL_REF_RE = re.compile(r"&#([0-9]{8,})")


def _short_decimal(match: re.Match[str]) -> str:
    digits = match.group(1).lstrip("0") or "0"
    return "&#" + (digits if len(digits) <= 7 else "99999999")


def _unescape(text: str) -> str:
    """``html.unescape(text)``, where a decimal reference too long for ``int()`` (4,300 digits)
    reads as the number it is: any of 8 digits or more but leading zeros is no code point."""
    if "&#" in text:
        text = _LONG_DECIMAL_REF_RE.sub(_short_decimal, text)
    return htmllib.unescape(text)


_TITLE_RE = re.compile(r"<title\b[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)


def _flat_document(html: str, used: str | None, method: str, native: bool = True) -> Document:
    """The :class:`Document` of :func:`_flat_text` (natively when the core is installed: the same
    title and text, ``native/src/flat.rs``)."""
    flat = native_flat_text() if native else None
    title: str | None = None
    if flat is not None:
        try:
            title, text = flat.document(html)
        except UnicodeEncodeError:  # lone surrogates: not UTF-8, Python's path takes them
            flat = None
    if flat is None:
        match = _TITLE_RE.search(html)
        title = _unescape(match.group(1)) if match else None
        text = _flat_text(html)
    title = _clean_title(title) if title is not None else ""
    return Document(title=title, text=text, encoding=used, method=method, coverage=1.0, visible=text)


def _text_of(blocks: list[_Block]) -> str:
    return "\n".join(b.text for b in blocks)


def _weight_of(blocks: list[_Block]) -> int:
    return sum(b.weight for b in blocks)


def extract(
    html: str | bytes,
    *,
    url: str | None = None,
    encoding: str | None = None,
    content_type: str | bytes | None = None,
    main_content: bool = True,
    time_budget: float | None = None,
    native: bool = True,
) -> Document:
    """Extract the title and the main text (or all visible text) of a page.

    ``html`` is the page as downloaded (``bytes``: decoded with :func:`decode_html` using
    ``encoding`` and ``content_type``, the HTTP ``Content-Type`` header value) or as text.
    ``url`` is accepted for callers' convenience and currently unused. With ``main_content``
    (the default) the text is the page's main content without navigation, sidebars, footers,
    link lists, boilerplate lines and short metadata lines (bylines, datelines, view and comment
    counters); a page whose content is a table or list of short lines gives those lines; when
    that region holds less than a quarter of the page's content-like text (a documentation page
    whose sections the scoring splits), the content-like text of the whole page is used
    (``method="page"``); below 50 characters, all visible text. Block selection is
    width-invariant (a full-width copy gives the same text after NFKC); the text is returned as
    written. ``main_content=False`` returns all visible text (no ``script``, ``style``,
    ``noscript``, ``template``, ``head`` or hidden elements). Paragraphs are separated by
    ``"\\n"``. Pages over :data:`MAX_HTML_CHARS` characters are cut after their scripts and
    styles are removed.

    Bounded: a page nested deeper than libxml2 parses (2048 levels) is flattened and parsed again
    (``method="deep"``); a page with more than :data:`MAX_ELEMENTS` elements, or whose walk runs
    past ``time_budget`` seconds (from the call), gives its text found by regular expressions alone
    (``method="large"`` / ``"budget"``). ``Document.method`` and ``Document.coverage`` say what
    was done. Reads no settings (callers map ``SIMHASH_*`` options to the arguments).

    ``native``: walk the tree with the native core when it is installed and verified for the
    running lxml (the same blocks as the Python walk; :func:`html_walk_status`); ``False``:
    the Python walk, the reference.

    Never raises on broken markup or binary junk: such input gives a Document with empty text.
    Raises TypeError if ``html`` is not str or bytes.
    """
    started = time.perf_counter()
    if isinstance(html, (bytearray, memoryview)):
        html = bytes(html)
    if isinstance(html, bytes):
        if len(html) > _MAX_HTML_BYTES:
            html = _strip_scripts_bytes(html)
        html, used = decode_html(html, encoding=encoding, content_type=content_type)
    elif isinstance(html, str):
        used = None
    else:
        raise TypeError(
            f"html must be str or bytes, got {type(html).__name__}; pass response.body "
            "(with content_type=response.headers.get('Content-Type')) or response.text"
        )
    html = _prepare(html)
    method = "main" if main_content else "all"
    if html.count("<") - html.count("</") > MAX_ELEMENTS:  # start tags: an upper bound of elements
        return _flat_document(html, used, "large", native)
    try:
        root = _parse(html)
    except _TooDeep:
        method = "deep"
        try:
            root = _parse(_flatten(html))
        except _TooDeep:  # cannot happen with <a> and <title> left, but never raise
            return _flat_document(html, used, "deep", native)
    if root is None:
        return Document(title="", text="", encoding=used, method="empty", coverage=0.0)
    title = _find_title(root, native)
    walker = _Walker(deadline=None if time_budget is None else started + time_budget)
    try:
        if not (native and walker.walk_native(root)):
            walker.walk(root, 0, False, 0)
        walker.flush()
        walker.check_budget()
        blocks = walker.blocks
        visible = _text_of(blocks)
        if not main_content:
            return Document(title=title, text=visible, encoding=used, method=method, coverage=1.0, visible=visible)
        chosen, found, content_like = _choose(walker)
    except _Budget as exc:
        return _flat_document(html, used, str(exc), native)
    total = _weight_of(blocks)
    taken = {id(b) for b in chosen}
    return Document(
        title=title,
        text=_text_of(chosen),
        encoding=used,
        method="deep" if method == "deep" else found,
        coverage=_weight_of(chosen) / total if total else 0.0,
        visible=visible,
        rest=_text_of([b for b in content_like if id(b) not in taken]),
    )


def _choose(walker: _Walker) -> tuple[list[_Block], str, list[_Block]]:
    """The decisions over the block sequence: the blocks that are the page's content, how they
    were found: "main" (the content region), "relaxed" (a table or list of short lines), "page"
    (all content-like blocks), "list" (an index page: link lists too), "visible" (all blocks),
    and all content-like blocks (what the change signal covers beside the content)."""
    blocks = walker.blocks
    landmarked = False
    if walker.landmark >= 0:
        # The page says where its content is (<main>, role="main": Sphinx, mdBook, rustdoc, most
        # current templates): text outside it (a footer paragraph, a licence) is never content.
        lo, hi = walker.landmark, walker.end[walker.landmark]
        inside = [b for b in blocks if lo <= b.owner < hi]
        if _chars(inside) >= _MIN_MAIN_CHARS:
            blocks, landmarked = inside, True
    content = [b for b in blocks if not b.flags]
    main = _main_blocks(walker, content)
    found = "main"
    walker.check_budget()
    if _chars(main) < _RETRY_CHARS:
        # The content may sit in an element whose class/id looks like chrome.
        retry = _main_blocks(walker, [b for b in blocks if not b.flags & _IN_CHROME_TAG])
        if _chars(retry) > _chars(main):
            main = retry
    if _chars(main) < _RELAXED_CHARS and _chars(main) < _RELAXED_SHARE * _chars(blocks):
        # Little content-like text on a page with much text: the content may be a table or
        # a list of short lines (a standings table, a timetable). Take the region with the most
        # text that is neither links, boilerplate nor metadata, if it holds what was found
        # (else it is another part of the page: a list beside a short article).
        walker.check_budget()
        relaxed = _main_blocks(walker, content, relaxed=True)
        if _chars(relaxed) >= _RELAXED_GAIN * _chars(main) and {b.text for b in main} <= {b.text for b in relaxed}:
            main, found = relaxed, "relaxed"
    # The region holds too little of the page's content-like text (a documentation page whose
    # sections, definition lists and code the scoring splits; an index page): hashing that part
    # alone would let the rest of the page change, or differ, unseen. Take all of it instead.
    # Judged on content-like blocks (_GOOD: sentences, code), so that a short article beside a
    # long list of short lines (opening hours, a price list) keeps its own text.
    good = sum(b.weight for b in content if _kind(b, False) == _GOOD)
    content_like = [b for b in content if _kind(b, False) >= _SHORT]
    if sum(b.weight for b in main if _kind(b, False) == _GOOD) < _COVERAGE * good:
        main, found = content_like, "page"
    elif (
        landmarked
        and _weight_of(main) < _COVERAGE * _weight_of(content_like)
        and all(b.weight < _PARAGRAPH_WEIGHT for b in main)
    ):
        # Inside a <main> landmark the page is its content: an API reference page (Javadoc) is
        # summary lines and signatures, too short to count as sentences, around one line that
        # does ("Methods inherited from class a.b.C"). A region of no paragraph, under a quarter
        # of the landmark's content-like text, is a part the scoring split off, not the page's
        # content (a short article beside a longer list of short lines keeps its own text).
        main, found = content_like, "page"
    # An index or listing page: its content is its lists of links (a table of contents, an
    # alphabetical index), which every rule above leaves out as navigation. When what was found is
    # a small part of the page outside its chrome, the lists count too.
    weight, total = _weight_of(main), _weight_of(content)
    links: list[_Block] = []
    if weight < _LIST_SHARE * total:
        links = [b for b in content if _is_link_list(b)]
        listing = [b for b in content if _kind(b, False) >= _SHORT or _is_link_list(b)]
        # Mostly links: a short article beside a long list of short lines keeps its own text.
        if _weight_of(listing) > weight and 2 * _weight_of(links) > _weight_of(listing):
            main, found = listing, "list"
    # (the link lists, outside the region, can outweigh it only where the rest of the page does)
    if main and found in ("main", "relaxed") and total > 2 * weight:
        # A hub page: a chapter's short introduction beside its table of contents. Its lists stay
        # out of the fingerprint (the introduction is its key), but the change sketch covers the
        # lists that share the introduction's container (a sidebar's "most read" list does not):
        # a chapter that lost half its sections has changed.
        near = _container_links(walker, main, links or [b for b in content if _is_link_list(b)])
        if _weight_of(near) > weight:
            taken = {id(b) for b in near}
            content_like = [b for b in content if id(b) in taken or _kind(b, False) >= _SHORT]
    if _chars(main) < _MIN_MAIN_CHARS and _chars(walker.blocks) > _chars(main):
        main, found = walker.blocks, "visible"
    return main, found, content_like


def _container_links(walker: _Walker, main: list[_Block], links: list[_Block]) -> list[_Block]:
    """The blocks of ``links`` inside the parent of the smallest element that holds ``main``."""
    first, last = min(b.owner for b in main), max(b.owner for b in main)
    top = first
    while top and walker.end[top] <= last:
        top = walker.parent[top]
    top = walker.parent[top] if top else top
    return [b for b in links if top <= b.owner < walker.end[top]]


def _is_link_list(block: _Block) -> bool:
    """A block classed _LINKS for its links (not for boilerplate or markup shown as text)."""
    return block.base == _LINKS and block.links > 0.33 * len(block.text) and not _boilerplate_any(block.norm)


def _chars(blocks: list[_Block]) -> int:
    """Characters of the blocks' text joined with newlines (``len(_text_of(blocks))``)."""
    return sum(len(b.text) for b in blocks) + len(blocks) - 1 if blocks else 0


# --------------------------------------------------------------------------- the native counterparts
# (scrapy_simhash._native makes them from this module's tables and predicates; each is chosen here,
# once, and the Python code above is the reference and the fallback.)

#: (lxml major version, libxml2 major version) families whose struct layouts the native walk reads
#: (lxml's public ``struct LxmlElement``: ``PyObject_HEAD``, ``_doc``, ``_c_node``, unchanged since
#: lxml 2; libxml2's ``xmlNode`` / ``xmlAttr``, public ABI, stable within libxml2 2.x). Checked
#: against the headers of lxml 6.1.3 (libxml2 2.14.6), and the differential tests
#: (``tests/text/test_native_html.py``) run on whatever pair is installed, in CI on every push. Every
#: call also checks that the element's node points back to it (``_private``). On any other family
#: the Python walk runs. A family, not a release: a patch release of lxml must not turn the walk off.
HTML_VERIFIED = frozenset({(5, 2), (6, 2)})

#: Pages walked natively ("native") and by Python, with the reason ("python: <why>").
HTML_WALKS: Counter[str] = Counter()

_WALKER: Any = None
_WALKER_ERROR: str | None = None
_FLAT: Any = None
_NATIVE_LOCK = threading.Lock()


def _lxml_versions() -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(etree.LXML_VERSION), tuple(etree.LIBXML_VERSION)


def _negative_class(attrs: str) -> bool:
    return _cached_search(_NEGATIVE_CACHE, _NEGATIVE_RE, attrs)


def _meta_class(attrs: str) -> bool:
    return _cached_search(_META_CACHE, _META_CLASS_RE, attrs)


def _display_none(style: str) -> bool:
    return _DISPLAY_NONE_RE.search(style) is not None


def _boilerplate(text: str) -> bool:
    return _BOILERPLATE_RE.match(text) is not None


def html_walker() -> Any:
    """The shared native ``HtmlWalker``, or ``None`` (see :func:`html_walk_status`)."""
    global _WALKER, _WALKER_ERROR
    if _WALKER is None and _WALKER_ERROR is None:
        with _NATIVE_LOCK:
            if _WALKER is None and _WALKER_ERROR is None:
                lxml_version, libxml_version = _lxml_versions()
                if _native.module() is None:
                    _WALKER_ERROR = _walker_unavailable()
                elif (lxml_version[0], libxml_version[0]) not in HTML_VERIFIED:
                    _WALKER_ERROR = (
                        f"lxml {'.'.join(map(str, lxml_version))} with libxml2 {'.'.join(map(str, libxml_version))} "
                        "is not verified for it (extract.HTML_VERIFIED)"
                    )
                else:
                    _WALKER = _native.html_walker(
                        etree._Element,
                        block=_BLOCK,
                        invisible=_INVISIBLE,
                        chrome=_CHROME_TAGS,
                        wrapper_paragraphs=_WRAPPER_PARAGRAPHS,
                        negative_class=_negative_class,
                        meta_class=_meta_class,
                        display_none=_display_none,
                        punctuation=_PUNCT_RE.pattern,
                        sentence_end=_SENTENCE_END,
                        ellipses=_ELLIPSES,
                        meta_keywords=_META_KEYWORDS_SORTED,
                        meta_han_keywords=_native.literal_words(_META_HAN_KEYWORD_RE.pattern),
                        boilerplate_any=_boilerplate_any,
                        boilerplate=_boilerplate,
                        meta_text=_is_meta_text,
                    )
    return _WALKER


def _walker_unavailable() -> str:
    why = _native.unavailable() or ""
    return "the native core is not installed" if why.startswith("the native core") else f"the native core is not used ({why})"


def html_walk_status() -> str:
    """For the start-up line: "native HTML walk", or "Python HTML walk (<why>)"."""
    if html_walker() is not None:
        return "native HTML walk"
    return f"Python HTML walk ({_WALKER_ERROR})"


def _native_title_parts(root: Any) -> tuple[Any, ...] | None:
    """What :func:`_find_title` reads of ``root``'s tree, natively (``HtmlWalker.title_parts``);
    ``None`` when the Python reads must run."""
    walker = html_walker()
    if walker is None or type(root) is not etree._Element:
        return None
    return walker.title_parts(root)  # type: ignore[no-any-return]


def _native_walk(root: Any, remaining: float | None, max_blocks: int, step: int) -> tuple[Any, ...] | None:
    """The native walk of ``root`` (see ``HtmlWalker.walk``): ``("ok", ...)``, ``("large",)`` or
    ``("budget",)``; ``None`` when the Python walk must run (counted in :data:`HTML_WALKS`)."""
    walker = html_walker()
    if walker is None:
        HTML_WALKS[f"python: {_WALKER_ERROR}"] += 1
        return None
    if type(root) is not etree._Element:
        HTML_WALKS[f"python: not an lxml.etree._Element ({type(root).__name__})"] += 1
        return None
    result = walker.walk(root, remaining=remaining, max_blocks=max_blocks, step=step)
    if result[0] == "unsupported":
        HTML_WALKS[f"python: {result[1]}"] += 1
        return None
    HTML_WALKS["native"] += 1
    return result  # type: ignore[no-any-return]


def native_flat_text() -> Any:
    """The shared native ``FlatText`` (:func:`_flat_text`, the title of :func:`_flat_document`,
    :func:`_unescape`, and ``templates.line_keys``), or ``None`` (not installed, or a Python whose
    ``html`` module lacks the tables it reads)."""
    global _FLAT
    if _FLAT is None:
        with _NATIVE_LOCK:
            if _FLAT is None:
                _FLAT = _native.flat_text([*_INVISIBLE_ELEMENTS.split("|"), "title"], _BLOCK) or False
    return _FLAT or None
