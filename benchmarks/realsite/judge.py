"""The judge of the real-site benchmark: a page's whole visible text, character 5-gram Jaccard, what
scrapy-simhash fingerprinted, and what a drop loses (:func:`content_loss`: the dropped page's own
text that the kept page lacks).

The visible text is computed here with lxml and w3lib (the decoding Scrapy itself uses), not with
``scrapy_simhash.text.extract``, so that the judge does not share the extractor's mistakes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lxml import etree
from lxml import html as lxml_html
from w3lib.encoding import html_to_unicode

#: Two pages whose visible texts have a character 5-gram Jaccard under this are different pages:
#: a near-duplicate verdict between them is a false drop.
FALSE_DROP_JACCARD = 0.5
NGRAM = 5
_INVISIBLE = ("script", "style", "noscript", "template", "head", "title", "iframe", "object", "svg")
_WS = re.compile(r"\s+")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


def decode(body: bytes, content_type: str | None = None) -> str:
    """The page's text, decoded the way Scrapy decodes a response (header, BOM, ``<meta>``, sniffing)."""
    _, text = html_to_unicode(content_type, body)
    return text


def parse(text: str) -> Any:
    """An lxml tree of ``text`` (``None`` for a page lxml cannot parse)."""
    text = _XML_DECLARATION.sub("", text, count=1)  # XHTML pages: lxml refuses a str that declares one
    parser = lxml_html.HTMLParser(huge_tree=True, remove_comments=True, remove_pis=True)
    try:
        return lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return None


def visible_text(root: Any) -> str:
    """All text a reader sees on the page (title included), whitespace collapsed to single spaces.
    Removes the invisible elements from ``root``."""
    if root is None:
        return ""
    title = root.findtext(".//title") or ""
    _drop_invisible(root)
    return collapse(title + " " + " ".join(root.itertext()))


def _drop_invisible(root: Any) -> None:
    for el in list(root.iter(*_INVISIBLE)):
        if el.getparent() is not None:
            el.drop_tree()
    for el in list(root.xpath("//*[@hidden or contains(translate(@style, ' ', ''), 'display:none')]")):
        if el.getparent() is not None:
            el.drop_tree()


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def ngrams(text: str, n: int = NGRAM) -> set[str]:
    """Character n-grams of the lower-cased text (the whole text when it is shorter than ``n``)."""
    text = text.lower()
    if len(text) <= n:
        return {text} if text else set()
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def jaccard(a: str, b: str) -> float:
    """Character 5-gram Jaccard of two texts (1.0 for two empty texts)."""
    ga, gb = ngrams(a), ngrams(b)
    if not ga and not gb:
        return 1.0
    return len(ga & gb) / len(ga | gb)


