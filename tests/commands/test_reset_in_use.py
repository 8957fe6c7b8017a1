"""``reset`` (and a crawl's ``SIMHASH_RESET``) of an LMDB index that another crawl has open is
refused, and deletes nothing: deleting it from under the crawl would lose every record the crawl
writes after it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scrapy_simhash import SimhashIndex
from scrapy_simhash.commands.cli import main
from scrapy_simhash.errors import SimhashIndexError

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks")]

HOLDER = """
import sys
from scrapy_simhash import SimhashIndex
with SimhashIndex.open(sys.argv[1]) as index:
    index.add("https://a.example/held", 0x1234_5678_9ABC_DEF0)
    print("open", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


@contextmanager
def _held_open(path: Path) -> Iterator[None]:
    """Another process holds the index at ``path`` open (and adds one key) while the block runs."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait(timeout=120) == 0
        assert holder.stdout is not None
        holder.stdout.close()


def test_reset_refuses_an_index_open_in_another_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spider" / "pages"
    with SimhashIndex.open(path) as index:
        index.add("https://a.example/1", 0x0F0F_0F0F_0F0F_0F0F)
    with _held_open(path):
        assert main([str(path.parent), "reset", "--yes"]) == 1
        err = capsys.readouterr().err
        assert (
            err
            == f"error: the index at {path} is open in another process (a crawl?): stop it, then reset; nothing was deleted\n"
        )
        assert (path / "data.mdb").is_file()
    with SimhashIndex.open(path, readonly=True) as index:
        assert len(index) == 2  # nothing was deleted: the holder's add is there too
    assert main([str(path.parent), "reset", "--yes"]) == 0  # closed everywhere: reset deletes it
    assert capsys.readouterr().out == f"deleted the index at {path}\n"
    assert not path.exists()


def test_a_crawls_reset_refuses_an_index_another_crawl_has_open(tmp_path: Path) -> None:
    path = tmp_path / "spider" / "pages"
    with SimhashIndex.open(path) as index:
        index.add("https://a.example/1", 0x0F0F_0F0F_0F0F_0F0F)
    with _held_open(path), pytest.raises(SimhashIndexError, match=r"open in another process .*Nothing was deleted"):
        SimhashIndex.destroy(path)  # what SIMHASH_RESET / -a simhash_reset=1 calls at the spider's open
    with SimhashIndex.open(path, readonly=True) as index:
        assert len(index) == 2
    assert SimhashIndex.destroy(path) and not path.exists()
