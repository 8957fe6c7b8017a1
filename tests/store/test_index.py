"""Tests of SimhashIndex: exact search against brute force, check-and-add, removal, records, layout."""

from __future__ import annotations

import random
from itertools import combinations
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_simhash.store.index import (
    Layout,
    Match,
    SettingsMismatchError,
    SimhashIndex,
    SimhashIndexError,
)
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from pathlib import Path


def _flip(rng: random.Random, fp: int, n: int, bits: int) -> int:
    for b in rng.sample(range(bits), n):
        fp ^= 1 << b
    return fp


def _brute(items: dict[str, int], fp: int, k: int, exclude: str | None = None) -> list[tuple[str, int]]:
    out = [(key, (v ^ fp).bit_count()) for key, v in items.items() if key != exclude]
    return sorted(((key, d) for key, d in out if d <= k), key=lambda x: (x[1], x[0]))


def _layouts() -> list[tuple[int, int, int]]:
    cases = []
    for bits in (64, 128):
        for k in range(7):
            for blocks in sorted({k + 1, k + 2, 6}):
                if blocks > k:
                    cases.append((bits, k, blocks))
    return cases


@pytest.fixture(params=["memory", "lmdb"])
def make_index(request: pytest.FixtureRequest, tmp_path: Path):
    opened: list[SimhashIndex] = []

    def make(**kwargs: Any) -> SimhashIndex:
        if request.param == "memory":
            idx = SimhashIndex(**kwargs)
        else:
            idx = SimhashIndex.open(tmp_path / f"idx{len(opened)}", map_size=1 << 20, durable=False, **kwargs)
        opened.append(idx)
        return idx

    yield make
    for idx in opened:
        idx.close()


