"""RedisStore beyond the store contract: its Lua layout code, settings, faults, concurrent crawlers.

Every test runs against a real ``redis-server`` (conftest fixtures): the session's shared server
with a prefix of the test's own, or a server of the test's own where it kills or flushes it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
import redis
from scrapy.utils.test import get_crawler

from scrapy_simhash.errors import NotAnIndexError, SettingsMismatchError, SimhashIndexError, StoreError
from scrapy_simhash.store.base import TableLayout
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.store.redis_scripts import BUCKET_BITS
from scrapy_simhash.store.redisstore import RedisStore, shard_of

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]


def _index(url: str, prefix: str, **kwargs: Any) -> SimhashIndex:
    return SimhashIndex(RedisStore(url, prefix), **kwargs)


def _bytes(reply: object) -> bytes:
    """A reply of these clients (no ``decode_responses``: bytes), there."""
    assert isinstance(reply, bytes)
    return reply


def _table_contents(client: redis.Redis, store: RedisStore) -> set[tuple[int, bytes, bytes]]:
    """Every (table, bucket, fingerprint) filed in the store's table hashes."""
    assert store._layout is not None
    vw = store._layout.value_width
    out: set[tuple[int, bytes, bytes]] = set()
    for t in range(len(store._layout.tables)):
        table = cast("dict[bytes, bytes]", client.hgetall(f"{store.prefix}t{t:02d}"))  # a client of bytes
        for bucket, blob in table.items():
            assert len(blob) % vw == 0
            fps = [blob[i : i + vw] for i in range(0, len(blob), vw)]
            assert len(set(fps)) == len(fps), "a fingerprint filed twice in one bucket"
            out |= {(t, bucket, fp) for fp in fps}
    return out


def _expected_tables(layout: TableLayout, fps: set[bytes]) -> set[tuple[int, bytes, bytes]]:
    out = set()
    for fp in fps:
        for t, (tk, kb) in enumerate(zip(layout.tkeys(fp), layout.key_bits)):
            bucket = int.from_bytes(tk, "big") >> max(0, kb - BUCKET_BITS)
            out.add((t, bucket.to_bytes(2, "big"), fp))
    return out


