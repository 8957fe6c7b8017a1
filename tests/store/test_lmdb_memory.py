"""LMDB: what of ``data.mdb`` a process keeps mapped in (``RssFile``): an evidence read unmaps what
it mapped, and the map's pages are unmapped every ``_TRIM_EVERY`` transactions (Linux)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from scrapy_simhash.store import lmdbstore
from scrapy_simhash.store.index import SimhashIndex

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RssFile and madvise: Linux")

N = 200
SIZE = 64 * 1024  # a value of 16 overflow pages: its own pages dominate the fault-around of its leaf


def _rss_file() -> int:
    """This process's mapped file pages, bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssFile:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no RssFile")  # pragma: no cover


def _value(i: int) -> bytes:
    return i.to_bytes(4, "big") * (SIZE // 4)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An index whose ``N`` records and evidence are ``SIZE`` bytes each (in the file cache)."""
    path = tmp_path / "idx"
    with SimhashIndex.open(path) as idx:
        for i in range(N):
            idx.put_record(f"k{i}", _value(i), evidence=_value(i))
    return path


def test_an_evidence_read_maps_none_of_it(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmdbstore, "_TRIM_EVERY", 10**9)  # no trim: the reads alone
    with SimhashIndex.open(store) as idx:
        idx.get_evidence("k0")
        before = _rss_file()
        for i in range(N):
            assert idx.get_evidence(f"k{i}") == _value(i)
        grown = _rss_file() - before
        # Through the map, each read maps its value's pages: N * SIZE (12.5 MB) and more.
        assert grown < N * SIZE / 8, grown
        records_before = _rss_file()
        for i in range(N):
            assert idx.get_record(f"k{i}") == _value(i)
        assert _rss_file() - records_before >= N * SIZE * 0.9  # what the map does: the test can tell


@pytest.mark.parametrize("trim_every", [8, 10**9])
def test_the_map_is_trimmed_every_few_transactions(
    store: Path, monkeypatch: pytest.MonkeyPatch, trim_every: int
) -> None:
    monkeypatch.setattr(lmdbstore, "_TRIM_EVERY", trim_every)
    with SimhashIndex.open(store) as idx:
        idx.get_record("k0")
        before = _rss_file()
        for i in range(N):
            assert idx.get_record(f"k{i}") == _value(i)  # one read transaction each
        grown = _rss_file() - before
    if trim_every == 8:
        assert grown < N * SIZE / 4, grown  # at most the last 8 reads' pages stay mapped
    else:
        assert grown >= N * SIZE * 0.9, grown


def test_evidence_in_a_batch_is_the_batchs(store: Path) -> None:
    """In a batch (one write transaction, the map trimmed by its evidence reads), each read sees
    the batch's writes."""
    with SimhashIndex.open(store) as idx:
        with idx.batch():
            idx.put_record("k1", b"r", evidence=b"new evidence")
            idx.put_record("k2", b"r", evidence=b"")
            assert idx.get_evidence("k1") == b"new evidence"
            assert idx.get_evidence("k2") is None
            assert idx.get_evidence("k3") == _value(3)
            idx.delete_record("k4")
            assert idx.get_evidence("k4") is None
        assert [idx.get_evidence(f"k{i}") for i in range(1, 6)] == [b"new evidence", None, _value(3), None, _value(5)]


def test_evidence_after_the_map_grows(tmp_path: Path) -> None:
    """The map moves when it grows: the trim finds it where it lies now."""
    with SimhashIndex.open(tmp_path / "idx", map_size=1 << 20) as idx:
        for i in range(N):  # 12.5 MB: the map grows several times
            idx.put_record(f"k{i}", b"r", evidence=_value(i))
            assert idx.get_evidence(f"k{i // 2}") == _value(i // 2)
        assert idx._store.grows > 0  # type: ignore[attr-defined]
        assert all(idx.get_evidence(f"k{i}") == _value(i) for i in range(N))
        assert os.path.getsize(tmp_path / "idx" / "data.mdb") > N * SIZE
