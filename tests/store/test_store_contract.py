"""The FingerprintStore contract (store/base.py), one suite run against every store.

A store is listed in ``STORES`` with a factory ``make(path) -> FingerprintStore`` and whether
another process can open the same store (LMDB, Redis) for the concurrency test; a memory store
is shared by threads instead.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from helpers.stores import GROUPS, LAYOUT, WORKERS, StoreKind, fp_bytes, group_fps, meta, open_store, work

from scrapy_simhash.store.base import FingerprintStore, Probe, TableLayout
from scrapy_simhash.store.redisstore import RedisStore

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

REPO = Path(__file__).resolve().parents[2]


LONG = b"https://example.com/" + b"x" * 600  # over LMDB's 511-byte key limit


@pytest.fixture
def store(kind: StoreKind, tmp_path: Path):
    s = open_store(kind.make, tmp_path / "s")
    yield s
    s.close()


def _brute(stored: dict[bytes, int], fp: int, k: int, exclude: bytes | None = None) -> list[tuple[bytes, int]]:
    out = [(key, (v ^ fp).bit_count()) for key, v in stored.items() if key != exclude]
    return sorted(((key, d) for key, d in out if d <= k), key=lambda x: (x[1], x[0]))


def _hits(probe: Probe) -> list[tuple[bytes, int]]:
    return [(h.key, h.distance) for h in probe.hits]


def _flip(rng: random.Random, fp: int, n: int, bits: int = 64) -> int:
    for b in rng.sample(range(bits), n):
        fp ^= 1 << b
    return fp


def test_meta_is_created_once_then_replaced(kind: StoreKind, tmp_path: Path) -> None:
    s = kind.make(tmp_path / "s")
    assert s.open() is None
    s.configure(LAYOUT)
    assert s.create_meta(meta(1)) == meta(1)
    assert s.create_meta(meta(2)) == meta(1)  # another process created it first
    s.write_meta(meta(3))
    s.close()
    if kind.worker_make is not None:  # persistent: a new object sees it
        again = kind.make(tmp_path / "s")
        assert again.open() == meta(3)
        again.close()


def test_near_and_check_and_add_match_brute_force(store: FingerprintStore) -> None:
    rng = random.Random(7)
    stored: dict[bytes, int] = {}
    bases = [rng.getrandbits(64) for _ in range(40)]
    for i in range(400):
        key = b"k%d" % i
        fp = _flip(rng, rng.choice(bases), rng.randint(0, 5))
        probe = store.check_and_add(key, fp_bytes(fp), 3, 0)
        assert _hits(probe) == _brute(stored, fp, 3, key)
        if not probe.hits:
            stored[key] = fp
        assert probe.candidates >= len({h.fp for h in probe.hits}) and not probe.capped
    assert store.count() == len(stored)
    for _ in range(200):
        q = _flip(rng, rng.choice(bases), rng.randint(0, 4))
        for k in (0, 2, 3):
            assert _hits(store.near(fp_bytes(q), k, 0)) == _brute(stored, q, k)
        key = rng.choice(sorted(stored))
        assert _hits(store.near(fp_bytes(q), 3, 0, key)) == _brute(stored, q, 3, key)


def test_check_and_add_keeps_or_drops_the_key(store: FingerprintStore) -> None:
    assert store.check_and_add(b"a", fp_bytes(0xF0), 3, 0).hits == []
    # The key's own entry is not its duplicate; a changed fingerprint replaces it.
    assert store.check_and_add(b"a", fp_bytes(0xF1), 3, 0).hits == []
    assert store.get([b"a"]) == [fp_bytes(0xF1)]
    assert store.near(fp_bytes(0xF0), 0, 0).hits == []
    assert store.check_and_add(b"b", fp_bytes(0xFF00), 3, 0).hits == []
    # b now serves a near-duplicate of a: nothing stored for b, its old fingerprint forgotten.
    probe = store.check_and_add(b"b", fp_bytes(0xF3), 3, 0)
    assert _hits(probe) == [(b"a", 1)] and probe.hits[0].fp == fp_bytes(0xF1)
    assert store.get([b"a", b"b"]) == [fp_bytes(0xF1), None]
    assert store.near(fp_bytes(0xFF00), 3, 0).hits == [] and store.count() == 1


def test_identical_fingerprints_share_and_part(store: FingerprintStore) -> None:
    store.put([(b"b", fp_bytes(5)), (b"a", fp_bytes(5)), (b"c", fp_bytes(7))])
    assert _hits(store.near(fp_bytes(5), 3, 0)) == [(b"a", 0), (b"b", 0), (b"c", 1)]
    assert store.remove([b"a", b"zz"]) == 1
    assert _hits(store.near(fp_bytes(5), 0, 0)) == [(b"b", 0)]
    assert store.remove([b"b"]) == 1 and store.near(fp_bytes(5), 0, 0).hits == []
    assert store.count() == 1 and store.remove([b"b"]) == 0


def test_put_last_wins_and_scan_pages_through_everything(store: FingerprintStore) -> None:
    items = [(b"key%04d" % i, fp_bytes(i * 0x9E3779B97F4A7C15 % (1 << 64))) for i in range(250)]
    store.put([*items, (b"key0001", fp_bytes(1)), (LONG, fp_bytes(2))])
    expected = dict(items) | {b"key0001": fp_bytes(1), LONG: fp_bytes(2)}
    assert store.count() == len(expected)
    assert store.get([b"key0001", LONG, b"none"]) == [fp_bytes(1), fp_bytes(2), None]
    seen: list[tuple[bytes, bytes]] = []
    after = None
    while page := store.scan(after, 64):
        seen.extend(page)
        after = page[-1][0]
    assert dict(seen) == expected and len(seen) == len(expected)
    # a second put into a non-empty store: replaces and adds
    store.put([(b"key0002", fp_bytes(3)), (b"new", fp_bytes(4))])
    assert store.get([b"key0002", b"new"]) == [fp_bytes(3), fp_bytes(4)] and store.count() == len(expected) + 1
    assert _hits(store.near(fp_bytes(2), 0, 0)) == [(LONG, 0)]


def test_records_and_due_index(store: FingerprintStore) -> None:
    store.put_records([(b"a", b"ra", 30.0), (b"b", b"rb", 10.0), (b"c", b"rc", None), (LONG, b"rl", 20.0)])
    assert store.get_records([b"a", b"c", LONG, b"zz"]) == [b"ra", b"rc", b"rl", None]
    assert store.records_due(25.0, 10) == [(b"b", 10.0), (LONG, 20.0)]
    assert store.records_due(1e12, 2) == [(b"b", 10.0), (LONG, 20.0)]
    store.put_records([(b"b", b"rb2", 40.0), (b"a", b"ra2", None)])  # due moves, or goes
    assert store.records_due(1e12, 10) == [(LONG, 20.0), (b"b", 40.0)]
    assert store.records_due(5.0, 10) == []
    store.put_records([(b"t", b"rt", 12.3456)])
    assert store.records_due(12.346, 10) == [(b"t", 12.346)]  # milliseconds
    assert store.delete_records([b"b", b"nope"]) == 1
    assert store.records_due(1e12, 10) == [(b"t", 12.346), (LONG, 20.0)]
    records = dict(store.scan_records(None, 2) + store.scan_records(store.scan_records(None, 2)[-1][0], 10))
    assert records == {b"a": b"ra2", b"c": b"rc", LONG: b"rl", b"t": b"rt"}
    assert store.count() == 0  # records are not fingerprints
    with pytest.raises(ValueError, match="due"):
        store.put_records([(b"x", b"r", -1.0)])


def test_evidence_is_written_and_deleted_with_its_record(store: FingerprintStore) -> None:
    store.put_records([(b"a", b"ra", 30.0), (LONG, b"rl", None)], {b"a": b"ea", LONG: b"el"})
    assert store.get_evidence([b"a", LONG, b"zz"]) == [b"ea", b"el", None]
    store.put_records([(b"a", b"ra2", 40.0)])  # a key not in the evidence keeps its own
    assert store.get_evidence([b"a"]) == [b"ea"]
    store.put_records([(b"a", b"ra3", 40.0)], {b"a": None})
    assert store.get_evidence([b"a"]) == [None] and store.get_records([b"a"]) == [b"ra3"]
    assert dict(store.scan_records(None, 10)) == {b"a": b"ra3", LONG: b"rl"}  # evidence is no record
    assert store.delete_records([LONG]) == 1
    assert store.get_evidence([LONG]) == [None]


def test_destroy_deletes_the_evidence(kind: StoreKind, tmp_path: Path) -> None:
    s = open_store(kind.make, tmp_path / "s")
    s.put_records([(b"a", b"ra", None)], {b"a": b"ea"})
    s.close()
    destroyed = kind.make(tmp_path / "s").destroy()
    if not destroyed:
        pytest.skip("a store that lives in memory only")
    s = open_store(kind.make, tmp_path / "s")
    assert s.get_evidence([b"a"]) == [None] and s.get_records([b"a"]) == [None]
    s.close()


def test_records_due_is_exact_whatever_the_due_times_did(store: FingerprintStore) -> None:
    """``records_due(before, limit)`` returns exactly the ``limit`` earliest records due at or
    before ``before`` (ties by key), after due times moved later (a refetch: what LMDB keeps as a
    lower bound in its index), earlier, to none and back, and records deleted; checked against a
    model after every step, and a group's writes seen inside it."""
    rng = random.Random(8)
    keys = [b"k%03d" % i for i in range(60)]
    model: dict[bytes, float | None] = {}
    values: dict[bytes, bytes] = {}

    def check() -> None:
        for before in (0.0, 50.0, 200.0, 500.5, 1e12):
            due = sorted((when, key) for key, when in model.items() if when is not None and when <= before)
            for limit in (1, 7, 1000):
                assert store.records_due(before, limit) == [(key, when) for when, key in due[:limit]]

    for step in range(18):
        grouped = step % 3 != 0
        if grouped:
            store.begin()
            # read first, as a decision does (LMDB then writes them back without reading again)
            assert store.get_records(keys[::2]) == [values.get(key) for key in keys[::2]]
        items = []
        for key in rng.sample(keys, 20):
            old = model.get(key)
            roll = rng.random()
            if old is not None and roll < 0.6:
                when: float | None = old + rng.choice((0.0, 0.001, 1.0, 100.0, 250.0))  # later (or the same)
            elif old is not None and roll < 0.8:
                when = max(old - rng.choice((0.001, 5.0, 90.0)), 0.0)  # earlier
            else:
                when = None if roll > 0.95 else round(rng.uniform(0, 400), 3)
            items.append((key, b"r%d" % step, when))
            model[key] = None if when is None else round(when * 1000) / 1000  # kept to the millisecond
            values[key] = b"r%d" % step
        store.put_records(items)
        gone = rng.sample(keys, 3)
        store.delete_records(gone)
        for key in gone:
            model.pop(key, None)
            values.pop(key, None)
        if grouped:  # written again in the same group: deleted ones, and ones written above
            written = [key for key, _, _ in items if key not in gone]
            again = [
                (key, b"s%d" % step, rng.choice((None, 0.5, 300.0, 450.0)))
                for key in gone[:2] + rng.sample(written, 10)
            ]
            store.put_records(again)
            for key, value, when in again:
                model[key], values[key] = when, value
        check()
        if grouped:
            store.commit()
            check()
    assert dict(store.scan_records(None, 1000)) == values


