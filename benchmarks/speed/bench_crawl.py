"""Crawl benchmark: pages/s of one Scrapy crawl of a local 2,000-page site with and without scrapy-simhash.

The site is generated in a temporary directory from real text (Chinese: the CLUECorpusSmall sample in
``../shared/data/zh-text``; English: documents of ``../shared/data/revisions``), about one page in ten
being a near-duplicate of another page under a second template. A Twisted static file server in a
separate process serves it on 127.0.0.1. Each crawl runs in its own process (a real ``CrawlerProcess``)
with the same spider and settings; only ``SIMHASH_ENABLED`` (and ``SIMHASH_TOKENIZER``) differ. Configs
are run in turn, ``--repeats`` times, each repeat starting one config later (with 3 configs and 3
repeats every config runs first, second and third once); the figures are medians, and each ratio is
against two crawls without the middleware measured in the same run: ``off`` (nothing more) and
``off-freeze`` (the middleware's start-up freeze of the garbage collector, ``SIMHASH_GC_FREEZE``, done
alone when the spider opens: what the freeze gives a crawl without us). ``--variant
nofreeze:SIMHASH_GC_FREEZE=false`` measures the middleware without it.

    .venv/bin/python benchmarks/speed/bench_crawl.py [--pages 2000] [--repeats 3] [--concurrency 16]
        [--spiders selectors,noparse] [--configs native,python] [--site generated|real|api]
    .venv/bin/python benchmarks/speed/bench_crawl.py --configs native,floor-pass,floor-store,floor-text,floor-walk,floor-fp,floor-index
    .venv/bin/python benchmarks/speed/bench_crawl.py --stages [--baseline DIR] [--site real]
    .venv/bin/python benchmarks/speed/bench_crawl.py --breakdown [--pages 2000] [--site real] [--baseline DIR] [--functions N]
    .venv/bin/python benchmarks/speed/bench_crawl.py --profile DIR [--configs native] [--spiders selectors]
    .venv/bin/python benchmarks/speed/bench_crawl.py --memory --pages 100000 --repeats 1 --spiders selectors --configs native

Spiders: ``selectors`` parses as real spiders do (``response.css`` for the title and the links, and
follows the links); ``noparse`` never parses: it requests every page of a fixed list and yields one
item per page from its URL alone (no selector, no tree: every parse there is ours).

``--site real``: instead of the generated site, the 250 real news pages of ``../shared/data``
(``scrapinghub-aeb``: English; ``zh-web-cee``: Chinese, most in GBK/GB2312, served as ``text/html``
without a charset, as the decoding must sniff it; without the ``<text id=...>`` wrapper the corpus put
around 49 of them, which no server sends), each also under a tracking-parameter copy of its
URL (``?utm_source=...``: the same bytes, a near-duplicate to drop), crawled from an index page. The
selector spider reads every page's title and links but follows only the index's links (the pages'
own links lead off the served copy).

``--site api``: ``--pages`` pages (a fixed sample) of a real API reference, GTK 4's (Debian's
``libgtk-4-doc``: gi-docgen's pages, 8.7 KB on average, much of each page its class's inherited
members), crawled from an index page like the real news pages, without copies.

``--baseline DIR``: each config also runs as ``<config>-base`` with ``scrapy_simhash`` imported from
``DIR`` (a checkout of the code before a change, e.g. ``git worktree add``), alternating with this
code's in the same run: before and after on the same machine load.

``--configs floor-pass,floor-store,floor-text,floor-walk,floor-fp,floor-index``: instead of the
middleware, a spider middleware that freezes the collector's start-up objects as the middleware
does and does part of its work for each page (``floor.py``): nothing more; one LMDB write;
``Core.page`` of the page's whole text as libxml2 serialises it, and the write; the native walk and
``Core.page`` of all the blocks' text, and the write; the page's fingerprint exactly as the
middleware computes it, and the write; that fingerprint and the index's check-and-add. The
middleware does all that ``floor-fp`` and ``floor-index`` do and more: a speed bar above their
ratio cannot be met by any change to the rest of the decision, the site templates or the stats.

``--variant NAME:SETTING=JSON[,SETTING=JSON]`` (repeatable): one more config, the native one with
these settings (e.g. ``nowide:SIMHASH_WIDE_DISTANCE=0``): what one part of the decision costs the
crawl, against ``native`` in the same run.

``--profile DIR``: one crawl per config and spider under cProfile (the whole crawler process, the
reactor included); ``DIR/<spider>-<config>.prof`` for ``pstats``. With ``--sampler PATH/py-spy``:
py-spy samples the crawler process instead (1,000 samples a second, no tracing overhead), and
``DIR/<spider>-<config>.txt`` holds its collapsed stacks (for ``flamegraph.pl`` or speedscope;
py-spy 0.4.3 once held a ``noparse`` crawl stopped for minutes: the selector spider ran fine).

``--stages``: the crawls time the middleware's stages (``CRAWL_STAGES``: its hooks and what they
call, this thread's CPU clock, each less the garbage collections inside it) and the garbage
collector (``gc.callbacks``) from the first response on: CPU ms/page of each, and the crawler's CPU
increase split into the middleware's own stages, the collector's increase and the rest (what
Scrapy does more with the middleware installed). The timers cost a little: take the ratios from a
run without ``--stages``. This is the table of ``benchmarks/results/crawl_profile.md``; the
profilers above find what to time (py-spy's samples of the reactor ran to about the wall time, not
the CPU time, so they give shares, not milliseconds).

``--breakdown``: no crawl; the middleware's ``_outcome`` runs in this process, with the default
settings (the native core where it is installed), on responses built from the site's article pages
(``--site real``: the real pages and their copies), with a CPU clock (this thread's: other
processes' load shows less than in wall time) around each stage: where its time per page goes (CPU
ms/page, medians of ``--repeats`` runs, stages nested as indented). With ``--baseline DIR``, each run
is a child process, this code's and the baseline's alternating (``--repeats`` each), and the two
codes' medians are printed side by side: the per-page cost before and after a change, less moved by
the machine's load than two crawls are (a stage the baseline's code lacks prints ``nan``).
``--functions N`` adds one run under cProfile, inside the decision (``_verdict``) only and without
the stage timers: how many functions its time is spread over, and the ``N`` largest by own time,
each as a share of the decision (the profiler's cost per call inflates small functions: shares, not
milliseconds).

``--memory``: what the crawler's peak resident memory is made of. A thread samples the process's
``/proc/self/status`` every 0.2 s: the peaks of its anonymous memory (``RssAnon``: the Python heap,
lxml's trees, the native core) and of the file pages it has mapped (``RssFile``: the libraries, and
the LMDB store's file, which LMDB reads through a memory map), and the store's size on disk after
the crawl. Linux only.

pages/s counts the responses between the first and the last response of the crawl (start-up, jieba's
dictionary load included, is printed separately as "first response after").
"""

