"""The decisions over the block sequence that never look at the tree again (stage 2 of
:mod:`scrapy_simhash.text.extract`): each block classed good / short / link list / metadata /
boilerplate (:func:`_classify_base`, :func:`block_kind`), the content region (:func:`main_blocks`:
scores with decay to the ancestors, widened and trimmed), the sidebar of links beside a page's
body (:func:`without_sidebar`) and the rows of short cells (:func:`block_rows`)."""

from __future__ import annotations

import re

from scrapy_simhash.text import rules
from scrapy_simhash.text.blocks import CJK_CHAR_RE, PUNCT_RE, TEXT, Block, Walker, heading_text, weight_of

GOOD, SHORT, LINKS, META = 2, 1, 0, -1

# The block classes' rules (text/rules.py), bound here for their lookups.
_SENTENCE_END = rules.SENTENCE_END
_ELLIPSES = rules.ELLIPSES
BOILERPLATE_RE = rules.BOILERPLATE_RE
_BOILERPLATE_ANY_RE = rules.BOILERPLATE_ANY_RE
_META_KEYWORDS = rules.META_KEYWORDS
_META_HAN_KEYWORD_RE = rules.META_HAN_KEYWORD_RE
_LINK_DENSITY, _LINKED_DENSITY, _SENTENCE_PUNCT = rules.LINK_DENSITY, rules.LINKED_DENSITY, rules.SENTENCE_PUNCT
_LINKED_SENTENCE_WEIGHT = rules.LINKED_SENTENCE_WEIGHT
_BOILERPLATE_MAX_WEIGHT, _BOILERPLATE_START_MAX_WEIGHT = (
    rules.BOILERPLATE_MAX_WEIGHT,
    rules.BOILERPLATE_START_MAX_WEIGHT,
)
_META_MAX_WEIGHT, _META_MARKUP_SHARE = rules.META_MAX_WEIGHT, rules.META_MARKUP_SHARE
_TEASER_MAX_WEIGHT = rules.TEASER_MAX_WEIGHT
_GOOD_WEIGHT, _GOOD_PUNCT_WEIGHT, _GOOD_SENTENCE_WEIGHT = (
    rules.GOOD_WEIGHT,
    rules.GOOD_PUNCT_WEIGHT,
    rules.GOOD_SENTENCE_WEIGHT,
)
_DECAY, _EXTEND_RATIO, _EXTEND_LEVELS = rules.DECAY, rules.EXTEND_RATIO, rules.EXTEND_LEVELS


def is_boilerplate(text: str) -> bool:
    """``_BOILERPLATE_ANY_RE.search(text) is not None``, skipping the search when ``text`` holds
    none of the strings that each of its alternatives needs (most blocks)."""
    if not text.isascii() and _ASCII_LETTER_LOOKALIKE_RE.search(text) is not None:
        return _BOILERPLATE_ANY_RE.search(text) is not None
    low = text.lower()
    if "©" in text or "版权所有" in text or "all rights reserved" in low or "cookie" in low:
        return _BOILERPLATE_ANY_RE.search(text) is not None
    return False


#: A line lighter than ``rules.META_MAX_WEIGHT`` is metadata if at most this share of its words is
#: not a date, time, number or metadata word, and at most this many words (Latin script) /
#: characters (Han) are not (:func:`is_meta_text`).
_META_OTHER_SHARE = 1 / 3


_META_OTHER_WORDS = 3


_META_OTHER_HAN = 6


# Words that are metadata too (besides rules.META_KEYWORDS, which say it) but also common in lines
# that are not: they only count.
_META_WORDS = _META_KEYWORDS | frozenset(
    "by on at and last view read comment like share reply written min mins minute minutes hour "
    "hours day days week weeks month months year years am pm utc gmt est edt cst cdt pst pdt bst "
    "cet cest jst january february march april june july august september october november "
    "december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday "
    "thursday friday saturday sunday mon tue tues thu thur thurs fri".split()
)


