"""Scrapy commands of scrapy-simhash (registered under the ``scrapy.commands`` entry point)."""
