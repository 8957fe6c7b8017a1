"""The Redis store against a real redis-server that loses, evicts or refuses writes, and keys of
other programs under the index's prefix.

Each test starts a server of its own where it changes the server (its policy, its memory, a
restart), else uses the session's server with a prefix of its own.
"""

from __future__ import annotations

import logging
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
import redis
from helpers.pages import own_text_page

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.errors import NotAnIndexError, StoreError
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.store.redisstore import EVICTION_CHECK_CALLS, RedisStore, shard_of

if TYPE_CHECKING:
    from collections.abc import Callable


def _index(url: str, prefix: str) -> SimhashIndex:
    return SimhashIndex(RedisStore(url, prefix))


def _fp(i: int) -> int:
    return i * 0x9E3779B97F4A7C15 % (1 << 64)


def _dumps(client: redis.Redis, prefix: str) -> dict[bytes, bytes]:
    # a client of bytes (no decode_responses), and each key it lists has a dump
    return cast("dict[bytes, bytes]", {key: client.dump(key) for key in client.keys(prefix.replace("{", "\\{") + "*")})


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


def test_on_a_cluster_the_policy_of_every_node_counts(redis_cluster: Any) -> None:
    # The index's node holds the index; every node holds records and evidence (layout 3).
    from redis.cluster import RedisCluster

    cluster = RedisCluster.from_url(redis_cluster.url)
    store = RedisStore(redis_cluster.url, "evicting")
    ours = cluster.get_node_from_key(store.prefix + "meta")
    other = next(node for node in cluster.get_nodes() if node.port != ours.port)
    try:
        RedisStore(redis_cluster.url, "evicting").open()
        redis.Redis(port=other.port).config_set("maxmemory-policy", "allkeys-lru")
        with pytest.raises(StoreError) as info:
            RedisStore(redis_cluster.url, "evicting").open()
        assert info.value.kind == "eviction" and f":{other.port} is allkeys-lru" in str(info.value)
        assert "records and evidence" in str(info.value)
        redis.Redis(port=other.port).config_set("maxmemory-policy", "noeviction")
        redis.Redis(port=ours.port).config_set("maxmemory-policy", "allkeys-lfu")
        with pytest.raises(StoreError) as info:
            RedisStore(redis_cluster.url, "evicting").open()
        assert info.value.kind == "eviction" and "allkeys-lfu" in str(info.value)
    finally:
        for node in (ours, other):
            redis.Redis(port=node.port).config_set("maxmemory-policy", "noeviction")
        cluster.close()


def test_on_a_cluster_a_node_of_records_switched_to_evicting_is_noticed_within_a_bounded_number_of_calls(
    redis_cluster: Any,
) -> None:
    from redis.cluster import RedisCluster

    from scrapy_simhash.store.redisstore import EVICTION_CHECK_CALLS, shard_of

    RedisStore(redis_cluster.url, "evicting-records").destroy()
    index = SimhashIndex(RedisStore(redis_cluster.url, "evicting-records"))
    store = index.store
    assert isinstance(store, RedisStore)
    cluster = RedisCluster.from_url(redis_cluster.url)
    home = cluster.get_node_from_key(store.prefix + "meta").port
    urls = [f"https://a.example/{i}" for i in range(60)]
    for url in urls:
        index.put_record(url, b"r")
    node = {url: cluster.get_node_from_key(store._record_shards[shard_of(url.encode())]).port for url in urls}
    other = next(port for port in node.values() if port != home)
    theirs = [url for url in urls if node[url] == other]
    try:
        redis.Redis(port=other).config_set("maxmemory-policy", "allkeys-lru")
        with pytest.raises(StoreError) as info:  # noqa: PT012 - one of the calls refuses
            for _ in range(EVICTION_CHECK_CALLS):  # every such call of the process checks
                index.get_record(theirs[0])
        assert info.value.kind == "eviction" and f":{other}'s maxmemory-policy became allkeys-lru" in str(info.value)
        redis.Redis(port=other).config_set("maxmemory-policy", "noeviction")
        assert index.get_record(theirs[0]) == b"r"  # nothing evicted: the crawl goes on
    finally:
        redis.Redis(port=other).config_set("maxmemory-policy", "noeviction")
        cluster.close()
    index.close()
    assert RedisStore(redis_cluster.url, "evicting-records").destroy()


