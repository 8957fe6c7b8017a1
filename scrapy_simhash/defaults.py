"""Every ``SIMHASH_*`` setting's default value, in one place.

docs/reference/settings.rst says what each does (a test checks that every name here is documented).
``None`` means "use the default of the component that takes the value" (the :class:`Fingerprinter`
or the :class:`SimhashIndex`), so that those defaults live in one place too.
"""

from __future__ import annotations

#: Switch the middleware and the pipeline on.
SIMHASH_ENABLED = False

#: Directory of the index, through ``scrapy.utils.project.data_path`` (so ``.scrapy/simhash`` inside a project); one
#: sub-directory per spider: ``<dir>/<spider.name>/pages`` and ``/items``.
SIMHASH_DIR = "simhash"

#: Delete the spider's index at start-up (the spider attribute ``simhash_reset = True`` does the same).
SIMHASH_RESET = False

#: Fingerprint size in bits: 64 or 128.
SIMHASH_BITS = 64

#: Largest Hamming distance at which pages of two different URLs are near-duplicates (k).
SIMHASH_MAX_DISTANCE = 3

#: The wide tier of the near-duplicate decision: a page with no other page within SIMHASH_MAX_DISTANCE is still a near-
#: duplicate of one at a distance up to this that its lookup finds (sharing a table key, or one bit away from one) when
#: both pages' change sketches fill at least half of their slots (no short or template-only page) and estimate a
#: Jaccard similarity of at least SIMHASH_WIDE_SIMILARITY (``simhash/duplicate/wide``).
SIMHASH_WIDE_DISTANCE = 12
SIMHASH_WIDE_SIMILARITY = 0.75
#: A page within SIMHASH_MAX_DISTANCE of a kept page is its near-duplicate only when their change sketches do not
#: disagree: when both fill at least half of their slots and estimate a Jaccard similarity under this, the page is kept
#: (``simhash/kept/unlike``).
SIMHASH_NEAR_SIMILARITY = 0.6
#: A page that resembles a kept page (any tier, a short page's copy, a template-only page's copy) is dropped only when
#: its own text adds fewer than this many characters to the kept page's (numbers, dates and hashes masked, its site's
#: template lines out: ``scrapy_simhash.fingerprint.novelty``); else it is kept (``simhash/kept/adds``), and so is a
#: page whose own heading names something else than the kept page's (``simhash/kept/heading``).
SIMHASH_KEEP_ADDS = 100

#: The most bytes of a kept page's novelty evidence (what SIMHASH_KEEP_ADDS measures a page that resembles it against;
#: stored apart from its record): its text compressed, else a sample of it, when that fits, else none: the pages that
#: resemble it are then kept (``simhash/evidence_missing``).
SIMHASH_EVIDENCE_MAX_BYTES = 262144

#: Index layout: the fingerprint is split into this many blocks (> SIMHASH_MAX_DISTANCE).
SIMHASH_BLOCKS = None

#: A page fetched again whose change distance (to its previous fingerprint) is above this is "changed"; at or under it,
#: "unchanged" (dates, counters and other noise move a few bits).
SIMHASH_CHANGE_THRESHOLD = 3
#: A refetched page is also ``changed`` when its change sketch (a MinHash of the word 3-shingles of its body text, kept
#: in its record) estimates a Jaccard similarity to the last fetch below this; 0 turns the sketch off.
SIMHASH_CHANGE_SIMILARITY = 0.9

#: Fingerprinter options (``None``: the Fingerprinter's own default): feature mode, weighting, tokenizer ("auto":
#: rjieba when a version verified to give jieba's tokens is installed, else jieba, same fingerprints either way;
#: "jieba"; "rjieba"), short-text fallback below this many features, words per shingle, jieba's HMM, main content
#: (True) or all visible text (False).
SIMHASH_FEATURES = None
SIMHASH_WEIGHTING = None
SIMHASH_TOKENIZER = None
SIMHASH_MIN_FEATURES = None
SIMHASH_SHINGLE_SIZE = None
SIMHASH_HMM = None
SIMHASH_MAIN_CONTENT = None
#: The native core (``pip install ./native`` from a checkout): ``None`` uses it when it is installed, ``False`` never
#: (the Python path), ``True`` requires it.
SIMHASH_NATIVE = None

#: Hold back items of pages that did not change since the last crawl (incremental export).
SIMHASH_DROP_UNCHANGED = True

#: Keep the requests found on near-duplicate pages (False: drop them, counted as ``simhash/requests_dropped``).
SIMHASH_FOLLOW_DUPLICATES = True

#: Item field that receives the page's fingerprint information (a dict); ``None``: none.
SIMHASH_ITEM_FIELD = None

#: Pipeline: item fields whose text is fingerprinted (``["title", "body"]``); empty: the pipeline is off.
SIMHASH_ITEM_FIELDS = None

#: Pipeline: item field that names the item (its URL) in the index and in drop messages.
SIMHASH_ITEM_KEY_FIELD = "url"

#: Responses with a body larger than this (bytes) are not fingerprinted (counted as ``simhash/skipped/too_large``); 0:
#: no limit.
SIMHASH_MAX_BODY_SIZE = 4 * 1024 * 1024