def test_aux_blobs_are_not_keys(store: FingerprintStore) -> None:
    store.put_aux({"template:example.com": b"\x00blob", "other": b"x"})
    assert store.get_aux(["template:example.com", "none"]) == [b"\x00blob", None]
    store.put_aux({"other": None})
    assert store.get_aux(["other"]) == [None]
    assert store.count() == 0 and store.scan(None, 10) == [] and store.scan_records(None, 10) == []


def test_group_abort_leaves_nothing(store: FingerprintStore) -> None:
    store.put([(b"keep", fp_bytes(1))])
    store.begin()
    store.put([(b"x", fp_bytes(2))])
    store.check_and_add(b"y", fp_bytes(0xFFFF0000), 3, 0)
    store.put_records([(b"x", b"r", 5.0)], {b"x": b"e"})
    store.put_aux({"a": b"1"})
    assert store.get([b"x"]) == [fp_bytes(2)] and store.get_evidence([b"x"]) == [b"e"]  # the group sees its own writes
    store.abort()
    assert store.get([b"x", b"y", b"keep"]) == [None, None, fp_bytes(1)]
    assert store.get_records([b"x"]) == [None] and store.records_due(10, 10) == [] and store.get_aux(["a"]) == [None]
    if not isinstance(store, RedisStore):  # Redis leaves it: the framed evidence is of no record's content
        assert store.get_evidence([b"x"]) == [None]
    store.begin()
    store.put([(b"x", fp_bytes(2))])
    store.commit()
    assert store.get([b"x"]) == [fp_bytes(2)]


