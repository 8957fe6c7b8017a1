"""One parse per page: the lxml tree of a response that the spider's selectors use
(``response.selector.root``, which parsel builds once and Scrapy caches on the response) is the
tree the fingerprint is read from (:func:`shared_tree`).

Whichever runs first builds it: when the spider (or another middleware) has parsed the page, its
tree is taken; when the middleware runs first (a callback that yields: its body has not run yet),
it asks the response for its selector, exactly as the spider's first ``response.css`` would, so
that the spider's selectors reuse that tree. The text layer walks it only where it gives the values
of its own parse (``scrapy_simhash.text.extract.extract``'s ``tree``), else parses the page again.
"""

from __future__ import annotations

from typing import Any

from lxml import etree
from scrapy.http import HtmlResponse, TextResponse

_MISSING = object()


def shared_tree(response: TextResponse, text: str) -> Any:
    """The root of the lxml tree the response's selector has (or, for an HTML response whose
    charset is declared, gets now) for ``text``, the response's text as the fingerprint decodes
    it; ``None`` when there is none to share: a selector of another type (XML, JSON), a text
    that is not the selector's (a page without a declared charset that we decode another way),
    or a selector that cannot be built (the spider's own call would fail the same way).

    An undeclared charset is not resolved here: Scrapy's detection costs more than the parse it
    saves when the spider never parses the page."""
    selector = getattr(response, "_cached_selector", _MISSING)  # Scrapy's cache of response.selector
    if selector is _MISSING:
        return None
    if selector is None:
        if not isinstance(response, HtmlResponse) or not _declared(response) or response.text is not text:
            return None
        try:
            selector = response.selector
        except Exception:  # noqa: BLE001 - the spider's own call reports it; we parse as before
            return None
    elif response.text != text:  # decoded when the selector was made: no detection runs here
        return None
    root = getattr(selector, "root", None)
    if getattr(selector, "type", None) != "html" or not isinstance(root, etree._Element):
        return None
    return root


def _declared(response: TextResponse) -> bool:
    """Whether Scrapy decodes ``response`` with a declared charset (the caller's, a BOM, the HTTP
    header or a ``<meta>``): then ``response.text`` is the middleware's text, at no cost."""
    try:
        return bool(response._declared_encoding())
    except Exception:  # noqa: BLE001 - a Scrapy without it: no shared tree
        return False
