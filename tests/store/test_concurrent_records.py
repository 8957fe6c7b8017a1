"""Two or more processes deciding on one URL at once: each URL is ``new`` once, and its record
counts every fetch, on every store (LMDB: the batch's write transaction serialises processes;
Redis: the batch holds the key's lock).

The tracker tests run the whole per-page decision (``ChangeTracker.observe``: record read,
check-and-add, record write) in processes that go through the same URLs in the same order, all at
once; the crawl tests run two real Scrapy crawls of the demo site on one Redis.
"""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import redis
from helpers.demo import GROUPS, demo, wait_for_lines
from w3lib.url import canonicalize_url

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.errors import StoreError
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.store import redisstore
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.store.redisstore import RedisStore

REPO = Path(__file__).resolve().parents[2]
PROCESSES = 3

_OBSERVER_SRC = textwrap.dedent(
    """
    import json, os, sys, time
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.fingerprint import PageFingerprint
    from scrapy_simhash.store.redisstore import RedisStore
    where, name, go, pages, method = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
    index = SimhashIndex(RedisStore(where, name)) if where.startswith("redis://") else SimhashIndex.open(where)
    tracker = ChangeTracker(index)
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.001)
    decide = getattr(tracker, method)  # observe (a page), observe_body (a PDF, an image)
    made = PageFingerprint.of if method == "observe" else int
    out = [[key, decide(key, made(fp)).verdict] for key, fp in pages]
    index.close()
    print(json.dumps(out))
    """
)


