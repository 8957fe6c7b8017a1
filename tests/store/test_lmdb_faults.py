"""The LMDB store under faults: killed bulk loads, a full disk, truncated files, concurrent map
growth, several index objects per path, permissions, a replaced lock file. Real processes, a real
tmpfs; nothing stubbed."""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scrapy_simhash.decision import shortcopy
from scrapy_simhash.errors import NotAnIndexError, StoreError
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord, visible_key

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[2]


def _fp(tag: int, i: int) -> int:
    return ((tag << 32 | i) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)


def _checksums(path: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def _python(code: str, *args: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


def _started(code: str, *args: str) -> subprocess.Popen[str]:
    """A child running ``code`` (``sys.argv``: the repository, then ``args``), once it said "ready"."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), str(REPO), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
    return proc


def _killed(proc: subprocess.Popen[str], after: float) -> set[int]:
    """SIGKILL ``proc`` ``after`` seconds; the numbers of the "done N" lines it printed."""
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    # Read through the text wrapper that read "ready": it may already hold the first "done" lines
    # (communicate() would read the pipe beneath it and miss them).
    assert proc.stdout is not None and proc.stderr is not None
    with proc.stdout, proc.stderr:
        out = proc.stdout.read()
        proc.stderr.read()
    proc.wait(timeout=30)
    # Only whole lines: unbuffered (PYTHONUNBUFFERED, as in CI), print writes "done", " ", "N" and
    # the line break one by one, and the kill may fall between them.
    whole = out.split("\n")[:-1]
    return {int(line.split()[1]) for line in whole if line.startswith("done")}


# -- SIGKILL during a bulk load ----------------------------------------------------------------------

_LOADER = """
    import sys
    sys.path.insert(0, sys.argv[1])
    from scrapy_simhash.store.index import SimhashIndex
    def fp(tag, i):
        return ((tag << 32 | i) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)
    idx = SimhashIndex.open(sys.argv[2], map_size=1 << 20)
    print("ready", flush=True)
    for batch in range(1000):
        idx.add_many((f"b{batch}-{i}", fp(batch, i)) for i in range(int(sys.argv[3])))
        print("done", batch, flush=True)
"""


@pytest.mark.slow
def test_sigkill_during_add_many_loses_nothing_reported(tmp_path: Path) -> None:
    rng = random.Random(5)
    n = 4000
    for trial in range(20):
        path = tmp_path / f"t{trial}"
        done = _killed(_started(_LOADER, str(path), str(n)), rng.uniform(0.0, 0.4))
        with SimhashIndex.open(path) as idx:
            stored = dict(idx.iter_items())
            batches: dict[int, int] = {}
            for key in stored:
                batch = int(key[1:].split("-")[0])
                batches[batch] = batches.get(batch, 0) + 1
            # every reported batch whole; any other batch (the one killed) whole or absent
            assert all(batches.get(b) == n for b in done), (trial, done, batches)
            assert all(count == n for count in batches.values()), (trial, batches)
            for key in rng.sample(sorted(stored), min(300, len(stored))):
                assert key in {m.key for m in idx.near(stored[key], max_distance=0)}


# -- SIGKILL between the decisions of SIMHASH_NEAR_SIMILARITY ----------------------------------------

_DECIDER = """
    import sys
    sys.path.insert(0, sys.argv[1])
    from scrapy_simhash.fingerprint.simhash import hash_cache
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.fingerprint.sketch import sketch_tokens
    from scrapy_simhash.fingerprint import PageFingerprint
    def fp(tag, i):
        return ((tag << 32 | i) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)
    def sketch(word, i):
        return sketch_tokens(hash_cache("blake2b", 64).digests([f"{word}{i}x{j}" for j in range(200)]))
    idx = SimhashIndex.open(sys.argv[2], map_size=1 << 22)
    tracker = ChangeTracker(idx, near_similarity=0.6, wide_distance=0)
    print("ready", flush=True)
    for i in range(100000):
        own, other = sketch("own", i), sketch("other", i)
        tracker.observe(f"a{i}", PageFingerprint.of(fp(1, i), sketch=own), now=i)
        tracker.observe(f"copy{i}", PageFingerprint.of(fp(1, i), sketch=own), now=i)  # near_duplicate
        tracker.observe(f"unlike{i}", PageFingerprint.of(fp(1, i), sketch=other), now=i)  # kept beside a{i}: check-and-add, then add
        # a template-only page (never indexed: its copy evidence is stored) and its exact copy
        page = dict(fallback="template", content_key=fp(4, i), visible=f"Menu\\nStub {i} line")
        tracker.observe(f"t{i}", PageFingerprint.of(fp(3, i), **page), now=i)
        tracker.observe(f"tcopy{i}", PageFingerprint.of(fp(3, i), **page), now=i)  # near_duplicate of t{i}
        # an indexed page and its exact copy that is template-only: found by the record's visible key
        tracker.observe(f"v{i}", PageFingerprint.of(fp(5, i), visible=f"Menu\\nPage {i}"), now=i)
        tracker.observe(f"vcopy{i}", PageFingerprint.of(fp(5, i), **dict(page, content_key=fp(6, i), visible=f"Menu\\nPage {i}")), now=i)
        print("done", i, flush=True)
"""


@pytest.mark.slow
def test_sigkill_between_a_kept_pages_check_and_add_and_its_add(tmp_path: Path) -> None:
    """A page kept by ``near_similarity`` (its check-and-add found a page at distance 0 whose change
    sketch disagrees; it is then added) is stored whole or not at all when the process is killed:
    a kept page has its record and its indexed fingerprint or neither, a kept template-only page its
    record and its copy evidence or neither, and every reported decision is there."""
    rng = random.Random(11)
    for trial in range(8):
        path = tmp_path / f"t{trial}"
        done = _killed(_started(_DECIDER, str(path)), rng.uniform(0.05, 0.5))
        with SimhashIndex.open(path) as idx:
            indexed = dict(idx.iter_items())
            records = {key: PageRecord.parse(raw) for key, raw in idx.iter_records()}
            last = max((int(re.sub(r"^\D+", "", k)) for k in records), default=-1)
            evidence = {f"t{i}" for i in range(last + 1) if idx.get_aux(shortcopy._page_name(f"t{i}"))}
        if not records:  # killed before the first decision was committed
            assert not done and not indexed, trial
            continue
        assert all(i <= last for i in done) and all(i in done for i in range(last)), (trial, last)
        for i in range(last + 1):
            for key in (f"a{i}", f"unlike{i}"):  # kept pages: a record and an indexed fingerprint, or neither
                assert (key in records) == (key in indexed), (trial, key)
                assert key not in indexed or indexed[key] == _fp(1, i)
            assert f"copy{i}" not in indexed  # a drop is never indexed
            assert (f"t{i}" in records) == (f"t{i}" in evidence), (trial, i)  # template-only: both or neither
            assert f"t{i}" not in indexed and f"tcopy{i}" not in indexed
            if f"tcopy{i}" in records:
                record = records[f"tcopy{i}"]
                assert record is not None and record.duplicate_of == f"t{i}", (trial, i)
            # the indexed page: record (with its visible key) and fingerprint, or neither; its copy dropped
            assert (f"v{i}" in records) == (f"v{i}" in indexed), (trial, i)
            if f"v{i}" in records:
                record = records[f"v{i}"]
                assert record is not None and record.visible_key == visible_key(f"Menu\nPage {i}"), (trial, i)
            assert f"vcopy{i}" not in indexed
            if f"vcopy{i}" in records:
                record = records[f"vcopy{i}"]
                assert record is not None and record.duplicate_of == f"v{i}", (trial, i)
            if i in done:
                expected = {f"a{i}", f"copy{i}", f"unlike{i}", f"t{i}", f"tcopy{i}", f"v{i}", f"vcopy{i}"}
                assert expected <= records.keys(), (trial, i)


# -- a full disk ---------------------------------------------------------------------------------------


@contextmanager
def _small_tmpfs(path: Path, size: str = "1m") -> Iterator[Path]:
    path.mkdir()
    reason = None
    if os.geteuid() != 0:
        reason = "needs root to mount a tmpfs"
    else:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, check=False
        )
        if done.returncode:
            reason = f"mount failed: {done.stderr.decode().strip()}"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the disk-full test must run in CI: {reason}")
        pytest.skip(reason)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_disk_full_raises_store_error_and_keeps_the_index_consistent(tmp_path: Path) -> None:
    with _small_tmpfs(tmp_path / "fs") as fs:
        path = fs / "idx"
        idx = SimhashIndex.open(path, map_size=1 << 20)
        expected = {f"k{i}": _fp(0, i) for i in range(100)}
        idx.add_many(expected.items())
        _fill(fs / "filler")
        errors: list[StoreError] = []

        def until_full(op, keys) -> None:
            for key in keys:
                try:
                    op(key)
                except StoreError as exc:
                    errors.append(exc)
                    return
            pytest.fail(f"{op} never hit the full disk")

        def add(key: str) -> None:
            idx.add(key, _fp(1, int(key[1:])))
            expected[key] = _fp(1, int(key[1:]))

        def check_and_add(key: str) -> None:
            if idx.check_and_add(key, _fp(2, int(key[1:]))) is None:
                expected[key] = _fp(2, int(key[1:]))

        until_full(add, (f"a{i}" for i in range(100_000)))
        until_full(check_and_add, (f"c{i}" for i in range(100_000)))
        with pytest.raises(StoreError) as err:
            idx.add_many((f"m{i}", _fp(3, i)) for i in range(20_000))
        errors.append(err.value)
        with pytest.raises(StoreError) as err:
            idx.put_records((f"r{i}", b"x" * 500, float(i)) for i in range(2000))
        errors.append(err.value)
        assert [e.kind for e in errors] == ["disk_full"] * 4
        assert all(str(path) in str(e) and "free space" in str(e) for e in errors)
        idx.close()
        os.remove(fs / "filler")
        with SimhashIndex.open(path) as idx:
            assert dict(idx.iter_items()) == expected
            assert idx.get_record("r0") is None and idx.records_due(1e9) == []
            for key in random.Random(1).sample(sorted(expected), 50):
                assert key in {m.key for m in idx.near(expected[key], max_distance=0)}
            idx.add("after", 7)  # room again: writes work
            assert idx.get("after") == 7


# -- files that are not a whole environment -------------------------------------------------------------

_OPEN = """
    import sys
    sys.path.insert(0, sys.argv[1])
    from scrapy_simhash.store.index import NotAnIndexError, SimhashIndex
    try:
        SimhashIndex.open(sys.argv[2], readonly=sys.argv[3] == "ro").close()
        print("opened")
    except NotAnIndexError as exc:
        print("refused:", exc)
"""


def _index_with_data(path: Path) -> None:
    with SimhashIndex.open(path, map_size=1 << 20) as idx:
        idx.add_many((f"https://example.com/{i}", _fp(0, i)) for i in range(5000))
        idx.put_records((f"https://example.com/{i}", b"record" * 10, None) for i in range(5000))


@pytest.mark.parametrize("damage", ["truncated", "zero_length", "zero_length_without_lock"])
def test_damaged_data_file_is_refused_untouched(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "idx"
    _index_with_data(path)
    data = path / "data.mdb"
    if damage == "truncated":
        os.truncate(data, data.stat().st_size // 2)
    else:
        os.truncate(data, 0)
        if damage == "zero_length_without_lock":
            os.remove(path / "lock.mdb")
    before = _checksums(path)
    for mode in ("rw", "ro"):
        done = _python(_OPEN, str(path), mode)
        assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # no SIGBUS
        assert done.stdout.startswith("refused:") and str(path) in done.stdout, done.stdout
        assert "untouched" in done.stdout
        # damaged, not foreign: the fix is a copy, not another directory
        assert "holds a damaged LMDB database" in done.stdout and "restore the index from a copy" in done.stdout
        assert "is not a scrapy-simhash index" not in done.stdout
    assert _checksums(path) == before
    with pytest.raises(NotAnIndexError, match=r"data\.mdb"):
        SimhashIndex.destroy(path)  # not deleted either
    assert _checksums(path) == before


# -- opens while another process grows the map ---------------------------------------------------------

_GROWER = """
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from scrapy_simhash.store.index import SimhashIndex
    idx = SimhashIndex.open(sys.argv[2], map_size=1 << 16)
    print("ready", flush=True)
    end = time.monotonic() + float(sys.argv[3])
    i = 0
    while time.monotonic() < end:
        with idx.batch():
            for _ in range(200):
                idx.add(f"g{i}", (i * 0x9E3779B97F4A7C15) % (1 << 64))
                idx.put_record(f"g{i}", b"r" * 200)
                i += 1
    print("grows", idx.info()["map_grows"], flush=True)
    idx.close()
"""


def test_opens_during_map_growth_raise_nothing(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    SimhashIndex.open(path, map_size=1 << 16).close()
    proc = _started(_GROWER, str(path), "4")
    opens = 0
    while proc.poll() is None:
        with SimhashIndex.open(path, readonly=opens % 2 == 0) as idx:
            assert len(idx) >= 0 and isinstance(idx.near(12345), list)
        opens += 1
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    assert int(out.split()[-1]) >= 3 and opens >= 20, (out, opens)  # the map grew while we opened


def test_open_that_meets_map_resized_opens_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race above, forced: ``lmdb.open`` itself raising ``MDB_MAP_RESIZED`` (another process
    grew the map between LMDB's read of its size and the open's first transaction) is retried."""
    import lmdb

    path = tmp_path / "idx"
    with SimhashIndex.open(path, map_size=1 << 16) as idx:
        idx.add("https://example.com/a", 12345)
    real, calls = lmdb.open, []

    def resized_once(*args, **kwargs):
        if not kwargs.get("lock", True):  # the read-only look at the meta record before the open
            return real(*args, **kwargs)
        calls.append(args[0])
        if len(calls) == 1:
            raise lmdb.MapResizedError(
                "mdb_txn_begin: MDB_MAP_RESIZED: Database contents grew beyond environment mapsize"
            )
        return real(*args, **kwargs)

    monkeypatch.setattr(lmdb, "open", resized_once)
    with SimhashIndex.open(path) as idx:
        assert [m.key for m in idx.near(12345, max_distance=0)] == ["https://example.com/a"]
    assert calls == [str(path), str(path)]  # the open raised once, the next one adopted the map


def test_an_io_error_on_open_is_a_store_error_not_a_foreign_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A healthy index the system cannot read (EIO) is reported as an I/O error naming the
    directory, never as "not an index" with advice to delete it; nothing is modified."""
    import lmdb

    path = tmp_path / "idx"
    _index_with_data(path)
    before = _checksums(path)

    def eio(*args, **kwargs):
        raise lmdb.Error(f"{args[0]}: Input/output error")

    monkeypatch.setattr(lmdb, "open", eio)
    with pytest.raises(StoreError, match=r"io: .*Input/output error") as info:
        SimhashIndex.open(path)
    assert info.value.kind == "io" and str(path) in str(info.value)
    monkeypatch.undo()
    assert _checksums(path) == before
    with SimhashIndex.open(path) as idx:
        assert len(idx) == 5000


# -- several index objects on one path in one process ---------------------------------------------------


def test_two_index_objects_on_one_path_from_eight_threads(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    a = SimhashIndex.open(path, map_size=1 << 16)
    b = SimhashIndex.open(path, map_size=1 << 16)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        idx = a if t % 2 else b
        try:
            for i in range(150):
                fp = _fp(t + 10, i)
                if i % 3 == 0:
                    with idx.batch():
                        idx.add(f"t{t}-{i}", fp)
                        idx.put_record(f"t{t}-{i}", b"r" * 100, due=float(i))
                elif i % 3 == 1:
                    assert idx.check_and_add(f"t{t}-{i}", fp) is None
                else:
                    idx.add_many([(f"t{t}-{i}", fp)])
                assert idx.near(fp, max_distance=0)[0].key == f"t{t}-{i}"
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(a) == len(b) == 8 * 150 and a.info()["map_grows"] + b.info()["map_grows"] >= 1
    assert len(b.records_due(1e9, 10_000)) == 8 * 50
    a.close()
    assert b.get("t3-149") == _fp(13, 149)
    b.close()


# -- permissions and the lock file -----------------------------------------------------------------------


def test_permission_denied_is_a_store_error_naming_the_fix(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run the open as another user")
    base = Path(tempfile.mkdtemp(prefix="simhash-perm-"))
    try:
        os.chmod(base, 0o755)
        path = base / "idx"
        _index_with_data(path)
        # Imports first (the interpreter may live where the other user cannot read), then the
        # process becomes "nobody" and opens the index.
        code = """
            import os, sys
            sys.path.insert(0, sys.argv[1])
            from scrapy_simhash.store.index import SimhashIndex, StoreError
            os.setgid(65534)
            os.setuid(65534)
            for readonly in (True, False):
                try:
                    SimhashIndex.open(sys.argv[2], readonly=readonly).close()
                    print("opened")
                except StoreError as exc:
                    print(exc.kind, "|", exc)
        """
        done = _python(code, str(path))
        assert done.returncode == 0, done.stderr[-2000:]
        lines = done.stdout.splitlines()
        assert len(lines) == 2 and all(line.startswith("permission |") for line in lines), lines
        assert all(str(path) in line and "read and write access" in line for line in lines)
    finally:
        shutil.rmtree(base)


def test_replaced_lock_file_is_detected_on_write(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    idx = SimhashIndex.open(path)
    idx.add("a", 1)
    os.remove(path / "lock.mdb")
    with pytest.raises(StoreError) as err:
        idx.add("b", 2)
    assert err.value.kind == "lock_file" and "lock.mdb" in str(err.value)
    assert idx.get("a") == 1  # reads still work
    idx.close()
    with SimhashIndex.open(path) as again:  # reopened: a fresh lock file, writes work
        again.add("b", 2)
        assert again.get("b") == 2


# -- in a crawl: counted, logged once per kind --------------------------------------------------------


def test_full_disk_in_a_crawl_is_counted_and_logged_once(make_mw, tmp_path: Path, caplog) -> None:
    import logging

    from helpers.pages import article_html, make_response, run

    with _small_tmpfs(tmp_path / "fs", size="2m") as fs:
        mw = make_mw(SIMHASH_DIR=str(fs / "simhash"), SIMHASH_LMDB_MAP_SIZE=1 << 20)
        run(mw, make_response("https://news.example.com/first", article_html("harbour")))
        _fill(fs / "filler")
        names = ["orchard", "telescope", "metro", "tea"]
        with caplog.at_level(logging.DEBUG, logger="scrapy_simhash.scrapy.middleware"):
            for i in range(40):
                item = {"i": i}
                response = make_response(f"https://news.example.com/{i}", article_html(names[i % 4]) + "x" * i * 50)
                assert run(mw, response, [item]) in ([item], [])  # never raises
        stats = mw.crawler.stats.get_stats()
        failed = stats.get("simhash/store_error/disk_full", 0)
        assert failed >= 1 and stats["simhash/store_error"] == failed
        errors = [r for r in caplog.records if "index error" in r.getMessage()]
        assert len(errors) == failed
        assert [r.levelno for r in errors] == [logging.WARNING] + [logging.DEBUG] * (failed - 1)
        assert errors[0].exc_info is None and "disk full" in errors[0].getMessage()
        os.remove(fs / "filler")
        mw.spider_closed(mw.crawler.spider, "finished")


# -- two processes bulk-loading one index at once ----------------------------------------------------

_BULK = """
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from scrapy_simhash.store.index import SimhashIndex
    def fp(tag, i):
        return ((tag << 32 | i) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)
    tag, go = int(sys.argv[3]), sys.argv[4]
    idx = SimhashIndex.open(sys.argv[2], map_size=1 << 16)
    while not os.path.exists(go):
        time.sleep(0.002)
    idx.add_many((f"p{tag}-{i}", fp(tag, i)) for i in range(20_000))
    idx.close()
"""


def test_two_processes_bulk_loading_at_once_lose_nothing(tmp_path: Path) -> None:
    path, go = tmp_path / "idx", tmp_path / "go"
    SimhashIndex.open(path, map_size=1 << 16).close()  # created empty: both may take the bulk path
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_BULK), str(REPO), str(path), str(tag), str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in (1, 2)
    ]
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
    with SimhashIndex.open(path, readonly=True) as idx:
        expected = {f"p{tag}-{i}": _fp(tag, i) for tag in (1, 2) for i in range(20_000)}
        assert dict(idx.iter_items()) == expected
        for key in random.Random(2).sample(sorted(expected), 400):
            assert key in {m.key for m in idx.near(expected[key], max_distance=0)}
