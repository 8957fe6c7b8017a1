"""One decision over a snapshot: :class:`SnapshotView` answers the index calls of a decision on one
key from what :meth:`~scrapy_simhash.store.base.FingerprintStore.snapshot` read in one round trip,
and keeps its writes for one conditional
:meth:`~scrapy_simhash.store.base.FingerprintStore.apply` (:meth:`SimhashIndex.decide
<scrapy_simhash.store.index.SimhashIndex.decide>`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_simhash.store.base import Snapshot, Writes

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from scrapy_simhash.store.index import Match, SimhashIndex

__all__ = ["SnapshotView"]


class SnapshotView:
    """The :class:`~scrapy_simhash.store.index.SimhashIndex` calls a decision on ``key`` (a page
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
        match = self.index.match_type  # the index's class: no import cycle
        ex = None if exclude is None else exclude.encode("utf-8")
        return [
            match(h.key.decode("utf-8"), int.from_bytes(h.fp, "big"), h.distance)  # type: ignore[attr-defined]
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