def test_capped_lookup_still_finds_exact_duplicates(store: FingerprintStore) -> None:
    base = 0xABCD << 48  # one hot bucket in the first table
    store.put([(b"k%02d" % i, fp_bytes(base | (i << 8))) for i in range(60)])
    probe = store.near(fp_bytes(base | (59 << 8)), 3, 10)
    assert probe.capped and probe.candidates >= 60
    assert (b"k59", 0) in _hits(probe)


def test_sixteen_byte_fingerprints(kind: StoreKind, tmp_path: Path) -> None:
    layout = TableLayout(128, 3, 4)
    s = open_store(kind.make, tmp_path / "s128", layout)
    rng = random.Random(3)
    stored = {b"k%d" % i: rng.getrandbits(128) for i in range(100)}
    s.put([(k, v.to_bytes(16, "big")) for k, v in stored.items()])
    for v in list(stored.values())[:20]:
        q = _flip(rng, v, 2, 128)
        assert _hits(s.near(q.to_bytes(16, "big"), 3, 0)) == _brute(stored, q, 3)
    s.close()


# -- concurrency ---------------------------------------------------------------------------------


_WORKER_SRC = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[1] + "/tests")
    from helpers.stores import LAYOUT, group_fps, open_store, work
    {make}
    store = open_store(make, sys.argv[2])
    worker, go = int(sys.argv[3]), sys.argv[4]
    while not os.path.exists(go):
        time.sleep(0.002)
    result = work(store, worker, group_fps())
    store.close()
    print(json.dumps([[g, kept, None if of is None else of.decode()] for g, kept, of in result]))
    """
)


def test_concurrent_check_and_add_keeps_exactly_one_per_group(kind: StoreKind, tmp_path: Path) -> None:
    groups = group_fps()
    path = tmp_path / "shared"
    results: list[list[tuple[int, bool, bytes | None]]] = [[] for _ in range(WORKERS)]  # by worker
    store = open_store(kind.make, path)
    if kind.worker_make is None:  # one process: threads (they finish in any order)
        threads = [
            threading.Thread(target=lambda w=w: results.__setitem__(w, work(store, w, groups)))
            for w in range(WORKERS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        go = tmp_path / "go"
        src = _WORKER_SRC.replace("{make}", kind.worker_make)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", src, str(REPO), str(path), str(w), str(go)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(WORKERS)
        ]
        go.touch()
        for w, p in enumerate(procs):
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err[-2000:]
            results[w] = [(g, kept, None if of is None else of.encode()) for g, kept, of in json.loads(out)]
    kept: dict[int, list[bytes]] = {}
    for w, result in enumerate(results):
        assert sorted(g for g, _, _ in result) == list(range(GROUPS))
        for g, was_kept, of in result:
            key = b"g%02d-w%d" % (g, w)
            if was_kept:
                kept.setdefault(g, []).append(key)
            else:
                assert of is not None and of.startswith(b"g%02d-" % g)  # matched its own group
    stored = dict(store.scan(None, 10_000))
    store.close()
    # Exactly one key kept per group, and every add reported kept is stored (no lost add).
    assert all(len(kept.get(g, [])) == 1 for g in range(GROUPS)), kept
    assert sorted(stored) == sorted(k for keys in kept.values() for k in keys)
