"""An alias of :mod:`scrapy_simhash.scrapy.recrawl` (the recrawl middleware), kept because users
name ``scrapy_simhash.incremental.SimhashRecrawlMiddleware`` in ``DOWNLOADER_MIDDLEWARES`` (and
the add-on inserts that path)."""

from scrapy_simhash.scrapy.recrawl import IncrementalSpiderMixin, SimhashRecrawlMiddleware, due_report, due_requests

__all__ = ["IncrementalSpiderMixin", "SimhashRecrawlMiddleware", "due_report", "due_requests"]
