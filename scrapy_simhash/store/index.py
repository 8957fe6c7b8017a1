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

:class:`SnapshotView` answers a decision's index calls from what a store that snapshots read in one
round trip (:meth:`SimhashIndex.decisions`).
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from math import comb
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from scrapy_simhash import defaults
from scrapy_simhash.errors import (
    NotAnIndexError,
    SettingsMismatchError,
    SimhashIndexError,
    StoreError,
    StoreFullError,
)
from scrapy_simhash.store.base import FingerprintStore, Probe, Snapshot, TableLayout, Writes
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from types import TracebackType

    from typing_extensions import Self

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "Match",
    "NotAnIndexError",
    "SettingsMismatchError",
    "SimhashIndex",
    "SimhashIndexError",
    "StoreError",
]

#: Version of the stored layout and record format; an index with another one is refused (one
#: written by an earlier version is rebuilt, never converted).
SCHEMA_VERSION = 8
#: Candidates verified per lookup at most (`SIMHASH_MAX_CANDIDATES`).
DEFAULT_MAX_CANDIDATES: int = defaults.SIMHASH_MAX_CANDIDATES
#: More tables than this is a layout nobody wants (and LMDB sub-database names have 2 digits).
MAX_TABLES = 100
#: Page size of :meth:`SimhashIndex.items` and :meth:`SimhashIndex.records` scans.
_SCAN_PAGE = 10_000
#: Reads of one decision at most when other processes keep changing what it read (:meth:`SimhashIndex.decisions`).
DECIDE_ATTEMPTS = 50

_SETTING_NAMES = {
    "bits": "SIMHASH_BITS",
    "max_distance": "SIMHASH_MAX_DISTANCE",
    "blocks": "SIMHASH_BLOCKS",
}

Layout = TableLayout  # the name the tests and benchmarks know


class Match(NamedTuple):
    """A stored key within the searched distance: its key, fingerprint and Hamming distance."""

    key: str
    fp: int
    distance: int


