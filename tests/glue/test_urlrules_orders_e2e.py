"""End-to-end URL rules in the other order: three real Scrapy crawls, into one index, of a site on
127.0.0.1 where a copy is fetched before the page it copies.

Run 1 fetches copies ``/p<i>?utm_source=a`` only (kept: nothing to compare them with). Run 2 fetches
the originals ``/p<i>``: each is dropped as its copy's near-duplicate, and that is the evidence
that learns ``param:utm_source`` (no rule rewrites ``/p<i>`` into its copy). Run 3 links to copies
``/q<i>?utm_source=a`` of new articles, each linking to its original ``/q<i>`` and to another copy
``/q<i>?utm_source=b``: both skipped, joined by the rule to the copy fetched before them.
"""

from __future__ import annotations

import random
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers import rules_crawl
from helpers.demo import demo
from helpers.pages import EN_ARTICLES, html_page

pytestmark = [pytest.mark.e2e, pytest.mark.glue]

ARTICLES = 6  # SIMHASH_URL_RULES_MIN_SUPPORT's least value
_WORDS = sorted({w.strip(".,:;").lower() for _, ps in EN_ARTICLES.values() for p in ps for w in p.split()})
RUNS: dict[int, list[str]] = {
    1: [f"/p{i}?utm_source=a" for i in range(ARTICLES)],
    2: [f"/p{i}" for i in range(ARTICLES)],
    3: [f"/q{i}?utm_source=a" for i in range(3)],
}
SETTINGS = {
    "SIMHASH_URL_RULES": True,
    "SIMHASH_URL_RULES_MIN_SUPPORT": ARTICLES,
    "SIMHASH_URL_RULES_CONFIDENCE": 0.5,
    "SIMHASH_URL_RULES_EXPLORE": 0.0,
}


def _text(seed: str) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(90)).capitalize() + "." for _ in range(3)]


class Site(demo.SiteServer):
    """The start page of the current ``run``; articles ``/p<i>`` and ``/q<i>`` under any query; a
    ``/q<i>?utm_source=a`` page links to ``/q<i>`` and ``/q<i>?utm_source=b``."""

    def __init__(self) -> None:
        super().__init__()
        self.run = 1
        self.log: list[tuple[int, str]] = []
        self._log_lock = threading.Lock()
        self.start()

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        with self._log_lock:
            self.log.append((self.run, req.path))
        parts = urlsplit(req.path)
        name = parts.path.lstrip("/")
        status = 200
        if parts.path == "/index.html":
            links = "".join(f'<li><a href="{href}">{href}</a></li>' for href in RUNS[self.run])
            body = html_page("Start", _text("start"), sidebar=f"<ul>{links}</ul>")
        elif name[:1] in ("p", "q") and name[1:].isdigit():
            sidebar = ""
            if name[0] == "q" and parts.query == "utm_source=a":
                sidebar = f'<ul><li><a href="/{name}">same</a></li><li><a href="/{name}?utm_source=b">b</a></li></ul>'
            body = html_page(f"Article {name}", _text(name), sidebar=sidebar)
        else:
            status, body = 404, "<html><body>Not found</body></html>"
        data = body.encode()
        req.send_response(status)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def fetched(self, run: int) -> set[str]:
        return {path for r, path in self.log if r == run}


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Site, dict[int, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("urlrules-orders")
    site = Site()
    stats: dict[int, dict[str, Any]] = {}
    try:
        with rules_crawl.CrawlServer() as crawler:
            for run in RUNS:
                site.run = run
                paths = {name: str(tmp / f"{name}{run}") for name in ("stats_path", "page_log", "log_path")}
                settings = {**SETTINGS, "SIMHASH_DIR": str(tmp / "simhash")}
                stats[run] = crawler.run({**paths, "start_url": site.url("/index.html"), "settings": settings})
    finally:
        site.stop()
    return site, stats


def test_originals_dropped_as_the_copies_fetched_before_them_learn_the_rule(crawls) -> None:
    site, stats = crawls
    assert site.fetched(1) >= set(RUNS[1]) and stats[1].get("simhash/url_rules/learned", 0) == 0
    assert site.fetched(2) >= set(RUNS[2])  # never fetched before: none is skipped
    assert stats[2].get("simhash/near_duplicate") == ARTICLES
    assert stats[2].get("simhash/url_rules/learned") == 2  # param:utm_source, value:utm_source=a


def test_the_original_and_another_copy_of_a_copy_fetched_first_are_skipped(crawls) -> None:
    site, stats = crawls
    fetched = site.fetched(3)
    assert set(RUNS[3]) <= fetched
    assert not fetched & {f"/q{i}" for i in range(3)}  # the original: the rule rewrites the copy into it
    assert not fetched & {f"/q{i}?utm_source=b" for i in range(3)}  # both rewrite into /q<i>
    assert stats[3].get("simhash/url_rules/skipped") == 6
