"""A record's hot state: the fixed 57 bytes of it that a recrawl selection reads (its due time, the
schedule numbers a policy ranks by, whether it has a usable schedule and a history), kept by the
stores beside each record with a due time and written with it (:func:`hot_of`)."""

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
    from scrapy_simhash.decision.record import schedule_state

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
