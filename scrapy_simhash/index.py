"""Near-duplicate search over SimHash fingerprints: table layout, candidate lookup, exact verification.

Layout (Manku, Jain, Das Sarma, WWW 2007). The ``bits`` of a fingerprint are split into
``B >= k + 1`` blocks of (nearly) equal width, most significant block first. If two fingerprints
differ in at most ``k`` bits, at most ``k`` blocks contain a difference, so at least ``B - k``
blocks are identical (pigeonhole). The index keeps one table per choice of ``B - k`` blocks
(``itertools.combinations`` order), keyed by the bits of those blocks: any pair within distance
``k`` shares the key of at least one table. ``B = k + 1`` gives ``k + 1`` tables with
``bits / (k + 1)``-bit keys (4 x 16 bits for k = 3); more blocks give more tables with longer
keys and far fewer candidates per lookup (``B = 6``, k = 3: 20 tables, 31-33-bit keys).

A lookup reads the bucket of each table, verifies every candidate by popcount (numpy, vectorised),
and de-duplicates the verified fingerprints across tables. Each distinct fingerprint is filed once
per table; the keys that share it (pages with identical content) hang off it in a separate map.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from scrapy_simhash.store.base import FingerprintStore, StoreFullError
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from typing_extensions import Self

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "Match",
    "NotAnIndexError",
    "SettingsMismatchError",
    "SimhashIndex",
    "SimhashIndexError",
]

#: Version of the on-disk layout; an index with a newer one is refused.
SCHEMA_VERSION = 1
#: Candidates verified per lookup at most: a hot bucket (thousands of pages of one template)
#: must not stall the crawl. At 10 million uniform fingerprints a lookup sees ~600.
DEFAULT_MAX_CANDIDATES = 20_000
#: More tables than this is a layout nobody wants (and LMDB sub-database names have 2 digits).
MAX_TABLES = 100
#: Keys longer than the store's limit are filed under this byte + a 256-bit BLAKE2b digest.
#: 0xFF never occurs in UTF-8, so a hashed id cannot collide with a plain key.
_HASHED_KEY_PREFIX = b"\xff"

_SETTING_NAMES = {
    "bits": "SIMHASH_BITS",
    "max_distance": "SIMHASH_MAX_DISTANCE",
    "blocks": "SIMHASH_BLOCKS",
}


class Match(NamedTuple):
    """A stored key within the searched distance: its key, fingerprint and Hamming distance."""

    key: str
    fp: int
    distance: int


class SimhashIndexError(Exception):
    """Base class of the index's errors."""