# Dates and times written with 年月日 (a number with its unit: one token), weekdays.
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


#: The keywords alone, searched in ``text.lower()`` (:func:`_meta_says`).
_META_KEYWORD_RE = re.compile("|".join(map(re.escape, sorted(_META_KEYWORDS))))


# The only non-ASCII characters that match an ASCII letter case-insensitively in ``re`` or whose
# lower() holds one (İ ı ſ K): without them, a keyword is in ``text.lower()`` exactly when
# _META_SAYS_RE's keyword alternatives match ``text``.
_ASCII_LETTER_LOOKALIKE_RE = re.compile("[\u0130\u0131\u017f\u212a]")


def _meta_says(text: str, low: str) -> bool:
    """``_META_SAYS_RE.search(text) is not None`` (``low`` is ``text.lower()``), in a fraction of
    its time: each of its alternatives alone, the keywords searched in ``low`` without case rules
    (no character folds to a digit or to the year's separators)."""
    if not text.isascii():
        if _ASCII_LETTER_LOOKALIKE_RE.search(text) is not None:
            return _META_SAYS_RE.search(text) is not None
        if _META_HAN_KEYWORD_RE.search(text) is not None:
            return True
    return _YEAR_RE.search(text) is not None or _META_KEYWORD_RE.search(low) is not None


def is_meta_text(text: str) -> bool:
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
            if CJK_CHAR_RE.match(token):  # one Han / kana character (or a Hangul word)
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


def _classify_base(block: Block) -> int:
    """GOOD (content-like), SHORT (neutral), LINKS (link list / boilerplate) or META, before
    the page-level teaser and relaxed rules (see :func:`block_kind`); sets ``block.teaser``."""
    weight = block.weight
    text = block.norm
    density = block.links / len(block.text)  # both counted on the text as written
    punct = len(PUNCT_RE.findall(text))
    sentence = text[-1] in _SENTENCE_END
    if density > _LINK_DENSITY or (
        density > _LINKED_DENSITY and (punct < _SENTENCE_PUNCT or (weight < _LINKED_SENTENCE_WEIGHT and not sentence))
    ):
        return LINKS
    if weight < _BOILERPLATE_MAX_WEIGHT and (
        is_boilerplate(text) or (weight < _BOILERPLATE_START_MAX_WEIGHT and BOILERPLATE_RE.match(text))
    ):
        return LINKS
    if text[0] == "<" and text[-1] == ">":
        return LINKS  # markup shown as text (<noscript> in <head>)
    if weight < _META_MAX_WEIGHT and (
        (block.meta >= _META_MARKUP_SHARE * len(block.text) and not (sentence and punct >= _SENTENCE_PUNCT))
        or is_meta_text(text)
    ):
        return META  # byline, dateline, view counter: differs between copies of one article
    block.teaser = weight < _TEASER_MAX_WEIGHT and text.endswith(_ELLIPSES)
    if (
        weight >= _GOOD_WEIGHT
        or (weight >= _GOOD_PUNCT_WEIGHT and punct >= _SENTENCE_PUNCT)
        or (weight >= _GOOD_SENTENCE_WEIGHT and sentence)
    ):
        return GOOD
    return SHORT


def block_kind(block: Block, teasers: bool, relaxed: bool = False) -> int:
    """The block's class on its page: a teaser of another article (a block cut with "..." on a
    page with several) is SHORT; ``relaxed`` (a page whose content is a table or a list of short
    lines): every other block that is not a link list, boilerplate or metadata is GOOD."""
    base = block.base
    if base == -2:
        base = block.base = _classify_base(block)
    if base <= LINKS:
        return base
    if teasers and block.teaser:
        return SHORT
    return GOOD if relaxed else base


