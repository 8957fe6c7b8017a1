"""An alias of :mod:`scrapy_simhash.scrapy.pipeline`, kept because users name
``scrapy_simhash.pipeline.SimhashDedupPipeline`` in ``ITEM_PIPELINES`` (and the add-on inserts
that path)."""

from scrapy_simhash.scrapy.pipeline import NearDuplicateItem, SimhashDedupPipeline

__all__ = ["NearDuplicateItem", "SimhashDedupPipeline"]
