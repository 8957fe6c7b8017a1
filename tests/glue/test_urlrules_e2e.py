"""End-to-end URL rules: five real Scrapy crawls, into one index, of a site on 127.0.0.1 whose
articles ``/p0`` .. ``/p7`` are linked under copies of their URLs.

Each run's start page links to other URLs (``RUNS``): run 1 the articles; run 2 copies under
``?utm_source=a`` (the rule is learned) and ``?ref=a``, with one ``?ref=`` page that adds a
paragraph (the rule is vetoed before it is learned); run 3 copies under ``?utm_source=b`` (skipped),
``?ref=b`` (fetched: vetoed), a redirect to a copy, and copies with ``dont_filter``, with
``simhash_force`` and marked by the spider (all fetched); run 4 explores every request a rule would
skip and one of them adds a paragraph (the rule is vetoed); run 5 skips nothing.
"""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers import rules_crawl
from helpers.demo import demo
from helpers.pages import EN_ARTICLES, html_page

pytestmark = [pytest.mark.e2e, pytest.mark.glue]

ARTICLES = 8
_WORDS = sorted({w.strip(".,:;").lower() for _, ps in EN_ARTICLES.values() for p in ps for w in p.split()})


def _text(seed: str) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(90)).capitalize() + "." for _ in range(3)]


def _link(href: str, *, dont_filter: bool = False, meta: dict[str, Any] | None = None) -> str:
    extra = ' data-dont-filter="1"' if dont_filter else ""
    if meta:
        extra += f" data-meta='{json.dumps(meta)}'"
    return f'<a href="{href}"{extra}>{href}</a>'


RUNS: dict[int, list[str]] = {
    1: [_link(f"/p{i}") for i in range(ARTICLES)],
    2: [_link(f"/p{i}?utm_source=a") for i in range(ARTICLES)]
    + [_link(f"/p{i}?ref=a") for i in range(ARTICLES - 1)]
    + [_link("/p7?ref=adds")],
    3: [_link(f"/p{i}?utm_source=b") for i in range(6)]
    + [_link(f"/p{i}?ref=b") for i in range(ARTICLES)]
    + [
        _link("/go6"),  # redirects to /p6?utm_source=redirect
        _link("/p7?utm_source=dont_filter", dont_filter=True),
        _link("/p7?utm_source=forced", meta={"simhash_force": True}),
        _link("/p7?utm_source=marked"),  # the spider's simhash_must_fetch marks it
    ],
    4: [_link(f"/p{i}?utm_source=c") for i in range(ARTICLES - 1)] + [_link("/p7?utm_source=adds")],
    5: [_link(f"/p{i}?utm_source=d") for i in range(ARTICLES)] + [_link(f"/p{i}?ref=c") for i in range(ARTICLES)],
}
SETTINGS = {
    "SIMHASH_URL_RULES": True,
    "SIMHASH_URL_RULES_MIN_SUPPORT": ARTICLES,
    "SIMHASH_URL_RULES_CONFIDENCE": 0.5,
    "SIMHASH_URL_RULES_EXPLORE": 0.0,
}
EXPLORE_RUN = 4


class CopySite(demo.SiteServer):
    """Serves the start page of the current ``run`` and the articles under any query string; a
    query value ``adds`` serves the article with one more paragraph. Logs every request."""

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
        status, headers, body = 200, {}, ""
        if parts.path == "/index.html":
            body = html_page(
                "Start", _text("start"), sidebar="<ul>" + "".join(f"<li>{a}</li>" for a in RUNS[self.run]) + "</ul>"
            )
        elif parts.path.startswith("/go"):
            status, headers = 302, {"Location": f"/p{parts.path[3:]}?utm_source=redirect"}
        elif parts.path.startswith("/p") and parts.path[2:].isdigit() and int(parts.path[2:]) < ARTICLES:
            paragraphs = _text(parts.path)
            if any("adds" in values for values in parse_qs(parts.query).values()):
                paragraphs += _text(req.path)[:1]  # its own paragraph: no other URL shows it
            body = html_page(f"Article {parts.path[2:]}", paragraphs)
        else:
            status, body = 404, "<html><body>Not found</body></html>"
        data = body.encode()
        req.send_response(status)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        for name, value in headers.items():
            req.send_header(name, value)
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def fetched(self, run: int) -> set[str]:
        return {path for r, path in self.log if r == run}


