"""End-to-end incremental crawls: three real crawls of a local site whose pages change between runs.

Each run is a real Scrapy crawl of the demo spider (``example_project/demo.py``: engine, scheduler,
downloader with ``SimhashRecrawlMiddleware``, the spider middleware) in a child process, against a
site served here on 127.0.0.1 that logs every request. The crawls happen "days apart" through
``SIMHASH_CLOCK = "demo_site_crawler.clock.now"`` and ``SIMHASH_DEMO_NOW``.

Pages: ``index`` (the start URL, forced on every run, links to all), ``static`` (never changes),
``news`` (rewritten on every run), ``counter`` (only a view counter and a date change), ``removed``
(rewritten in run 2, gone in run 3), ``added`` (404 in run 1, exists from run 2 on) and ``etag``
(answers 304 to a matching ``If-None-Match``). Run 2 is two days after run 1, run 3 a day and a
half after run 2.

The same site with a PDF and an image is crawled by the project's plain ``CrawlSpider``
(``spiders/plain.py``: no scrapy-simhash code) with `SIMHASH_RECRAWL_BUDGET`: runs 2 and 3 fetch
exactly the crawl's selection (read from the index before each run) plus the new page, in
priority order; and, without a budget, a crawl whose start page answers 304 still fetches the
due URLs.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from helpers.demo import demo
from helpers.pages import EN_ARTICLES, guide_page, html_page
from scrapy.settings import Settings
from w3lib.url import canonicalize_url

pytestmark = [pytest.mark.e2e, pytest.mark.glue]  # glue: on the oldest supported Scrapy too (./dev test-min)

DAY = 86400.0
T0 = 1_700_000_000.0
RUN_TIMES = (T0, T0 + 2 * DAY, T0 + 3.5 * DAY)
PAGES = ("static", "news", "counter", "removed", "added", "etag")

CRAWL_SETTINGS: dict[str, Any] = {
    "SIMHASH_INCREMENTAL": True,
    "DOWNLOADER_MIDDLEWARES": {"scrapy_simhash.SimhashRecrawlMiddleware": 580},
    "SIMHASH_CLOCK": "demo_site_crawler.clock.now",
    "CONCURRENT_REQUESTS": 1,  # one request at a time: the server sees the scheduler's order
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",  # equal priorities in the order yielded
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
}

_WORDS = sorted({w.strip(".,:;").lower() for _, ps in EN_ARTICLES.values() for p in ps for w in p.split()})


def _page(title: str, paragraphs: list[str], sidebar: str = "") -> str:
    """A page of :func:`conftest.html_page` without its navigation links (they lead nowhere here)."""
    return re.sub(r"<nav>.*?</nav>", "", html_page(title, paragraphs, sidebar=sidebar))


def _text(seed: str) -> list[str]:
    """Three paragraphs of words drawn with ``seed``: texts of different seeds are far apart."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(90)).capitalize() + "." for _ in range(3)]


def _article(name: str, run: int) -> str:
    """The page ``name`` as served in ``run``."""
    seed = name
    if name == "news" or (name == "removed" and run >= 2):  # rewritten
        seed = f"{name}-{run}"
    paragraphs = _text(seed)
    if name == "counter":  # noise only: a view counter and today's date
        paragraphs.append(f"Viewed {1000 + 137 * run} times. Updated on 2024-03-{10 + run:02d}.")
    page = _page(f"The {name} page", paragraphs)
    return page.replace("<head>", '<head><meta name="page-type" content="article">')


