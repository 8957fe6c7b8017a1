"""An alias of :mod:`scrapy_simhash.scrapy.middleware`, kept because users name
``scrapy_simhash.middleware.SimhashSpiderMiddleware`` in ``SPIDER_MIDDLEWARES`` (and the add-on
inserts that path)."""

from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware

__all__ = ["SimhashSpiderMiddleware"]
