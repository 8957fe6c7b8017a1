"""The storage interface under :class:`~scrapy_simhash.index.SimhashIndex`: buckets, key maps, records.

Writing your own store
======================

A store keeps bytes; the index owns every decision about what the bytes mean (the table layout,
the encoding of fingerprints and keys, the metadata). Subclass :class:`FingerprintStore` and
implement every abstract method; the docstrings below are the whole contract. The same
contract suite (``tests/test_store_contract.py``) runs against every backend.

Vocabulary:

``table`` / ``tkey``
    The index splits a fingerprint into blocks and keeps ``n_tables`` tables; a fingerprint is
    filed in every table under that table's key (``tkey``, ``key_width`` bytes, big-endian).
``fp_bytes``
    A fingerprint as ``value_width`` big-endian bytes (8 for 64-bit, 16 for 128-bit).
``key_id``
    The bytes that stand for a user key (an URL): its UTF-8 encoding, or, for keys longer than
    :attr:`FingerprintStore.max_key_id_size`, a hashed form whose original is kept with
    :meth:`FingerprintStore.put_alias`. At most :attr:`FingerprintStore.max_key_id_size` bytes,
    never empty.

Namespaces: ``tables`` (``tkey -> {fp_bytes}``, a set per key), ``fps`` (``fp_bytes ->
{key_id}``), ``keys`` (``key_id -> fp_bytes``), ``records`` (``key_id -> bytes``), ``aliases``
(``key_id -> original key bytes``) and one metadata value.

Transactions: the index calls :meth:`~FingerprintStore.begin` before and :meth:`~FingerprintStore.commit`
or :meth:`~FingerprintStore.abort` after every group of operations; there is at most one
transaction at a time per store object, and no operation is called outside one. A write
transaction is atomic: after ``abort()`` (or a crash) none of its writes are visible. A store
that runs out of space raises :class:`StoreFullError` from a write operation or from ``commit()``
after it has aborted the transaction and made room; the index then replays the transaction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    import numpy as np


class StoreFullError(Exception):
    """The store ran out of space; it aborted the transaction, grew, and wants it replayed."""


class FingerprintStore(ABC):
    """Buckets of fingerprints per table key, key <-> fingerprint maps, per-key records, metadata.

    Keys and values are bytes. Not thread-safe: :class:`~scrapy_simhash.index.SimhashIndex`
    serialises calls with a lock.
    """

    #: Directory or location of the store, ``None`` for one that lives in memory only.
    path: str | None = None
    #: Largest ``key_id`` the store accepts (LMDB: 511 bytes).
    max_key_id_size: int = 511
    #: Set by :meth:`open` when the store is read-only; writes then raise an error.
    readonly: bool = False

    # -- life cycle -----------------------------------------------------------------------

    def open(self) -> None:
        """Check the location and prepare to read the metadata. Must not modify anything that
        already exists there; raise :class:`~scrapy_simhash.index.NotAnIndexError` for a location
        that holds something else than an index of this store type."""

    @abstractmethod
    def configure(self, *, n_tables: int, key_width: int, value_width: int) -> None:
        """Prepare the tables (called once, after :meth:`open` and :meth:`read_meta`, before the
        first transaction). ``key_width``/``value_width``: sizes in bytes of ``tkey``/``fp_bytes``."""

    def close(self) -> None:
        """Release resources and make committed writes durable. Idempotent."""

    # -- transactions -----------------------------------------------------------------------

    @abstractmethod
    def begin(self, write: bool) -> None:
        """Start a read (``write=False``) or write transaction. Read transactions see a consistent
        snapshot; write transactions are serialised (across processes, for stores that say so)."""

    @abstractmethod
    def commit(self) -> None:
        """Make the current transaction's writes visible and, for a durable store, durable."""

    @abstractmethod
    def abort(self) -> None:
        """Drop the current transaction's writes. No error if there is no transaction."""

    # -- metadata ---------------------------------------------------------------------------

    @abstractmethod
    def read_meta(self) -> bytes | None:
        """The metadata value, or ``None`` for a new store. May be called before :meth:`configure`
        and outside a transaction (it then reads what :meth:`open` found)."""

    @abstractmethod
    def write_meta(self, value: bytes) -> None:
        """Replace the metadata value (in a write transaction)."""

    # -- tables -----------------------------------------------------------------------------

    @abstractmethod
    def probe(self, tkeys: Sequence[bytes], limit: int) -> tuple[np.ndarray, int]:
        """Candidates for one lookup: ``tkeys[t]`` is the key to read in table ``t``.

        Returns ``(fps, total)``: ``fps`` holds the fingerprints filed under those keys, table
        by table, each bucket in ascending byte order, as a numpy array of big-endian uint64
        (dtype ``>u8``), shape ``(n,)`` for 8-byte values and ``(n, 2)`` (high, low) for 16-byte
        values; ``total`` is the number of entries in those buckets. When ``total > limit``,
        only the first ``limit`` entries are returned (``limit <= 0``: no limit). A fingerprint
        filed in several of the buckets appears once per bucket.
        """

    @abstractmethod
    def table_add(self, table: int, tkey: bytes, fp_bytes: bytes) -> None:
        """File ``fp_bytes`` under ``tkey`` in table ``table`` (no-op if already there)."""

    @abstractmethod
    def table_remove(self, table: int, tkey: bytes, fp_bytes: bytes) -> None:
        """Remove ``fp_bytes`` from bucket ``tkey`` of table ``table`` (no-op if absent)."""

    # -- fingerprint <-> key maps -----------------------------------------------------------

    @abstractmethod
    def get_fp(self, key_id: bytes) -> bytes | None:
        """The fingerprint stored for ``key_id``, or ``None``."""

    @abstractmethod
    def set_fp(self, key_id: bytes, fp_bytes: bytes) -> None:
        """Store (or replace) ``key_id``'s fingerprint in ``keys``. Does not touch ``fps``."""

    @abstractmethod
    def delete_fp(self, key_id: bytes) -> bool:
        """Remove ``key_id`` from ``keys``; ``True`` if it was there. Does not touch ``fps``."""

    @abstractmethod
    def keys_of(self, fp_bytes: bytes) -> list[bytes]:
        """Every ``key_id`` filed under ``fp_bytes`` in ``fps``, in ascending byte order."""

    @abstractmethod
    def link(self, fp_bytes: bytes, key_id: bytes) -> bool:
        """Add ``key_id`` to ``fp_bytes``'s set in ``fps``; ``True`` if the set was empty before."""

    @abstractmethod
    def unlink(self, fp_bytes: bytes, key_id: bytes) -> bool:
        """Remove ``key_id`` from ``fp_bytes``'s set; ``True`` if the set is empty afterwards."""

    @abstractmethod
    def count(self) -> int:
        """Number of entries in ``keys``."""

    @abstractmethod
    def iter_fps(self) -> Iterator[tuple[bytes, bytes]]:
        """``(key_id, fp_bytes)`` for every key, in ``key_id`` byte order (in a read transaction,
        consumed before it ends)."""

    # -- records and aliases ----------------------------------------------------------------

    @abstractmethod
    def get_record(self, key_id: bytes) -> bytes | None:
        """The record stored under ``key_id``, or ``None``."""

    @abstractmethod
    def put_record(self, key_id: bytes, value: bytes) -> None:
        """Store (or replace) the record of ``key_id``."""

    @abstractmethod
    def delete_record(self, key_id: bytes) -> bool:
        """Remove the record of ``key_id``; ``True`` if there was one."""

    @abstractmethod
    def get_alias(self, key_id: bytes) -> bytes | None:
        """The original key bytes of a hashed ``key_id``, or ``None``."""

    @abstractmethod
    def put_alias(self, key_id: bytes, key: bytes) -> None:
        """Remember the original key bytes of a hashed ``key_id``."""

    @abstractmethod
    def delete_alias(self, key_id: bytes) -> None:
        """Forget a hashed ``key_id``'s original (no-op if unknown)."""

    # -- bulk loading (optional fast paths) --------------------------------------------------

    def is_empty(self) -> bool:
        """``True`` when no key, fingerprint or record is stored (in a transaction)."""
        return self.count() == 0

    def bulk_table(self, table: int, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """:meth:`table_add` for many ``(tkey, fp_bytes)`` pairs sorted by ``(tkey, fp_bytes)``."""
        for tkey, fp_bytes in pairs:
            self.table_add(table, tkey, fp_bytes)

    def bulk_links(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """:meth:`link` for many ``(fp_bytes, key_id)`` pairs sorted by ``(fp_bytes, key_id)``."""
        for fp_bytes, key_id in pairs:
            self.link(fp_bytes, key_id)

    def bulk_fps(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """:meth:`set_fp` for many ``(key_id, fp_bytes)`` pairs sorted by ``key_id``."""
        for key_id, fp_bytes in pairs:
            self.set_fp(key_id, fp_bytes)

    def stats(self) -> dict[str, int]:
        """Backend figures for benchmarks and the ``inspect`` command (sizes in bytes)."""
        return {}