class ChangingSite(demo.SiteServer):
    """The demo's server, serving the changing site of one run (``run``) and logging the requests."""

    def __init__(self) -> None:
        super().__init__()
        self.run = 1
        self.log: list[tuple[int, str, str | None, int]] = []  # (run, path, If-None-Match, status)
        self.start()

    def key(self, name: str) -> str:
        return canonicalize_url(self.url(f"/{name}.html"))

    def _page(self, path: str) -> tuple[int, str, dict[str, str]]:
        name = path.strip("/").removesuffix(".html")
        if name == "index":
            links = "".join(f'<li><a href="/{p}.html">{p}</a></li>' for p in PAGES)
            return 200, _page("Index of the changing site", _text("index"), sidebar=f"<ul>{links}</ul>"), {}
        if name not in PAGES or (name == "added" and self.run < 2) or (name == "removed" and self.run >= 3):
            return 404, "<html><body>Not found</body></html>", {}
        headers = {"ETag": '"etag-v1"'} if name == "etag" else {}
        return 200, _article(name, self.run), headers

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        status, body, headers = self._page(req.path)
        if status == 200 and headers.get("ETag") and req.headers.get("If-None-Match") == headers["ETag"]:
            status, body = 304, ""
        with self._lock:
            self.log.append((self.run, req.path, req.headers.get("If-None-Match"), status))
        data = body.encode()
        req.send_response(status)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        for name, value in headers.items():
            req.send_header(name, value)
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def fetched(self, run: int) -> list[str]:
        return [path.strip("/").removesuffix(".html") for r, path, _, _ in self.log if r == run]


class Runs:
    """Three crawls into one index, each preceded by the due report the crawl should follow."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: int = 3, **settings: Any) -> None:
        self.site = ChangingSite()
        self.index_dir = tmp_path / "simhash"
        self.stats: dict[int, dict[str, Any]] = {}
        self.due: dict[int, list[tuple[str, float, float]]] = {}
        try:
            for run, now in enumerate(RUN_TIMES[:runs], start=1):
                self.site.run = run
                self.due[run] = self._due_report(now) if run > 1 else []
                monkeypatch.setenv("SIMHASH_DEMO_NOW", str(now))
                self.stats[run] = demo.run_crawl(
                    self.site.url("/index.html"),
                    items_path=tmp_path / f"items{run}.jsonl",
                    stats_path=tmp_path / f"stats{run}.json",
                    settings={"SIMHASH_DIR": str(self.index_dir), **CRAWL_SETTINGS, **settings},
                    timeout=120,
                )
        finally:
            self.site.stop()

    def _due_report(self, now: float) -> list[tuple[str, float, float]]:
        from scrapy_simhash import SimhashIndex, due_report

        with SimhashIndex.open(self.index_dir / "site" / "pages") as index:
            return due_report(index, Settings({"SIMHASH_INCREMENTAL": True}), now=now)

    def due_names(self, run: int) -> list[str]:
        keys = {self.site.key(name): name for name in ("index", *PAGES)}
        return [keys[url] for url, _, _ in self.due[run]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return Runs(tmp_path_factory.mktemp("incremental"), monkeypatch)


def _stats(stats: dict[str, Any]) -> dict[str, int]:
    names = ("new", "changed", "unchanged", "near_duplicate", "not_due", "not_modified", "gone")
    return {name: int(stats.get(f"simhash/{name}", 0)) for name in names}


def test_first_run_fetches_everything_and_everything_is_new(runs: Runs) -> None:
    assert sorted(runs.site.fetched(1)) == sorted(["index", *PAGES])
    assert _stats(runs.stats[1]) == {**dict.fromkeys(_stats({}), 0), "new": 6}  # "added" is a 404, unknown


def test_second_run_fetches_the_due_pages_in_priority_order(runs: Runs) -> None:
    due = runs.due_names(2)
    assert sorted(due) == sorted(["index", "static", "news", "counter", "removed", "etag"])
    priorities = [p for _, _, p in runs.due[2]]
    assert priorities == sorted(priorities, reverse=True) and min(priorities) >= 1
    fetched = runs.site.fetched(2)
    _assert_in_priority_order(fetched[: len(due)], runs.due[2], due)  # the due list first
    assert fetched[len(due) :] == ["added"]  # then the new page found on the index page
    assert _stats(runs.stats[2]) == {
        "new": 1,  # added
        "changed": 2,  # news, removed
        "unchanged": 3,  # index, static, counter (noise only)
        "near_duplicate": 0,
        "not_due": 0,
        "not_modified": 1,  # etag
        "gone": 0,
    }
    conditional = [(path, inm, status) for run, path, inm, status in runs.site.log if run == 2 and inm]
    assert conditional == [("/etag.html", '"etag-v1"', 304)]


def _assert_in_priority_order(fetched: list[str], rows: list[tuple[str, float, float]], names: list[str]) -> None:
    """``fetched`` are the selected ``names`` (of ``rows``), each once, in the selection's order,
    except the spider's start URL, which its own start request fetches: in priority order too."""
    assert sorted(fetched) == sorted(names)
    assert [n for n in fetched if n != "index"] == [n for n in names if n != "index"]
    priority = {name: p for name, (_, _, p) in zip(names, rows)}
    assert all(priority[a] >= priority[b] for a, b in itertools.pairwise(fetched))


