"""A decision on Redis at the grain of a page (``SimhashIndex.decisions``): one snapshot script, a
decision with no I/O, one conditional write, read again on conflict.

Round trips are counted on the connection (every command the client sends) and checked against
the server's own count (``INFO commandstats``); conflicts are injected between the snapshot and the
write by a second index on the same server, deterministically (no sleeps, no threads).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import redis

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW, UNCHANGED
from scrapy_simhash.errors import StoreError
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.store import index as index_module
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.store.redisstore import RedisStore, shard_of

FP = Fingerprinter()
_RNG = random.Random(38)
_WORDS = ["".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(3, 9))) for _ in range(3000)]


def _article(rng: random.Random) -> str:
    body = "".join(f"<p>{' '.join(rng.choice(_WORDS) for _ in range(18)).capitalize()}.</p>" for _ in range(14))
    return f"<html><head><title>Notes</title></head><body><main><h1>Notes</h1>{body}</main></body></html>"


ARTICLE, OTHER = _article(random.Random(1)), _article(random.Random(2))


class CountingConnection(redis.Connection):
    """A connection that counts the commands it sends (each one round trip), whichever way the
    client packs them."""

    sent = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.sent += 1
        super().send_packed_command(command, check_health)


def counting_client(url: str) -> Any:
    """A client whose connections count the commands they send."""
    return redis.Redis.from_url(url, connection_class=CountingConnection)


class Interleaved(RedisStore):
    """A store that runs ``hook`` (another process's write) right after a snapshot, once."""

    hook: Any = None
    repeat = False

    def snapshot(self, *args: Any, **kwargs: Any) -> Any:
        snap = super().snapshot(*args, **kwargs)
        hook = self.hook
        if not self.repeat:
            self.hook = None
        if hook is not None:
            hook()
        return snap


def _server_calls(client: Any) -> int:
    # The commands a client sent (the scripts' own commands are counted apart from them there).
    stats = client.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("evalsha", "eval", "mget", "script"))


def _rounds(index: SimhashIndex, server: Any, decide: Any) -> tuple[int, int, Any]:
    """The round trips of ``decide()``: counted by the client and by the server."""
    client = redis.Redis.from_url(server.url)
    before_server = _server_calls(client)
    before = CountingConnection.sent
    out = decide()
    sent = CountingConnection.sent - before
    served = _server_calls(client) - before_server
    client.close()
    return sent, served, out


def test_a_decision_costs_two_round_trips_with_or_without_a_candidate(redis_server: Any, tmp_path: Path) -> None:
    store = RedisStore(redis_server.url, str(tmp_path), client=counting_client(redis_server.url))
    index = SimhashIndex(store)
    tracker = ChangeTracker(index)
    tracker.observe("https://warm.example/", FP.fingerprint_page(OTHER), now=1.0)  # the scripts loaded
    page = FP.fingerprint_page(ARTICLE)
    assert page.own is not None and page.own.has_text
    # A new page with no candidate: the snapshot and the write.
    sent, served, verdict = _rounds(index, redis_server, lambda: tracker.observe("https://a.example/1", page, now=2.0))
    assert verdict.verdict == NEW and (sent, served) == (2, 2)
    record = PageRecord.parse(index.get_record("https://a.example/1"))
    assert record is not None and record.evidence and index.get_evidence("https://a.example/1")
    # A copy on another URL: the candidate's evidence comes with the snapshot (on a cluster, an MGET).
    sent, served, verdict = _rounds(index, redis_server, lambda: tracker.observe("https://b.example/1", page, now=3.0))
    assert (verdict.verdict, verdict.duplicate_of) == (NEAR_DUPLICATE, "https://a.example/1")
    assert (sent, served) == (2, 2)
    # A refetch that shows the same text: two.
    sent, served, verdict = _rounds(index, redis_server, lambda: tracker.observe("https://a.example/1", page, now=4.0))
    assert verdict.verdict == UNCHANGED and (sent, served) == (2, 2)
    # A 304, a 404 and a redirect: two each (the snapshot reads the record only).
    for decide in (
        lambda: tracker.not_modified("https://a.example/1", now=5.0),
        lambda: tracker.moved("https://c.example/1", "https://a.example/1", now=6.0),
        lambda: tracker.gone("https://b.example/1", now=7.0),
    ):
        sent, served, out = _rounds(index, redis_server, decide)
        assert out and (sent, served) == (2, 2)
    assert index.stats["conflicts"] == 0
    index.close()


