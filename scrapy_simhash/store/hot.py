"""A record's hot state: the fixed 57 bytes of it that a recrawl selection reads (its due time, the
schedule numbers a policy ranks by, whether it has a usable schedule and a history), kept by the
stores beside each record with a due time and written with it (:func:`hot_of`); LMDB keeps it in
34 bytes where they hold it exactly (:func:`compact`, :func:`expand`), and in 28 without the due
time where the due index's key holds it (:func:`keyed`)."""

from __future__ import annotations

import struct

import numpy as np

#: ``due`` (ms, the store's), ``flags``, then the schedule's ``last_fetch``, ``next_due``,
#: ``interval``, ``rate``, ``size``, ``probe`` (zeros without a schedule); little-endian, packed.
HOT = np.dtype(
    [
        ("due", "<i8"),
        ("flags", "u1"),
        ("last_fetch", "<f8"),
        ("next_due", "<f8"),
        ("interval", "<f8"),
        ("rate", "<f8"),
        ("size", "<f8"),
        ("probe", "<f8"),
    ]
)

_PACK = struct.Struct("<qB6d")
assert _PACK.size == HOT.itemsize

#: In ``flags``: the record has a schedule state a policy can rank (not gone, readable).
STATE = 1
#: In ``flags``: that state holds observations (``recent`` or folded ones), which some policies
#: rank by (:class:`~scrapy_simhash.schedule.FreshnessPolicy`'s posterior): the record is read then.
HISTORY = 2

_NONE = (0.0,) * 6


def hot_of(record: bytes, due: int) -> bytes:
    """The hot state of the record ``record`` (a stored value) filed with due time ``due`` (ms)."""
    from scrapy_simhash.store.record import schedule_state

    state = schedule_state(bytes(record))
    if state is None:
        return _PACK.pack(due, 0, *_NONE)
    history = state.recent or state.old_changes or state.old_changed_secs or state.old_unchanged_secs
    return _PACK.pack(
        due,
        STATE | (HISTORY if history else 0),
        state.last_fetch,
        state.next_due,
        state.interval,
        state.rate,
        state.size,
        state.probe,
    )


def hot_due(hot: bytes) -> int:
    """The due time (ms) in a hot state."""
    return int.from_bytes(hot[:8], "little", signed=True)


#: The compact form (:func:`compact`): ``flags``; ``due`` (ms, 48 bits: low 32, high 16); the
#: schedule's ``last_fetch`` (ms, 48 bits); ``next_due`` (ms after ``due``, with ``STATE``); ``interval`` (ms, 40
#: bits); ``rate`` (``m << 5 | k``: ``m / 10**k``, ``rate`` to 6 significant digits as the
#: record keeps it); ``size`` and ``probe`` (ms); little-endian, packed.
COMPACT = np.dtype(
    [
        ("flags", "u1"),
        ("due", "<u4"),
        ("due_hi", "<u2"),
        ("last_fetch", "<u4"),
        ("last_fetch_hi", "<u2"),
        ("next_due", "<i4"),
        ("interval", "<u4"),
        ("interval_hi", "u1"),
        ("rate", "<u4"),
        ("size", "<u4"),
        ("probe", "<u4"),
    ]
)
_COMPACT = struct.Struct("<BIHIHiIBIII")
assert _COMPACT.size == COMPACT.itemsize
#: ``10 ** k`` for a compact rate's ``k`` (exact up to 22: a division by it is then exact to the bit).
_TENS = np.array([float(10**k) for k in range(32)])
_TENS_LIST = _TENS.tolist()


def compact(hot: bytes) -> bytes:
    """The compact form of the hot state ``hot`` where it reads back as ``hot``, to the bit
    (whole milliseconds, a rate of up to 8 significant digits), else ``hot`` itself."""
    due, flags, last_fetch, next_due, interval, rate, size, probe = _PACK.unpack(hot)
    try:
        due_ms, fetch_ms = due, round(last_fetch * 1000.0)
        interval_ms, size_ms, probe_ms = round(interval * 1000.0), round(size * 1000.0), round(probe * 1000.0)
        ahead = round(next_due * 1000.0) - (due_ms if flags & STATE else 0)
        k = 0
        while k < 23 and round(rate * _TENS_LIST[k]) / _TENS_LIST[k] != rate:
            k += 1
        m = round(rate * _TENS_LIST[k])
        packed = _COMPACT.pack(
            flags,
            due_ms & 0xFFFFFFFF,
            due_ms >> 32,
            fetch_ms & 0xFFFFFFFF,
            fetch_ms >> 32,
            ahead,
            interval_ms & 0xFFFFFFFF,
            interval_ms >> 32,
            m << 5 | k,
            size_ms,
            probe_ms,
        )
    except (struct.error, OverflowError, ValueError):
        return hot
    return packed if expand_one(packed) == hot else hot