def test_third_run_fetches_only_due_pages_in_priority_order_and_finds_the_removed_one_gone(runs: Runs) -> None:
    # The two pages that changed in run 2 were probed soon after (a change seen at a long interval),
    # so they are the most overdue; the page added in run 2 is due after its first interval; the
    # pages that did not change (static, noise only, 304) backed off and are not due.
    due = runs.due_names(3)
    assert due == ["news", "removed", "added"]
    priorities = [p for _, _, p in runs.due[3]]
    assert priorities[0] == priorities[1] > priorities[2] >= 1
    assert runs.site.fetched(3) == [*due, "index"]  # index: not due, but forced (the spider's start URL)
    assert _stats(runs.stats[3]) == {
        "new": 0,
        "changed": 1,  # news
        "unchanged": 2,  # added, index
        "near_duplicate": 0,
        "not_due": 3,  # static, counter, etag: linked from the index page, not due
        "not_modified": 0,
        "gone": 1,  # removed
    }
    assert int(runs.stats[3].get("simhash/forced", 0)) == 1


def test_gone_page_left_the_index_and_the_noise_page_backed_off(runs: Runs) -> None:
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.store.record import PageRecord

    with SimhashIndex.open(runs.index_dir / "site" / "pages") as index:
        records = {name: PageRecord.from_bytes(index.get_record(runs.site.key(name)) or b"") for name in PAGES}
        assert index.get(runs.site.key("removed")) is None  # gone: out of the near-duplicate index
        assert index.get(runs.site.key("static")) is not None
    assert records["removed"].gone and not records["static"].gone
    static, news, counter = records["static"], records["news"], records["counter"]
    assert _article("counter", 1) != _article("counter", 2)  # its bytes changed (an MD5 would say so) ...
    assert counter.change_count == 0 and counter.fetch_count == 2  # ... its content did not
    assert counter.next_due == static.next_due  # so it backs off like the static page
    assert news.change_count == 2 and news.next_due is not None and static.next_due is not None
    assert news.next_due < static.next_due
    etag = records["etag"]
    assert etag.etag == '"etag-v1"' and etag.fetch_count == 2 and etag.change_count == 0
    assert etag.next_due == static.next_due  # a 304 is an unchanged fetch


def test_beside_the_http_cache_a_304_is_answered_from_the_cache(tmp_path: Path) -> None:
    # HttpCacheMiddleware (RFC 2616 policy) holds the etag page from run 1: in run 2 it sends its own
    # If-None-Match, turns the server's 304 into its cached 200, and the page is fingerprinted:
    # unchanged, like the other unchanged pages; nothing else differs from run 2 without the cache.
    cache = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_POLICY": "scrapy.extensions.httpcache.RFC2616Policy",
        "HTTPCACHE_DIR": str(tmp_path / "httpcache"),
    }
    with pytest.MonkeyPatch.context() as monkeypatch:
        cached = Runs(tmp_path, monkeypatch, runs=2, **cache)
    assert [(p, inm, status) for run, p, inm, status in cached.site.log if run == 2 and inm] == [
        ("/etag.html", '"etag-v1"', 304)
    ]
    assert sorted(cached.site.fetched(2)) == sorted(["index", *PAGES])
    assert _stats(cached.stats[2]) == {
        "new": 1,
        "changed": 2,
        "unchanged": 4,  # index, static, counter, and etag (the cache's copy)
        "near_duplicate": 0,
        "not_due": 0,
        "not_modified": 0,
        "gone": 0,
    }


