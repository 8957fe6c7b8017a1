"""An alias of :mod:`scrapy_simhash.scrapy.recrawl` (the recrawl middleware) and
:mod:`scrapy_simhash.scrapy.selection`, kept because users name
``scrapy_simhash.incremental.SimhashRecrawlMiddleware`` in ``DOWNLOADER_MIDDLEWARES`` (and the
add-on inserts that path)."""

from scrapy_simhash.scrapy.recrawl import SimhashRecrawlMiddleware
from scrapy_simhash.scrapy.selection import IncrementalSpiderMixin, due_report, due_requests

__all__ = ["IncrementalSpiderMixin", "SimhashRecrawlMiddleware", "due_report", "due_requests"]
