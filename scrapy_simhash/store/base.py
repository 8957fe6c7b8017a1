"""The storage interface under :class:`~scrapy_simhash.store.index.SimhashIndex`: whole decisions on bytes.

Writing your own store
======================

A store keeps bytes; the index keeps the table layout (:class:`TableLayout`, given to
:meth:`FingerprintStore.configure`), the encoding of fingerprints and keys, and the metadata
checks. Subclass :class:`FingerprintStore` and implement every abstract method; these docstrings
are the whole contract, and ``tests/store/test_store_contract.py`` runs the same suite against every
store (add yours to its ``STORES``).

Every operation is a whole decision: it must be **atomic** on its own (one transaction, one
round trip, one Lua script), with other processes writing the same store at the same time.
``check_and_add`` is the one that matters: two processes that add near-duplicates of each other
at once must end with exactly one of them stored.

Vocabulary:

``key``
    A user key (a canonical URL) as UTF-8 bytes, never empty. The store deals with its own key
    size limits (LMDB files keys longer than 511 bytes under a digest); results return the
    original bytes.
``fp``
    A fingerprint as ``layout.value_width`` big-endian bytes (8 for 64-bit, 16 for 128-bit).
``tables``
    A fingerprint is filed under ``layout.tkeys(fp)[t]`` in each table ``t``; a lookup reads
    those buckets and verifies the candidates (:func:`verify`). Several keys may share a
    fingerprint (pages with identical content).
``records``
    ``key -> bytes``, independent of fingerprints (a key may have either or both), each with an
    optional due time (Unix seconds) kept in a secondary index (:meth:`records_due`).
``evidence``
    ``key -> bytes``: a kept page's novelty evidence, the record's cold part (most of a kept
    page's bytes), read only when a page resembles that one; written and deleted with the key's
    record (:meth:`FingerprintStore.put_records`) and kept apart from it, so that the records stay
    small. Not listed by :meth:`scan_records`.
``aux``
    ``name -> bytes`` blobs for the package's own use (per-host site templates), not listed by
    :meth:`scan` or :meth:`scan_records`.
``meta``
    One value: the index's JSON metadata.

Errors: a failure to read or write raises :class:`~scrapy_simhash.errors.StoreError` naming the
location and the cause, after which nothing of the failed operation is stored. A location that
holds something else raises :class:`~scrapy_simhash.errors.NotAnIndexError` from :meth:`open`,
which must not modify it.

Stores are built by :meth:`FingerprintStore.from_crawler` (the ``SIMHASH_STORE`` setting names the
class), which reads the store's own settings.
"""

from __future__ import annotations

import bisect
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import combinations
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from scrapy.crawler import Crawler
    from typing_extensions import Self


class TableLayout:
    """Blocks and tables of one ``(bits, k, blocks)`` choice, and the table keys of fingerprints.

    ``bits`` are split into ``blocks`` blocks of (nearly) equal width, most significant first;
    table ``t`` is keyed by the bits of the blocks in ``tables[t]`` (``itertools.combinations``
    order), concatenated, as ``key_width`` big-endian bytes. ``segments[t]``: ``(shift, mask,
    width)`` of each run of adjacent blocks, what a store in another language needs to compute
    the same keys.
    """

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

    def tkeys(self, fp: int | bytes) -> list[bytes]:
        """The table key of ``fp`` (an int or ``value_width`` bytes) in every table."""
        if not isinstance(fp, int):
            fp = int.from_bytes(fp, "big")
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

    def probe_tkeys(self, tkeys: Sequence[bytes]) -> list[list[bytes]]:
        """Per table, the keys one bit away from a fingerprint's table keys ``tkeys`` (its
        :meth:`tkeys`, which the caller has already computed; ``key_bits[t]`` of them): the
        buckets a wide lookup reads beside the fingerprint's own (:func:`wide_found`)."""
        kw = self.key_width
        out = []
        for tkey, kb in zip(tkeys, self.key_bits):
            v = int.from_bytes(tkey, "big")
            out.append([(v ^ (1 << i)).to_bytes(kw, "big") for i in range(kb)])
        return out

    def key_distance(self, a: bytes, b: bytes) -> int:
        """The smallest Hamming distance between the keys of two fingerprints in one table: 0
        when they share a bucket, 1 when a wide lookup of one reads the other's bucket."""
        return min(
            (int.from_bytes(x, "big") ^ int.from_bytes(y, "big")).bit_count()
            for x, y in zip(self.tkeys(a), self.tkeys(b))
        )

    def tkeys_np(self, fps: np.ndarray, table: int) -> np.ndarray:
        """Table keys of many 64-bit fingerprints (uint64 array) as uint64 integers."""
        v = np.zeros(len(fps), dtype=np.uint64)
        for s, m, w in self.segments[table]:
            part = (fps >> np.uint64(s)) & np.uint64(m)
            v = part if w == 64 else (v << np.uint64(w)) | part
        return v


