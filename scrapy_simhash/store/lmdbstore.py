"""LMDB store (the default): one environment per index, one named sub-database per table.

Layout of the environment (``data.mdb`` + ``lock.mdb`` in the index directory):

``t00`` .. ``tNN``
    One per table: ``bucket key -> packed bucket``, the bucket's fingerprints as one value,
    sorted, ``value_width`` bytes each; the bucket key is the table key without its low bits, so
    that a bucket holds the fingerprints of ``2 ** shift`` table keys (``shift``: the table key's
    bits less ``_BUCKET_BITS``, 3 for 64-bit fingerprints in 4 tables; a lookup keeps the
    fingerprints of its own table key, :meth:`LmdbStore._fine`, so that it finds what one bucket
    per table key held). ``t00``'s bucket holds each fingerprint once per key filed under it,
    sorted by ``(fingerprint, id)``, the ids (4 bytes each) after the fingerprints, in the same
    order: what finds a fingerprint's keys. A lookup is one ``get`` per table, read straight into
    numpy. Adding to a bucket rewrites it. (Chosen over ``dupsort`` buckets, one bucket per table
    key and an ``fp -> id`` table, for lookup time and bytes per URL: ``benchmarks/scale/hot_bytes.py``,
    ``benchmarks/README.md``.)
``records``
    ``id -> entry``, one per key with a fingerprint, a record or evidence; ``id``: 4 bytes
    big-endian, the last one plus one (so that the entries of new keys, most of a crawl's writes,
    fill their pages in order instead of leaving them ~40% empty, as keys in no order do). An
    entry: a flags byte (``_HAS_FP``, ``_HAS_RECORD``, ``_HAS_EVIDENCE``, ``_HAS_SKETCH``,
    ``_DUE``, ``_MOVED`` for the due times that follow, ``_PREFIXED``, ``_SHARED``); the time the
    record is filed under in ``due_index`` (``indexed due``: with ``_DUE``) and its due time when
    that is another one (with ``_MOVED``), each in milliseconds, 8 bytes big-endian; the key's
    fingerprint (``value_width`` bytes, with ``_HAS_FP``, unless ``_SHARED``: it is the record's
    last fingerprint, read there); the key: with ``_PREFIXED``, the code of its prefix (up to the
    ``/`` after the host, ``prefixes``; a varint), then the length of the rest (1 byte, or
    ``0xFF`` and 4 bytes little-endian) and the rest; then the record's bytes but its change
    sketch. The key is stored here only: every other table names the entry by its id.
``sketches``
    ``id -> change sketch``: a record's last 64 bytes (``store.record.split_sketch``), kept
    apart so that the entries' pages hold only what every decision and selection reads; joined
    back to the record in the same transaction by every read of it.
``ids``
    ``BLAKE2b-32 digest of the key -> id`` (``dupsort``: keys of one digest are told apart by the
    key in their entry). A key's entry is found with two ``get``; the order of
    :meth:`LmdbStore.scan` and :meth:`LmdbStore.scan_records` is ``(digest, key)``.
``prefixes``
    ``b"p" + prefix -> code`` and ``b"c" + code -> prefix`` (4 bytes big-endian): the key
    prefixes that entries name by code, given in order, never changed nor deleted; a process
    keeps those it has seen committed in memory (:meth:`LmdbStore._key`).
``due_index``
    ``indexed due + id -> hot state`` (:func:`~scrapy_simhash.store.hot.hot_of`, what a
    selection reads; in 28 bytes where they hold it to the bit and its due time is the key's,
    :func:`~scrapy_simhash.store.hot.keyed`, 34 where it is another,
    :func:`~scrapy_simhash.store.hot.compact`, answered as the 57), in due order. :meth:`LmdbStore.due_states` returns the keys of a page
    unread (:class:`_EntryKeys`): a key is read from its entry when the selection asks for it,
    which it does for the rows that may enter it only (a key kept here as well would cost a URL
    its key's length again). The index entry is a lower bound of the due time, not the due time itself: a record
    whose due time moves later (a refetch, nearly always) keeps its entry, so that writing it
    touches one entry of the index instead of two (``benchmarks/speed/bench_due_layout.py``); :meth:`LmdbStore.records_due` checks each entry against its record and moves the stale
    ones to their due time (in write transactions of ``_REKEY_BATCH`` entries), so it returns
    exactly the records due.
``evidence``, ``evidence_tail``
    ``id -> evidence``: a kept page's novelty evidence (most of a kept page's bytes), apart
    from its record so that the records' pages hold only records (a decision reads its URL's
    record and its candidates'; the evidence only when a page resembles a kept one); written in
    the transaction that writes the record. Evidence over a page goes to overflow pages, whose
    last one is left part empty: such evidence keeps what fills its pages in ``evidence`` and the
    rest, when that fits in a leaf page's node, in ``evidence_tail`` (read back joined: fewer
    pages, ``benchmarks/scale/hot_bytes.py``).
``aux``
    ``name -> bytes`` (per-host site templates).
``meta``
    ``b"index" -> JSON``: schema version, bits, max_distance, blocks, fingerprint settings.

Every operation is one transaction. Several processes on one machine can read and write one index
at once (LMDB serialises writers with its lock file); a process that sees the map grown by another
adopts its size; several index objects on one directory in one process share one environment.

What is checked before LMDB maps ``data.mdb``: both meta pages (magic, version, page size) and that
the file holds every page the newer one counts, so a truncated, zero-length or foreign file is
refused with :class:`~scrapy_simhash.errors.NotAnIndexError` instead of a SIGBUS or a silent
re-initialisation. What LMDB itself cannot protect: deleting ``lock.mdb`` while a process has the
index open lets a second writer in unserialised; each write checks that the lock file is still the
one opened and raises :class:`~scrapy_simhash.errors.StoreError` (``lock_file``) when it is not.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import hashlib
import itertools
import json
import logging
import os
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, cast

import lmdb
import numpy as np

from scrapy_simhash import defaults
from scrapy_simhash.errors import NotAnIndexError, SimhashIndexError, StoreError, StoreFullError
from scrapy_simhash.store.base import (
    MAX_DUE,
    FingerprintStore,
    Hit,
    Probe,
    TableLayout,
    due_ms,
    hit_order,
    verify,
    wide_found,
)
from scrapy_simhash.store.hot import COMPACT, HOT, KEYED_SIZE, compact, expand, expand_one, hot_of, keyed, unkeyed
from scrapy_simhash.store.record import last_fp_span

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from scrapy.crawler import Crawler
    from typing_extensions import Self

logger = logging.getLogger(__name__)

#: Files LMDB keeps in an environment directory.
_LMDB_FILES = frozenset({"data.mdb", "lock.mdb"})
#: ``MDB_meta.mm_magic`` and ``mm_version`` (LMDB 0.9 data format).
_LMDB_MAGIC = 0xBEEFC0DE
_LMDB_VERSION = 1
_META_KEY = b"index"
#: A record's due times in its entry (indexed, actual): ``_NO_DUE`` for none.
_NO_DUE = b"\xff" * 8
#: An entry's id (``records``' key): 4 bytes, big-endian, given in order.
_ID = struct.Struct(">I")
#: The longest key prefix that ``prefixes`` names, and the most a process keeps in memory.
_MAX_PREFIX, _MAX_CACHED = 256, 1 << 16
_MAX_ID = (1 << 32) - 1
#: An entry's flags (its first byte): what it holds; ``_DUE``: its indexed due time follows,
#: ``_MOVED``: and its due time, which is another (else the same, or none without ``_DUE``).
#: ``_PREFIXED``: the key's first part (up to its host's ``/``) is named by its code in ``prefixes``;
#: ``_SHARED``: the fingerprint (``_HAS_FP``) is the record's last one, read there (not stored twice).
_HAS_FP, _HAS_RECORD, _HAS_EVIDENCE, _HAS_SKETCH, _DUE, _MOVED, _PREFIXED, _SHARED = 1, 2, 4, 8, 16, 32, 64, 128
_HOLDS = _HAS_FP | _HAS_RECORD | _HAS_EVIDENCE
#: A due-index entry: indexed due (8 bytes), then the id (4).
_DUE_ID_END = 12
_FLAGS_AT = 0
#: LMDB's page header (an overflow page's too) and a node's header plus its slot in a page.
_PAGE_HEAD, _NODE_HEAD = 16, 10
HOT_SIZE, _COMPACT_SIZE = HOT.itemsize, COMPACT.itemsize

#: A table's bucket holds the fingerprints of ``2 ** _FINE`` table keys (the key's low bits
#: dropped, down to ``_BUCKET_BITS`` bits): fuller buckets, fewer LMDB nodes (10 bytes each, and
#: their pages' slack); a lookup keeps those of its own table key (:meth:`LmdbStore._fine`).
_BUCKET_BITS = 13
#: ``t00``'s buckets hold each fingerprint's entry id beside it (4 bytes, after the fingerprints).
_ID_SIZE = 4

#: Stale due-index entries moved per write transaction by ``records_due``.
_REKEY_BATCH = 1000
#: (``dues``, ``keys``, ``aliases``, ``fps``: tables of an earlier version's index, which only ``destroy`` meets.)
_OUR_DBS = frozenset(
    {
        b"meta",
        b"fps",
        b"ids",
        b"keys",
        b"records",
        b"aliases",
        b"dues",
        b"due_index",
        b"evidence",
        b"evidence_tail",
        b"sketches",
        b"prefixes",
        b"aux",
    }
)
#: Sub-databases: the most tables (index.MAX_TABLES) plus ours.
_MAX_DBS = 100 + len(_OUR_DBS)
INDEX_FORMAT = "scrapy-simhash-index"
#: Grow the map before a write transaction when it is fuller than this.
_GROW_AT = 0.8
#: How long an open waits for a data.mdb that another process is creating (zero length).
_CREATE_WAIT_S = 1.0
#: Linux: every this many transactions of a process, the map's page table entries are dropped
#: (``madvise(MADV_DONTNEED)``; the pages stay in the kernel's file cache), so that the resident
#: file pages are those the last transactions read (the evidence among them), not all the file
#: ever touched: a page fault maps up to 16 cached neighbours of the page, of any sub-database, or
#: the whole large folio it lies in, and neither ``readahead=False`` nor ``MADV_RANDOM`` stops
#: that (a trim after each evidence read instead costs more page faults for the same resident
#: size: ``benchmarks/scale/decisions.py``). See :meth:`_SharedEnv.trim`.
_TRIM_EVERY = 64
_MADV_DONTNEED = 4


def _madvise() -> Callable[[int, int, int], int] | None:
    """libc's ``madvise`` (Linux), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # pragma: no cover
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    fn.restype = ctypes.c_int
    return fn


