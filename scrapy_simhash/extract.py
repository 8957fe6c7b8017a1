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
jusText and text-density methods, in one pass over the tree:

- invisible and chrome elements are skipped (``script``, ``style``, ``nav``, ``footer``, ``aside``,
  hidden elements, and elements whose class/id says sidebar, menu, comment, share, related, ad...
  unless they hold several paragraphs: then they are a page wrapper, not chrome);
- the rest is cut into text blocks at block-level tags and ``<br>`` (table layouts: one block per
  cell or line); each block is classed good / short / link list by its length (a Han character
  weighs 3 Latin ones), link density, sentence punctuation (``，。；`` too), and boilerplate
  patterns (copyright lines, cookie banners, "责任编辑", "分享到", teasers ending in "...").
  These signals are width-invariant: they read full-width letters and digits as ASCII (NFKC) and
  count full-width punctuation like its ASCII counterpart, so a full-width copy of a page picks
  the same blocks (its text is the same after NFKC; the text itself is returned as written);
- short metadata blocks are dropped wherever they are: bylines, datelines and counters, i.e.
  blocks made mostly of dates, times, numbers and words such as "posted", "updated", "views",
  "comments", "发布", "阅读", "来源", or mostly inside ``<time>`` or an element whose class/id
  says meta, info, byline, date, time, stats, counter. Two copies of an article that differ only
  in such a line ("1,204 views" / "12,877 views, 23 comments") then give the same text;
- each block's score goes to its element, parent and grandparent with decay (readability); the
  best element, widened to a near ancestor with much more good text, is the content region;
- inside it, leading and trailing non-good blocks and link lists are dropped.

If that leaves little text, the pass is repeated without the class/id rules. If the result is still
under 300 characters and a fifth of the page's visible text, the page's content may be a table or
list of short lines (a standings table): a pass that counts every block that is not a link list,
boilerplate or metadata as content is used instead, if it holds the text found so far and at least
twice as much. Below 50 characters, all visible text is used. Measured token F1
(``benchmarks/bench_extract.py``): 0.959 on the Zyte article benchmark and 0.928 on a Chinese set,
with trafilatura at 0.948 / 0.866, in about a fifth of its time.
"""

from __future__ import annotations

import codecs
import re
import threading
import unicodedata
from dataclasses import dataclass

from lxml import etree
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
)

__all__ = ["MAX_HTML_CHARS", "Document", "decode_html", "extract"]

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


@dataclass(frozen=True)
class Document:
    """A page reduced to what its fingerprint should see.

    ``title`` is the page title without a site-name prefix/suffix (``""`` if none); ``text`` is
    the main content (or all visible text), one block per line; ``encoding`` is the Python codec
    name the bytes were decoded with, or ``None`` when the page was given as ``str``.
    """

    title: str
    text: str
    encoding: str | None


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


# --------------------------------------------------------------------------- tree walk

# Never text: skipped in both modes (with their content; their tail text is kept). Not <head>:
# libxml2 puts the whole <body> inside <head> after an unknown tag there (<sohu_cms_include>).
_INVISIBLE = frozenset(
    "title script style noscript template svg math canvas object embed iframe frame frameset "
    "select datalist option optgroup textarea button input audio video source track map area "
    "param link meta base".split()
)
# Page chrome: also skipped in main-content mode.
_CHROME = frozenset("nav aside footer header menu dialog figure figcaption".split()) | _INVISIBLE
# Tags that start a new text block.
_BLOCK = frozenset(
    "address article aside blockquote body caption center dd details dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html legend li main menu nav "
    "ol p pre section summary table tbody td tfoot th thead tr ul br".split()
)

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

_NEGATIVE_CACHE: dict[str, bool] = {}
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
_META_CACHE: dict[str, bool] = {}


def _cached_search(cache: dict[str, bool], pattern: re.Pattern[str], attrs: str) -> bool:
    """Whether ``pattern`` matches the lower-cased class/id string ``attrs``; class names repeat
    across the pages of a site, so the answers are kept (bounded: cleared past 50,000)."""
    found = cache.get(attrs)
    if found is None:
        if len(cache) > 50_000:
            cache.clear()
        found = cache[attrs] = pattern.search(attrs.lower()) is not None
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
    __slots__ = ("kind", "links", "meta", "norm", "owner", "text", "weight")

    def __init__(self, text: str, links: int, owner: int, meta: int = 0) -> None:
        self.text = text
        # The block's signals (weight, punctuation, boilerplate and metadata patterns) are read on
        # its folded form and count punctuation of both widths alike, so that a full-width copy
        # of a page picks the same blocks.
        self.norm = _fold(text)
        self.links = links
        self.meta = meta  # characters inside <time> / metadata-class elements
        self.owner = owner
        self.weight = _weight(self.norm)
        self.kind = 0  # set by _classify


class _Walker:
    """One pass over the tree: text blocks, plus each element's parent and subtree end."""

    def __init__(self, main_content: bool, classes: bool = True) -> None:
        self.classes = main_content and classes
        self.main_content = main_content
        self.skip = _CHROME if main_content else _INVISIBLE
        self.blocks: list[_Block] = []
        self.parent: list[int] = []
        self.end: list[int] = []
        self.pieces: list[str] = []
        self.links = 0
        self.owner = 0
        self.in_meta = 0  # depth of <time> / metadata-class elements around the current one
        self.meta = 0

    def flush(self) -> None:
        if not self.pieces:
            return
        text = " ".join("".join(self.pieces).split())  # = _WS_RE.sub(" ", ...).strip(): same \s
        self.pieces = []
        if text:
            if " " in text and not text.isascii():
                text = _CJK_SPACE_RE.sub("", text)
            size = len(text)
            self.blocks.append(_Block(text, min(self.links, size), self.owner, min(self.meta, size)))
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

    def skipped(self, el, tag: str) -> bool:
        if tag in self.skip:
            return True
        keys = el.keys()
        if not keys:
            return False
        if "hidden" in keys:
            return True
        if "style" in keys:
            style = el.get("style")
            if "none" in style and _DISPLAY_NONE_RE.search(style):
                return True
        if self.classes and ("class" in keys or "id" in keys) and tag != "body" and tag != "html":
            attrs = f"{el.get('class') or ''} {el.get('id') or ''}"
            if _cached_search(_NEGATIVE_CACHE, _NEGATIVE_RE, attrs):
                return not _wraps_paragraphs(el)
        return False

    def walk(self, el, parent: int, in_link: bool, depth: int) -> None:
        parents = self.parent
        idx = len(parents)
        parents.append(parent)
        self.end.append(0)
        tag = el.tag
        block = tag in _BLOCK
        if block and self.pieces:
            self.flush()
        if tag == "a":
            in_link = True
        meta = self.main_content and _is_meta_element(el, tag)
        if meta:
            self.in_meta += 1
        add = self.add
        text = el.text
        if text:
            add(text, idx, in_link)
        if depth < 200:
            skipped = self.skipped
            walk = self.walk
            depth += 1
            for child in el:
                ctag = child.tag
                if ctag.__class__ is str:
                    if not skipped(child, ctag):
                        walk(child, idx, in_link, depth)
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


