"""What the console door prints for a directory it cannot open as an index: one line that names the
directory once and says what is wrong and the fix, the directory left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_simhash import SimhashIndex
from scrapy_simhash.commands.cli import main


def _damaged(tmp_path: Path) -> Path:
    path = tmp_path / "spider" / "pages"
    with SimhashIndex.open(path) as index:
        for i in range(200):
            index.add(f"https://a.example/{i}", (i + 1) * 0x9E37_79B9_7F4A_7C15 % (1 << 64) or 1)
    data = path / "data.mdb"
    data.write_bytes(data.read_bytes()[:8192])  # truncated
    return path


def _foreign(tmp_path: Path) -> Path:
    path = tmp_path / "foreign"
    path.mkdir()
    (path / "data.mdb").write_bytes(b"not lmdb" * 100)
    return path


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty"
    path.mkdir()
    return path


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_damaged, "holds a damaged LMDB database"),
        (_foreign, "is not a scrapy-simhash index (data.mdb is not an LMDB database)"),
        (_empty, "there is no index there yet"),
    ],
)
def test_an_index_that_cannot_be_opened_is_named_once(tmp_path, capsys, make, says):
    path = make(tmp_path)
    before = {p: p.read_bytes() for p in path.iterdir()}
    assert main([str(path), "info"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert says in err
    # the store's own message names the directory: the line does not say it twice
    assert err.count(str(path)) == 1, err
    assert "is not a usable" not in err
    assert {p: p.read_bytes() for p in path.iterdir()} == before