from __future__ import annotations

import argparse
import gzip
import html
import itertools
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
CLUE = DATA / "zh-text" / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz"
REVISIONS = DATA / "revisions" / "pairs.jsonl.gz"
AEB = DATA / "scrapinghub-aeb" / "html"
CEE = DATA / "zh-web-cee" / "original"
API = Path("/usr/share/doc/libgtk-4-doc/gtk4")  # Debian's libgtk-4-doc: GTK 4's reference (gi-docgen)
#: The crawls without us that every run measures, the ratios' denominators.
BASELINES = ("off", "off-freeze")
TRACKING = "?utm_source=newsletter&utm_medium=email&utm_campaign=bench"
PER_LIST = 50  # article links per list page

SERVER_CODE = r"""
import sys
from twisted.internet import reactor
from twisted.web import server, static
root = static.File(sys.argv[1])
root.contentTypes[".html"] = "text/html; charset=utf-8"
root.contentTypes[".htm"] = "text/html"  # the real pages: no charset, the decoding sniffs it
port = reactor.listenTCP(0, server.Site(root), interface="127.0.0.1")
print(port.getHost().port, flush=True)
reactor.run()
"""


# ----------------------------------------------------------------------------------- the site
def _chunks(docs: list[list[str]], n: int, joiner: str) -> list[str]:
    """``n`` texts of about equal size cut from ``docs`` (lists of paragraphs), never across documents."""
    total = sum(len(p) for doc in docs for p in doc)
    size = max(400, total // max(n, 1))
    while True:
        chunks = []
        for doc in docs:
            cur = ""
            for p in doc:
                cur += p + joiner
                if len(cur) >= size:
                    chunks.append(cur)
                    cur = ""
            if len(cur) >= size // 2:
                chunks.append(cur)
        if len(chunks) >= n or size <= 400:
            return chunks[:n]
        size = size * 3 // 4


def _zh_chunks(n: int) -> list[str]:
    seen: set[str] = set()
    lines = []
    with gzip.open(CLUE, "rt", encoding="utf-8") as f:
        for raw in f:
            ln = raw.strip()
            if len(ln) >= 20 and ln[:40] not in seen:  # the sample repeats some documents
                seen.add(ln[:40])
                lines.append(ln)
    return _chunks([lines], n, "\n")


def _en_chunks(n: int) -> list[str]:
    latest: dict[str, str] = {}
    with gzip.open(REVISIONS, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["lang"] == "en":
                latest[rec["path"]] = rec["text_b"]  # one version per document: no accidental duplicates
    docs = [[p for p in latest[k].split("\n\n") if p.strip()] for k in sorted(latest)]
    return _chunks(docs, n, "\n\n")


def _page(title: str, text: str, nav: str, template: int) -> str:
    paras = "\n".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())
    if template == 0:
        return (
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)} - Bench News</title>"
            f"</head><body><header><a href='/index.html'>Bench News</a><nav>{nav}</nav></header>"
            f"<main><article><h1>{html.escape(title)}</h1>{paras}</article></main>"
            "<footer>Bench News. All rights reserved. About | Contact | Privacy</footer></body></html>"
        )
    return (
        f"<html><head><title>{html.escape(title)}_转载</title></head><body><table><tr><td>门户首页 | 新闻 | 财经"
        f"</td></tr><tr><td><b>{html.escape(title)}</b><div class='body'>{paras}</div></td>"
        f"<td>{nav}<p>热点排行</p></td></tr><tr><td>版权所有 网站地图</td></tr></table></body></html>"
    )


def build_site(root: Path, n_pages: int, seed: int = 7) -> int:
    """Writes ``n_pages`` article pages (+ list pages and an index) under ``root``; returns pages written."""
    rng = random.Random(seed)
    n_dup = n_pages // 10
    n_zh = (n_pages - n_dup) * 6 // 10
    zh = _zh_chunks(n_zh)
    en = _en_chunks(n_pages - n_dup - len(zh))
    texts = [("zh", t) for t in zh] + [("en", t) for t in en]
    originals = len(texts)
    if originals < n_pages - n_dup:
        print(
            f"note: the text pool gives {originals:,} distinct texts; the other {n_pages - originals:,} pages "
            "are copies of them under the second template (near-duplicates)"
        )
    for _ in range(n_pages - originals):  # near-duplicates: the same text under the other template
        texts.append(("dup", texts[rng.randrange(originals)][1]))
    nav = "".join(f"<a href='/list/{i}.html'>Section {i}</a> " for i in range(5))
    paths = []
    titles: dict[str, str] = {}
    (root / "a").mkdir(parents=True, exist_ok=True)
    for i, (kind, text) in enumerate(texts):
        title = text.strip().split("\n")[0][:40].strip("# ")
        path = f"/a/{i}.html"
        (root / path[1:]).write_text(_page(title, text, nav, 1 if kind == "dup" else 0), encoding="utf-8")
        paths.append(path)
        titles[path] = title
    rng.shuffle(paths)
    (root / "list").mkdir(exist_ok=True)
    lists = [paths[i : i + PER_LIST] for i in range(0, len(paths), PER_LIST)]
    for n, chunk in enumerate(lists):
        links = "".join(f"<li><a href='{p}'>{html.escape(titles[p])}</a></li>" for p in chunk)
        (root / "list" / f"{n}.html").write_text(
            f"<html><head><meta charset='utf-8'><title>List {n}</title></head><body><ul>{links}</ul></body></html>",
            encoding="utf-8",
        )
    links = "".join(f"<li><a href='/list/{n}.html'>List {n}</a></li>" for n in range(len(lists)))
    (root / "index.html").write_text(f"<html><body><ul>{links}</ul></body></html>", encoding="utf-8")
    return len(texts)


