"""One real Scrapy crawl (``CrawlerProcess``) of a site on 127.0.0.1 with scrapy-simhash's add-on, run as a child process.

``python rules_crawl.py CONFIG_JSON``: ``start_url``, ``settings``, ``stats_path`` (the final stats,
JSON), ``page_log`` (one JSON line per response), ``log_path`` (Scrapy's log) and ``must_fetch`` (a
regular expression: the URLs the spider's ``simhash_must_fetch`` marks). The spider follows every
link; a link's ``data-dont-filter="1"`` makes its request ``dont_filter``, its ``data-meta`` (JSON)
is the request's meta (over ``request_meta``, the meta of every request).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import scrapy

ROOT = Path(__file__).resolve().parents[2]


class RulesSpider(scrapy.Spider):
    """Follows every link from ``start_url``; logs each response with its verdict."""

    name = "rules"

    def __init__(
        self,
        start_url: str = "",
        page_log: str = "",
        must_fetch: str | None = None,
        request_meta: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.request_meta = request_meta or {}
        self.start_url = start_url
        self.must_fetch = re.compile(must_fetch) if must_fetch else None
        self._log_file = open(page_log, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[Any]:
        yield scrapy.Request(self.start_url, dont_filter=True)

    def simhash_must_fetch(self, request: scrapy.Request) -> bool:
        return bool(self.must_fetch is not None and self.must_fetch.search(request.url))

    def parse(self, response: Any, **kwargs: Any) -> Iterator[Any]:
        meta = response.meta
        line = {
            "url": response.url,
            "verdict": meta.get("simhash_verdict"),
            "duplicate_of": meta.get("simhash_duplicate_of"),
            "redirected": bool(meta.get("redirect_urls")),
            "explored": meta.get("simhash_url_rule"),
            "learned": self.crawler.stats.get_value("simhash/url_rules/learned", 0),
            "skipped": self.crawler.stats.get_value("simhash/url_rules/skipped", 0),
        }
        self._log_file.write(json.dumps(line) + "\n")
        for link in response.css("a[href]"):
            yield response.follow(
                link.attrib["href"],
                callback=self.parse,
                dont_filter=link.attrib.get("data-dont-filter") == "1",
                meta={**self.request_meta, **json.loads(link.attrib.get("data-meta", "{}"))},
            )

    def closed(self, reason: str) -> None:
        self._log_file.close()


def _crawl(config: dict[str, Any]) -> None:
    from scrapy.crawler import CrawlerProcess

    settings = {
        "ADDONS": {"scrapy_simhash.Addon": 0},
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "LOG_FILE": config["log_path"],
        **config["settings"],
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(RulesSpider)
    process.crawl(
        crawler,
        start_url=config["start_url"],
        page_log=config["page_log"],
        must_fetch=config.get("must_fetch"),
        request_meta=config.get("request_meta"),
    )
    process.start()
    stats = {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in crawler.stats.get_stats().items()}
    Path(config["stats_path"]).write_text(json.dumps(stats, indent=1, sort_keys=True), encoding="utf-8")


def run(config: Mapping[str, Any], timeout: float = 120) -> dict[str, Any]:
    """Run one crawl in a child process (this checkout first on its path); its final stats."""
    for name in ("stats_path", "page_log", "log_path"):
        Path(config[name]).unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, __file__, json.dumps(dict(config))],
        check=False,
        env=env,
        timeout=timeout,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not Path(config["stats_path"]).exists():
        log = Path(config["log_path"]).read_text(encoding="utf-8") if Path(config["log_path"]).exists() else ""
        raise RuntimeError(f"the crawl failed (exit code {proc.returncode}):\n{proc.stderr[-3000:]}\n{log[-3000:]}")
    return json.loads(Path(config["stats_path"]).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


if __name__ == "__main__":
    _crawl(json.loads(sys.argv[1]))
