"""The record kept for every canonical URL (:class:`PageRecord`): its fetch history, validators,
change sketch and recrawl schedule, and its one byte format: what the index's records hold, byte
for byte, whatever the store; and the framing of a kept page's novelty evidence, stored apart.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from scrapy_simhash.fingerprint.sketch import STORED_BYTES, is_sketch, sketch_similarity, stored
from scrapy_simhash.schedule import (
    ScheduleState,
    schedule_dict,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


#: The record format: its first byte (the formats of earlier versions are not read: an index that
#: holds them is refused at open, ``SimhashIndex``'s schema version).
FORMAT = 7
#: The head: format, flags (``uint16``); then varints (:func:`_put_number`, :func:`_put_int`).
_HEAD = struct.Struct("<BH")
_GONE, _DUPLICATE_OF, _NEXT_DUE, _ETAG, _LAST_MODIFIED, _MOVED_TO, _SCHEDULE, _VISIBLE_KEY = (1 << i for i in range(8))
#: The change sketch (``sketch.stored``: ``STORED_BYTES``); a schedule of another form than ``ScheduleState``'s (JSON);
#: the page has novelty evidence, stored apart (no bytes here); 128-bit fingerprints (else 64).
_SKETCH, _SCHEDULE_MAP, _EVIDENCE, _WIDE = 1 << 8, 1 << 9, 1 << 10, 1 << 11
_FLAGS = (1 << 12) - 1
_TEXTS = ((_DUPLICATE_OF, "duplicate_of"), (_ETAG, "etag"), (_LAST_MODIFIED, "last_modified"), (_MOVED_TO, "moved_to"))
_NO_TEXTS = (None, None, None, None)
_ANY_TEXT = _DUPLICATE_OF | _ETAG | _LAST_MODIFIED | _MOVED_TO
_KEY = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
#: A number's kinds (its varint's low 2 bits): whole milliseconds (the rest of the varint: the
#: zigzag difference to a reference, in ms); a float32 read back to 6 significant digits; a float64.
_MS, _SIG6, _DOUBLE = 0, 1, 2
#: The schedule mapping that is packed as numbers (``ScheduleState.to_dict``); any other is JSON.
_SCHEDULE_KEYS = (
    "last_fetch",
    "last_change",
    "interval",
    "next_due",
    "rate",
    "size",
    "fetches",
    "changes",
    "recent",
    "old",
    "probe",
)
_INT64 = 1 << 63


@dataclass(frozen=True)
class PageRecord:
    """What is known about one canonical URL: its last fingerprints, its duplicate, its schedule and
    validators, its change sketch and whether its novelty evidence is kept.

    Each field is described in ``docs/reference/records.rst``; times are Unix seconds.
    """

    first_seen: float
    last_fetched: float
    last_changed: float
    fetch_count: int = 1
    change_count: int = 0
    history: tuple[tuple[int, int | None], ...] = field(default_factory=tuple)
    duplicate_of: str | None = None
    next_due: float | None = None
    schedule: Mapping[str, Any] | None = None
    etag: str | None = None
    last_modified: str | None = None
    gone: bool = False
    moved_to: str | None = None
    sketch: bytes | None = None
    visible_key: int | None = None
    evidence: bool = False

    @property
    def last_fp(self) -> int | None:
        """The fingerprint of the last fetch (``None`` if the record has no history)."""
        return self.history[0][0] if self.history else None

    @classmethod
    def first(cls, fp: int, *, now: float | None = None, duplicate_of: str | None = None) -> PageRecord:
        """The record of a URL fetched for the first time."""
        now = time.time() if now is None else now
        return cls(
            first_seen=now,
            last_fetched=now,
            last_changed=now,
            history=((fp, None),),
            duplicate_of=duplicate_of,
        )

    def updated(
        self,
        fp: int,
        distance: int,
        changed: bool,
        *,
        now: float | None = None,
        history_size: int = 8,
        duplicate_of: str | None = None,
    ) -> PageRecord:
        """The record after a new fetch with fingerprint ``fp`` at change ``distance`` (the visible
        key is kept only for the same fingerprint: it would otherwise be another content's)."""
        if history_size < 1:
            raise ValueError(f"history_size ({history_size!r}) is invalid: it must be >= 1")
        now = time.time() if now is None else now
        return build_record(
            PageRecord,
            self.first_seen,
            now,
            now if changed else self.last_changed,
            self.fetch_count + 1,
            self.change_count + (1 if changed else 0),
            ((fp, distance), *self.history)[:history_size],
            duplicate_of,
            self.next_due,
            self.schedule,
            self.etag,
            self.last_modified,
            self.gone,
            self.moved_to,
            self.sketch,
            self.visible_key if fp == self.last_fp else None,  # never a key of other content
            self.evidence and fp == self.last_fp,
        )

    def to_bytes(self) -> bytes:
        """The stored form: ``_HEAD`` (format, flags); then varints (numbers: :func:`_put_number`,
        each time in milliseconds as its difference to the one before it where that is known):
        first seen, last fetched, last changed, fetch count, change count, the history's length;
        the history's fingerprints (big-endian, 8 bytes each, 16 with ``_WIDE``) and change
        distances (varint, distance + 1, 0 for none); then, each where its flag is set:
        ``next_due``; the texts (varint length + UTF-8) in the order duplicate_of, etag,
        last_modified, moved_to; the schedule (:func:`_pack_schedule`; a schedule of another form:
        varint length + JSON); the visible key (``uint64``); the change sketch (``sketch.stored``: 64 bytes).
        Times are kept to the millisecond. :class:`ValueError` for a record the format cannot
        hold (a count or distance out of range, a fingerprint over 128 bits)."""
        history = self.history
        flags = _GONE if self.gone else 0
        out = bytearray()
        try:
            first_ms = _put_number(out, round(float(self.first_seen), 3), 0)
            fetched_ms = _put_number(out, round(float(self.last_fetched), 3), first_ms)
            changed_ms = _put_number(out, round(float(self.last_changed), 3), first_ms)
            fetch_count, change_count = self.fetch_count, self.change_count
            _put_int(out, fetch_count, 0)
            _put_int(out, change_count, 0)
            _put_int(out, len(history), 0)
            wide = history and max(fp for fp, _ in history) >= 1 << 64
            if wide:
                flags |= _WIDE
                out += b"".join(fp.to_bytes(16, "big") for fp, _ in history)
            elif history:
                out += _words(len(history)).pack(*(fp for fp, _ in history))
            for _, distance in history:
                if distance is None:
                    out.append(0)
                elif distance < 0 or distance >= 1 << 31:
                    raise ValueError("a change distance is None or >= 0")
                else:
                    _put_uint(out, distance + 1)
            next_due = self.next_due
            due_ms = 0
            if next_due is not None:
                flags |= _NEXT_DUE
                due_ms = _put_number(out, round(float(next_due), 3), fetched_ms)
            texts = (self.duplicate_of, self.etag, self.last_modified, self.moved_to)
            if texts != _NO_TEXTS:
                for (flag, _), text in zip(_TEXTS, texts):
                    if text is not None:
                        flags |= flag
                        data = text.encode("utf-8")
                        _put_uint(out, len(data))
                        out += data
            schedule = self.schedule
            if schedule is not None:
                packed = _pack_schedule(schedule, (fetched_ms, changed_ms, due_ms, fetch_count, change_count))
                if packed is None:
                    flags |= _SCHEDULE_MAP
                    packed = json.dumps(dict(schedule), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
                    _put_uint(out, len(packed))
                else:
                    flags |= _SCHEDULE
                out += packed
            visible = self.visible_key
            if visible is not None:
                flags |= _VISIBLE_KEY
                out += _KEY.pack(visible)
            sketch = self.sketch
            if sketch is not None:
                flags |= _SKETCH
                out += stored(sketch)
            if self.evidence:
                flags |= _EVIDENCE
        except (struct.error, OverflowError, TypeError, ValueError) as exc:
            raise ValueError(f"this record cannot be stored ({exc}): {self!r:.200}") from exc
        return _HEAD.pack(FORMAT, flags) + out

    @classmethod
    def from_bytes(cls, raw: bytes) -> PageRecord:
        """Parse :meth:`to_bytes` output; :class:`ValueError` if ``raw`` is not a record of this format."""
        if raw[:1] != _FORMAT_BYTE:
            raise ValueError(f"not a page record of format {FORMAT}: {raw[:80]!r}")
        try:
            return cls._unpack(raw)
        except (struct.error, UnicodeDecodeError, ValueError, IndexError, TypeError) as exc:
            raise ValueError(f"not a page record: {raw[:80]!r} ({exc})") from exc

    @classmethod
    def _unpack(cls, raw: bytes) -> PageRecord:
        parts = _walk(raw, True)
        assert parts is not None
        flags, first_seen, last_fetched, last_changed, fetch_count, change_count, history, next_due, texts = parts[:9]
        schedule, visible, sketch = parts[9:]
        duplicate_of, etag, last_modified, moved_to = texts
        return build_record(
            cls,
            first_seen,
            last_fetched,
            last_changed,
            fetch_count,
            change_count,
            history,
            duplicate_of,
            next_due,
            Schedule(schedule) if type(schedule) is tuple else schedule,
            etag,
            last_modified,
            bool(flags & _GONE),
            moved_to,
            sketch,
            visible,
            bool(flags & _EVIDENCE),
        )

    @classmethod
    def parse(cls, raw: bytes | None) -> PageRecord | None:
        """The record in ``raw`` (a stored value), or ``None`` when there is none or it is unreadable."""
        if raw is None:
            return None
        try:
            return cls.from_bytes(raw)
        except ValueError:
            return None


def _walk(raw: bytes, whole: bool, numbers: bool = True) -> tuple[Any, ...] | None:
    """The one reading of :meth:`PageRecord.to_bytes`' layout: the parts of the record ``raw``
    in order, ``(flags, first_seen, last_fetched, last_changed, fetch_count, change_count,
    history, next_due, texts, schedule, visible_key, sketch)`` (``schedule``: the numbers of
    :class:`Schedule`, a JSON mapping or ``None``), or raises what a malformed record raises.
    ``whole`` false: the history and texts passed over (checked as read), ``None`` for a record
    gone or without a schedule; ``numbers`` false too: ``schedule`` is ``(fetches, changes, its
    first _FIRST numbers, (start, stop, count))``, the others left unread where they must fill
    ``raw[start:stop]`` (for :func:`schedule_states`)."""
    _, flags = _HEAD.unpack_from(raw)
    if flags & ~_FLAGS:
        raise ValueError(f"flags {flags:#x} unknown")
    if not whole and (flags & _GONE or not flags & (_SCHEDULE | _SCHEDULE_MAP)):
        return None
    end = len(raw)
    first_seen, first_ms, at = _get_number(raw, _HEAD.size, 0)
    last_fetched, fetched_ms, at = _get_number(raw, at, first_ms)
    last_changed, changed_ms, at = _get_number(raw, at, first_ms)
    fetch_count, at = _get_int(raw, at, 0)
    change_count, at = _get_int(raw, at, 0)
    n, at = _get_int(raw, at, 0)
    if n < 0 or at + 8 * n > end:
        raise ValueError("history cut short")
    fps: Any = ()
    if flags & _WIDE:
        if whole:
            fps = [int.from_bytes(raw[i : i + 16], "big") for i in range(at, at + 16 * n, 16)]
        at += 16 * n
        if at > end:
            raise ValueError("history cut short")
    else:
        if whole:
            fps = _words(n).unpack_from(raw, at)
        at += 8 * n
    distances: list[int | None] = []
    for _ in range(n):
        d = raw[at]
        if d < 0x80:
            at += 1
        else:
            d, at = _get_uint(raw, at)
        if whole:
            distances.append(d - 1 if d else None)
    next_due = None
    due_ms = 0
    if flags & _NEXT_DUE:
        next_due, due_ms, at = _get_number(raw, at, fetched_ms)
    texts: list[str | None] = [None, None, None, None]
    if flags & _ANY_TEXT:
        for i, (flag, name) in enumerate(_TEXTS):
            if flags & flag:
                size, at = _get_uint(raw, at)
                if at + size > end:
                    raise ValueError(f"{name} cut short")
                texts[i] = raw[at : at + size].decode("utf-8")
                at += size
    schedule: Any = None
    if flags & _SCHEDULE:
        schedule, at = _unpack_schedule(raw, at, (fetched_ms, changed_ms, due_ms, fetch_count, change_count), numbers)
        if not numbers:
            stop = end - (_KEY.size if flags & _VISIBLE_KEY else 0) - (STORED_BYTES if flags & _SKETCH else 0)
            if stop < at:
                raise ValueError("schedule cut short")
            schedule = (*schedule[:3], (at, stop, schedule[3]))
            at = stop
    elif flags & _SCHEDULE_MAP:
        size, at = _get_uint(raw, at)
        if at + size > end:
            raise ValueError("schedule cut short")
        schedule = json.loads(raw[at : at + size].decode("utf-8"))
        if not isinstance(schedule, dict):
            raise ValueError(f"schedule must be a JSON object, got {schedule!r:.80}")
        at += size
    visible = None
    if flags & _VISIBLE_KEY:
        (visible,) = _KEY.unpack_from(raw, at)
        at += _KEY.size
    sketch = None
    if flags & _SKETCH:
        sketch = raw[at : at + STORED_BYTES]
        at += STORED_BYTES
        if at > end:
            raise ValueError("change sketch cut short")
    if at != end:
        raise ValueError(f"{end - at} bytes after the record")
    history = tuple(zip(fps, distances))
    return (
        flags,
        first_seen,
        last_fetched,
        last_changed,
        fetch_count,
        change_count,
        history,
        next_due,
        texts,
        schedule,
        visible,
        sketch,
    )


def schedule_state(raw: bytes | None) -> ScheduleState | None:
    """The schedule state of the record ``raw`` (a stored value), what the decoder and
    ``schedule_state_of`` give for a record not gone, read without the rest of the record: ``None`` for
    no record, one gone, without a schedule or unreadable."""
    if raw is None or raw[:1] != _FORMAT_BYTE:
        return None
    try:
        parts = _walk(raw, False)
    except (struct.error, UnicodeDecodeError, ValueError, IndexError, TypeError):
        return None
    if parts is None:
        return None
    schedule = parts[9]
    return _numbers_state(schedule) if type(schedule) is tuple else _mapping_state(schedule)


def schedule_states(raws: Sequence[bytes | None]) -> list[ScheduleState | None]:
    """:func:`schedule_state` of each of ``raws`` (the same states), most of their schedules'
    numbers decoded all at once (:func:`_ms_numbers`)."""
    out: list[ScheduleState | None] = [None] * len(raws)
    pending: list[tuple[int, bytes, tuple[Any, ...]]] = []
    for i, raw in enumerate(raws):
        if raw is None or raw[:1] != _FORMAT_BYTE:
            continue
        try:
            schedule: Any = _schedule_span(raw)
            if schedule is None:
                parts = _walk(raw, False, False)
                if parts is None:
                    continue
                schedule = parts[9]
        except (struct.error, UnicodeDecodeError, ValueError, IndexError, TypeError):
            out[i] = schedule_state(raw)
            continue
        if type(schedule) is not tuple:
            out[i] = _mapping_state(schedule)
        elif schedule[3][1] - schedule[3][0] >= schedule[3][2]:  # a number takes a byte at least
            pending.append((i, raw, schedule))
        else:
            out[i] = schedule_state(raw)
    if pending:
        spans = [schedule[3] for _, _, schedule in pending]
        for (i, raw, (fetches, changes, first, (start, stop, count))), rest in zip(
            pending, _ms_numbers([raw for _, raw, _ in pending], spans)
        ):
            if rest is None:  # not all whole milliseconds: one by one
                try:
                    rest, at = _get_numbers(raw, start, (), count)
                except (struct.error, ValueError, IndexError):
                    rest, at = [], -1
                if at != stop:
                    out[i] = schedule_state(raw)
                    continue
            out[i] = _numbers_state((*first[:6], fetches, changes, first[6], *rest[:3], tuple(rest[3:])))
    return out


def _schedule_span(raw: bytes) -> tuple[Any, ...] | None:
    """``_walk(raw, False, False)``'s schedule for a record of the common form (packed schedule,
    64-bit fingerprints, its first numbers whole milliseconds), each varint read inline; ``None``
    for any other record (read by :func:`_walk`); raises what :func:`_walk` raises."""
    flags = raw[1] | raw[2] << 8
    if flags & ~_FLAGS or flags & (_GONE | _WIDE | _SCHEDULE_MAP) or not flags & _SCHEDULE:
        return None
    end = len(raw)
    numbers: list[int] = []  # first seen, last fetched, last changed (ms, kind _MS), then the counts
    at = _HEAD.size
    for _ in range(6):
        tag = raw[at]
        at += 1
        if tag >= 0x80:
            tag &= 0x7F
            shift = 7
            while True:
                byte = raw[at]
                at += 1
                tag |= (byte & 0x7F) << shift
                if byte < 0x80:
                    break
                shift += 7
                if shift > 140:
                    raise ValueError("a varint runs too long")
        numbers.append(tag)
    first, fetched, changed, fetch_count, change_count, n = numbers
    if (first | fetched | changed) & 3:
        return None  # a time of another kind than whole milliseconds
    first = -((first >> 2) + 1 >> 1) if first & 4 else first >> 3
    fetched_ms = first + (-((fetched >> 2) + 1 >> 1) if fetched & 4 else fetched >> 3)
    changed_ms = first + (-((changed >> 2) + 1 >> 1) if changed & 4 else changed >> 3)
    fetch_count = -((fetch_count + 1) >> 1) if fetch_count & 1 else fetch_count >> 1
    change_count = -((change_count + 1) >> 1) if change_count & 1 else change_count >> 1
    n = -((n + 1) >> 1) if n & 1 else n >> 1
    if n < 0 or at + 8 * n > end:
        raise ValueError("history cut short")
    at += 8 * n
    for _ in range(n):  # the change distances
        if raw[at] < 0x80:
            at += 1
        else:
            _, at = _get_uint(raw, at)
    due_ms = 0
    if flags & _NEXT_DUE:
        _, due_ms, at = _get_number(raw, at, fetched_ms)
    if flags & _ANY_TEXT:
        for flag, name in _TEXTS:
            if flags & flag:
                size, at = _get_uint(raw, at)
                if at + size > end:
                    raise ValueError(f"{name} cut short")
                raw[at : at + size].decode("utf-8")  # checked as _walk does
                at += size
    schedule, at = _unpack_schedule(raw, at, (fetched_ms, changed_ms, due_ms, fetch_count, change_count), False)
    stop = end - (_KEY.size if flags & _VISIBLE_KEY else 0) - (STORED_BYTES if flags & _SKETCH else 0)
    if stop < at:
        raise ValueError("schedule cut short")
    return (*schedule[:3], (at, stop, schedule[3]))


def _ms_numbers(raws: list[bytes], spans: list[tuple[int, int, int]]) -> list[list[float] | None]:
    """The numbers in ``raw[start:stop]`` for each record and span ``(start, stop, count)``, when
    they are ``count`` numbers of whole milliseconds (:func:`_put_number`'s first kind, reference 0)
    that fill it, each in at most 8 bytes; else ``None`` (read them one by one)."""
    buf = np.frombuffer(b"".join([raw[start:stop] for raw, (start, stop, _) in zip(raws, spans)]), np.uint8)
    sizes = np.array([stop - start for start, stop, _ in spans])
    counts = np.array([count for _, _, count in spans])
    ends = np.cumsum(sizes)
    term = buf < 0x80  # the last byte of a varint
    before = np.concatenate(([0], np.cumsum(term)))  # varint ends before each byte
    ok = (before[ends] - before[ends - sizes] == counts) & term[ends - 1]
    term[ends - 1] = True  # a record's last varint ends with it, whatever it holds
    last = np.flatnonzero(term)
    first = np.concatenate(([0], last[:-1] + 1))
    bad = ((buf[first] & 3) != 0) | (last - first >= 8)  # another kind, or over 56 bits
    ok &= np.bincount(np.searchsorted(ends, last[bad], side="right"), minlength=len(spans)) == 0
    total = np.cumsum(term)
    shift = np.minimum(np.arange(len(buf)) - first[total - term], 7) * 7  # 7 bits a byte of its varint
    tags = np.add.reduceat((buf & 0x7F).astype(np.int64) << shift, first)
    zigzag = tags >> 2
    values = (np.where(zigzag & 1, -((zigzag + 1) >> 1), zigzag >> 1) / 1000).tolist()
    starts = (total[ends - 1] - counts).tolist()
    return [
        values[start : start + count] if good else None
        for good, start, count in zip(ok.tolist(), starts, counts.tolist())
    ]


_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(PageRecord))
_FORMAT_BYTE = bytes((FORMAT,))


def build_record(cls: type[PageRecord], *values: Any) -> PageRecord:
    """``cls(*values)``, the fields in order, without the frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` per field: it costs more than reading the record from its bytes)."""
    record = object.__new__(cls)
    record.__dict__.update(zip(_FIELDS, values))
    return record


def frame_evidence(fp: int, sketch: bytes, heading: int | None = None) -> bytes:
    """A kept page's novelty evidence as the store keeps it: the fingerprint of the content it was
    made of (16 bytes, big-endian), the key of its own heading
    (:func:`~scrapy_simhash.fingerprint.novelty.heading_key`; 4 bytes, little-endian, 0: none),
    then its novelty text."""
    return fp.to_bytes(16, "big") + (heading or 0).to_bytes(4, "little") + sketch


def read_evidence(framed: bytes | None, fp: int) -> tuple[bytes, int | None] | None:
    """The novelty text in ``framed`` (:func:`frame_evidence`) and its heading key (``None``:
    none) when it is of the content whose fingerprint is ``fp``; ``None``: no evidence, or another
    content's."""
    if framed is None or len(framed) <= _EVIDENCE_HEAD or int.from_bytes(framed[:16], "big") != fp:
        return None
    return framed[_EVIDENCE_HEAD:], int.from_bytes(framed[16:_EVIDENCE_HEAD], "little") or None


def evidence_text(framed: bytes | None, fp: int) -> bytes | None:
    """The novelty text in ``framed`` (:func:`read_evidence`'s, without the heading key)."""
    evidence = read_evidence(framed, fp)
    return None if evidence is None else evidence[0]


#: The bytes before an evidence's sketch: its content's fingerprint and its heading key.
_EVIDENCE_HEAD = 20


def last_fp_span(raw: bytes, at: int = 0) -> tuple[int, int] | None:
    """Where the last fetch's fingerprint lies in the stored record ``raw[at:]`` (``(start, end)``
    in ``raw``), ``None`` for a record without history or a value that is no record: what a
    store that keeps a key's fingerprint in its record reads it from."""
    if raw[at : at + 1] != _FORMAT_BYTE:
        return None
    try:
        _, flags = _HEAD.unpack_from(raw, at)
        i = at + _HEAD.size
        for _ in range(3):
            _, _, i = _get_number(raw, i, 0)
        for _ in range(2):
            _, i = _get_uint(raw, i)
        n, i = _get_uint(raw, i)
    except (IndexError, struct.error, ValueError):
        return None
    end = i + (16 if flags & _WIDE else 8)
    return (i, end) if n and end <= len(raw) else None


def split_sketch(raw: bytes) -> tuple[bytes, bytes | None]:
    """A stored record without its change sketch (its last ``STORED_BYTES`` bytes, where its
    flags have ``_SKETCH``), and the sketch (``None``: none); ``rest + sketch`` is ``raw``. What a
    store that keeps the sketches apart from the records (LMDB) splits and joins."""
    if len(raw) >= _HEAD.size + STORED_BYTES and raw[:1] == _FORMAT_BYTE and _HEAD.unpack_from(raw)[1] & _SKETCH:
        return raw[:-STORED_BYTES], raw[-STORED_BYTES:]
    return raw, None


def visible_key(visible: str) -> int | None:
    """An exact hash of a page's whole visible text (``PageFingerprint.visible``; the first 64 bits
    of SHA-256 over its UTF-8: the hash with CPU instructions of its own: 2.4x blake2b's speed here),
    ``None`` for a page without visible text. Two pages with one visible text share it: a copy of a
    page, whatever its markup and URL."""
    if not visible:
        return None
    return int.from_bytes(hashlib.sha256(visible.encode("utf-8", "surrogatepass")).digest()[:8], "little")


def change_size(old: bytes | None, new: bytes | None, distance: int) -> float:
    """How much a page changed between two fetches, what the recrawl schedule weighs a change by:
    ``64 * (1 - similarity)`` of their change sketches (the bits' scale: a sketch 0.9 alike is
    6.4), which follows the share of the text that changed (on real revisions its rank correlation
    with ``1 - Jaccard`` is 0.96, the 64-bit distance's 0.89); the fingerprints' ``distance``
    where either fetch has no full sketch."""
    if old is None or new is None or not (is_sketch(old) and is_sketch(new)):
        return float(distance)
    return 64.0 * (1.0 - sketch_similarity(old, new)) if old != new else 0.0


def _exact_schedule(schedule: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The numbers of a schedule of exactly ``ScheduleState.to_dict`` form (the keys in order, a
    float wherever that form has one): ``(last_fetch, last_change, interval, next_due, rate, size,
    probe, fetches, changes, old, flat)`` with ``flat`` the ``recent`` pairs one after the other;
    ``None`` for any other mapping."""
    if tuple(schedule) != _SCHEDULE_KEYS:
        return None
    last_fetch, last_change, interval, next_due, rate, size, fetches, changes, recent, old, probe = schedule.values()
    # set(map(...)): the type checks at C speed; they run for every page.
    if (
        set(map(type, (last_fetch, last_change, interval, next_due, rate, size, probe))) != _FLOAT
        or type(fetches) is not int
        or type(changes) is not int
        or type(old) is not list
        or type(recent) is not list
        or len(old) != 3
        or not set(map(type, old)) <= _FLOAT
        or not set(map(type, recent)) <= _LIST
        or not set(map(len, recent)) <= _PAIR
    ):
        return None
    flat = [x for pair in recent for x in pair]
    if not set(map(type, flat)) <= _FLOAT:
        return None
    return last_fetch, last_change, interval, next_due, rate, size, probe, fetches, changes, old, flat


def _pack_schedule(schedule: Mapping[str, Any], refs: tuple[int, int, int, int, int]) -> bytes | None:
    """A schedule of ``ScheduleState.to_dict`` form as numbers (``None``: another form, or an int
    where that form has a float: JSON keeps each number's type): ``fetches`` and ``changes``
    (:func:`_put_int`), the number of ``recent``'s pairs (varint), then :func:`_put_number` each of
    ``last_fetch``, ``last_change``, ``interval``, ``next_due``, ``rate``, ``size``, ``old``'s
    three, ``probe`` and ``recent``'s numbers. ``refs``: the record's last fetch, last change and
    due time (ms), fetch and change counts, which the schedule's repeat (stored as differences to
    them: nearly always 0, one byte)."""
    if type(schedule) is Schedule:
        last_fetch, last_change, interval, next_due, rate, size, fetches, changes, *old, probe, flat = schedule.numbers
    else:
        parts = _exact_schedule(schedule)
        if parts is None:
            return None
        last_fetch, last_change, interval, next_due, rate, size, probe, fetches, changes, old, flat = parts
    fetched_ms, changed_ms, due_ms, fetch_count, change_count = refs
    out = bytearray()
    try:
        _put_int(out, fetches, fetch_count)
        _put_int(out, changes, change_count)
        _put_uint(out, len(flat) // 2)
        numbers = (last_fetch, last_change, interval, next_due, rate, size, *old, probe, *flat)
        append = out.append
        for x, ref in zip(numbers, itertools.chain((fetched_ms, changed_ms, 0, due_ms), _ZEROS)):
            # _put_number's whole-milliseconds case, inline: nearly every number (a third of the time)
            if -1e12 < x < 1e12:
                ms = round(x * 1000.0)
                if ms / 1000 == x and (ms or math.copysign(1.0, x) > 0):
                    delta = ms - ref
                    tag = delta << 3 if delta >= 0 else (((-delta) << 1) - 1) << 2
                    if tag < 0x80:
                        append(tag)
                    else:
                        _put_uint(out, tag)
                    continue
            _put_number(out, x, ref)
    except (struct.error, OverflowError, TypeError, ValueError):
        return None
    return bytes(out)


class Schedule(Mapping[str, Any]):
    """A record's schedule as the record packs it: ``numbers`` are ``(last_fetch, last_change,
    interval, next_due, rate, size, fetches, changes, old_changes, old_changed_secs,
    old_unchanged_secs, probe, recent)`` (``recent``'s pairs one after the other), each of the
    type ``ScheduleState.to_dict`` gives it; read as that mapping (built on first use). A record
    read from its bytes, or written by :class:`ChangeTracker`, carries one: the schedule goes from
    bytes to :class:`ScheduleState` and back without a mapping."""

    __slots__ = ("_mapping", "numbers")

    def __init__(self, numbers: tuple[Any, ...]) -> None:
        self.numbers = numbers
        self._mapping: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        mapping = self._mapping
        if mapping is None:
            mapping = self._mapping = schedule_dict(self.numbers)
        return mapping

    def __getitem__(self, name: str) -> Any:
        return self._get()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(_SCHEDULE_KEYS)

    def __repr__(self) -> str:
        return repr(self._get())


def schedule_of(state: ScheduleState) -> tuple[float, Mapping[str, Any]]:
    """``state``'s due time and schedule as :meth:`ScheduleState.to_dict` gives them (the same
    numbers), as a :class:`Schedule` where the record packs them, else that mapping."""
    if set(map(len, state.recent)) <= _PAIR:
        numbers = state.numbers()
        flat = numbers[12]
        floats = (*numbers[:6], *numbers[8:12])
        if (
            set(map(type, floats)) == _FLOAT
            and type(numbers[6]) is int
            and type(numbers[7]) is int
            and set(map(type, flat)) <= _FLOAT
        ):
            return numbers[3], Schedule(numbers)
    schedule = state.to_dict()
    return schedule["next_due"], schedule


_FLOAT, _LIST, _PAIR = {float}, {list}, {2}


@functools.lru_cache(maxsize=64)
def _words(n: int) -> struct.Struct:
    """``n`` big-endian 64-bit fingerprints."""
    return struct.Struct(f">{n}Q")


def _unpack_schedule(
    raw: bytes, at: int, refs: tuple[int, int, int, int, int], whole: bool = True
) -> tuple[tuple[Any, ...], int]:
    """The numbers of the schedule :func:`_pack_schedule` wrote at ``at`` with ``refs`` (in
    :attr:`Schedule.numbers`' order), and where it ends. ``whole`` false: only the first
    :data:`_FIRST` numbers are read: ``(fetches, changes, those, how many follow)`` and where they start."""
    fetched_ms, changed_ms, due_ms, fetch_count, change_count = refs
    fetches, at = _get_int(raw, at, fetch_count)
    changes, at = _get_int(raw, at, change_count)
    pairs, at = _get_uint(raw, at)
    count = 10 + 2 * pairs
    if at + count > len(raw):
        raise ValueError("schedule cut short")
    numbers, at = _get_numbers(raw, at, (fetched_ms, changed_ms, 0, due_ms), count if whole else _FIRST)
    if not whole:
        return (fetches, changes, numbers, count - _FIRST), at
    return (*numbers[:6], fetches, changes, *numbers[6:10], tuple(numbers[10:])), at


#: The schedule's numbers that :func:`schedule_states` reads one by one (up to ``old_changes``:
#: those with a reference, the rate and ``old_changes``, often no whole milliseconds); those after
#: them are whole milliseconds in a schedule of ``ScheduleState.numbers``.
_FIRST = 7


def _get_numbers(raw: bytes, at: int, refs: tuple[int, ...], count: int) -> tuple[list[float], int]:
    """``count`` numbers (:func:`_get_number`) from ``at``, with the references ``refs`` and 0
    after them, and where they end."""
    numbers: list[float] = []
    append = numbers.append
    for ref in itertools.islice(itertools.chain(refs, _ZEROS), count):
        # _get_number, inline: whole milliseconds (nearly every number), its varint read here
        start = at
        tag = raw[at]
        at += 1
        if tag >= 0x80:
            tag &= 0x7F
            shift = 7
            while True:
                byte = raw[at]
                at += 1
                tag |= (byte & 0x7F) << shift
                if byte < 0x80:
                    break
                shift += 7
                if shift > 140:
                    raise ValueError("a varint runs too long")
        if not tag & 3:
            zigzag = tag >> 2
            append((ref + (-((zigzag + 1) >> 1) if zigzag & 1 else zigzag >> 1)) / 1000)
        else:
            x, _, at = _get_number(raw, start, ref)  # another kind: read again
            append(x)
    return numbers, at


#: The references of the numbers after the schedule's first four: 0.
_ZEROS = itertools.repeat(0)


def _put_uint(out: bytearray, value: int) -> None:
    """Append ``value`` (>= 0) as a varint (7 bits a byte, least significant first)."""
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _get_uint(raw: bytes, at: int) -> tuple[int, int]:
    """The varint at ``at``, and where it ends."""
    byte = raw[at]
    at += 1
    if byte < 0x80:
        return byte, at
    value, shift = byte & 0x7F, 7
    while True:
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 140:
            raise ValueError("a varint runs too long")


def _put_int(out: bytearray, value: int, ref: int) -> None:
    """Append the ``int64`` ``value`` as the zigzag varint of its difference to ``ref``."""
    if type(value) is not int and not isinstance(value, int):
        raise TypeError(f"an int is needed, not {type(value).__name__}")
    if not -_INT64 <= value < _INT64:
        raise OverflowError(f"{value} is out of the int64 range")
    delta = value - ref
    _put_uint(out, delta << 1 if delta >= 0 else ((-delta) << 1) - 1)


def _get_int(raw: bytes, at: int, ref: int) -> tuple[int, int]:
    """The int :func:`_put_int` wrote at ``at`` with ``ref``, and where it ends."""
    zigzag, at = _get_uint(raw, at)
    return ref + (-((zigzag + 1) >> 1) if zigzag & 1 else zigzag >> 1), at


def _put_number(out: bytearray, x: float, ref: int) -> int:
    """Append the float ``x``, kept exactly: a whole number of milliseconds (under 1e12 s) as the
    zigzag difference to ``ref`` (ms), shifted left 2 bits, in one varint; else the kind
    :data:`_SIG6` and a ``float32`` when it reads back to ``x`` at 6 significant digits (a rate); else
    :data:`_DOUBLE` and the ``float64``. Returns ``x`` in ms (0 when it is not whole ms), the
    reference of a later number."""
    if -1e12 < x < 1e12:
        ms = round(x * 1000.0)
        if ms / 1000 == x and (ms or math.copysign(1.0, x) > 0):
            delta = ms - ref
            _put_uint(out, (delta << 3 if delta >= 0 else (((-delta) << 1) - 1) << 2))
            return ms
        try:
            single = _F32.pack(x)
        except OverflowError:
            single = b""
        if single and float(f"{_F32.unpack(single)[0]:.6g}") == x:
            out.append(_SIG6)
            out += single
            return 0
    out.append(_DOUBLE)
    out += _F64.pack(x)
    return 0


def _get_number(raw: bytes, at: int, ref: int) -> tuple[float, int, int]:
    """The number :func:`_put_number` wrote at ``at`` with ``ref``: it, it in ms (0 when it is not
    whole ms), and where it ends."""
    tag = raw[at]
    if tag < 0x80:
        at += 1
    else:
        tag, at = _get_uint(raw, at)
    kind = tag & 3
    if kind == _MS:
        zigzag = tag >> 2
        ms = ref + (-((zigzag + 1) >> 1) if zigzag & 1 else zigzag >> 1)
        return ms / 1000, ms, at
    if kind == _SIG6:
        (single,) = _F32.unpack_from(raw, at)
        return float(f"{single:.6g}"), 0, at + 4
    if kind == _DOUBLE:
        (double,) = _F64.unpack_from(raw, at)
        return double, 0, at + 8
    raise ValueError(f"number kind {kind} unknown")


def schedule_state_of(record: PageRecord) -> ScheduleState | None:
    """The record's schedule state (``None``: none, or unreadable, which starts a new one)."""
    schedule = record.schedule
    if type(schedule) is Schedule:
        return _numbers_state(schedule.numbers)
    return _mapping_state(schedule)


def _numbers_state(numbers: tuple[Any, ...]) -> ScheduleState | None:
    """:func:`schedule_state_of` of a schedule of the numbers ``numbers`` (:attr:`Schedule.numbers`):
    ``ScheduleState.from_dict`` of them, its checks included, without a conversion per number
    (they have their types already)."""
    if not _DIRECT_STATE:
        return _mapping_state(schedule_dict(numbers))
    last_fetch, _, interval, _, rate, size, _, _, old0, old1, old2, probe, flat = numbers
    # from_dict's checks: finite, the interval positive, the rate, size and folded ones not negative
    if not (
        -_INF < last_fetch < _INF
        and 0 < interval < _INF
        and 0 <= rate < _INF
        and 0 <= size < _INF
        and 0 <= old0 < _INF
        and 0 <= old1 < _INF
        and 0 <= old2 < _INF
    ):
        return None
    pairs = iter(flat)
    state = object.__new__(ScheduleState)
    state.__dict__.update(zip(_STATE_FIELDS, (*numbers[:8], tuple(zip(pairs, pairs)), old0, old1, old2, probe)))
    return state


def _mapping_state(schedule: Mapping[str, Any] | None) -> ScheduleState | None:
    """:func:`schedule_state_of` of a schedule mapping (``None``: none)."""
    if not schedule:
        return None
    parts = _exact_schedule(schedule) if _DIRECT_STATE else None
    if parts is None:
        try:
            return ScheduleState.from_dict(dict(schedule))
        except ValueError:
            return None
    last_fetch, last_change, interval, next_due, rate, size, probe, fetches, changes, old, flat = parts
    return _numbers_state(
        (last_fetch, last_change, interval, next_due, rate, size, fetches, changes, *old, probe, flat)
    )


_INF = math.inf
#: ScheduleState's fields, in order, when schedule_state_of's direct path was written (``to_dict``'s keys up to
#: ``recent``, then ``old`` unfolded, then ``probe``): if they change, ``from_dict`` is used.
_STATE_FIELDS = (*_SCHEDULE_KEYS[:9], "old_changes", "old_changed_secs", "old_unchanged_secs", "probe")
_DIRECT_STATE = tuple(f.name for f in fields(ScheduleState)) == _STATE_FIELDS