def main_blocks(walker: Walker, blocks: list[Block], relaxed: bool = False) -> list[Block]:
    """The content region's blocks among ``blocks`` (a subsequence of ``walker.blocks``): by the
    native core where it walked the page (``HtmlWalker.main_blocks``, the same blocks), else
    :func:`_main_blocks_python`."""
    if walker.core is not None:
        found: list[Block] | None = walker.core.main_blocks(blocks, walker.parent, walker.end, relaxed)
        if found is not None:
            return found
    return _main_blocks_python(walker, blocks, relaxed)


def _main_blocks_python(walker: Walker, blocks: list[Block], relaxed: bool = False) -> list[Block]:
    """:func:`main_blocks` in Python: the reference."""
    if not blocks:
        return []
    n = len(walker.parent)
    parent = walker.parent
    good = [0] * n  # good text in each element's subtree
    score = [0.0] * n
    # Several blocks cut short with "..." are a list of teasers of other articles; one is more
    # likely a paywall's cut.
    teasers = sum(1 for b in blocks if b.norm.endswith(_ELLIPSES)) >= 2
    kinds = [block_kind(block, teasers, relaxed) for block in blocks]
    holders = []  # the owners of good blocks
    for block, kind in zip(blocks, kinds):
        value: float
        if kind == GOOD:
            value = block.weight - block.links
            good[block.owner] += value
            holders.append(block.owner)
        elif kind == LINKS:
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
    # Only the good blocks' owners and their ancestors have good text in their subtree: the sums
    # and the choice read those elements alone (a page has thousands of others).
    above: set[int] = set()
    for i in holders:
        while i not in above:
            above.add(i)
            if not i:
                break
            i = parent[i]
    order = sorted(above)
    for i in reversed(order):  # children come after their parent in document order
        if i:
            good[parent[i]] += good[i]
    best, best_score = 0, None
    for i in order:
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
    first = next((i for i, (_, k) in enumerate(inside) if k == GOOD), None)
    if first is None:
        return []
    last = max(i for i, (_, k) in enumerate(inside) if k == GOOD)
    return [b for b, k in inside[first : last + 1] if k > LINKS]


#: Below this share of the content-like text of the element it shares with the page's main
#: heading (from the heading on), the content region is one part of the page's content.
_PART_SHARE = 0.5


def with_heading(
    walker: Walker,
    blocks: list[Block],
    pool: list[Block],
    main: list[Block],
    heading: str,
    named: bool,
    whole: bool = False,
) -> list[Block]:
    """Return ``main`` (a region of ``pool``, the blocks it was chosen from, a subsequence of
    ``blocks``) widened up to the page's main heading, when that heading's block comes before it.

    ``heading`` is the heading as :func:`~scrapy_simhash.text.blocks.heading_text` reads it;
    ``named``: the page title names it (else it shares a word with it); ``whole``: the page is taken
    whole. Which lines join (the heading's part of the content, a declaration, the page's own lines:
    :data:`_PART_SHARE`, :func:`_is_code`, :func:`_own_line`) is in ``docs/topics/how-it-works.rst``.
    """
    if not heading or not main:
        return main
    at = dict(zip(blocks, range(len(blocks))))  # blocks compare by identity
    start = at.get(main[0])
    if start is None:
        return main
    top = next((i for i in range(start - 1, -1, -1) if _is_heading(blocks[i], heading)), None)
    if top is None:
        return main
    in_pool = set(pool)
    teasers = sum(1 for b in pool if b.norm.endswith(_ELLIPSES)) >= 2
    taken = set(main)
    if named:
        lo, hi = _holding(walker, blocks[top].owner, main[0].owner)
        after = [
            b
            for b in blocks[top + 1 :]
            if lo <= b.owner < hi and b in in_pool and (b in taken or _content_line(b, teasers))
        ]
        below = any(b not in taken and at[b] < start for b in after)  # own lines above the region
        if below and _depth(walker, lo) > 1 and weight_of(main) < _PART_SHARE * weight_of(after):
            return [blocks[top], *after]
        # The region is the page's content, after its declaration: that joins (a line of code).
        code = (b for b in blocks[top + 1 : start] if b in in_pool and _content_line(b, teasers) and _is_code(b))
        return [*code, *main]
    end = at.get(main[-1], start) if whole else start - 1
    own = [b for b in blocks[top + 1 : end + 1] if b not in taken and b in in_pool and _own_line(b)]
    return sorted([blocks[top], *own, *main], key=at.__getitem__) if whole else [blocks[top], *own, *main]