def test_on_a_cluster_the_selections_read_of_hot_states_notices_an_evicting_node(redis_cluster: Any) -> None:
    """The hot states a selection reads (pipelined a node) check the policy as a call alone does."""
    from redis.cluster import RedisCluster

    from scrapy_simhash.store.redisstore import EVICTION_CHECK_CALLS

    RedisStore(redis_cluster.url, "evicting-hot").destroy()
    index = SimhashIndex(RedisStore(redis_cluster.url, "evicting-hot"))
    for i in range(200):
        index.put_record(f"https://a.example/{i}", b"r", due=1000.0 + i)
    want = index.due_states(None, 10_000)
    assert len(want[1]) == 200
    cluster = RedisCluster.from_url(redis_cluster.url)
    ports = [node.port for node in cluster.get_primaries()]
    try:
        for port in ports:
            redis.Redis(port=port).config_set("maxmemory-policy", "allkeys-lru")
        with pytest.raises(StoreError) as info:  # noqa: PT012 - one of the calls refuses
            for _ in range(EVICTION_CHECK_CALLS):
                index.due_states(None, 10_000)
        assert info.value.kind == "eviction" and "maxmemory-policy became allkeys-lru" in str(info.value)
        for port in ports:
            redis.Redis(port=port).config_set("maxmemory-policy", "noeviction")
        assert index.due_states(None, 10_000) == want  # nothing evicted: the crawl goes on
    finally:
        for port in ports:
            redis.Redis(port=port).config_set("maxmemory-policy", "noeviction")
        cluster.close()
    index.close()
    assert RedisStore(redis_cluster.url, "evicting-hot").destroy()


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
    with pytest.raises(StoreError) as info:  # noqa: PT012 - writes until the server refuses one
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
    count = client.get(prefix + "nh")
    assert count is not None
    client.delete(prefix + "nh")
    client.hset(prefix + "nh", "another", "program's")
    before = _dumps(client, prefix)
    with pytest.raises(StoreError) as info:  # the entry (HSET) before the count of hot states (INCR)
        index.put_record("https://a.example/1", b"new", due=7.0)
    assert _dumps(client, prefix) == before
    assert info.value.kind == "foreign_key" and f"{prefix}nh holds a hash, not a string" in str(info.value)
    assert "SIMHASH_REDIS_PREFIX" in str(info.value)
    client.delete(prefix + "nh")
    client.set(prefix + "nh", count)
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


# -- 8: a policy switched to evicting mid-crawl, and an index that lost keys -------------------------------


def _entry_counts(client: redis.Redis, prefix: str) -> tuple[int, int, int, int]:
    """The entries in the shards, and those with a fingerprint, a record, a hot state (flags 1, 2, 4)."""
    pipe = client.pipeline(transaction=False)
    for s in range(1024):
        pipe.hvals(f"{prefix}r{s}")
    flags = [value[0] for values in pipe.execute() for value in values]
    return len(flags), sum(f & 1 for f in flags), sum(f >> 1 & 1 for f in flags), sum(f >> 2 & 1 for f in flags)