# -- a plain CrawlSpider (no scrapy-simhash code), with a budget --------------------------------------

PLAIN_PAGES = (*PAGES, "doc.pdf", "pic.png")
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x1f\x15\xc4\x89" * 4
BUDGET = 4  # known pages per run (of 8 known in run 2)


class AnySite(ChangingSite):
    """:class:`ChangingSite` with a PDF and an image (static bytes, each with an ETag), and the
    index page answering 304 to its own ETag when ``index_etag`` is set."""

    index_etag = False

    def _page(self, path: str) -> tuple[int, str, dict[str, str]]:
        if path == "/index.html":
            links = "".join(f'<li><a href="/{p if "." in p else p + ".html"}">{p}</a></li>' for p in PLAIN_PAGES)
            body = _page("Index of the changing site", _text("index"), sidebar=f"<ul>{links}</ul>")
            return 200, body, {"ETag": '"index-v1"'} if self.index_etag else {}
        return super()._page(path)

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        binary = {"/doc.pdf": (PDF, "application/pdf"), "/pic.png": (PNG, "image/png")}.get(req.path)
        if binary is None:
            super()._handle(req)
            return
        body, content_type = binary
        etag = f'"{req.path.strip("/")}-v1"'
        status = 304 if req.headers.get("If-None-Match") == etag else 200
        with self._lock:
            self.log.append((self.run, req.path, req.headers.get("If-None-Match"), status))
        req.send_response(status)
        req.send_header("Content-Type", content_type)
        req.send_header("ETag", etag)
        data = body if status == 200 else b""
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def fetched(self, run: int) -> list[str]:
        return [path.strip("/").removesuffix(".html") for r, path, _, _ in self.log if r == run]


PLAIN_SETTINGS = {**CRAWL_SETTINGS, "SIMHASH_RECRAWL_BUDGET": BUDGET}


class PlainRuns:
    """Three crawls of :class:`AnySite` by the project's plain ``CrawlSpider``, each preceded by
    the selection (``due_report`` with the budget) that the crawl should follow."""

    def __init__(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        *,
        index_etag: bool = False,
        runs: int = 3,
        **settings: Any,
    ) -> None:
        self.site = AnySite()
        self.site.index_etag = index_etag
        self.index_dir = tmp_path / "simhash"
        self.settings = {"SIMHASH_DIR": str(self.index_dir), **PLAIN_SETTINGS, **settings}
        self.stats: dict[int, dict[str, Any]] = {}
        self.selected: dict[int, list[tuple[str, float, float]]] = {}
        try:
            for run, now in enumerate(RUN_TIMES[:runs], start=1):
                self.site.run = run
                self.selected[run] = self._selection(now) if run > 1 else []
                monkeypatch.setenv("SIMHASH_DEMO_NOW", str(now))
                self.stats[run] = demo.run_crawl(
                    self.site.url("/index.html"),
                    items_path=tmp_path / f"items{run}.jsonl",
                    stats_path=tmp_path / f"stats{run}.json",
                    settings=self.settings,
                    spider="plain",
                    timeout=120,
                )
        finally:
            self.site.stop()

    def _selection(self, now: float) -> list[tuple[str, float, float]]:
        from scrapy_simhash import SimhashIndex, due_report

        with SimhashIndex.open(self.index_dir / "plain" / "pages") as index:
            settings = {k: v for k, v in self.settings.items() if k != "SIMHASH_CLOCK"}  # ``now`` instead
            return due_report(index, Settings(settings), now=now)

    def names(self, run: int) -> list[str]:
        keys = {
            canonicalize_url(self.site.url(f"/{n if '.' in n else n + '.html'}")): n for n in ("index", *PLAIN_PAGES)
        }
        return [keys[url] for url, _, _ in self.selected[run]]


