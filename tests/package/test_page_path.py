"""One page's way through the layers, traced: from the Scrapy hook down to the store write and
back, each call into a module of another layer goes down (never from the store back into the
decision, nor from any layer into the glue), and the glue calls the fingerprint layer once and the
decision once.

``PYTHONPATH=tests python tests/package/test_page_path.py`` prints the path (each call into another module, the
caller's module first).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from helpers.layers import LAYERS, is_upward
from scrapy import Spider
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

import scrapy_simhash
from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware

PACKAGE = Path(scrapy_simhash.__file__).resolve().parent

_WORDS = " ".join(f"word{i} and more text about topic {i % 17}" for i in range(120))
PAGE = (
    "<html><head><meta charset='utf-8'><title>A page</title></head><body><nav><a href='/'>Home</a></nav>"
    f"<article><h1>A page</h1><p>{_WORDS}</p></article><footer>Site footer</footer></body></html>"
).encode()


class _Spider(Spider):
    name = "path"


def _module(filename: str) -> str | None:
    """The package module of a code object's file (``store/index.py``), ``None`` outside it."""
    path = Path(filename).resolve()
    return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else None


def _layer(module: str) -> str | None:
    head = module.split("/")[0]
    return head if head in LAYERS else None


def page_path(tmp_path: Path) -> list[tuple[str | None, str, str]]:
    """The calls from one module into another while the spider middleware handles one page (the
    second of a crawl: the first opened everything), as ``(caller module, callee module, function)``."""
    crawler = get_crawler(_Spider, {"SIMHASH_ENABLED": True, "SIMHASH_DIR": str(tmp_path)})
    crawler.spider = _Spider()
    mw = SimhashSpiderMiddleware.from_crawler(crawler)
    mw.spider_opened(crawler.spider)

    def response(url: str) -> HtmlResponse:
        return HtmlResponse(url, body=PAGE, request=Request(url), encoding="utf-8")

    list(mw.process_spider_output(response("http://a.test/first"), [], crawler.spider))
    page = response("http://a.test/second")
    calls: list[tuple[str | None, str, str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = _module(frame.f_code.co_filename)
        caller = _module(frame.f_back.f_code.co_filename) if frame.f_back is not None else None
        if callee is not None and caller != callee:
            calls.append((caller, callee, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        list(mw.process_spider_output(page, [], crawler.spider))
    finally:
        sys.setprofile(None)
    mw.spider_closed(crawler.spider)
    return calls


def test_a_page_only_goes_down_the_layers(tmp_path: Path) -> None:
    calls = page_path(tmp_path)
    assert any(callee.startswith("store/") for _, callee, _ in calls)  # it reached the store
    upward = [
        (caller, callee, name)
        for caller, callee, name in calls
        if caller is not None and _layer(caller) is not None and is_upward(_layer(caller), _layer(callee))
    ]
    assert upward == []


def test_the_glue_calls_the_fingerprint_layer_once_and_the_decision_once(tmp_path: Path) -> None:
    down = [
        f"{callee}:{name}"
        for caller, callee, name in page_path(tmp_path)
        if caller is not None and _layer(caller) == "scrapy" and _layer(callee) not in (None, "scrapy")
    ]
    # The page's verdict and its fingerprint's stats are read from what the two calls returned
    # (an enum's property, a method of the result): no layer below is called for them.
    calls = [call for call in down if not call.endswith((":stat", ":stats"))]
    assert calls == ["fingerprint/simhash.py:fingerprint_page", "decision/tracker.py:observe"]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for caller, callee, name in page_path(Path(tmp)):
            print(f"{caller or '(Scrapy)'} -> {callee}:{name}")
