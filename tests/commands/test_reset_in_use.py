"""``reset`` of an LMDB index that a crawl has open is refused, and deletes nothing: deleting it
from under the crawl would lose every record the crawl writes after it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scrapy_simhash import SimhashIndex
from scrapy_simhash.commands.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks")]

HOLDER = """
import sys
from scrapy_simhash import SimhashIndex
with SimhashIndex.open(sys.argv[1]) as index:
    index.add("https://a.example/held", 0x1234_5678_9ABC_DEF0)
    print("open", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def test_reset_refuses_an_index_open_in_another_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spider" / "pages"
    with SimhashIndex.open(path) as index:
        index.add("https://a.example/1", 0x0F0F_0F0F_0F0F_0F0F)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert main([str(path.parent), "reset", "--yes"]) == 1
        err = capsys.readouterr().err
        assert (
            err
            == f"error: the index at {path} is open in another process (a crawl?): stop it, then reset; nothing was deleted\n"
        )
        assert (path / "data.mdb").is_file()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait(timeout=120) == 0
        assert holder.stdout is not None
        holder.stdout.close()
    with SimhashIndex.open(path, readonly=True) as index:
        assert len(index) == 2  # nothing was deleted: the holder's add is there too
    assert main([str(path.parent), "reset", "--yes"]) == 0  # closed everywhere: reset deletes it
    assert capsys.readouterr().out == f"deleted the index at {path}\n"
    assert not path.exists()