def test_the_snapshot_reads_the_records_of_every_key_found_in_their_shards(redis_server: Any, tmp_path: Path) -> None:
    # The script finds a key's record shard by CRC-32, as the client does (zlib.crc32 % 1024).
    index = SimhashIndex(RedisStore(redis_server.url, str(tmp_path)))
    keys = [f"https://x.example/\u00fc{i}?q={i * 7}" for i in range(300)]
    assert len({shard_of(k.encode()) for k in keys}) > 200
    index.add_many((k, 0x1234567) for k in keys)
    index.put_records((k, k.encode(), None) for k in keys)
    snap = index.store.snapshot(b"q", (0x1234567).to_bytes(8, "big"), 3, 0)
    assert snap.records == {k.encode(): k.encode() for k in keys}
    assert sorted(h.key for h in snap.probe.hits) == sorted(k.encode() for k in keys)
    index.close()


def _pair(server: Any, name: str) -> tuple[SimhashIndex, ChangeTracker, Interleaved, ChangeTracker]:
    store = Interleaved(server.url, name)
    mine = SimhashIndex(store)
    other = ChangeTracker(SimhashIndex(RedisStore(server.url, name)))
    return mine, ChangeTracker(mine), store, other


def test_a_write_of_the_same_url_between_snapshot_and_write_is_read_again_never_lost(
    redis_server: Any, tmp_path: Path
) -> None:
    mine, tracker, store, other = _pair(redis_server, str(tmp_path))
    url, page = "https://a.example/1", FP.fingerprint_page(ARTICLE)
    # Another process decides the URL after this one's snapshot: this write is refused, the
    # decision read again: it is the second fetch (unchanged), and the record counts both.
    store.hook = lambda: other.observe(url, page, now=1.0)
    assert tracker.observe(url, page, now=2.0).verdict == UNCHANGED
    record = PageRecord.parse(mine.get_record(url))
    assert record is not None and (record.fetch_count, record.first_seen, record.last_fetched) == (2, 1.0, 2.0)
    assert mine.stats["conflicts"] == 1
    # The same for a 304 and a 404.
    store.hook = lambda: other.observe(url, page, now=3.0)
    assert tracker.not_modified(url, now=4.0) is not None
    record = PageRecord.parse(mine.get_record(url))
    assert record is not None and record.fetch_count == 4 and mine.stats["conflicts"] == 2
    store.hook = lambda: other.not_modified(url, now=5.0)
    assert tracker.gone(url, now=6.0)
    record = PageRecord.parse(mine.get_record(url))
    assert record is not None and record.gone and record.fetch_count == 5 and mine.stats["conflicts"] == 3
    mine.close()
    other.index.close()


def test_a_near_duplicate_added_between_snapshot_and_write_is_read_again_one_page_kept(
    redis_server: Any, tmp_path: Path
) -> None:
    mine, tracker, store, other = _pair(redis_server, str(tmp_path))
    page = FP.fingerprint_page(ARTICLE)
    # This process saw no candidate; another adds a copy of the page meanwhile: the buckets the
    # snapshot read changed, so the write is refused and the page is found to be the copy's.
    store.hook = lambda: other.observe("https://b.example/1", page, now=1.0)
    verdict = tracker.observe("https://a.example/1", page, now=2.0)
    assert (verdict.verdict, verdict.duplicate_of) == (NEAR_DUPLICATE, "https://b.example/1")
    assert mine.get("https://a.example/1") is None and mine.get("https://b.example/1") == page.fp
    assert mine.stats["conflicts"] == 1
    # Fingerprints only (the item pipeline), a page one bit away.
    store.hook = lambda: other.deduplicate("https://b.example/2", 0xF0F0F0F0)
    verdict = tracker.deduplicate("https://a.example/2", 0xF0F0F0F1)
    assert (verdict.verdict, verdict.duplicate_of) == (NEAR_DUPLICATE, "https://b.example/2")
    assert mine.get("https://a.example/2") is None and mine.stats["conflicts"] == 2
    mine.close()
    other.index.close()


