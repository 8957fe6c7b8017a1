"""An alias of :mod:`scrapy_simhash.scrapy.addon`, kept because users name
``scrapy_simhash.addon.Addon`` in ``ADDONS``."""

from scrapy_simhash.scrapy.addon import Addon

__all__ = ["Addon"]
