"""LMDB index: persistence, settings checks, foreign directories, map growth, several processes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import lmdb
import pytest

from scrapy_simhash.store.index import (
    Match,
    NotAnIndexError,
    SettingsMismatchError,
    SimhashIndex,
    SimhashIndexError,
)

REPO = Path(__file__).resolve().parents[2]


def _checksums(path: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    settings = {"tokenizer": "jieba", "features": "words"}
    with SimhashIndex.open(path, fingerprint_settings=settings) as idx:
        idx.add("a", 0xF0F0)
        idx.add("b", 0xF0F1)
        idx.put_record("a", b"history")
        assert idx.path == str(path)
    assert sorted(p.name for p in path.iterdir()) == ["data.mdb", "lock.mdb"]
    with SimhashIndex.open(path, fingerprint_settings=settings) as idx:
        assert idx.near(0xF0F0) == [Match("a", 0xF0F0, 0), Match("b", 0xF0F1, 1)]
        assert idx.get_record("a") == b"history" and len(idx) == 2
        assert idx.fingerprint_settings == settings
    # blocks=None adopts the stored layout; settings=None are not checked.
    with SimhashIndex.open(path, max_distance=3) as idx:
        assert idx.blocks == 4 and idx.fingerprint_settings == settings


def test_same_directory_twice_in_one_process(tmp_path: Path) -> None:
    a = SimhashIndex.open(tmp_path / "idx")
    b = SimhashIndex.open(tmp_path / "idx")
    a.add("x", 1)
    assert b.get("x") == 1
    a.close()
    b.add("y", 2)
    assert b.get("y") == 2
    b.close()


@pytest.mark.parametrize(
    ("created", "requested", "name", "stored_text", "requested_text"),
    [
        ({}, {"max_distance": 4}, "max_distance", "max_distance=3", "max_distance=4"),
        ({"bits": 128}, {}, "bits", "bits=128", "bits=64"),
        ({"blocks": 6}, {"blocks": 5}, "blocks", "blocks=6", "blocks=5"),
        (
            {"fingerprint_settings": {"tokenizer": "jieba"}},
            {"fingerprint_settings": {"tokenizer": "rjieba"}},
            "fingerprint_settings['tokenizer']",
            "fingerprint_settings['tokenizer']='jieba'",
            "fingerprint_settings['tokenizer']='rjieba'",
        ),
    ],
)
def test_settings_mismatch_names_values_and_touches_nothing(
    tmp_path: Path,
    created: dict,
    requested: dict,
    name: str,
    stored_text: str,
    requested_text: str,
) -> None:
    path = tmp_path / "idx"
    with SimhashIndex.open(path, **created) as idx:
        idx.add("a", 1)
    before = _checksums(path)
    with pytest.raises(SettingsMismatchError) as err:
        SimhashIndex.open(path, **requested)
    msg = str(err.value)
    assert err.value.setting == name
    assert stored_text in msg and requested_text in msg and str(path) in msg
    assert f"Open it with {stored_text}" in msg and "SIMHASH_RESET" in msg and "another directory" in msg
    assert _checksums(path) == before


def _foreign_dirs(tmp_path: Path) -> dict[str, Path]:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "data.mdb").write_bytes(os.urandom(8192))
    foreign = tmp_path / "foreign"
    env = lmdb.open(str(foreign), map_size=1 << 20)
    with env.begin(write=True) as txn:
        txn.put(b"somebody", b"else")
    env.close()
    ours_corrupt = tmp_path / "corrupt"
    with SimhashIndex.open(ours_corrupt) as idx:
        idx.add("a", 1)
    env = lmdb.open(str(ours_corrupt), max_dbs=10)
    meta = env.open_db(b"meta")
    with env.begin(write=True) as txn:
        txn.put(b"index", b"{not json", db=meta)
    env.close()
    a_file = tmp_path / "file"
    a_file.write_bytes(b"x")
    return {
        "other": other,
        "garbage": garbage,
        "foreign": foreign,
        "corrupt": ours_corrupt,
        "file": a_file,
    }


@pytest.mark.parametrize("kind", ["other", "garbage", "foreign", "corrupt", "file"])
def test_not_an_index_is_left_untouched(tmp_path: Path, kind: str) -> None:
    path = _foreign_dirs(tmp_path)[kind]
    before = _checksums(path) if path.is_dir() else path.read_bytes()
    with pytest.raises(NotAnIndexError) as err:
        SimhashIndex.open(path)
    assert str(path) in str(err.value) and "untouched" in str(err.value)
    with pytest.raises(NotAnIndexError):
        SimhashIndex.destroy(path)
    with pytest.raises(NotAnIndexError):
        SimhashIndex.open(path, reset=True)
    assert (_checksums(path) if path.is_dir() else path.read_bytes()) == before


def test_destroy_and_reset(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    assert SimhashIndex.destroy(path) is False
    with SimhashIndex.open(path, max_distance=4) as idx:
        idx.add("a", 1)
    with SimhashIndex.open(path, max_distance=3, reset=True) as idx:
        assert len(idx) == 0 and idx.max_distance == 3
    assert SimhashIndex.destroy(path) is True and not path.exists()
    (tmp_path / "empty").mkdir()
    with SimhashIndex.open(tmp_path / "empty") as idx:  # an empty directory becomes an index
        idx.add("a", 1)
    keep = SimhashIndex.open(tmp_path / "empty")
    with pytest.raises(SimhashIndexError, match="open in this process"):
        SimhashIndex.destroy(tmp_path / "empty")
    keep.close()


def test_readonly(tmp_path: Path) -> None:
    with pytest.raises(SimhashIndexError, match="no index there"):
        SimhashIndex.open(tmp_path / "none", readonly=True)
    assert not (tmp_path / "none").exists()
    with SimhashIndex.open(tmp_path / "idx") as idx:
        idx.add("a", 1)
    with SimhashIndex.open(tmp_path / "idx", readonly=True) as ro:
        assert ro.near(1) == [Match("a", 1, 0)]
        with pytest.raises(SimhashIndexError, match="read-only"):
            ro.add("b", 2)


def test_map_grows_from_tiny_size(tmp_path: Path) -> None:
    with SimhashIndex.open(tmp_path / "idx", map_size=1 << 16, durable=False) as idx:
        with idx.batch():  # one transaction that outgrows the map: replayed after growing
            for i in range(3000):
                idx.add(
                    f"https://example.com/page/{i}",
                    (i * 0x9E3779B97F4A7C15) % (1 << 64),
                )
                idx.put_record(f"https://example.com/page/{i}", b"r" * 50)
        for i in range(3000, 6000):
            idx.check_and_add(f"https://example.com/page/{i}", (i * 0x9E3779B97F4A7C15) % (1 << 64))
        idx.add_many((f"bulk{i}", (i * 0xC2B2AE3D27D4EB4F) % (1 << 64)) for i in range(20000))
        info = idx.info()
        assert info["map_grows"] >= 3 and idx.stats["retries"] >= 1
        assert len(idx) >= 3000 + 20000
    with SimhashIndex.open(tmp_path / "idx") as idx:
        for i in (0, 2999, 5999):
            key = f"https://example.com/page/{i}"
            fp = (i * 0x9E3779B97F4A7C15) % (1 << 64)
            assert idx.get(key) == fp or idx.near(fp)
        assert idx.get_record("https://example.com/page/2999") == b"r" * 50
        assert idx.get("bulk19999") == (19999 * 0xC2B2AE3D27D4EB4F) % (1 << 64)


_WORKER = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from scrapy_simhash.store.index import SimhashIndex
    path, tag, n, go = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    idx = SimhashIndex.open(path, map_size=1 << 16, durable=False)
    open(go + "." + tag, "w").close()  # opened: ready to race
    while not os.path.exists(go):
        time.sleep(0.005)
    salt = 0x9E3779B97F4A7C15 if tag == "a" else 0xC2B2AE3D27D4EB4F
    for start in range(0, n, 500):
        if start % 1000:
            with idx.batch():
                for i in range(start, start + 500):
                    idx.add(f"{tag}{i}", (i * salt + 12345) % (1 << 64))
        else:
            for i in range(start, start + 500):
                idx.add(f"{tag}{i}", (i * salt + 12345) % (1 << 64))
    idx.close()
    print("done", tag, flush=True)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("precreate", [True, False])
def test_two_processes_add_at_once(tmp_path: Path, precreate: bool) -> None:
    path = tmp_path / "idx"
    go = tmp_path / "go"
    n = 50_000 if precreate else 5_000  # the second case races on creating the index
    # Create the index first, as the crawler does; then two writers race (and grow the map).
    if precreate:
        SimhashIndex.open(path, map_size=1 << 16).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(REPO), str(path), tag, str(n), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"go.{tag}").exists() for tag in ("a", "b")):  # both opened the index
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a writer did not start"
        time.sleep(0.01)
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "done" in out
    with SimhashIndex.open(path, readonly=True) as idx:
        assert len(idx) == 2 * n
        items = dict(idx.items())
        for tag, salt in (("a", 0x9E3779B97F4A7C15), ("b", 0xC2B2AE3D27D4EB4F)):
            assert all(items[f"{tag}{i}"] == (i * salt + 12345) % (1 << 64) for i in range(n))
        assert idx.info()["map_size"] > 1 << 16


def test_non_durable_commit_survives_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    code = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        from scrapy_simhash.store.index import SimhashIndex
        idx = SimhashIndex.open({str(path)!r}, durable=False)
        idx.add("a", 42)
        idx.put_record("a", b"r")
        os._exit(0)  # no close(), no sync
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    with SimhashIndex.open(path) as idx:
        assert idx.get("a") == 42 and idx.get_record("a") == b"r"


def test_check_and_add_sees_other_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    idx = SimhashIndex.open(path)
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from scrapy_simhash.store.index import SimhashIndex
        with SimhashIndex.open({str(path)!r}) as idx:
            print(idx.check_and_add("other", 0xABCDEF))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "None"
    assert idx.check_and_add("mine", 0xABCDEF ^ 0b101) == Match("other", 0xABCDEF, 2)
    idx.close()


def test_threads_share_one_index(tmp_path: Path) -> None:
    import threading

    idx = SimhashIndex.open(tmp_path / "idx", durable=False)
    errors: list[BaseException] = []

    def work(tag: int) -> None:
        try:
            for i in range(300):
                fp = ((tag * 1000 + i) * 0x9E3779B97F4A7C15) % (1 << 64)
                if i % 3:
                    idx.add(f"t{tag}-{i}", fp)
                else:
                    with idx.batch():
                        idx.add(f"t{tag}-{i}", fp)
                        idx.put_record(f"t{tag}-{i}", b"r")
                idx.near(fp)
        except Exception as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(idx) == 1200
    assert idx.get_record("t3-297") == b"r"
    idx.close()