_MADVISE = _madvise()


class _SharedEnv:
    """One ``lmdb.Environment`` per directory and process (LMDB forbids opening it twice).

    ``lock`` serialises the transactions of every store object on it: the map may only be resized
    while no transaction of this process is active. ``inode``: that of ``data.mdb`` (Linux)."""

    def __init__(self, env: lmdb.Environment, key: str, lock_fd: int | None, inode: int | None = None) -> None:
        self.env = env
        self.key = key
        self.refs = 1
        self.pid = os.getpid()
        self.dbs: dict[bytes, Any] = {}
        self.psize = env.stat()["psize"]
        self.lock = threading.RLock()
        #: lock.mdb, kept open to notice its deletion (``st_nlink`` drops to 0); closed only
        #: after the environment (closing a descriptor drops the process's fcntl locks on it).
        self.lock_fd = lock_fd
        self.inode = inode
        self.sync = True
        self.txns = 0  # since the last trim
        #: Where the map of ``data.mdb`` lies in this process (start, end), read from
        #: ``/proc/self/maps``; ``None``: not read yet, or the map was remapped (:meth:`resize`).
        self.span: tuple[int, int] | None = None
        #: Key prefixes (``prefixes``) this process has read or written and seen committed: by
        #: code, and codes by prefix (a code is never given twice, nor changed).
        self.prefixes: dict[int, bytes] = {}
        self.codes: dict[bytes, int] = {}

    def learn(self, code: int, prefix: bytes) -> None:
        """Keep the prefix ``code`` in memory (up to ``_MAX_CACHED``: then forget them all)."""
        if len(self.prefixes) >= _MAX_CACHED:
            self.prefixes.clear()
            self.codes.clear()
        self.prefixes[code] = prefix
        self.codes[prefix] = code

    def resize(self, size: int) -> None:
        """``set_mapsize(size)``: LMDB maps the file again, maybe elsewhere."""
        self.span = None
        self.env.set_mapsize(size)

    def map_span(self) -> tuple[int, int] | None:
        """(start, end) of this process's map of ``data.mdb`` (Linux), else ``None``."""
        if self.span is None and self.inode is not None:
            inode = str(self.inode)
            with open("/proc/self/maps") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    if (
                        len(fields) == 6
                        and fields[4] == inode
                        and fields[2] == "00000000"
                        and fields[5].rstrip("\n").endswith("data.mdb")
                    ):
                        start, _, end = fields[0].partition("-")
                        self.span = int(start, 16), int(end, 16)
                        break
        return self.span

    def lock_file_gone(self) -> bool:
        return self.lock_fd is not None and os.fstat(self.lock_fd).st_nlink == 0

    def tick(self) -> None:
        """Count a finished transaction; trim the map every ``_TRIM_EVERY``."""
        self.txns += 1
        if self.txns >= _TRIM_EVERY:
            self.trim()

    def trim(self) -> None:
        """Unmap the pages of ``data.mdb`` this process has mapped in (Linux; elsewhere nothing).
        Safe at any time: LMDB maps the file read-only and shared (never ``writemap``), so a page
        read again is mapped again from the kernel's file cache, unchanged."""
        self.txns = 0
        span = self.map_span() if _MADVISE is not None else None
        if span is not None and _MADVISE is not None:
            _MADVISE(span[0], span[1] - span[0], _MADV_DONTNEED)

    def close(self) -> None:
        try:
            self.env.close()
        finally:
            if self.lock_fd is not None:
                os.close(self.lock_fd)
                self.lock_fd = None


_ENVS: dict[str, _SharedEnv] = {}
_ENVS_LOCK = threading.Lock()


def _not_an_index(path: str, reason: str) -> NotAnIndexError:
    return NotAnIndexError(
        f"{path} is not a scrapy-simhash index ({reason}). It was left untouched: "
        f"use another directory (SIMHASH_DIR), or move or delete it yourself if you no longer need it."
    )


def _damaged(path: str, reason: str) -> NotAnIndexError:
    """An LMDB file that cannot be read whole (truncated, damaged pages): perhaps an index, unreadable."""
    return NotAnIndexError(
        f"{path} holds a damaged LMDB database that cannot be read as a scrapy-simhash index ({reason}). "
        f"It was left untouched: restore the index from a copy, or delete the directory yourself to start "
        f"a new index there."
    )


def _kind(exc: BaseException) -> str:
    if isinstance(exc, lmdb.DiskError):
        return "disk_full"
    if isinstance(exc, (lmdb.ReadonlyError, PermissionError)):
        return "permission"
    corrupt = (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError, lmdb.VersionMismatchError)
    if isinstance(exc, (*corrupt, lmdb.BadTxnError)):  # a transaction goes bad after such an error in it
        return "corrupt"
    text = str(exc).lower()
    if "no space" in text or "disk full" in text:
        return "disk_full"
    if "permission denied" in text or "read-only" in text:
        return "permission"
    return "io"


def _open_lock_file(path: str) -> int | None:
    try:
        return os.open(os.path.join(path, "lock.mdb"), os.O_RDONLY)
    except OSError:
        return None


def _data_inode(path: str) -> int | None:
    """The inode of ``data.mdb`` (Linux, where the map is trimmed: how it is found in
    ``/proc/self/maps``)."""
    if _MADVISE is None:
        return None
    try:
        return os.stat(os.path.join(path, "data.mdb")).st_ino
    except OSError:  # pragma: no cover
        return None


def _check_data_file(path: str, data: str) -> bool:
    """Check ``data.mdb`` against its own meta pages before anything maps it: ``False`` when it is
    still being created (shorter than its two meta pages, lock file present), else raise
    :class:`NotAnIndexError` for a file that is not a whole LMDB environment."""
    with open(data, "rb") as f:
        head = f.read(160)
        size = os.fstat(f.fileno()).st_size
        if len(head) < 48:
            if os.path.exists(os.path.join(path, "lock.mdb")):
                return False
            raise _damaged(path, f"data.mdb is too short to be an LMDB database ({size} bytes)")
        magic, version = struct.unpack_from("<II", head, 16)
        (psize,) = struct.unpack_from("<I", head, 40)
        if magic != _LMDB_MAGIC or version != _LMDB_VERSION or psize < 512 or psize & (psize - 1):
            raise _not_an_index(path, "data.mdb is not an LMDB database")
        if size < 2 * psize:
            if os.path.exists(os.path.join(path, "lock.mdb")):
                return False
            raise _damaged(path, f"data.mdb is truncated ({size} bytes, shorter than its meta pages)")
        f.seek(psize)
        second = f.read(160)
    metas = []
    for page in (head, second):
        magic, version = struct.unpack_from("<II", page, 16)
        if magic == _LMDB_MAGIC and version == _LMDB_VERSION:
            last_pg, txnid = struct.unpack_from("<QQ", page, 136)
            metas.append((txnid, last_pg))
    if not metas:
        raise _damaged(path, "data.mdb has no valid LMDB meta page")
    _, last_pg = max(metas)
    need = (last_pg + 1) * psize
    if os.path.getsize(data) < need:  # a file only grows: re-read the size after the meta pages
        raise _damaged(path, f"data.mdb is truncated ({size} bytes; its meta page counts {need})")
    return True


def inspect_dir(path: str) -> tuple[str, bytes | None]:
    """Look at ``path`` without modifying it: ``("missing" | "empty" | "index", meta)``.

    Raises :class:`~scrapy_simhash.errors.NotAnIndexError` for anything else: a file, a directory
    with other files, a ``data.mdb`` that is not a whole LMDB environment (foreign, truncated, zero
    length), an LMDB environment without our metadata.
    """
    if not os.path.lexists(path):
        return "missing", None
    if not os.path.isdir(path):
        raise _not_an_index(path, "it is not a directory")
    names = set(os.listdir(path))
    others = sorted(names - _LMDB_FILES)
    if others:
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        raise _not_an_index(path, f"the directory holds other files: {shown}")
    if "data.mdb" not in names:
        return "empty", None
    shared = _ENVS.get(os.path.realpath(path))
    if shared is not None and shared.pid == os.getpid():
        with shared.lock, shared.env.begin() as txn:
            meta = _read_meta_txn(shared.env, txn, path)
            return ("empty" if meta is None else "index"), meta
    data = os.path.join(path, "data.mdb")
    deadline = time.monotonic() + _CREATE_WAIT_S
    try:
        while not _check_data_file(path, data):
            if time.monotonic() > deadline:
                raise _damaged(path, f"data.mdb is incomplete ({os.path.getsize(data)} bytes)")
            time.sleep(0.02)
    except PermissionError as exc:
        raise StoreError(path, "permission", str(exc), "open") from exc
    return _read_meta_unlocked(path, data)


def _read_meta_unlocked(path: str, data: str) -> tuple[str, bytes | None]:
    """Read the metadata read-only and without the lock file (nothing in the directory is
    modified). A writer in another process may be growing or rewriting the file meanwhile:
    errors are retried, and only a persistent one means the file is not an index."""
    error: BaseException | None = None
    for attempt in range(10):
        if attempt:
            time.sleep(0.01 * attempt)
        try:
            map_size = max(os.path.getsize(data) * 2, 1 << 20)
            env = lmdb.open(path, readonly=True, lock=False, create=False, max_dbs=_MAX_DBS, map_size=map_size)
        except lmdb.Error as exc:
            error = exc
            continue
        try:
            with env.begin() as txn:
                meta = _read_meta_txn(env, txn, path)
                return ("empty" if meta is None else "index"), meta
        except lmdb.Error as exc:
            error = exc
        finally:
            env.close()
    if isinstance(error, lmdb.ReadonlyError):
        raise StoreError(path, "permission", str(error), "open")
    kind = _kind(error) if error is not None else "corrupt"
    if kind in ("permission", "disk_full") or "input/output error" in str(error).lower():
        # The file passed the meta-page checks: the system could not read it, which is no sign
        # that it is not an index (deleting it would be the wrong advice).
        raise StoreError(path, kind, str(error), "open")
    raise _damaged(path, f"data.mdb cannot be read: {error}")