def _classify(block: _Block, teasers: bool, relaxed: bool = False) -> int:
    """_GOOD (content-like), _SHORT (neutral), _LINKS (link list / boilerplate) or _META.

    ``relaxed``: every block that is neither a link list, boilerplate, metadata nor a teaser is
    good (for pages whose content is a table or a list of short lines).
    """
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
    if teasers and weight < 600 and text.endswith(_ELLIPSES):
        return _SHORT  # a teaser of another article
    if relaxed or weight >= 160 or (weight >= 60 and punct >= 2) or (weight >= 100 and sentence):
        return _GOOD
    return _SHORT


def _main_blocks(walker: _Walker, relaxed: bool = False) -> list[_Block]:
    blocks = walker.blocks
    if not blocks:
        return []
    n = len(walker.parent)
    parent = walker.parent
    good = [0] * n  # good text in each element's subtree
    score = [0.0] * n
    # Several blocks cut short with "..." are a list of teasers of other articles; one is more
    # likely a paywall's cut.
    teasers = sum(1 for b in blocks if b.norm.endswith(_ELLIPSES)) >= 2
    for block in blocks:
        block.kind = kind = _classify(block, teasers, relaxed)
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
    inside = [b for b in blocks if lo <= b.owner < hi]
    # Trim leading and trailing non-good blocks (bylines, "related" lists, share bars).
    first = next((k for k, b in enumerate(inside) if b.kind == _GOOD), None)
    if first is None:
        return []
    last = max(k for k, b in enumerate(inside) if b.kind == _GOOD)
    kept = []
    for block in inside[first : last + 1]:
        if block.kind > _LINKS:
            kept.append(block)
    return kept


# --------------------------------------------------------------------------- title

# " - ", " | ", " :: ", "_", "--", "——", "|", and a bare "-" between Han characters ("新闻-搜狐").
_TITLE_SEP_RE = re.compile(rf"\s+[-|–—·:»«]{{1,2}}\s+|\s*(?:_{{1,2}}|-{{2,}}|——|[|｜])\s*|(?<=[{_CJK}])-(?=[{_CJK}])")