class SettingsMismatchError(SimhashIndexError, ValueError):
    """An existing index was built with other settings than the ones requested.

    ``setting``, ``stored`` and ``requested`` say which and how; the message names the fix.
    """

    def __init__(self, message: str, setting: str = "", stored: Any = None, requested: Any = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.stored = stored
        self.requested = requested


class NotAnIndexError(SimhashIndexError):
    """The location holds something else than an index (foreign files, a corrupt database).

    Nothing there was modified.
    """


def _popcount_lut(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return _POPCOUNT8[a.view(np.uint8)].reshape(*a.shape, a.itemsize).sum(axis=-1, dtype=np.int64)


_POPCOUNT8 = np.array([i.bit_count() for i in range(256)], dtype=np.uint8)
_popcount: Callable[[np.ndarray], np.ndarray] = getattr(np, "bitwise_count", _popcount_lut)


class _Layout:
    """Blocks and tables of one ``(bits, k, blocks)`` choice, and the table keys of fingerprints."""

    def __init__(self, bits: int, k: int, blocks: int) -> None:
        self.bits, self.k, self.blocks = bits, k, blocks
        q, r = divmod(bits, blocks)
        self.widths = [q + (1 if i < r else 0) for i in range(blocks)]
        shifts = []
        start = 0
        for w in self.widths:
            start += w
            shifts.append(bits - start)
        self.tables = list(combinations(range(blocks), blocks - k))
        # Each table key is its blocks' bits, concatenated; adjacent blocks merge into one segment.
        self.segments: list[list[tuple[int, int, int]]] = []
        key_bits = []
        for chosen in self.tables:
            segs: list[list[int]] = []
            for b in chosen:
                if segs and segs[-1][3] == b - 1:
                    seg = segs[-1]
                    seg[0] = shifts[b]
                    seg[2] += self.widths[b]
                    seg[3] = b
                else:
                    segs.append([shifts[b], 0, self.widths[b], b])
            self.segments.append([(s, (1 << w) - 1, w) for s, _, w, _ in segs])
            key_bits.append(sum(self.widths[b] for b in chosen))
        self.key_bits = key_bits
        self.key_width = max((kb + 7) // 8 for kb in key_bits)
        self.value_width = bits // 8
        self._single = [segs[0][:2] if len(segs) == 1 else None for segs in self.segments]

    def tkeys(self, fp: int) -> list[bytes]:
        kw = self.key_width
        out = []
        for single, segs in zip(self._single, self.segments):
            if single is not None:
                out.append(((fp >> single[0]) & single[1]).to_bytes(kw, "big"))
            else:
                v = 0
                for s, m, w in segs:
                    v = (v << w) | ((fp >> s) & m)
                out.append(v.to_bytes(kw, "big"))
        return out

    def tkeys_np(self, fps: np.ndarray, table: int) -> np.ndarray:
        """Table keys of many 64-bit fingerprints (uint64 array) as uint64 integers."""
        v = np.zeros(len(fps), dtype=np.uint64)
        for s, m, w in self.segments[table]:
            part = (fps >> np.uint64(s)) & np.uint64(m)
            v = part if w == 64 else (v << np.uint64(w)) | part
        return v


def _check_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if not low <= value <= high:
        raise ValueError(f"{name} ({value!r}) is invalid: it must be between {low} and {high}")
    return int(value)


def _normalise_settings(settings: Mapping[str, object] | None) -> dict[str, Any] | None:
    if settings is None:
        return None
    try:
        return json.loads(json.dumps(dict(settings), sort_keys=True))  # type: ignore[no-any-return]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"fingerprint_settings must be a JSON-serialisable mapping: {exc}") from exc


class SimhashIndex:
    """Find stored fingerprints within Hamming distance ``max_distance`` of a fingerprint.

    Keys are ``str`` (URLs, ids; longer than 511 UTF-8 bytes: filed under a BLAKE2b digest, the
    key itself kept and returned); each key has at most one fingerprint (``add`` replaces it).
    Several keys may share a fingerprint. Calls are serialised by a lock, so threads can share
    one index; a :meth:`batch` holds the lock until it ends.

    :param store: a :class:`~scrapy_simhash.store.base.FingerprintStore`; ``None``: in memory.
        Use :meth:`open` for the default LMDB store.
    :param bits: fingerprint size, 64 or 128 (`SIMHASH_BITS`).
    :param max_distance: k, the largest distance :meth:`near` and :meth:`check_and_add` search
        (`SIMHASH_MAX_DISTANCE`).
    :param blocks: number of blocks B (`SIMHASH_BLOCKS`), ``k + 1 <= B <= bits``; ``None``: the
        stored layout of an existing index, or ``k + 1`` for a new one.
    :param max_candidates: candidates verified per lookup at most (`SIMHASH_MAX_CANDIDATES`);
        0: no limit. Lookups that hit it are counted in ``stats["capped"]``; they still find
        exact duplicates.
    :param fingerprint_settings: the fingerprinter's settings (``Fingerprinter.settings``),
        stored in the index; opening it later with other settings raises
        :class:`SettingsMismatchError`. ``None``: not stored or checked.
    """

    def __init__(
        self,
        store: FingerprintStore | None = None,
        *,
        bits: int = 64,
        max_distance: int = 3,
        blocks: int | None = None,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        fingerprint_settings: Mapping[str, object] | None = None,
    ) -> None:
        if isinstance(bits, bool) or bits not in (64, 128):
            raise ValueError(f"bits ({bits!r}) is invalid: it must be 64 or 128")
        k = _check_int("max_distance", max_distance, 0, bits - 1)
        if blocks is not None:
            _check_int("blocks", blocks, k + 1, bits)
        self.max_candidates = _check_int("max_candidates", max_candidates, 0, 2**62)
        self._settings = _normalise_settings(fingerprint_settings)
        if store is not None and not isinstance(store, FingerprintStore):
            raise TypeError(f"store must be a FingerprintStore, got {type(store).__name__}")
        self._store: FingerprintStore = MemoryStore() if store is None else store
        self.bits = bits
        self.max_distance = k
        self._lock = threading.RLock()
        self._depth = 0
        self._log: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self._closed = False
        #: ``probes``: lookups; ``candidates``: bucket entries seen in all lookups;
        #: ``candidates_max``: most in one lookup; ``capped``: lookups cut at ``max_candidates``;
        #: ``retries``: transactions replayed after the store grew.
        self.stats: dict[str, int] = dict.fromkeys(("probes", "candidates", "candidates_max", "capped", "retries"), 0)
        try:
            self._setup(blocks)
        except BaseException:
            self._store.close()
            raise

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        bits: int = 64,
        max_distance: int = 3,
        blocks: int | None = None,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        fingerprint_settings: Mapping[str, object] | None = None,
        map_size: int = 1 << 30,
        durable: bool = True,
        readonly: bool = False,
        reset: bool = False,
        max_readers: int = 126,
    ) -> Self:
        """Open (or create) the LMDB index in directory ``path``.

        Reads `SIMHASH_LMDB_MAP_SIZE` (``map_size``, grown when full), `SIMHASH_DURABLE`
        (``durable``: fsync each commit; ``False`` survives a killed process, not a power cut,
        and syncs on close) and `SIMHASH_RESET` (``reset``: delete the index first, see
        :meth:`destroy`), plus the arguments of :class:`SimhashIndex`.

        Raises :class:`SettingsMismatchError` if the index exists with other settings and
        :class:`NotAnIndexError` if ``path`` holds something else; neither modifies anything.
        """
        from scrapy_simhash.store.lmdbstore import LmdbStore

        if reset and not readonly:
            cls.destroy(path)
        store = LmdbStore(
            path,
            map_size=map_size,
            durable=durable,
            readonly=readonly,
            max_readers=max_readers,
        )
        return cls(
            store,
            bits=bits,
            max_distance=max_distance,
            blocks=blocks,
            max_candidates=max_candidates,
            fingerprint_settings=fingerprint_settings,
        )

    @staticmethod
    def destroy(path: str | os.PathLike[str]) -> bool:
        """Delete the LMDB index in ``path``; ``False`` if there is none.

        Only deletes a directory that is a scrapy-simhash index (or empty): anything else raises
        :class:`NotAnIndexError` and stays as it is.
        """
        from scrapy_simhash.store.lmdbstore import destroy_dir

        return destroy_dir(os.fspath(path))

    def _where(self) -> str:
        path = self._store.path
        return "in memory" if path is None else f"at {path}"

    def _meta(self) -> bytes:
        meta = {
            "format": "scrapy-simhash-index",
            "schema": SCHEMA_VERSION,
            "bits": self.bits,
            "max_distance": self.max_distance,
            "blocks": self.blocks,
            "block_widths": self._layout.widths,
            "table_key_width": self._layout.key_width,
            "fingerprint_settings": self._settings,
        }
        return json.dumps(meta, sort_keys=True).encode()

    def _parse_meta(self, raw: bytes | None) -> dict[str, Any] | None:
        if raw is None:
            return None
        try:
            meta = json.loads(raw)
        except ValueError:
            meta = None
        if not isinstance(meta, dict) or meta.get("format") != "scrapy-simhash-index":
            raise NotAnIndexError(f"The index {self._where()} has corrupt metadata; it was left untouched")
        return meta

    def _mismatch(self, name: str, stored: Any, requested: Any) -> SettingsMismatchError:
        setting = _SETTING_NAMES.get(
            name,
            "the fingerprinter settings (SIMHASH_FEATURES, SIMHASH_WEIGHTING, ...)",
        )
        return SettingsMismatchError(
            f"The simhash index {self._where()} was created with {name}={stored!r}, but "
            f"{name}={requested!r} was requested. Open it with {name}={stored!r} ({setting}), use "
            "another directory, or delete it (SimhashIndex.destroy(path) or SIMHASH_RESET = True) "
            "to rebuild it from scratch.",
            name,
            stored,
            requested,
        )

    def _check_meta(self, meta: dict[str, Any], blocks: int | None) -> int:
        """Compare stored metadata with the requested settings; return the block count."""
        schema = meta.get("schema")
        if not isinstance(schema, int) or schema > SCHEMA_VERSION:
            raise SimhashIndexError(
                f"The simhash index {self._where()} has schema version {schema!r}; this version of "
                f"scrapy-simhash reads version {SCHEMA_VERSION}. Upgrade scrapy-simhash or use another directory."
            )
        for name, requested in (
            ("bits", self.bits),
            ("max_distance", self.max_distance),
        ):
            if meta.get(name) != requested:
                raise self._mismatch(name, meta.get(name), requested)
        stored_blocks = meta.get("blocks")
        if blocks is not None and stored_blocks != blocks:
            raise self._mismatch("blocks", stored_blocks, blocks)
        stored_settings = meta.get("fingerprint_settings")
        if self._settings is not None and stored_settings is not None and stored_settings != self._settings:
            for name in sorted(set(stored_settings) | set(self._settings)):
                a, b = stored_settings.get(name), self._settings.get(name)
                if a != b:
                    raise self._mismatch(f"fingerprint_settings[{name!r}]", a, b)
        if not isinstance(stored_blocks, int) or not self.max_distance < stored_blocks <= self.bits:
            raise NotAnIndexError(f"The index {self._where()} has corrupt metadata (blocks={stored_blocks!r})")
        return stored_blocks

    def _setup(self, blocks: int | None) -> None:
        store = self._store
        store.open()
        meta = self._parse_meta(store.read_meta())
        if meta is not None:
            blocks = self._check_meta(meta, blocks)
            if self._settings is None:
                self._settings = meta.get("fingerprint_settings")
        self.blocks: int = self.max_distance + 1 if blocks is None else blocks
        n_tables = comb(self.blocks, self.max_distance)
        if n_tables > MAX_TABLES:
            raise ValueError(
                f"blocks={self.blocks} with max_distance={self.max_distance} needs {n_tables} tables; "
                f"the most is {MAX_TABLES}: use fewer blocks"
            )
        self._layout = _Layout(self.bits, self.max_distance, self.blocks)
        self._vw = self._layout.value_width
        store.configure(n_tables=n_tables, key_width=self._layout.key_width, value_width=self._vw)
        if store.readonly:
            return

        def init() -> None:
            current = self._parse_meta(store.read_meta())
            if current is None:
                store.write_meta(self._meta())
                return
            self._check_meta(current, self.blocks)  # another process may have created it meanwhile
            stored = current.get("fingerprint_settings")
            if stored is None and self._settings is not None:
                store.write_meta(self._meta())  # record the settings from now on
            elif self._settings is None:
                self._settings = stored

        self._write(init)

    # -- properties --------------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """Directory of the index; ``None`` for an in-memory index."""
        return self._store.path

    @property
    def store(self) -> FingerprintStore:
        """The underlying store."""
        return self._store

    @property
    def fingerprint_settings(self) -> dict[str, Any] | None:
        """The fingerprinter settings stored in the index (``None`` if none)."""
        return self._settings

    @property
    def tables(self) -> int:
        """Number of tables of the layout: ``comb(blocks, max_distance)``."""
        return len(self._layout.tables)

    def __repr__(self) -> str:
        return (
            f"<SimhashIndex {self._where()} bits={self.bits} max_distance={self.max_distance} "
            f"blocks={self.blocks} tables={self.tables}>"
        )

    # -- argument checks --------------------------------------------------------------------

    def _fp(self, fp: Any) -> int:
        if isinstance(fp, bool) or not isinstance(fp, (int, np.integer)):
            raise TypeError(f"fp must be an int fingerprint, got {type(fp).__name__} ({fp!r})")
        fp = int(fp)
        if not 0 <= fp < 1 << self.bits:
            raise ValueError(
                f"fp ({fp}) is out of range: a {self.bits}-bit fingerprint is between 0 and 2**{self.bits} - 1"
            )
        return fp

    def _key_id(self, key: Any) -> tuple[bytes, bytes]:
        """``(key_id, key bytes)``: keys longer than the store allows are filed under a digest."""
        if not isinstance(key, str):
            raise TypeError(f"key must be a str, got {type(key).__name__} ({key!r})")
        if not key:
            raise ValueError("key must be a non-empty str")
        try:
            raw = key.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"key ({key!r}) cannot be encoded as UTF-8: {exc}") from None
        if len(raw) <= self._store.max_key_id_size:
            return raw, raw
        return _HASHED_KEY_PREFIX + hashlib.blake2b(raw, digest_size=32).digest(), raw

    def _key_str(self, key_id: bytes) -> str:
        if key_id[:1] == _HASHED_KEY_PREFIX:
            raw = self._store.get_alias(key_id)
            if raw is None:  # pragma: no cover - alias written in the same transaction as the key
                return key_id.hex()
            return bytes(raw).decode("utf-8")
        return bytes(key_id).decode("utf-8")

    # -- transactions -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise SimhashIndexError(f"The simhash index {self._where()} is closed")

    def _read(self, fn: Callable[..., Any], *args: Any) -> Any:
        with self._lock:
            if self._depth:
                return fn(*args)
            self._check_open()
            store = self._store
            store.begin(False)
            try:
                return fn(*args)
            finally:
                store.abort()

    def _write(self, fn: Callable[..., Any], *args: Any) -> Any:
        with self._lock:
            store = self._store
            if self._depth:
                self._log.append((fn, args))
                try:
                    return fn(*args)
                except StoreFullError:
                    return self._replay()
            self._check_open()
            while True:
                store.begin(True)
                try:
                    result = fn(*args)
                    store.commit()
                    return result
                except StoreFullError:
                    self.stats["retries"] += 1
                except BaseException:
                    store.abort()
                    raise

    def _replay(self) -> Any:
        # The store aborted the batch's transaction to grow: redo all of the batch so far.
        while True:
            self.stats["retries"] += 1
            self._store.begin(True)
            try:
                result = None
                for fn, args in self._log:
                    result = fn(*args)
                return result
            except StoreFullError:
                continue

    @contextmanager
    def batch(self) -> Iterator[Self]:
        """Group calls in one write transaction: all of them are committed together at the end of
        the ``with`` block, or none if it raises. Reentrant. Lookups inside see the batch's writes.

        If the store must grow during the batch, the calls made so far are replayed in a new
        transaction (another process may have written in between: a ``check_and_add`` result
        already returned is then not re-checked).
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._check_open()
            store = self._store
            store.begin(True)
            self._depth = 1
            self._log = []
            try:
                yield self
                while True:
                    try:
                        store.commit()
                        break
                    except StoreFullError:
                        self._replay()
            except BaseException:
                store.abort()
                raise
            finally:
                self._depth = 0
                self._log = []

    # -- fingerprints -----------------------------------------------------------------------

    def _file(self, fp_bytes: bytes) -> None:
        store = self._store
        for t, tkey in enumerate(self._layout.tkeys(int.from_bytes(fp_bytes, "big"))):
            store.table_add(t, tkey, fp_bytes)

    def _unfile(self, key_id: bytes, fp_bytes: bytes) -> None:
        store = self._store
        if store.unlink(fp_bytes, key_id):
            for t, tkey in enumerate(self._layout.tkeys(int.from_bytes(fp_bytes, "big"))):
                store.table_remove(t, tkey, fp_bytes)

    def _add_locked(self, key_id: bytes, raw: bytes, fp_bytes: bytes) -> None:
        store = self._store
        old = store.get_fp(key_id)
        if old is not None:
            if bytes(old) == fp_bytes:
                return
            self._unfile(key_id, bytes(old))
        elif key_id[:1] == _HASHED_KEY_PREFIX:
            store.put_alias(key_id, raw)
        store.set_fp(key_id, fp_bytes)
        if store.link(fp_bytes, key_id):
            self._file(fp_bytes)

    def add(self, key: str, fp: int) -> None:
        """Store ``fp`` as ``key``'s fingerprint (replacing the key's earlier one)."""
        key_id, raw = self._key_id(key)
        fp_bytes = self._fp(fp).to_bytes(self._vw, "big")
        self._write(self._add_locked, key_id, raw, fp_bytes)

    def add_many(self, items: Iterable[tuple[str, int]], *, chunk_size: int = 200_000) -> int:
        """Add many ``(key, fp)`` pairs, as :meth:`add` would one by one (the last pair of a key
        wins); return how many pairs were read.

        Into an empty index (outside :meth:`batch`) this is a sorted bulk load, many times faster
        than :meth:`add`. It commits every ``chunk_size`` entries, so it is atomic only inside
        :meth:`batch`.
        """
        # Millions of small tuples and bytes: the cyclic GC would rescan them again and again.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._add_many(items, chunk_size)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _add_many(self, items: Iterable[tuple[str, int]], chunk_size: int) -> int:
        pending: dict[str, int] = {}
        n = 0
        for key, fp in items:
            pending[key] = fp
            n += 1
        key_ids: list[bytes] = []
        aliases: list[tuple[bytes, bytes]] = []
        limit = self._store.max_key_id_size
        for key in pending:
            raw = key.encode("utf-8") if type(key) is str and key else b""
            if not raw or len(raw) > limit:
                key_id, raw = self._key_id(key)  # errors, and long keys
                if key_id != raw:
                    aliases.append((key_id, raw))
            else:
                key_id = raw
            key_ids.append(key_id)
        values = list(pending.values())
        del pending
        if self.bits == 64 and all(type(v) is int for v in values):
            try:
                fps = np.array(values, dtype=np.uint64)
            except OverflowError:
                fps = None
        else:
            fps = None
        if fps is None:
            fps_list = [self._fp(v) for v in values]  # errors name the bad value
            fp_bytes = [v.to_bytes(self._vw, "big") for v in fps_list]
        else:
            fp_bytes = fps.astype(">u8").view("V8").tolist()
        del values
        with self._lock:
            if not self._depth and self._read(self._store.is_empty):
                self._bulk_load(key_ids, fp_bytes, aliases, fps, chunk_size)
                return n
            raws = dict(aliases)
            entries = [(kid, raws.get(kid, kid), fpb) for kid, fpb in zip(key_ids, fp_bytes)]
            for i in range(0, len(entries), chunk_size):
                self._write(self._add_chunk, entries[i : i + chunk_size])
        return n

    def _add_chunk(self, chunk: list[tuple[bytes, bytes, bytes]]) -> None:
        for entry in chunk:
            self._add_locked(*entry)

    def _bulk_load(
        self,
        key_ids: list[bytes],
        fp_bytes: list[bytes],
        aliases: list[tuple[bytes, bytes]],
        fps: np.ndarray | None,
        chunk_size: int,
    ) -> None:
        store = self._store
        layout = self._layout

        def write_sorted(
            put: Callable[[list[tuple[bytes, bytes]]], None],
            a: list[bytes],
            b: list[bytes],
        ) -> None:
            for i in range(0, len(a), chunk_size):
                self._write(put, list(zip(a[i : i + chunk_size], b[i : i + chunk_size])))

        order = sorted(range(len(key_ids)), key=key_ids.__getitem__)
        key_ids = [key_ids[i] for i in order]
        fp_bytes = [fp_bytes[i] for i in order]
        write_sorted(store.bulk_fps, key_ids, fp_bytes)
        if aliases:
            self._write(lambda: [store.put_alias(kid, raw) for kid, raw in aliases])
        kw = layout.key_width
        if fps is not None:
            fps = fps[np.array(order, dtype=np.int64)] if order else fps
            del order
            # Stable: keys stay in byte order within one fingerprint, as LMDB sorts duplicates.
            by_fp = np.argsort(fps, kind="stable")
            write_sorted(
                store.bulk_links,
                [fp_bytes[i] for i in by_fp.tolist()],
                [key_ids[i] for i in by_fp.tolist()],
            )
            del key_ids, fp_bytes
            fs = fps[by_fp]
            distinct = fs[np.concatenate(([True], fs[1:] != fs[:-1]))] if len(fs) else fs
            for t in range(len(layout.tables)):
                tk = layout.tkeys_np(distinct, t)
                o = np.lexsort((distinct, tk))
                tkb = np.ascontiguousarray(tk[o].astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - kw :])
                tkeys = tkb.view(f"V{kw}").ravel().tolist()
                vals = distinct[o].astype(">u8").view("V8").tolist()
                write_sorted(partial(store.bulk_table, t), tkeys, vals)
            return
        del order
        links = sorted(zip(fp_bytes, key_ids))
        write_sorted(store.bulk_links, [a for a, _ in links], [b for _, b in links])
        distinct_b = sorted(set(fp_bytes))
        del links, key_ids, fp_bytes
        keyed = [layout.tkeys(int.from_bytes(fpb, "big")) for fpb in distinct_b]
        for t in range(len(layout.tables)):
            pairs = sorted((tkeys[t], fpb) for tkeys, fpb in zip(keyed, distinct_b))
            write_sorted(
                partial(store.bulk_table, t),
                [a for a, _ in pairs],
                [b for _, b in pairs],
            )

    def remove(self, key: str) -> bool:
        """Forget ``key``'s fingerprint; ``False`` if it had none. Its record stays."""
        key_id, raw = self._key_id(key)
        return bool(self._write(self._remove_locked, key_id, raw))

    def _remove_locked(self, key_id: bytes, raw: bytes) -> bool:
        store = self._store
        old = store.get_fp(key_id)
        if old is None:
            return False
        store.delete_fp(key_id)
        self._unfile(key_id, bytes(old))
        if key_id[:1] == _HASHED_KEY_PREFIX and store.get_record(key_id) is None:
            store.delete_alias(key_id)
        return True

    def get(self, key: str) -> int | None:
        """``key``'s fingerprint, or ``None``."""
        key_id, _ = self._key_id(key)
        fp_bytes = self._read(self._store.get_fp, key_id)
        return None if fp_bytes is None else int.from_bytes(fp_bytes, "big")

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(key) and self.get(key) is not None

    def __len__(self) -> int:
        return int(self._read(self._store.count))

    def items(self) -> list[tuple[str, int]]:
        """Every ``(key, fp)``, ordered by the key's UTF-8 bytes (read in one go: a list)."""

        def collect() -> list[tuple[str, int]]:
            return [(self._key_str(bytes(k)), int.from_bytes(v, "big")) for k, v in self._store.iter_fps()]

        return list(self._read(collect))

    # -- lookups ----------------------------------------------------------------------------

    def _distance_arg(self, max_distance: int | None) -> int:
        if max_distance is None:
            return self.max_distance
        if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)):
            raise TypeError(f"max_distance must be an int, got {type(max_distance).__name__}")
        if not 0 <= max_distance <= self.max_distance:
            raise ValueError(
                f"max_distance ({max_distance}) is invalid: it must be between 0 and the index's "
                f"max_distance ({self.max_distance}); the table layout cannot find pairs further "
                "apart. Build an index with a larger max_distance."
            )
        return int(max_distance)

    def near(self, fp: int, *, max_distance: int | None = None, exclude: str | None = None) -> list[Match]:
        """Every stored key within ``max_distance`` (default and maximum: the index's) of ``fp``,
        nearest first, ties by key; ``exclude`` leaves out that key's own entry."""
        fp = self._fp(fp)
        k = self._distance_arg(max_distance)
        exclude_id = None if exclude is None else self._key_id(exclude)[0]
        return list(self._read(self._near_locked, fp, k, exclude_id))

    def _near_locked(self, fp: int, k: int, exclude_id: bytes | None) -> list[Match]:
        store = self._store
        cands, total = store.probe(self._layout.tkeys(fp), self.max_candidates)
        stats = self.stats
        stats["probes"] += 1
        stats["candidates"] += total
        stats["candidates_max"] = max(stats["candidates_max"], total)
        found: dict[int, int] = {}
        if len(cands):
            if self.bits == 64:
                dist = _popcount(cands ^ np.uint64(fp))
                for i in np.flatnonzero(dist <= k).tolist():
                    found[int(cands[i])] = int(dist[i])
            else:
                hi, lo = np.uint64(fp >> 64), np.uint64(fp & 0xFFFFFFFFFFFFFFFF)
                dist = _popcount(cands[:, 0] ^ hi) + _popcount(cands[:, 1] ^ lo)
                for i in np.flatnonzero(dist <= k).tolist():
                    found[(int(cands[i, 0]) << 64) | int(cands[i, 1])] = int(dist[i])
        if 0 < self.max_candidates < total:
            stats["capped"] += 1
            found.setdefault(fp, 0)  # exact duplicates are always found, cap or not
        if not found:
            return []
        matches = []
        vw = self._vw
        for other, d in found.items():
            for key_id in store.keys_of(other.to_bytes(vw, "big")):
                if key_id != exclude_id:
                    matches.append(Match(self._key_str(bytes(key_id)), other, d))
        matches.sort(key=lambda m: (m.distance, m.key))
        return matches

    def check_and_add(self, key: str, fp: int) -> Match | None:
        """Atomically: return the nearest match of another key within ``max_distance`` (and add
        nothing), or add ``fp`` as ``key``'s fingerprint and return ``None``.

        The key's own earlier entry is ignored (a page fetched again is not its own duplicate).
        With LMDB this is atomic across processes.
        """
        key_id, raw = self._key_id(key)
        fp = self._fp(fp)
        return self._write(self._check_and_add_locked, key_id, raw, fp)  # type: ignore[no-any-return]

    def _check_and_add_locked(self, key_id: bytes, raw: bytes, fp: int) -> Match | None:
        matches = self._near_locked(fp, self.max_distance, key_id)
        if matches:
            return matches[0]
        self._add_locked(key_id, raw, fp.to_bytes(self._vw, "big"))
        return None

    # -- records ----------------------------------------------------------------------------

    def get_record(self, key: str) -> bytes | None:
        """The record stored for ``key`` (per-URL recrawl history), or ``None``."""
        key_id, _ = self._key_id(key)
        value = self._read(self._store.get_record, key_id)
        return None if value is None else bytes(value)

    def put_record(self, key: str, value: bytes) -> None:
        """Store ``value`` as ``key``'s record (records are separate from fingerprints)."""
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"value must be bytes, got {type(value).__name__}; encode it first")
        key_id, raw = self._key_id(key)
        self._write(self._put_record_locked, key_id, raw, bytes(value))

    def _put_record_locked(self, key_id: bytes, raw: bytes, value: bytes) -> None:
        if key_id[:1] == _HASHED_KEY_PREFIX:
            self._store.put_alias(key_id, raw)
        self._store.put_record(key_id, value)

    def delete_record(self, key: str) -> bool:
        """Delete ``key``'s record; ``False`` if it had none."""
        key_id, raw = self._key_id(key)
        return bool(self._write(self._delete_record_locked, key_id, raw))

    def _delete_record_locked(self, key_id: bytes, raw: bytes) -> bool:
        store = self._store
        deleted = store.delete_record(key_id)
        if key_id[:1] == _HASHED_KEY_PREFIX and store.get_fp(key_id) is None:
            store.delete_alias(key_id)
        return deleted

    # -- life cycle -------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Layout, size and store figures (for logs, benchmarks and the ``inspect`` command)."""
        with self._lock:
            out: dict[str, Any] = {
                "path": self.path,
                "bits": self.bits,
                "max_distance": self.max_distance,
                "blocks": self.blocks,
                "block_widths": list(self._layout.widths),
                "tables": self.tables,
                "keys": len(self),
            }
            out.update(self._store.stats())
            return out

    def close(self) -> None:
        """Close the store (syncing it if it is not durable). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