@pytest.mark.parametrize(("bits", "k", "blocks"), _layouts())
def test_near_equals_brute_force(make_index, bits: int, k: int, blocks: int) -> None:
    rng = random.Random(f"{bits}-{k}-{blocks}")
    idx = make_index(bits=bits, max_distance=k, blocks=blocks)
    items: dict[str, int] = {}
    bases = [rng.getrandbits(bits) for _ in range(12)]
    for i, base in enumerate(bases):
        items[f"base{i}"] = base
        for d in range(k + 3):
            for j in range(2):
                items[f"n{i}-{d}-{j}"] = _flip(rng, base, d, bits)
    for j in range(40):
        items[f"r{j}"] = rng.getrandbits(bits)
    for i in range(3):  # several keys with one fingerprint
        items[f"same{i}"] = bases[0]
    idx.add_many(sorted(items.items())[: len(items) // 2])
    for key, fp in sorted(items.items())[len(items) // 2 :]:
        idx.add(key, fp)
    assert len(idx) == len(items)
    queries = (
        bases + [_flip(rng, b, rng.randrange(k + 3), bits) for b in bases] + [rng.getrandbits(bits) for _ in range(5)]
    )
    for q in queries:
        got = idx.near(q)
        assert [(m.key, m.distance) for m in got] == _brute(items, q, k)
        assert all(m.fp == items[m.key] for m in got)
        if k:
            got = idx.near(q, max_distance=k - 1, exclude="base0")
            assert [(m.key, m.distance) for m in got] == _brute(items, q, k - 1, exclude="base0")


@settings(max_examples=200, deadline=None)
@given(
    bits=st.sampled_from([64, 128]),
    k=st.integers(0, 8),
    extra=st.integers(0, 3),
    data=st.data(),
)
def test_layout_pigeonhole(bits: int, k: int, extra: int, data: st.DataObject) -> None:
    """Any two fingerprints within distance k share the key of at least one table."""
    blocks = k + 1 + extra
    layout = Layout(bits, k, blocks)
    assert sum(layout.widths) == bits and max(layout.widths) - min(layout.widths) <= 1
    assert len(layout.tables) == len(list(combinations(range(blocks), k)))
    a = data.draw(st.integers(0, (1 << bits) - 1))
    flips = data.draw(st.lists(st.integers(0, bits - 1), max_size=k, unique=True))
    b = a
    for f in flips:
        b ^= 1 << f
    assert any(x == y for x, y in zip(layout.tkeys(a), layout.tkeys(b)))


def test_layout_shapes() -> None:
    default = Layout(64, 3, 4)
    assert default.widths == [16] * 4 and len(default.tables) == 4 and default.key_width == 2
    wide = Layout(64, 3, 6)
    assert len(wide.tables) == 20 and wide.widths == [11, 11, 11, 11, 10, 10]
    assert set(wide.key_bits) == {31, 32, 33} and wide.key_width == 5
    # Regression value: the table keys of a pinned fingerprint never change (they are on disk).
    assert default.tkeys(0x0123456789ABCDEF) == [
        b"\x01\x23",
        b"\x45\x67",
        b"\x89\xab",
        b"\xcd\xef",
    ]
    assert wide.tkeys(0xFFFFFFFFFFFFFFFF)[0] == (2**33 - 1).to_bytes(5, "big")


def test_layout_numpy_matches_python() -> None:
    import numpy as np

    rng = random.Random(5)
    fps = [rng.getrandbits(64) for _ in range(200)]
    for k, blocks in ((3, 4), (3, 6), (0, 1), (5, 7)):
        layout = Layout(64, k, blocks)
        arr = np.array(fps, dtype=np.uint64)
        for t in range(len(layout.tables)):
            vec = layout.tkeys_np(arr, t)
            assert [int(v).to_bytes(layout.key_width, "big") for v in vec] == [layout.tkeys(f)[t] for f in fps]


def test_check_and_add(make_index) -> None:
    idx = make_index()
    assert idx.check_and_add("a", 0b1111) is None
    assert idx.get("a") == 0b1111
    # Own entry ignored: the same key again is re-added (replaced), not a duplicate of itself.
    assert idx.check_and_add("a", 0b1110) is None
    assert idx.get("a") == 0b1110
    m = idx.check_and_add("b", 0b1110 ^ (1 << 40) ^ (1 << 50))
    assert m == Match("a", 0b1110, 2)
    assert "b" not in idx and len(idx) == 1
    # Nearest first, ties by key.
    idx.add("c", 0b1110 ^ 1 << 60)
    idx.add("aa", 0b1110 ^ 1 << 61)
    assert idx.check_and_add("d", 0b1110 ^ 1 << 60 ^ 1 << 61) == Match("aa", 0b1110 ^ 1 << 61, 1)
    assert idx.check_and_add("e", (1 << 63) | 0xFFFF0000) is None
    assert len(idx) == 4


def test_add_replace_remove(make_index) -> None:
    idx = make_index()
    idx.add("a", 1)
    idx.add("b", 1)
    assert [m.key for m in idx.near(1)] == ["a", "b"]
    idx.add("a", 0xFFFF << 48)
    assert [m.key for m in idx.near(1)] == ["b"]
    assert idx.near(0xFFFF << 48) == [Match("a", 0xFFFF << 48, 0)]
    assert idx.remove("b") is True and idx.remove("b") is False
    assert idx.near(1) == [] and "b" not in idx and "a" in idx
    assert idx.remove("a") and len(idx) == 0 and idx.near(0xFFFF << 48) == []
    assert idx.items() == []


def test_records_are_separate(make_index) -> None:
    idx = make_index()
    assert idx.get_record("u") is None
    idx.put_record("u", b"hist")
    assert idx.get_record("u") == b"hist" and "u" not in idx and len(idx) == 0
    idx.add("u", 7)
    idx.put_record("u", b"hist2")
    assert idx.remove("u")
    assert idx.get_record("u") == b"hist2"
    assert idx.delete_record("u") is True and idx.delete_record("u") is False
    assert idx.get_record("u") is None
    with pytest.raises(TypeError, match="bytes"):
        idx.put_record("u", "text")


def test_long_and_unicode_keys(make_index) -> None:
    idx = make_index()
    long_key = "https://example.com/?" + "q=%E4%B8%AD&" * 100
    other = long_key + "x"
    idx.add(long_key, 99)
    idx.add(other, 99)
    idx.add("中文/页面", 98)
    keys = {m.key for m in idx.near(99)}
    assert keys == {long_key, other, "中文/页面"}
    assert idx.get(long_key) == 99 and idx.get(other) == 99
    idx.put_record(long_key, b"r")
    assert idx.get_record(long_key) == b"r" and idx.get_record(other) is None
    assert idx.remove(long_key)
    assert {m.key for m in idx.near(99)} == {other, "中文/页面"}
    assert idx.get_record(long_key) == b"r"
    assert dict(idx.items())[other] == 99


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda i: i.add("a", -1), ValueError, "between 0 and 2\\*\\*64 - 1"),
        (lambda i: i.add("a", 1 << 64), ValueError, "out of range"),
        (lambda i: i.add("a", 1.0), TypeError, "fp must be an int"),
        (lambda i: i.add("a", True), TypeError, "fp must be an int"),
        (lambda i: i.add(b"a", 1), TypeError, "key must be a str"),
        (lambda i: i.add("", 1), ValueError, "non-empty"),
        (lambda i: i.add("\ud800", 1), ValueError, "UTF-8"),
        (
            lambda i: i.near(1, max_distance=4),
            ValueError,
            "between 0 and the index's max_distance \\(3\\)",
        ),
        (lambda i: i.near(1, max_distance=-1), ValueError, "max_distance"),
        (lambda i: i.near("1"), TypeError, "fp must be an int"),
    ],
)
def test_argument_errors(call, exc: type[Exception], text: str) -> None:
    idx = SimhashIndex()
    with pytest.raises(exc, match=text):
        call(idx)


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"bits": 32}, "bits \\(32\\) is invalid: it must be 64 or 128"),
        (
            {"max_distance": 64},
            "max_distance \\(64\\) is invalid: it must be between 0 and 63",
        ),
        (
            {"max_distance": 3, "blocks": 3},
            "blocks \\(3\\) is invalid: it must be between 4 and 64",
        ),
        ({"max_distance": 6, "blocks": 12}, "needs 924 tables"),
        ({"max_candidates": -1}, "max_candidates"),
        ({"fingerprint_settings": {"x": object()}}, "JSON-serialisable"),
    ],
)
def test_constructor_errors(kwargs: dict[str, object], text: str) -> None:
    with pytest.raises(ValueError, match=text):
        SimhashIndex(**kwargs)  # type: ignore[arg-type]