def test_a_policy_switched_to_evicting_at_page_1000_of_a_5mb_server_is_eviction_within_8_calls(
    redis_factory: Callable[..., Any],
) -> None:
    """The issue's scenario: a 5 MB server (full by page 1,000: writes refused, ``memory_full``)
    switched to ``allkeys-lru`` before page 1,000. The eviction is reported (kind ``eviction``)
    within :data:`EVICTION_CHECK_CALLS` store calls of the server's first eviction, so at most 3
    pages are answered after it; every later page fails; the index's next open says what it lost."""
    server = redis_factory()
    admin = redis.Redis.from_url(server.url)
    admin.config_set("maxmemory", "5mb")
    store = RedisStore(server.url, "crawl")
    tracker = ChangeTracker(SimhashIndex(store))
    rng = random.Random(5)
    kinds: list[str | None] = []
    first_eviction = None
    for i in range(1200):
        if i == 1000:
            assert "memory_full" in kinds and "eviction" not in kinds  # full, not evicting: refused
            admin.config_set("maxmemory-policy", "allkeys-lru")
        try:
            tracker.observe(f"https://a.example/{i}", own_text_page(rng, i), now=1.7e9 + i)
            kinds.append(None)
        except StoreError as exc:
            kinds.append(exc.kind)
            if exc.kind == "eviction":
                assert "allkeys-lru" in str(exc) and "maxmemory-policy noeviction" in str(exc)  # noqa: PT017 - a loop
        if first_eviction is None and int(admin.info("stats")["evicted_keys"]) > 0:
            first_eviction = i
    assert first_eviction is not None and first_eviction >= 1000  # the server did evict
    answered = kinds[first_eviction:].index("eviction")
    assert answered <= 3  # pages answered after the first eviction
    assert set(kinds[first_eviction + answered :]) == {"eviction"}  # every later page fails
    tracker.index.close()
    # The policy set back: the index says at open what it lost, as the shards and its counts show it.
    admin.config_set("maxmemory-policy", "noeviction")
    # Room for what an open writes: what it says must depend on the keys left, not on a full server.
    admin.config_set("maxmemory", "0")
    prefix = store.prefix
    entries, keys, records, hots = _entry_counts(admin, prefix)
    n, nr = int(admin.get(prefix + "n") or 0), int(admin.get(prefix + "nr") or 0)
    ne, nh = int(admin.get(prefix + "ne") or 0), int(admin.get(prefix + "nh") or 0)
    left = admin.exists(*(prefix + name for name in ("fps", "n", "nr", "ne", "nh", "aux", "id", "w"))) + entries
    if not admin.exists(prefix + "meta") and left:
        # The eviction took the metadata (read only at open, so the idlest key) and left others.
        with pytest.raises(NotAnIndexError, match=r"no metadata.*evicted"):
            SimhashIndex(RedisStore(server.url, "crawl"))
    elif (n, nr, ne, nh) == (keys, records, entries, hots):
        # Only evidence was evicted, or the whole index with its metadata: nothing left to tell of.
        SimhashIndex(RedisStore(server.url, "crawl")).close()
    else:
        with pytest.raises(StoreError) as info:
            SimhashIndex(RedisStore(server.url, "crawl"))
        message = str(info.value)
        assert info.value.kind == "lost_keys" and "evicted" in message and "SIMHASH_RESET" in message
        if n > keys:
            assert f"{n - keys} of its {n} URLs' fingerprints" in message
        if nr > records:
            assert f"{nr - records} of its {nr} records" in message
        # A reset deletes it, and a new crawl starts a new index.
        assert RedisStore(server.url, "crawl").destroy()
        SimhashIndex(RedisStore(server.url, "crawl")).close()
    admin.close()


