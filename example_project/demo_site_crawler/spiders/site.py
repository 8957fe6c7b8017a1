"""The demo spider: follows every link of the bundled site and yields one item per article page."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response, TextResponse


class SiteSpider(scrapy.Spider):
    """Crawls the demo site from ``start_url`` (``-a start_url=http://127.0.0.1:PORT/index.html``).

    ``-a page_log=PATH`` writes one JSON line per response (URL, status, the verdict that
    scrapy-simhash put in ``response.meta``), flushed at once, so that a test can watch a crawl
    that is killed halfway.
    """

    name = "site"

    def __init__(
        self, start_url: str = "http://127.0.0.1:8000/index.html", page_log: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]
        host = urlsplit(start_url).hostname or "127.0.0.1"
        self.allowed_domains = [host]
        self._page_log = open(page_log, "a", encoding="utf-8", buffering=1) if page_log else None  # noqa: SIM115

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[Any]:  # Scrapy < 2.13 calls this one directly
        # Incremental crawls need nothing here: the known URLs due for a recrawl are put first by
        # scrapy-simhash's spider middleware.
        # dont_filter=False: the index page links to itself, and must not be fetched twice.
        # simhash_force: fetched on every run even when not due, to find new pages.
        for url in self.start_urls:
            yield scrapy.Request(url, dont_filter=False, meta={"simhash_force": True})

    def closed(self, reason: str) -> None:
        if self._page_log is not None:
            self._page_log.close()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        if not isinstance(response, TextResponse):  # the PDF and the image: nothing to parse
            self._log(response, False)
            return
        is_article = response.css('meta[name="page-type"]::attr(content)').get() == "article"
        self._log(response, is_article)
        if is_article:
            title = response.css("h1::text, h2.headline::text, td.title b::text").get() or response.css(
                "title::text"
            ).get("")
            yield {
                "url": response.url,
                "title": title.strip(),
                "lang": "zh" if response.css("html[lang^=zh]") or "晨光网" in response.text else "en",
            }
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)

    def _log(self, response: Response, is_article: bool) -> None:
        if self._page_log is None:
            return
        meta = response.meta
        self._page_log.write(
            json.dumps(
                {
                    "url": response.url,
                    "status": response.status,
                    "article": is_article,
                    "verdict": meta.get("simhash_verdict"),
                    "distance": meta.get("simhash_distance"),
                    "duplicate_of": meta.get("simhash_duplicate_of"),
                },
                ensure_ascii=False,
            )
            + "\n"
        )