def _is_our_db_name(name: bytes) -> bool:
    return name in _OUR_DBS or (len(name) == 3 and name[:1] == b"t" and name[1:].isdigit())


def _read_meta_txn(env: lmdb.Environment, txn: Any, path: str) -> bytes | None:
    value = None
    if txn.get(b"meta") is not None:
        value = txn.get(_META_KEY, db=env.open_db(b"meta", txn=txn, create=False))
    if value is None:
        # No metadata: an index another process is creating right now has only our (empty)
        # sub-databases; anything else is somebody else's environment.
        names = list(txn.cursor().iternext(keys=True, values=False))
        if all(_is_our_db_name(n) for n in names) and all(
            txn.stat(env.open_db(n, txn=txn, create=False))["entries"] == 0 for n in names
        ):
            return None
        raise _not_an_index(path, "an LMDB environment without scrapy-simhash metadata")
    try:
        meta = json.loads(value)
        ok = isinstance(meta, dict) and meta.get("format") == INDEX_FORMAT
    except ValueError:
        ok = False
    if not ok:
        raise _damaged(path, "its metadata record is corrupt")
    return bytes(value)


def destroy_dir(path: str) -> bool:
    """Delete the index directory ``path`` if it is a scrapy-simhash index (or empty).

    ``False`` if there was nothing; :class:`~scrapy_simhash.errors.NotAnIndexError` (and nothing
    deleted) if it holds anything else.
    """
    state, _ = inspect_dir(path)
    if state == "missing":
        return False
    shared = _ENVS.get(os.path.realpath(path))
    if shared is not None and shared.pid == os.getpid():
        raise SimhashIndexError(f"Cannot delete the index at {path}: it is open in this process; close it first")
    if open_elsewhere(path):
        raise SimhashIndexError(
            f"Cannot delete the index at {path}: it is open in another process (a crawl?); stop it first. "
            "Nothing was deleted"
        )
    for name in _LMDB_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(path, name))
    os.rmdir(path)
    return True


def open_elsewhere(path: str | os.PathLike[str]) -> bool:
    """Whether another process has the LMDB index at ``path`` open: each one holds a shared lock
    on the first byte of its ``lock.mdb``, which an exclusive lock then cannot take."""
    try:
        import fcntl
    except ImportError:  # Windows: LMDB locks otherwise there; not checked
        return False
    try:
        fd = os.open(os.path.join(path, "lock.mdb"), os.O_RDWR)
    except OSError:
        return False
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0, os.SEEK_SET)
        except OSError:
            return True
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0, os.SEEK_SET)
        return False
    finally:
        os.close(fd)


def _digest(key: bytes) -> bytes:
    """What ``ids`` files a key under: its BLAKE2b-32 digest."""
    return hashlib.blake2b(key, digest_size=4).digest()


def _fp_at(flags: int) -> int:
    """Where the fingerprint (or what follows it) lies in an entry with ``flags``."""
    return 1 + (8 if flags & _DUE else 0) + (8 if flags & _MOVED else 0)


def _dues(entry: bytes) -> tuple[bytes, bytes]:
    """An entry's due times: (indexed, due), ``_NO_DUE`` for none."""
    flags = entry[0]
    if not flags & _DUE:
        return _NO_DUE, _NO_DUE
    return entry[1:9], entry[9:17] if flags & _MOVED else entry[1:9]


def _fp_size(flags: int, vw: int) -> int:
    """The bytes of the fingerprint stored before the key in an entry with ``flags``."""
    return vw if flags & (_HAS_FP | _SHARED) == _HAS_FP else 0


def _fp_of(entry: bytes, vw: int) -> bytes:
    """An entry's fingerprint (``b""``: none)."""
    flags = entry[0]
    if not flags & _HAS_FP:
        return b""
    if flags & _SHARED:
        span = last_fp_span(entry, _key_at(entry, vw)[2])
        if span is None:
            raise lmdb.CorruptedError("an entry's fingerprint is its record's, which holds none")
        return entry[span[0] : span[1]]
    at = _fp_at(flags)
    return entry[at : at + vw]


def _key_at(entry: bytes, vw: int) -> tuple[int, int, int]:
    """Where the key lies in an entry (``vw``: the fingerprints' width): ``(code, start, end)``,
    its prefix's code (``-1``: none, the whole key at ``start:end``) and where the rest lies."""
    flags = entry[0]
    at = _fp_at(flags) + _fp_size(flags, vw)
    code = -1
    if flags & _PREFIXED:
        code, shift = 0, 0
        while True:
            byte = entry[at]
            at += 1
            code |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
    n = entry[at]
    if n < 255:
        return code, at + 1, at + 1 + n
    n = int.from_bytes(entry[at + 1 : at + 5], "little")
    return code, at + 5, at + 5 + n


def _field_of(entry: bytes, vw: int) -> bytes:
    """An entry's key as it stores it (its prefix's code, its length and its rest)."""
    flags = entry[0]
    return entry[_fp_at(flags) + _fp_size(flags, vw) : _key_at(entry, vw)[2]]


def _field(rest: bytes, code: int) -> bytes:
    """A key as an entry stores it: ``code`` (a varint, ``-1``: none, ``rest`` is the whole key),
    the length of ``rest`` (1 byte, or ``0xFF`` and 4 bytes little-endian) and ``rest``."""
    head = bytearray()
    if code >= 0:
        while code >= 0x80:
            head.append(code & 0x7F | 0x80)
            code >>= 7
        head.append(code)
    n = len(rest)
    head += bytes((n,)) if n < 255 else b"\xff" + n.to_bytes(4, "little")
    return bytes(head) + rest


def _record_of(entry: bytes, vw: int) -> bytes:
    """The record an entry holds (what follows its key)."""
    return entry[_key_at(entry, vw)[2] :]


def _url_prefix(key: bytes) -> bytes | None:
    """What ``prefixes`` names of a key: up to the ``/`` after its host (``None``: no such part)."""
    at = key.find(b"://")
    end = key.find(b"/", at + 3) if at > 0 else -1
    return key[: end + 1] if 0 < end < _MAX_PREFIX else None


def _head(flags: int, indexed: bytes, due: bytes) -> bytes:
    """An entry's flags (``_DUE`` and ``_MOVED`` set here) and due times (indexed, actual)."""
    flags &= ~(_DUE | _MOVED)
    if indexed == _NO_DUE:
        return bytes((flags,))
    if due == indexed:
        return bytes((flags | _DUE,)) + indexed
    return bytes((flags | _DUE | _MOVED,)) + indexed + due


def _entry(indexed: bytes, due: bytes, flags: int, fp: bytes, field: bytes, record: bytes) -> bytes:
    """An entry: its flags and due times (:func:`_head`), ``fp`` (with ``_HAS_FP``, else
    ``b""``; with ``_SHARED`` instead where it is the record's last fingerprint), the key
    (``field``: :func:`_field`; with ``_PREFIXED`` where it has a code), then the record."""
    flags &= ~_SHARED
    if fp and record:
        span = last_fp_span(record)
        if span is not None and record[span[0] : span[1]] == fp:
            flags |= _SHARED
            fp = b""
    return b"".join((_head(flags, indexed, due), fp, field, record))


def _with_fp(entry: bytes, fp: bytes | None, vw: int) -> bytes:
    """``entry`` with the fingerprint ``fp`` (``None``: without one)."""
    flags = entry[0]
    indexed, due = _dues(entry)
    flags = flags | _HAS_FP if fp is not None else flags & ~_HAS_FP
    return _entry(indexed, due, flags, fp or b"", _field_of(entry, vw), _record_of(entry, vw))


def _with_dues(entry: bytes, indexed: bytes, due: bytes) -> bytes:
    """``entry`` with the due times ``indexed`` and ``due``."""
    return _head(entry[0], indexed, due) + entry[_fp_at(entry[0]) :]


