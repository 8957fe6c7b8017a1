"""The LMDB store's compact layout: buckets that hold several table keys (with ``t00`` holding
each fingerprint's ids), key prefixes named by a code, a fingerprint kept once when it is its
record's last one, hot states keyed by the due index; each answers what the memory store
answers, and an entry whose prefix is missing is reported as damage."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import lmdb
import pytest

from scrapy_simhash.errors import StoreError
from scrapy_simhash.schedule import FreshnessPolicy
from scrapy_simhash.store import hot, lmdbstore
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.memory import MemoryStore
from scrapy_simhash.store.record import PageRecord, schedule_of


def _store(index: SimhashIndex) -> LmdbStore:
    store = index.store
    assert isinstance(store, LmdbStore)
    return store


def _crowded(rng: random.Random, n: int) -> list[int]:
    """Fingerprints in few table keys (a few values of each 16-bit block), near one another."""
    blocks = [[rng.getrandbits(16) for _ in range(3)] for _ in range(4)]
    out = []
    for _ in range(n):
        fp = 0
        for b in range(4):
            fp = fp << 16 | (rng.choice(blocks[b]) ^ (1 << rng.randrange(16) if rng.random() < 0.5 else 0))
        out.append(fp)
    return out


def test_lookups_in_shared_buckets_answer_as_the_memory_store(tmp_path: Path) -> None:
    rng = random.Random(11)
    fps = _crowded(rng, 300)
    with SimhashIndex.open(tmp_path / "idx") as lmdb_index:
        memory_index = SimhashIndex(MemoryStore())
        for i, fp in enumerate(fps):
            key = f"https://s{i % 7}.example/{i}"
            if i % 10 == 3:  # a copy of an earlier page: one fingerprint, two keys
                fp = fps[i - 1]
            assert lmdb_index.check_and_add_wide(key, fp, 8) == memory_index.check_and_add_wide(key, fp, 8)
            if i % 13 == 5:  # a key's fingerprint changes
                lmdb_index.add(f"https://s{i % 7}.example/{i - 2}", fp ^ 0b101)
                memory_index.add(f"https://s{i % 7}.example/{i - 2}", fp ^ 0b101)
            if i % 17 == 9:
                assert lmdb_index.remove(f"https://s{(i - 4) % 7}.example/{i - 4}") == memory_index.remove(
                    f"https://s{(i - 4) % 7}.example/{i - 4}"
                )
        assert len(lmdb_index) == len(memory_index)
        assert sorted(lmdb_index.items()) == sorted(memory_index.items())
        lmdb_store, memory_store = lmdb_index.store, memory_index.store
        for fp in [*fps[::7], *(f ^ 0b11 for f in fps[::11])]:
            raw = fp.to_bytes(8, "big")
            for k, limit in ((3, 0), (6, 0), (6, 5)):  # with a cap: the same candidates verified
                assert lmdb_store.near(raw, k, limit) == memory_store.near(raw, k, limit)
        # The buckets: several table keys in one, t00 holding an id beside each fingerprint.
        store = _store(lmdb_index)
        with store._env.begin() as txn:  # type: ignore[union-attr]
            t00 = [bytes(v) for v in txn.cursor(store._tdbs[0]).iternext(keys=False, values=True)]
        assert sum(len(v) // 12 for v in t00) == len(lmdb_index)
        assert max(len(v) // 12 for v in t00) > 1


def test_a_bulk_load_builds_the_buckets_that_adds_build(tmp_path: Path) -> None:
    rng = random.Random(12)
    items = [(f"https://b.example/{i}", fp) for i, fp in enumerate(_crowded(rng, 200))]
    items += [("https://b.example/copy", items[0][1])]
    with SimhashIndex.open(tmp_path / "bulk") as bulk, SimhashIndex.open(tmp_path / "one") as one:
        bulk.add_many(items)
        for key, fp in sorted(items):  # the same keys, given ids in the same order
            one.add(key, fp)

        def tables(index: SimhashIndex) -> list[list[tuple[bytes, bytes]]]:
            store = _store(index)
            with store._env.begin() as txn:  # type: ignore[union-attr]
                return [[(bytes(k), bytes(v)) for k, v in txn.cursor(db)] for db in store._tdbs]

        assert tables(bulk) == tables(one)
        assert bulk.near(items[0][1], max_distance=3) == one.near(items[0][1], max_distance=3)


def test_keys_name_their_prefix_by_a_code_and_read_back_whole(tmp_path: Path) -> None:
    keys = [f"https://host{i % 5}.example/page/{i}" for i in range(40)] + ["no-scheme-key", "https://bare.example"]
    with SimhashIndex.open(tmp_path / "idx") as index:
        for i, key in enumerate(keys):
            index.put_record(key, f"r{i}".encode(), due=100.0 + i)
            index.add(key, 1000 + i)
        store = _store(index)
        with store._env.begin() as txn:  # type: ignore[union-attr]
            prefixes = {bytes(k): bytes(v) for k, v in txn.cursor(store._prefixes) if k[:1] == b"c"}
            entries = [bytes(v) for v in txn.cursor(store._records).iternext(keys=False, values=True)]
        assert sorted(prefixes.values()) == sorted({f"https://host{i}.example/".encode() for i in range(5)})
        assert sum(bool(e[0] & lmdbstore._PREFIXED) for e in entries) == 40
        assert all(f"host{i % 5}".encode() not in e for i, e in enumerate(entries[:40]))
        # Read as another process would: nothing of them in memory.
        assert store._shared is not None
        store._shared.prefixes.clear()
        store._shared.codes.clear()
        assert [index.get(key) for key in keys] == [1000 + i for i in range(len(keys))]
        assert sorted(k for k, _ in index.iter_records()) == sorted(keys)
        assert [k for k, _ in index.records_due(1e9)] == keys
        assert sorted(k for k, _ in index.items()) == sorted(keys)


def test_a_prefix_given_in_an_aborted_transaction_is_not_remembered(tmp_path: Path) -> None:
    with SimhashIndex.open(tmp_path / "idx") as index:
        store = _store(index)
        index.add("https://first.example/a", 1)
        store.begin()
        store.put_records([(b"https://lost.example/a", b"r", None)])
        store.abort()
        assert store._shared is not None and b"https://lost.example/" not in store._shared.codes
        index.add("https://other.example/b", 2)  # takes the code the aborted one had
        index.add("https://lost.example/c", 3)
        assert index.get("https://other.example/b") == 2 and index.get("https://lost.example/c") == 3
        assert sorted(index.items()) == [
            ("https://first.example/a", 1),
            ("https://lost.example/c", 3),
            ("https://other.example/b", 2),
        ]


def test_an_entry_whose_prefix_is_missing_is_reported_as_damage(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    with SimhashIndex.open(path) as index:
        index.put_record("https://gone.example/a", b"r")
        index.add("https://gone.example/a", 5)
        assert _store(index)._shared.prefixes  # type: ignore[union-attr]
    env = lmdb.open(str(path), max_dbs=200)
    with env.begin(write=True) as txn:
        db = env.open_db(b"prefixes", txn=txn)
        for key in [bytes(k) for k in txn.cursor(db).iternext(keys=True, values=False)]:
            txn.delete(key, db=db)
    env.close()
    with SimhashIndex.open(path) as index:
        with pytest.raises(StoreError) as info:
            index.get("https://gone.example/a")
        assert info.value.kind == "corrupt" and "prefix" in str(info.value) and str(path) in str(info.value)


def test_a_fingerprint_is_kept_once_where_it_is_its_records_last(tmp_path: Path) -> None:
    key = "https://a.example/x"
    with SimhashIndex.open(tmp_path / "idx") as index:
        store = _store(index)

        def entry() -> bytes:
            with store._env.begin() as txn:  # type: ignore[union-attr]
                kid, value = store._find(txn, key.encode())
                assert kid is not None and value is not None
                return bytes(value)

        index.add(key, 0xABCDEF)
        index.put_record(key, PageRecord.first(0xABCDEF, now=1e9).to_bytes(), due=5.0)
        assert entry()[0] & lmdbstore._SHARED and entry().count((0xABCDEF).to_bytes(8, "big")) == 1
        assert index.get(key) == 0xABCDEF and [m.key for m in index.near(0xABCDEF ^ 1)] == [key]
        index.put_record(key, PageRecord.first(0x123, now=1e9).to_bytes(), due=5.0)  # another last one
        assert not entry()[0] & lmdbstore._SHARED and index.get(key) == 0xABCDEF
        index.put_record(key, PageRecord.first(0xABCDEF, now=1e9).to_bytes(), due=5.0)
        index.add(key, 0x777)  # the key's fingerprint moves: stored apart again
        assert not entry()[0] & lmdbstore._SHARED and index.get(key) == 0x777
        assert [m.key for m in index.near(0x777)] == [key] and index.near(0xABCDEF) == []
        index.delete_record(key)
        assert index.get(key) == 0x777 and index.get_record(key) is None
        assert index.remove(key) and index.get(key) is None and len(index) == 0


def test_a_hot_state_keyed_by_its_entry_reads_back_after_its_due_time_moves(tmp_path: Path) -> None:
    key = "https://a.example/"
    now = 1_700_000_000.0
    state = FreshnessPolicy().observe(None, now, None)
    next_due, schedule = schedule_of(state)
    record = replace(PageRecord.first(7, now=now), schedule=schedule, next_due=next_due).to_bytes()
    with SimhashIndex.open(tmp_path / "idx") as index:
        store = _store(index)

        def sizes() -> list[int]:
            with store._env.begin() as txn:  # type: ignore[union-attr]
                return [len(v) for _, v in txn.cursor(store._due_index)]

        index.put_record(key, record, due=next_due)
        assert sizes() == [hot.KEYED_SIZE]
        later = next_due + 3600
        index.put_record(key, record, due=later)  # the entry stays (a lower bound): its due time inside
        assert sizes() == [hot.COMPACT.itemsize]
        want = hot.hot_of(record, round(later * 1000))
        assert index.due_states(None, 10)[2] == want == index.due_states(None, 10, keys=False)[2]
        assert index.records_due(later + 1) == [(key, later)]  # moves the entry to its due time
        assert sizes() == [hot.KEYED_SIZE]
        assert index.due_states(None, 10)[2] == want == index.due_states(None, 10, keys=False)[2]