#: A compact hot state without its due time (bytes 1 to 6, :data:`COMPACT`'s ``due`` and
#: ``due_hi``): what the LMDB due index keeps where its key holds the same due time.
KEYED_SIZE = COMPACT.itemsize - 6


def keyed(packed: bytes, due: int) -> bytes:
    """The compact hot state ``packed`` without its due time, when that is ``due`` (ms), else as it is."""
    if len(packed) == COMPACT.itemsize and int.from_bytes(packed[1:7], "little") == due:
        return packed[:1] + packed[7:]
    return packed


def unkeyed(packed: bytes, due: int) -> bytes:
    """The compact hot state of a :func:`keyed` one filed under ``due`` (ms); others as they are."""
    if len(packed) == KEYED_SIZE:
        return packed[:1] + due.to_bytes(6, "little") + packed[1:]
    return packed


def expand_one(packed: bytes) -> bytes:
    """The hot state of one compact one (:func:`expand`'s, with Python's floats: the same IEEE
    operations)."""
    flags, due, due_hi, fetch, fetch_hi, ahead, interval, interval_hi, rate, size, probe = _COMPACT.unpack(packed)
    due |= due_hi << 32
    return _PACK.pack(
        due,
        flags,
        (fetch | fetch_hi << 32) / 1000,
        ((due if flags & STATE else 0) + ahead) / 1000,
        (interval | interval_hi << 32) / 1000,
        (rate >> 5) / _TENS_LIST[rate & 31],
        size / 1000,
        probe / 1000,
    )


def expand(values: list[bytes], dues: bytes | None = None) -> bytes | None:
    """The hot states of ``values`` (each compact, :func:`keyed` or whole) one after the other,
    ``None`` when one of them is none of these (a store written without them); ``dues``: the due
    index keys of the values, one after the other (8 bytes of due time, big-endian, then 4 of
    id), what a keyed value's due time is read from."""
    sizes = set(map(len, values))
    if KEYED_SIZE in sizes:
        if dues is None or len(dues) != 12 * len(values):
            return None
        if sizes == {KEYED_SIZE}:  # each one's due time put back, at bytes 1 to 6
            n = len(values)
            rows = np.empty((n, COMPACT.itemsize), dtype=np.uint8)
            rest = np.frombuffer(b"".join(values), dtype=np.uint8).reshape(n, KEYED_SIZE)
            rows[:, :1] = rest[:, :1]
            rows[:, 7:] = rest[:, 1:]
            ms = np.frombuffer(dues, dtype=np.dtype([("due", ">i8"), ("id", "V4")]))["due"].astype("<i8")
            rows[:, 1:7] = ms.view(np.uint8).reshape(n, 8)[:, :6]
            return _expand(rows.reshape(-1).view(COMPACT)).tobytes()
        values = [
            unkeyed(v, int.from_bytes(dues[i * 12 : i * 12 + 8], "big")) if len(v) == KEYED_SIZE else v
            for i, v in enumerate(values)
        ]
        sizes = set(map(len, values))
    if sizes <= {HOT.itemsize}:
        return b"".join(values)
    if sizes == {COMPACT.itemsize}:
        return _expand(np.frombuffer(b"".join(values), dtype=COMPACT)).tobytes()
    if sizes == {HOT.itemsize, COMPACT.itemsize}:
        small = [v for v in values if len(v) == COMPACT.itemsize]
        whole = _expand(np.frombuffer(b"".join(small), dtype=COMPACT)).tobytes()
        at = iter(range(0, len(whole), HOT.itemsize))
        return b"".join([v if len(v) == HOT.itemsize else whole[(i := next(at)) : i + HOT.itemsize] for v in values])
    return None


#: :data:`COMPACT` read with 8-byte loads over its 48- and 40-bit fields (masked: :func:`_expand`).
_LOADS = np.dtype(
    {
        "names": ["flags", "due", "last_fetch", "next_due", "interval", "rate", "size", "probe"],
        "formats": ["u1", "<i8", "<i8", "<i4", "<i8", "<u4", "<u4", "<u4"],
        "offsets": [0, 1, 7, 13, 17, 22, 26, 30],
        "itemsize": COMPACT.itemsize,
    }
)
_M48, _M40 = (1 << 48) - 1, (1 << 40) - 1


def _expand(c: np.ndarray) -> np.ndarray:
    """The :data:`HOT` array of a :data:`COMPACT` one."""
    c = c.view(_LOADS)
    out = np.empty(len(c), dtype=HOT)
    due = c["due"] & _M48
    out["due"] = due
    out["flags"] = c["flags"]
    out["last_fetch"] = (c["last_fetch"] & _M48) / 1000
    out["next_due"] = ((due & -(c["flags"] & STATE).astype(np.int64)) + c["next_due"]) / 1000
    out["interval"] = (c["interval"] & _M40) / 1000
    rate = c["rate"]
    out["rate"] = (rate >> 5) / _TENS[rate & 31]
    out["size"] = c["size"] / 1000
    out["probe"] = c["probe"] / 1000
    return out