def fingerprinted(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """``(title, text)`` that scrapy-simhash fingerprints for this page: the one place that asks the
    extractor, so that a richer extraction API needs a change here only."""
    from scrapy_simhash.text.extract import extract

    doc = extract(body, content_type=content_type)
    return doc.title, doc.text


# ----------------------------------------------------------------------------------- content loss
#: A drop loses content when the dropped page holds at least this many characters of its own text in
#: runs that the kept page lacks: such a drop is false, whatever the two pages' resemblance.
LOSS_CHARS = 100
#: A line is the site's template (navigation, headers, footers, "next page" links, copyright lines)
#: when it recurs on at least this share of the site's pages, and on ``TEMPLATE_MIN_PAGES`` at least.
TEMPLATE_SHARE = 0.1
TEMPLATE_MIN_PAGES = 5
#: A character of the dropped page is in the kept page when a ``COVER``-character window around it,
#: within its line, is in the kept page's text; uncovered runs shorter than ``MIN_RUN`` (a word or
#: name changed inside a longer line) are not content the drop loses. A line shorter than about
#: ``2 * COVER`` characters with one word changed has no covered window: it is lost whole.
COVER = 16
MIN_RUN = 16
#: Elements that are the site's chrome rather than the page's own text, by tag, role, or (for
#: containers) class or id, as ``prepare.py`` finds them for print views.
CHROME_TAGS = ("nav", "header", "footer", "aside")
CHROME_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search")
CHROME_NAMES = re.compile(r"nav|sidebar|menu|footer|header|related|breadcrumb|search", re.IGNORECASE)
_CONTAINERS = ("div", "section", "ul", "ol", "table", "td", "form")
#: A container that only its class or id makes chrome but that holds the page's main heading (its
#: first ``<h1>``) and more than this share of its visible text (outside its ``<nav>``, ``<header>``...)
#: is a wrapper of the page, not chrome
#: (QDoc's ``<div class="header">``, left open around the whole page): the chrome inside it is
#: judged element by element. (A sidebar that outweighs a short page holds no main heading.)
WRAPPER_SHARE = 0.5
_LINE_TAGS = frozenset(
    (
        *("p", "li", "pre", "dd", "dt", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "div"),
        *("section", "article", "main", "table", "ul", "ol", "dl", "caption", "figcaption", "address"),
        *("br", "hr", "body", "form", "fieldset", "details", "summary", "figure", "center"),
        *CHROME_TAGS,
    )
)
_LINE = "\U0010fffd"  # marks a line break in a parsed page's text (a private-use character no page uses)
_HEX_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b")
_DIGITS = re.compile(r"\d+")


def is_chrome(el: Any) -> bool:
    """Navigation, header, footer, sidebar and the like: by tag or role, or for a container by its
    class or id (not an inline element's: ``<span class="menuselection">`` is text)."""
    if _chrome_tag(el):
        return True
    return el.tag in _CONTAINERS and bool(CHROME_NAMES.search((el.get("class") or "") + " " + (el.get("id") or "")))


def _chrome_tag(el: Any) -> bool:
    return el.tag in CHROME_TAGS or (el.get("role") or "") in CHROME_ROLES


def _wrapper(el: Any, h1: Any, total: int) -> bool:
    """Whether a chrome element (:func:`is_chrome`) is chrome by its class or id alone, holds the
    page's first ``<h1>`` (``h1``) and more than :data:`WRAPPER_SHARE` of the page's ``total``
    characters of visible text outside its chrome by tag or role."""
    if h1 is None or _chrome_tag(el):
        return False
    if not any(a is el for a in h1.iterancestors()):
        return False
    return len(collapse(" ".join(el.itertext()))) > WRAPPER_SHARE * total


def page_lines(body: bytes, content_type: str | None = None) -> list[str]:
    """The lines of the page's own visible text: its title, then the text outside the chrome
    (:func:`is_chrome`; not a page's wrapper, :func:`_wrapper`), one line per block element (paragraph, list item, table row, code line...),
    whitespace collapsed, empty lines left out."""
    root = parse(decode(body, content_type))
    if root is None:
        return []
    title = collapse(root.findtext(".//title") or "")
    _drop_invisible(root)
    # The chrome by tag or role first, then by class or id: a wrapper's share is of the text left.
    for el in list(root.iter()):
        if isinstance(el.tag, str) and el.getparent() is not None and _chrome_tag(el):
            el.drop_tree()
    total = len(collapse(" ".join(root.itertext())))
    h1 = next(root.iter("h1"), None)
    for el in list(root.iter()):
        if isinstance(el.tag, str) and el.getparent() is not None and is_chrome(el) and not _wrapper(el, h1, total):
            el.drop_tree()
    for pre in root.iter("pre"):  # a code block's lines are lines; elsewhere a newline is a space
        for el in pre.iter():
            el.text = el.text and el.text.replace("\n", _LINE)
            if el is not pre:
                el.tail = el.tail and el.tail.replace("\n", _LINE)
    for el in root.iter(*_LINE_TAGS):
        el.text = _LINE + (el.text or "")
        el.tail = _LINE + (el.tail or "")
    for el in root.iter("td", "th"):  # the cells of a row make one line
        el.tail = " " + (el.tail or "")
    lines = (collapse(line) for line in "".join(root.itertext()).split(_LINE))
    return [line for line in (title, *lines) if line]


def mask(line: str) -> str:
    """The line as the judge compares it: lower-cased, hex hashes (7+ hex digits with a digit and a
    letter) and runs of digits masked, so that a changed date, counter, version or hash is not
    content."""
    return _DIGITS.sub("0", _HEX_HASH.sub("#", line.lower()))


def template_lines(pages: list[list[str]]) -> set[str]:
    """The masked lines that recur on many of the site's pages (``TEMPLATE_SHARE`` of ``pages``,
    ``TEMPLATE_MIN_PAGES`` at least): the template, not a page's own text."""
    counts: dict[str, int] = {}
    for lines in pages:
        for line in {mask(line) for line in lines}:
            counts[line] = counts.get(line, 0) + 1
    floor = max(TEMPLATE_MIN_PAGES, TEMPLATE_SHARE * len(pages))
    return {line for line, n in counts.items() if n >= floor}


@dataclass
class Loss:
    """What a drop loses: ``chars`` of the dropped page's own text in runs the kept page lacks, and
    ``lines``: each line that holds such runs (as the page has it) with its lost characters."""

    chars: int
    lines: list[tuple[str, int]]


def _windows(text: str) -> set[str]:
    return {text[i : i + COVER] for i in range(len(text) - COVER + 1)} if len(text) >= COVER else {text}


def content_loss(dropped: list[str], kept: list[str], template: set[str] | None = None) -> Loss:
    """What dropping the page with lines ``dropped`` loses when the page with lines ``kept`` stays:
    the characters of ``dropped``'s lines (masked, :func:`mask`; ``template`` lines left out) that
    no ``COVER``-character window of ``kept``'s text covers, counted in runs of ``MIN_RUN`` at least."""
    template = template or set()
    have: set[str] = set()
    for line in kept:
        have |= _windows(mask(line))
    lost_chars = 0
    lost_lines: list[tuple[str, int]] = []
    for line in dropped:
        m = mask(line)
        if m in template or len(m) < MIN_RUN:
            continue
        covered = [False] * len(m)
        for i in range(len(m) - COVER + 1):
            if m[i : i + COVER] in have:
                covered[i : i + COVER] = [True] * COVER
        runs = [len(run) for run in "".join(" " if c else "x" for c in covered).split() if len(run) >= MIN_RUN]
        if runs:
            lost_chars += sum(runs)
            lost_lines.append((line, sum(runs)))
    return Loss(lost_chars, lost_lines)


# ----------------------------------------------------------------------------------- content share
def content_share(lines: list[str], fingerprinted_text: str, template: set[str] | None = None) -> tuple[int, int]:
    """``(covered, total)``: of the characters of the page's own text (its ``lines``, as
    :func:`page_lines` gives them: outside its chrome; masked, :func:`mask`; ``template`` lines left
    out), those that are in ``fingerprinted_text`` (a character is when a ``COVER``-character window
    around it, within its line, is in that text; a line shorter than ``COVER``, when it is in that
    text whole), and all of them."""
    template = template or set()
    text = mask(collapse(fingerprinted_text))
    have = _windows(text)
    covered = total = 0
    for line in lines:
        m = mask(line)
        if m in template:
            continue
        total += len(m)
        if len(m) < COVER:
            covered += len(m) if m in text else 0
            continue
        hit = [False] * len(m)
        for i in range(len(m) - COVER + 1):
            if m[i : i + COVER] in have:
                hit[i : i + COVER] = [True] * COVER
        covered += sum(hit)
    return covered, total
