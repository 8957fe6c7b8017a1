"""The Redis store against a real redis-server that loses, evicts or refuses writes, and keys of
other programs under the index's prefix.

Each test starts a server of its own where it changes the server (its policy, its memory, a
restart), else uses the session's server with a prefix of its own.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import redis

from scrapy_simhash.decision.record import PageRecord
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.errors import StoreError
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore, shard_of

if TYPE_CHECKING:
    from collections.abc import Callable


def _index(url: str, prefix: str) -> SimhashIndex:
    return SimhashIndex(RedisStore(url, prefix))


def _fp(i: int) -> int:
    return i * 0x9E3779B97F4A7C15 % (1 << 64)


def _dumps(client: redis.Redis, prefix: str) -> dict[bytes, bytes]:
    return {key: client.dump(key) for key in client.keys(prefix.replace("{", "\\{") + "*")}


def _when_back(call: Callable[[], Any]) -> Any:
    """``call()`` once the store sees its restarted server (connection errors until then)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return call()
        except StoreError as exc:
            if exc.kind != "connection" or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# -- 3: a restart from an older snapshot --------------------------------------------------------------


def test_a_restart_from_an_older_snapshot_is_reported_and_every_later_call_fails(
    redis_factory: Callable[..., Any],
) -> None:
    server = redis_factory()  # RDB only (no append-only file): a restart loads the last snapshot
    client = redis.Redis.from_url(server.url)
    index = _index(server.url, "crawl")
    tracker = ChangeTracker(index)
    for i in range(20):
        assert tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i))).verdict == "new"
    client.save()  # the snapshot, mid-run
    for i in range(20, 40):
        assert tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i))).verdict == "new"
    client.close()
    server.kill()
    server.start()
    with pytest.raises(StoreError) as info:
        _when_back(lambda: index.get_record("https://a.example/1"))
    assert info.value.kind == "rolled_back" and "appendonly yes" in str(info.value)
    # The snapshot's index: its token is there, the pages after the snapshot are not.
    other = _index(server.url, "crawl")
    assert PageRecord.parse(other.get_record("https://a.example/25")) is None
    assert len(other) == 20
    # Writes by a process that opened it after the restart do not hide it from this one.
    other.add_many((f"https://b.example/{i}", _fp(1000 + i)) for i in range(50))
    for call in (
        lambda: tracker.observe("https://a.example/25", PageFingerprint.of(_fp(25))),
        lambda: index.check_and_add("https://a.example/41", _fp(41)),
        lambda: len(index),
    ):
        with pytest.raises(StoreError) as info:
            call()
        assert info.value.kind == "rolled_back"
    assert other.get("https://a.example/41") is None
    other.close()
    index.close()


# -- 4: eviction -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-lru", "noeviction"])
def test_an_evicting_policy_is_refused_at_open(redis_factory: Callable[..., Any], policy: str) -> None:
    server = redis_factory()
    client = redis.Redis.from_url(server.url)
    client.config_set("maxmemory-policy", policy)
    if policy == "noeviction":
        index = _index(server.url, "crawl")
        assert index.check_and_add("https://a.example/1", 0xABCDEF) is None
        index.close()
    else:
        with pytest.raises(StoreError) as info:
            _index(server.url, "crawl")
        assert info.value.kind == "eviction"
        assert policy in str(info.value) and "maxmemory-policy noeviction" in str(info.value)
        assert client.dbsize() == 0  # nothing created
    client.close()


def test_on_a_cluster_the_policy_of_the_node_that_holds_the_index_counts(redis_cluster: Any) -> None:
    from redis.cluster import RedisCluster

    cluster = RedisCluster.from_url(redis_cluster.url)
    store = RedisStore(redis_cluster.url, "evicting")
    ours = cluster.get_node_from_key(store.prefix + "meta")
    other = next(node for node in cluster.get_nodes() if node.port != ours.port)
    try:
        redis.Redis(port=other.port).config_set("maxmemory-policy", "allkeys-lru")
        RedisStore(redis_cluster.url, "evicting").open()  # another node's policy: no matter
        redis.Redis(port=ours.port).config_set("maxmemory-policy", "allkeys-lfu")
        with pytest.raises(StoreError) as info:
            RedisStore(redis_cluster.url, "evicting").open()
        assert info.value.kind == "eviction" and "allkeys-lfu" in str(info.value)
    finally:
        for node in (ours, other):
            redis.Redis(port=node.port).config_set("maxmemory-policy", "noeviction")
        cluster.close()


