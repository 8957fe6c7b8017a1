"""The FingerprintStore contract, run against every backend (memory, LMDB)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from scrapy_simhash.store.base import FingerprintStore, StoreFullError
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from pathlib import Path


def _fp(v: int, width: int = 8) -> bytes:
    return v.to_bytes(width, "big")


@pytest.fixture(params=["memory", "lmdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    s: FingerprintStore = MemoryStore() if request.param == "memory" else LmdbStore(tmp_path / "s", map_size=1 << 20)
    s.open()
    assert s.read_meta() is None
    s.configure(n_tables=2, key_width=2, value_width=8)
    yield s
    s.close()


def _write(store: FingerprintStore, fn) -> None:
    store.begin(True)
    fn()
    store.commit()


def test_meta_roundtrip_and_abort(store: FingerprintStore) -> None:
    _write(store, lambda: store.write_meta(b'{"a": 1}'))
    store.begin(False)
    assert store.read_meta() == b'{"a": 1}'
    store.abort()
    store.begin(True)
    store.write_meta(b"other")
    store.set_fp(b"k", _fp(1))
    store.put_record(b"k", b"r")
    store.abort()
    store.begin(False)
    assert store.read_meta() == b'{"a": 1}' and store.get_fp(b"k") is None and store.get_record(b"k") is None
    assert store.is_empty()
    store.abort()


def test_probe_orders_limits_and_counts(store: FingerprintStore) -> None:
    def fill() -> None:
        for v in (5, 3, 9, 3):  # 3 twice: a set
            store.table_add(0, b"\x00\x01", _fp(v))
        store.table_add(1, b"\x00\x02", _fp(7))
        store.table_add(1, b"\x00\x03", _fp(8))

    _write(store, fill)
    store.begin(False)
    fps, total = store.probe([b"\x00\x01", b"\x00\x02"], 0)
    assert fps.dtype == np.dtype(">u8") and fps.tolist() == [3, 5, 9, 7] and total == 4
    fps, total = store.probe([b"\x00\x01", b"\x00\x02"], 2)
    assert fps.tolist() == [3, 5] and total == 4
    fps, total = store.probe([b"\x00\x09", b"\x00\x09"], 0)
    assert fps.tolist() == [] and total == 0
    store.abort()
    _write(
        store,
        lambda: (
            store.table_remove(0, b"\x00\x01", _fp(5)),
            store.table_remove(0, b"\x00\x01", _fp(42)),
        ),
    )
    store.begin(False)
    assert store.probe([b"\x00\x01", b"\x00\x03"], 0)[0].tolist() == [3, 9, 8]
    store.abort()


def test_links_and_keys(store: FingerprintStore) -> None:
    results = []

    def fill() -> None:
        results.append(store.link(_fp(1), b"b"))
        results.append(store.link(_fp(1), b"a"))
        store.set_fp(b"a", _fp(1))
        store.set_fp(b"b", _fp(1))
        store.set_fp(b"c", _fp(2))

    _write(store, fill)
    assert results == [True, False]
    store.begin(False)
    assert store.keys_of(_fp(1)) == [b"a", b"b"] and store.keys_of(_fp(3)) == []
    assert store.count() == 3 and list(store.iter_fps()) == [
        (b"a", _fp(1)),
        (b"b", _fp(1)),
        (b"c", _fp(2)),
    ]
    store.abort()
    results.clear()
    _write(
        store,
        lambda: results.extend(
            [
                store.unlink(_fp(1), b"a"),
                store.unlink(_fp(1), b"b"),
                store.delete_fp(b"c"),
                store.delete_fp(b"c"),
            ]
        ),
    )
    assert results == [False, True, True, False]
    store.begin(False)
    assert store.keys_of(_fp(1)) == [] and store.count() == 2
    store.abort()


def test_records_and_aliases(store: FingerprintStore) -> None:
    _write(
        store,
        lambda: (store.put_record(b"u", b"1"), store.put_alias(b"\xffh", b"long")),
    )
    store.begin(False)
    assert store.get_record(b"u") == b"1" and store.get_alias(b"\xffh") == b"long" and store.get_fp(b"u") is None
    assert not store.is_empty()
    store.abort()
    out: list[bool] = []

    def delete() -> None:
        out.append(store.delete_record(b"u"))
        out.append(store.delete_record(b"u"))
        store.delete_alias(b"\xffh")

    _write(store, delete)
    assert out == [True, False]
    store.begin(False)
    assert store.get_record(b"u") is None and store.get_alias(b"\xffh") is None
    store.abort()


def test_bulk_methods_match_single(store: FingerprintStore) -> None:
    pairs = sorted((bytes([0, i % 3]), _fp(i)) for i in range(30))
    _write(store, lambda: store.bulk_table(0, pairs))
    _write(store, lambda: store.bulk_links(sorted((_fp(i), b"k%d" % i) for i in range(30))))
    _write(store, lambda: store.bulk_fps(sorted((b"k%d" % i, _fp(i)) for i in range(30))))
    # A second sorted chunk after the first (appends), then one that must be merged.
    _write(store, lambda: store.bulk_table(0, [(b"\x00\x05", _fp(100))]))
    _write(store, lambda: store.bulk_table(0, [(b"\x00\x00", _fp(101))]))
    store.begin(False)
    fps, total = store.probe([b"\x00\x00", b"\xff\xff"], 0)
    assert fps.tolist() == sorted([i for i in range(30) if i % 3 == 0] + [101]) and total == 11
    assert store.probe([b"\x00\x05"], 0)[0].tolist() == [100]
    assert store.count() == 30 and store.keys_of(_fp(7)) == [b"k7"]
    store.abort()


def test_sixteen_byte_values(tmp_path: Path) -> None:
    for s in (MemoryStore(), LmdbStore(tmp_path / "s16", map_size=1 << 20)):
        s.open()
        s.configure(n_tables=1, key_width=4, value_width=16)
        v = ((1 << 127) | 5).to_bytes(16, "big")
        _write(s, lambda s=s, v=v: s.table_add(0, b"\x00\x00\x00\x01", v))
        s.begin(False)
        fps, total = s.probe([b"\x00\x00\x00\x01"], 0)
        assert fps.shape == (1, 2) and fps[0].tolist() == [1 << 63, 5] and total == 1
        s.abort()
        s.close()


def test_lmdb_full_raises_store_full_and_grows(tmp_path: Path) -> None:
    s = LmdbStore(tmp_path / "tiny", map_size=1 << 16)
    s.open()
    s.configure(n_tables=1, key_width=2, value_width=8)
    before = s.map_size
    s.begin(True)
    with pytest.raises(StoreFullError):
        for i in range(20000):
            s.put_record(b"r%d" % i, b"x" * 100)
    assert s.map_size > before and s.grows == 1
    s.begin(False)  # the aborted transaction left nothing
    assert s.get_record(b"r0") is None
    s.abort()
    s.close()


def test_buckets_follow_a_set_model(store: FingerprintStore) -> None:
    """Random adds and removes in a few buckets behave like Python sets (sorted on read)."""
    import random

    rng = random.Random(3)
    model: dict[bytes, set[int]] = {b"\x00\x01": set(), b"\x00\x02": set()}
    for _ in range(30):
        store.begin(True)
        for _ in range(20):
            tkey = rng.choice(list(model))
            v = rng.randrange(40) << 56 | rng.randrange(3)
            if rng.random() < 0.6:
                store.table_add(0, tkey, _fp(v))
                model[tkey].add(v)
            else:
                store.table_remove(0, tkey, _fp(v))
                model[tkey].discard(v)
        store.commit()
        store.begin(False)
        for tkey, values in model.items():
            fps, total = store.probe([tkey], 0)
            assert fps.tolist() == sorted(values) and total == len(values)
        store.abort()
