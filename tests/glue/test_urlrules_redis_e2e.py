"""End-to-end URL rules on Redis: two crawl processes, one after the other, on one redis-server
(each with a directory of its own: nothing is shared but the store).

The first process fetches articles ``/p<i>`` and their copies ``/p<i>?utm_source=a`` and learns
``param:utm_source``; the second, another process, is linked to copies ``/p<i>?utm_source=b``
and skips them all: the rule and the pages it joins them to are in the store.
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

ARTICLES = 6
_WORDS = sorted({w.strip(".,:;").lower() for _, ps in EN_ARTICLES.values() for p in ps for w in p.split()})
RUNS: dict[int, list[str]] = {
    1: [f"/p{i}" for i in range(ARTICLES)] + [f"/p{i}?utm_source=a" for i in range(ARTICLES)],
    2: [f"/p{i}?utm_source=b" for i in range(ARTICLES)],
}


def _text(seed: str) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(90)).capitalize() + "." for _ in range(3)]


class Site(demo.SiteServer):
    """The start page of the current ``run`` and the articles under any query string."""

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
        status = 200
        if parts.path == "/index.html":
            links = "".join(f'<li><a href="{href}">{href}</a></li>' for href in RUNS[self.run])
            body = html_page("Start", _text("start"), sidebar=f"<ul>{links}</ul>")
        elif parts.path[:2] == "/p" and parts.path[2:].isdigit():
            body = html_page(f"Article {parts.path[2:]}", _text(parts.path))
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


def test_a_second_crawl_process_skips_by_the_rules_the_first_learned_on_redis(redis_factory: Any, tmp_path) -> None:
    server = redis_factory()
    site = Site()
    stats: dict[int, dict[str, Any]] = {}
    try:
        with rules_crawl.CrawlServer() as crawler:
            for run in RUNS:
                site.run = run
                paths = {name: str(tmp_path / f"{name}{run}") for name in ("stats_path", "page_log", "log_path")}
                settings = {
                    "SIMHASH_URL_RULES": True,
                    "SIMHASH_URL_RULES_MIN_SUPPORT": ARTICLES,
                    "SIMHASH_URL_RULES_CONFIDENCE": 0.5,
                    "SIMHASH_URL_RULES_EXPLORE": 0.0,
                    "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
                    "SIMHASH_REDIS_URL": server.url,
                    "SIMHASH_DIR": str(tmp_path / f"unused{run}"),  # nothing shared but the store
                }
                stats[run] = crawler.run({**paths, "start_url": site.url("/index.html"), "settings": settings})
    finally:
        site.stop()
    assert stats[1].get("simhash/url_rules/learned", 0) >= 1  # param:utm_source (and value:utm_source=a)
    assert not site.fetched(2) & set(RUNS[2])
    assert stats[2].get("simhash/url_rules/skipped") == ARTICLES
    assert stats[2].get("simhash/url_rules/learned", 0) == 0  # read from the store, not learned again