def _popcount_lut(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return cast("np.ndarray", _POPCOUNT8[a.view(np.uint8)].reshape(*a.shape, a.itemsize).sum(axis=-1, dtype=np.int64))


_POPCOUNT8 = np.array([i.bit_count() for i in range(256)], dtype=np.uint8)
_popcount: Callable[[np.ndarray], np.ndarray] = getattr(np, "bitwise_count", _popcount_lut)


def verify(raw: bytes, fp: bytes, k: int, limit: int) -> tuple[dict[bytes, int], int]:
    """Verify candidates: ``raw`` is candidate fingerprints packed back to back (``len(fp)`` bytes
    each, duplicates allowed). Returns ``({fp_bytes: distance}`` of those within ``k``, number of
    candidates)``. At most ``limit`` candidates are verified (``limit <= 0``: all); ``fp`` itself
    is always reported when it is among them."""
    width = len(fp)
    # Native byte order, the query read in the same order: XOR, popcount and equality do not
    # depend on the byte order, and numpy works on native words without a byte swap per word.
    words = np.frombuffer(raw, dtype=np.uint64)
    found: dict[bytes, int] = {}
    if width == 8:
        q = np.uint64(int.from_bytes(fp, sys.byteorder))
        total = len(words)
        if 0 < limit < total:
            if (words == q).any():
                found[fp] = 0  # exact duplicates are found, cap or not
            words = words[:limit]
        dist = _popcount(words ^ q)
    else:
        rows = words.reshape(-1, 2)
        hi, lo = np.uint64(int.from_bytes(fp[:8], sys.byteorder)), np.uint64(int.from_bytes(fp[8:], sys.byteorder))
        total = len(rows)
        if 0 < limit < total:
            if ((rows[:, 0] == hi) & (rows[:, 1] == lo)).any():
                found[fp] = 0
            rows = rows[:limit]
        dist = _popcount(rows[:, 0] ^ hi) + _popcount(rows[:, 1] ^ lo)
    for i in np.flatnonzero(dist <= k).tolist():
        found[raw[i * width : i * width + width]] = int(dist[i])
    return found, total


def wide_found(raw: bytes, fp: bytes, k: int, wide: int, limit: int) -> dict[bytes, int]:
    """``{fp_bytes: distance}`` of the candidates in ``raw`` (as :func:`verify`'s, at most ``limit``
    of them verified) at a distance ``k < d <= wide``: the wide tier's candidates."""
    found, _ = verify(raw, fp, wide, limit)
    return {f: d for f, d in found.items() if d > k}


class Hit(NamedTuple):
    """A stored key within the searched distance: its key bytes, fingerprint bytes and distance."""

    key: bytes
    fp: bytes
    distance: int


class Probe(NamedTuple):
    """The result of one lookup: ``hits`` nearest first (ties by key bytes), ``candidates`` (bucket
    entries read) and ``capped`` (more than the limit: only the first ``limit`` were verified).
    ``wide``: a :meth:`FingerprintStore.check_and_add` with ``wide > k`` and no hits, the keys at a
    distance ``k < d <= wide`` that its wide lookup found, in the same order; they are no hits."""

    hits: list[Hit]
    candidates: int
    capped: bool
    wide: tuple[Hit, ...] = ()


class Snapshot(NamedTuple):
    """What one decision on a key reads (:meth:`FingerprintStore.snapshot`): the key's ``record``
    and stored fingerprint ``fp`` (``None``: none), the ``probe`` of the page's fingerprint (every
    key within ``k``, the decided key's own entry included; ``probe.wide``: those the wide lookup
    found), the ``records`` of every key found, and the ``version`` that :meth:`FingerprintStore.apply`
    checks (``spec``: the arguments it re-reads with); ``evidence``: the evidence read with them
    (``None``: there is none), where the store reads it in the same round trip."""

    record: bytes | None
    fp: bytes | None
    probe: Probe
    records: dict[bytes, bytes]
    version: Any
    spec: Any = None
    evidence: Mapping[bytes, bytes | None] | None = None


class Writes(NamedTuple):
    """What one decision writes for its key (:meth:`FingerprintStore.apply`): its fingerprint
    (``fp``: ``None`` as it is, ``b""`` removed, else stored), its record (``record``: ``None`` as
    it is, ``(b"", None)`` deleted, else ``(value, due)``), its evidence (``None`` as it is, ``b""``
    deleted) and aux blobs (``None``: deleted)."""

    fp: bytes | None = None
    record: tuple[bytes, float | None] | None = None
    evidence: bytes | None = None
    aux: Mapping[str, bytes | None] | None = None


def hit_order(hit: Hit) -> tuple[int, bytes]:
    """The order of :attr:`Probe.hits`: nearest first, ties by key bytes."""
    return hit.distance, hit.key


def sort_hits(
    found: Mapping[bytes, int], keys_of: Callable[[bytes], Sequence[bytes]], exclude: bytes | None
) -> list[Hit]:
    """Hits for verified fingerprints (``{fp: distance}``), nearest first, ties by key."""
    hits = [Hit(key, fp, d) for fp, d in found.items() for key in keys_of(fp) if key != exclude]
    hits.sort(key=hit_order)
    return hits


class FingerprintStore(ABC):
    """Fingerprints filed in tables, per-key records with a due-time index, aux blobs, metadata.

    Not necessarily thread-safe: :class:`~scrapy_simhash.store.index.SimhashIndex` serialises its calls.
    """

    #: Location of the store (a directory, a URL), ``None`` for one that lives in memory only.
    path: str | None = None
    #: Set by :meth:`open` when the store is read-only; writes then raise an error.
    readonly: bool = False

    @classmethod
    def from_crawler(cls, crawler: Crawler, path: Path) -> Self:
        """Build the store of one index of a crawl. ``path``: the directory the crawl gives this
        index (``<SIMHASH_DIR>/<spider>/pages`` or ``/items``); a store that is not a directory
        can derive its own name from it. Read the store's own settings from ``crawler.settings``."""
        return cls()

    # -- life cycle -----------------------------------------------------------------------

    @abstractmethod
    def open(self) -> bytes | None:
        """Check the location and return the stored metadata (``None``: a new, empty store).
        Must not modify anything that exists there; raise
        :class:`~scrapy_simhash.errors.NotAnIndexError` for a location that holds something
        else than an index of this store type."""

    @abstractmethod
    def configure(self, layout: TableLayout) -> None:
        """Prepare the tables of ``layout`` (called once, after :meth:`open`)."""

    @abstractmethod
    def create_meta(self, value: bytes) -> bytes:
        """Store ``value`` as the metadata if there is none yet; return the stored metadata
        (another process's, when it created the store first). Atomic."""

    @abstractmethod
    def write_meta(self, value: bytes) -> None:
        """Replace the metadata."""

    def destroy(self) -> bool:
        """Delete everything stored at this location if it is an index of this store type (or
        empty); ``False`` if there was nothing. Anything else raises
        :class:`~scrapy_simhash.errors.NotAnIndexError` and stays. Called before :meth:`open`."""
        return False

    def close(self) -> None:  # noqa: B027 - optional: a no-op for a store with nothing to release
        """Release resources and make committed writes durable. Idempotent."""

    # -- groups (optional) ------------------------------------------------------------------

    def begin(self) -> None:  # noqa: B027 - optional: a store without groups need not override it
        """Start a group: the operations until :meth:`commit` are one transaction where the
        store can do that (LMDB), so that they cost one commit; a store that cannot (one round
        trip per operation) keeps each operation atomic and need not override these. A store
        that runs out of room inside a group aborts it and raises
        :class:`~scrapy_simhash.errors.StoreFullError`; the index then replays the group."""

    def hold(self, keys: Sequence[bytes]) -> None:  # noqa: B027 - optional, as begin
        """Inside a group: the records of ``keys`` are the group's until it ends or writes them
        (the write of a key's record ends its decision), so that a read-decide-write of a key's
        record by two processes at once happens one after the other (the other's group waits).
        A store whose group is one write transaction that also serialises processes (LMDB) has
        that already and need not override this; one that keeps each call atomic on its own
        (Redis) locks the keys."""

    def commit(self) -> None:  # noqa: B027 - optional, as begin
        """End the group started by :meth:`begin`, keeping its writes."""

    def abort(self) -> None:  # noqa: B027 - optional, as begin
        """End the group started by :meth:`begin`, dropping its writes where the store can."""

    # -- decisions (optional) ---------------------------------------------------------------

    #: Whether the store decides optimistically (:meth:`snapshot`, then :meth:`apply`) rather than
    #: in a group (:meth:`begin`, ..., :meth:`commit`): a store whose calls are round trips (Redis).
    snapshots = False

    def snapshot(
        self, key: bytes, fp: bytes | None, k: int, limit: int, wide: int = 0, evidence: bool = False
    ) -> Snapshot:
        """One atomic read of what a decision on ``key`` needs (see :class:`Snapshot`): ``fp``
        (``None``: no lookup) is looked up as by :meth:`near` (``k``, ``limit``) and, with
        ``wide > k``, by :meth:`check_and_add`'s wide lookup; with ``evidence``, the evidence of
        the key and of the keys found within ``k`` where the store can read it in the same round
        trip. Only where :attr:`snapshots`."""
        raise NotImplementedError

    def apply(self, snapshot: Snapshot, writes: Writes) -> bool:
        """Atomically: when nothing that ``snapshot`` read has changed since (the key's record and
        fingerprint, the buckets read, the keys of the fingerprints found) and no group holds the
        key (:meth:`hold`), write ``writes`` for its key and return ``True``; else write nothing
        and return ``False`` (the caller reads again and decides again)."""
        raise NotImplementedError

    # -- fingerprints -----------------------------------------------------------------------

    @abstractmethod
    def near(self, fp: bytes, k: int, limit: int, exclude: bytes | None = None) -> Probe:
        """Every stored key within Hamming distance ``k`` of ``fp`` except ``exclude``: read the
        buckets ``layout.tkeys(fp)``, verify at most ``limit`` candidates (``<= 0``: all) with
        :func:`verify`, map the fingerprints to their keys (:func:`sort_hits`)."""

    @abstractmethod
    def check_and_add(self, key: bytes, fp: bytes, k: int, limit: int, wide: int = 0) -> Probe:
        """Atomically: :meth:`near` of ``fp`` excluding ``key``; if it has hits, remove ``key``'s
        own fingerprint (the key now serves a duplicate) and store nothing; otherwise store
        ``fp`` as ``key``'s fingerprint (replacing its earlier one). Returns the lookup.

        ``wide > k`` and no hits: the lookup also reads, in every table, the buckets of the keys
        one bit away from ``fp``'s (``layout.probe_tkeys(layout.tkeys(fp))``) and returns in ``Probe.wide``
        the keys other than ``key`` whose fingerprints, among the candidates of all the buckets
        read (at most ``limit`` verified), lie at a distance ``k < d <= wide``
        (:func:`wide_found`). They change nothing: the caller decides (a store whose buckets
        hold more than one table key each, as Redis's, may return more; the index keeps those
        within one bit of a table key, ``layout.key_distance <= 1``)."""

    @abstractmethod
    def put(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        """Store each ``(key, fp)`` (replacing the key's earlier fingerprint; the last pair of a
        key wins), all of them or none: a crash or an error leaves none of the call stored."""

    @abstractmethod
    def remove(self, keys: Sequence[bytes]) -> int:
        """Forget the fingerprints of ``keys`` (their records stay); return how many had one."""

    @abstractmethod
    def get(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """The fingerprint of each key, or ``None``."""

    @abstractmethod
    def count(self) -> int:
        """Number of keys with a fingerprint."""

    @abstractmethod
    def scan(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        """Up to ``limit`` ``(key, fp)`` pairs following key ``after`` (``None``: from the start)
        in the store's own stable order; pass the last key returned to get the next page."""

    # -- records ----------------------------------------------------------------------------

    @abstractmethod
    def get_records(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """The record of each key, or ``None``."""

    @abstractmethod
    def put_records(
        self, items: Sequence[tuple[bytes, bytes, float | None]], evidence: Mapping[bytes, bytes | None] | None = None
    ) -> None:
        """Store each ``(key, record, due)`` (replacing the key's record and due time; ``due``:
        Unix seconds >= 0, or ``None`` for a record that is never due), and each key's
        ``evidence`` (``None``: delete it; a key not in it keeps its own), all or none."""

    @abstractmethod
    def get_evidence(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """The evidence of each key, or ``None``."""

    @abstractmethod
    def delete_records(self, keys: Sequence[bytes]) -> int:
        """Delete the records (and due times and evidence) of ``keys``; return how many records
        there were."""

    @abstractmethod
    def scan_records(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        """Up to ``limit`` ``(key, record)`` pairs following key ``after``, as :meth:`scan`."""

    @abstractmethod
    def records_due(self, before: float, limit: int) -> list[tuple[bytes, float]]:
        """Up to ``limit`` ``(key, due)`` of records due at or before ``before``, earliest first
        (ties by key). Due times are kept to the millisecond. Exact: each record's last written
        due time, however the store indexes them (LMDB keeps a lower bound per record and checks
        it here, moving stale entries: a call may write)."""

    def due_states(self, after: bytes | None, limit: int, keys: bool = True) -> tuple[bytes | None, list[bytes], bytes]:
        """Up to ``limit`` records with a due time, following the cursor ``after`` (``None``: from
        the start) in the store's own stable order: ``(cursor, keys, hots)``, ``cursor`` that of
        the last row (``None``: no row) and ``hots`` the records'
        :func:`~scrapy_simhash.store.hot.hot_of` one after the other, what a recrawl selection
        reads (``keys`` false: the keys may be left out). This default reads every due time and
        the page's records on each call; a store that keeps hot states beside its records answers
        from them alone."""
        from scrapy_simhash.store.hot import hot_of

        listed = [(due_ms(due).to_bytes(8, "big") + key, key, due) for key, due in self.records_due(MAX_DUE, 2**62)]
        start = 0 if after is None else bisect.bisect_right([row[0] for row in listed], after)
        page = listed[start : start + max(limit, 0)]
        records = self.get_records([key for _, key, _ in page])
        rows = [
            (cursor, key, hot_of(record, due_ms(due)))
            for (cursor, key, due), record in zip(page, records)
            if record is not None
        ]
        return (page[-1][0] if page else None), [key for _, key, _ in rows], b"".join(hot for _, _, hot in rows)

    # -- aux blobs --------------------------------------------------------------------------

    @abstractmethod
    def get_aux(self, names: Sequence[str]) -> list[bytes | None]:
        """The aux blob of each name, or ``None``."""

    @abstractmethod
    def put_aux(self, items: Mapping[str, bytes | None]) -> None:
        """Store (``None``: delete) aux blobs, all or none."""

    def stats(self) -> dict[str, Any]:
        """Backend figures for benchmarks and the ``info`` command (sizes in bytes)."""
        return {}

    def check(self) -> None:  # noqa: B027 - optional: a no-op for a store with nothing to damage
        """Read everything stored once; :class:`~scrapy_simhash.errors.StoreError` (kind
        ``corrupt``) if part of it cannot be read. A store with nothing to damage (memory, a
        server that checks its own data) need not override this."""


#: The latest due time a store keeps (Unix seconds; about 292 million years from 1970).
MAX_DUE = (2**63 - 1) // 1000


def due_ms(due: float) -> int:
    """A due time as whole milliseconds (what stores keep); ``ValueError`` for a negative one
    or one after :data:`MAX_DUE`."""
    if not 0 <= due <= MAX_DUE:  # also NaN
        raise ValueError(f"due ({due!r}) is invalid: it must be Unix seconds >= 0 (at most {MAX_DUE}) or None")
    return round(due * 1000)