def _clean_title(title: str) -> str:
    title = _WS_RE.sub(" ", title).strip()
    parts = [p.strip() for p in _TITLE_SEP_RE.split(title)]
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return title

    return max(parts, key=lambda part: _weight(_fold(part)))  # first of equals: max() keeps the first maximum


def _find_title(root) -> str:
    for el in root.iter("title"):
        text = "".join(el.itertext())
        if text.strip():
            return _clean_title(text)
        break
    for el in root.iter("meta"):
        if (el.get("property") or el.get("name") or "").lower() in ("og:title", "twitter:title"):
            content = el.get("content")
            if content and content.strip():
                return _clean_title(content)
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
            huge_tree=True,  # depth > 256; text is capped by MAX_HTML_CHARS
        )
    return parser


def _parse(html: str):
    """The root element of ``html``, or None if there is nothing to parse."""
    html = _XML_DECL_RE.sub("", html, count=1)
    html = _CLEANEVAL_RE.sub("", html, count=1)
    if "\x00" in html:
        html = html.replace("\x00", "")
    if len(html) > MAX_HTML_CHARS:
        html = _cut(html)
    if not html.strip():
        return None
    try:
        return etree.fromstring(html.encode("utf-8", "replace"), _parser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


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


def _text_of(blocks: list[_Block]) -> str:
    return "\n".join(b.text for b in blocks)


def extract(
    html: str | bytes,
    *,
    url: str | None = None,
    encoding: str | None = None,
    content_type: str | bytes | None = None,
    main_content: bool = True,
) -> Document:
    """Extract the title and the main text (or all visible text) of a page.

    ``html`` is the page as downloaded (``bytes``: decoded with :func:`decode_html` using
    ``encoding`` and ``content_type``, the HTTP ``Content-Type`` header value) or as text.
    ``url`` is accepted for callers' convenience and currently unused. With ``main_content``
    (the default) the text is the page's main content without navigation, sidebars, footers,
    link lists, boilerplate lines and short metadata lines (bylines, datelines, view and comment
    counters); a page whose content is a table or list of short lines gives those lines;
    if that finds fewer than 50 characters, all visible text is returned instead. Block selection
    is width-invariant (a full-width copy gives the same text after NFKC); the text is returned
    as written. ``main_content=False`` returns all visible text (no ``script``, ``style``,
    ``noscript``, ``template``, ``head`` or hidden elements). Paragraphs are separated by
    ``"\\n"``. Pages over :data:`MAX_HTML_CHARS` characters are cut. Reads no settings (callers
    map ``SIMHASH_*`` options to the arguments).

    Never raises on broken markup or binary junk: such input gives a Document with empty text.
    Raises TypeError if ``html`` is not str or bytes.
    """
    if isinstance(html, (bytearray, memoryview)):
        html = bytes(html)
    if isinstance(html, bytes):
        html, used = decode_html(html, encoding=encoding, content_type=content_type)
    elif isinstance(html, str):
        used = None
    else:
        raise TypeError(
            f"html must be str or bytes, got {type(html).__name__}; pass response.body "
            "(with content_type=response.headers.get('Content-Type')) or response.text"
        )
    root = _parse(html)
    if root is None:
        return Document(title="", text="", encoding=used)
    title = _find_title(root)
    if not main_content:
        return Document(title=title, text=_visible_text(root), encoding=used)
    text = _main_text(root, classes=True)
    if len(text) < _RETRY_CHARS:
        # The content may sit in an element whose class/id looks like chrome.
        retry = _main_text(root, classes=False)
        if len(retry) > len(text):
            text = retry
    if len(text) < _RELAXED_CHARS:
        visible = _visible_text(root)
        if len(text) < _RELAXED_SHARE * len(visible):
            # Little content-like text on a page with much text: the content may be a table or
            # a list of short lines (a standings table, a timetable). Take the region with the most
            # text that is neither links, boilerplate nor metadata, if it holds what was found
            # (else it is another part of the page: a list beside a short article).
            relaxed = _main_text(root, classes=True, relaxed=True)
            if len(relaxed) >= _RELAXED_GAIN * len(text) and (
                not text or set(text.split("\n")) <= set(relaxed.split("\n"))
            ):
                text = relaxed
        if len(text) < _MIN_MAIN_CHARS and len(visible) > len(text):
            text = visible
    return Document(title=title, text=text, encoding=used)


def _main_text(root, classes: bool, relaxed: bool = False) -> str:
    walker = _Walker(main_content=True, classes=classes)
    walker.walk(root, 0, False, 0)
    walker.flush()
    return _text_of(_main_blocks(walker, relaxed))


def _visible_text(root) -> str:
    walker = _Walker(main_content=False)
    walker.walk(root, 0, False, 0)
    walker.flush()
    return _text_of(walker.blocks)
