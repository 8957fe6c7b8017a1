"""Every ``SIMHASH_*`` setting's default value, in one place.

The README settings table mirrors this module (a test checks that every name here is documented).
``None`` means "use the default of the component that takes the value" (the :class:`Fingerprinter`
or the :class:`SimhashIndex`), so that those defaults live in one place too.
"""

from __future__ import annotations

#: Switch the middleware and the pipeline on. Off by default, like ``HTTPCACHE_ENABLED``.
SIMHASH_ENABLED = False

#: Directory of the index, through ``scrapy.utils.project.data_path`` (so ``.scrapy/simhash``
#: inside a project); one sub-directory per spider: ``<dir>/<spider.name>/pages`` and ``/items``.
SIMHASH_DIR = "simhash"

#: Delete the spider's index at start-up (the spider attribute ``simhash_reset = True`` does the same).
SIMHASH_RESET = False

#: Fingerprint size in bits: 64 or 128.
SIMHASH_BITS = 64

#: Largest Hamming distance at which pages of two different URLs are near-duplicates (k).
SIMHASH_MAX_DISTANCE = 3

#: Index layout: the fingerprint is split into this many blocks (> SIMHASH_MAX_DISTANCE).
#: ``None``: the index's default layout for SIMHASH_MAX_DISTANCE.
SIMHASH_BLOCKS = None

#: A page fetched again whose change distance (to its previous fingerprint) is above this is
#: "changed"; at or under it, "unchanged" (dates, counters and other noise move a few bits).
SIMHASH_CHANGE_THRESHOLD = 3

#: Fingerprinter options (``None``: the Fingerprinter's own default): feature mode, weighting,
#: tokenizer ("auto": rjieba when a version verified to give jieba's tokens is installed, else
#: jieba, same fingerprints either way; "jieba"; "rjieba"), short-text fallback below this many
#: features, words per shingle, jieba's HMM, main content (True) or all visible text (False).
SIMHASH_FEATURES = None
SIMHASH_WEIGHTING = None
SIMHASH_TOKENIZER = None
SIMHASH_MIN_FEATURES = None
SIMHASH_SHINGLE_SIZE = None
SIMHASH_HMM = None
SIMHASH_MAIN_CONTENT = None

#: Hold back items of pages that did not change since the last crawl (incremental export).
SIMHASH_DROP_UNCHANGED = True

#: Keep the requests found on near-duplicate pages (False: drop them, counted as
#: ``simhash/requests_dropped``).
SIMHASH_FOLLOW_DUPLICATES = True

#: Item field that receives the page's fingerprint information (a dict); ``None``: none.
SIMHASH_ITEM_FIELD = None

#: Pipeline: item fields whose text is fingerprinted (e.g. ``["title", "body"]``).
#: ``None`` or empty: the pipeline is disabled.
SIMHASH_ITEM_FIELDS = None

#: Pipeline: item field that names the item (its URL) in the index and in drop messages.
SIMHASH_ITEM_KEY_FIELD = "url"

#: Responses with a body larger than this (bytes) are not fingerprinted (counted as
#: ``simhash/skipped/too_large``); 0: no limit.
SIMHASH_MAX_BODY_SIZE = 4 * 1024 * 1024

#: Log every near-duplicate at INFO, not only the first one.
SIMHASH_DEBUG = False

#: Count distances per value under ``simhash/distance/<d>``.
SIMHASH_STATS_VERBOSE = False

#: The store class (dotted path, or the class): where fingerprints and records are kept. Built
#: with ``from_crawler(crawler, path)``; it reads its own settings. ``scrapy_simhash.store.MemoryStore``
#: keeps everything in memory (tests, one-off crawls).
SIMHASH_STORE = "scrapy_simhash.store.LmdbStore"

#: LMDB store: initial map size in bytes (the store grows it when it fills).
SIMHASH_LMDB_MAP_SIZE = 1 << 30

#: LMDB store: fsync every commit. False survives a killed process (not a power cut) and is much faster.
SIMHASH_DURABLE = False

#: Redis store: the server (``redis://host:port/db``); ``None``: scrapy-redis's ``REDIS_URL``
#: (with its ``REDIS_PARAMS``), else ``redis://127.0.0.1:6379/0``.
SIMHASH_REDIS_URL = None

#: Redis store: key prefix of the spider's indexes (``%(spider)s``: its name); an index's keys are
#: ``{<prefix>:pages}:...`` (a hash tag: one index in one Redis Cluster slot).
SIMHASH_REDIS_PREFIX = "simhash:%(spider)s"

#: Largest number of candidates verified per lookup (``None``: the index's default).
SIMHASH_MAX_CANDIDATES = None

#: Number of past fingerprints (with their change distances) kept per URL.
SIMHASH_HISTORY_SIZE = 8
