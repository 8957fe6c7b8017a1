"""The Scrapy glue: the spider middleware, the item pipeline, the recrawl (downloader) middleware,
the add-on, and the ``SIMHASH_*`` settings they read. The only layer that imports Scrapy; it
imports the layers below it (text, fingerprint, decision, store), never the other way."""
