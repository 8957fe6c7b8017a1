"""The LMDB store's records layout: a due-time index kept as a lower bound, and indexes written by
the earlier layout (records without due times in front, a ``dues`` table, exact index entries),
which are converted on the first open for writing and read as they are when opened read-only."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import lmdb

from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore

LONG = "https://example.com/" + "x" * 600  # filed under a digest (LMDB's 511-byte key limit)
RECORDS = {"https://a.example/": (b"ra", 30.0), "https://b.example/": (b"rb", None), LONG: (b"rl", 20.5)}


def _entries(index: SimhashIndex) -> list[tuple[float, bytes]]:
    """The raw due-index entries of an open index: (due, key id)."""
    store = index.store
    assert isinstance(store, LmdbStore)
    with store._env.begin() as txn:  # type: ignore[union-attr]
        return [(int.from_bytes(k[:8], "big") / 1000, bytes(k[8:])) for k, _ in txn.cursor(store._due_index)]


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


def _old_layout_index(path: Path) -> None:
    """An index as the earlier layout wrote it (scrapy-simhash 96324b6): fingerprints, records as
    given, ``dues`` ``key_id -> due`` and ``due_index`` ``due + key_id`` (due: milliseconds, 8
    bytes big-endian), and no layout mark in ``meta``."""
    with SimhashIndex.open(path) as index:
        index.add_many([("https://a.example/", 1), ("https://c.example/", 2)])
    env = lmdb.open(str(path), max_dbs=200)
    with env.begin(write=True) as txn:
        meta, records, aliases = (env.open_db(name, txn=txn) for name in (b"meta", b"records", b"aliases"))
        dues, due_index = (env.open_db(name, txn=txn) for name in (b"dues", b"due_index"))
        assert txn.delete(b"records_layout", db=meta)
        for key, (value, due) in RECORDS.items():
            raw = key.encode()
            kid = raw if len(raw) <= 511 else b"\xff" + hashlib.blake2b(raw, digest_size=32).digest()
            if kid != raw:
                txn.put(kid, raw, db=aliases)
            txn.put(kid, value, db=records)
            if due is not None:
                ms = round(due * 1000).to_bytes(8, "big")
                txn.put(kid, ms, db=dues)
                txn.put(ms + kid, b"", db=due_index)
    env.close()


def _checksum(path: Path) -> str:
    return hashlib.sha256((path / "data.mdb").read_bytes()).hexdigest()


def _check_records(index: SimhashIndex) -> None:
    assert dict(index.iter_records()) == {key: value for key, (value, _) in RECORDS.items()}
    assert index.get_records(RECORDS) == [value for value, _ in RECORDS.values()]
    assert index.records_due(1e9) == [(LONG, 20.5), ("https://a.example/", 30.0)]
    assert index.records_due(25.0, limit=5) == [(LONG, 20.5)]
    assert index.get("https://c.example/") == 2


def test_an_index_of_the_earlier_layout_is_read_as_it_is_when_opened_read_only(tmp_path: Path) -> None:
    path = tmp_path / "old"
    _old_layout_index(path)
    before = _checksum(path)
    with SimhashIndex.open(path, readonly=True) as index:
        _check_records(index)
    assert _checksum(path) == before  # nothing written


def test_an_index_of_the_earlier_layout_is_converted_once_when_opened_for_writing(
    tmp_path: Path, caplog: logging.LogCaptureFixture
) -> None:
    path = tmp_path / "old"
    _old_layout_index(path)
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.store.lmdbstore"):
        with SimhashIndex.open(path) as index:
            _check_records(index)
            index.put_record("https://a.example/", b"ra2", due=40.0)  # later: its entry stays
            index.put_record(LONG, b"rl2", due=10.0)
            assert index.records_due(1e9) == [(LONG, 10.0), ("https://a.example/", 40.0)]
        with SimhashIndex.open(path) as index:
            assert index.get_records(["https://a.example/", LONG]) == [b"ra2", b"rl2"]
            assert index.delete_record("https://a.example/") and index.records_due(1e9) == [(LONG, 10.0)]
    converted = [r.getMessage() for r in caplog.records if "converted" in r.getMessage()]
    assert converted == [f"scrapy-simhash: converted the 3 records of the index at {path} to the current layout"]
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=200)
    with env.begin() as txn:
        assert txn.get(b"dues") is None  # the earlier due table is gone
    env.close()