@pytest.fixture(scope="module")
def plain_runs(tmp_path_factory: pytest.TempPathFactory) -> PlainRuns:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return PlainRuns(tmp_path_factory.mktemp("plain"), monkeypatch)


#: What a fetch of each page finds in runs 2 and 3 (the stat it counts).
_FOUND = {
    2: {"index": "unchanged", "static": "unchanged", "news": "changed", "counter": "unchanged",
        "removed": "changed", "etag": "not_modified", "doc.pdf": "not_modified", "pic.png": "not_modified"},
    3: {"index": "unchanged", "static": "unchanged", "news": "changed", "counter": "unchanged",
        "removed": "gone", "etag": "not_modified", "doc.pdf": "not_modified", "pic.png": "not_modified",
        "added": "unchanged"},
}  # fmt: skip


def _plain_stats(stats: dict[str, Any]) -> dict[str, int]:
    names = ("new", "changed", "unchanged", "not_modified", "gone", "due", "forced", "body_hash/new")
    return {name: int(stats.get(f"simhash/{name}", 0)) for name in names}


def test_plain_crawl_spider_first_run_records_every_url_pdf_and_image_included(plain_runs: PlainRuns) -> None:
    assert sorted(plain_runs.site.fetched(1)) == sorted(["index", *PLAIN_PAGES])
    stats = _plain_stats(plain_runs.stats[1])
    assert stats["new"] == 6 and stats["body_hash/new"] == 2  # the pages, then the PDF and the image


@pytest.mark.parametrize("run", [2, 3])
def test_plain_crawl_spider_fetches_exactly_the_selection_in_order_within_the_budget(
    plain_runs: PlainRuns, run: int
) -> None:
    selected = plain_runs.names(run)
    priorities = [p for _, _, p in plain_runs.selected[run]]
    assert len(selected) == BUDGET and priorities == sorted(priorities, reverse=True)
    fetched = plain_runs.site.fetched(run)
    new = ["added"] if run == 2 else []
    forced = [] if "index" in selected else ["index"]  # the spider's start URL (dont_filter): always fetched
    assert sorted(fetched) == sorted([*selected, *forced, *new])  # each once
    known = [name for name in fetched if name not in new and name not in forced]
    _assert_in_priority_order(known, plain_runs.selected[run], selected)
    stats = _plain_stats(plain_runs.stats[run])
    assert stats["due"] == BUDGET and stats["forced"] == len(forced) and stats["new"] == len(new)
    found = [_FOUND[run][name] for name in [*selected, *forced]]
    for name in ("changed", "unchanged", "not_modified", "gone"):
        assert stats[name] == found.count(name), name


def test_plain_crawl_spider_fetches_the_pdf_only_when_selected(plain_runs: PlainRuns) -> None:
    runs = [run for run in (2, 3) if "doc.pdf" in plain_runs.names(run)]
    assert runs and len(runs) < 2  # selected in one of the two runs: the test sees both cases
    for run in (2, 3):
        assert ("doc.pdf" in plain_runs.site.fetched(run)) == (run in runs)
    conditional = [(p, inm, s) for r, p, inm, s in plain_runs.site.log if r in runs and p == "/doc.pdf"]
    assert conditional == [("/doc.pdf", '"doc.pdf-v1"', 304)]