def _observe_at_once(
    where: str, name: str, pages: list[tuple[str, int]], tmp_path: Path, method: str = "observe"
) -> Counter[tuple[str, str]]:
    """``PROCESSES`` processes observe ``pages`` in the same order (``ChangeTracker.<method>``),
    started together: how many times each (key, verdict) came out."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _OBSERVER_SRC, where, name, str(go), json.dumps(pages), method],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(PROCESSES)
    ]
    for p in procs:  # every process opened the index
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.communicate()[1][-2000:]
    go.touch()
    verdicts: Counter[tuple[str, str]] = Counter()
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err[-2000:]
        verdicts.update((key, verdict) for key, verdict in json.loads(out))
    return verdicts


@pytest.mark.e2e
@pytest.mark.parametrize("method", ["observe", "observe_body"])
@pytest.mark.parametrize("store", ["redis", "lmdb"])
def test_processes_observing_one_url_at_once_decide_it_once_and_count_every_fetch(
    store: str, method: str, redis_server: Any, tmp_path: Path
) -> None:
    rng = random.Random(23)
    pages = [(f"https://race.example/p{i}", rng.getrandbits(64)) for i in range(150)]
    if store == "redis":
        where, name = redis_server.url, str(tmp_path)

        def index() -> SimhashIndex:
            return SimhashIndex(RedisStore(where, name))

    else:
        where, name = str(tmp_path / "index"), ""

        def index() -> SimhashIndex:
            return SimhashIndex.open(where)

    index().close()  # created once, as a crawl start would
    verdicts = _observe_at_once(where, name, pages, tmp_path, method)
    with index() as opened:
        for key, _ in pages:
            seen = {verdict: n for (k, verdict), n in verdicts.items() if k == key}
            assert seen == {"new": 1, "unchanged": PROCESSES - 1}, (key, seen)
            record = PageRecord.parse(opened.get_record(key))
            assert record is not None and record.fetch_count == PROCESSES, (key, record)


def _store(url: str, name: str) -> tuple[SimhashIndex, ChangeTracker]:
    index = SimhashIndex(RedisStore(url, name))
    return index, ChangeTracker(index)


@pytest.mark.e2e
def test_a_lock_left_by_a_killed_process_expires_and_the_url_is_decided(
    redis_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process SIGKILLed inside observe's batch (its lock on the URL taken, nothing written).
    src = textwrap.dedent(
        """
        import sys, time
        from scrapy_simhash.store.index import SimhashIndex
        from scrapy_simhash.store import redisstore
        redisstore.LOCK_TTL_S = 1.0
        index = SimhashIndex(redisstore.RedisStore(sys.argv[1], sys.argv[2]))
        with index.batch("https://a.example/1"):
            index.get_record("https://a.example/1")  # the batch's first call takes the lock
            print("holding", flush=True)
            time.sleep(60)
        """
    )
    name = str(tmp_path)
    SimhashIndex(RedisStore(redis_server.url, name)).close()
    with subprocess.Popen(
        [sys.executable, "-c", src, redis_server.url, name], stdout=subprocess.PIPE, text=True, cwd=REPO
    ) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        proc.kill()
    client = redis.Redis.from_url(redis_server.url)
    lock_key = RedisStore(prefix=name).prefix + "Lhttps://a.example/1"
    assert client.exists(lock_key)  # held by the dead process until it expires
    monkeypatch.setattr(redisstore, "LOCK_TTL_S", 1.0)
    index, tracker = _store(redis_server.url, name)
    assert tracker.observe("https://a.example/1", PageFingerprint.of(0xABCDEF)).verdict == "new"
    record = PageRecord.parse(index.get_record("https://a.example/1"))
    assert record is not None and record.fetch_count == 1
    assert not client.exists(lock_key)  # released at the end of the batch
    index.close()
    client.close()


@pytest.mark.slow
def test_a_url_held_too_long_is_a_busy_store_error_and_a_batch_past_its_lock_is_undone(
    redis_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = str(tmp_path)
    mine, _ = _store(redis_server.url, name)
    other, other_tracker = _store(redis_server.url, name)
    # Another process waits at most the lock's expiry (and a second) for a held URL.
    monkeypatch.setattr(redisstore, "LOCK_TTL_S", 30.0)
    with mine.batch("https://a.example/1"):
        assert mine.get_record("https://a.example/1") is None  # the batch's first call takes the lock
        monkeypatch.setattr(redisstore, "LOCK_TTL_S", 0.2)
        for decide in (
            lambda: other_tracker.observe("https://a.example/1", PageFingerprint.of(0xABCDEF)),
            lambda: other_tracker.not_modified("https://a.example/1"),
            lambda: other_tracker.gone("https://a.example/1"),
            lambda: other_tracker.moved("https://a.example/1", "https://a.example/9"),
        ):
            with pytest.raises(StoreError) as info:
                decide()
            assert info.value.kind == "busy" and "https://a.example/1" in str(info.value)
    assert other.get_record("https://a.example/1") is None
    # A batch that outlives its lock: the other process decided the URL meanwhile; this batch's
    # record write is refused and its other writes undone, the other's stay.
    with pytest.raises(StoreError) as info, mine.batch("https://a.example/1"):  # noqa: PT012 - refused at its end
        assert mine.get_record("https://a.example/1") is None
        mine.put_record("https://a.example/2", b"mine, beside")
        mine.add("https://a.example/1", 0xABCDEF)
        lock_key = RedisStore(prefix=name).prefix + "Lhttps://a.example/1"
        client = redis.Redis.from_url(redis_server.url)
        deadline = time.monotonic() + 60
        while client.exists(lock_key):  # until the lock (0.2 s) has expired, however loaded the machine
            assert time.monotonic() < deadline, "the lock never expired"
            time.sleep(0.01)
        client.close()
        with other.batch("https://a.example/1"):
            assert other.get_record("https://a.example/1") is None  # the lock is free
            other.put_record("https://a.example/1", b"other")
        mine.put_record("https://a.example/1", b"mine")
    assert info.value.kind == "busy" and "expiry" in str(info.value)
    assert other.get_record("https://a.example/1") == b"other"
    assert other.get_record("https://a.example/2") is None and other.get("https://a.example/1") is None
    client = redis.Redis.from_url(redis_server.url)
    assert client.keys(RedisStore(prefix=name).prefix.replace("{", "\\{") + "L*") == []  # no lock left
    client.close()
    mine.close()
    other.close()


def test_a_batch_whose_first_call_fails_leaves_no_lock(redis_server: Any, tmp_path: Path) -> None:
    # The lock is taken by the batch's first call, in the same script as its op: an op that fails
    # there (the record shard of the URL holds another program's string) must not leave it behind.
    name, url = str(tmp_path), "https://a.example/1"
    index, tracker = _store(redis_server.url, name)
    prefix = RedisStore(prefix=name).prefix
    client = redis.Redis.from_url(redis_server.url)
    client.set(prefix + f"r{redisstore.shard_of(url.encode())}", b"another program's string")
    with pytest.raises(StoreError):
        tracker.observe(url, PageFingerprint.of(0xABCDEF))
    assert client.keys(prefix.replace("{", "\\{") + "L*") == []
    index.close()
    client.close()


def test_on_a_cluster_a_decision_takes_and_releases_its_lock(redis_cluster: Any) -> None:
    # The lock key shares the index's hash tag: same slot, same node as the script's keys.
    from redis.cluster import RedisCluster

    index, tracker = _store(redis_cluster.url, "cluster-lock")
    url = "https://a.example/1"
    assert tracker.observe(url, PageFingerprint.of(0xABCDEF)).verdict == "new"
    assert tracker.observe(url, PageFingerprint.of(0xABCDEF)).verdict == "unchanged"
    record = PageRecord.parse(index.get_record(url))
    assert record is not None and record.fetch_count == 2
    cluster = RedisCluster.from_url(redis_cluster.url)
    assert not cluster.exists(RedisStore(prefix="cluster-lock").prefix + "L" + url)
    cluster.close()
    index.close()
    assert RedisStore(redis_cluster.url, "cluster-lock").destroy()


# -- two real crawls on one Redis -------------------------------------------------------------------


class _TogetherSite(demo.SiteServer):
    """The demo site, answering each path only once ``fetchers`` requests for it came in (or
    after ``wait`` seconds): crawlers that fetch the same links get each page at the same time."""

    def __init__(self, fetchers: int, wait: float = 5.0) -> None:
        super().__init__()
        self._fetchers, self._wait = fetchers, wait
        self._barriers: dict[str, threading.Barrier] = {}
        self._barriers_lock = threading.Lock()

    def _handle(self, req: Any) -> None:
        with self._barriers_lock:
            barrier = self._barriers.setdefault(req.path, threading.Barrier(self._fetchers, timeout=self._wait))
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()
        super()._handle(req)


def _two_crawls(
    site: Any, tmp_path: Path, settings: dict[str, Any], *, after: int = 0
) -> list[tuple[dict[str, Any], Path, Path]]:
    """Two crawls of ``site``, the second started once the first logged ``after`` pages; their
    stats, items and page logs."""
    runs: list[tuple[Path, Path, Path]] = []
    procs: list[Any] = []
    for n in range(2):
        items, stats, pages = tmp_path / f"items{n}.jsonl", tmp_path / f"stats{n}.json", tmp_path / f"pages{n}.jsonl"
        if n and after:
            wait_for_lines(runs[0][2], after, procs[0], timeout=60)
        procs.append(
            demo.crawl_process(
                site.url("/index.html"), items_path=items, stats_path=stats, page_log=pages, settings=settings
            )
        )
        runs.append((stats, items, pages))
    out = []
    for proc, (stats, items, pages) in zip(procs, runs):
        assert proc.wait(timeout=240) == 0
        out.append((json.loads(stats.read_text(encoding="utf-8")), items, pages))
    return out


def _check_crawls(server: Any, site: Any, runs: list[tuple[dict[str, Any], Path, Path]]) -> Counter[str]:
    """Each URL ``new`` (or kept) once over both crawls, each group's page exported once, and each
    URL's record counting every fetch of it; returns the fetches per URL."""
    fetches: Counter[str] = Counter()
    verdicts: dict[str, Counter[str]] = {}
    exported: Counter[str] = Counter()
    for stats, items, pages in runs:
        assert stats["finish_reason"] == "finished"
        assert not any(k.startswith("simhash/store_error") for k in stats), stats
        for page in demo.read_jsonl(pages):
            key = canonicalize_url(page["url"])
            fetches[key] += 1
            if page["verdict"]:
                verdicts.setdefault(key, Counter())[page["verdict"]] += 1
        exported.update(canonicalize_url(i["url"]) for i in demo.read_jsonl(items))
    assert verdicts
    for key, seen in verdicts.items():
        assert seen["new"] + seen["near_duplicate"] == 1, (key, seen)  # its first fetch, once
    assert all(n == 1 for n in exported.values()), exported
    url_of = {p: canonicalize_url(site.url(p)) for paths in GROUPS.values() for p in paths}
    for gid, paths in GROUPS.items():
        assert sum(exported[url_of[p]] for p in paths) == 1, gid
    with SimhashIndex(RedisStore(server.url, "simhash:site:pages")) as index:
        for url in verdicts:
            record = PageRecord.parse(index.get_record(url))
            assert record is not None and record.fetch_count == fetches[url], (url, record, fetches[url])
    return fetches