def test_a_policy_switched_before_the_server_is_full_is_reported_before_anything_is_evicted(
    redis_factory: Callable[..., Any],
) -> None:
    server = redis_factory()
    admin = redis.Redis.from_url(server.url)
    index = _index(server.url, "crawl")
    tracker = ChangeTracker(index)
    for i in range(20):
        tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i)))
    admin.config_set("maxmemory-policy", "volatile-lru")
    calls = 0
    with pytest.raises(StoreError) as info:  # noqa: PT012 - one of the calls refuses
        for calls in range(1, EVICTION_CHECK_CALLS + 1):
            index.get_record(f"https://a.example/{calls}")
    assert calls <= EVICTION_CHECK_CALLS and info.value.kind == "eviction"
    assert "maxmemory-policy became volatile-lru" in str(info.value)
    with pytest.raises(StoreError):  # checked on every call from then on
        index.get_record("https://a.example/1")
    assert admin.info("stats")["evicted_keys"] == 0
    admin.config_set("maxmemory-policy", "noeviction")  # nothing evicted: the crawl goes on
    for i in range(20, 20 + 2 * EVICTION_CHECK_CALLS):
        assert tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i))).verdict == "new"
    index.close()
    _index(server.url, "crawl").close()
    admin.close()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("r{key}", "1 of its 40 URLs' entries"),
        ("r{key}", "1 of its 40 URLs' fingerprints"),
        ("r{key}", "1 of its 40 records"),
        ("r{key}", "1 of its 40 hot states"),
        ("fps", "its fingerprints ({p}fps)"),
        ("t02", "its table {p}t02"),
        ("n", "its count of URLs' fingerprints ({p}n)"),
        ("nr", "its count of records ({p}nr)"),
        ("ne", "its count of URLs' entries ({p}ne)"),
        ("nh", "its count of hot states ({p}nh)"),
        ("w", "its write count ({p}w)"),
        ("id", "its token ({p}id)"),
    ],
)
def test_an_index_that_lost_keys_says_so_at_open_and_a_reset_deletes_it(
    redis_server: Any, tmp_path: Path, name: str, said: str
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    index = _index(redis_server.url, str(tmp_path))
    tracker = ChangeTracker(index)
    urls = [f"https://a.example/{i}" for i in range(40)]
    for i, url in enumerate(urls):
        tracker.observe(url, PageFingerprint.of(_fp(i)), now=1.7e9)
        raw = index.get_record(url)
        assert raw is not None
        index.put_record(url, raw, due=1.8e9 + i)  # scheduled: a due time, a hot state
    index.close()
    prefix = RedisStore(prefix=str(tmp_path)).prefix
    _index(redis_server.url, str(tmp_path)).close()  # intact: opens
    # A shard that holds one URL alone (so that the count is exact), as a flush or an eviction would.
    shards = [shard_of(u.encode()) for u in urls]
    lone = next(s for s in shards if shards.count(s) == 1)
    assert client.delete(prefix + name.format(key=lone)) == 1
    with pytest.raises(StoreError) as info:
        _index(redis_server.url, str(tmp_path))
    assert info.value.kind == "lost_keys" and said.format(p=prefix) in str(info.value)
    assert "evicted" in str(info.value) and "deleted" in str(info.value) and "SIMHASH_RESET" in str(info.value)
    assert RedisStore(redis_server.url, str(tmp_path)).destroy()
    assert not client.keys(prefix.replace("{", "\\{") + "*")
    client.close()


def test_an_index_whose_metadata_and_named_keys_are_gone_is_refused_not_created_again(
    redis_server: Any, tmp_path: Path
) -> None:
    """An eviction takes the idlest keys first: the metadata (read only at open) and the counters.
    Records and fingerprints left in the shards are no index to create anew over: refused."""
    client = redis.Redis.from_url(redis_server.url)
    index = _index(redis_server.url, str(tmp_path))
    tracker = ChangeTracker(index)
    for i in range(20):
        tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i)), now=1.7e9)
    index.close()
    prefix = RedisStore(prefix=str(tmp_path)).prefix
    named = [prefix + name for name in ("meta", "fps", "n", "nr", "due", "aux", "id", "w")]
    assert client.delete(*named) >= 6 and client.keys(prefix.replace("{", "\\{") + "r*")
    with pytest.raises(NotAnIndexError, match="no metadata"):
        _index(redis_server.url, str(tmp_path))
    assert not client.exists(prefix + "meta")  # left untouched
    client.close()


def test_a_restart_that_resets_the_count_of_evicted_keys_is_no_eviction(redis_factory: Callable[..., Any]) -> None:
    server = redis_factory(persist=True)
    admin = redis.Redis.from_url(server.url)
    admin.config_set("maxmemory-policy", "allkeys-lru")  # before the index: the server evicts a key of its own
    admin.config_set("maxmemory", admin.info("memory")["used_memory"] + 200_000)
    for i in range(1000):
        admin.set(f"another-program:{i}", b"x" * 1000)
    admin.config_set("maxmemory", "0")
    admin.config_set("maxmemory-policy", "noeviction")
    assert admin.info("stats")["evicted_keys"] > 0
    admin.close()
    index = _index(server.url, "crawl")
    tracker = ChangeTracker(index)
    for i in range(EVICTION_CHECK_CALLS):
        tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i)))
    server.kill()
    server.start()  # the append-only file: the index is whole, the server's count of evictions is 0
    _when_back(lambda: index.get_record("https://a.example/0"))
    for i in range(EVICTION_CHECK_CALLS, 3 * EVICTION_CHECK_CALLS):
        assert tracker.observe(f"https://a.example/{i}", PageFingerprint.of(_fp(i))).verdict == "new"
    index.close()
    _index(server.url, "crawl").close()
