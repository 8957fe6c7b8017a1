"""The judge of the real-site benchmark: a page's whole visible text, character 5-gram Jaccard, and
what scrapy-simhash fingerprinted.

The visible text is computed here with lxml and w3lib (the decoding Scrapy itself uses), not with
``scrapy_simhash.extract``, so that the judge does not share the extractor's mistakes.
"""

from __future__ import annotations

import re
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
    """All text a reader sees on the page (title included), whitespace collapsed to single spaces."""
    if root is None:
        return ""
    title = root.findtext(".//title") or ""
    for el in list(root.iter(*_INVISIBLE)):
        if el.getparent() is not None:
            el.drop_tree()
    for el in list(root.xpath("//*[@hidden or contains(translate(@style, ' ', ''), 'display:none')]")):
        if el.getparent() is not None:
            el.drop_tree()
    return collapse(title + " " + " ".join(root.itertext()))


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
    from scrapy_simhash.extract import extract

    doc = extract(body, content_type=content_type)
    return doc.title, doc.text