def build_real_site(root: Path) -> int:
    """The real news pages under ``root/p/<n>.htm``, an index linking each page and its
    tracking-parameter copy; returns the number of distinct pages."""
    bodies = [gzip.decompress(p.read_bytes()) for p in sorted(AEB.glob("*.html.gz"))]
    bodies += [_unwrapped(p.read_bytes()) for p in sorted(CEE.glob("*.html"))]
    (root / "p").mkdir(parents=True, exist_ok=True)
    links = []
    for n, body in enumerate(bodies):
        (root / "p" / f"{n}.htm").write_bytes(body)
        links.append(f"<li><a href='/p/{n}.htm'>{n}</a> <a href='/p/{n}.htm{html.escape(TRACKING)}'>{n}</a></li>")
    (root / "index.html").write_text(f"<html><body><ul>{''.join(links)}</ul></body></html>", encoding="utf-8")
    return len(bodies)


def _unwrapped(body: bytes) -> bytes:
    """The page as its server sent it: without the ``<text id=...>`` ... ``</text>`` wrapper that
    the corpus put around 49 of its pages (a server never sends it; the fingerprint removes it,
    but a page with it is parsed a second time, as the spider's tree holds it)."""
    match = _WRAPPER_RE.match(body)
    if match is None:
        return body
    return re.sub(rb"</text>\s*$", b"", body[match.end() :], flags=re.IGNORECASE)


_WRAPPER_RE = re.compile(rb"\s*<text\s+id=[^>]*>", re.IGNORECASE)


def build_api_site(root: Path, n_pages: int, source: Path = API) -> int:
    """``n_pages`` pages of a real API reference (``source``; a fixed sample, in path order) under
    ``root/p/<n>.htm`` and an index linking each once (no copies: the reference has its own
    near-duplicates); returns the number of pages."""
    files = sorted(source.rglob("*.html"))
    files = sorted(random.Random(7).sample(files, min(n_pages, len(files))))
    (root / "p").mkdir(parents=True, exist_ok=True)
    links = []
    for n, path in enumerate(files):
        (root / "p" / f"{n}.htm").write_bytes(path.read_bytes())
        links.append(f"<li><a href='/p/{n}.htm'>{n}</a></li>")
    (root / "index.html").write_text(f"<html><body><ul>{''.join(links)}</ul></body></html>", encoding="utf-8")
    (root / "no-copies").touch()
    return len(files)


def build(site: str, root: Path, n_pages: int) -> int:
    """The site ``--site`` names, under ``root``; returns its number of distinct pages."""
    if site == "real":
        return build_real_site(root)
    if site == "api":
        return build_api_site(root, n_pages)
    return build_site(root, n_pages)


def page_urls(root: Path, base: str) -> list[str]:
    """Every page of the served site that the selector spider reaches (for the spider that never
    parses): the generated site's list and article pages, or the real pages and their copies."""
    if (root / "p").is_dir():
        paths = sorted((root / "p").iterdir(), key=lambda p: int(p.stem))
        return [f"{base}/p/{p.name}{q}" for p in paths for q in _copies(root)]
    lists = sorted((root / "list").iterdir(), key=lambda p: int(p.stem))
    articles = sorted((root / "a").iterdir(), key=lambda p: int(p.stem))
    return [f"{base}/list/{p.name}" for p in lists] + [f"{base}/a/{p.name}" for p in articles]


def _copies(root: Path) -> tuple[str, ...]:
    """The query each page of a ``p/`` site is crawled under: the real news pages' own URL and a
    tracking copy; the API reference's own URL only."""
    return ("",) if (root / "no-copies").exists() else ("", TRACKING)


