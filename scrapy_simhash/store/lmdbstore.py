"""LMDB store (the default): one environment per index, one named sub-database per table.

Layout of the environment (``data.mdb`` + ``lock.mdb`` in the index directory):

``t00`` .. ``tNN``
    One per table: ``tkey -> packed bucket``, the bucket's fingerprints as one value, sorted,
    ``value_width`` bytes each. A lookup is one ``get`` per table, read straight into numpy.
    (Measured against ``dupsort`` + ``dupfixed`` buckets read with ``getmulti``: at 10 million
    fingerprints a lookup took ~25 us instead of ~20 us and the tables 56 instead of 36 bytes
    per fingerprint, because growing sub-pages leave pages part-empty. The price: adding to a
    bucket rewrites it, O(bucket size), ~1 KB at 10 million uniform fingerprints.)
``fps``
    ``fp_bytes -> key_id`` (``dupsort``: pages with identical content share a fingerprint).
``keys``
    ``key_id -> fp_bytes``.
``records``
    ``key_id -> bytes``: per-URL records (recrawl history), a namespace of their own.
``aliases``
    hashed ``key_id -> key``, for keys longer than LMDB's 511-byte key limit.
``meta``
    ``b"index" -> JSON``: schema version, bits, max_distance, blocks, fingerprint settings.

Several processes on one machine can read and write one index at once: LMDB serialises
writers with its lock file, and a process that sees the map grown by another adopts its size.
"""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING, Any

import lmdb
import numpy as np

from scrapy_simhash.index import NotAnIndexError, SimhashIndexError
from scrapy_simhash.store.base import FingerprintStore, StoreFullError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

#: Files LMDB keeps in an environment directory.
_LMDB_FILES = frozenset({"data.mdb", "lock.mdb"})
#: ``MDB_meta.mm_magic`` at offset 16 of data.mdb (after the page header), little-endian.
_LMDB_MAGIC = (0xBEEFC0DE).to_bytes(4, "little")
_META_DB = b"meta"
_META_KEY = b"index"
_OUR_DBS = frozenset({b"meta", b"fps", b"keys", b"records", b"aliases"})
#: What the metadata's "format" field says in every scrapy-simhash index.
INDEX_FORMAT = "scrapy-simhash-index"
#: Sub-databases besides the tables.
_EXTRA_DBS = 6
#: Grow the map before a write transaction when it is fuller than this.
_GROW_AT = 0.8


class _SharedEnv:
    """One ``lmdb.Environment`` per directory and process (LMDB forbids opening it twice)."""

    def __init__(self, env: lmdb.Environment, key: str) -> None:
        self.env = env
        self.key = key
        self.refs = 1
        self.pid = os.getpid()
        self.dbs: dict[bytes, Any] = {}
        self.psize = env.stat()["psize"]
        self.lock = threading.Lock()
        self.sync = True


_ENVS: dict[str, _SharedEnv] = {}
_ENVS_LOCK = threading.Lock()


def _not_an_index(path: str, reason: str) -> NotAnIndexError:
    return NotAnIndexError(
        f"{path} is not a scrapy-simhash index ({reason}). It was left untouched: "
        f"use another directory (SIMHASH_DIR), or move or delete it yourself if you no longer need it."
    )