@pytest.mark.parametrize(("bits", "k", "blocks"), [(64, 3, 4), (64, 3, 6), (64, 7, 8), (128, 3, 4), (128, 4, 7)])
def test_lua_files_and_unfiles_every_layout_as_python_does(
    redis_server: Any, tmp_path: Path, bits: int, k: int, blocks: int
) -> None:
    # Replacing or dropping a key's fingerprint makes the script compute the old fingerprint's
    # buckets itself (from the layout it carries): they must be Python's, or stale entries stay.
    index = _index(redis_server.url, str(tmp_path), bits=bits, max_distance=k, blocks=blocks)
    store = index.store
    assert isinstance(store, RedisStore)
    client = redis.Redis.from_url(redis_server.url)
    rng = random.Random(bits * 100 + blocks)
    stored: dict[str, int] = {}
    index.add_many((f"k{i}", rng.getrandbits(bits)) for i in range(150))
    stored.update(index.items())
    for i in range(0, 150, 2):  # replace half of them, one by one
        stored[f"k{i}"] = rng.getrandbits(bits)
        index.add(f"k{i}", stored[f"k{i}"])
    for i in range(1, 150, 6):  # forget some
        assert index.remove(f"k{i}")
        del stored[f"k{i}"]
    index.add("twin", stored["k0"])  # two keys on one fingerprint, then one of them leaves
    index.remove("k0")
    stored["twin"] = stored.pop("k0")
    fps = {v.to_bytes(bits // 8, "big") for v in stored.values()}
    assert _table_contents(client, store) == _expected_tables(index.layout, fps)
    for v in list(stored.values())[:30]:
        q = v ^ (1 << rng.randrange(bits)) ^ (1 << rng.randrange(bits))
        brute = sorted((kk, (vv ^ q).bit_count()) for kk, vv in stored.items() if (vv ^ q).bit_count() <= k)
        assert sorted((m.key, m.distance) for m in index.near(q)) == brute
    assert dict(index.items()) == stored and len(index) == len(stored)
    index.close()
    client.close()


def test_settings_url_fallbacks_and_prefix(tmp_path: Path) -> None:
    path = tmp_path / "myspider" / "pages"

    def build(**settings: Any) -> RedisStore:
        return RedisStore.from_crawler(get_crawler(settings_dict=settings), path)

    store = build()
    assert store.url == "redis://127.0.0.1:6379/0" and store.prefix == "{simhash:myspider:pages}:"
    store = build(REDIS_URL="redis://:secret@10.0.0.5:6380/2", REDIS_PARAMS={"socket_timeout": 9, "encoding": "utf-8"})
    assert store.url == "redis://:secret@10.0.0.5:6380/2" and store._params == {"socket_timeout": 9}
    assert store.path is not None and "secret" not in store.path and "10.0.0.5:6380" in store.path
    store = build(
        SIMHASH_REDIS_URL="redis://a:1/0", REDIS_URL="redis://b:2/0", SIMHASH_REDIS_PREFIX="crawl7:%(spider)s"
    )
    assert store.url == "redis://a:1/0" and store.prefix == "{crawl7:myspider:pages}:"
    assert build(REDIS_HOST="h", REDIS_PORT=7000).url == "redis://h:7000/0"
    assert RedisStore(prefix="{shared}:idx").prefix == "{shared}:idx:"  # a tag of the user's own
    with pytest.raises(ValueError, match="SIMHASH_REDIS_PREFIX"):
        build(SIMHASH_REDIS_PREFIX="x:%(name)s")
    with pytest.raises(ValueError, match="SIMHASH_REDIS_URL"):
        build(SIMHASH_REDIS_URL="localhost:6379")


def test_other_settings_are_refused_and_nothing_changes(redis_server: Any, tmp_path: Path) -> None:
    index = _index(redis_server.url, str(tmp_path), max_distance=3, fingerprint_settings={"features": "words"})
    index.add("a", 5)
    index.close()
    with pytest.raises(SettingsMismatchError, match="max_distance"):
        _index(redis_server.url, str(tmp_path), max_distance=4)
    with pytest.raises(SettingsMismatchError, match="features"):
        _index(redis_server.url, str(tmp_path), fingerprint_settings={"features": "chars"})
    again = _index(redis_server.url, str(tmp_path))
    assert again.get("a") == 5 and again.fingerprint_settings == {"features": "words"}
    again.close()


def test_foreign_keys_are_not_an_index_and_stay(redis_server: Any, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_server.url)
    for n, setup in enumerate(
        [
            lambda p: client.set(p + "meta", b"not json"),
            lambda p: client.rpush(p + "meta", b"a list"),
            lambda p: client.hset(p + "fps", b"x", b"y"),  # data without metadata
        ]
    ):
        store = RedisStore(redis_server.url, f"{tmp_path}/{n}")
        setup(store.prefix)
        before = {key: client.dump(key) for key in client.keys(store.prefix.replace("{", "\\{") + "*")}
        with pytest.raises(NotAnIndexError, match="left untouched"):
            SimhashIndex(RedisStore(redis_server.url, f"{tmp_path}/{n}"))
        with pytest.raises(NotAnIndexError):
            RedisStore(redis_server.url, f"{tmp_path}/{n}").destroy()
        assert {key: client.dump(key) for key in before} == before
    client.close()


def test_destroy_deletes_every_key_of_the_index(redis_server: Any, tmp_path: Path) -> None:
    index = _index(redis_server.url, str(tmp_path), blocks=6)
    index.add_many((f"k{i}", i * 0x9E3779B97F4A7C15 % (1 << 64)) for i in range(300))
    index.put_record("k1", b"r", due=5.0)
    index.put_aux("t", b"x")
    index.close()
    client = redis.Redis.from_url(redis_server.url)
    pattern = RedisStore(prefix=str(tmp_path)).prefix.replace("{", "\\{") + "*"
    assert client.keys(pattern)
    assert RedisStore(redis_server.url, str(tmp_path)).destroy()
    assert client.keys(pattern) == []
    assert not RedisStore(redis_server.url, str(tmp_path)).destroy()
    client.close()


def test_an_index_of_the_earlier_key_layout_is_refused_untouched_and_a_reset_deletes_it(
    redis_server: Any, tmp_path: Path
) -> None:
    # The layout before entries: fingerprints in P k<shard>, records in P r<shard>, hot states in
    # P h<shard>, the metadata without the layout's field.
    client = redis.Redis.from_url(redis_server.url)
    index = _index(redis_server.url, str(tmp_path))
    index.close()
    prefix = RedisStore(prefix=str(tmp_path)).prefix
    meta = json.loads(_bytes(client.get(prefix + "meta")))
    assert meta.pop("redis_layout") == 2
    client.set(prefix + "meta", json.dumps(meta, sort_keys=True))
    client.hset(prefix + "k7", "https://a.example/", b"\x00" * 8)
    client.hset(prefix + "r7", "https://a.example/", b"an old record")
    client.hset(prefix + "h7", "https://a.example/", b"\x00" * 57)
    before = {name: client.dump(name) for name in client.keys(prefix.replace("{", "\\{") + "*")}
    with pytest.raises(SimhashIndexError, match=r"earlier version.*layout 2.*Rebuild it.*SIMHASH_RESET"):
        _index(redis_server.url, str(tmp_path))
    assert {name: client.dump(name) for name in before} == before  # untouched
    assert RedisStore(redis_server.url, str(tmp_path)).destroy()
    assert client.keys(prefix.replace("{", "\\{") + "*") == []
    client.close()


def test_on_a_cluster_an_index_of_the_servers_layout_is_refused_untouched(redis_cluster: Any) -> None:
    # A cluster's index is layout 3 (records in shards of their own hash tags); one of layout 2 (a
    # server's, or a cluster's before) is refused with the rebuild message, and a reset deletes it.
    from redis.cluster import RedisCluster

    prefix = "layout38"
    RedisStore(redis_cluster.url, prefix).destroy()
    _index(redis_cluster.url, prefix).close()
    client = RedisCluster.from_url(redis_cluster.url)
    name = RedisStore(prefix=prefix).prefix + "meta"
    meta = json.loads(_bytes(client.get(name)))
    assert meta.pop("redis_layout") == 3
    client.set(name, json.dumps({"redis_layout": 2, **meta}))
    before = client.get(name)
    with pytest.raises(SimhashIndexError, match=r"earlier version.*layout 3 on a cluster.*Rebuild it"):
        _index(redis_cluster.url, prefix)
    assert client.get(name) == before
    assert RedisStore(redis_cluster.url, prefix).destroy()
    assert not client.exists(name)
    client.close()


def test_a_urls_fingerprint_record_and_hot_state_are_one_entry(redis_server: Any, tmp_path: Path) -> None:
    # The URL is stored in its entry (and the due index and, for a fingerprint's keys, P fps) only.
    index = _index(redis_server.url, str(tmp_path))
    url = "https://a.example/page"
    index.add(url, 0x0123456789ABCDEF)
    index.put_record(url, b"a record", due=5.0)
    client = redis.Redis.from_url(redis_server.url)
    prefix = RedisStore(prefix=str(tmp_path)).prefix
    holders = [
        _bytes(name)
        for name in client.keys(prefix.replace("{", "\\{") + "*")
        if client.type(name) == b"hash" and client.hexists(name, url)
    ]
    assert [name[len(prefix) :].rstrip(b"0123456789") for name in holders] == [b"r"]
    entry = _bytes(client.hget(holders[0], url))
    assert entry[0] == 7 and entry[1:9] == (0x0123456789ABCDEF).to_bytes(8, "big") and entry.endswith(b"a record")
    assert len(entry) == 1 + 8 + 57 + len(b"a record")
    index.remove(url)  # the record stays, the fingerprint goes; then the record goes: no entry left
    assert index.get_record(url) == b"a record" and _bytes(client.hget(holders[0], url))[0] == 6
    assert index.delete_record(url) and not client.hexists(holders[0], url)
    assert int(_bytes(client.get(prefix + "ne"))) == 0 and int(_bytes(client.get(prefix + "nh"))) == 0
    index.close()
    client.close()


def test_a_group_undoes_only_what_nobody_changed_since(redis_server: Any, tmp_path: Path) -> None:
    mine, other = (RedisStore(redis_server.url, str(tmp_path)) for _ in range(2))
    layout = TableLayout(64, 3, 4)
    for s in (mine, other):
        s.open()
        s.configure(layout)
        s.create_meta(b'{"format": "scrapy-simhash-index"}')
    mine.put([(b"a", b"\x00" * 7 + b"\x01"), (b"b", b"\x00" * 7 + b"\x02")])
    mine.begin()
    mine.put([(b"a", b"\xff" * 8), (b"b", b"\xf0" * 8)])
    mine.put_records([(b"a", b"mine", 1.0)])
    other.put([(b"b", b"\x0f" * 8)])  # another process writes b meanwhile: its write stays
    other.put_records([(b"a", b"other", None)])
    mine.abort()
    assert mine.get([b"a", b"b"]) == [b"\x00" * 7 + b"\x01", b"\x0f" * 8]
    assert mine.get_records([b"a"]) == [b"other"] and mine.records_due(10, 10) == []
    assert [h.key for h in mine.near(b"\xff" * 8, 3, 0).hits] == []
    mine.close()
    other.close()


def test_keys_vanishing_while_open_are_reported_never_recreated(redis_factory: Callable[..., Any]) -> None:
    server = redis_factory()  # no persistence: a restart loses everything
    index = _index(server.url, "crawl")
    assert index.check_and_add("https://a.example/1", 0xABCDEF) is None
    server.kill()
    server.start()
    for call in (
        lambda: index.check_and_add("https://a.example/2", 0xABCDEF),
        lambda: index.get_record("https://a.example/1"),
        lambda: index.put_record("https://a.example/1", b"r"),
    ):
        with pytest.raises(StoreError) as info:
            call()
        assert info.value.kind == "lost" and "appendonly" in str(info.value)
    assert redis.Redis.from_url(server.url).dbsize() == 0  # nothing re-created behind the crawl
    index.close()
    # A new crawl opens it as a new index.
    again = _index(server.url, "crawl")
    assert len(again) == 0 and again.check_and_add("https://a.example/2", 0xABCDEF) is None
    again.close()


def test_connection_loss_raises_then_resumes_when_the_server_is_back(redis_factory: Callable[..., Any]) -> None:
    server = redis_factory(persist=True)
    index = _index(server.url, "crawl")
    assert index.check_and_add("https://a.example/1", 0xABCDEF) is None
    server.kill()
    for _ in range(3):
        with pytest.raises(StoreError) as info:
            index.check_and_add("https://a.example/2", 0xABCDEF)
        assert info.value.kind == "connection" and "SIMHASH_REDIS_URL" in str(info.value)
        assert server.url.split("//")[1].split("/")[0] in str(info.value)
    server.start()  # the append-only file brings the index back
    deadline = time.monotonic() + 30
    while True:  # calls fail at once until the store's ping thread sees the server again
        try:
            match = index.check_and_add("https://a.example/2", 0xABCDEF)
            break
        except StoreError as exc:
            assert exc.kind == "connection" and time.monotonic() < deadline  # noqa: PT017 - a retry loop
            time.sleep(0.05)
    assert match is not None and match.key == "https://a.example/1"
    index.close()


_CRAWLER_SRC = textwrap.dedent(
    """
    import json, os, random, sys, time
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.store.record import PageRecord
    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.fingerprint import PageFingerprint
    from scrapy_simhash.store.redisstore import RedisStore
    url, prefix, worker, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    pages = json.loads(sys.argv[5])
    tracker = ChangeTracker(SimhashIndex(RedisStore(url, prefix)))
    random.Random(worker).shuffle(pages)
    while not os.path.exists(go):
        time.sleep(0.002)
    out = {}
    for key, fp in pages:
        v = tracker.observe(key, PageFingerprint.of(fp))
        out[key] = [v.verdict, v.duplicate_of]
    tracker.index.close()
    print(json.dumps(out))
    """
)


def _crawlers(url: str, prefix: str, shares: list[list[tuple[str, int]]], go: Path) -> list[dict[str, Any]]:
    """One process of ``_CRAWLER_SRC`` per share, started together: what each decided."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CRAWLER_SRC, url, prefix, str(w), str(go), json.dumps(share)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for w, share in enumerate(shares)
    ]
    time.sleep(0.5)  # (each process opens the index first, then waits for go)
    go.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out))
    return results


@pytest.mark.parametrize("server", ["redis_server", "redis_cluster"])
def test_four_crawler_processes_keep_one_page_per_group_and_every_record(
    server: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # Four processes fetch overlapping shares of 30 near-duplicate groups (6 variants each, pairwise
    # within 2 bits; each variant fetched by two processes) through the whole per-page decision
    # (record read, check-and-add, record write), all at once; on a cluster too, where the records
    # are in other slots than the index (no lock: the index's write, then the record's, each conditional).
    redis_server = request.getfixturevalue(server)
    rng = random.Random(5)
    groups: dict[int, list[tuple[str, int]]] = {}
    for g in range(30):
        base = rng.getrandbits(64)
        groups[g] = [
            (f"https://site{g % 3}.example/g{g}/v{v}", base ^ (1 << b)) for v, b in enumerate(rng.sample(range(64), 6))
        ]
    shares: list[list[tuple[str, int]]] = [[] for _ in range(4)]
    for pages in groups.values():
        for v, page in enumerate(pages):
            shares[v % 4].append(page)
            shares[(v + 1) % 4].append(page)
    prefix = str(tmp_path)
    SimhashIndex(RedisStore(redis_server.url, prefix)).close()  # created once, as a crawl start would
    results = _crawlers(redis_server.url, prefix, shares, tmp_path / "go")
    index = _index(redis_server.url, prefix)
    stored = dict(index.items())
    group_of = {key: g for g, pages in groups.items() for key, _ in pages}
    for g, pages in groups.items():
        keys = {key for key, _ in pages}
        assert len(keys & set(stored)) == 1, (g, sorted(keys & set(stored)))
        for key in keys:  # every page's record is there, and names its group's page when a duplicate
            record = PageRecord.parse(index.get_record(key))
            assert record is not None and record.fetch_count >= 1, key
            if record.duplicate_of is not None:
                assert group_of[record.duplicate_of] == g
    # A page kept by one process and dropped by another fetch of it: never two pages of a group kept.
    for result in results:
        for key, (verdict, of) in result.items():
            assert verdict in ("new", "near_duplicate", "unchanged", "changed"), verdict
            if of is not None:
                assert group_of[of] == group_of[key]
    index.close()


def test_on_a_cluster_processes_deciding_one_url_at_once_decide_it_once_and_count_every_fetch(
    redis_cluster: Any, tmp_path: Path
) -> None:
    # Three processes observe the same 80 URLs at once (each in its own order) on a three-node
    # cluster: each URL is new once and unchanged for the others, and its record (in a record shard
    # on another node than the index, mostly) counts all three fetches.
    rng = random.Random(29)
    pages = [(f"https://race.example/p{i}", rng.getrandbits(64)) for i in range(80)]
    prefix = str(tmp_path)
    SimhashIndex(RedisStore(redis_cluster.url, prefix)).close()
    results = _crawlers(redis_cluster.url, prefix, [pages] * 3, tmp_path / "go")
    index = _index(redis_cluster.url, prefix)
    store = index.store
    assert isinstance(store, RedisStore)
    homes = set()
    for key, _ in pages:
        assert sorted(result[key][0] for result in results) == ["new", "unchanged", "unchanged"], key
        record = PageRecord.parse(index.get_record(key))
        assert record is not None and record.fetch_count == 3, (key, record)
        homes.add(store._connect().get_node_from_key(store._record_shards[shard_of(key.encode())]).port)
    assert len(homes) == 3  # the records on every node
    assert index.stats["conflicts"] == 0  # (this process only read)
    index.close()
    RedisStore(redis_cluster.url, prefix).destroy()


def test_a_server_that_stops_answering_holds_up_only_one_call(redis_factory: Callable[..., Any]) -> None:
    # SIGSTOP: connections stay open, nothing answers. The call that finds it out waits for its
    # timeouts; the calls after it fail at once (no network) until the ping thread gets an answer.
    import signal

    server = redis_factory()
    store = RedisStore(server.url, "crawl", params={"socket_timeout": 0.2, "socket_connect_timeout": 0.2})
    index = SimhashIndex(store)
    index.add("https://a.example/1", 0xABCDEF)
    server.proc.send_signal(signal.SIGSTOP)
    try:
        with pytest.raises(StoreError) as first:
            index.get("https://a.example/1")
        assert first.value.kind == "connection" and "TimeoutError" in str(first.value)
        for _ in range(5):
            with pytest.raises(StoreError) as later:
                index.get("https://a.example/1")
            assert later.value.kind == "connection" and "waiting for it to come back" in str(later.value)
    finally:
        server.proc.send_signal(signal.SIGCONT)
    deadline = time.monotonic() + 30
    while True:
        try:
            assert index.get("https://a.example/1") == 0xABCDEF
            break
        except StoreError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    index.close()


def test_the_evidence_spreads_over_a_clusters_nodes(redis_cluster, tmp_path) -> None:
    """A kept page's evidence (most of its bytes) is a key of its own, outside the index's hash
    tag: on a three-node cluster it lands on every node, the index's keys on one."""
    from redis.cluster import RedisCluster

    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.store.redisstore import RedisStore

    store = RedisStore(redis_cluster.url, prefix=str(tmp_path))
    with SimhashIndex(store) as index:
        for i in range(60):
            index.put_record(f"https://a.example/{i}", b"r", evidence=b"e%d" % i)
        assert index.get_evidence("https://a.example/7") == b"e7"
        client = RedisCluster.from_url(redis_cluster.url)
        names = [store.evidence_prefix + f"https://a.example/{i}".encode() for i in range(60)]
        assert all(b"{" not in name for name in names)
        nodes = {client.get_node_from_key(name).port for name in names}
        assert len(nodes) == 3 and client.get_node_from_key(store.prefix + "meta").port in nodes
        assert client.mget_nonatomic(names[:2]) == [b"e0", b"e1"]
        index.delete_record("https://a.example/7")
        assert index.get_evidence("https://a.example/7") is None
        client.close()


def test_what_a_crawl_spreads_over_a_three_node_cluster(redis_cluster) -> None:
    """Pages through the real decision (``ChangeTracker.observe``) on a real three-node cluster:
    the index's own keys (tables, fingerprints, the keys' fingerprints, counts) are alone in its
    slot, on one node; the records (record shards, hash tags of their own) and the evidence are
    spread over the slots of all three nodes; a near-duplicate of a kept page is measured against
    evidence read from another node."""
    from helpers.pages import own_text_page
    from redis.cluster import RedisCluster

    from scrapy_simhash.decision.tracker import ChangeTracker

    prefix = "spread38"  # a fixed name: its slots are the same every run
    RedisStore(redis_cluster.url, prefix=prefix).destroy()
    store = RedisStore(redis_cluster.url, prefix=prefix)
    rng = random.Random(3)
    verdicts: dict[str, int] = {}
    with SimhashIndex(store) as index:
        tracker = ChangeTracker(index)
        kept: list[tuple[int, Any]] = []
        for i in range(120):
            if i % 4 == 3:  # a near-duplicate of a kept page: its text, one bit off
                fp, page = kept[rng.randrange(len(kept))]
                page = replace(page, fp=fp ^ 1)
            else:
                page = own_text_page(rng, i)
                kept.append((page.fp, page))
            verdict = tracker.observe(f"https://s{i % 7}.example/{i}", page, now=1.7e9 + i).verdict
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
        assert verdicts == {"new": 90, "near_duplicate": 30}
        record = PageRecord.parse(index.get_record("https://s3.example/3"))
        assert record is not None and record.duplicate_of is not None
    client = RedisCluster.from_url(redis_cluster.url)
    slot = client.keyslot(store.prefix + "meta")
    home = client.get_node_from_key(store.prefix + "meta")
    mine = store.prefix.replace("{", "\\{").replace("}", "\\}") + "*"
    own = [bytes(name) for name in client.scan_iter(match=mine)]
    kinds = {name[len(store.prefix) :].rstrip(b"0123456789") for name in own}
    assert {b"r", b"fps", b"t", b"meta", b"id", b"w", b"n"} <= kinds
    # CLUSTER GETKEYSINSLOT: the index's slot holds its own keys and nothing else of it (keys of
    # other tests on the same cluster may share the slot: only this store's names count).
    count = client.execute_command("CLUSTER COUNTKEYSINSLOT", slot, target_nodes=home)
    in_slot = [
        name if isinstance(name, bytes) else name.encode()
        for name in client.execute_command("CLUSTER GETKEYSINSLOT", slot, count, target_nodes=home)
    ]
    of_store = (store.prefix.encode(), store.evidence_prefix, b"{spread38:")
    assert sorted(name for name in in_slot if name.startswith(of_store)) == sorted(own)
    # The records: in shards of their own hash tags, whose CLUSTER KEYSLOT spread over every node.
    shards = [name for name in store._record_shards if client.exists(name)]
    records_on: dict[int, int] = {}
    slots = set()
    for name in shards:
        where = int(client.execute_command("CLUSTER KEYSLOT", name))
        assert where != slot
        slots.add(where)
        port = client.get_node_from_key(name).port
        records_on[port] = records_on.get(port, 0) + client.hlen(name)
    assert sum(records_on.values()) == 120 and len(slots) == len(shards) > 60
    assert set(records_on) == {node.port for node in client.get_primaries()}  # on every node
    assert min(records_on.values()) > 120 / 6  # about a third each
    # A kept page: its fingerprint in the index's entry (flags 1), its record in its shard's (flags 2).
    url = "https://s0.example/0"
    assert _bytes(client.hget(store.prefix + f"r{shard_of(url.encode())}", url))[0] == 1
    entry = _bytes(client.hget(store._record_shards[shard_of(url.encode())], url))
    assert entry[0] == 2 and PageRecord.parse(entry[1:]) is not None
    evidence_bytes: dict[int, int] = {}
    names = [store.evidence_prefix + f"https://s{i % 7}.example/{i}".encode() for i in range(120)]
    for name in names:
        if client.exists(name):
            port = client.get_node_from_key(name).port
            evidence_bytes[port] = evidence_bytes.get(port, 0) + (client.memory_usage(name, samples=0) or 0)
    assert set(evidence_bytes) == {node.port for node in client.get_primaries()}  # on every node
    index_bytes = sum(client.memory_usage(name, samples=0) or 0 for name in own)
    assert sum(evidence_bytes.values()) > 4 * index_bytes  # most of the bytes
    assert min(evidence_bytes.values()) > sum(evidence_bytes.values()) / 6  # about a third each
    print(
        f"index slot {slot} on :{home.port}: {len(own)} keys; records: {len(shards)} shards in {len(slots)} slots, "
        f"entries by node {records_on}; evidence bytes by node {evidence_bytes}"
    )
    assert RedisStore(redis_cluster.url, prefix=prefix).destroy()
    assert not any(client.exists(name) for name in store._record_shards[:50])
    client.close()


def test_a_foreign_key_where_the_evidence_goes_fails_the_write_before_it_writes(redis_server, tmp_path) -> None:
    import redis

    from scrapy_simhash.errors import StoreError
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.store.redisstore import RedisStore

    store = RedisStore(redis_server.url, prefix=str(tmp_path))
    client = redis.Redis.from_url(redis_server.url)
    client.hset(store.evidence_prefix + b"https://a.example/", "someone", "else's")
    with SimhashIndex(store) as index:
        with pytest.raises(StoreError) as info:
            index.put_record("https://a.example/", b"r", evidence=b"e")
        assert info.value.kind == "foreign_key"
        assert index.get_record("https://a.example/") is None  # the record is not written either
    assert client.hgetall(store.evidence_prefix + b"https://a.example/") == {b"someone": b"else's"}
    client.close()