class _EntryKeys(list):  # type: ignore[type-arg]
    """The keys of a page of the due index (what :meth:`LmdbStore.due_states` returns), each read
    from its record entry, by id, the first time it is asked for (a read transaction of its
    own): a selection asks for those of the rows that may enter it only. A list of ``bytes`` to
    its callers (indexing, slicing, iteration, ``len``)."""

    __slots__ = ("_entries", "_store")

    def __init__(self, store: LmdbStore, entries: bytes) -> None:
        """``entries``: the page's due-index keys (:data:`_DUE_ID_END` bytes each), one after the other."""
        super().__init__([None] * (len(entries) // _DUE_ID_END))
        self._store = store
        self._entries = entries

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        key = list.__getitem__(self, i)
        if key is None:
            at = (i if i >= 0 else i + len(self)) * _DUE_ID_END
            key = self._store._read(self._store._entry_key, self._entries[at + 8 : at + _DUE_ID_END])
            list.__setitem__(self, i, key)
        return key

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def records(self, rows: Sequence[int]) -> list[bytes | None]:
        """The records of the rows ``rows`` (``None``: deleted since its key was read), read by id
        in one read transaction with the keys not read yet (no lookup of a key)."""
        return self._store._read(self._load, rows)  # type: ignore[no-any-return]

    def load(self, rows: Sequence[int]) -> None:
        """Read the keys of the rows ``rows`` not read yet, in one read transaction."""
        missing = [i for i in rows if list.__getitem__(self, i) is None]
        if missing:
            self._store._read(self._load, missing, False)

    def _load(self, txn: Any, rows: Sequence[int], records: bool = True) -> list[bytes | None]:
        store, entries = self._store, self._entries
        out: list[bytes | None] = []
        for i in rows:
            at = i * _DUE_ID_END
            kid = entries[at + 8 : at + _DUE_ID_END]
            key = list.__getitem__(self, i)
            if key is None:
                entry = store._current(txn, kid)
                list.__setitem__(self, i, store._key(txn, entry))
            else:
                entry = txn.get(kid, db=store._records)
                if entry is None or not entry[_FLAGS_AT] & _HAS_RECORD or store._key(txn, entry) != key:
                    out.append(None)
                    continue
            if records:
                out.append(store._record(txn, kid, entry))
        return out

    def __eq__(self, other: object) -> bool:
        return list(iter(self)) == other

    __hash__ = None

    def __repr__(self) -> str:
        return repr(list(iter(self)))


class LmdbStore(FingerprintStore):
    """:class:`~scrapy_simhash.store.base.FingerprintStore` on LMDB (``py-lmdb``).

    :param path: index directory (created if missing).
    :param map_size: initial map size in bytes (`SIMHASH_LMDB_MAP_SIZE`); doubled whenever the
        map fills up, so a small value costs only a few re-tries.
    :param durable: fsync every commit (`SIMHASH_DURABLE`). ``False``: a commit survives a killed
        process but not a power cut; the environment is synced on :meth:`close`.
    :param readonly: open an existing index for reading only.
    :param max_readers: LMDB reader slots (threads and processes reading at once).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        map_size: int = defaults.SIMHASH_LMDB_MAP_SIZE,
        durable: bool = defaults.SIMHASH_DURABLE,
        readonly: bool = False,
        max_readers: int = 126,
    ) -> None:
        if isinstance(map_size, bool) or not isinstance(map_size, int) or map_size < 1 << 16:
            raise ValueError(f"map_size ({map_size!r}) is invalid: it must be an int >= 65536 (bytes)")
        self.path = os.fspath(path)
        self.map_size = map_size
        self.durable = bool(durable)
        self.readonly = bool(readonly)
        self.max_readers = max_readers
        self._shared: _SharedEnv | None = None
        self._env: lmdb.Environment | None = None
        self._layout: TableLayout | None = None
        self._tdbs: list[Any] = []
        self._txn: Any = None  # the group's write transaction
        self._holding = False  # this object holds the environment lock for a group
        #: Key prefixes given in the write transaction under way (:meth:`_new_field`).
        self._fresh: dict[int, bytes] = {}
        self._fresh_codes: dict[bytes, int] = {}
        self.grows = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler, path: Path) -> Self:
        """Reads `SIMHASH_LMDB_MAP_SIZE` and `SIMHASH_DURABLE`."""
        from scrapy_simhash.setting_values import get_bool, get_int

        settings = crawler.settings
        return cls(
            path,
            map_size=get_int(settings, "SIMHASH_LMDB_MAP_SIZE", 1 << 20),
            durable=get_bool(settings, "SIMHASH_DURABLE"),
        )

    # -- life cycle ------------------------------------------------------------------------

    def open(self) -> bytes | None:
        path = self.path
        assert path is not None
        state, _ = inspect_dir(path)
        if self.readonly and state != "index":
            raise SimhashIndexError(f"Cannot open {path} read-only: there is no index there yet")
        if not self.readonly:
            try:
                os.makedirs(path, exist_ok=True)
            except OSError as exc:
                raise StoreError(path, _kind(exc), str(exc), "create") from exc
        key = os.path.realpath(path)
        with _ENVS_LOCK:
            shared = _ENVS.get(key)
            if shared is not None and shared.pid == os.getpid():
                shared.refs += 1
            else:
                env = self._open_env(path)
                shared = _ENVS[key] = _SharedEnv(env, key, _open_lock_file(path), _data_inode(path))
                shared.sync = self.durable
        self._shared = shared
        self._env = shared.env
        try:
            self._meta_db = self._db(b"meta")
            return cast("bytes | None", self._read(self._get_meta))
        except BaseException:
            self.close()
            raise

    def _open_env(self, path: str) -> Any:
        """``lmdb.open`` of ``path``, again when another process grew the map between LMDB's read
        of its size and the open's first transaction (``MDB_MAP_RESIZED``: the next open adopts
        the new size); :class:`StoreError` for any other failure."""
        for _ in range(100):
            try:
                return lmdb.open(
                    path,
                    map_size=self.map_size,
                    subdir=True,
                    readonly=self.readonly,
                    sync=self.durable,
                    metasync=self.durable,
                    max_dbs=_MAX_DBS,
                    max_readers=self.max_readers,
                    lock=True,
                )
            except lmdb.MapResizedError:
                continue
            except lmdb.Error as exc:
                raise StoreError(path, _kind(exc), str(exc), "open") from exc
        raise StoreError(path, "io", "the map kept changing size", "open")  # pragma: no cover

    def _get_meta(self, txn: Any) -> bytes | None:
        value = txn.get(_META_KEY, db=self._meta_db)
        return None if value is None else bytes(value)

    def _db(self, name: bytes, **flags: Any) -> Any:
        shared, env = self._shared, self._env
        assert shared is not None
        assert env is not None
        with shared.lock:
            for _ in range(100):
                if name in shared.dbs:
                    return shared.dbs[name]
                try:
                    shared.dbs[name] = env.open_db(name, create=not self.readonly, **flags)
                except lmdb.MapResizedError:
                    shared.resize(0)  # another process grew the map
                except lmdb.MapFullError:
                    self._grow()
                except lmdb.NotFoundError:
                    # read-only and made by an older version: an empty stand-in
                    shared.dbs[name] = None
                except lmdb.Error as exc:
                    raise StoreError(self.path, _kind(exc), str(exc), "open") from exc
            raise StoreError(self.path, "io", "the map kept changing size", "open")  # pragma: no cover

    def configure(self, layout: TableLayout) -> None:
        self._layout = layout
        try:
            self._tdbs = [self._db(b"t%02d" % t) for t in range(len(layout.tables))]
            self._vw = layout.value_width
            self._kw = layout.key_width
            self._shifts = [max(kb - _BUCKET_BITS, 0) if self._vw == 8 else 0 for kb in layout.key_bits]
            self._ids = self._db(b"ids", dupsort=True)
            self._records = self._db(b"records")
            self._due_index = self._db(b"due_index")
            self._evidence = self._db(b"evidence")
            self._evidence_tail = self._db(b"evidence_tail")
            self._sketches = self._db(b"sketches")
            self._prefixes = self._db(b"prefixes")
            from scrapy_simhash.store.record import split_sketch

            self._split = split_sketch
            self._aux = self._db(b"aux")
        except BaseException:
            self.close()
            raise

    def destroy(self) -> bool:
        assert self.path is not None
        return destroy_dir(self.path)

    def close(self) -> None:
        if self._txn is not None:
            self.abort()
        shared, self._shared = self._shared, None
        self._env = None
        if shared is None:
            return
        with _ENVS_LOCK:
            shared.refs -= 1
            if shared.refs > 0 or shared.pid != os.getpid():
                return
            _ENVS.pop(shared.key, None)
            try:
                if not self.durable and not self.readonly:
                    shared.env.sync(True)
            finally:
                shared.close()

    # -- transactions ----------------------------------------------------------------------

    def _check_env(self, write: bool) -> _SharedEnv:
        shared = self._shared
        if shared is None:
            raise SimhashIndexError(f"The index at {self.path} is closed")
        if shared.pid != os.getpid():
            raise SimhashIndexError(
                f"The index at {self.path} was opened in another process (before a fork); open it again in this process"
            )
        if write:
            if self.readonly:
                raise SimhashIndexError(f"The index at {self.path} was opened read-only")
            if shared.lock_file_gone():
                raise StoreError(self.path, "lock_file", "lock.mdb was deleted or replaced while open", "write")
        return shared

    def _begin(self, write: bool) -> Any:
        env = self._env
        assert env is not None
        if write:
            self._grow_if_needed()
        for _ in range(100):
            try:
                return env.begin(write=write)
            except lmdb.MapResizedError:
                assert self._shared is not None
                self._shared.resize(0)  # another process grew the map: adopt its size
        raise StoreError(self.path, "io", "the map keeps changing size", "start a transaction on")  # pragma: no cover

    def _read(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(txn, *args)`` in the group's transaction or in a read transaction of its own."""
        try:
            if self._txn is not None:
                return fn(self._txn, *args)
            shared = self._shared
            if shared is None or shared.pid != os.getpid():
                shared = self._check_env(False)  # raises
            with shared.lock:
                try:
                    txn = shared.env.begin()
                except lmdb.MapResizedError:
                    txn = self._begin(False)
                try:
                    return fn(txn, *args)
                finally:
                    txn.abort()
                    shared.tick()
        except lmdb.Error as exc:
            raise StoreError(self.path, _kind(exc), str(exc), "read") from exc

    def _write(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(txn, *args)`` in the group's transaction, or in a write transaction of its own
        (committed; replayed after growing the map when it fills up)."""
        if self._txn is not None:
            try:
                return fn(self._txn, *args)
            except lmdb.MapFullError:
                self._full()
            except lmdb.Error as exc:
                raise StoreError(self.path, _kind(exc), str(exc), "write to") from exc
        shared = self._check_env(True)
        with shared.lock:
            try:
                for _ in range(100):
                    txn = self._begin(True)
                    self._settle(False)
                    try:
                        result = fn(txn, *args)
                        txn.commit()
                        self._settle(True)
                        shared.tick()
                        self._synced()
                        return result
                    except lmdb.MapFullError:
                        _abort(txn)
                        self._settle(False)
                        self._grow()
                    except lmdb.MapResizedError:
                        _abort(txn)
                        self._settle(False)
                        shared.resize(0)
                    except BaseException:
                        _abort(txn)
                        self._settle(False)
                        raise
            except lmdb.Error as exc:
                raise StoreError(self.path, _kind(exc), str(exc), "write to") from exc
        raise StoreError(self.path, "io", "the map keeps changing size", "write to")  # pragma: no cover

    def _synced(self) -> None:
        if self.durable and self._shared is not None and not self._shared.sync:
            # The environment was opened non-durable by another index object of this process.
            self._shared.env.sync(True)

    def begin(self) -> None:
        shared = self._check_env(True)
        if not self._holding:
            shared.lock.acquire()
            self._holding = True
        try:
            self._settle(False)
            self._txn = self._begin(True)
        except lmdb.Error as exc:
            self._release()
            raise StoreError(self.path, _kind(exc), str(exc), "write to") from exc

    def commit(self) -> None:
        txn, self._txn = self._txn, None
        if txn is None:
            return
        try:
            txn.commit()
        except lmdb.MapFullError:
            self._txn = txn
            self._full()
        except lmdb.Error as exc:
            self._settle(False)
            self._release()
            raise StoreError(self.path, _kind(exc), str(exc), "write to") from exc
        self._settle(True)
        if self._shared is not None:
            self._shared.tick()
        self._release()
        self._synced()

    def abort(self) -> None:
        txn, self._txn = self._txn, None
        if txn is not None:
            _abort(txn)
        self._settle(False)
        self._release()

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            if self._shared is not None:
                self._shared.lock.release()

    def _full(self) -> None:
        """The group's transaction filled the map: abort it, grow, and have the index replay it
        (the environment lock stays held, so the replay's :meth:`begin` follows at once)."""
        txn, self._txn = self._txn, None
        if txn is not None:
            _abort(txn)
        self._settle(False)
        self._grow()
        raise StoreFullError(f"LMDB map of {self.path} was full; grown to {self.map_size} bytes")

    def _grow_if_needed(self) -> None:
        env = self._env
        assert env is not None
        assert self._shared is not None
        info = env.info()
        if (info["last_pgno"] + 1) * self._shared.psize > _GROW_AT * info["map_size"]:
            self._grow()

    def _grow(self) -> None:
        env = self._env
        assert env is not None
        before = env.info()["map_size"]
        assert self._shared is not None
        self._shared.resize(0)  # adopt a size another process may have set
        size = env.info()["map_size"]
        if size <= before:
            size = before * 2
            self._shared.resize(size)
        self.map_size = size
        self.grows += 1

    # -- metadata --------------------------------------------------------------------------

    def create_meta(self, value: bytes) -> bytes:
        def create(txn: Any) -> bytes:
            stored = txn.get(_META_KEY, db=self._meta_db)
            if stored is not None:
                return bytes(stored)
            txn.put(_META_KEY, value, db=self._meta_db)
            return value

        return self._write(create)  # type: ignore[no-any-return]

    def write_meta(self, value: bytes) -> None:
        self._write(lambda txn: txn.put(_META_KEY, value, db=self._meta_db))

    # -- entries ---------------------------------------------------------------------------

    def _key(self, txn: Any, entry: bytes) -> bytes:
        """The key of an entry, its prefix read by its code (kept in memory once read)."""
        code, start, end = _key_at(entry, self._vw)
        if code < 0:
            return entry[start:end]
        shared = self._shared
        assert shared is not None
        prefix = shared.prefixes.get(code)
        if prefix is None:
            prefix = self._fresh.get(code)
            if prefix is None:
                raw = txn.get(b"c" + code.to_bytes(4, "big"), db=self._prefixes)
                if raw is None:
                    raise lmdb.CorruptedError(f"an entry names the key prefix {code}, which the index does not hold")
                prefix = bytes(raw)
                shared.learn(code, prefix)
        return prefix + entry[start:end]

    def _new_field(self, txn: Any, key: bytes) -> tuple[int, bytes]:
        """How a new entry stores ``key``: ``(flag, field)``, its prefix named by a code where it
        has one (:func:`_url_prefix`; one given here when the prefix is new) with ``_PREFIXED``."""
        prefix = _url_prefix(key)
        if prefix is None:
            return 0, _field(key, -1)
        shared = self._shared
        assert shared is not None
        code = shared.codes.get(prefix)
        if code is None:
            code = self._fresh_codes.get(prefix)
        if code is None:
            raw = txn.get(b"p" + prefix, db=self._prefixes)
            if raw is not None:
                code = int.from_bytes(raw, "big")
                shared.learn(code, prefix)
            else:
                cur = txn.cursor(self._prefixes)
                last = cur.key() if (cur.prev() if cur.set_range(b"d") else cur.last()) else b""
                code = int.from_bytes(last[1:], "big") + 1 if last[:1] == b"c" else 0
                if code >= 1 << 32:  # pragma: no cover - four billion hosts
                    return 0, _field(key, -1)
                txn.put(b"p" + prefix, code.to_bytes(4, "big"), db=self._prefixes)
                txn.put(b"c" + code.to_bytes(4, "big"), prefix, db=self._prefixes)
                self._fresh[code] = prefix  # known to this process once the transaction commits
                self._fresh_codes[prefix] = code
        return _PREFIXED, _field(key[len(prefix) :], code)

    def _settle(self, committed: bool) -> None:
        """The prefixes given in the transaction that ended: kept in memory when it committed."""
        if self._fresh:
            if committed and self._shared is not None:
                for code, prefix in self._fresh.items():
                    self._shared.learn(code, prefix)
            self._fresh, self._fresh_codes = {}, {}

    def _find(self, txn: Any, key: bytes) -> tuple[bytes | None, bytes | None]:
        """``(id, entry)`` of ``key`` (``(None, None)``: it has none): the ``ids`` of its hash, the
        one whose entry holds ``key``."""
        digest = _digest(key)
        kid = txn.get(digest, db=self._ids)
        if kid is None:
            return None, None
        entry = txn.get(kid, db=self._records)
        if entry is not None and self._key(txn, entry) == key:
            return kid, entry
        cur = txn.cursor(self._ids)  # another key with the same hash: its other ids
        if cur.set_key(digest):
            for kid in cur.iternext_dup(keys=False, values=True):
                entry = txn.get(kid, db=self._records)
                if entry is not None and self._key(txn, entry) == key:
                    return kid, entry
        return None, None

    def _new_id(self, txn: Any, key: bytes) -> bytes:
        """A new entry's id for ``key`` (one more than the last: the entries' pages fill in order),
        filed under its hash in ``ids``."""
        cur = txn.cursor(self._records)
        nxt = _ID.unpack(cur.key())[0] + 1 if cur.last() else 0
        if nxt > _MAX_ID:
            raise StoreError(self.path, "full", f"every one of its {_MAX_ID + 1} entry ids is taken", "write to")
        kid = _ID.pack(nxt)
        txn.put(_digest(key), kid, db=self._ids, dupdata=True)
        return kid

    def _keep(self, txn: Any, kid: bytes, key: bytes, entry: bytes) -> None:
        """Write ``entry`` as ``kid``'s, or delete it with its id when it holds nothing any more."""
        if entry[_FLAGS_AT] & _HOLDS:
            txn.put(kid, entry, db=self._records)
        else:
            txn.delete(kid, db=self._records)
            txn.delete(_digest(key), kid, db=self._ids)

    def _walk(self, txn: Any, after: bytes | None, flag: int, limit: int) -> list[tuple[bytes, bytes, bytes]]:
        """Up to ``limit`` ``(key, id, entry)`` of the entries with ``flag`` after the key ``after``, in
        the order ``(hash of the key, key)`` (a key deleted since still places the walk)."""
        out: list[tuple[bytes, bytes, bytes]] = []
        if limit <= 0:
            return out
        cur = txn.cursor(self._ids)
        start = None if after is None else _digest(after)
        if not (cur.first() if start is None else cur.set_range(start)):
            return out
        get, records = txn.get, self._records
        group: list[tuple[bytes, bytes, bytes]] = []
        digest = None
        for h, kid in itertools.chain(cur.iternext(keys=True, values=True), [(None, None)]):
            if h != digest and group:
                for key, entry_id, entry in sorted(group) if len(group) > 1 else group:
                    if digest == start and after is not None and key <= after:
                        continue
                    out.append((key, entry_id, entry))
                group = []
                if len(out) >= limit:
                    break
            if h is None:
                break
            digest = h
            entry = get(kid, db=records)
            if entry is not None and entry[_FLAGS_AT] & flag:
                group.append((self._key(txn, entry), kid, entry))
        return out[:limit]

    # -- fingerprints ----------------------------------------------------------------------

    def _ckeys(self, tkeys: list[bytes]) -> list[bytes]:
        """The bucket keys of a fingerprint's table keys ``tkeys``: each without its low
        ``_shifts[t]`` bits."""
        kw = self._kw
        return [
            tk if s == 0 else (int.from_bytes(tk, "big") >> s).to_bytes(kw, "big") for tk, s in zip(tkeys, self._shifts)
        ]

    def _buckets(self, txn: Any, tkeys: list[bytes]) -> list[bytes | None]:
        """The bucket of each table key (``None``: empty)."""
        get = txn.get
        return [get(ck, db=db) for db, ck in zip(self._tdbs, self._ckeys(tkeys))]

    def _prints(self, t: int, blob: bytes) -> bytes:
        """A bucket's fingerprints (``t00``'s without the ids after them)."""
        if t:
            return blob
        vw = self._vw
        return blob[: len(blob) // (vw + _ID_SIZE) * vw]

    def _fine(self, t: int, blob: bytes, tkey: bytes) -> bytes:
        """The distinct fingerprints of table ``t``'s bucket ``blob`` whose table key is ``tkey``
        (what the bucket of that key alone held: the same ones, in the same order)."""
        fps, shift, vw = self._prints(t, blob), self._shifts[t], self._vw
        if len(fps) == vw or (t and not shift):
            return fps if not shift or self._layout.tkeys(fps)[t] == tkey else b""  # type: ignore[union-attr]
        if vw != 8:  # no shift: the ids' duplicates only
            rows = [fps[i : i + vw] for i in range(0, len(fps), vw)]
            return b"".join(f for i, f in enumerate(rows) if not i or rows[i - 1] != f)
        arr = np.frombuffer(fps, dtype=">u8")
        keep = np.ones(len(arr), dtype=bool)
        if shift:
            layout = self._layout
            assert layout is not None
            keep = layout.tkeys_np(arr.astype(np.uint64), t) == np.uint64(int.from_bytes(tkey, "big"))
        if not t:
            keep[1:] &= arr[1:] != arr[:-1]
        return arr[keep].tobytes()

    def _wide_fine(self, t: int, blobs: list[bytes], tkey: bytes) -> bytes:
        """The fingerprints of table ``t``'s buckets ``blobs`` (the own one first) whose table key
        is ``tkey`` or one bit away, in the order of those keys' buckets (``tkey``'s, then the key
        with bit 0 flipped, 1, ...): what a wide lookup of one bucket per key read."""
        if not self._shifts[t]:
            return b"".join(self._fine(t, b, tkey) for b in blobs)
        layout = self._layout
        assert layout is not None
        arr = np.frombuffer(b"".join([self._prints(t, b) for b in blobs]), dtype=">u8")
        if not t:
            keep = np.ones(len(arr), dtype=bool)
            keep[1:] = arr[1:] != arr[:-1]
            arr = arr[keep]
        d = layout.tkeys_np(arr.astype(np.uint64), t) ^ np.uint64(int.from_bytes(tkey, "big"))
        near = np.flatnonzero((d & (d - np.uint64(1))) == 0)  # d == 0 or one bit
        d = d[near]
        rank = np.where(d == 0, 0, np.log2(np.maximum(d, np.uint64(1)).astype(np.float64)).astype(np.int64) + 1)
        return arr[near[np.argsort(rank, kind="stable")]].tobytes()

    def _near(
        self,
        txn: Any,
        fp: bytes,
        k: int,
        limit: int,
        exclude: bytes | None,
        own: list[bytes | None],
        tkeys: list[bytes],
    ) -> Probe:
        """The lookup of ``fp`` in its buckets ``own`` (:meth:`_buckets` of its table keys ``tkeys``)."""
        raw = b"".join([self._fine(t, b, tk) for t, (b, tk) in enumerate(zip(own, tkeys)) if b])
        found, total = verify(raw, fp, k, limit)
        return Probe(self._hits(txn, found, exclude), total, 0 < limit < total)

    def _links(self, blob: bytes | None, fp: bytes) -> tuple[int, int, int]:
        """Where ``fp``'s ids lie in the ``t00`` bucket ``blob``: ``(n, lo, hi)``, the bucket's
        count and the rows ``lo:hi`` of ``fp`` (``lo == hi``: none, ``lo`` where it would go)."""
        if not blob:
            return 0, 0, 0
        vw = self._vw
        n = len(blob) // (vw + _ID_SIZE)
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[mid * vw : mid * vw + vw] < fp:
                lo = mid + 1
            else:
                hi = mid
        end = lo
        while end < n and blob[end * vw : end * vw + vw] == fp:
            end += 1
        return n, lo, end

    def _ids_of(self, txn: Any, fp: bytes) -> list[bytes]:
        """The ids of the entries that ``fp`` is filed for (``t00``'s bucket of it)."""
        layout = self._layout
        assert layout is not None
        blob = txn.get(self._ckeys(layout.tkeys(fp)[:1])[0], db=self._tdbs[0])
        n, lo, hi = self._links(blob, fp)
        at = n * self._vw
        return [blob[at + i * _ID_SIZE : at + i * _ID_SIZE + _ID_SIZE] for i in range(lo, hi)]

    def _hits(self, txn: Any, found: dict[bytes, int], exclude: bytes | None) -> list[Hit]:
        hits: list[Hit] = []
        if found:
            get, records = txn.get, self._records
            for other, distance in found.items():
                for kid in self._ids_of(txn, other):
                    entry = get(kid, db=records)
                    if entry is None:  # pragma: no cover - every filed id has its entry
                        continue
                    key = self._key(txn, entry)
                    if key != exclude:
                        hits.append(Hit(key, other, distance))
            if len(hits) > 1:
                hits.sort(key=hit_order)
        return hits

    def near(self, fp: bytes, k: int, limit: int, exclude: bytes | None = None) -> Probe:
        assert self._layout is not None
        return self._read(self._lookup, fp, k, limit, exclude, self._layout.tkeys(fp))  # type: ignore[no-any-return]

    def _lookup(self, txn: Any, fp: bytes, k: int, limit: int, exclude: bytes | None, tkeys: list[bytes]) -> Probe:
        return self._near(txn, fp, k, limit, exclude, self._buckets(txn, tkeys), tkeys)

    def _check_and_add(self, txn: Any, key: bytes, fp: bytes, k: int, limit: int, wide: int) -> Probe:
        layout = self._layout
        assert layout is not None
        tkeys = layout.tkeys(fp)
        own = self._buckets(txn, tkeys)  # read once: the lookup, the wide lookup and the add use them
        probe = self._near(txn, fp, k, limit, key, own, tkeys)
        if probe.hits:
            self._remove_one(txn, key)
            return probe
        if wide > k:
            parts: list[bytes] = []
            kw = self._kw
            for t, (db, blob, tkey, shift) in enumerate(zip(self._tdbs, own, tkeys, self._shifts)):
                ck = int.from_bytes(tkey, "big") >> shift
                around = [(ck ^ (1 << i)).to_bytes(kw, "big") for i in range(layout.key_bits[t] - shift)]
                blobs = [blob] if blob else []
                blobs += [b for _, b in txn.cursor(db).getmulti(around)]  # one call per table
                if blobs:
                    parts.append(self._wide_fine(t, blobs, tkey))
            found = wide_found(b"".join(parts), fp, k, wide, limit)
            probe = probe._replace(wide=tuple(self._hits(txn, found, key)))
        self._add(txn, key, fp, tkeys, own)
        return probe

    def check_and_add(self, key: bytes, fp: bytes, k: int, limit: int, wide: int = 0) -> Probe:
        return self._write(self._check_and_add, key, fp, k, limit, wide)  # type: ignore[no-any-return]

    def _bucket_insert(self, txn: Any, db: Any, ckey: bytes, fp: bytes, remove: bool = False, blob: Any = ...) -> None:
        """Add ``fp`` to (or ``remove`` it from) the bucket ``ckey`` of a table but ``t00``, whose
        value ``blob`` is read here unless given (as read in this transaction, unchanged since)."""
        if blob is ...:
            blob = txn.get(ckey, db=db)
        if blob is None:
            if not remove:
                txn.put(ckey, fp, db=db)
            return
        vw = len(fp)
        lo, hi = 0, len(blob) // vw
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[mid * vw : mid * vw + vw] < fp:
                lo = mid + 1
            else:
                hi = mid
        off = lo * vw
        found = blob[off : off + vw] == fp
        if remove and found:
            rest = blob[:off] + blob[off + vw :]
            if rest:
                txn.put(ckey, rest, db=db)
            else:
                txn.delete(ckey, db=db)
        elif not remove and not found:
            txn.put(ckey, blob[:off] + fp + blob[off:], db=db)

    def _link(self, txn: Any, ckey: bytes, fp: bytes, kid: bytes, remove: bool = False, blob: Any = ...) -> bool:
        """File the id ``kid`` under ``fp`` in ``t00``'s bucket ``ckey`` (or ``remove`` it);
        whether ``fp`` has other ids there."""
        db = self._tdbs[0]
        if blob is ...:
            blob = txn.get(ckey, db=db)
        n, lo, hi = self._links(blob, fp)
        vw = self._vw
        at = n * vw
        fps, ids = (bytes(blob[:at]), bytes(blob[at:])) if blob else (b"", b"")
        mine = [i for i in range(lo, hi) if ids[i * _ID_SIZE : i * _ID_SIZE + _ID_SIZE] == kid]
        if remove:
            if mine:
                i = mine[0]
                fps = fps[: i * vw] + fps[i * vw + vw :]
                ids = ids[: i * _ID_SIZE] + ids[i * _ID_SIZE + _ID_SIZE :]
                if fps:
                    txn.put(ckey, fps + ids, db=db)
                else:
                    txn.delete(ckey, db=db)
            return hi - lo - len(mine[:1]) > 0
        if not mine:
            i = lo
            while i < hi and ids[i * _ID_SIZE : i * _ID_SIZE + _ID_SIZE] < kid:
                i += 1
            txn.put(ckey, fps[: i * vw] + fp + fps[i * vw :] + ids[: i * _ID_SIZE] + kid + ids[i * _ID_SIZE :], db=db)
        return hi - lo - len(mine) > 0

    def _add(
        self, txn: Any, key: bytes, fp: bytes, tkeys: list[bytes] | None = None, own: list[Any] | None = None
    ) -> None:
        """File ``fp`` as ``key``'s fingerprint; ``tkeys`` and ``own``: its table keys and their
        buckets (:meth:`_buckets`), when the caller has them."""
        kid, entry = self._find(txn, key)
        if kid is None or entry is None:
            kid = self._new_id(txn, key)
            code, field = self._new_field(txn, key)
            entry = _entry(_NO_DUE, _NO_DUE, _HAS_FP | code, fp, field, b"")
        else:
            if entry[_FLAGS_AT] & _HAS_FP:
                old = _fp_of(entry, self._vw)
                if old == fp:
                    return
                self._unfile(txn, kid, old)
                own = None  # the old fingerprint may have left one of those buckets
            entry = _with_fp(entry, fp, self._vw)
        txn.put(kid, entry, db=self._records)
        assert self._layout is not None
        ckeys = self._ckeys(tkeys or self._layout.tkeys(fp))
        blobs = [...] * len(ckeys) if own is None else own
        if not self._link(txn, ckeys[0], fp, kid, blob=blobs[0]):
            for db, ckey, blob in zip(self._tdbs[1:], ckeys[1:], blobs[1:]):
                self._bucket_insert(txn, db, ckey, fp, blob=blob)

    def _unfile(self, txn: Any, kid: bytes, fp: bytes) -> None:
        assert self._layout is not None
        ckeys = self._ckeys(self._layout.tkeys(fp))
        if not self._link(txn, ckeys[0], fp, kid, remove=True):
            for db, ckey in zip(self._tdbs[1:], ckeys[1:]):
                self._bucket_insert(txn, db, ckey, fp, remove=True)

    def _remove_one(self, txn: Any, key: bytes) -> bool:
        kid, entry = self._find(txn, key)
        if kid is None or entry is None or not entry[_FLAGS_AT] & _HAS_FP:
            return False
        self._unfile(txn, kid, _fp_of(entry, self._vw))
        self._keep(txn, kid, key, _with_fp(entry, None, self._vw))
        return True

    def _put(self, txn: Any, items: Sequence[tuple[bytes, bytes]]) -> None:
        pending = dict(items)
        # The emptiness check runs in the write transaction: a concurrent writer cannot slip in.
        if txn.stat(self._records)["entries"]:
            for key, fp in pending.items():
                self._add(txn, key, fp)
        else:
            self._bulk(txn, pending)

    def _bulk(self, txn: Any, pending: dict[bytes, bytes]) -> None:
        """Sorted bulk load into an empty index (append mode: no tree search)."""
        assert self._layout is not None
        layout = self._layout
        pairs = sorted(pending.items())
        del pending
        kids = [_ID.pack(i) for i in range(len(pairs))]
        if len(pairs) > _MAX_ID + 1:
            raise StoreError(self.path, "full", f"every one of its {_MAX_ID + 1} entry ids is taken", "write to")
        _putmulti(
            txn.cursor(self._records),
            [(kid, _entry(_NO_DUE, _NO_DUE, _HAS_FP, fp, _field(key, -1), b"")) for kid, (key, fp) in zip(kids, pairs)],
        )
        _putmulti(
            txn.cursor(self._ids), sorted((_digest(key), kid) for kid, (key, _) in zip(kids, pairs)), dupdata=True
        )
        kw, vw = self._kw, layout.value_width
        if vw != 8:
            links = sorted((fp, kid) for kid, (_, fp) in zip(kids, pairs))
            del pairs, kids
            for t, db in enumerate(self._tdbs):
                buckets: dict[bytes, list[tuple[bytes, bytes]]] = {}
                for fp, kid in links:
                    rows = buckets.setdefault(layout.tkeys(fp)[t], [])
                    if t == 0 or not rows or rows[-1][0] != fp:
                        rows.append((fp, kid))
                _putmulti(
                    txn.cursor(db),
                    [
                        (tk, b"".join(f for f, _ in rows) + (b"".join(i for _, i in rows) if t == 0 else b""))
                        for tk, rows in sorted(buckets.items())
                    ],
                )
            return
        # numpy sorts: a stable sort by fingerprint keeps each fingerprint's ids in order (as
        # they were given: the keys' order).
        arr = np.frombuffer(b"".join(fp for _, fp in pairs), dtype=">u8").astype(np.uint64)
        del pairs
        ids = np.arange(len(arr), dtype=">u4")
        for t, db in enumerate(self._tdbs):
            vals = arr if t == 0 else np.unique(arr)
            tk = layout.tkeys_np(vals, t) >> np.uint64(self._shifts[t])
            o = np.lexsort((ids, vals, tk)) if t == 0 else np.lexsort((vals, tk))
            tk, fps = tk[o], vals[o].astype(">u8").tobytes()
            id_bytes = ids[o].tobytes() if t == 0 else b""
            starts = np.concatenate(([0], np.flatnonzero(tk[1:] != tk[:-1]) + 1)).tolist() if len(tk) else []
            ends = [*starts[1:], len(tk)]
            tkb = tk[starts].astype(">u8").tobytes()
            groups = [
                (tkb[i * 8 + 8 - kw : i * 8 + 8], fps[s * 8 : e * 8] + id_bytes[s * _ID_SIZE : e * _ID_SIZE])
                for i, (s, e) in enumerate(zip(starts, ends))
            ]
            _putmulti(txn.cursor(db), groups)

    def put(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        if items:
            self._write(self._put, items)

    def remove(self, keys: Sequence[bytes]) -> int:
        return self._write(lambda txn: sum(self._remove_one(txn, key) for key in keys))  # type: ignore[no-any-return]

    def _fps_of(self, txn: Any, keys: Sequence[bytes]) -> list[bytes | None]:
        out: list[bytes | None] = []
        vw = self._vw
        for key in keys:
            _, entry = self._find(txn, key)
            out.append((_fp_of(entry, vw) or None) if entry is not None else None)
        return out

    def get(self, keys: Sequence[bytes]) -> list[bytes | None]:
        return self._read(self._fps_of, keys)  # type: ignore[no-any-return]

    def count(self) -> int:
        step = self._vw + _ID_SIZE
        return self._read(  # type: ignore[no-any-return]
            lambda txn: sum(len(blob) // step for blob in txn.cursor(self._tdbs[0]).iternext(keys=False, values=True))
        )

    def scan(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        def scan(txn: Any) -> list[tuple[bytes, bytes]]:
            vw = self._vw
            return [(key, _fp_of(entry, vw)) for key, _, entry in self._walk(txn, after, _HAS_FP, limit)]

        return self._read(scan)  # type: ignore[no-any-return]

    # -- records ---------------------------------------------------------------------------

    def _record(self, txn: Any, kid: bytes, entry: bytes) -> bytes:
        """The record in ``kid``'s entry, its change sketch joined back."""
        record = _record_of(entry, self._vw)
        if entry[_FLAGS_AT] & _HAS_SKETCH:
            sketch = txn.get(kid, db=self._sketches)
            if sketch is not None:
                return cast("bytes", record + sketch)
        return record

    def _record_values(self, txn: Any, keys: Sequence[bytes]) -> list[bytes | None]:
        out: list[bytes | None] = []
        for key in keys:
            kid, entry = self._find(txn, key)
            has = kid is not None and entry is not None and entry[_FLAGS_AT] & _HAS_RECORD
            out.append(self._record(txn, kid, entry) if has and kid is not None and entry is not None else None)
        return out

    def get_records(self, keys: Sequence[bytes]) -> list[bytes | None]:
        return self._read(self._record_values, keys)  # type: ignore[no-any-return]

    def _put_records(
        self, txn: Any, items: list[tuple[bytes, bytes, bytes]], evidence: Mapping[bytes, bytes | None]
    ) -> None:
        put, due_index, vw = txn.put, self._due_index, self._vw
        written: dict[bytes, bytes] = {}
        for key, value, due in items:
            kid, entry = self._find(txn, key)
            if kid is None or entry is None:
                kid, indexed, fp = self._new_id(txn, key), _NO_DUE, b""
                flags, field = self._new_field(txn, key)
            else:
                indexed, flags, fp = _dues(entry)[0], entry[_FLAGS_AT], _fp_of(entry, vw)
                field = _field_of(entry, vw)
            if key in evidence:
                flags = flags | _HAS_EVIDENCE if evidence[key] is not None else flags & ~_HAS_EVIDENCE
            rest, sketch = self._split(value)
            if sketch is not None:
                put(kid, sketch, db=self._sketches)
                flags |= _HAS_SKETCH
            elif flags & _HAS_SKETCH:
                txn.delete(kid, db=self._sketches)
                flags &= ~_HAS_SKETCH
            # The index entry is a lower bound: it moves only when the due time moves earlier
            # (or there is none); a record never due leaves the index.
            if due < indexed or (due == _NO_DUE and indexed != _NO_DUE):
                if indexed != _NO_DUE:
                    txn.delete(indexed + kid, db=due_index)
                indexed = due
            if due != _NO_DUE:  # the entry's value: the record's hot state (what a selection reads)
                ms = int.from_bytes(due, "big")
                put(indexed + kid, keyed(compact(hot_of(value, ms)), int.from_bytes(indexed, "big")), db=due_index)
            put(kid, _entry(indexed, due, flags | _HAS_RECORD, fp, field, rest), db=self._records)
            written[key] = kid
        psize = self._shared.psize if self._shared is not None else 4096
        for key, framed in evidence.items():
            kid = written.get(key)
            if kid is None:
                kid, entry = self._find(txn, key)
                if kid is None or entry is None:
                    if framed is None:
                        continue
                    kid = self._new_id(txn, key)
                    code, field = self._new_field(txn, key)
                    entry = _entry(_NO_DUE, _NO_DUE, code, b"", field, b"")
                flags = entry[_FLAGS_AT] | _HAS_EVIDENCE if framed is not None else entry[_FLAGS_AT] & ~_HAS_EVIDENCE
                self._keep(txn, kid, key, bytes((flags,)) + entry[1:])
            if framed is None:
                txn.delete(kid, db=self._evidence)
                txn.delete(kid, db=self._evidence_tail)
                continue
            # What fills whole overflow pages, and the rest beside it where it fits in a leaf
            # page's node (else one value, as it is).
            head = (len(framed) + _PAGE_HEAD) // psize * psize - _PAGE_HEAD
            if head > 0 and len(framed) - head <= (psize - _PAGE_HEAD) // 2 - _NODE_HEAD - len(kid):
                put(kid, framed[:head], db=self._evidence)
                if len(framed) > head:
                    put(kid, framed[head:], db=self._evidence_tail)
                    continue
            else:
                put(kid, framed, db=self._evidence)
            txn.delete(kid, db=self._evidence_tail)

    def put_records(
        self, items: Sequence[tuple[bytes, bytes, float | None]], evidence: Mapping[bytes, bytes | None] | None = None
    ) -> None:
        checked = [
            (key, value, _NO_DUE if due is None else due_ms(due).to_bytes(8, "big")) for key, value, due in items
        ]
        if checked or evidence:
            self._write(self._put_records, checked, evidence or {})

    def _evidence_values(self, txn: Any, keys: Sequence[bytes]) -> list[bytes | None]:
        get, db, tails = txn.get, self._evidence, self._evidence_tail
        out: list[bytes | None] = []
        for key in keys:
            kid, entry = self._find(txn, key)
            head = None if kid is None or entry is None or not entry[_FLAGS_AT] & _HAS_EVIDENCE else get(kid, db=db)
            tail = None if head is None else get(kid, db=tails)
            out.append(None if head is None else bytes(head) if tail is None else bytes(head) + bytes(tail))
        return out

    def get_evidence(self, keys: Sequence[bytes]) -> list[bytes | None]:
        return self._read(self._evidence_values, keys)  # type: ignore[no-any-return]

    def delete_records(self, keys: Sequence[bytes]) -> int:
        def delete(txn: Any) -> int:
            n = 0
            vw = self._vw
            for key in keys:
                kid, entry = self._find(txn, key)
                if kid is None or entry is None:
                    continue
                flags = entry[_FLAGS_AT]
                if flags & _HAS_EVIDENCE:
                    txn.delete(kid, db=self._evidence)
                    txn.delete(kid, db=self._evidence_tail)
                if flags & _HAS_RECORD:
                    n += 1
                if flags & _HAS_SKETCH:
                    txn.delete(kid, db=self._sketches)
                indexed = _dues(entry)[0]
                if indexed != _NO_DUE:
                    txn.delete(indexed + kid, db=self._due_index)
                kept = _entry(
                    _NO_DUE, _NO_DUE, flags & (_HAS_FP | _PREFIXED), _fp_of(entry, vw), _field_of(entry, vw), b""
                )
                self._keep(txn, kid, key, kept)
            return n

        return self._write(delete)  # type: ignore[no-any-return]

    def scan_records(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        def scan(txn: Any) -> list[tuple[bytes, bytes]]:
            return [
                (key, self._record(txn, entry_id, entry))
                for key, entry_id, entry in self._walk(txn, after, _HAS_RECORD, limit)
            ]

        return self._read(scan)  # type: ignore[no-any-return]

    def records_due(self, before: float, limit: int) -> list[tuple[bytes, float]]:
        end = due_ms(min(max(before, 0.0), MAX_DUE))
        if limit <= 0 or self._due_index is None:
            return []
        # Stale entries (the record's due time moved later) are checked against their record and
        # moved in batches, each in a write transaction of its own; the scan then starts again
        # (the batch moved only entries not yet returned). Read-only or in a group: no moves.
        rekey = not self.readonly and self._txn is None
        while True:
            found, stale, complete = self._read(self._due_scan, end, limit, _REKEY_BATCH if rekey else 2**62)
            if stale and rekey:
                self._write(self._rekey, stale)
            if complete:
                return cast("list[tuple[bytes, float]]", found)

    def _due_scan(
        self, txn: Any, end: int, limit: int, batch: int
    ) -> tuple[list[tuple[bytes, float]], list[bytes], bool]:
        """Scan the due index up to ``end``: ``(found, stale, complete)``, ``found`` the ``limit``
        earliest ``(key, due)`` of the records due (ties by key), ``stale`` the index entries
        whose record is due later (or never, or gone); ``complete`` False when the scan stopped at
        ``batch`` stale entries (``found`` is then partial)."""
        found: list[tuple[int, bytes]] = []
        stale: list[bytes] = []
        get, records = txn.get, self._records
        for entry in txn.cursor(self._due_index).iternext(keys=True, values=False):
            due = int.from_bytes(entry[:8], "big")
            # Every entry after this one is due at least at ``due``; so is its record.
            if due > end or (len(found) >= limit and found[-1][0] < due):
                break
            kid = entry[8:_DUE_ID_END]
            value = get(kid, db=records)
            indexed, moved = _dues(value) if value is not None else (_NO_DUE, _NO_DUE)
            if indexed == entry[:8] == moved:
                actual = due
            else:
                stale.append(bytes(entry))
                if len(stale) >= batch:
                    return [], stale, False
                if value is None or indexed != entry[:8] or moved == _NO_DUE:
                    continue
                actual = int.from_bytes(moved, "big")
                if actual > end:
                    continue
            bisect.insort(found, (actual, self._key(txn, value)))
            if len(found) > limit:
                found.pop()
        return [(key, due / 1000) for due, key in found], stale, True

    def _rekey(self, txn: Any, stale: list[bytes]) -> None:
        """Move stale due-index entries to their record's due time (checked again here: another
        writer may have moved them); drop those of no record."""
        for entry in stale:
            kid = entry[8:_DUE_ID_END]
            value = txn.get(kid, db=self._records)
            indexed, due = _dues(value) if value is not None else (_NO_DUE, _NO_DUE)
            if value is None or indexed != entry[:8]:
                txn.delete(entry, db=self._due_index)  # not this record's entry (none has it)
                continue
            if due != indexed:
                hot = txn.pop(entry, db=self._due_index) or b""
                if due != _NO_DUE:
                    # (a keyed hot state's due time is its old entry's: made whole, then keyed to its new one)
                    hot = keyed(unkeyed(hot, int.from_bytes(entry[:8], "big")), int.from_bytes(due, "big"))
                    txn.put(due + entry[8:], hot, db=self._due_index)
                txn.put(kid, _with_dues(value, due, due), db=self._records)

    def due_states(self, after: bytes | None, limit: int, keys: bool = True) -> tuple[bytes | None, list[bytes], bytes]:
        return self._read(self._due_states, after, limit, keys)  # type: ignore[no-any-return]

    def _due_states(
        self, txn: Any, after: bytes | None, limit: int, keys: bool
    ) -> tuple[bytes | None, list[bytes], bytes]:
        """The due index's entries after ``after``, their values the hot states, and the keys
        (with ``keys``: unread, :class:`_EntryKeys`); an entry of no current record (stale: its
        record moved later or is gone) is passed over, and one without a hot state (written
        before them) gets it from its record."""
        cursor = txn.cursor(self._due_index) if self._due_index is not None and limit > 0 else None
        if cursor is None or not (cursor.set_range(after) if after is not None else cursor.first()):
            return None, [], b""
        if after is not None and cursor.key() == after and not cursor.next():
            return None, [], b""
        if not keys:  # the hot states alone, and the last one's key as the cursor
            rows = list(itertools.islice(cursor.iternext(keys=True, values=True), limit))
            hots = expand([v for _, v in rows], b"".join([k for k, _ in rows]))
            if hots is not None:
                return (bytes(rows[-1][0]) if rows else None), [], hots
            cursor.set_range(after) if after is not None else cursor.first()
            if after is not None and cursor.key() == after:
                cursor.next()
        page = list(itertools.islice(cursor.iternext(keys=True, values=True), limit))
        if not page:
            return None, [], b""
        last = bytes(page[-1][0])
        hots = expand([hot for _, hot in page], b"".join([entry for entry, _ in page]))
        if hots is None:
            page = [(entry, made) for entry, hot in page if (made := self._hot(txn, entry, hot)) is not None]
            hots = b"".join([hot for _, hot in page])
        return last, _EntryKeys(self, b"".join([entry for entry, _ in page])) if keys else [], hots

    def _entry_key(self, txn: Any, kid: bytes) -> bytes:
        """The key of the record entry ``kid`` (:class:`_EntryKeys`)."""
        return self._key(txn, self._current(txn, kid))

    def _current(self, txn: Any, kid: bytes) -> bytes:
        """The record entry ``kid`` that a selection read in the due index (:class:`_EntryKeys`);
        :class:`StoreError` when it holds no record any more."""
        entry = txn.get(kid, db=self._records)
        if entry is None or not entry[_FLAGS_AT] & _HAS_RECORD:
            raise StoreError(
                self.path,
                "io",
                "a record that a recrawl selection had read was deleted while it ran: run the selection again",
                "read",
            )
        return entry  # type: ignore[no-any-return]

    def _hot(self, txn: Any, entry: bytes, hot: bytes, value: bytes | None = None) -> bytes | None:
        """The hot state of a due-index entry (its value, or made from its record ``value``, read
        here unless given; ``None``: the entry is no current record's)."""
        if len(hot) == HOT_SIZE:
            return hot
        if len(hot) in (_COMPACT_SIZE, KEYED_SIZE):
            return expand_one(unkeyed(hot, int.from_bytes(entry[:8], "big")))
        if value is None:
            value = txn.get(entry[8:_DUE_ID_END], db=self._records)
        if value is None or not value[_FLAGS_AT] & _HAS_RECORD:
            return None
        indexed, due = _dues(value)
        if indexed != entry[:8] or due == _NO_DUE:
            return None
        return hot_of(self._record(txn, entry[8:_DUE_ID_END], value), int.from_bytes(due, "big"))

    # -- aux -------------------------------------------------------------------------------

    def get_aux(self, names: Sequence[str]) -> list[bytes | None]:
        def read(txn: Any) -> list[bytes | None]:
            return [None if (v := txn.get(name.encode(), db=self._aux)) is None else bytes(v) for name in names]

        return self._read(read)  # type: ignore[no-any-return]

    def put_aux(self, items: Mapping[str, bytes | None]) -> None:
        def write(txn: Any) -> None:
            for name, value in items.items():
                if value is None:
                    txn.delete(name.encode(), db=self._aux)
                else:
                    txn.put(name.encode(), bytes(value), db=self._aux)

        self._write(write)

    def check(self) -> None:
        """Walk every table of the file, keys and values, in one read transaction (about 0.15 s
        per 100,000 pages): LMDB reports a damaged page as it meets it."""

        env = self._env
        assert env is not None

        def walk(txn: Any) -> None:
            for name in [bytes(name) for name, _ in txn.cursor() if _is_our_db_name(bytes(name))]:
                for _key, _value in txn.cursor(env.open_db(name, txn=txn, create=False)):
                    pass

        self._read(walk)

    def stats(self) -> dict[str, Any]:
        env = self._env
        shared = self._shared
        if env is None or self.path is None or shared is None:
            return {}
        out: dict[str, int] = {"map_size": env.info()["map_size"], "map_grows": self.grows}
        with contextlib.suppress(OSError):
            out["file_size"] = os.path.getsize(os.path.join(self.path, "data.mdb"))
        psize = shared.psize
        try:
            with shared.lock, env.begin() as txn:
                for name, db in shared.dbs.items():
                    if db is None:
                        continue
                    st = txn.stat(db)
                    pages = st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]
                    label = "tables" if name[:1] == b"t" and name[1:].isdigit() else name.decode()
                    out[f"{label}_bytes"] = out.get(f"{label}_bytes", 0) + pages * psize
        except lmdb.Error as exc:
            raise StoreError(self.path, _kind(exc), str(exc), "read") from exc
        return out


def _abort(txn: Any) -> None:
    with contextlib.suppress(lmdb.Error):  # already ended by LMDB
        txn.abort()


def _putmulti(cur: Any, pairs: list[tuple[bytes, bytes]], dupdata: bool = False) -> None:
    """Append ``pairs`` (sorted) to an empty sub-database; py-lmdb skips, silently, pairs that
    do not sort after the last one in append mode (equal keys of a ``dupsort`` database): those
    are redone the ordinary way."""
    consumed, added = cur.putmulti(pairs, dupdata=dupdata, append=True)
    if added < consumed:
        cur.putmulti(pairs, dupdata=dupdata, append=False)