def test_128_bit_values(make_index) -> None:
    idx = make_index(bits=128)
    top = (1 << 127) | 1
    idx.add("a", top)
    assert idx.near(top ^ (1 << 100)) == [Match("a", top, 1)]
    assert idx.get("a") == top
    with pytest.raises(ValueError, match="2\\*\\*128"):
        idx.add("b", 1 << 128)


def test_batch_atomic(make_index) -> None:
    idx = make_index()
    idx.add("keep", 1)
    with pytest.raises(RuntimeError), idx.batch():  # noqa: PT012 - an error inside the batch undoes it
        idx.add("x", 2)
        idx.remove("keep")
        idx.put_record("x", b"r")
        assert "x" in idx and "keep" not in idx  # the batch sees its own writes
        raise RuntimeError("boom")
    assert "x" not in idx and idx.get("keep") == 1 and idx.get_record("x") is None
    with idx.batch():
        with idx.batch():  # reentrant
            assert idx.check_and_add("y", 0xFFFF << 40) is None
        assert idx.check_and_add("z", (0xFFFF << 40) | 1) == Match("y", 0xFFFF << 40, 1)
    assert len(idx) == 2


def test_cap_counts_and_keeps_exact(make_index) -> None:
    idx = make_index(max_candidates=5)
    base = 0xABCD_0000_0000_0000
    idx.add_many((f"k{i}", base | i) for i in range(50))  # 50 fps share the first block
    res = idx.near(base | 7)
    assert idx.stats["capped"] >= 1 and idx.stats["candidates_max"] >= 50
    assert Match("k7", base | 7, 0) in res
    idx2 = make_index(max_candidates=0)
    idx2.add_many((f"k{i}", base | i) for i in range(50))
    assert len(idx2.near(base)) == len([i for i in range(50) if i.bit_count() <= 3])
    assert idx2.stats["capped"] == 0


def test_add_many_replaces_like_add(make_index) -> None:
    idx = make_index()
    n = idx.add_many([("a", 1), ("b", 2), ("a", 3)])
    assert n == 3 and idx.get("a") == 3 and len(idx) == 2 and [m.key for m in idx.near(1)] == ["a", "b"]
    idx.add_many([("a", 0xFFFF << 40), ("c", 2)])  # into a non-empty index: the add() path
    assert idx.get("a") == 0xFFFF << 40 and [m.key for m in idx.near(2)] == ["b", "c"]
    assert idx.near(3) == [Match("b", 2, 1), Match("c", 2, 1)]


def test_memory_fingerprint_settings_and_repr() -> None:
    store = MemoryStore()
    idx = SimhashIndex(store, fingerprint_settings={"tokenizer": "jieba"})
    assert "in memory" in repr(idx) and idx.path is None and idx.tables == 4
    with pytest.raises(SettingsMismatchError) as err:
        SimhashIndex(store, fingerprint_settings={"tokenizer": "rjieba"})
    assert err.value.stored == "jieba" and err.value.requested == "rjieba"
    assert "fingerprint_settings['tokenizer']='jieba'" in str(err.value)
    idx.close()
    with pytest.raises(SimhashIndexError, match="closed"):
        idx.add("a", 1)


def test_a_memory_store_without_undo_refuses_groups_after_an_abort() -> None:
    """``MemoryStore(undo=False)`` (the ``dedup`` command's): no undo log, so an aborted group's
    writes stay, and every later group is refused with an error that says so; with the undo log
    (the default) the same abort leaves no trace and the index goes on."""
    for undo in (True, False):
        idx = SimhashIndex(MemoryStore(undo=undo))
        idx.add("a", 1)
        with pytest.raises(RuntimeError, match="boom"), idx.batch():  # noqa: PT012 - an error inside the batch
            idx.add("b", 1 << 40)
            idx.remove("a")
            raise RuntimeError("boom")
        if undo:
            assert (idx.get("a"), idx.get("b")) == (1, None)
            assert idx.check_and_add("c", 1) == Match("a", 1, 0)
        else:
            assert (idx.get("a"), idx.get("b")) == (None, 1 << 40)  # part-written: no undo
            with pytest.raises(SimhashIndexError, match="aborted group: make a new one"), idx.batch():
                idx.check_and_add("c", 1)
        idx.close()