class Crawls:
    def __init__(self, tmp_path: Path) -> None:
        self.site = CopySite()
        self.stats: dict[int, dict[str, Any]] = {}
        self.logs: dict[int, str] = {}
        self.pages: dict[int, list[dict[str, Any]]] = {}
        try:
            self._crawl(tmp_path)
        finally:
            self.site.stop()

    def _crawl(self, tmp_path: Path) -> None:
        with rules_crawl.CrawlServer() as crawler:
            for run in RUNS:
                self.site.run = run
                paths = {name: str(tmp_path / f"{name}{run}") for name in ("stats_path", "page_log", "log_path")}
                settings = {**SETTINGS, "SIMHASH_DIR": str(tmp_path / "simhash")}
                if run == EXPLORE_RUN:
                    settings["SIMHASH_URL_RULES_EXPLORE"] = 1.0
                self.stats[run] = crawler.run(
                    {**paths, "start_url": self.site.url("/index.html"), "settings": settings, "must_fetch": "marked"}
                )
                self.logs[run] = Path(paths["log_path"]).read_text(encoding="utf-8")
                self.pages[run] = demo.read_jsonl(Path(paths["page_log"]))

    def stat(self, run: int, name: str) -> int:
        return int(self.stats[run].get(f"simhash/url_rules/{name}", 0))


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Crawls:
    return Crawls(tmp_path_factory.mktemp("urlrules"))


def test_run_1_fetches_every_article_and_learns_nothing(crawls: Crawls) -> None:
    assert {f"/p{i}" for i in range(ARTICLES)} <= crawls.site.fetched(1)
    assert crawls.stat(1, "learned") == crawls.stat(1, "skipped") == 0


def test_a_rule_is_learned_from_copies_and_applied_in_the_next_run(crawls: Crawls) -> None:
    # run 2: eight copies under ?utm_source=a, each a near-duplicate of its article
    assert crawls.stat(2, "learned") == 2  # param:utm_source and value:utm_source=a
    assert crawls.stat(2, "skipped") == 0
    assert "Learned a URL rule for 127.0.0.1" in crawls.logs[2] and "(param:utm_source; 8 copies" in crawls.logs[2]
    # run 3 reads the rule from the index: the six copies under ?utm_source=b are never fetched
    assert crawls.stat(3, "skipped") == 6
    assert not {f"/p{i}?utm_source=b" for i in range(6)} & crawls.site.fetched(3)
    assert "(param:utm_source;" not in crawls.logs[3]  # known already


def test_a_copy_that_adds_vetoes_the_rule_before_it_is_learned(crawls: Crawls) -> None:
    assert crawls.stat(2, "vetoed") == 1  # /p7?ref=adds adds a paragraph to /p7
    # run 3: eight more copies under ?ref=b would have made the rule (without the veto), yet all are fetched
    assert {f"/p{i}?ref=b" for i in range(ARTICLES)} <= crawls.site.fetched(3)
    assert {f"/p{i}?ref=c" for i in range(ARTICLES)} <= crawls.site.fetched(5)


def test_a_redirect_target_is_never_skipped(crawls: Crawls) -> None:
    assert "/p6?utm_source=redirect" in crawls.site.fetched(3)
    assert next(p for p in crawls.pages[3] if p["redirected"])["url"].endswith("/p6?utm_source=redirect")


def test_a_dont_filter_request_is_fetched(crawls: Crawls) -> None:
    assert "/p7?utm_source=dont_filter" in crawls.site.fetched(3)


def test_a_request_with_the_meta_opt_out_is_fetched(crawls: Crawls) -> None:
    assert "/p7?utm_source=forced" in crawls.site.fetched(3)


def test_a_url_the_spider_marks_is_fetched(crawls: Crawls) -> None:
    assert "/p7?utm_source=marked" in crawls.site.fetched(3)


def test_the_explore_share_is_fetched_and_a_copy_that_adds_vetoes_the_rule(crawls: Crawls) -> None:
    fetched = crawls.site.fetched(EXPLORE_RUN)
    assert "/p7?utm_source=adds" in fetched
    assert crawls.stat(EXPLORE_RUN, "explored") >= 1
    assert crawls.stat(EXPLORE_RUN, "skipped") == 0
    assert crawls.stat(EXPLORE_RUN, "vetoed") == 1
    assert "Vetoed the URL rule param:utm_source for 127.0.0.1" in crawls.logs[EXPLORE_RUN]
    # the next run fetches every copy: the rule is gone for this host
    assert crawls.stat(5, "skipped") == 0
    assert {f"/p{i}?utm_source=d" for i in range(ARTICLES)} <= crawls.site.fetched(5)
