"""LMDB: what of ``data.mdb`` a process keeps mapped in (``RssFile``): the map's pages are unmapped
every ``_TRIM_EVERY`` transactions (Linux), the evidence's with the rest."""

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


@pytest.mark.parametrize("read", ["get_record", "get_evidence"])
@pytest.mark.parametrize("trim_every", [8, 10**9])
def test_the_map_is_trimmed_every_few_transactions(
    store: Path, monkeypatch: pytest.MonkeyPatch, trim_every: int, read: str
) -> None:
    monkeypatch.setattr(lmdbstore, "_TRIM_EVERY", trim_every)
    with SimhashIndex.open(store) as idx:
        get = getattr(idx, read)
        get("k0")
        before = _rss_file()
        for i in range(N):
            assert get(f"k{i}") == _value(i)  # one read transaction each
        grown = _rss_file() - before
    if trim_every == 8:
        assert grown < N * SIZE / 4, grown  # at most the last 8 reads' pages stay mapped
    else:
        assert grown >= N * SIZE * 0.9, grown  # what the map does untrimmed: the test can tell


def test_the_trim_finds_the_map_after_it_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map moves when it grows: the trim unmaps it where it lies now."""
    monkeypatch.setattr(lmdbstore, "_TRIM_EVERY", 1)
    with SimhashIndex.open(tmp_path / "idx", map_size=1 << 20) as idx:
        for i in range(N):  # 12.5 MB: the map grows several times
            idx.put_record(f"k{i}", b"r", evidence=_value(i))
        assert idx._store.grows > 0  # type: ignore[attr-defined]
        before = _rss_file()
        assert all(idx.get_evidence(f"k{i}") == _value(i) for i in range(N))
        assert _rss_file() - before < N * SIZE / 8
        assert os.path.getsize(tmp_path / "idx" / "data.mdb") > N * SIZE
