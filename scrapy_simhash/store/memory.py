"""In-memory store (dicts): tests, small crawls, one-off deduplication of a file."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from scrapy_simhash.store.base import FingerprintStore

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence


class MemoryStore(FingerprintStore):
    """A :class:`~scrapy_simhash.store.base.FingerprintStore` in Python dicts; nothing persists.

    Write transactions keep an undo log, so that ``abort()`` (and a failed
    :meth:`SimhashIndex.batch() <scrapy_simhash.index.SimhashIndex.batch>`) leaves no trace.
    """

    max_key_id_size = 511

    def __init__(self) -> None:
        self.path = None
        self._meta: bytes | None = None
        self._tables: list[dict[bytes, set[bytes]]] = []
        self._value_width = 8
        self._fps: dict[bytes, set[bytes]] = {}
        self._keys: dict[bytes, bytes] = {}
        self._records: dict[bytes, bytes] = {}
        self._aliases: dict[bytes, bytes] = {}
        self._undo: list[Callable[[], Any]] | None = None
        self._in_txn = False

    def configure(self, *, n_tables: int, key_width: int, value_width: int) -> None:
        if not self._tables:
            self._tables = [{} for _ in range(n_tables)]
        self._value_width = value_width

    # -- transactions ----------------------------------------------------------------------

    def begin(self, write: bool) -> None:
        self._in_txn = True
        self._undo = [] if write else None

    def commit(self) -> None:
        self._undo = None
        self._in_txn = False

    def abort(self) -> None:
        undo, self._undo = self._undo, None
        if undo:
            for fn in reversed(undo):
                fn()
        self._in_txn = False

    def _log(self, fn: Callable[[], Any]) -> None:
        if self._undo is None:
            raise RuntimeError("MemoryStore: write outside a write transaction")
        self._undo.append(fn)

    # mapping helpers that record how to undo themselves
    def _dict_set(self, d: dict[bytes, Any], k: bytes, v: Any) -> None:
        if k in d:
            old = d[k]
            self._log(lambda: d.__setitem__(k, old))
        else:
            self._log(lambda: d.pop(k, None))
        d[k] = v

    def _dict_del(self, d: dict[bytes, Any], k: bytes) -> bool:
        if k not in d:
            return False
        old = d.pop(k)
        self._log(lambda: d.__setitem__(k, old))
        return True

    def _set_add(self, d: dict[bytes, set[bytes]], k: bytes, v: bytes) -> bool:
        s = d.get(k)
        was_empty = not s
        if s is None:
            s = d[k] = set()
            self._log(lambda: d.pop(k, None))
        if v not in s:
            s.add(v)
            self._log(lambda: s.discard(v))
        return was_empty

    def _set_remove(self, d: dict[bytes, set[bytes]], k: bytes, v: bytes) -> bool:
        s = d.get(k)
        if s is None:
            return True
        if v in s:
            s.discard(v)
            self._log(lambda: s.add(v))
        if not s:
            del d[k]
            self._log(lambda: d.__setitem__(k, s))
            return True
        return False

    # -- metadata --------------------------------------------------------------------------

    def read_meta(self) -> bytes | None:
        return self._meta

    def write_meta(self, value: bytes) -> None:
        old = self._meta
        self._log(lambda: setattr(self, "_meta", old))
        self._meta = bytes(value)

    # -- tables ----------------------------------------------------------------------------

    def probe(self, tkeys: Sequence[bytes], limit: int) -> tuple[np.ndarray, int]:
        values: list[bytes] = []
        total = 0
        for table, tkey in zip(self._tables, tkeys):
            bucket = table.get(tkey)
            if bucket:
                total += len(bucket)
                values.extend(sorted(bucket))
        if limit > 0 and total > limit:
            del values[limit:]
        raw = b"".join(values)
        if self._value_width == 8:
            return np.frombuffer(raw, dtype=">u8"), total
        return np.frombuffer(raw, dtype=">u8").reshape(-1, 2), total

    def table_add(self, table: int, tkey: bytes, fp_bytes: bytes) -> None:
        self._set_add(self._tables[table], tkey, fp_bytes)

    def table_remove(self, table: int, tkey: bytes, fp_bytes: bytes) -> None:
        self._set_remove(self._tables[table], tkey, fp_bytes)

    # -- key maps --------------------------------------------------------------------------

    def get_fp(self, key_id: bytes) -> bytes | None:
        return self._keys.get(key_id)

    def set_fp(self, key_id: bytes, fp_bytes: bytes) -> None:
        self._dict_set(self._keys, key_id, fp_bytes)

    def delete_fp(self, key_id: bytes) -> bool:
        return self._dict_del(self._keys, key_id)

    def keys_of(self, fp_bytes: bytes) -> list[bytes]:
        return sorted(self._fps.get(fp_bytes, ()))

    def link(self, fp_bytes: bytes, key_id: bytes) -> bool:
        return self._set_add(self._fps, fp_bytes, key_id)

    def unlink(self, fp_bytes: bytes, key_id: bytes) -> bool:
        return self._set_remove(self._fps, fp_bytes, key_id)

    def count(self) -> int:
        return len(self._keys)

    def iter_fps(self) -> Iterator[tuple[bytes, bytes]]:
        return iter(sorted(self._keys.items()))

    def is_empty(self) -> bool:
        return not (self._keys or self._records or self._fps)

    # -- records and aliases ---------------------------------------------------------------

    def get_record(self, key_id: bytes) -> bytes | None:
        return self._records.get(key_id)

    def put_record(self, key_id: bytes, value: bytes) -> None:
        self._dict_set(self._records, key_id, bytes(value))

    def delete_record(self, key_id: bytes) -> bool:
        return self._dict_del(self._records, key_id)

    def get_alias(self, key_id: bytes) -> bytes | None:
        return self._aliases.get(key_id)

    def put_alias(self, key_id: bytes, key: bytes) -> None:
        self._dict_set(self._aliases, key_id, key)

    def delete_alias(self, key_id: bytes) -> None:
        self._dict_del(self._aliases, key_id)

    def stats(self) -> dict[str, int]:
        return {
            "keys": len(self._keys),
            "fps": len(self._fps),
            "records": len(self._records),
        }