def _depth(walker: Walker, element: int) -> int:
    """How many elements hold ``element`` (the root's is 0, ``<body>``'s 1)."""
    parent, depth = walker.parent, 0
    while element and depth < 1000:
        element = parent[element]
        depth += 1
    return depth


def _holding(walker: Walker, a: int, b: int) -> tuple[int, int]:
    """The element range (first, end) of the smallest element that holds elements ``a`` and ``b``."""
    parent = walker.parent
    ancestors = {b}
    while b:
        b = parent[b]
        ancestors.add(b)
    while a not in ancestors:
        a = parent[a]
    return a, walker.end[a]


def _content_line(block: Block, teasers: bool) -> bool:
    """Whether a block is content-like: not a link list, boilerplate, metadata, or (on a page
    with several) a teaser of another article."""
    return block_kind(block, teasers) >= SHORT and not (teasers and block.teaser)


#: A line partly of links is a declaration (see :func:`_own_line`) with at least this many
#: characters outside its links ("public class " and " extends " around two linked names).
_DECLARATION_CHARS = 16


# What only code has in a short line: brackets, an assignment, a path ("std::str") ...
_CODE_RE = re.compile(r"[{}()<>\[\];=]|::")


# ... and what a declaration has that a headline or a standfirst has not: braces, angle
# brackets, a semicolon, an assignment, a path.
_DECLARATION_RE = re.compile(r"[{}<>;=]|::")


def _is_code(block: Block) -> bool:
    """Whether a content-like block is a declaration (see :data:`_DECLARATION_RE`)."""
    return _DECLARATION_RE.search(block.norm) is not None


def _own_line(block: Block) -> bool:
    """Whether a block near the main heading is the page's own text: a paragraph, a sentence, a
    line of code, or a declaration whose names link to their pages ("public class CharSet extends
    Object implements Serializable"); not a byline, a label, a counter or a line of navigation,
    nor a link list, boilerplate, markup shown as text or metadata."""
    kind = block_kind(block, False)
    if kind == META:
        return False
    text = block.norm
    if kind == LINKS:
        # A declaration: words between its links, no link list, boilerplate or markup.
        return (
            len(block.text) - block.links >= _DECLARATION_CHARS
            and not (is_boilerplate(text) or BOILERPLATE_RE.match(text))
            and not (text[0] == "<" and text[-1] == ">")
        )
    return kind == GOOD or text[-1] in _SENTENCE_END or _CODE_RE.search(text) is not None


def _is_heading(block: Block, heading: str) -> bool:
    """Whether ``block``'s text is ``heading`` (as :func:`~scrapy_simhash.text.blocks.heading_text`
    reads a heading: case-folded, without permalink signs)."""
    # (case folding never shortens a text: a block longer than the heading and its marks is not it)
    return len(block.text) <= len(heading) + 8 and heading_text(block.text) == heading


def is_link_list(block: Block) -> bool:
    """A block classed LINKS for its links (not for boilerplate or markup shown as text)."""
    return block.base == LINKS and block.links > 0.33 * len(block.text) and not is_boilerplate(block.norm)


def chars(blocks: list[Block]) -> int:
    """Characters of the blocks' text joined with newlines."""
    return sum(map(len, map(TEXT, blocks))) + len(blocks) - 1 if blocks else 0