# ----------------------------------------------------------------------------------- one crawl (child)
def _child(config: dict[str, Any]) -> None:
    import logging

    import scrapy
    from scrapy.crawler import CrawlerProcess

    times: list[float] = []
    cpu: list[float] = []  # process CPU time (all threads) at the first response

    counters: list[dict[str, Any]] = []  # the stage and GC timers: zeroed at the first response

    def _seen() -> None:
        times.append(time.perf_counter())
        if len(times) == 1:
            cpu.append(time.process_time())
            for counter in counters:
                counter.update({k: 0 for k, v in counter.items() if not math.isnan(v)})  # (nan: not timed)

    class SelectorSpider(scrapy.Spider):
        """Parses as real spiders do: the title and the links with ``response.css``, following links."""

        name = "bench"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.start_urls = [config["start_url"]]

        def parse(self, response: Any, **kwargs: Any) -> Any:
            _seen()
            if "/a/" in response.url:
                yield {"url": response.url, "title": response.css("title::text").get()}
            elif "/p/" in response.url:  # a real page: its own links lead off the served copy
                links = response.css("a::attr(href)").getall()
                yield {"url": response.url, "title": response.css("title::text").get(), "links": len(links)}
            else:
                for href in response.css("a::attr(href)").getall():
                    yield response.follow(href)

    class NoParseSpider(scrapy.Spider):
        """Never parses: requests a fixed list of pages, one item per page from its URL."""

        name = "bench"

        async def start(self) -> Any:
            for url in config["urls"]:
                yield scrapy.Request(url)

        def start_requests(self) -> Any:  # Scrapy < 2.13
            for url in config["urls"]:
                yield scrapy.Request(url)

        def parse(self, response: Any, **kwargs: Any) -> Any:
            _seen()
            yield {"url": response.url, "size": len(response.body)}

    BenchSpider = NoParseSpider if config["spider"] == "noparse" else SelectorSpider

    settings = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": config["concurrency"],
        "CONCURRENT_REQUESTS_PER_DOMAIN": config["concurrency"],
        "SPIDER_MIDDLEWARES": {"scrapy_simhash.SimhashSpiderMiddleware": 950},
        "SIMHASH_DIR": config["index_dir"],
        "SIMHASH_RESET": True,
        **config["settings"],
    }
    process = CrawlerProcess(settings)
    peaks: dict[str, int] = {}
    if config.get("memory"):
        _sample_memory(peaks)
    logging.getLogger("scrapy_simhash").setLevel(logging.WARNING)
    crawler = process.create_crawler(BenchSpider)

    def freeze(spider: Any) -> None:  # "off-freeze": the middleware's start-up freeze, without it
        import gc

        if gc.isenabled() and not gc.get_freeze_count():
            gc.collect()
            gc.freeze()

    if config.get("freeze"):
        crawler.signals.connect(freeze, signal=scrapy.signals.spider_opened)
    started = time.perf_counter()
    process.crawl(crawler)
    gc_spent = _gc_timer()
    timed = bool(config.get("stages") and config["settings"].get("SIMHASH_ENABLED"))
    timing: AbstractContextManager[dict[str, float]] = _timing(CRAWL_STAGES) if timed else nullcontext({})
    with timing as spent:
        counters += [spent, gc_spent]
        _start(process, config.get("profile"))
    cpu_s = time.process_time() - cpu[0] if cpu else None
    stats = crawler.stats.get_stats()
    result = {
        "stages_ms": {k: v * 1000 for k, v in spent.items()},
        "gc_ms": gc_spent["gc"] * 1000,
        "gc_collections": [gc_spent["gen0"], gc_spent["gen1"], gc_spent["gen2"]],
        "gc_ms_by_gen": [round(gc_spent.get(f"gen{g}_s", 0) * 1000, 1) for g in range(3)],
        "heap": len(__import__("gc").get_objects()),
        "responses": len(times),
        "first_response_s": times[0] - started if times else None,
        "crawl_s": times[-1] - times[0] if len(times) > 1 else None,
        "cpu_s": cpu_s,
        "fingerprinted": stats.get("simhash/fingerprinted", 0),
        "near_duplicate": stats.get("simhash/near_duplicate", 0),
        "recent": stats.get("simhash/parse/recent", 0),
        "time_ms_total": stats.get("simhash/time_ms_total", 0),
        "items": stats.get("item_scraped_count", 0),
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # Linux: KiB
        "peak_anon_mb": peaks.get("RssAnon", 0) / 1024,
        "peak_file_mb": peaks.get("RssFile", 0) / 1024,
        "store_mb": sum(p.stat().st_size for p in Path(config["index_dir"]).rglob("*") if p.is_file()) / 2**20,
    }
    print("RESULT " + json.dumps(result), flush=True)


def _sample_memory(peaks: dict[str, int]) -> None:
    """Keeps in ``peaks`` the highest ``RssAnon`` and ``RssFile`` (KiB) of this process, sampled by a
    daemon thread every 0.2 s."""
    import threading

    def sample() -> None:
        while True:
            with open("/proc/self/status", encoding="ascii") as status:
                for line in status:
                    name, _, value = line.partition(":")
                    if name in ("RssAnon", "RssFile"):
                        peaks[name] = max(peaks.get(name, 0), int(value.split()[0]))
            time.sleep(0.2)

    threading.Thread(target=sample, daemon=True).start()


def _start(process: Any, profile: str | None) -> None:
    """Runs the crawl, under cProfile when ``profile`` names its output file."""
    if not profile:
        process.start()
        return
    import cProfile

    profiler = cProfile.Profile()
    profiler.runcall(process.start)
    profiler.dump_stats(profile)


