"""A URL's recrawl schedule state (:class:`ScheduleState`), as kept in its record: its numbers and
their order, to the millisecond."""


from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

HOUR = 3600.0


DAY = 24 * HOUR


BELOW_ONE = math.nextafter(1.0, 0.0)  # the highest priority of a URL that is not due


def round_ms(x: Any) -> Any:
    """``round(x, 3)``, faster for a float that is already rounded (most of a schedule's numbers
    are read back from the record): ``x`` when it is the float nearest ``k / 1000`` for an
    integer ``k`` (and small enough that a millisecond is more than its precision), which
    ``round`` returns for such an ``x`` too."""
    if type(x) is float and -1e12 < x < 1e12 and round(x * 1000.0) / 1000 == x:
        return x
    return round(x, 3)


_NUMBER_KEYS = ("last_fetch", "last_change", "interval", "next_due", "rate", "size", "fetches", "changes")


def schedule_dict(numbers: Sequence[Any]) -> dict[str, Any]:
    """:meth:`ScheduleState.to_dict`'s mapping of :meth:`ScheduleState.numbers`."""
    *head, old0, old1, old2, probe, flat = numbers
    schedule = dict(zip(_NUMBER_KEYS, head))
    pairs = iter(flat)
    schedule["recent"] = [[elapsed, size] for elapsed, size in zip(pairs, pairs)]
    schedule["old"] = [old0, old1, old2]
    schedule["probe"] = probe
    return schedule


@dataclass(frozen=True)
class ScheduleState:
    """What a policy knows about one URL's changes; every field is a plain number.

    ``recent`` holds the last observations, newest first: ``(elapsed, size)`` with ``elapsed`` the
    seconds since the fetch before it and ``size`` the change distance when the page changed (-1 if
    unknown, e.g. a new ETag), 0 when it did not. Older observations are folded, discounted, into ``old_changes`` (how many changed),
    ``old_changed_secs`` (their total elapsed time) and ``old_unchanged_secs``. ``rate`` is the
    policy's estimate of changes per second (0 for policies that do not estimate one), ``size`` the
    typical change distance (0 until a change is seen). ``probe``: seconds to a planned short
    re-fetch (see :class:`FreshnessPolicy`), 0 when none.
    """

    last_fetch: float
    last_change: float
    interval: float
    next_due: float
    rate: float = 0.0
    size: float = 0.0
    fetches: int = 1
    changes: int = 0
    recent: tuple[tuple[float, float], ...] = ()
    old_changes: float = 0.0
    old_changed_secs: float = 0.0
    old_unchanged_secs: float = 0.0
    probe: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers (times to the millisecond), for the URL's JSON record."""
        return schedule_dict(self.numbers())

    def numbers(self) -> tuple[Any, ...]:
        """The numbers a record keeps, rounded as stored (times to the millisecond, ``rate`` to 6
        significant digits, ``old_changes`` to 4 decimals): ``last_fetch``, ``last_change``,
        ``interval``, ``next_due``, ``rate``, ``size``, ``fetches``, ``changes``, ``old_changes``,
        ``old_changed_secs``, ``old_unchanged_secs``, ``probe``, and ``recent``'s pairs one after
        the other (a tuple). :func:`schedule_dict` makes :meth:`to_dict`'s mapping of them."""
        return self._numbers()

    def _numbers(self) -> tuple[Any, ...]:
        r3 = round_ms
        return (
            r3(self.last_fetch),
            r3(self.last_change),
            r3(self.interval),
            r3(self.next_due),
            float(f"{self.rate:.6g}"),
            r3(self.size),
            self.fetches,
            self.changes,
            round(self.old_changes, 4),
            r3(self.old_changed_secs),
            r3(self.old_unchanged_secs),
            r3(self.probe),
            tuple([r3(x) for pair in self.recent for x in pair]),
        )

    def evolve(self, **changes: Any) -> ScheduleState:
        """A copy with ``changes`` (``dataclasses.replace`` without its per-call field walk,
        which costs more than the rest of a policy's step; there is no ``__post_init__``)."""
        new = object.__new__(type(self))
        fields = new.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return new

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScheduleState:
        """Parse :meth:`to_dict` output; :class:`ValueError` names what is wrong."""
        try:
            old = [float(x) for x in data.get("old", (0.0, 0.0, 0.0))]
            if len(old) != 3:
                raise ValueError(f"'old' needs 3 numbers, got {len(old)}")
            state = cls(
                last_fetch=float(data["last_fetch"]),
                last_change=float(data["last_change"]),
                interval=float(data["interval"]),
                next_due=float(data["next_due"]),
                rate=float(data.get("rate", 0.0)),
                size=float(data.get("size", 0.0)),
                fetches=int(data.get("fetches", 1)),
                changes=int(data.get("changes", 0)),
                recent=tuple((float(e), float(s)) for e, s in data.get("recent", ())),
                old_changes=old[0],
                old_changed_secs=old[1],
                old_unchanged_secs=old[2],
                probe=float(data.get("probe", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a schedule state: {data!r:.200} ({exc!r})") from exc
        numbers = (state.last_fetch, state.interval, state.rate, state.size, *old)
        if not all(math.isfinite(x) for x in numbers) or state.interval <= 0 or min(state.rate, state.size, *old) < 0:
            raise ValueError(f"not a schedule state: {data!r:.200} (negative, zero interval or non-finite value)")
        return state


#: ScheduleState's fields in the order of :meth:`ScheduleState.numbers`.
_NUMBER_NAMES = (*_NUMBER_KEYS, "old_changes", "old_changed_secs", "old_unchanged_secs", "probe", "recent")


_NUMBER_FIELDS = operator.attrgetter(*_NUMBER_NAMES)




#: A state's defaults: what :meth:`SchedulePolicy.observe` starts a URL's state from.
BLANK = ScheduleState(last_fetch=0.0, last_change=0.0, interval=1.0, next_due=0.0)
