"""HTML to text: charset decoding, title and main-content extraction.

The entry point of the text layer (with :mod:`~scrapy_simhash.text.charset`, :mod:`~scrapy_simhash.text.blocks`,
:mod:`~scrapy_simhash.text.region`, :mod:`~scrapy_simhash.text.title`, :mod:`~scrapy_simhash.text.flat` and
:mod:`~scrapy_simhash.text.native`, the only modules that know about markup). It turns a page (``bytes`` as
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

1. **One walk** over the tree (:class:`Walker`) produces the page's text blocks, in document
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
   installed (:meth:`Walker.walk_native`: the same blocks, read from libxml2's nodes); this
   Python walk is the reference and the fallback.
2. **Decisions over the block sequence** (:func:`_choose`), which never look at the tree again:
   each block is classed good / short / link list / metadata (:func:`_classify_base`: link
   density, length, sentence punctuation (``，。；`` too), boilerplate patterns such as copyright
   lines, cookie banners, "责任编辑", "分享到"; metadata: bylines, datelines and counters, blocks
   made mostly of dates, numbers and words such as "posted", "views", "发布", "阅读"; teasers
   ending in "..." on a page with several); the signals are width-invariant (full-width letters
   and digits read as ASCII, full-width punctuation counted like ASCII). Then, in order:
   (a) blocks outside the ``<main>`` landmark are dropped when it holds 50+ characters;
   (b) the content region (:func:`main_blocks`): each block's score goes to its element and
   ancestors with decay (readability), the best element is widened to a near ancestor with much
   more good text, and its leading and trailing non-good blocks and link lists are trimmed;
   (c) under 250 characters: again with the class/id chrome rule off, longer result kept;
   (d) under 300 characters and a fifth of the text: the "relaxed" region (every block that is not
   a link list, boilerplate or metadata counts as content: a table or list of short lines) if it
   holds what was found and twice as much; (e) "page": when the region's good text is under a
   quarter of the good text outside chrome (or, inside a ``<main>`` landmark, a region of no
   paragraph weighs under a quarter of the landmark's content-like blocks: an API reference page
   of short lines), every block outside chrome that is not a link list, boilerplate or metadata;
   then the page's own heading (the first <h1>, else <h2>, that the title names or shares a word
   with), when it comes before what was found, brings the page's declaration and description
   (:func:`~scrapy_simhash.text.region.with_heading`: an API reference page whose region is its
   inherited member docs), and its member signatures join it (``entries.with_entries``); (f)
   "list": when what was found weighs under a fifth of all blocks outside chrome and link lists make
   up most of them, those blocks with the link lists (an index page), never those beside the
   element holding all content-like blocks (a sidebar); (g) under 50 characters: all visible text.

Bounded: pages over :data:`MAX_HTML_CHARS` are cut after their scripts and styles are removed; a
page nested deeper than libxml2's 2048 levels is flattened (block tags become ``<br>``, other tags
but ``<title>``/``<a>`` go) and parsed again ("deep"); a page with more than :data:`MAX_ELEMENTS`
start tags or :data:`MAX_BLOCKS` text blocks, or (opt-in: ``time_budget``) whose walk runs past
its time budget, gets its text by regular expressions alone ("large" / "budget"). Measured token F1 (``benchmarks/speed/bench_extract.py``): see the README.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from lxml import etree

from scrapy_simhash.text.blocks import (
    CLEANEVAL_RE,
    IN_CHROME_TAG,
    MAX_BLOCKS,
    META_CACHE,
    META_CLASS_RE,
    NUL_RE,
    TEXT,
    XML_DECL_RE,
    Block,
    Budget,
    Walker,
    cached_search,
    weight_of,
)
from scrapy_simhash.text.charset import MAX_HTML_BYTES, MAX_HTML_CHARS, decode_html, strip_scripts_bytes
from scrapy_simhash.text.entries import has_members, with_entries
from scrapy_simhash.text.flat import TITLE_RE, cut, flat_text, flatten, unescape
from scrapy_simhash.text.native import native_comment_runs, native_flat_text, walk_native
from scrapy_simhash.text.region import (
    GOOD,
    SHORT,
    block_kind,
    block_rows,
    chars,
    is_link_list,
    main_blocks,
    with_heading,
    without_sidebar,
)
from scrapy_simhash.text.title import clean_title, title_and_heading

__all__ = ["MAX_BLOCKS", "MAX_ELEMENTS", "MAX_HTML_CHARS", "Document", "decode_html", "extract"]


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
    #: The other lines between the content's first and last block that are not chrome (link
    #: lists, labels: an API page's member signatures, whose type names are links), one block per
    #: line: what a page adds is counted on them too (``fingerprint.own_text``).
    inner: str = ""
    #: Each run of two or more short content-like lines (under 16 characters, a window) that
    #: are the cells of one table row (or the items of one list of short lines) in ``text``,
    #: ``rest`` or ``inner``, as one line (the cells joined by spaces): what a page adds is counted
    #: on them too, since a cell alone is shorter than the window that counts it.
    rows: str = ""
    #: Whose parse the text comes from: "own" (this function parsed the page), "shared" (the tree
    #: it was given: see ``extract``'s ``tree``), or "own/<why>" when that tree could not give
    #: the text of our own parse (:func:`_tree_differs`) and the page was parsed again.
    parse: str = "own"


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


def prepare(html: str) -> str:
    return _without_nuls(_without_prefix(html))


def _without_prefix(html: str) -> str:
    """``html`` without its XML declaration and CleanEval prefix (the first steps of :func:`prepare`)."""
    html = XML_DECL_RE.sub("", html, count=1)
    return CLEANEVAL_RE.sub("", html, count=1)


def _without_nuls(html: str) -> str:
    """``html`` without NULs, cut when over :data:`MAX_HTML_CHARS` (the rest of :func:`prepare`)."""
    if ("\x00" in html) if html.isascii() else NUL_RE.search(html) is not None:
        html = html.replace("\x00", "")
    if len(html) > MAX_HTML_CHARS:
        html = cut(html)
    return html


def _too_many_elements(html: str) -> bool:
    """Whether ``html`` has more start tags (``<`` not followed by ``/``: an upper bound of its
    elements) than :data:`MAX_ELEMENTS`. The count of ``</`` (a slow two-character search) is
    needed only when the page has more ``<`` than that."""
    opening = html.count("<")
    return opening > MAX_ELEMENTS and opening - html.count("</") > MAX_ELEMENTS


def parse_prepared(html: str) -> Any:
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


#: A tree whose last element is this deep was cut by libxml2 at its nesting limit (2048 levels:
#: it stops parsing there, so the element it stopped at is the last one): see :func:`_tree_differs`.
_CUT_DEPTH = 2000


def _tree_differs(tree: etree._Element, html: str, native: bool = True, comments: bool = True) -> str | None:
    """Why ``tree`` (the root parsel built from ``html``) cannot give the text of our own parse of
    ``html`` ("not_root" when it is no root element), or None when it gives exactly that text.

    Parsel parses the text as given (stripped, without NULs) with lxml's HTML parser keeping
    comments and processing instructions (libxml2 makes both comments): the walks skip them and
    an XML declaration, which our parse removes, becomes one. What remains different: a page
    over :data:`MAX_HTML_CHARS` ("size": ours is cut first), a CleanEval prefix ("prefix": ours
    removes it), a page nested deeper than libxml2 parses ("deep": ours is flattened and parsed
    again), and a comment that splits a text run in a way the walk would count differently
    ("comments": :func:`_comment_splits`; with ``native``, only where the native core's reading of
    the tree says a comment may: ``native_comment_runs``; not with ``comments=False``: the walk
    checks them, :func:`_walked`)."""
    if not isinstance(tree, etree._Element) or not isinstance(tree.tag, str) or tree.getparent() is not None:
        return "not_root"
    if len(html) > MAX_HTML_CHARS:
        return "size"
    if CLEANEVAL_RE.match(html):
        return "prefix"
    depth, el = 0, tree
    while depth < _CUT_DEPTH:
        el = next(el.iterchildren(etree.Element, reversed=True), None)
        if el is None:
            break
        depth += 1
    if depth >= _CUT_DEPTH:
        return "deep"
    if comments and _may_split(tree, native) and _comment_splits(tree):
        return "comments"
    return None


def _may_split(tree: etree._Element, native: bool) -> bool:
    """False where the native core's reading of ``tree`` says that no comment splits a text run
    (``native_comment_runs``: :func:`_comment_splits` is false there too)."""
    return not native or native_comment_runs(tree) is not False


def _comment_splits(tree: etree._Element) -> bool:
    """Whether a comment (or processing instruction) in ``tree`` splits a text run so that the
    walk reads it differently from the one text node our parse (which drops comments) makes.

    The walk takes the run's parts as pieces of one block, so the block's text is the same; but
    inside links and metadata elements (:func:`_counted`) it counts characters per piece without
    its surrounding whitespace ("a " and " b": 2, "a  b": 4), and below depth 200 it joins the
    parts with spaces. Either needs two parts with more than whitespace."""
    for node in tree.iter(etree.Comment, etree.ProcessingInstruction):
        prev = node.getprevious()
        if prev is not None and not isinstance(prev.tag, str) and prev.tag is not etree.Entity:
            continue  # not the first of consecutive comments: its run was read at the first
        owner = node.getparent() if prev is None else prev
        first = owner.text if prev is None else prev.tail
        pieces = [first] if first else []
        nxt: etree._Element | None = node
        while nxt is not None and not isinstance(nxt.tag, str) and nxt.tag is not etree.Entity:
            if nxt.tail:
                pieces.append(nxt.tail)
            nxt = nxt.getnext()
        if sum(1 for part in pieces if not part.isspace()) < 2:
            continue
        if sum(len(part.strip()) for part in pieces) != len("".join(pieces).strip()) and _counted(node):
            return True
        joined_apart = any(not left[-1].isspace() and not right[0].isspace() for left, right in pairwise(pieces))
        if joined_apart and sum(1 for _ in node.iterancestors()) >= 150:
            return True
    return False


def _counted(node: etree._Element) -> bool:
    """Whether the walk counts the characters of the text run around the comment ``node``: inside
    a link, a ``<time>`` or an element whose class/id may say metadata (:func:`_is_meta_element`,
    without its wrapper exception: a superset)."""
    for el in node.iterancestors():
        if el.tag in ("a", "time"):
            return True
        attrs = el.get("class"), el.get("id")
        if attrs != (None, None) and cached_search(META_CACHE, META_CLASS_RE, f"{attrs[0] or ''} {attrs[1] or ''}"):
            return True
    return False


def _flat_document(html: str, used: str | None, method: str, native: bool = True) -> Document:
    """The :class:`Document` of :func:`flat_text` (natively when the core is installed: the same
    title and text, ``native/src/flat.rs``)."""
    flat = native_flat_text() if native else None
    title: str | None = None
    if flat is not None:
        try:
            title, text = flat.document(html)
        except UnicodeEncodeError:  # lone surrogates: not UTF-8, Python's path takes them
            flat = None
    if flat is None:
        match = TITLE_RE.search(html)
        title = unescape(match.group(1)) if match else None
        text = flat_text(html)
    title = clean_title(title) if title is not None else ""
    return Document(title=title, text=text, encoding=used, method=method, coverage=1.0, visible=text)


def _text_of(blocks: list[Block]) -> str:
    return "\n".join(map(TEXT, blocks))


def extract(
    html: str | bytes,
    *,
    encoding: str | None = None,
    content_type: str | bytes | None = None,
    main_content: bool = True,
    time_budget: float | None = None,
    native: bool = True,
    tree: etree._Element | None = None,
) -> Document:
    """Extract the title and the main text (or, with ``main_content=False``, all visible text) of a
    page; return them as a :class:`Document`, paragraphs separated by ``"\\n"``.

    ``html`` is text, or bytes decoded by :func:`decode_html` with ``encoding`` and ``content_type``
    (the HTTP ``Content-Type`` value). ``time_budget``: seconds the walk may take before regular
    expressions take the text; ``native``: walk with the native core where it is verified
    (:func:`html_walk_status`); ``tree``: the page's parsel tree (``response.selector.root``), used
    instead of a second parse where :func:`_tree_differs` allows. ``Document.method``, ``coverage``
    and ``parse`` say what was done. Reads no settings; never raises on broken markup or binary
    junk (empty text), raises TypeError if ``html`` is not str or bytes.
    """
    started = time.perf_counter()
    if isinstance(html, (bytearray, memoryview)):
        html = bytes(html)
    if isinstance(html, bytes):
        if len(html) > MAX_HTML_BYTES:
            html = strip_scripts_bytes(html)
        html, used = decode_html(html, encoding=encoding, content_type=content_type)
        source = None
    elif isinstance(html, str):
        used = None
        source = html
    else:
        raise TypeError(
            f"html must be str or bytes, got {type(html).__name__}; pass response.body "
            "(with content_type=response.headers.get('Content-Type')) or response.text"
        )
    method = "main" if main_content else "all"
    if tree is not None and source is not None:
        # The shared tree's path, without the NUL search (its prepared text is needed only where the
        # walk stops: the regular-expression fallback) where the shortcuts give what prepare would.
        light = _without_prefix(source)
        stripped = light.strip()
        if len(light) <= MAX_HTML_CHARS and light.count("<") <= MAX_ELEMENTS and stripped and stripped[0] != "\x00":
            differs = _tree_differs(tree, source, native, comments=False)
            if differs is None:
                shared = _walked(tree, light, used, method, main_content, started, time_budget, native, "shared", True)
                if shared is not None:
                    return shared
                differs = "comments"
            # (the page is parsed as below: its prepared text has no other stop)
            html = prepare(source)
            return _own(html, used, method, main_content, started, time_budget, native, f"own/{differs}")
    html = prepare(html)
    if _too_many_elements(html):
        return _flat_document(html, used, "large", native)
    parse = "own"
    if tree is not None and html.strip():
        differs = _tree_differs(tree, source, native) if source is not None else "bytes"
        if differs is None:
            shared = _walked(tree, html, used, method, main_content, started, time_budget, native, "shared")
            assert shared is not None  # (its comments were checked)
            return shared
        parse = f"own/{differs}"
    return _own(html, used, method, main_content, started, time_budget, native, parse)


def _own(
    html: str,
    used: str | None,
    method: str,
    main_content: bool,
    started: float,
    time_budget: float | None,
    native: bool,
    parse: str,
) -> Document:
    """The :class:`Document` of prepared ``html`` by our own parse (``parse``: why the spider's tree
    was not walked, or "own")."""
    try:
        root = parse_prepared(html)
    except _TooDeep:
        method = "deep"
        try:
            root = parse_prepared(flatten(html))
        except _TooDeep:  # cannot happen with <a> and <title> left, but never raise
            return _flat_document(html, used, "deep", native)
    if root is None:
        return Document(title="", text="", encoding=used, method="empty", coverage=0.0, parse=parse)
    doc = _walked(root, html, used, method, main_content, started, time_budget, native, parse)
    assert doc is not None  # (None only where it checks the comments of a shared tree)
    return doc


def _walked(
    root: etree._Element,
    html: str,
    used: str | None,
    method: str,
    main_content: bool,
    started: float,
    time_budget: float | None,
    native: bool,
    parse: str,
    comments: bool = False,
) -> Document | None:
    """The :class:`Document` of the parsed page ``root`` (``html``: the prepared text it was parsed
    from, for the regular-expression fallback). ``comments``: ``root`` is the spider's tree, not yet
    checked for comments that split a text run (:func:`_tree_differs`), and ``html`` is prepared
    but for its NULs: ``None`` when a comment splits one (read by the native walk as it goes)."""
    title, heading, named = title_and_heading(root)
    walker = Walker(deadline=None if time_budget is None else started + time_budget)
    try:
        natively = native and walk_native(walker, root)
        if not natively:
            walker.walk(root, 0, False, 0)
        if comments and (walker.comments if natively else _may_split(root, native)) and _comment_splits(root):
            return None
        walker.flush()
        walker.check_budget()
        blocks = walker.blocks
        visible = _text_of(blocks)
        if not main_content:
            return Document(
                title=title, text=visible, encoding=used, method=method, coverage=1.0, visible=visible, parse=parse
            )
        chosen, found, content_like = _choose(walker, heading, named)
    except Budget as exc:
        if comments:
            if _may_split(root, native) and _comment_splits(root):
                return None
            html = _without_nuls(html)
        return _flat_document(html, used, str(exc), native)
    total = weight_of(blocks)
    taken = set(chosen)  # blocks compare by identity
    inner = _inner(blocks, chosen, taken.union(content_like))
    own = taken.union(content_like, inner)
    return Document(
        title=title,
        text=_text_of(chosen),
        encoding=used,
        method="deep" if method == "deep" else found,
        coverage=weight_of(chosen) / total if total else 0.0,
        visible=visible,
        rest=_text_of([b for b in content_like if b not in taken]),
        inner=_text_of(inner),
        rows="\n".join(block_rows(walker, [b for b in blocks if b in own])),
        parse=parse,
    )


def _inner(blocks: list[Block], chosen: list[Block], seen: set[Block]) -> list[Block]:
    """The blocks between the first and the last of ``chosen`` (in page order) that are not
    chrome and not in ``seen``."""
    if not chosen:
        return []
    at = dict(zip(blocks, range(len(blocks))))
    span = [at[b] for b in chosen if b in at]
    if not span:
        return []
    return [b for b in blocks[min(span) : max(span) + 1] if not b.flags and b not in seen]


def _choose(walker: Walker, heading: str = "", named: bool = False) -> tuple[list[Block], str, list[Block]]:
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
        if chars(inside) >= _MIN_MAIN_CHARS:
            blocks, landmarked = inside, True
    content = [b for b in blocks if not b.flags]
    main = main_blocks(walker, content)
    pool = content
    found = "main"
    walker.check_budget()
    if chars(main) < _RETRY_CHARS:
        # The content may sit in an element whose class/id looks like chrome.
        unchromed = [b for b in blocks if not b.flags & IN_CHROME_TAG]
        retry = main_blocks(walker, unchromed)
        if chars(retry) > chars(main):
            main, pool = retry, unchromed
    if chars(main) < _RELAXED_CHARS and chars(main) < _RELAXED_SHARE * chars(blocks):
        # Little content-like text on a page with much text: the content may be a table or
        # a list of short lines (a standings table, a timetable). Take the region with the most
        # text that is neither links, boilerplate nor metadata, if it holds what was found
        # (else it is another part of the page: a list beside a short article).
        walker.check_budget()
        # (from the blocks the region was found among: a footer line found with the class/id
        # rules off is then held by the relaxed region of its element, an entry of short lines)
        relaxed = main_blocks(walker, pool, relaxed=True)
        if chars(relaxed) >= _RELAXED_GAIN * chars(main) and {b.text for b in main} <= {b.text for b in relaxed}:
            main, found = relaxed, "relaxed"
    # The region holds too little of the page's content-like text (a documentation page whose
    # sections, definition lists and code the scoring splits; an index page): hashing that part
    # alone would let the rest of the page change, or differ, unseen. Take all of it instead.
    # Judged on content-like blocks (GOOD: sentences, code), so that a short article beside a
    # long list of short lines (opening hours, a price list) keeps its own text.
    # (each block's class on its own, block_kind(b, False), is its base class: read once classified)
    _classified(content)
    _classified(main)
    good = sum(b.weight for b in content if b.base == GOOD)
    content_like = [b for b in content if b.base >= SHORT]
    if sum(b.weight for b in main if b.base == GOOD) < _COVERAGE * good:
        main, found = content_like, "page"
    elif weight_of(main) < _COVERAGE * weight_of(content_like) and (
        (landmarked and all(b.weight < _PARAGRAPH_WEIGHT for b in main)) or has_members(content_like, main)
    ):
        # An API reference page is summary lines, signatures and member docs around a class
        # description, one member's docs or one line that counts as a sentence ("Methods inherited
        # from class a.b.C"). Inside a <main> landmark a region of no paragraph, anywhere one beside
        # member declarations, under a quarter of the content-like text, is a part the scoring split
        # off (a short article beside a longer list of short lines keeps its own text).
        main, found = content_like, "page"
    # An API reference page's own heading, declaration and description around a region of member docs
    # (on a page taken whole, its heading and the declaration taken for a link list), and its signatures.
    whole = found == "page"
    main = with_heading(walker, blocks, content if whole else pool, main, heading, named, whole)
    main = with_entries(blocks, main, landmarked)
    # An index or listing page: its content is its lists of links (a table of contents, an
    # alphabetical index), which every rule above leaves out as navigation. When what was found is
    # a small part of the page outside its chrome, the lists count too.
    # A column of links beside the element that holds all of the page's content-like text (a
    # glossary's sidebar of every entry) is navigation, never the page's content: judged without it.
    weight, total = weight_of(main), weight_of(content)
    near_content, links = content, []
    if total > 2 * weight:  # (the two rules below read them only then)
        links = [b for b in content if is_link_list(b)]
        near_content, links = without_sidebar(walker, content, links, _MIN_MAIN_CHARS, heading)
    if weight < _LIST_SHARE * weight_of(near_content):
        listing = [b for b in near_content if b.base >= SHORT or is_link_list(b)]
        # Mostly links: a short article beside a long list of short lines keeps its own text.
        if weight_of(listing) > weight and 2 * weight_of(links) > weight_of(listing):
            main, found = listing, "list"
    # (the link lists, outside the region, can outweigh it only where the rest of the page does)
    if main and found in ("main", "relaxed") and total > 2 * weight:
        # A hub page: a chapter's short introduction beside its table of contents. Its lists stay
        # out of the fingerprint (the introduction is its key), but the change sketch covers the
        # lists that share the introduction's container (a sidebar's "most read" list does not):
        # a chapter that lost half its sections has changed.
        near = _container_links(walker, main, links)
        if weight_of(near) > weight:
            taken = set(near)
            content_like = [b for b in content if b in taken or b.base >= SHORT]
    if chars(main) < _MIN_MAIN_CHARS and chars(walker.blocks) > chars(main):
        main, found = walker.blocks, "visible"
    return main, found, content_like


def _classified(blocks: list[Block]) -> None:
    """Class each of ``blocks`` not classed yet (:func:`block_kind`: its ``base``, read on first use)."""
    for block in blocks:
        if block.base == -2:
            block_kind(block, False)


def _container_links(walker: Walker, main: list[Block], links: list[Block]) -> list[Block]:
    """The blocks of ``links`` inside the parent of the smallest element that holds ``main``."""
    first, last = min(b.owner for b in main), max(b.owner for b in main)
    top = first
    while top and walker.end[top] <= last:
        top = walker.parent[top]
    top = walker.parent[top] if top else top
    return [b for b in links if top <= b.owner < walker.end[top]]
