"""A plain ``CrawlSpider``: no scrapy-simhash code at all, incremental crawls included."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class PlainSpider(CrawlSpider):
    """Follows every link of the site from ``start_url`` (``-a start_url=...``), PDFs and images
    included. With ``SIMHASH_INCREMENTAL`` the known URLs worth refetching enter the crawl by
    themselves (the spider middleware puts them before the start URL), so nothing here is about
    scrapy-simhash."""

    name = "plain"
    rules = (Rule(LinkExtractor(deny_extensions=()), follow=True),)

    def __init__(self, start_url: str = "http://127.0.0.1:8000/index.html", **kwargs: Any) -> None:
        self.start_urls = [start_url]
        self.allowed_domains = [urlsplit(start_url).hostname or "127.0.0.1"]
        super().__init__(**kwargs)