def test_the_policy_is_checked_where_config_is_disabled_and_warned_about_where_info_is(
    redis_factory: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    server = redis_factory()
    admin = redis.Redis.from_url(server.url)
    admin.config_set("maxmemory-policy", "allkeys-lru")
    admin.acl_setuser(
        "crawler", enabled=True, passwords=["+pw"], keys=["*"], channels=["*"], commands=["+@all", "-config"]
    )
    url = server.url.replace("redis://", "redis://crawler:pw@")
    with pytest.raises(StoreError) as info:  # INFO memory says it
        _index(url, "crawl")
    assert info.value.kind == "eviction"
    # A client of the caller's own on a server that refuses INFO: opened, with a warning.
    admin.config_set("maxmemory-policy", "noeviction")
    admin.acl_setuser("crawler", enabled=True, commands=["-info"])
    caplog.set_level(logging.WARNING, logger="scrapy_simhash")
    index = SimhashIndex(RedisStore(prefix="crawl", client=redis.Redis.from_url(url)))
    assert index.check_and_add("https://a.example/1", 0xABCDEF) is None
    assert any("could not read the maxmemory-policy" in r.getMessage() for r in caplog.records)
    assert any("noeviction" in r.getMessage() for r in caplog.records)
    index.close()
    admin.close()


# -- 5: a full server --------------------------------------------------------------------------------------


def test_a_server_at_its_maxmemory_is_memory_full(redis_factory: Callable[..., Any]) -> None:
    server = redis_factory()
    client = redis.Redis.from_url(server.url)
    index = _index(server.url, "crawl")
    client.config_set("maxmemory", client.info("memory")["used_memory"] + 1_000_000)  # noeviction: the default
    written = 0
    with pytest.raises(StoreError) as info:
        for i in range(10_000):
            index.put_record(f"https://a.example/{i}", b"x" * 4000, due=float(i))
            written += 1
    assert info.value.kind == "memory_full" and "maxmemory" in str(info.value)
    assert "check the disk" not in str(info.value)
    # Nothing of the refused call, everything before it.
    assert index.get_record(f"https://a.example/{written}") is None
    assert index.get_record(f"https://a.example/{written - 1}") == b"x" * 4000
    index.close()
    client.close()


# -- 6: destroy ---------------------------------------------------------------------------------------------


def test_destroy_deletes_only_what_an_index_owns(redis_server: Any, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_server.url)
    prefix = RedisStore(prefix=f"{tmp_path}/none").prefix
    client.rpush(prefix + "t00", b"a list")
    client.set(prefix + "k5", b"a string")
    client.hset(prefix + "r7", b"field", b"value")
    before = _dumps(client, prefix)
    assert not RedisStore(redis_server.url, f"{tmp_path}/none").destroy()  # no index there
    assert _dumps(client, prefix) == before
    # Beside an index: keys under its names that it does not own (a table past its layout's, a
    # shard it never wrote as a list, its due key holding a string) stay.
    index = _index(redis_server.url, f"{tmp_path}/index")
    keys = [f"https://a.example/{i}" for i in range(3)]
    index.add_many((key, _fp(i)) for i, key in enumerate(keys))
    index.put_record(keys[0], b"r")
    index.close()
    prefix = RedisStore(prefix=f"{tmp_path}/index").prefix
    free = next(s for s in range(1024) if s not in {shard_of(k.encode()) for k in keys})
    client.hset(prefix + "t50", b"field", b"value")
    client.rpush(prefix + f"k{free}", b"a list")
    client.set(prefix + "due", b"a string")  # the index kept no due time
    foreign = {
        key: dump for key, dump in _dumps(client, prefix).items() if key.endswith((b"t50", b"due", b"k%d" % free))
    }
    assert len(foreign) == 3
    assert RedisStore(redis_server.url, f"{tmp_path}/index").destroy()
    assert _dumps(client, prefix) == foreign
    client.close()


# -- 7: a script that would fail half-way ---------------------------------------------------------------


def test_a_foreign_key_fails_a_write_before_it_writes_anything(redis_server: Any, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_server.url)
    index = _index(redis_server.url, str(tmp_path))
    prefix = RedisStore(prefix=str(tmp_path)).prefix
    index.put_record("https://a.example/0", b"kept", due=5.0)
    client.delete(prefix + "due")
    client.set(prefix + "due", b"another program's string")
    before = _dumps(client, prefix)
    with pytest.raises(StoreError) as info:  # the record (HSET) before the due time (ZADD)
        index.put_record("https://a.example/1", b"new", due=7.0)
    assert _dumps(client, prefix) == before
    assert info.value.kind == "foreign_key" and f"{prefix}due holds a string, not a zset" in str(info.value)
    assert "SIMHASH_REDIS_PREFIX" in str(info.value)
    client.delete(prefix + "due")
    # Several records, the second in a shard hash that holds a list: the first is not written.
    a = "https://a.example/2"
    b = next(k for k in (f"https://b.example/{i}" for i in range(99)) if shard_of(k.encode()) != shard_of(a.encode()))
    client.rpush(prefix + f"r{shard_of(b.encode())}", b"a list")
    before = _dumps(client, prefix)
    with pytest.raises(StoreError) as info:
        index.put_records([(a, b"first", 1.0), (b, b"second", 2.0)])
    assert _dumps(client, prefix) == before
    assert info.value.kind == "foreign_key"
    # A fingerprint whose table hash is a string: no key count, no key, no fingerprint written.
    client.delete(prefix + "t01")
    client.set(prefix + "t01", b"another program's string")
    before = _dumps(client, prefix)
    with pytest.raises(StoreError) as info:
        index.check_and_add("https://a.example/3", 0x1234)
    assert _dumps(client, prefix) == before
    assert info.value.kind == "foreign_key" and f"{prefix}t01" in str(info.value)
    index.close()
    client.close()