#: Log every near-duplicate at INFO, not only the first one.
SIMHASH_DEBUG = False

#: Count distances per value under ``simhash/distance/<d>``.
SIMHASH_STATS_VERBOSE = False

#: When the spider opens: one full garbage collection, then ``gc.freeze()`` of every object then alive in the process,
#: until the last middleware closes (each later full collection skips them).
SIMHASH_GC_FREEZE = True

#: The store class (dotted path, or the class): where fingerprints and records are kept.
SIMHASH_STORE = "scrapy_simhash.store.LmdbStore"

#: LMDB store: initial map size in bytes (the store grows it when it fills).
SIMHASH_LMDB_MAP_SIZE = 1 << 30

#: LMDB store: fsync every commit.
SIMHASH_DURABLE = False

#: Redis store: the server (``redis://host:port/db``); ``None``: scrapy-redis's ``REDIS_URL`` (with its
#: ``REDIS_PARAMS``), else ``redis://127.0.0.1:6379/0``.
SIMHASH_REDIS_URL = None

#: Redis store: key prefix of the spider's indexes (``%(spider)s``: its name); an index's keys are
#: ``{<prefix>:pages}:...`` (a hash tag: one index in one Redis Cluster slot).
SIMHASH_REDIS_PREFIX = "simhash:%(spider)s"

#: Largest number of candidates verified per lookup: a hot bucket (thousands of pages of one template) must not stall
#: the crawl.
SIMHASH_MAX_CANDIDATES = 20_000

#: Number of past fingerprints (with their change distances) kept per URL.
SIMHASH_HISTORY_SIZE = 8

# -- incremental crawls (SimhashRecrawlMiddleware, a downloader middleware) ---------------------

#: Incremental mode: each crawl selects the known URLs it fetches again (the due ones, or with SIMHASH_RECRAWL_BUDGET
#: the most valuable ones), which enter the crawl by themselves before the spider's start requests; requests to other
#: known URLs are dropped before download (``simhash/not_due``), new ones get SIMHASH_NEW_PRIORITY.
SIMHASH_INCREMENTAL = False

#: The recrawl policy (dotted path, or the class): ``scrapy_simhash.schedule.FreshnessPolicy`` (ours),
#: ``scrapy_simhash.schedule.NutchAdaptivePolicy`` (Apache Nutch's) or ``scrapy_simhash.schedule.FixedIntervalPolicy``;
#: built with the three intervals below and SIMHASH_RECRAWL_POLICY_OPTIONS as keyword arguments.
SIMHASH_RECRAWL_POLICY = "scrapy_simhash.schedule.FreshnessPolicy"

#: A new URL's first recrawl interval, and the shortest and longest interval (seconds).
SIMHASH_RECRAWL_INTERVAL = 24 * 3600
SIMHASH_RECRAWL_MIN_INTERVAL = 3600
SIMHASH_RECRAWL_MAX_INTERVAL = 90 * 24 * 3600

#: More keyword arguments for the policy, a dict (``{"size_exponent": 0.5}`` for FreshnessPolicy).
SIMHASH_RECRAWL_POLICY_OPTIONS = None

#: Incremental mode: what is added to the Scrapy priority of a request to a URL never seen before.
SIMHASH_NEW_PRIORITY = 100

#: Incremental mode: pages per run.
SIMHASH_RECRAWL_BUDGET = 0

#: Send ``If-None-Match`` / ``If-Modified-Since`` with the stored ETag / Last-Modified; a 304 answer is an unchanged
#: fetch (``simhash/not_modified``), not fingerprinted.
SIMHASH_CONDITIONAL_REQUESTS = True

#: A known URL that answers 404 or 410 leaves the near-duplicate index; its record is kept, marked gone and checked
#: again after SIMHASH_RECRAWL_MAX_INTERVAL ("keep"), or deleted ("remove").
SIMHASH_GONE = "keep"

#: The clock (dotted path, or a callable returning Unix seconds); ``None``: ``time.time``.
SIMHASH_CLOCK = None

# -- URL rules (SimhashUrlRulesMiddleware, a downloader middleware) ------------------------------

#: Learn, per host, which URL differences never change the page (a query parameter, a ``param=value`` pair,
#: ``index.html``, a trailing slash, a first path segment) from the crawl's own near-duplicate verdicts, and skip
#: before download a request that a learned rule joins to a URL fetched before (``simhash/url_rules/skipped``).
SIMHASH_URL_RULES = False

#: URL rules: the least number of copies (pairs of fetched URLs it joins, decided near-duplicates that add nothing, in
#: either order) a rule needs before it is applied (MaybeDont needs 5).
SIMHASH_URL_RULES_MIN_SUPPORT = 10

#: URL rules: the least Wilson lower bound (95%) of a rule's share of copies among the pairs it joined; a pair that
#: differs or adds vetoes the rule at once.
SIMHASH_URL_RULES_CONFIDENCE = 0.7

#: URL rules: the share of the requests a rule would skip that are fetched all the same, to check the rule again (one
#: that adds content vetoes it); chosen by a hash of the URL, the same every run.
SIMHASH_URL_RULES_EXPLORE = 0.05
