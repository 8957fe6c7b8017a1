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
from typing import TYPE_CHECKING, Any

import pytest
import redis
from scrapy.utils.test import get_crawler

from scrapy_simhash.decision.record import PageRecord
from scrapy_simhash.errors import NotAnIndexError, SettingsMismatchError, SimhashIndexError, StoreError
from scrapy_simhash.store.base import TableLayout
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import BUCKET_BITS, RedisStore

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]


def _index(url: str, prefix: str, **kwargs: Any) -> SimhashIndex:
    return SimhashIndex(RedisStore(url, prefix), **kwargs)


def _table_contents(client: redis.Redis, store: RedisStore) -> set[tuple[int, bytes, bytes]]:
    """Every (table, bucket, fingerprint) filed in the store's table hashes."""
    assert store._layout is not None
    vw = store._layout.value_width
    out = set()
    for t in range(len(store._layout.tables)):
        for bucket, blob in client.hgetall(f"{store.prefix}t{t:02d}").items():
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
    for key, v in list(stored.items())[:30]:
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
    assert "secret" not in store.path and "10.0.0.5:6380" in store.path
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
    meta = json.loads(client.get(prefix + "meta"))
    assert meta.pop("redis_layout") == 2
    client.set(prefix + "meta", json.dumps(meta, sort_keys=True))
    client.hset(prefix + "k7", "https://a.example/", b"\x00" * 8)
    client.hset(prefix + "r7", "https://a.example/", b"an old record")
    client.hset(prefix + "h7", "https://a.example/", b"\x00" * 57)
    before = {name: client.dump(name) for name in client.keys(prefix.replace("{", "\\{") + "*")}
    with pytest.raises(SimhashIndexError, match="earlier version.*layout 2.*Rebuild it.*SIMHASH_RESET"):
        _index(redis_server.url, str(tmp_path))
    assert {name: client.dump(name) for name in before} == before  # untouched
    assert RedisStore(redis_server.url, str(tmp_path)).destroy()
    assert client.keys(prefix.replace("{", "\\{") + "*") == []
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
        bytes(name)
        for name in client.keys(prefix.replace("{", "\\{") + "*")
        if client.type(name) == b"hash" and client.hexists(name, url)
    ]
    assert [name[len(prefix) :].rstrip(b"0123456789") for name in holders] == [b"r"]
    entry = client.hget(holders[0], url)
    assert entry[0] == 7 and entry[1:9] == (0x0123456789ABCDEF).to_bytes(8, "big") and entry.endswith(b"a record")
    assert len(entry) == 1 + 8 + 57 + len(b"a record")
    index.remove(url)  # the record stays, the fingerprint goes; then the record goes: no entry left
    assert index.get_record(url) == b"a record" and client.hget(holders[0], url)[0] == 6
    assert index.delete_record(url) and not client.hexists(holders[0], url)
    assert int(client.get(prefix + "ne")) == 0 and int(client.get(prefix + "nh")) == 0
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
            assert exc.kind == "connection" and time.monotonic() < deadline
            time.sleep(0.05)
    assert match is not None and match.key == "https://a.example/1"
    index.close()


_CRAWLER_SRC = textwrap.dedent(
    """
    import json, os, random, sys, time
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.decision.record import PageRecord
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


def test_four_crawler_processes_keep_one_page_per_group_and_every_record(redis_server: Any, tmp_path: Path) -> None:
    # Four processes fetch overlapping shares of 30 near-duplicate groups (6 variants each, pairwise
    # within 2 bits; each variant fetched by two processes) through the whole per-page decision
    # (record read, check-and-add, record write), all at once.
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
    go = tmp_path / "go"
    prefix = str(tmp_path)
    SimhashIndex(RedisStore(redis_server.url, prefix)).close()  # created once, as a crawl start would
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CRAWLER_SRC, redis_server.url, prefix, str(w), str(go), json.dumps(share)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for w, share in enumerate(shares)
    ]
    go.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out))
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


def test_what_a_crawl_spreads_over_a_three_node_cluster(redis_cluster, tmp_path) -> None:
    """Pages through the real decision (``ChangeTracker.observe``) on a real three-node cluster:
    the index's keys (tables, fingerprints, keys, records, hot states, due times) are all in its
    slot, on one node; the evidence (most of the bytes) is on all three; a near-duplicate of a
    kept page is measured against evidence read from another node."""
    from helpers.pages import own_text_page
    from redis.cluster import RedisCluster

    from scrapy_simhash.decision.tracker import ChangeTracker

    store = RedisStore(redis_cluster.url, prefix=str(tmp_path))
    rng = random.Random(3)
    verdicts: dict[str, int] = {}
    with SimhashIndex(store) as index:
        tracker = ChangeTracker(index)
        kept = []
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
    client = RedisCluster.from_url(redis_cluster.url)
    home = client.get_node_from_key(store.prefix + "meta")
    slot = client.keyslot(store.prefix + "meta")
    index_bytes: dict[int, int] = {}
    evidence_bytes: dict[int, int] = {}
    for node in client.get_primaries():
        direct = redis.Redis(host=node.host, port=node.port)
        for name in direct.scan_iter(count=1000):
            size = direct.memory_usage(name, samples=0) or 0
            if name.startswith(store.prefix.encode()):
                assert node.port == home.port and client.keyslot(name) == slot
                index_bytes[node.port] = index_bytes.get(node.port, 0) + size
            elif name.startswith(store.evidence_prefix):  # (the session's cluster holds other tests' keys)
                evidence_bytes[node.port] = evidence_bytes.get(node.port, 0) + size
        direct.close()
    # The entries (fingerprint, record, hot state of each key) and the due times: in the index's slot.
    mine = store.prefix.replace("{", "\\{").replace("}", "\\}") + "*"
    kinds = {bytes(name)[len(store.prefix) :].rstrip(b"0123456789") for name in client.scan_iter(match=mine)}
    assert {b"r", b"fps", b"t", b"meta", b"id", b"w", b"n", b"nr", b"ne"} <= kinds and b"k" not in kinds
    assert set(evidence_bytes) == {node.port for node in client.get_primaries()}  # on every node
    assert sum(evidence_bytes.values()) > 4 * sum(index_bytes.values())  # most of the bytes
    assert min(evidence_bytes.values()) > sum(evidence_bytes.values()) / 6  # about a third each
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