def test_a_write_reads_its_snapshot_again_only_where_another_write_came_between(
    redis_server: Any, tmp_path: Path
) -> None:
    mine, tracker, store, other = _pair(redis_server, str(tmp_path))
    tracker.deduplicate("https://warm.example/", 0x5555AAAA5555AAAA)  # the scripts loaded
    client = redis.Redis.from_url(redis_server.url)

    def hmgets(decide: Any) -> tuple[int, Any]:  # the scripts' bucket reads: one HMGET per table
        before = int(client.info("commandstats").get("cmdstat_hmget", {}).get("calls", 0))
        out = decide()
        return int(client.info("commandstats")["cmdstat_hmget"]["calls"]) - before, out

    # No write since the snapshot: the write trusts the index's write count, reads nothing again.
    n, verdict = hmgets(lambda: tracker.deduplicate("https://a.example/1", 0x0123456789ABCDEF))
    assert verdict.verdict == NEW and n == mine.tables
    # Another process writes far away meanwhile (every bit flipped: no bucket this one read): the
    # count moved, so the write reads its buckets again, finds them unchanged and writes.
    store.hook = lambda: other.deduplicate("https://b.example/1", 0xFEDCBA9876543210 ^ 0xFFFFFFFFFFFFFFFF)
    n, verdict = hmgets(lambda: tracker.deduplicate("https://c.example/1", 0xFEDCBA9876543210))
    assert verdict.verdict == NEW and n == 3 * mine.tables  # this snapshot, the other's, this write's check
    assert mine.get("https://c.example/1") == 0xFEDCBA9876543210 and mine.stats["conflicts"] == 0
    client.close()
    mine.close()
    other.index.close()


def test_a_decision_whose_reads_keep_changing_is_a_busy_error_with_nothing_written(
    redis_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "DECIDE_ATTEMPTS", 3)
    mine, tracker, store, other = _pair(redis_server, str(tmp_path))
    count = iter(range(100))
    store.repeat = True
    store.hook = lambda: other.observe("https://a.example/1", PageFingerprint.of(next(count) << 20), now=1.0)
    with pytest.raises(StoreError) as info:
        tracker.observe("https://a.example/1", PageFingerprint.of(0xABCDEF), now=2.0)
    assert info.value.kind == "busy" and "https://a.example/1" in str(info.value)
    record = PageRecord.parse(mine.get_record("https://a.example/1"))
    assert record is not None and record.fetch_count == 3  # the other process's three fetches, none of this one
    assert mine.get("https://a.example/1") == 2 << 20 and mine.stats["conflicts"] == 3
    mine.close()
    other.index.close()


def test_a_snapshot_reads_the_wide_tier_s_buckets_only_for_a_page_without_a_match(
    redis_server: Any, tmp_path: Path
) -> None:
    index = SimhashIndex(RedisStore(redis_server.url, str(tmp_path)))
    store, tables = index.store, index.tables
    base = 0x0123456789ABCDEF
    index.add("https://a.example/", base)
    index.add("https://w.example/", base ^ (0b111111 << 8))  # 7 bits from the first page looked up
    client = redis.Redis.from_url(redis_server.url)

    def snap(key: str, fp: int) -> tuple[int, Any]:  # the bucket reads (HMGET) of one snapshot
        before = int(client.info("commandstats").get("cmdstat_hmget", {}).get("calls", 0))
        out = store.snapshot(key.encode(), fp.to_bytes(8, "big"), 3, 0, 12)
        return int(client.info("commandstats")["cmdstat_hmget"]["calls"]) - before, out

    # Another key within k: its buckets alone, no wide candidates (the page 7 bits away is none).
    n, out = snap("https://b.example/", base ^ 0b1)
    assert n == tables and [h.key for h in out.probe.hits] == [b"https://a.example/"] and out.probe.wide == ()
    # Nothing within k: the buckets one bit away too; the wide tier finds the pages 6 and 12 bits away.
    n, out = snap("https://c.example/", base ^ 0b111111)
    assert n == 2 * tables and out.probe.hits == []
    assert [(h.key, h.distance) for h in out.probe.wide] == [(b"https://a.example/", 6), (b"https://w.example/", 12)]
    # The decided key's own fingerprint is no match: the wide tier is read.
    n, out = snap("https://a.example/", base)
    assert n == 2 * tables and [h.key for h in out.probe.hits] == [b"https://a.example/"]
    client.close()
    index.close()