def without_sidebar(
    walker: Walker, content: list[Block], links: list[Block], least: int, heading: str
) -> tuple[list[Block], list[Block]]:
    """``content`` and its link lists (``links``) without those outside the page's body column,
    the smallest element that holds all of its content-like blocks (at least ``least`` characters
    of them) and its main heading (``heading``, as :func:`with_heading` reads it), when that is an
    element inside ``<body>`` that holds two blocks or more: a sidebar of links beside the body."""
    if not links:
        return content, links
    # (a line that only points at a page, a print view's "Printed from /a/b.html" after the
    # sidebar, is no part of the body: with it, the column would be <body>, sidebar and all)
    like = [
        b
        for b in content
        if (block_kind(b, False) >= SHORT and not is_pointer(b.text)) or (heading and _own_heading(b, heading))
    ]
    if len(like) < 2 or chars(like) < least:
        return content, links
    parent = walker.parent
    held: dict[int, int] = {}
    for block in like:
        held[block.owner] = held.get(block.owner, 0) + block.weight
    above: set[int] = set()
    for i in list(held):
        while i not in above:
            above.add(i)
            if not i:
                break
            i = parent[i]
    for i in sorted(above, reverse=True):  # children come after their parent in document order
        if i:
            held[parent[i]] = held.get(parent[i], 0) + held.get(i, 0)
    need = weight_of(like)
    column = max(i for i, w in held.items() if w == need)  # they nest: the deepest comes last
    if _depth(walker, column) < 2:
        return content, links
    end = walker.end[column]
    beside = {b for b in links if not column <= b.owner < end}
    if not beside:
        return content, links
    return [b for b in content if b not in beside], [b for b in links if b not in beside]


#: A URL or an absolute path in a line of text ("https://a.example/x", "/docs/a.html").
POINTER_RE = re.compile(r"(?:\bhttps?://|(?<!\S)/)\S+")


def is_pointer(line: str) -> bool:
    """Whether a line names a URL or a path and at most three words beside it ("Printed from
    /a/b.html", "Source: https://a.example/x")."""
    if "/" not in line:  # (both of POINTER_RE's forms hold one)
        return False
    rest, found = POINTER_RE.subn("", line)
    return bool(found) and len(rest.split()) <= 3


def _own_heading(block: Block, heading: str) -> bool:
    """Whether ``block`` is the page's heading ``heading`` itself, not a link to it (a sidebar's)."""
    return _is_heading(block, heading) and not is_link_list(block)


#: A line shorter than this is a cell that :func:`block_rows` joins with the other cells of its row
#: (``novelty.WINDOW``: a shorter line alone never counts as added).
ROW_CHARS = 16


def block_rows(walker: Walker, blocks: list[Block]) -> list[str]:
    """The rows of ``blocks`` (in page order): each run of two or more blocks under
    :data:`ROW_CHARS` characters that share their row, the smallest element that holds a block
    and one of its neighbours (a ``<tr>`` for a table's cells, the list for its items), joined by
    spaces."""
    parent, end = walker.parent, walker.end

    def common(a: int, b: int) -> int:  # the smallest element holding elements a and b
        a, b = min(a, b), max(a, b)
        while a and end[a] <= b:
            a = parent[a]
        return a

    short = [len(b.text) < ROW_CHARS for b in blocks] + [False]
    rows: list[str] = []
    run: list[str] = []
    row = -1
    for i, block in enumerate(blocks):
        # Of the elements it shares with its short neighbours, the smaller (the later one: both
        # hold it) is its row; -1: none (a long block, or no short neighbour).
        mine = -1
        if short[i]:
            if i and short[i - 1]:
                mine = common(blocks[i - 1].owner, block.owner)
            if short[i + 1]:
                mine = max(mine, common(block.owner, blocks[i + 1].owner))
        if mine != row or mine < 0:
            if len(run) > 1:
                rows.append(" ".join(run))
            run = []
        row = mine
        if mine >= 0:
            run.append(block.text)
    if len(run) > 1:
        rows.append(" ".join(run))
    return rows
