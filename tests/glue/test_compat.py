"""The Scrapy privates behind ``scrapy_simhash.scrapy._compat`` behave as the package reads them, on
the Scrapy installed (``./dev test`` runs the newest, ``./dev test-min`` the oldest supported)."""

from __future__ import annotations

import codecs

import pytest
from scrapy.http import HtmlResponse, Request, Response, TextResponse
from scrapy.selector import Selector

from scrapy_simhash.scrapy._compat import NO_CACHE, cached_selector, declared_encoding, drop_cached_selector

pytestmark = pytest.mark.glue

URL = "https://a.example/page"


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        ({"Content-Type": "text/html; charset=gbk"}, "<p>中文</p>".encode("gbk"), "gb18030"),  # w3lib reads gbk as its superset
        ({}, b'<meta charset="utf-8"><p>x</p>', "utf-8"),
        ({}, b"\xef\xbb\xbf<p>x</p>", "utf-8"),  # a BOM
        ({}, b"<p>no charset anywhere</p>", None),
        ({"Content-Type": "text/html"}, "<p>\u4e2d</p>".encode("gb18030"), None),
    ],
)
def test_declared_encoding_is_what_the_response_declares(headers, body, expected) -> None:
    response = HtmlResponse(URL, headers=headers, body=body, request=Request(URL))
    got = declared_encoding(response)
    assert (got and codecs.lookup(got).name) == (expected and codecs.lookup(expected).name)


class _Lacking(TextResponse):
    """A response of a Scrapy whose ``_declared_encoding`` is gone, once made."""

    gone = False

    def _declared_encoding(self) -> str | None:
        if self.gone:
            raise AttributeError("_declared_encoding")
        return super()._declared_encoding()


def test_declared_encoding_of_a_response_without_it_is_none() -> None:
    response = _Lacking(URL, body=b"x", encoding="utf-8")
    assert declared_encoding(response) == "utf-8"
    response.gone = True
    assert declared_encoding(response) is None


def test_the_selector_cache_is_read_and_dropped_as_scrapy_builds_it() -> None:
    response = HtmlResponse(URL, body=b"<html><body><p>one</p></body></html>", encoding="utf-8")
    assert cached_selector(response) is None  # nothing parsed yet
    selector = response.selector
    assert isinstance(selector, Selector) and cached_selector(response) is selector
    assert response.css("p::text").get() == "one"  # the spider's call uses the cached tree
    assert response.selector.root is selector.root
    drop_cached_selector(response)
    assert cached_selector(response) is None
    again = response.selector  # parsed again, on demand
    assert again is not selector and again.css("p::text").get() == "one"


def test_a_response_without_the_cache_says_so() -> None:
    assert cached_selector(Response(URL, body=b"x")) is NO_CACHE
    drop_cached_selector(Response(URL, body=b"x"))  # nothing to drop: no error
