"""Settings of the demo project. scrapy-simhash is switched on by the three lines marked below."""

BOT_NAME = "demo_site_crawler"
SPIDER_MODULES = ["demo_site_crawler.spiders"]
NEWSPIDER_MODULE = "demo_site_crawler.spiders"

# --- scrapy-simhash: these three lines are all a project needs -----------------------------------
SPIDER_MIDDLEWARES = {"scrapy_simhash.SimhashSpiderMiddleware": 950}
SIMHASH_ENABLED = True
SIMHASH_ITEM_FIELD = "simhash"  # optional: write the fingerprint, verdict and distance into each item
# Or, instead of the SPIDER_MIDDLEWARES line: ADDONS = {"scrapy_simhash.Addon": 0}
# Incremental crawls (-s SIMHASH_INCREMENTAL=True, or demo.py --incremental): the known URLs due
# for a recrawl enter the crawl by themselves, most valuable first; the downloader middleware drops
# requests to known URLs that are not due and sends If-None-Match / If-Modified-Since.
DOWNLOADER_MIDDLEWARES = {"scrapy_simhash.SimhashRecrawlMiddleware": 580}
# The demo's clock: the real time, SIMHASH_DEMO_DAYS days ahead (environment), so that the steps
# of docs/usage/incremental.rst can show crawls days apart at once (the crawls and `scrapy simhash
# site due` alike).
SIMHASH_CLOCK = "demo_site_crawler.clock.now"
# The index lives in .scrapy/simhash/<spider name> (SIMHASH_DIR, through data_path): it is kept
# between runs, so that the next crawl is incremental; SIMHASH_RESET = True starts from scratch.
# -------------------------------------------------------------------------------------------------

# The demo site is served on 127.0.0.1 by demo.py: no robots.txt, no throttling, no telnet console.
ROBOTSTXT_OBEY = False
CONCURRENT_REQUESTS = 8
DOWNLOAD_DELAY = 0
TELNETCONSOLE_ENABLED = False
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
