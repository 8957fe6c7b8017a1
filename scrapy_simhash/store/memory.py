"""In-memory store (dicts): tests, one-off crawls (``SIMHASH_STORE``), deduplicating a file."""

from __future__ import annotations

import bisect
import threading
from typing import TYPE_CHECKING, Any

from scrapy_simhash.errors import SimhashIndexError
from scrapy_simhash.store.base import (
    MAX_DUE,
    FingerprintStore,
    Probe,
    TableLayout,
    due_ms,
    sort_hits,
    verify,
    wide_found,
)
from scrapy_simhash.store.hot import hot_of

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

_MISSING = object()
#: Candidates verified one by one (more: with :func:`~scrapy_simhash.store.base.verify`'s arrays).
_FEW = 32


class MemoryStore(FingerprintStore):
    """A :class:`~scrapy_simhash.store.base.FingerprintStore` in Python dicts; nothing persists.

    Each operation holds a lock (threads may share the store); a group (:meth:`begin`) keeps an
    undo log, so that :meth:`abort` leaves no trace. ``undo=False``: no undo log, for one writer
    that drops the store on any error (the ``dedup`` command); after an abort it refuses new groups.
    """

    def __init__(self, *, undo: bool = True) -> None:
        self.path = None
        self._meta: bytes | None = None
        self._layout: TableLayout | None = None
        # A bucket holds one value as itself (most buckets), several as a set.
        self._tables: list[dict[bytes, bytes | set[bytes]]] = []
        self._fps: dict[bytes, bytes | set[bytes]] = {}  # fp -> keys
        self._keys: dict[bytes, bytes] = {}  # key -> fp
        self._records: dict[bytes, tuple[bytes, int | None]] = {}
        self._due: list[tuple[int, bytes]] = []  # sorted (due_ms, key)
        self._evidence: dict[bytes, bytes] = {}
        self._aux: dict[str, bytes] = {}
        # Undo entries: (function, *arguments), called in reverse order by abort().
        self._undo: list[tuple[Any, ...]] | None = None
        self._undoable = undo
        self._aborted = False
        self._lock = threading.RLock()
        self._last_fp: bytes | None = None
        self._last_tkeys: list[bytes] = []

    def open(self) -> bytes | None:
        return self._meta

    def configure(self, layout: TableLayout) -> None:
        if not self._tables:
            self._tables = [{} for _ in layout.tables]
        self._layout = layout
        self._last_fp = None  # table keys of another layout

    def create_meta(self, value: bytes) -> bytes:
        with self._lock:
            if self._meta is None:
                self.write_meta(value)
            assert self._meta is not None
            return self._meta

    def write_meta(self, value: bytes) -> None:
        with self._lock:
            if self._undo is not None:
                self._undo.append((setattr, self, "_meta", self._meta))
            self._meta = bytes(value)

    # -- groups ----------------------------------------------------------------------------

    def begin(self) -> None:
        self._lock.acquire()
        if self._aborted:
            self._lock.release()
            raise SimhashIndexError(
                "The in-memory index without an undo log was left part-written by an aborted group: make a new one"
            )
        self._undo = [] if self._undoable else None

    def commit(self) -> None:
        self._undo = None
        self._lock.release()

    def abort(self) -> None:
        undo, self._undo = self._undo, None
        if not self._undoable:
            self._aborted = True
        for fn, *args in reversed(undo or ()):
            fn(*args)
        self._lock.release()

    def _set(self, d: dict[Any, Any], k: Any, v: Any) -> None:
        undo = self._undo
        if undo is not None:
            old = d.get(k, _MISSING)
            undo.append((d.pop, k, None) if old is _MISSING else (d.__setitem__, k, old))
        d[k] = v

    def _del(self, d: dict[Any, Any], k: Any) -> bool:
        old = d.pop(k, _MISSING)
        if old is _MISSING:
            return False
        if self._undo is not None:
            self._undo.append((d.__setitem__, k, old))
        return True

    def _set_add(self, d: dict[bytes, bytes | set[bytes]], k: bytes, v: bytes) -> bool:
        """Add ``v`` to the bucket ``d[k]``; ``True`` if the bucket was empty before."""
        s = d.get(k)
        if s is None:
            self._set(d, k, v)
            return True
        if isinstance(s, bytes):
            if s != v:
                self._set(d, k, {s, v})
        elif v not in s:
            s.add(v)
            if self._undo is not None:
                self._undo.append((s.discard, v))
        return False

    def _set_remove(self, d: dict[bytes, bytes | set[bytes]], k: bytes, v: bytes) -> bool:
        """Remove ``v`` from the bucket ``d[k]``; ``True`` if the bucket is empty afterwards."""
        s = d.get(k)
        if s is None:
            return True
        if isinstance(s, bytes):
            if s != v:
                return False
            self._del(d, k)
            return True
        if v in s:
            s.discard(v)
            if self._undo is not None:
                self._undo.append((s.add, v))
        if not s:
            self._del(d, k)
            return True
        return False

    @staticmethod
    def _members(bucket: bytes | set[bytes] | None) -> list[bytes]:
        """A bucket's values, sorted."""
        if bucket is None:
            return []
        return [bucket] if isinstance(bucket, bytes) else sorted(bucket)

    # -- fingerprints ----------------------------------------------------------------------

    def _tkeys(self, fp: bytes) -> list[bytes]:
        if fp == self._last_fp:  # a lookup, then its add
            return self._last_tkeys
        assert self._layout is not None, "configure() first"
        self._last_fp, self._last_tkeys = fp, self._layout.tkeys(fp)
        return self._last_tkeys

    def near(self, fp: bytes, k: int, limit: int, exclude: bytes | None = None) -> Probe:
        with self._lock:
            parts: list[bytes] = []
            for table, tkey in zip(self._tables, self._tkeys(fp)):
                bucket = table.get(tkey)
                if bucket is not None:
                    parts.extend(self._members(bucket))
            total = len(parts)
            if total <= _FEW and not 0 < limit < total:  # a few: no arrays (verify's result)
                q = int.from_bytes(fp, "big")
                found = {}
                for other in parts:
                    distance = (int.from_bytes(other, "big") ^ q).bit_count()
                    if distance <= k:
                        found[other] = distance
            else:
                found, total = verify(b"".join(parts), fp, k, limit)
            return Probe(sort_hits(found, self._keys_of, exclude), total, 0 < limit < total)

    def _keys_of(self, fp: bytes) -> list[bytes]:
        return self._members(self._fps.get(fp))

    def check_and_add(self, key: bytes, fp: bytes, k: int, limit: int, wide: int = 0) -> Probe:
        with self._lock:
            probe = self.near(fp, k, limit, key)
            if probe.hits:
                self._remove_one(key)
                return probe
            if wide > k:
                assert self._layout is not None
                parts: list[bytes] = []
                tkeys = self._tkeys(fp)
                for table, tkey, around in zip(self._tables, tkeys, self._layout.probe_tkeys(tkeys)):
                    for tk in (tkey, *around):
                        bucket = table.get(tk)
                        if bucket is not None:
                            parts.extend(self._members(bucket))
                found = wide_found(b"".join(parts), fp, k, wide, limit)
                probe = probe._replace(wide=tuple(sort_hits(found, self._keys_of, key)))
            self._add(key, fp)
            return probe

    def _add(self, key: bytes, fp: bytes) -> None:
        old = self._keys.get(key)
        if old == fp:
            return
        if old is not None:
            self._unfile(key, old)
        self._set(self._keys, key, fp)
        if self._set_add(self._fps, fp, key):
            for table, tkey in zip(self._tables, self._tkeys(fp)):
                self._set_add(table, tkey, fp)

    def _unfile(self, key: bytes, fp: bytes) -> None:
        if self._set_remove(self._fps, fp, key):
            for table, tkey in zip(self._tables, self._tkeys(fp)):
                self._set_remove(table, tkey, fp)

    def _remove_one(self, key: bytes) -> bool:
        old = self._keys.get(key)
        if old is None:
            return False
        self._del(self._keys, key)
        self._unfile(key, old)
        return True

    def put(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        with self._lock:
            for key, fp in items:
                self._add(key, fp)

    def remove(self, keys: Sequence[bytes]) -> int:
        with self._lock:
            return sum(self._remove_one(key) for key in keys)

    def get(self, keys: Sequence[bytes]) -> list[bytes | None]:
        with self._lock:
            return [self._keys.get(key) for key in keys]

    def count(self) -> int:
        return len(self._keys)

    @staticmethod
    def _page(d: Mapping[bytes, Any], after: bytes | None, limit: int) -> list[bytes]:
        keys = sorted(d)
        start = 0 if after is None else bisect.bisect_right(keys, after)
        return keys[start : start + limit]

    def scan(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        with self._lock:
            return [(key, self._keys[key]) for key in self._page(self._keys, after, limit)]

    # -- records ---------------------------------------------------------------------------

    def get_records(self, keys: Sequence[bytes]) -> list[bytes | None]:
        with self._lock:
            return [self._records[key][0] if key in self._records else None for key in keys]

    def _set_due(self, key: bytes, old: int | None, new: int | None) -> None:
        due = self._due
        undo = self._undo
        if old is not None:
            i = bisect.bisect_left(due, (old, key))
            del due[i]
            if undo is not None:
                undo.append((bisect.insort, due, (old, key)))
        if new is not None:
            bisect.insort(due, (new, key))
            if undo is not None:
                undo.append((due.remove, (new, key)))

    def put_records(
        self, items: Sequence[tuple[bytes, bytes, float | None]], evidence: Mapping[bytes, bytes | None] | None = None
    ) -> None:
        with self._lock:
            checked = [(key, bytes(value), None if due is None else due_ms(due)) for key, value, due in items]
            for key, value, due in checked:
                old = self._records.get(key)
                self._set_due(key, None if old is None else old[1], due)
                self._set(self._records, key, (value, due))
            for key, framed in (evidence or {}).items():
                if framed is None:
                    self._del(self._evidence, key)
                else:
                    self._set(self._evidence, key, bytes(framed))

    def get_evidence(self, keys: Sequence[bytes]) -> list[bytes | None]:
        with self._lock:
            return [self._evidence.get(key) for key in keys]

    def delete_records(self, keys: Sequence[bytes]) -> int:
        with self._lock:
            n = 0
            for key in keys:
                old = self._records.get(key)
                self._del(self._evidence, key)
                if old is not None:
                    self._set_due(key, old[1], None)
                    n += self._del(self._records, key)
            return n

    def scan_records(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        with self._lock:
            return [(key, self._records[key][0]) for key in self._page(self._records, after, limit)]

    def records_due(self, before: float, limit: int) -> list[tuple[bytes, float]]:
        with self._lock:
            end = bisect.bisect_left(self._due, (due_ms(min(max(before, 0.0), MAX_DUE)) + 1,))
            return [(key, ms / 1000) for ms, key in self._due[: min(end, max(limit, 0))]]

    def due_states(self, after: bytes | None, limit: int, keys: bool = True) -> tuple[bytes | None, list[bytes], bytes]:
        with self._lock:
            start = (
                0 if after is None else bisect.bisect_right(self._due, (int.from_bytes(after[:8], "big"), after[8:]))
            )
            rows = self._due[start : start + max(limit, 0)]
            last = rows[-1][0].to_bytes(8, "big") + rows[-1][1] if rows else None
            return last, [key for _, key in rows], b"".join(hot_of(self._records[key][0], ms) for ms, key in rows)

    # -- aux -------------------------------------------------------------------------------

    def get_aux(self, names: Sequence[str]) -> list[bytes | None]:
        with self._lock:
            return [self._aux.get(name) for name in names]

    def put_aux(self, items: Mapping[str, bytes | None]) -> None:
        with self._lock:
            for name, value in items.items():
                if value is None:
                    self._del(self._aux, name)
                else:
                    self._set(self._aux, name, bytes(value))

    def stats(self) -> dict[str, Any]:
        return {
            "keys": len(self._keys),
            "fps": len(self._fps),
            "records": len(self._records),
            "evidence": len(self._evidence),
        }
