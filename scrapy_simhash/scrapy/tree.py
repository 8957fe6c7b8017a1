"""One parse per page: the lxml tree of a response that the spider's selectors use
(``response.selector.root``, which parsel builds once and Scrapy caches on the response) is the
tree the fingerprint is read from (:func:`shared_tree`).

Whichever runs first builds it: when the spider (or another middleware) has parsed the page, its
tree is taken; when the middleware runs first (a callback that yields: its body has not run yet),
it asks the response for its selector, exactly as the spider's first ``response.css`` would, so
that the spider's selectors reuse that tree. The text layer walks it only where it gives the values
of its own parse (``scrapy_simhash.text.extract.extract``'s ``tree``), else parses the page again.
A tree the spider changed before the middleware ran (a callback that returns a list after
``SelectorList.drop()``) is read as it is then: what the spider removed is not fingerprinted.
Once the spider's output for the page has passed, :func:`release_tree` frees the tree with the
response.
"""

from __future__ import annotations

from typing import Any

from lxml import etree
from scrapy.http import HtmlResponse, Response, TextResponse

from scrapy_simhash.scrapy._compat import NO_CACHE, cached_selector, declared_encoding, drop_cached_selector
from scrapy_simhash.text.charset import MAX_HTML_CHARS


def shared_tree(response: TextResponse, text: str) -> tuple[Any, str | None]:
    """``(root, None)``: the root of the lxml tree the response's selector has (or, for an HTML
    response, gets now) for ``text``, the response's text as the fingerprint decodes it; or
    ``(None, why)`` when there is none to share: "charset" (a page without a declared charset that
    is not UTF-8: Scrapy's detection costs more than the parse it would save, and may decode it
    otherwise), "selector" (a selector of another type, or one that cannot be built: the spider's
    own call fails the same way), "response" (not an HTML response, nothing parsed yet: parsel
    would choose its type from the body), "size" (over ``MAX_HTML_CHARS``: our parse is of a cut
    page, so no tree is built for it), "scrapy" (a Scrapy that does not cache it)."""
    selector = cached_selector(response)
    if selector is NO_CACHE:
        return None, "scrapy"
    if selector is None:
        if not isinstance(response, HtmlResponse):
            return None, "response"
        if len(text) > MAX_HTML_CHARS:  # ours is cut before parsing: its tree could not be read
            return None, "size"
        if not _decodes_alike(response, text):
            return None, "charset"
        try:
            selector = response.selector
        except Exception:  # noqa: BLE001 - the spider's own call reports it; we parse as before
            return None, "selector"
    elif response.text != text:  # decoded when the selector was made: no detection runs here
        return None, "charset"
    root = getattr(selector, "root", None)
    if getattr(selector, "type", None) != "html" or not isinstance(root, etree._Element):
        return None, "selector"
    return root, None


def release_tree(response: Response) -> None:
    """The response lets go of its selector (Scrapy's cache of ``response.selector``, with the
    page's lxml tree), once the spider's output for the page has passed. The selector holds the
    response (``selector.response``), so the two would be freed only by a cyclic collection: a
    crawl of large pages then holds many dead trees at once, as many as the collector's timing
    lets wait. A later ``response.css`` (on a response the spider kept) parses the page again."""
    drop_cached_selector(response)


def _decodes_alike(response: TextResponse, text: str) -> bool:
    """Whether ``response.text`` is ``text``, found without running Scrapy's charset detection
    where it is slow: a declared charset (the caller's, a BOM, the HTTP header, a ``<meta>``: then
    the middleware's text is ``response.text`` itself), or a body that is UTF-8 (then Scrapy's
    detection decodes it as UTF-8 too: ASCII first, then UTF-8)."""
    if declared_encoding(response):
        return response.text is text
    try:
        response.body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return response.text == text
