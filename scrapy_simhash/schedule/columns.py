"""The schedule states of many URLs as numpy columns (:class:`ScheduleColumns`): what a policy ranks
at once (:meth:`~scrapy_simhash.schedule.SchedulePolicy.priorities`) and a crawl's selection builds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scrapy_simhash.schedule.state import ScheduleState


class ScheduleColumns:
    """The numbers that priorities depend on, for many URLs, as numpy arrays (one row per URL),
    and the states themselves (``states``, ``None`` for rows not set from one), from which a policy
    may derive more per row (:meth:`derived`: computed once per row and kept until the row is set
    again)."""

    FIELDS = ("last_fetch", "next_due", "interval", "rate", "size", "probe")

    def __init__(self, n: int) -> None:
        self.last_fetch = np.zeros(n)
        self.next_due = np.zeros(n)
        self.interval = np.ones(n)
        self.rate = np.zeros(n)
        self.size = np.zeros(n)
        self.probe = np.zeros(n)
        self.states: list[ScheduleState | None] = [None] * n
        self._derived: dict[Any, tuple[np.ndarray, set[int]]] = {}

    @classmethod
    def of(cls, states: Sequence[ScheduleState]) -> ScheduleColumns:
        """One row per state, in order."""
        columns = cls(0)
        for name in cls.FIELDS:
            setattr(columns, name, np.array([getattr(state, name) for state in states], dtype=float))
        columns.states = list(states)
        return columns

    def put(self, i: int, state: ScheduleState) -> None:
        """Set row ``i`` from ``state``."""
        for name in self.FIELDS:
            getattr(self, name)[i] = getattr(state, name)
        self.states[i] = state
        for _, stale in self._derived.values():
            stale.add(i)

    def derived(self, key: Any, width: int, row: Any, rows: Any = None) -> np.ndarray:
        """A ``(rows, width)`` array, row ``i`` being ``row(states[i])`` (a row without a state is
        zeros), kept under ``key`` and recomputed only for the rows set since; ``rows``, if given,
        makes many of them at once (a list of states -> their rows, the same values)."""
        if key not in self._derived:
            self._derived[key] = (np.zeros((len(self.states), width)), set(range(len(self.states))))
        values, stale = self._derived[key]
        if rows is not None and len(stale) >= _BATCH:
            at = [i for i in sorted(stale) if self.states[i] is not None]
            values[sorted(stale)] = 0.0
            if at:
                values[at] = rows([self.states[i] for i in at])
        else:
            for i in stale:
                state = self.states[i]
                values[i] = 0.0 if state is None else row(state)
        stale.clear()
        return values


#: Stale rows from which :meth:`ScheduleColumns.derived` makes them at once (when it can).
_BATCH = 8