def inspect_dir(path: str) -> tuple[str, bytes | None]:
    """Look at ``path`` without modifying it: ``("missing" | "empty" | "index", meta)``.

    Raises :class:`~scrapy_simhash.index.NotAnIndexError` for anything else: a file, a directory
    with other files, a ``data.mdb`` that is not LMDB, an LMDB environment without our metadata.
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
    data = os.path.join(path, "data.mdb")
    if "data.mdb" not in names or os.path.getsize(data) == 0:
        # Empty, or an environment another process is creating right now.
        return "empty", None
    shared = _ENVS.get(os.path.realpath(path))
    if shared is not None and shared.pid == os.getpid():
        with shared.env.begin() as txn:
            meta = _read_meta_txn(shared.env, txn, path)
            return ("empty" if meta is None else "index"), meta
    with open(data, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[16:20] != _LMDB_MAGIC:
        raise _not_an_index(path, "data.mdb is not an LMDB database")
    try:
        # Read-only and without the lock file: nothing in the directory is modified.
        env = lmdb.open(path, readonly=True, lock=False, create=False, max_dbs=128, subdir=True)
    except lmdb.Error as exc:
        raise _not_an_index(path, f"data.mdb cannot be opened: {exc}") from exc
    try:
        with env.begin() as txn:
            meta = _read_meta_txn(env, txn, path)
            return ("empty" if meta is None else "index"), meta
    except lmdb.Error as exc:
        raise _not_an_index(path, f"data.mdb cannot be read: {exc}") from exc
    finally:
        env.close()


def _is_our_db_name(name: bytes) -> bool:
    return name in _OUR_DBS or (len(name) == 3 and name[:1] == b"t" and name[1:].isdigit())


def _read_meta_txn(env: lmdb.Environment, txn: Any, path: str) -> bytes | None:
    value = None
    if txn.get(_META_DB) is not None:
        value = txn.get(_META_KEY, db=env.open_db(_META_DB, txn=txn, create=False))
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
        raise _not_an_index(path, "its metadata record is corrupt")
    return bytes(value)


def destroy_dir(path: str) -> bool:
    """Delete the index directory ``path`` if it is a scrapy-simhash index (or empty).

    ``False`` if there was nothing; :class:`~scrapy_simhash.index.NotAnIndexError` (and nothing
    deleted) if it holds anything else.
    """
    state, _ = inspect_dir(path)
    if state == "missing":
        return False
    shared = _ENVS.get(os.path.realpath(path))
    if shared is not None and shared.pid == os.getpid():
        raise SimhashIndexError(f"Cannot delete the index at {path}: it is open in this process; close it first")
    for name in _LMDB_FILES:
        try:
            os.remove(os.path.join(path, name))
        except FileNotFoundError:
            pass
    os.rmdir(path)
    return True


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
        map_size: int = 1 << 30,
        durable: bool = True,
        readonly: bool = False,
        max_readers: int = 126,
    ) -> None:
        if not isinstance(map_size, int) or map_size < 1 << 16:
            raise ValueError(f"map_size ({map_size!r}) is invalid: it must be an int >= 65536 (bytes)")
        self.path = os.fspath(path)
        self.map_size = map_size
        self.durable = bool(durable)
        self.readonly = bool(readonly)
        self.max_readers = max_readers
        self._meta: bytes | None = None
        self._shared: _SharedEnv | None = None
        self._env: lmdb.Environment | None = None
        self._txn: Any = None
        self._write = False
        self._tdbs: list[Any] = []
        self._value_width = 8
        self._dtype: np.dtype | None = None
        self.grows = 0

    # -- life cycle ------------------------------------------------------------------------

    def open(self) -> None:
        assert self.path is not None
        state, self._meta = inspect_dir(self.path)
        if self.readonly and state != "index":
            raise SimhashIndexError(f"Cannot open {self.path} read-only: there is no index there yet")

    def configure(self, *, n_tables: int, key_width: int, value_width: int) -> None:
        assert self.path is not None
        if not self.readonly:
            os.makedirs(self.path, exist_ok=True)
        key = os.path.realpath(self.path)
        with _ENVS_LOCK:
            shared = _ENVS.get(key)
            if shared is not None and shared.pid == os.getpid():
                shared.refs += 1
            else:
                env = lmdb.open(
                    self.path,
                    map_size=self.map_size,
                    subdir=True,
                    readonly=self.readonly,
                    sync=self.durable,
                    metasync=self.durable,
                    max_dbs=n_tables + _EXTRA_DBS,
                    max_readers=self.max_readers,
                    lock=True,
                )
                shared = _ENVS[key] = _SharedEnv(env, key)
                shared.sync = self.durable
        self._shared = shared
        self._env = env = shared.env
        create = not self.readonly

        def db(name: bytes, **flags: Any) -> Any:
            for _ in range(100):
                if name in shared.dbs:
                    break
                try:
                    shared.dbs[name] = env.open_db(name, create=create, **flags)
                except lmdb.MapResizedError:
                    env.set_mapsize(0)  # another process grew the map
                except lmdb.MapFullError:
                    self._grow()
            return shared.dbs[name]

        try:
            self._tdbs = [db(b"t%02d" % t) for t in range(n_tables)]
            self._fps = db(b"fps", dupsort=True)
            self._keys = db(b"keys")
            self._records = db(b"records")
            self._aliases = db(b"aliases")
            self._metadb = db(_META_DB)
        except lmdb.Error:
            self.close()
            raise
        self._value_width = value_width
        self._dtype = np.dtype(">u8")

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
                shared.env.close()

    # -- transactions ----------------------------------------------------------------------

    def begin(self, write: bool) -> None:
        env = self._env
        if env is None:
            raise SimhashIndexError(f"The index at {self.path} is closed")
        shared = self._shared
        assert shared is not None
        if shared.pid != os.getpid():
            raise SimhashIndexError(
                f"The index at {self.path} was opened in another process (before a fork); open it again in this process"
            )
        if write:
            if self.readonly:
                raise SimhashIndexError(f"The index at {self.path} was opened read-only")
            self._grow_if_needed()
        for _ in range(100):
            try:
                self._txn = env.begin(write=write)
                break
            except lmdb.MapResizedError:
                # Another process grew the map: adopt its size.
                env.set_mapsize(0)
        else:  # pragma: no cover - would need 100 resizes in a row
            raise SimhashIndexError(f"Cannot start a transaction on {self.path}: the map keeps changing size")
        self._write = write

    def commit(self) -> None:
        txn, self._txn = self._txn, None
        if txn is None:
            return
        try:
            txn.commit()
        except lmdb.MapFullError:
            self._full(txn)
        if self._write and self.durable and self._shared is not None and not self._shared.sync:
            # The environment was opened non-durable by another index object of this process.
            self._shared.env.sync(True)

    def abort(self) -> None:
        txn, self._txn = self._txn, None
        if txn is not None:
            txn.abort()

    def _full(self, txn: Any = None) -> None:
        txn = txn or self._txn
        self._txn = None
        if txn is not None:
            try:
                txn.abort()
            except lmdb.Error:  # pragma: no cover - already ended by LMDB
                pass
        self._grow()
        raise StoreFullError(f"LMDB map of {self.path} was full; grown to {self.map_size} bytes")

    def _grow_if_needed(self) -> None:
        env = self._env
        assert env is not None and self._shared is not None
        info = env.info()
        if (info["last_pgno"] + 1) * self._shared.psize > _GROW_AT * info["map_size"]:
            self._grow()

    def _grow(self) -> None:
        env = self._env
        assert env is not None
        before = env.info()["map_size"]
        env.set_mapsize(0)  # adopt a size another process may have set
        size = env.info()["map_size"]
        if size <= before:
            size = before * 2
            env.set_mapsize(size)
        self.map_size = size
        self.grows += 1

    # -- metadata --------------------------------------------------------------------------

    def read_meta(self) -> bytes | None:
        if self._txn is None:
            return self._meta
        value = self._txn.get(_META_KEY, db=self._metadb)
        return None if value is None else bytes(value)

    def write_meta(self, value: bytes) -> None:
        self._put(_META_KEY, value, self._metadb)
        self._meta = bytes(value)

    def _put(self, key: bytes, value: bytes, db: Any, dupdata: bool = True) -> None:
        assert self._txn is not None
        try:
            self._txn.put(key, value, db=db, dupdata=dupdata)
        except lmdb.MapFullError:
            self._full()

    def _delete(self, key: bytes, value: bytes, db: Any) -> bool:
        assert self._txn is not None
        try:
            return bool(self._txn.delete(key, value, db=db))
        except lmdb.MapFullError:
            self._full()
            raise  # pragma: no cover - _full raises

    # -- tables ----------------------------------------------------------------------------

    def probe(self, tkeys: Sequence[bytes], limit: int) -> tuple[np.ndarray, int]:
        txn = self._txn
        assert txn is not None
        # One get per table: a bucket is one value, its fingerprints packed and sorted.
        parts = [b for b in (txn.get(tkey, db=db) for db, tkey in zip(self._tdbs, tkeys)) if b]
        raw = b"".join(parts)
        fps = np.frombuffer(raw, dtype=">u8")
        if self._value_width != 8:
            fps = fps.reshape(-1, 2)
        total = len(fps)
        if 0 < limit < total:
            fps = fps[:limit]
        return fps, total

    def _find(self, blob: bytes, fp_bytes: bytes) -> tuple[int, bool]:
        """Binary search of ``fp_bytes`` in a packed bucket: (byte offset, found)."""
        vw = self._value_width
        lo, hi = 0, len(blob) // vw
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[mid * vw : mid * vw + vw] < fp_bytes:
                lo = mid + 1
            else:
                hi = mid
        off = lo * vw
        return off, blob[off : off + vw] == fp_bytes

    def table_add(self, table: int, tkey: bytes, fp_bytes: bytes) -> None:
        db = self._tdbs[table]
        blob = self._txn.get(tkey, db=db)
        if blob is None:
            self._put(tkey, fp_bytes, db)
            return
        off, found = self._find(blob, fp_bytes)
        if not found:
            self._put(tkey, blob[:off] + fp_bytes + blob[off:], db)

    def table_remove(self, table: int, tkey: bytes, fp_bytes: bytes) -> None:
        db = self._tdbs[table]
        blob = self._txn.get(tkey, db=db)
        if blob is None:
            return
        off, found = self._find(blob, fp_bytes)
        if not found:
            return
        rest = blob[:off] + blob[off + self._value_width :]
        if rest:
            self._put(tkey, rest, db)
        else:
            try:
                self._txn.delete(tkey, db=db)
            except lmdb.MapFullError:
                self._full()

    # -- key maps --------------------------------------------------------------------------

    def get_fp(self, key_id: bytes) -> bytes | None:
        assert self._txn is not None
        return self._txn.get(key_id, db=self._keys)

    def set_fp(self, key_id: bytes, fp_bytes: bytes) -> None:
        self._put(key_id, fp_bytes, self._keys)

    def delete_fp(self, key_id: bytes) -> bool:
        assert self._txn is not None
        try:
            return bool(self._txn.delete(key_id, db=self._keys))
        except lmdb.MapFullError:
            self._full()
            raise  # pragma: no cover

    def keys_of(self, fp_bytes: bytes) -> list[bytes]:
        assert self._txn is not None
        cur = self._txn.cursor(self._fps)
        if not cur.set_key(fp_bytes):
            return []
        return list(cur.iternext_dup(keys=False, values=True))

    def link(self, fp_bytes: bytes, key_id: bytes) -> bool:
        assert self._txn is not None
        was_empty = self._txn.get(fp_bytes, db=self._fps) is None
        self._put(fp_bytes, key_id, self._fps)
        return was_empty

    def unlink(self, fp_bytes: bytes, key_id: bytes) -> bool:
        assert self._txn is not None
        self._delete(fp_bytes, key_id, self._fps)
        return self._txn.get(fp_bytes, db=self._fps) is None

    def count(self) -> int:
        assert self._txn is not None
        return int(self._txn.stat(self._keys)["entries"])

    def is_empty(self) -> bool:
        assert self._txn is not None
        return all(self._txn.stat(db)["entries"] == 0 for db in (self._keys, self._fps, self._records))

    def iter_fps(self) -> Iterator[tuple[bytes, bytes]]:
        assert self._txn is not None
        return iter(self._txn.cursor(self._keys))

    # -- records and aliases ---------------------------------------------------------------

    def get_record(self, key_id: bytes) -> bytes | None:
        assert self._txn is not None
        return self._txn.get(key_id, db=self._records)

    def put_record(self, key_id: bytes, value: bytes) -> None:
        self._put(key_id, value, self._records)

    def delete_record(self, key_id: bytes) -> bool:
        assert self._txn is not None
        try:
            return bool(self._txn.delete(key_id, db=self._records))
        except lmdb.MapFullError:
            self._full()
            raise  # pragma: no cover

    def get_alias(self, key_id: bytes) -> bytes | None:
        assert self._txn is not None
        return self._txn.get(key_id, db=self._aliases)

    def put_alias(self, key_id: bytes, key: bytes) -> None:
        self._put(key_id, key, self._aliases)

    def delete_alias(self, key_id: bytes) -> None:
        assert self._txn is not None
        try:
            self._txn.delete(key_id, db=self._aliases)
        except lmdb.MapFullError:
            self._full()

    # -- bulk loading ----------------------------------------------------------------------

    def _putmulti(self, db: Any, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        txn = self._txn
        assert txn is not None
        pairs = list(pairs)
        if not pairs:
            return
        # Append mode (no tree search) is valid when the pairs come sorted (the index sorts bulk
        # loads) and all of them sort after what the sub-database already holds.
        cur = txn.cursor(db)
        append = not cur.last() or pairs[0] > (cur.key(), cur.value())
        try:
            consumed, added = cur.putmulti(pairs, dupdata=True, append=append)
            if append and added < consumed:
                # py-lmdb skips (silently) pairs that do not sort last in append mode: redo them
                # the ordinary way (pairs already stored stay as they are).
                cur.putmulti(pairs, dupdata=True, append=False)
        except lmdb.MapFullError:
            self._full()

    def bulk_table(self, table: int, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        txn = self._txn
        db = self._tdbs[table]
        vw = self._value_width
        groups: list[tuple[bytes, bytes]] = []
        key: bytes | None = None
        values: list[bytes] = []
        for tkey, fp_bytes in pairs:
            if tkey != key:
                if key is not None:
                    groups.append((key, b"".join(values)))
                key, values = tkey, []
            values.append(fp_bytes)
        if key is not None:
            groups.append((key, b"".join(values)))
        if not groups:
            return
        if txn.stat(db)["entries"]:
            # Buckets that already exist (a bulk load continued from an earlier chunk, or a
            # non-empty index) are merged; the rest are appended.
            fresh = []
            for tkey, blob in groups:
                existing = txn.get(tkey, db=db)
                if existing is None:
                    fresh.append((tkey, blob))
                    continue
                merged = {existing[i : i + vw] for i in range(0, len(existing), vw)}
                merged.update(blob[i : i + vw] for i in range(0, len(blob), vw))
                self._put(tkey, b"".join(sorted(merged)), db)
            groups = fresh
        self._putmulti(db, groups)

    def bulk_links(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        self._putmulti(self._fps, pairs)

    def bulk_fps(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        self._putmulti(self._keys, pairs)

    def stats(self) -> dict[str, int]:
        env = self._env
        if env is None or self.path is None:
            return {}
        out: dict[str, int] = {
            "map_size": env.info()["map_size"],
            "map_grows": self.grows,
        }
        try:
            out["file_size"] = os.path.getsize(os.path.join(self.path, "data.mdb"))
        except OSError:  # pragma: no cover
            pass
        psize = env.stat()["psize"]
        with env.begin() as txn:
            names = [b"t%02d" % t for t in range(len(self._tdbs))] + [
                b"fps",
                b"keys",
                b"records",
                b"aliases",
            ]
            assert self._shared is not None
            for name in names:
                st = txn.stat(self._shared.dbs[name])
                pages = st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]
                label = "tables" if name.startswith(b"t") and name[1:].isdigit() else name.decode()
                out[f"{label}_bytes"] = out.get(f"{label}_bytes", 0) + pages * psize
        return out