def test_a_crawl_whose_start_page_answers_304_still_fetches_the_due_urls(tmp_path: Path) -> None:
    # No budget: the due times decide. Two days after run 1 every known URL is due; the start page
    # answers 304 (no links come out of it), and the due URLs are fetched all the same.
    with pytest.MonkeyPatch.context() as monkeypatch:
        runs = PlainRuns(tmp_path, monkeypatch, index_etag=True, runs=2, SIMHASH_RECRAWL_BUDGET=0)
    start = [(p, inm, s) for r, p, inm, s in runs.site.log if r == 2 and p == "/index.html"]
    assert start == [("/index.html", '"index-v1"', 304)]
    due = runs.names(2)
    known = ["index", *(name for name in PLAIN_PAGES if name != "added")]  # "added" was a 404 in run 1
    assert sorted(due) == sorted(known)  # every known URL is due
    # all of them fetched, each once, the start page among them; "added" is linked from the start page only
    assert sorted(runs.site.fetched(2)) == sorted(due)
    assert _plain_stats(runs.stats[2])["due"] == len(due)


# -- a known page with one paragraph rewritten ----------------------------------------------------


class GuideSite(demo.SiteServer):
    """An index page and a long guide page whose second paragraph is rewritten from run 2 on
    (``guide_page``: its fingerprint moves 3 bits, its change sketch stays 0.92 alike)."""

    def __init__(self) -> None:
        super().__init__()
        self.run = 1
        self.start()

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        if req.path == "/index.html":
            status, body = 200, _page("Index of the guide", _text("index"), sidebar='<a href="/guide.html">guide</a>')
        elif req.path == "/guide.html":
            status, body = 200, guide_page(self.run, date=f"2024-03-{self.run:02d}")
        else:
            status, body = 404, "<html><body>Not found</body></html>"
        data = body.encode()
        req.send_response(status)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)


@pytest.mark.parametrize("keep_adds", [100, 0])
def test_a_known_page_with_a_paragraph_rewritten_is_exported_again_as_changed(tmp_path: Path, keep_adds: int) -> None:
    site = GuideSite()
    settings = {"SIMHASH_DIR": str(tmp_path / "simhash"), **CRAWL_SETTINGS, "SIMHASH_KEEP_ADDS": keep_adds}
    items, stats = {}, {}
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            for run, now in enumerate(RUN_TIMES[:2], start=1):
                site.run = run
                monkeypatch.setenv("SIMHASH_DEMO_NOW", str(now))
                stats[run] = demo.run_crawl(
                    site.url("/index.html"),
                    items_path=tmp_path / f"items{run}.jsonl",
                    stats_path=tmp_path / f"stats{run}.json",
                    settings=settings,
                    timeout=120,
                )
                items[run] = {item["url"]: item for item in demo.read_jsonl(tmp_path / f"items{run}.jsonl")}
    finally:
        site.stop()
    guide = site.url("/guide.html")
    assert items[1][guide]["simhash"]["verdict"] == "new"
    if not keep_adds:  # the rule off: "unchanged" by resemblance, its item held back, the new paragraph lost
        assert guide not in items[2] and _stats(stats[2])["unchanged"] == 2
        return
    assert items[2][guide]["simhash"]["verdict"] == "changed"
    assert items[2][guide]["simhash"]["distance"] <= 3  # the fingerprint alone would not have seen it
    assert _stats(stats[2])["changed"] == 1 and int(stats[2]["simhash/changed/adds"]) == 1


