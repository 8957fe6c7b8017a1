"""The LMDB store's records layout: entries by id (keys of one digest told apart, pages filled in
order, change sketches kept apart); a due-time index kept as a lower bound; an index written by an
earlier version (another schema version, another record format) is refused with the way to rebuild
it, and left as it is."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import struct
from dataclasses import replace
from pathlib import Path
from typing import cast

import lmdb
import pytest

from scrapy_simhash.errors import StoreError
from scrapy_simhash.schedule import FreshnessPolicy
from scrapy_simhash.store import hot, lmdbstore
from scrapy_simhash.store.hot import HOT
from scrapy_simhash.store.index import SCHEMA_VERSION, SimhashIndex, SimhashIndexError
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.record import PageRecord, schedule_of

LONG = "https://example.com/" + "x" * 600  # filed under a digest (LMDB's 511-byte key limit)
RECORDS = {"https://a.example/": (b"ra", 30.0), "https://b.example/": (b"rb", None), LONG: (b"rl", 20.5)}


def _entries(index: SimhashIndex) -> list[tuple[float, bytes]]:
    """The raw due-index entries of an open index: (due, the key of the entry's id)."""
    store = index.store
    assert isinstance(store, LmdbStore)
    with store._env.begin() as txn:  # type: ignore[union-attr]
        return [
            (int.from_bytes(k[:8], "big") / 1000, store._key(txn, cast(bytes, txn.get(k[8:12], db=store._records))))  # an entry has its record
            for k, _ in txn.cursor(store._due_index)
        ]


def test_a_due_time_moved_later_keeps_its_entry_until_records_due_moves_it(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    with SimhashIndex.open(path) as index:
        index.put_records([(f"https://e.example/{i}", b"r", 100.0 + i) for i in range(5)])
        index.put_record("https://e.example/0", b"r2", due=500.0)  # later: one table written
        index.put_record("https://e.example/1", b"r2", due=50.0)  # earlier: the entry moves
        index.put_record("https://e.example/2", b"r2", due=None)  # never due: the entry goes
        assert sorted(_entries(index)) == [(50.0, b"https://e.example/1")] + [
            (100.0 + i, f"https://e.example/{i}".encode()) for i in (0, 3, 4)
        ]
        expected = [("https://e.example/1", 50.0), ("https://e.example/3", 103.0), ("https://e.example/4", 104.0)]
        with SimhashIndex.open(path, readonly=True) as reader:  # exact, without writing
            assert reader.records_due(200.0) == expected
        assert index.records_due(200.0, limit=2) == expected[:2]
        assert index.records_due(200.0) == expected
        # the stale entry met on the way was moved to the record's due time
        assert max(_entries(index)) == (500.0, b"https://e.example/0")
        assert index.records_due(1e9) == [*expected, ("https://e.example/0", 500.0)]
        assert index.get_record("https://e.example/0") == b"r2"


def test_the_due_index_names_a_record_by_its_id_and_a_key_is_read_when_asked_for(tmp_path: Path) -> None:
    with SimhashIndex.open(tmp_path / "idx") as index:
        index.put_records([(key, value, due) for key, (value, due) in RECORDS.items()])
        store = index.store
        assert isinstance(store, LmdbStore)
        with store._env.begin() as txn:  # type: ignore[union-attr]
            assert [len(k) for k, _ in txn.cursor(store._due_index)] == [12, 12]  # due + id, no key
        after, keys, hots = index.due_states(None, 10)
        assert after is not None and len(hots) == 2 * HOT.itemsize
        assert keys == [LONG.encode(), b"https://a.example/"]  # by due time: 20.5, then 30.0
        assert keys[-1] == b"https://a.example/" and keys[:1] == [LONG.encode()] and len(keys) == 2
        assert index.due_states(None, 10, keys=False)[1] == []
        # A page read, then its record deleted before its key is asked for: a clear error.
        _, keys, _ = index.due_states(None, 10)
        assert index.delete_record("https://a.example/")
        assert keys[0] == LONG.encode()
        with pytest.raises(StoreError, match="deleted while it ran: run the selection again"):
            keys[1]
        assert index.due_states(None, 10)[1] == [LONG.encode()]


def test_a_selection_reads_the_records_of_its_rows_by_id_with_their_keys(tmp_path: Path) -> None:
    with SimhashIndex.open(tmp_path / "idx") as index:
        index.put_records([(key, value, due) for key, (value, due) in RECORDS.items()])
        _, keys, _ = index.due_states(None, 10)
        assert keys.records([1, 0]) == [RECORDS["https://a.example/"][0], RECORDS[LONG][0]]  # type: ignore[attr-defined]
        assert list.__getitem__(keys, 0) == LONG.encode()  # the keys read with them
        # A row whose key was read and whose record was deleted since: no record (it is left out).
        assert index.delete_record("https://a.example/")
        assert keys.records([1]) == [None]  # type: ignore[attr-defined]
        # One whose key was not read yet: the selection's clear error, as for its key.
        _, keys, _ = index.due_states(None, 10)
        assert index.delete_record(LONG)
        with pytest.raises(StoreError, match="deleted while it ran"):
            keys.records([0])  # type: ignore[attr-defined]


def _earlier_index(path: Path, schema: int = 1) -> None:
    """An index as the version before this record format wrote it: the same tables and records
    (an earlier layout: no due times in front, a ``dues`` table), schema version 1 in ``meta``."""
    with SimhashIndex.open(path) as index:
        index.add_many([("https://a.example/", 1), ("https://c.example/", 2)])
    env = lmdb.open(str(path), max_dbs=200)
    with env.begin(write=True) as txn:
        meta_db, records, dues = (env.open_db(name, txn=txn) for name in (b"meta", b"records", b"dues"))
        raw_meta = txn.get(b"index", db=meta_db)
        assert raw_meta is not None
        meta = json.loads(bytes(raw_meta))
        assert meta["schema"] == SCHEMA_VERSION > 1
        txn.put(b"index", json.dumps({**meta, "schema": schema}, sort_keys=True).encode(), db=meta_db)
        txn.put(b"https://a.example/", b"\x04\x02old record", db=records)
        txn.put(b"https://a.example/", (30_000).to_bytes(8, "big"), db=dues)
    env.close()


def _checksum(path: Path) -> str:
    return hashlib.sha256((path / "data.mdb").read_bytes()).hexdigest()


@pytest.mark.parametrize("schema", [1, 7])  # 7: the layout before the shared buckets and key prefixes
@pytest.mark.parametrize("readonly", [False, True])
def test_an_index_of_an_earlier_version_is_refused_with_how_to_rebuild_it(
    tmp_path: Path, readonly: bool, schema: int
) -> None:
    path = tmp_path / "old"
    _earlier_index(path, schema)
    before = _checksum(path)
    with pytest.raises(SimhashIndexError) as info:
        SimhashIndex.open(path, readonly=readonly)
    message = str(info.value)
    assert f"written by an earlier version of scrapy-simhash (schema version {schema};" in message
    assert "Rebuild it" in message and "SIMHASH_RESET = True" in message and str(path) in message
    assert _checksum(path) == before  # never converted, never deleted
    assert sorted(p.name for p in path.iterdir()) == ["data.mdb", "lock.mdb"]


def test_an_index_of_an_earlier_version_is_rebuilt_on_reset(tmp_path: Path) -> None:
    path = tmp_path / "old"
    _earlier_index(path)
    with SimhashIndex.open(path, reset=True) as index:
        assert len(index) == 0 and index.get_record("https://a.example/") is None
        index.add("https://a.example/", 7)
    with SimhashIndex.open(path) as index:
        assert index.get("https://a.example/") == 7


def _evidence_pages(store: LmdbStore) -> int:
    """The pages of both evidence sub-databases."""
    with store._env.begin() as txn:  # type: ignore[union-attr]
        stats = [txn.stat(db) for db in (store._evidence, store._evidence_tail)]
    return sum(st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"] for st in stats)


def test_evidence_over_a_page_is_read_back_whole_and_fills_its_pages(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    keys = ["https://a.example/", LONG]
    sizes = [0, 1, 2000, 4079, 4080, 4081, 4096, 5000, 6000, 8176, 8177, 9000, 10206, 10210, 12270, 20000]
    with SimhashIndex.open(path) as index:
        store = index.store
        assert isinstance(store, LmdbStore)
        for size in sizes:
            for key in keys:
                value = hashlib.sha256(f"{size}{key}".encode()).digest() * (size // 32 + 1)
                index.put_record(key, b"r", evidence=value[:size] or b"x")
                assert index.get_evidence(key) == (value[:size] or b"x"), (size, key)
        # A value rewritten shorter leaves no tail of the longer one behind; a deleted one, none.
        index.put_record(keys[0], b"r", evidence=b"y" * 9000)
        index.put_record(keys[0], b"r", evidence=b"z" * 100)
        assert index.get_evidence(keys[0]) == b"z" * 100
        index.put_record(keys[0], b"r", evidence=b"y" * 9000)
        index.put_record(keys[0], b"r", evidence=b"")
        assert index.get_evidence(keys[0]) is None
        index.delete_record(keys[1])
        assert index.get_evidence(keys[1]) is None
        with store._env.begin() as txn:  # type: ignore[union-attr]
            assert txn.stat(store._evidence_tail)["entries"] == txn.stat(store._evidence)["entries"] == 0
        # 5,000 bytes: one overflow page and the rest in a leaf page's node (not two whole pages).
        for i in range(40):
            index.put_record(f"https://b.example/{i:03d}", b"r", evidence=bytes([i]) * 5000)
        assert _evidence_pages(store) < 40 * 2 * 0.8
        assert all(index.get_evidence(f"https://b.example/{i:03d}") == bytes([i]) * 5000 for i in range(40))


def test_keys_of_one_digest_are_told_apart_by_their_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every key filed under one of two digests: each key still has its own fingerprint, record,
    # evidence and due time; a scan lists each once, in (digest, key) order, from any key.
    monkeypatch.setattr(lmdbstore, "_digest", lambda key: bytes(4) if len(key) % 2 else b"\x01" * 4)
    keys = [f"https://c.example/{'x' * i}" for i in range(12)]
    with SimhashIndex.open(tmp_path / "idx") as index:
        for i, key in enumerate(keys):
            index.add(key, 1000 + i)
            index.put_record(key, f"r{i}".encode(), due=50.0 + i, evidence=f"e{i}".encode())
        index.delete_record(keys[3])
        index.remove(keys[4])
        for i, key in enumerate(keys):
            assert index.get(key) == (None if i == 4 else 1000 + i)
            assert index.get_record(key) == (None if i == 3 else f"r{i}".encode())
            assert index.get_evidence(key) == (None if i == 3 else f"e{i}".encode())
        want = sorted(k.encode() for k in keys if len(k) % 2) + sorted(k.encode() for k in keys if len(k) % 2 == 0)
        store = index.store
        assert [k for k, _ in store.scan_records(None, 100)] == [k for k in want if k != keys[3].encode()]
        assert [k for k, _ in store.scan(None, 100)] == [k for k in want if k != keys[4].encode()]
        for i in range(len(want)):
            after = want[i]
            assert [k for k, _ in store.scan_records(after, 100)] == [k for k in want[i + 1 :] if k != keys[3].encode()]
        assert [k for k, _ in index.records_due(1e9)] == [k for i, k in enumerate(keys) if i != 3]
        assert len(index) == len(keys) - 1


def test_new_keys_fill_the_pages_of_their_entries(tmp_path: Path) -> None:
    # Keys arriving in no order: their entries take ids in order, so their pages fill.
    rng = random.Random(5)
    keys = [f"https://{rng.getrandbits(64):x}.example/{rng.getrandbits(32)}" for _ in range(6000)]
    with SimhashIndex.open(tmp_path / "idx") as index:
        for start in range(0, len(keys), 100):
            index.put_records([(key, b"r" * 60, 100.0) for key in keys[start : start + 100]])
        store = index.store
        assert isinstance(store, LmdbStore)
        with store._env.begin() as txn:  # type: ignore[union-attr]
            st = txn.stat(store._records)
            stored = sum(len(k) + len(v) + 10 for k, v in txn.cursor(store._records))
        assert stored / (st["leaf_pages"] * st["psize"]) > 0.85
        assert index.get_record(keys[1234]) == b"r" * 60


def test_a_records_change_sketch_is_kept_apart_and_read_back_with_it(tmp_path: Path) -> None:
    record = PageRecord.first(7, now=1e9)
    with_sketch = dataclasses.replace(record, sketch=bytes(range(64))).to_bytes()
    with SimhashIndex.open(tmp_path / "idx") as index:
        store = index.store
        assert isinstance(store, LmdbStore)

        def sketches() -> int:
            with store._env.begin() as txn:  # type: ignore[union-attr]
                return int(txn.stat(store._sketches)["entries"])

        index.put_record("https://a.example/", with_sketch, due=5.0)
        assert index.get_record("https://a.example/") == with_sketch and sketches() == 1
        assert dict(index.iter_records()) == {"https://a.example/": with_sketch}
        with store._env.begin() as txn:  # type: ignore[union-attr]
            (entry,) = [v for _, v in txn.cursor(store._records)]
        assert bytes(range(64)) not in entry
        index.put_record("https://a.example/", record.to_bytes(), due=5.0)
        assert index.get_record("https://a.example/") == record.to_bytes() and sketches() == 0
        index.put_record("https://a.example/", with_sketch, due=5.0)
        index.delete_record("https://a.example/")
        assert index.get_record("https://a.example/") is None and sketches() == 0


def _hot(due: int, flags: int, *numbers: float) -> bytes:
    return struct.pack("<qB6d", due, flags, *numbers)


def test_a_compact_hot_state_reads_back_to_the_bit_and_any_other_is_kept_whole() -> None:
    rng = random.Random(4)
    states = [_hot(1_700_000_000_000, 0, *(0.0,) * 6)]  # no schedule (a page gone)
    for _ in range(2000):
        due = rng.randrange(1_500_000_000_000, 2_500_000_000_000)
        last_fetch = round(due / 1000 - rng.uniform(0, 400 * 86400), 3)
        next_due = due / 1000 if rng.random() < 0.7 else round(due / 1000 + rng.uniform(-9e5, 9e5), 3)
        rate = float(f"{rng.choice([0.0, rng.uniform(1e-10, 1e-3), rng.uniform(0, 5)]):.6g}")
        size, probe = round(rng.uniform(0, 64), 3), rng.choice([0.0, round(rng.uniform(0, 9e5), 3)])
        states.append(
            _hot(due, rng.choice([1, 3]), last_fetch, next_due, round(rng.uniform(1, 4e7), 3), rate, size, probe)
        )
    packed = [hot.compact(state) for state in states]
    assert {len(p) for p in packed} == {hot.COMPACT.itemsize}
    assert hot.expand(packed) == b"".join(states)  # numpy's reading, to the bit
    assert [hot.expand_one(p) for p in packed] == states  # and Python's
    # What 34 bytes cannot hold exactly stays whole: a time not in whole milliseconds, a rate of
    # more digits, a due time over 48 bits of milliseconds, a negative size.
    others = [
        _hot(1_700_000_000_000, 1, 1.7e9 + 1e-4, 1.7e9, 86400.0, 0.0, 0.0, 0.0),
        _hot(1_700_000_000_000, 1, 1.7e9, 1.7e9, 86400.0, 1 / 3, 0.0, 0.0),
        _hot(1 << 50, 1, 1.7e9, (1 << 50) / 1000, 86400.0, 0.0, 0.0, 0.0),
        _hot(1_700_000_000_000, 1, 1.7e9, 1.7e9, 86400.0, 0.0, -1.0, 0.0),
    ]
    assert [hot.compact(state) for state in others] == others
    mixed = [packed[1], others[0], packed[2]]
    assert hot.expand(mixed) == states[1] + others[0] + states[2]
    assert hot.expand([packed[1], b""]) is None  # a value of neither form: read from the record


def test_the_due_index_keeps_compact_hot_states_and_answers_whole_ones(tmp_path: Path) -> None:
    with SimhashIndex.open(tmp_path / "idx") as index:
        now = 1_700_000_000.0
        state = FreshnessPolicy().observe(None, now, None)
        next_due, schedule = schedule_of(state)
        record = replace(PageRecord.first(7, now=now), schedule=schedule, next_due=next_due)
        index.put_record("https://a.example/", record.to_bytes(), due=next_due)
        store = index.store
        assert isinstance(store, LmdbStore)
        with store._env.begin() as txn:  # type: ignore[union-attr]
            assert [len(v) for _, v in txn.cursor(store._due_index)] == [hot.KEYED_SIZE]
        want = hot.hot_of(record.to_bytes(), round(next_due * 1000))
        assert index.due_states(None, 10)[2] == want
        assert index.due_states(None, 10, keys=False)[2] == want