_CRAWL = {
    "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
    "CONCURRENT_REQUESTS": 4,
}


@pytest.mark.e2e
def test_two_crawler_processes_on_one_redis_fetching_the_same_links_decide_each_url_once(
    redis_factory: Any, tmp_path: Path
) -> None:
    # Without scrapy-redis: two independent schedulers, so every URL is fetched by both crawls,
    # at the same time (the site answers a page once both asked for it).
    server = redis_factory()
    with _TogetherSite(fetchers=2) as site:
        runs = _two_crawls(site, tmp_path, {**_CRAWL, "SIMHASH_REDIS_URL": server.url, "SIMHASH_DIR": str(tmp_path)})
        fetches = _check_crawls(server, site, runs)
    assert fetches and all(n == 2 for n in fetches.values()), fetches


@pytest.mark.e2e
@pytest.mark.slow
def test_two_crawler_processes_sharing_a_scrapy_redis_scheduler_decide_each_url_once(
    redis_factory: Any, tmp_path: Path
) -> None:
    # With scrapy-redis: one shared queue and dupefilter (SCHEDULER_PERSIST: a crawl that ends
    # first leaves them to the other), so each URL is fetched once in all. The second crawl starts
    # once the queue holds the first page's links (a spider that finds it empty closes at once),
    # and the site is slow enough (2 pages at a time, 0.5 s each) for the queue to outlast its start.
    server = redis_factory()
    settings = {
        **_CRAWL,
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
        "REDIS_URL": server.url,
        "SIMHASH_DIR": str(tmp_path),
        "CONCURRENT_REQUESTS": 2,
    }
    with demo.SiteServer(delay=0.5) as site:
        runs = _two_crawls(site, tmp_path, settings, after=1)
        fetches = _check_crawls(server, site, runs)
    assert fetches and all(n == 1 for n in fetches.values()), fetches
    assert all(demo.read_jsonl(pages) for _, _, pages in runs)  # both crawls fetched pages