def _run(name: str, settings: dict[str, Any], index_dir: Path, **config: Any) -> dict[str, Any]:
    """One crawl in a child process (``config``: start_url, urls, spider, concurrency, profile)."""
    code = settings.get("_code")  # a --baseline config: the child imports scrapy_simhash from there
    config.update(
        settings={k: v for k, v in settings.items() if not k.startswith("_")},
        index_dir=str(index_dir),
        freeze=settings.get("_freeze", False),
    )
    sampler = config.pop("sampler", None)
    sampled = str(config.pop("profile")) if sampler else ""
    config_file = index_dir.with_name(f"{index_dir.name}.json")  # not argv: 100,000 URLs pass no command line
    config_file.write_text(json.dumps(config), encoding="utf-8")
    command = [sys.executable, __file__, "--child", str(config_file)]
    if sampler:  # py-spy samples the child (the thread holding the GIL): collapsed stacks, 1,000 a second
        command = [sampler, "record", "--gil", "-r", "1000", "-f", "raw", "-o", sampled, "--", *command]
    out = subprocess.run(
        command,
        env={**os.environ, "PYTHONPATH": code} if code else None,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{name}: the crawl failed:\n{out.stderr[-3000:]}")


# (label, object path, attribute): each stage's time is summed over the pages; nested stages are
# inside the one above them.
STAGES = (
    ("_outcome (all)", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_outcome"),
    ("  _prepare: checks, canonical key", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_prepare"),
    ("  _fingerprint", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_fingerprint"),
    ("    decode (response_text)", "scrapy_simhash.scrapy.middleware", "response_text|_response_text"),
    ("    extract", "scrapy_simhash.text.extract", "extract"),
    ("      lxml parse", "scrapy_simhash.text.extract", "parse_prepared|_parse"),
    ("      title", "scrapy_simhash.text.extract", "title_and_heading|_title_and_heading|_find_title"),
    ("      walk", "scrapy_simhash.text.extract", "walk_native"),
    ("      decisions", "scrapy_simhash.text.extract", "_choose"),
    ("    fingerprint, sketch, line keys (native)", "scrapy_simhash.fingerprint.simhash:Fingerprinter", "_native_page"),
    ("    fingerprint, sketch (Python path)", "scrapy_simhash.fingerprint.simhash:Fingerprinter", "_python_page"),
    ("    template lines (_template_only)", "scrapy_simhash.fingerprint.simhash:Fingerprinter", "_template_only"),
    ("  _verdict: index, record, store", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_verdict"),
    (
        "    templates.observe",
        "scrapy_simhash.fingerprint.templates:SiteTemplates|scrapy_simhash.text.templates:SiteTemplates",
        "observe",
    ),
    ("  _count (stats)", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_count"),
    ("  _timed (stats)", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_timed"),
    ("  _annotate (meta)", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_annotate"),
)


# The crawl's own stages (``--stages``): the middleware's hooks and what they call, timed inside a
# real crawl; the top level (no indent) adds up to what the middleware runs itself.
CRAWL_STAGES = (
    *STAGES[:1],
    ("  _prepare", *STAGES[1][1:]),
    ("  _fingerprint (the middleware's timer)", *STAGES[2][1:]),
    *STAGES[3:9],
    ("      (text/extract.py:prepare)", "scrapy_simhash.text.extract", "prepare|_prepare"),
    *STAGES[9:12],
    ("    own text (novelty: normalize)", "scrapy_simhash.fingerprint.simhash", "own_text|_own_text"),
    ("  _verdict", *STAGES[12][1:]),
    ("    tracker.observe", "scrapy_simhash.decision.tracker:ChangeTracker", "observe"),
    ("      check_and_add", "scrapy_simhash.decision.tracker:ChangeTracker", "_check_and_add"),
    ("      containment (_adds)", "scrapy_simhash.decision.tracker:ChangeTracker", "_adds"),
    ("      novelty text (zstd)", "scrapy_simhash.fingerprint.novelty:OwnText", "novelty_text|sketch"),
    (
        "      record encoding",
        "scrapy_simhash.store.record:PageRecord|scrapy_simhash.decision.record:PageRecord",
        "to_bytes",
    ),
    ("      record parse", "scrapy_simhash.store.record:PageRecord|scrapy_simhash.decision.record:PageRecord", "parse"),
    ("      store: begin", "scrapy_simhash.store.lmdbstore:LmdbStore", "begin"),
    ("      store: commit", "scrapy_simhash.store.lmdbstore:LmdbStore", "commit"),
    ("    validators", "scrapy_simhash.scrapy.middleware", "validators"),
    *STAGES[13:],
    ("  _inc (stats)", "scrapy_simhash.scrapy.component:IndexComponent", "_inc"),
    ("_filter (each output object)", "scrapy_simhash.scrapy.middleware:SimhashSpiderMiddleware", "_filter"),
)


def _stage_function(where: str, name: str) -> tuple[Any, str, Any] | None:
    """``(owner, name, function)`` of a stage: the first of the ``|``-separated owners
    (``module`` or ``module:Class``) that can be imported and has one of the ``|``-separated names."""
    import importlib

    for place in where.split("|"):
        module, _, cls = place.partition(":")
        try:
            owner: Any = importlib.import_module(module)
        except ImportError:
            continue
        if cls:
            owner = getattr(owner, cls, None)
        for n in name.split("|"):
            if owner is not None and n in owner.__dict__:
                return owner, n, owner.__dict__[n]
    return None


#: Seconds in the garbage collector since the start of :func:`_gc_timer` (0 without it).
_GC_SPENT: dict[str, float] = {"gc": 0.0}


@contextmanager
def _timing(stages: tuple[tuple[str, str, str], ...]) -> Iterator[dict[str, float]]:
    """Wraps each stage's function with this thread's CPU clock; yields the seconds spent in each,
    less the garbage collector's collections that ran inside it (they are counted on their own
    line: the stages and the collector add up). A recursive call counts once: only the outermost
    is timed."""

    spent = dict.fromkeys((label for label, _, _ in stages), 0.0)
    depth = dict.fromkeys(spent, 0)
    undo = []
    for label, where, name in stages:
        # "a|b": the function's (or its module's) name in this code, or in older code (a --baseline
        # checkout); a stage that code does not have is not timed (nan)
        found = _stage_function(where, name)
        if found is None:
            spent[label] = float("nan")
            continue
        owner, name, original = found
        wrapped = original.__func__ if isinstance(original, (classmethod, staticmethod)) else original

        def timed(*args: Any, _f: Any = wrapped, _label: str = label, **kwargs: Any) -> Any:
            if depth[_label]:
                return _f(*args, **kwargs)
            depth[_label] += 1
            t, collected = time.thread_time(), _GC_SPENT["gc"]
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] += time.thread_time() - t - (_GC_SPENT["gc"] - collected)
                depth[_label] -= 1

        kind = type(original) if isinstance(original, (classmethod, staticmethod)) else None
        setattr(owner, name, kind(timed) if kind else timed)
        undo.append((owner, name, original))
    try:
        yield spent
    finally:
        for owner, name, original in undo:
            setattr(owner, name, original)


def _gc_timer() -> dict[str, float]:
    """Seconds spent in the garbage collector (and collections per generation) from now on."""
    import gc

    spent = _GC_SPENT
    spent.update(gen0=0, gen1=0, gen2=0)
    started = [0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            took = time.thread_time() - started[0]
            spent["gc"] += took
            spent[f"gen{info['generation']}"] += 1
            spent[f"gen{info['generation']}_s"] = spent.get(f"gen{info['generation']}_s", 0) + took

    gc.callbacks.append(callback)
    return spent


def breakdown(root: Path, index_dir: Path, settings: dict[str, Any], profile: Any = None) -> dict[str, float]:
    """ms per page of each of :data:`CRAWL_STAGES` over the site's article pages, or the real
    pages and their tracking-parameter copies (see ``--breakdown``); ``profile``: a
    ``cProfile.Profile`` that runs inside the middleware's ``_verdict`` only."""
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    timing: AbstractContextManager[dict[str, float]] = _timing(CRAWL_STAGES) if profile is None else nullcontext({})
    with timing as spent:  # (the profiled run: without the stage timers)
        from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware

        class BenchSpider(Spider):
            name = "bench"

        crawler = get_crawler(BenchSpider, {"SIMHASH_DIR": str(index_dir), "SIMHASH_RESET": True, **settings})
        crawler.spider = BenchSpider.from_crawler(crawler)
        mw = SimhashSpiderMiddleware.from_crawler(crawler)
        if (root / "p").is_dir():  # the real pages: served without a charset
            paths = sorted((root / "p").iterdir(), key=lambda p: int(p.stem))
            bodies = [(f"http://127.0.0.1:8000/p/{p.name}{q}", p.read_bytes()) for p in paths for q in _copies(root)]
            headers = {"Content-Type": "text/html"}
        else:
            paths = sorted((root / "a").iterdir(), key=lambda p: int(p.stem))
            bodies = [(f"http://127.0.0.1:8000/a/{p.name}", p.read_bytes()) for p in paths]
            headers = {"Content-Type": "text/html; charset=utf-8"}
        responses = [HtmlResponse(url=u, body=b, headers=headers, request=Request(u)) for u, b in bodies]
        mw._outcome(responses[0])  # start-up: dictionaries, tables
        if profile is not None:
            verdict = mw._verdict

            def profiled(*args: Any, **kwargs: Any) -> Any:
                profile.enable()
                try:
                    return verdict(*args, **kwargs)
                finally:
                    profile.disable()

            mw._verdict = profiled
        for key in spent:
            if not math.isnan(spent[key]):  # (nan: a stage this code does not have)
                spent[key] = 0.0
        for response in responses[1:]:
            mw._outcome(response)
        mw.spider_closed(crawler.spider)
    return {label: t / (len(responses) - 1) * 1000 for label, t in spent.items()}


def _decision_functions(root: Path, index_dir: Path, top: int) -> None:
    """Print the functions the decision (the middleware's ``_verdict``) spends its time in, by their
    own time under cProfile (``--functions``): how the decision's cost is spread."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    breakdown(root, index_dir, {"SIMHASH_ENABLED": True}, profile)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    own = sorted(
        ((tt, calls, f"{Path(f).name}:{line}({name})") for (f, line, name), (_, calls, tt, _, _) in stats.items()),
        reverse=True,
    )
    pages = next(
        calls
        for (f, _, name), (_, calls, _, _, _) in stats.items()
        if name == "_verdict" and f.endswith("middleware.py")
    )
    total = sum(tt for tt, _, _ in own)
    half = next(i for i, acc in enumerate(itertools.accumulate(tt for tt, _, _ in own), 1) if acc >= total / 2)
    print(
        f"the decision (_verdict) under cProfile, {pages} pages: {len(own)} functions; the {half} largest "
        "by own time make half of it (the profiler's cost inflates each call: shares, not ms)"
    )
    print("  share  calls/page  function")
    for tt, calls, where in own[:top]:
        print(f"  {tt / total:5.1%}  {calls / pages:10.2f}  {where}")


def _pages(n: int, site: str) -> str:
    """What ``--breakdown`` ran on: the real news pages come with their tracking-parameter copies."""
    return f"{n} pages ({site}) and their {n} copies" if site == "real" else f"{n} pages ({site})"


_BREAKDOWN_CHILD = (sys.executable, __file__, "--breakdown", "--json-out", "--repeats", "1")


def _breakdown_against(args: argparse.Namespace) -> int:
    """``--breakdown --baseline DIR``: one breakdown run at a time in a child process, this code's
    and the baseline's alternating, ``--repeats`` each; the medians of each stage side by side."""
    runs: dict[str, list[dict[str, float]]] = {"this code": [], "baseline": []}
    n = 0
    for i in range(max(args.repeats, 1)):
        order = [("this code", None), ("baseline", str(Path(args.baseline).resolve()))]
        for name, code in order if i % 2 == 0 else order[::-1]:
            out = subprocess.run(
                [*_BREAKDOWN_CHILD, "--site", args.site, "--pages", str(args.pages)],
                env={**os.environ, "PYTHONPATH": code} if code else None,
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode:
                raise RuntimeError(f"{name}: the breakdown failed:\n{out.stderr[-3000:]}")
            result = json.loads(out.stdout.strip().splitlines()[-1])
            n = result["pages"]
            runs[name].append(result["stages"])
    print(
        f"where the middleware's time goes: {_pages(n, args.site)}, CPU ms/page, medians of {len(runs['baseline'])} "
        f"runs each, alternating ('baseline': {args.baseline}; nan: a stage that code does not have)"
    )
    print(f"  {'':<42}{'baseline':>10}{'this code':>10}{'change':>9}")
    for label, _, _ in CRAWL_STAGES[:-1]:  # not _filter: no spider output here
        before, after = (statistics.median(r[label] for r in runs[name]) for name in ("baseline", "this code"))
        print(f"  {label:<42}{before:10.3f}{after:10.3f}{after - before:+9.3f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--configs",
        default="native,python",
        help="comma-separated configs besides 'off': jieba, rjieba, native (defaults, the native core), "
        "python (defaults, SIMHASH_NATIVE=False), floor-pass, floor-store, floor-text, floor-walk, floor-fp, "
        "floor-index (floor.py: part of the middleware's work) (default native,python)",
    )
    parser.add_argument(
        "--spiders", default="selectors,noparse", help="comma-separated: selectors, noparse (default both)"
    )
    parser.add_argument("--site", choices=("generated", "real", "api"), default="generated")
    parser.add_argument("--profile", metavar="DIR", help="one crawl per spider and config under cProfile")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run each config with scrapy_simhash imported from DIR (another checkout: '<config>-base')",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:SETTING=JSON[,SETTING=JSON]",
        help="one more config: the native config with these settings, e.g. "
        "'nowide:SIMHASH_WIDE_DISTANCE=0' (what one part of the decision costs the crawl; repeatable)",
    )
    parser.add_argument(
        "--stages",
        action="store_true",
        help="time the middleware's stages inside each crawl (CPU ms/page; the timers cost a little)",
    )
    parser.add_argument(
        "--sampler", metavar="PY_SPY", help="with --profile: sample with this py-spy executable instead of cProfile"
    )
    parser.add_argument("--breakdown", action="store_true", help="where the middleware's time goes (no crawl)")
    parser.add_argument(
        "--functions",
        type=int,
        default=0,
        metavar="N",
        help="with --breakdown: one more run, under cProfile, and the decision's N largest functions by own time",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="the peaks of the crawler's anonymous memory and mapped file pages, and the store's size (Linux)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--json-out", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(json.loads(Path(args.child).read_text(encoding="utf-8")))
        return 0
    if args.site == "api" and not API.is_dir():
        print(f"skipped: --site api needs {API} (apt-get install libgtk-4-doc)")
        return 0
    if not CLUE.exists() or not REVISIONS.exists():
        print(f"skipped: the benchmark needs {CLUE} and {REVISIONS}")
        return 0
    if args.breakdown:
        if args.baseline and not args.json_out:
            return _breakdown_against(args)
        with tempfile.TemporaryDirectory(prefix="bench-crawl-") as tmp:
            root = Path(tmp) / "site"
            n = build(args.site, root, args.pages)
            runs = [
                breakdown(root, Path(tmp) / f"index-{i}", {"SIMHASH_ENABLED": True})
                for i in range(max(args.repeats, 1))
            ]
            if args.json_out:  # one run of --breakdown --baseline's
                print(json.dumps({"pages": n, "stages": runs[0]}))
                return 0
            print(f"where the middleware's time goes: {_pages(n, args.site)}, CPU ms/page, median of {len(runs)} runs")
            for label, _, _ in CRAWL_STAGES[:-1]:  # not _filter: no spider output here
                print(f"  {label:<42}{statistics.median(r[label] for r in runs):8.3f}")
            if args.functions:
                _decision_functions(root, Path(tmp) / "index-profiled", args.functions)
        return 0

    available: dict[str, dict[str, Any]] = {
        "off": {"SIMHASH_ENABLED": False},
        # the crawl without us with the middleware's start-up freeze (SIMHASH_GC_FREEZE) done alone
        "off-freeze": {"SIMHASH_ENABLED": False, "_freeze": True},
        "jieba": {"SIMHASH_ENABLED": True, "SIMHASH_TOKENIZER": "jieba"},
        "rjieba": {"SIMHASH_ENABLED": True, "SIMHASH_TOKENIZER": "rjieba"},
        # the default tokenizer ("auto") with the native core if installed, and without it
        "native": {"SIMHASH_ENABLED": True},
        "python": {"SIMHASH_ENABLED": True, "SIMHASH_NATIVE": False},
        # part of the middleware's work each, instead of it (benchmarks/speed/floor.py)
        **{
            f"floor-{name}": {"SIMHASH_ENABLED": False, "SPIDER_MIDDLEWARES": {f"floor.{cls}": 950}}
            for name, cls in (
                ("pass", "PassFloor"),
                ("store", "StoreFloor"),
                ("text", "TextFloor"),
                ("walk", "WalkFloor"),
                ("fp", "FingerprintFloor"),
                ("index", "IndexFloor"),
            )
        },
    }
    for variant in args.variant:
        name, _, assignments = variant.partition(":")
        try:
            extra = {k: json.loads(v) for k, _, v in (a.partition("=") for a in assignments.split(","))}
        except ValueError:
            parser.error(f"--variant {variant!r}: write NAME:SETTING=JSON[,SETTING=JSON]")
        available[name] = {**available["native"], **extra}
    names = [
        *BASELINES,
        *(c for c in args.configs.split(",") if c and c not in BASELINES),
        *(v.partition(":")[0] for v in args.variant),
    ]
    if args.baseline:  # the same configs on the baseline's code, alternating with this code's
        ours = names[len(BASELINES) :]
        for name in ours:
            available[f"{name}-base"] = {**available[name], "_code": str(Path(args.baseline).resolve())}
        names += [f"{name}-base" for name in ours]
    unknown = [c for c in names if c not in available]
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {sorted(available)}")
    try:
        import rjieba  # noqa: F401
    except ImportError:
        print("rjieba is not installed: no rjieba runs")
        names = [c for c in names if not c.startswith("rjieba")]
    configs = {name: available[name] for name in names}

    spiders = [s for s in args.spiders.split(",") if s]
    if not spiders or set(spiders) - {"selectors", "noparse"}:
        parser.error("--spiders: choose from selectors, noparse")
    with tempfile.TemporaryDirectory(prefix="bench-crawl-") as tmp:
        root = Path(tmp) / "site"
        if args.site == "api":
            n = build_api_site(root, args.pages)
            size = sum(p.stat().st_size for p in (root / "p").iterdir())
            print(
                f"site: {n} pages of a real API reference ({API}, {size / n / 1024:.1f} KB each on average); "
                f"concurrency {args.concurrency}"
            )
        elif args.site == "real":
            n = build_real_site(root)
            size = sum(p.stat().st_size for p in (root / "p").iterdir())
            print(
                f"site: {n} real news pages ({size / n / 1024:.1f} KB each on average), each also under a "
                f"tracking-parameter URL: {2 * n} pages; concurrency {args.concurrency}"
            )
        else:
            n = build_site(root, args.pages)
            size = sum(p.stat().st_size for p in (root / "a").iterdir())
            print(
                f"site: {n} article pages ({size / n / 1024:.1f} KB each on average, ~10% near-duplicates), "
                f"{(n + PER_LIST - 1) // PER_LIST} list pages; concurrency {args.concurrency}"
            )
        server = subprocess.Popen([sys.executable, "-c", SERVER_CODE, str(root)], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            base_url = f"http://127.0.0.1:{int(server.stdout.readline())}"
            common = {
                "start_url": f"{base_url}/index.html",
                "urls": page_urls(root, base_url),
                "concurrency": args.concurrency,
            }
            if args.profile:
                out = Path(args.profile)
                out.mkdir(parents=True, exist_ok=True)
                for spider in spiders:
                    for name, settings in configs.items():
                        prof = out / f"{spider}-{name}.{'txt' if args.sampler else 'prof'}"
                        r = _run(
                            name,
                            settings,
                            Path(tmp) / f"index-{name}",
                            spider=spider,
                            profile=str(prof),
                            sampler=args.sampler,
                            **common,
                        )
                        print(f"  {spider} {name}: {r['responses']} responses, CPU {r['cpu_s']:.2f} s -> {prof}")
                return 0
            results: dict[tuple[str, str], list[dict[str, Any]]] = {(s, c): [] for s in spiders for c in configs}
            for rep in range(args.repeats):
                # Each repeat runs every config, each in turn first: a config run just after another
                # runs a few percent faster than the same code run first (a run of this code against
                # itself as --baseline measured 0.71 against 0.74 with a fixed order).
                order = list(configs.items())
                order = order[rep % len(order) :] + order[: rep % len(order)]
                for spider in spiders:
                    for name, settings in order:
                        r = _run(
                            name,
                            settings,
                            Path(tmp) / f"index-{name}",
                            spider=spider,
                            stages=args.stages,
                            memory=args.memory,
                            **common,
                        )
                        r["pages_s"] = (r["responses"] - 1) / r["crawl_s"]
                        r["pages_cpu_s"] = (r["responses"] - 1) / r["cpu_s"]
                        results[spider, name].append(r)
                        print(
                            f"  repeat {rep + 1} {spider:9} {name:10} {r['responses']} responses in {r['crawl_s']:.2f} s = "
                            f"{r['pages_s']:.0f} pages/s ({r['pages_cpu_s']:.0f} per CPU second); "
                            f"first response after {r['first_response_s']:.2f} s; "
                            f"fingerprinted {r['fingerprinted']} ({r.get('recent', 0)} as a recent page's copy), "
                            f"near-duplicates {r['near_duplicate']}, "
                            f"items {r['items']}, peak RSS {r['max_rss_mb']:.0f} MB",
                            flush=True,
                        )
                        if args.memory:
                            print(
                                f"    peak anonymous memory {r['peak_anon_mb']:.0f} MB, peak mapped file pages "
                                f"{r['peak_file_mb']:.0f} MB; the store's files {r['store_mb']:.0f} MB",
                                flush=True,
                            )
        finally:
            server.terminate()
            server.wait(timeout=10)

    print(
        f"\nmedians over {args.repeats} repeats ({args.site} site, {n} pages); pages per CPU second counts the "
        "crawler process's own CPU time (user+sys), less sensitive than wall time to other processes on the machine; "
        "each ratio against 'off' (the crawl without us) and against 'off-freeze' (the same with the "
        "middleware's start-up freeze of the garbage collector, SIMHASH_GC_FREEZE, done alone):"
    )
    print(
        f"  {'spider':9} {'config':10} {'pages/s':>8} {'ratio':>6} {'/frz':>6} {'pages/CPU s':>12} {'ratio':>6} "
        f"{'/frz':>6} {'CPU ms/page':>12} {'+ms':>6} {'ms/page in middleware':>22} {'peak RSS MB':>12}"
    )
    for spider in spiders:
        base, frozen = (statistics.median(r["pages_s"] for r in results[spider, b]) for b in BASELINES)
        base_cpu, frozen_cpu = (statistics.median(r["pages_cpu_s"] for r in results[spider, b]) for b in BASELINES)
        for name in configs:
            rs = results[spider, name]
            pps = statistics.median(r["pages_s"] for r in rs)
            ppc = statistics.median(r["pages_cpu_s"] for r in rs)
            ms = statistics.median(r["time_ms_total"] / r["fingerprinted"] if r["fingerprinted"] else 0 for r in rs)
            rss = statistics.median(r["max_rss_mb"] for r in rs)
            print(
                f"  {spider:9} {name:10} {pps:8.0f} {pps / base:6.2f} {pps / frozen:6.2f} {ppc:12.0f} "
                f"{ppc / base_cpu:6.2f} {ppc / frozen_cpu:6.2f} {1000 / ppc:12.2f} {1000 / ppc - 1000 / base_cpu:6.2f} "
                f"{ms:22.2f} {rss:12.0f}"
            )
    if args.stages:
        _print_stages(spiders, configs, results)
    return 0


def _print_stages(
    spiders: list[str], configs: dict[str, Any], results: dict[tuple[str, str], list[dict[str, Any]]]
) -> None:
    """The stage timers' CPU ms/page (medians), and the garbage collector's, for each crawl."""
    print(
        "\nwhere the crawler's time goes (CPU ms/page, medians; nested stages indented; 'rest' = the CPU increase less _outcome, _filter and GC):"
    )
    columns = [(s, c) for s in spiders for c in configs]
    print(f"  {'':46}" + "".join(f"{s[:5] + '/' + c:>16}" for s, c in columns))

    def med(key: tuple[str, str], f: Any) -> float:
        rs = results[key]
        return statistics.median(f(r) / (r["responses"] - 1) for r in rs)

    for label, _, _ in CRAWL_STAGES:
        cells = [med(k, lambda r, _l=label: r["stages_ms"].get(_l, 0.0)) for k in columns]
        print(f"  {label:<46}" + "".join(f"{v:16.3f}" for v in cells))
    print(f"  {'garbage collector':<46}" + "".join(f"{med(k, lambda r: r['gc_ms']):16.3f}" for k in columns))
    print(f"  {'crawler CPU':<46}" + "".join(f"{med(k, lambda r: r['cpu_s'] * 1000):16.3f}" for k in columns))
    for s in spiders:
        off = med((s, "off"), lambda r: r["cpu_s"] * 1000)
        gc_off = med((s, "off"), lambda r: r["gc_ms"])
        for c in configs:
            if c in BASELINES:
                continue
            key = (s, c)
            more = med(key, lambda r: r["cpu_s"] * 1000) - off
            ours = med(
                key,
                lambda r: r["stages_ms"].get(CRAWL_STAGES[0][0], 0.0) + r["stages_ms"].get(CRAWL_STAGES[-1][0], 0.0),
            )
            gc_more = med(key, lambda r: r["gc_ms"]) - gc_off
            print(
                f"  {s}/{c}: +{more:.3f} ms/page of crawler CPU = _outcome and _filter {ours:.3f} + GC {gc_more:+.3f} "
                f"+ rest {more - ours - gc_more:+.3f}"
            )


if __name__ == "__main__":
    sys.exit(main())