def _checked_int(name: str, value: Any, low: int, high: int) -> int:
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

    Keys are non-empty ``str``; each has at most one fingerprint (``add`` replaces it; keys may share
    one) and, separately, one record (bytes, with an optional due time). Every method is one atomic store operation, serialised by a lock so
    threads can share an index; :meth:`batch` groups calls in one transaction where the store can.

    :param store: a :class:`~scrapy_simhash.store.base.FingerprintStore`; ``None``: in memory.
        Use :meth:`open` for the LMDB store.
    :param bits: fingerprint size, 64 or 128 (`SIMHASH_BITS`).
    :param max_distance: k, the largest distance :meth:`near` and :meth:`check_and_add` search
        (`SIMHASH_MAX_DISTANCE`).
    :param blocks: number of blocks B (`SIMHASH_BLOCKS`), ``k + 1 <= B <= bits``; ``None``: the
        stored layout of an existing index, or ``k + 1`` for a new one.
    :param max_candidates: candidates verified per lookup at most (`SIMHASH_MAX_CANDIDATES`; 0: no
        limit); lookups that hit it are counted in ``stats["capped"]`` and still find exact duplicates.
    :param fingerprint_settings: the fingerprinter's ``settings``, stored in the index and checked
        on open (:class:`SettingsMismatchError`); ``None``: not stored or checked.
    """

    def __init__(
        self,
        store: FingerprintStore | None = None,
        *,
        bits: int = defaults.SIMHASH_BITS,
        max_distance: int = defaults.SIMHASH_MAX_DISTANCE,
        blocks: int | None = defaults.SIMHASH_BLOCKS,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        fingerprint_settings: Mapping[str, object] | None = None,
    ) -> None:
        if isinstance(bits, bool) or bits not in (64, 128):
            raise ValueError(f"bits ({bits!r}) is invalid: it must be 64 or 128")
        k = _checked_int("max_distance", max_distance, 0, bits - 1)
        if blocks is not None:
            _checked_int("blocks", blocks, k + 1, bits)
        self.max_candidates = _checked_int("max_candidates", max_candidates, 0, 2**62)
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
        #: ``retries``: groups replayed after the store grew; ``conflicts``: decisions read again (:meth:`decisions`).
        self.stats: dict[str, int] = dict.fromkeys(
            ("probes", "candidates", "candidates_max", "capped", "retries", "conflicts"), 0
        )
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
        bits: int = defaults.SIMHASH_BITS,
        max_distance: int = defaults.SIMHASH_MAX_DISTANCE,
        blocks: int | None = defaults.SIMHASH_BLOCKS,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        fingerprint_settings: Mapping[str, object] | None = None,
        map_size: int = defaults.SIMHASH_LMDB_MAP_SIZE,
        durable: bool = defaults.SIMHASH_DURABLE,
        readonly: bool = False,
        reset: bool = False,
        max_readers: int = 126,
    ) -> Self:
        """Open (or create) the LMDB index in directory ``path`` and return it.

        ``map_size`` (`SIMHASH_LMDB_MAP_SIZE`) and ``durable`` (`SIMHASH_DURABLE`) are the
        :class:`~scrapy_simhash.store.lmdbstore.LmdbStore`'s; ``reset`` (`SIMHASH_RESET`) deletes the
        index first (:meth:`destroy`); the other arguments are those of :class:`SimhashIndex`.

        Raises :class:`SettingsMismatchError` if the index exists with other settings,
        :class:`NotAnIndexError` if ``path`` holds something else and :class:`StoreError` when it cannot
        be opened; none of them modifies anything.
        """
        from scrapy_simhash.store.lmdbstore import LmdbStore

        store = LmdbStore(path, map_size=map_size, durable=durable, readonly=readonly, max_readers=max_readers)
        if reset and not readonly:
            store.destroy()
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

    def _version_mismatch(self, stored: Any, requested: Any) -> SettingsMismatchError:
        """The index holds fingerprints of another fingerprint version: no setting makes them
        comparable, so the fix is a new index, never a silent rebuild."""
        name = "fingerprint_settings['version']"
        return SettingsMismatchError(
            f"The simhash index {self._where()} holds fingerprints of fingerprint version {stored!r}, "
            f"but this scrapy-simhash computes fingerprint version {requested!r} (a page gets another "
            "fingerprint in each: no setting makes the two comparable). "
            "Crawl into a new index (another SIMHASH_DIR, or another directory), or delete this one "
            "(`scrapy simhash <spider> reset`, SimhashIndex.destroy(path) or SIMHASH_RESET = True) "
            "to rebuild it from scratch; it was left untouched.",
            name,
            stored,
            requested,
        )

    def _check_meta(self, meta: dict[str, Any], blocks: int | None) -> int:
        """Compare stored metadata with the requested settings; return the block count."""
        schema = meta.get("schema")
        if isinstance(schema, int) and schema < SCHEMA_VERSION:
            raise SimhashIndexError(
                f"The simhash index {self._where()} was written by an earlier version of scrapy-simhash "
                f"(schema version {schema}; this version reads and writes version {SCHEMA_VERSION}, with "
                "another record format). Rebuild it: delete it (`scrapy simhash <spider> reset`, "
                "SimhashIndex.destroy(path) or SIMHASH_RESET = True) and crawl again, or use another "
                "directory; it was left untouched."
            )
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
            if stored_settings.get("version") != self._settings.get("version"):
                raise self._version_mismatch(stored_settings.get("version"), self._settings.get("version"))
            for name in sorted(set(stored_settings) | set(self._settings)):
                a, b = stored_settings.get(name), self._settings.get(name)
                if a != b:
                    raise self._mismatch(f"fingerprint_settings[{name!r}]", a, b)
        if not isinstance(stored_blocks, int) or not self.max_distance < stored_blocks <= self.bits:
            raise NotAnIndexError(f"The index {self._where()} has corrupt metadata (blocks={stored_blocks!r})")
        return stored_blocks

    def _setup(self, blocks: int | None) -> None:
        store = self._store
        meta = self._parse_meta(store.open())
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
        self._layout = TableLayout(self.bits, self.max_distance, self.blocks)
        self._vw = self._layout.value_width
        store.configure(self._layout)
        if store.readonly:
            return
        current = self._parse_meta(store.create_meta(self._meta()))
        assert current is not None
        self._check_meta(current, self.blocks)  # another process may have created it meanwhile
        stored = current.get("fingerprint_settings")
        if stored is None and self._settings is not None:
            store.write_meta(self._meta())  # record the settings from now on
        elif self._settings is None:
            self._settings = stored

    # -- properties --------------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """Location of the store (the LMDB directory); ``None`` for an in-memory index."""
        return self._store.path

    @property
    def store(self) -> FingerprintStore:
        """The underlying store."""
        return self._store

    @property
    def layout(self) -> TableLayout:
        """The table layout."""
        return self._layout

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
        return cast("int", fp)

    def _fpb(self, fp: Any) -> bytes:
        return self._fp(fp).to_bytes(self._vw, "big")

    @staticmethod
    def _key(key: Any) -> bytes:
        if not isinstance(key, str):
            raise TypeError(f"key must be a str, got {type(key).__name__} ({key!r})")
        if not key:
            raise ValueError("key must be a non-empty str")
        try:
            return key.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"key ({key!r}) cannot be encoded as UTF-8: {exc}") from None

    # -- calls and groups -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise SimhashIndexError(f"The simhash index {self._where()} is closed")

    def _read(self, fn: Callable[..., Any], *args: Any) -> Any:
        """One reading store operation."""
        with self._lock:
            if self._closed:
                self._check_open()
            return fn(*args)

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """One writing store operation (atomic on its own); in a :meth:`batch`, logged for a replay."""
        with self._lock:
            self._check_open()
            if not self._depth:
                return fn(*args)
            self._log.append((fn, args))
            try:
                return fn(*args)
            except StoreFullError:
                return self._replay()

    def _replay(self) -> Any:
        # The store aborted the batch's transaction to grow: redo all of the batch so far.
        while True:
            self.stats["retries"] += 1
            self._store.begin()
            try:
                result = None
                for fn, args in self._log:
                    result = fn(*args)
                return result
            except StoreFullError:
                continue

    @contextmanager
    def batch(self, key: str | None = None) -> Iterator[Self]:
        """Group calls: with LMDB, one write transaction committed at the end of the ``with``
        block, or dropped if it raises; lookups inside see the batch's writes. Reentrant. Other
        stores may keep each call atomic on its own (see ``store/base.py``).

        ``key``: the key whose record the batch reads, decides on and writes last: a batch of
        another process for the same key runs before or after this one, never in between, on
        every store (Redis locks the key until the batch writes its record: ``FingerprintStore.hold``).

        If the store must grow during the batch, the calls made so far are replayed in a new
        transaction (another process may have written in between: a ``check_and_add`` result
        already returned is then not re-checked).
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    if key is not None:
                        self._store.hold([self._key(key)])
                    yield self
                finally:
                    self._depth -= 1
                return
            self._check_open()
            store = self._store
            store.begin()
            self._depth = 1
            self._log = []
            try:
                if key is not None:
                    store.hold([self._key(key)])
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

    def decisions(
        self, key: str, fp: int | None, wide: int, *, evidence: bool = False
    ) -> Iterator[DecisionAttempt]:
        """The attempts of one decision on ``key`` (a page with fingerprint ``fp``; ``None``: no
        lookup): the caller decides inside ``with attempt as view`` (``view`` has this index's
        calls), and leaving the block writes what it wrote. A store that decides in a group (LMDB)
        gives one attempt, a :meth:`batch` (one write transaction) over this index. One that
        snapshots (Redis, ``FingerprintStore.snapshots``) reads once per attempt (``fp``'s lookup
        within ``max_distance`` and, with ``wide > max_distance``, the wide tier's; with
        ``evidence``, the evidence of the key and of the keys found, where it can), gives that
        :class:`SnapshotView`, and writes in one conditional write; where another process changed
        what it read meanwhile, it gives another attempt (``stats["conflicts"]``), at most
        :data:`DECIDE_ATTEMPTS` (then :class:`StoreError`, kind ``busy``). Inside the block the
        caller makes index calls only."""
        if not self._store.snapshots:
            yield DecisionAttempt(self, key, None)
            return
        kb, fpb = self._key(key), None if fp is None else self._fpb(fp)
        read = (kb, fpb, self.max_distance, self.max_candidates, wide if wide > self.max_distance else 0, evidence)
        pause = 0.0
        for _ in range(DECIDE_ATTEMPTS):
            attempt = DecisionAttempt(self, key, fp, read)
            yield attempt
            if attempt.applied:
                return
            self.stats["conflicts"] += 1
            if pause:
                time.sleep(pause)  # another process holds the key (a batch) or keeps writing beside it
            pause = min(max(pause * 2, 0.001), 0.05)
        raise StoreError(
            self._store.path,
            "busy",
            f"what a decision on {key} read kept changing ({DECIDE_ATTEMPTS} attempts)",
            "write to",
        )

    # -- fingerprints -----------------------------------------------------------------------

    def add(self, key: str, fp: int) -> None:
        """Store ``fp`` as ``key``'s fingerprint (replacing the key's earlier one)."""
        self._call(self._store.put, [(self._key(key), self._fpb(fp))])

    def add_many(self, items: Iterable[tuple[str, int]]) -> int:
        """Add many ``(key, fp)`` pairs, as :meth:`add` would one by one (the last pair of a key
        wins), all or none: one atomic store operation (into an empty LMDB index, a sorted bulk
        load). Returns how many pairs were read."""
        # Millions of small tuples and bytes: the cyclic GC would rescan them again and again.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            pending: dict[str, int] = {}
            n = 0
            for key, fp in items:
                pending[key] = fp
                n += 1
            keys = [self._key(key) for key in pending]
            values = list(pending.values())
            del pending
            fps: list[bytes] | None = None
            if self.bits == 64 and all(type(v) is int for v in values):
                try:
                    raw = np.array(values, dtype=np.uint64).astype(">u8").tobytes()
                    fps = [raw[i : i + 8] for i in range(0, len(raw), 8)]
                except OverflowError:
                    fps = None
            if fps is None:
                fps = [self._fpb(v) for v in values]  # errors name the bad value
            del values
            self._call(self._store.put, list(zip(keys, fps)))
            return n
        finally:
            if gc_was_enabled:
                gc.enable()

    def remove(self, key: str) -> bool:
        """Forget ``key``'s fingerprint; ``False`` if it had none. Its record stays."""
        return bool(self._call(self._store.remove, [self._key(key)]))

    def get(self, key: str) -> int | None:
        """``key``'s fingerprint, or ``None``."""
        fp = self._read(self._store.get, [self._key(key)])[0]
        return None if fp is None else int.from_bytes(fp, "big")

    def get_many(self, keys: Iterable[str]) -> list[int | None]:
        """The fingerprint of each key, or ``None`` (one store operation)."""
        fps = self._read(self._store.get, [self._key(key) for key in keys])
        return [None if fp is None else int.from_bytes(fp, "big") for fp in fps]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(key) and self.get(key) is not None

    def __len__(self) -> int:
        return int(self._read(self._store.count))

    def items(self) -> list[tuple[str, int]]:
        """Every ``(key, fp)`` as a list (see :meth:`iter_items`)."""
        return list(self.iter_items())

    def iter_items(self) -> Iterator[tuple[str, int]]:
        """Every ``(key, fp)``, in the store's order (UTF-8 byte order for keys of up to 511
        bytes), read in pages: each page is consistent, the whole need not be."""
        after: bytes | None = None
        while True:
            page = self._read(self._store.scan, after, _SCAN_PAGE)
            for key, fp in page:
                yield key.decode("utf-8"), int.from_bytes(fp, "big")
            if len(page) < _SCAN_PAGE:
                return
            after = page[-1][0]

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

    def _matches(self, probe: Probe) -> list[Match]:
        stats = self.stats
        n = probe.candidates
        stats["probes"] += 1
        stats["candidates"] += n
        stats["candidates_max"] = max(stats["candidates_max"], n)
        if probe.capped:
            stats["capped"] += 1
        if not probe.hits:
            return []
        return [Match(h.key.decode("utf-8"), int.from_bytes(h.fp, "big"), h.distance) for h in probe.hits]

    def near(self, fp: int, *, max_distance: int | None = None, exclude: str | None = None) -> list[Match]:
        """Every stored key within ``max_distance`` (default and maximum: the index's) of ``fp``,
        nearest first, ties by key; ``exclude`` leaves out that key's own entry."""
        fpb = self._fpb(fp)
        k = self.max_distance if max_distance is None else self._distance_arg(max_distance)
        exclude_b = None if exclude is None else self._key(exclude)
        probe = self._read(self._store.near, fpb, k, self.max_candidates, exclude_b)
        return self._matches(probe)

    def check_and_add(self, key: str, fp: int) -> Match | None:
        """Atomically: if another key's fingerprint is within ``max_distance`` of ``fp``, return
        the nearest (and forget ``key``'s own earlier fingerprint: the key now serves a
        duplicate); otherwise store ``fp`` as ``key``'s fingerprint and return ``None``.

        The key's own earlier entry is not a match (a page fetched again is not its own
        duplicate). Atomic across processes (LMDB) and, for stores that implement the contract,
        across machines.
        """
        return self.check_and_add_wide(key, fp, 0)[0]

    def check_and_add_wide(self, key: str, fp: int, wide: int) -> tuple[Match | None, list[Match]]:
        """:meth:`check_and_add`, and when it finds no match and ``wide > max_distance``, the wide
        tier's candidates: the other keys whose fingerprints lie at a distance
        ``max_distance < d <= wide`` and share a table key with ``fp``'s or lie one bit away from
        it in some table (the buckets of ``fp``'s table keys and of every key one bit away are read;
        at most ``max_candidates`` verified), nearest first, ties by key. They are not matches:
        ``fp`` is stored as ``key``'s fingerprint as without them; the caller decides (see
        :class:`~scrapy_simhash.decision.tracker.ChangeTracker`). Which pairs beyond ``max_distance`` the
        lookup reaches depends on where their bits differ (``benchmarks/quality/wide_tier.py``
        measures the share)."""
        if isinstance(wide, bool) or not isinstance(wide, int) or wide < 0:
            raise ValueError(f"wide ({wide!r}) is invalid: it must be an int >= 0 (0: no wide lookup)")
        fpb = self._fpb(fp)
        args = (self._key(key), fpb, self.max_distance, self.max_candidates)
        probe = self._call(self._store.check_and_add, *args, *((wide,) if wide > self.max_distance else ()))
        matches = self._matches(probe)
        layout = self._layout
        wide_matches = [
            Match(h.key.decode("utf-8"), int.from_bytes(h.fp, "big"), h.distance)
            for h in probe.wide
            if h.distance <= wide and layout.key_distance(h.fp, fpb) <= 1
        ]
        return (matches[0] if matches else None), wide_matches

    # -- records ----------------------------------------------------------------------------

    def get_record(self, key: str) -> bytes | None:
        """The record stored for ``key`` (per-URL recrawl history), or ``None``."""
        return self._read(self._store.get_records, [self._key(key)])[0]  # type: ignore[no-any-return]

    def get_records(self, keys: Iterable[str]) -> list[bytes | None]:
        """The record of each key, or ``None`` (one store operation)."""
        return list(self._read(self._store.get_records, [self._key(k) for k in keys]))

    def put_record(self, key: str, value: bytes, *, due: float | None = None, evidence: bytes | None = None) -> None:
        """Store ``value`` as ``key``'s record (records are separate from fingerprints), due for
        a recrawl at ``due`` (Unix seconds; ``None``: never, see :meth:`records_due`), and with it,
        in the same operation, ``key``'s ``evidence`` (kept apart from the record, read by
        :meth:`get_evidence`): ``b""`` deletes it, ``None`` leaves it as it is."""
        item = self._record_item(key, value, due)
        if evidence is None:
            self._call(self._store.put_records, [item])
        else:
            if not isinstance(evidence, (bytes, bytearray, memoryview)):
                raise TypeError(f"evidence must be bytes, got {type(evidence).__name__}")
            self._call(self._store.put_records, [item], {item[0]: bytes(evidence) or None})

    def get_evidence(self, key: str) -> bytes | None:
        """``key``'s evidence (see :meth:`put_record`), or ``None``."""
        return self._read(self._store.get_evidence, [self._key(key)])[0]  # type: ignore[no-any-return]

    def put_records(self, items: Iterable[tuple[str, bytes, float | None]]) -> None:
        """Store many ``(key, record, due)``, all or none (one store operation)."""
        self._call(self._store.put_records, [self._record_item(*item) for item in items])

    def _record_item(self, key: str, value: bytes, due: float | None) -> tuple[bytes, bytes, float | None]:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"value must be bytes, got {type(value).__name__}; encode it first")
        if due is not None and (isinstance(due, bool) or not isinstance(due, (int, float)) or not due >= 0):
            raise ValueError(f"due ({due!r}) is invalid: it must be Unix seconds >= 0 or None")
        return self._key(key), value if type(value) is bytes else bytes(value), None if due is None else float(due)

    def delete_record(self, key: str) -> bool:
        """Delete ``key``'s record (and its due time); ``False`` if it had none."""
        return bool(self._call(self._store.delete_records, [self._key(key)]))

    def iter_records(self) -> Iterator[tuple[str, bytes]]:
        """Every ``(key, record)``, read in pages, in the store's order."""
        after: bytes | None = None
        while True:
            page = self._read(self._store.scan_records, after, _SCAN_PAGE)
            for key, value in page:
                yield key.decode("utf-8"), value
            if len(page) < _SCAN_PAGE:
                return
            after = page[-1][0]

    def records_due(self, before: float, limit: int = 1000) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(key, due)`` of records due at or before ``before`` (Unix seconds),
        earliest first."""
        due = self._read(self._store.records_due, float(before), int(limit))
        return [(key.decode("utf-8"), when) for key, when in due]

    def due_states(
        self, after: bytes | None = None, limit: int = 1000, keys: bool = True
    ) -> tuple[bytes | None, list[bytes], bytes]:
        """Up to ``limit`` records with a due time after the cursor ``after``, in the store's
        order: ``(cursor, keys, hots)`` (keys as UTF-8 bytes; ``hots`` their hot states one after
        the other, :mod:`scrapy_simhash.store.hot`), what a recrawl selection reads; ``keys`` false:
        the keys may be left out."""
        return self._read(self._store.due_states, after, int(limit), keys)  # type: ignore[no-any-return]

    # -- aux blobs --------------------------------------------------------------------------

    def get_aux(self, name: str) -> bytes | None:
        """The auxiliary blob ``name`` (per-host site templates), or ``None``. Aux blobs are not
        keys: :meth:`items`, :meth:`records` and ``export`` do not list them."""
        return self.get_aux_many([name])[0]

    def get_aux_many(self, names: Iterable[str]) -> list[bytes | None]:
        """The aux blob of each name, or ``None``."""
        names = [self._aux_name(name) for name in names]
        return list(self._read(self._store.get_aux, names))

    def put_aux(self, name: str, value: bytes | None) -> None:
        """Store (``None``: delete) the aux blob ``name``."""
        self.put_aux_many({name: value})

    def put_aux_many(self, items: Mapping[str, bytes | None]) -> None:
        """Store (``None``: delete) many aux blobs, all or none."""
        checked: dict[str, bytes | None] = {}
        for name, value in items.items():
            if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
                raise TypeError(f"aux value must be bytes or None, got {type(value).__name__}")
            checked[self._aux_name(name)] = None if value is None else bytes(value)
        self._call(self._store.put_aux, checked)

    @staticmethod
    def _aux_name(name: Any) -> str:
        if type(name) is str and 0 < len(name) <= 500 and name.isascii():  # most names: no encoding
            return name
        if not isinstance(name, str) or not name or len(name.encode("utf-8")) > 500:
            raise ValueError(f"aux name ({name!r}) is invalid: it must be a non-empty str of at most 500 bytes")
        return name

    # -- life cycle -------------------------------------------------------------------------

    def check(self) -> None:
        """Read the whole store once; :class:`~scrapy_simhash.errors.StoreError` (kind ``corrupt``)
        names the damage and the fix."""
        self._read(self._store.check)

    def info(self) -> dict[str, Any]:
        """Layout, size and store figures (for logs, benchmarks and the ``info`` command)."""
        with self._lock:
            out: dict[str, Any] = {
                "path": self.path,
                "store": type(self._store).__name__,
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



class DecisionAttempt:
    """One attempt of a decision (:meth:`SimhashIndex.decisions`): ``with attempt as view`` gives
    the view to decide over and, when the block ends without an error, writes what the decision
    wrote; :attr:`applied` says whether it was written (a snapshot's write fails where another
    process changed what it read)."""

    def __init__(self, index: SimhashIndex, key: str, fp: int | None, read: tuple[Any, ...] | None = None) -> None:
        self.index, self.key, self.fp = index, key, fp
        self._read = read  # the snapshot's arguments; None: a batch
        self._batch: Any = None
        self._view: SnapshotView | None = None
        self._snapshot: Snapshot | None = None
        #: Whether the decision's writes were written.
        self.applied = False

    def __enter__(self) -> Any:
        index = self.index
        if self._read is None:
            self._batch = index.batch(self.key)
            return self._batch.__enter__()
        index._lock.acquire()
        try:
            index._check_open()
            self._snapshot = index.store.snapshot(*self._read)
            self._view = SnapshotView(index, self.key, self.fp, self._snapshot)
        except BaseException:
            index._lock.release()
            raise
        return self._view

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._batch is not None:
            self._batch.__exit__(kind, error, tb)  # commits, or aborts on an error (which goes on)
            self.applied = kind is None
            return
        try:
            if kind is None:
                assert self._view is not None
                assert self._snapshot is not None
                self.applied = self.index.store.apply(self._snapshot, self._view.writes())
        finally:
            self.index._lock.release()


class SnapshotView:
    """The :class:`SimhashIndex` calls a decision on ``key`` (a page
    with fingerprint ``fp``) makes, over ``snapshot``: reads of the key, of ``fp``'s lookup and of
    the records found come from it (no I/O); other reads go to the index (evidence: one ``MGET``
    for the decided key and every key found within ``max_distance``); writes are kept
    (:meth:`writes`). Writes are for ``key`` only (and aux blobs)."""

    def __init__(self, index: SimhashIndex, key: str, fp: int | None, snapshot: Snapshot) -> None:
        self.index = index
        self.max_distance = index.max_distance
        self.bits = index.bits
        self._key, self._fp, self._snap = key, fp, snapshot
        self._kb = key.encode("utf-8")
        self._own = None if snapshot.fp is None else int.from_bytes(snapshot.fp, "big")  # the key's fp now
        self._record: tuple[bytes, float | None] | None = None
        self._evidence: bytes | None = None
        self._aux: dict[str, bytes | None] = {}
        self._evidence_read = {k.decode("utf-8"): v for k, v in (snapshot.evidence or {}).items()}
        self._hits = [h for h in snapshot.probe.hits if h.key != self._kb]  # the lookup without the key's own entry

    def writes(self) -> Writes:
        """What the decision wrote, for :meth:`~scrapy_simhash.store.base.FingerprintStore.apply`."""
        own = self._snap.fp
        now = None if self._own is None else self._own.to_bytes(self.bits // 8, "big")
        fp = None if now == own else (now or b"")
        return Writes(fp, self._record, self._evidence, self._aux or None)

    def _mine(self, key: str) -> None:
        if key != self._key:
            raise AssertionError(f"a decision on {self._key!r} writes {key!r}")

    # -- fingerprints -------------------------------------------------------------------------

    def get(self, key: str) -> int | None:
        """``key``'s fingerprint (the decided key's as the decision left it)."""
        return self._own if key == self._key else self.index.get(key)

    def add(self, key: str, fp: int) -> None:
        """Store ``fp`` as the decided key's fingerprint."""
        self._mine(key)
        self._own = self.index._fp(fp)

    def remove(self, key: str) -> bool:
        """Forget the decided key's fingerprint; ``False`` if it had none."""
        self._mine(key)
        had, self._own = self._own is not None, None
        return had

    def _matches(self, hits: Iterable[object], exclude: str | None) -> list[Match]:
        ex = None if exclude is None else exclude.encode("utf-8")
        return [
            Match(h.key.decode("utf-8"), int.from_bytes(h.fp, "big"), h.distance)  # type: ignore[attr-defined]
            for h in hits
            if h.key != ex  # type: ignore[attr-defined]
        ]

    def near(self, fp: int, *, max_distance: int | None = None, exclude: str | None = None) -> list[Match]:
        """As :meth:`SimhashIndex.near`: the snapshot's lookup for the page's fingerprint."""
        if fp != self._fp or (max_distance is not None and max_distance != self.max_distance):
            return self.index.near(fp, max_distance=max_distance, exclude=exclude)
        return self._matches(self._snap.probe.hits, exclude)

    def check_and_add(self, key: str, fp: int) -> Match | None:
        """As :meth:`SimhashIndex.check_and_add`, over the snapshot."""
        return self.check_and_add_wide(key, fp, 0)[0]

    def check_and_add_wide(self, key: str, fp: int, wide: int) -> tuple[Match | None, list[Match]]:
        """As :meth:`SimhashIndex.check_and_add_wide`, over the snapshot (which read the wide
        tier's buckets when the decision asked for them)."""
        self._mine(key)
        if fp != self._fp:
            raise AssertionError(f"the snapshot looked up {self._fp!r}, not {fp!r}")
        probe = self._snap.probe
        self.index._matches(probe._replace(hits=self._hits))  # the lookup's figures, as a store call counts them
        if self._hits:
            self._own = None  # the key now serves a duplicate
            return self._matches(self._hits[:1], None)[0], []
        self._own = fp
        if wide <= self.max_distance:
            return None, []
        fpb = fp.to_bytes(self.bits // 8, "big")
        layout = self.index.layout
        wide_hits = [
            h for h in probe.wide if h.key != self._kb and h.distance <= wide and layout.key_distance(h.fp, fpb) <= 1
        ]
        return None, self._matches(wide_hits, None)

    # -- records ------------------------------------------------------------------------------

    def get_record(self, key: str) -> bytes | None:
        """``key``'s record: the snapshot's for the decided key and the keys found, else read."""
        return self.get_records([key])[0]

    def get_records(self, keys: Iterable[str]) -> list[bytes | None]:
        """The record of each key (one read for those the snapshot does not hold)."""
        keys = list(keys)
        known = self._snap.records
        out: dict[str, bytes | None] = {}
        rest = []
        for key in keys:
            kb = key.encode("utf-8")
            if key == self._key:
                out[key] = self._snap.record
            elif kb in known:
                out[key] = known[kb]
            elif any(h.key == kb for h in self._snap.probe.hits) or any(h.key == kb for h in self._snap.probe.wide):
                out[key] = None  # found, and the snapshot read it: it has none
            else:
                rest.append(key)
        if rest:
            out.update(zip(rest, self.index.get_records(rest)))
        return [out[key] for key in keys]

    def put_record(self, key: str, value: bytes, *, due: float | None = None, evidence: bytes | None = None) -> None:
        """Keep the decided key's record (and evidence: ``b""`` deletes it, ``None`` keeps it)."""
        self._mine(key)
        _, value, due = self.index._record_item(key, value, due)
        self._record = (value, due)
        if evidence is not None:
            self._evidence = bytes(evidence)

    def delete_record(self, key: str) -> bool:
        """Delete the decided key's record (and evidence); ``False`` if it had none."""
        self._mine(key)
        self._record = (b"", None)
        return self._snap.record is not None

    def get_evidence(self, key: str) -> bytes | None:
        """``key``'s evidence: the first call reads that of the decided key and of every key found
        within ``max_distance`` in one ``MGET``; later ones read only what it did not."""
        if key not in self._evidence_read:
            keys = [key]
            if not self._evidence_read:
                found = dict.fromkeys([self._key, *(h.key.decode("utf-8") for h in self._hits)])
                keys += [k for k in found if k != key]
            values = self.index.store.get_evidence([k.encode("utf-8") for k in keys])
            self._evidence_read.update(zip(keys, values))
        return self._evidence_read[key]

    # -- aux blobs ------------------------------------------------------------------------------

    def get_aux(self, name: str) -> bytes | None:
        """The aux blob ``name`` (as this decision left it)."""
        return self.get_aux_many([name])[0]

    def get_aux_many(self, names: Iterable[str]) -> list[bytes | None]:
        """The aux blob of each name (as this decision left it; one read of the others)."""
        names = list(names)
        rest = [n for n in names if n not in self._aux]
        read = dict(zip(rest, self.index.get_aux_many(rest))) if rest else {}
        return [self._aux[n] if n in self._aux else read[n] for n in names]

    def put_aux_many(self, items: Mapping[str, bytes | None]) -> None:
        """Keep aux blobs (``None``: delete), written with the decision."""
        for name, value in items.items():
            self._aux[self.index._aux_name(name)] = None if value is None else bytes(value)