# -- a damaged index --------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _scrapy_crawl(site: Any, index_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy crawl site`` of the demo project, as a user runs it (SIMHASH_DIR = ``index_dir``)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={site.url('/index.html')}"]
    command += ["-s", f"SIMHASH_DIR={index_dir}", "-s", "LOG_LEVEL=INFO", *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # this checkout
    return subprocess.run(
        command, cwd=ROOT / "example_project", env=env, capture_output=True, text=True, timeout=180, check=False
    )


#: In a child (LMDB aborts the process on some damaged pages): what the command line's ``info`` and
#: the crawl's start-up check (``SimhashIndex.check``) say of the index at ``sys.argv[2]``.
_PROBE = """
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
from scrapy_simhash.commands.cli import main
from scrapy_simhash.errors import StoreError
from scrapy_simhash.store.index import SimhashIndex
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    info = main([sys.argv[2], "info"])
try:
    with SimhashIndex.open(sys.argv[2], readonly=True) as index:
        index.check()
    check = "ok"
except StoreError as exc:
    check = exc.kind
print(info, check)
"""


def _damage_a_page_in_the_middle(pages: Path) -> None:
    """Overwrite with random bytes (seeded) the page nearest the middle of ``data.mdb`` whose damage
    the index's open does not see, the command line reports (``info``: exit status 1) and the
    start-up check finds (LMDB reads a page when it uses it)."""
    data, size = pages / "data.mdb", 4096
    original = data.read_bytes()
    count = len(original) // size
    rng = random.Random(34)
    for page in sorted(range(2, count), key=lambda p: (abs(p - count // 2), p)):  # pages 0, 1: the meta pages
        data.write_bytes(original[: page * size] + rng.randbytes(size) + original[(page + 1) * size :])
        probe = subprocess.run(
            [sys.executable, "-c", _PROBE, str(ROOT), str(pages)], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0 and probe.stdout.split() == ["1", "corrupt"]:
            return
    pytest.fail("no page of data.mdb whose damage the command line and the check both report")


@pytest.mark.slow
def test_a_damaged_index_stops_an_incremental_crawl_with_an_error_and_exit_status_1(tmp_path: Path) -> None:
    # Damage in the middle of data.mdb, after a real crawl, that the open does not see: the command
    # line reports it; the incremental crawl must too (it once treated the damaged records as new
    # or found nothing due, "the index held no known URL", and exited 0).
    from scrapy_simhash.commands.cli import main

    index_dir = tmp_path / "simhash"
    pages = index_dir / "site" / "pages"
    with demo.SiteServer() as site:
        first = _scrapy_crawl(site, index_dir)
        assert first.returncode == 0, first.stderr[-3000:]
        _damage_a_page_in_the_middle(pages)
        assert main([str(pages), "info"]) == 1  # the command line reports it
        damaged = (pages / "data.mdb").read_bytes()
        served = site.served
        result = _scrapy_crawl(site, index_dir, "-s", "SIMHASH_INCREMENTAL=True")
        assert site.served == served, result.stderr[-4000:]  # nothing fetched
    assert result.returncode == 1, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, result.stderr[-3000:]
    assert f"scrapy-simhash cannot start: Could not read the index at {pages} (corrupt: " in errors[0]
    assert "restore the index from a copy, or delete it (SIMHASH_RESET = True, or `scrapy-simhash DIR reset --yes`)" in errors[0]
    assert "no known URL" not in result.stderr
    assert (pages / "data.mdb").read_bytes() == damaged  # left as it was, for the user to restore


def test_a_304_to_a_conditional_request_is_counted_and_not_logged_per_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scrapy's HttpErrorMiddleware logged "Ignoring response <304 ...>" at INFO for each such page
    # (690 lines in one incremental run of a real site): the recrawl middleware ends it, counted.
    site = ChangingSite()
    try:
        for run, now in enumerate(RUN_TIMES[:2], start=1):
            site.run = run
            monkeypatch.setenv("SIMHASH_DEMO_NOW", str(now))
            result = _scrapy_crawl(site, tmp_path / "simhash", "-s", "SIMHASH_INCREMENTAL=True")
            assert result.returncode == 0, result.stderr[-3000:]
    finally:
        site.stop()
    assert [(path, status) for run, path, _, status in site.log if run == 2 and path == "/etag.html"] == [
        ("/etag.html", 304)
    ]
    assert "'simhash/not_modified': 1," in result.stderr
    assert "'downloader/response_status_count/304': 1" in result.stderr
    assert "Ignoring response <304" not in result.stderr and "response_ignored_status_count/304" not in result.stderr
    assert " ERROR: " not in result.stderr
