"""A real crawl on the Redis store while its redis-server is killed and restarted.

The demo spider crawls the bundled site (served on 127.0.0.1, one page at a time, slowly) in a child
process with ``SIMHASH_STORE = RedisStore``; the server is SIGKILLed after a few pages and started
again (same port, append-only file) a few pages later.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import redis
import scrapy.spiders
from helpers.demo import GROUPS, demo, wait_for_lines
from w3lib.url import canonicalize_url

from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore

pytestmark = pytest.mark.e2e


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.mark.slow
def test_crawl_survives_a_redis_restart_and_deduplicates_after_it(redis_factory: Any, tmp_path: Path) -> None:
    server = redis_factory(persist=True)
    items_path, stats_path, page_log = tmp_path / "items.jsonl", tmp_path / "stats.json", tmp_path / "pages.jsonl"
    with demo.SiteServer(delay=0.1) as site:
        proc = demo.crawl_process(
            site.url("/index.html"),
            items_path=items_path,
            stats_path=stats_path,
            page_log=page_log,
            settings={
                "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
                "SIMHASH_REDIS_URL": server.url,
                "SIMHASH_DIR": str(tmp_path / "unused"),
                "CONCURRENT_REQUESTS": 1,
            },
        )
        try:
            wait_for_lines(page_log, 8, proc, timeout=60)
            server.kill()
            killed_at = _lines(page_log)
            wait_for_lines(page_log, killed_at + 6, proc, timeout=60)
            server.start()
            # Pages fail open at once until the store's ping thread (every 0.25 s) sees the server.
            wait_for_lines(page_log, _lines(page_log) + 4, proc, timeout=60)
            restarted_at = _lines(page_log)
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        key = {p: canonicalize_url(site.url(p)) for paths in GROUPS.values() for p in paths}
    stats = json.loads(stats_path.read_text(encoding="utf-8"))
    pages = demo.read_jsonl(page_log)
    assert stats["finish_reason"] == "finished"
    # Pages fetched while the server was down: counted store errors, let through as new.
    assert stats["simhash/store_error/connection"] >= 1
    assert stats["simhash/store_error"] == stats["simhash/store_error/connection"]
    verdicts = ("new", "near_duplicate", "unchanged", "changed")
    assert stats["simhash/fingerprinted"] == sum(stats.get(f"simhash/{v}", 0) for v in verdicts)
    # Pages decided while the server was up (before the kill, after the restart and the ping that
    # notices it; one page of margin each side for the page in flight): at most one new page per group, and every new
    # page after the restart is in the index.
    up = pages[: killed_at - 1] + pages[restarted_at + 1 :]
    verdict = {canonicalize_url(p["url"]): p["verdict"] for p in up}
    for gid, paths in GROUPS.items():
        seen = Counter(verdict[key[p]] for p in paths if key[p] in verdict)
        assert seen["new"] <= 1, (gid, seen)
    after = pages[restarted_at + 1 :]
    assert any(p["verdict"] == "near_duplicate" for p in after), after
    index = SimhashIndex(RedisStore(server.url, "simhash:site:pages"))
    try:
        for p in after:
            if p["verdict"] == "new":
                assert index.get(canonicalize_url(p["url"])) is not None, p
    finally:
        index.close()


def test_scrapy_redis_scheduler_side_by_side_and_its_flush_leaves_the_index(redis_factory: Any, tmp_path: Path) -> None:
    # scrapy-redis's scheduler and dupefilter and the Redis store on one server (REDIS_URL, which
    # the store reads too); SCHEDULER_PERSIST = False deletes scrapy-redis's keys at the end, not ours.
    server = redis_factory()
    settings = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": False,
        "REDIS_URL": server.url,
        "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
        "SIMHASH_DIR": str(tmp_path / "unused"),
    }
    items_path, page_log = tmp_path / "items.jsonl", tmp_path / "pages.jsonl"
    with demo.SiteServer() as site:
        stats = demo.run_crawl(
            site.url("/index.html"),
            items_path=items_path,
            stats_path=tmp_path / "stats.json",
            page_log=page_log,
            settings=settings,
        )
        key = {p: canonicalize_url(site.url(p)) for paths in GROUPS.values() for p in paths}
    assert stats["scheduler/enqueued/redis"] >= stats["response_received_count"] > 0
    pages = demo.read_jsonl(page_log)
    verdict = {canonicalize_url(p["url"]): p["verdict"] for p in pages}
    exported = Counter(canonicalize_url(i["url"]) for i in demo.read_jsonl(items_path))
    for gid, paths in GROUPS.items():
        assert Counter(verdict[key[p]] for p in paths) == Counter({"new": 1, "near_duplicate": len(paths) - 1}), gid
        assert sum(exported[key[p]] for p in paths) == 1, gid
    client = redis.Redis.from_url(server.url)
    assert not client.exists("site:requests", "site:dupefilter")  # flushed by scrapy-redis
    with SimhashIndex(RedisStore(server.url, "simhash:site:pages")) as index:  # kept
        assert len(index) == sum(1 for v in verdict.values() if v == "new")
        # a record for every URL fetched: the pages, and the PDF, the image and the empty page
        assert sum(1 for _ in index.iter_records()) == len({canonicalize_url(p["url"]) for p in pages})
    client.close()


def test_the_distributed_page_names_scrapy_redis_spiders_and_settings_that_exist() -> None:
    # Two plain CrawlSpiders started at once on one queue: the second quits after one page, which
    # the page did not say. What it advises must exist in the scrapy-redis that is installed.
    import inspect

    import scrapy_redis.defaults
    import scrapy_redis.spiders

    page = (Path(__file__).resolve().parents[2] / "docs" / "usage" / "distributed.rst").read_text(encoding="utf-8")
    text = " ".join(page.split())
    assert "the second quits after one page" in text
    assert "from scrapy_redis.spiders import RedisCrawlSpider" in text
    assert issubclass(scrapy_redis.spiders.RedisCrawlSpider, scrapy.spiders.CrawlSpider)
    assert "``MAX_IDLE_TIME_BEFORE_CLOSE``" in text and "``0``, its default, waits until stopped" in text
    assert scrapy_redis.defaults.MAX_IDLE_TIME == 0
    assert "MAX_IDLE_TIME_BEFORE_CLOSE" in inspect.getsource(scrapy_redis.spiders)
    assert scrapy_redis.defaults.START_URLS_KEY == "%(name)s:start_urls" and "<spider>:start_urls" in text
