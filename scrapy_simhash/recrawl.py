"""Per-URL change tracking: the record kept for every canonical URL, and the per-page decision.

Pure: no Scrapy import. :class:`ChangeTracker` decides one fetched page (new, near-duplicate,
unchanged, changed) over a :class:`~scrapy_simhash.index.SimhashIndex` and keeps its record there
(``put_record``, compact JSON: fingerprints as hexadecimal strings, so that 128-bit values survive
any JSON reader). The middleware calls it; nothing else decides.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_simhash import defaults

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy_simhash.index import SimhashIndex

__all__ = [
    "CHANGED",
    "NEAR_DUPLICATE",
    "NEW",
    "UNCHANGED",
    "VERDICTS",
    "ChangeTracker",
    "PageRecord",
    "Verdict",
    "change_verdict",
]

NEW = "new"
NEAR_DUPLICATE = "near_duplicate"
UNCHANGED = "unchanged"
CHANGED = "changed"

#: The four verdicts; every fingerprinted response gets exactly one.
VERDICTS: tuple[str, ...] = (NEW, NEAR_DUPLICATE, UNCHANGED, CHANGED)

_SCHEMA = 1


@dataclass(frozen=True)
class PageRecord:
    """What is known about one canonical URL.

    ``history`` holds the last fingerprints, newest first, each with its change distance to the
    fingerprint before it (``None`` for the first fetch). ``duplicate_of`` is the key of the page
    this URL's content duplicated at its last fetch, or ``None`` when it was canonical (indexed).
    ``next_due`` (when to fetch it again, kept in the store's due-time index: see
    ``SimhashIndex.records_due``) and ``schedule`` (the recrawl policy's own state, e.g. interval
    and change-rate estimate, a JSON mapping) belong to the recrawl scheduler. Times are Unix
    seconds.
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
        """The record after a new fetch with fingerprint ``fp`` at change ``distance``."""
        if history_size < 1:
            raise ValueError(f"history_size ({history_size!r}) is invalid: it must be >= 1")
        now = time.time() if now is None else now
        # The constructor, not dataclasses.replace: this runs for every page fetched again.
        return PageRecord(
            first_seen=self.first_seen,
            last_fetched=now,
            last_changed=now if changed else self.last_changed,
            fetch_count=self.fetch_count + 1,
            change_count=self.change_count + (1 if changed else 0),
            history=(((fp, distance),) + self.history)[:history_size],
            duplicate_of=duplicate_of,
            next_due=self.next_due,
            schedule=self.schedule,
        )

    def to_bytes(self) -> bytes:
        """Compact JSON (UTF-8); fingerprints as hexadecimal strings."""
        data: dict[str, Any] = {
            "v": _SCHEMA,
            "first_seen": round(self.first_seen, 3),
            "last_fetched": round(self.last_fetched, 3),
            "last_changed": round(self.last_changed, 3),
            "fetch_count": self.fetch_count,
            "change_count": self.change_count,
            "history": [[format(fp, "x"), distance] for fp, distance in self.history],
        }
        if self.duplicate_of is not None:
            data["duplicate_of"] = self.duplicate_of
        if self.next_due is not None:
            data["next_due"] = round(self.next_due, 3)
        if self.schedule is not None:
            data["schedule"] = dict(self.schedule)
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_bytes(cls, raw: bytes) -> PageRecord:
        """Parse :meth:`to_bytes` output; :class:`ValueError` if ``raw`` is not a record."""
        try:
            data = json.loads(raw.decode("utf-8"))
            history = tuple((int(fp, 16), None if d is None else int(d)) for fp, d in data["history"])
            return cls(
                first_seen=float(data["first_seen"]),
                last_fetched=float(data["last_fetched"]),
                last_changed=float(data["last_changed"]),
                fetch_count=int(data["fetch_count"]),
                change_count=int(data["change_count"]),
                history=history,
                duplicate_of=data.get("duplicate_of"),
                next_due=None if data.get("next_due") is None else float(data["next_due"]),
                schedule=_mapping(data.get("schedule")),
            )
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a page record: {raw[:80]!r} ({exc})") from exc

    @classmethod
    def parse(cls, raw: bytes | None) -> PageRecord | None:
        """The record in ``raw`` (a stored value), or ``None`` when there is none or it is unreadable."""
        if raw is None:
            return None
        try:
            return cls.from_bytes(raw)
        except ValueError:
            return None


def change_verdict(distance: int, change_threshold: int) -> str:
    """``"changed"`` when the change ``distance`` is above ``change_threshold``, else ``"unchanged"``
    (noise such as dates and counters moves a few bits)."""
    return CHANGED if distance > change_threshold else UNCHANGED


def _mapping(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"schedule must be a JSON object, got {value!r}")
    return value


class Verdict(NamedTuple):
    """The decision on one fetched page: ``verdict`` (one of :data:`VERDICTS`), its fingerprint,
    the distance (to the duplicated page, or the change distance to the URL's previous
    fingerprint), the key it duplicates, the record now stored, and whether an unreadable stored
    record was replaced (the caller counts that as a store error)."""

    verdict: str
    fp: int
    distance: int | None = None
    duplicate_of: str | None = None
    record: PageRecord | None = None
    replaced_unreadable: bool = False


class ChangeTracker:
    """The per-page decision over an index: near-duplicate check, change tracking, record update.

    :meth:`observe` reads the URL's record, decides, updates the index (check-and-add, or the
    canonical page's newest fingerprint) and writes the record, in one :meth:`SimhashIndex.batch`
    (one LMDB transaction). Store failures propagate as
    :class:`~scrapy_simhash.errors.StoreError` (the caller fails open).

    :param change_threshold: a refetched page whose fingerprint moved more than this many bits is
        ``changed`` (`SIMHASH_CHANGE_THRESHOLD`).
    :param history_size: past fingerprints kept per URL (`SIMHASH_HISTORY_SIZE`).
    """

    def __init__(
        self,
        index: SimhashIndex,
        *,
        change_threshold: int = defaults.SIMHASH_CHANGE_THRESHOLD,
        history_size: int = defaults.SIMHASH_HISTORY_SIZE,
    ) -> None:
        if history_size < 1:
            raise ValueError(f"history_size ({history_size!r}) is invalid: it must be >= 1")
        self.index = index
        self.change_threshold = change_threshold
        self.history_size = history_size

    def deduplicate(self, key: str, fp: int) -> Verdict:
        """Only the near-duplicate decision, without records (the item pipeline): ``new`` (``fp``
        is now ``key``'s fingerprint) or ``near_duplicate`` (one check-and-add)."""
        match = self.index.check_and_add(key, fp)
        if match is None:
            return Verdict(NEW, fp)
        return Verdict(NEAR_DUPLICATE, fp, match.distance, match.key)

    def observe(self, key: str, fp: int, now: float | None = None) -> Verdict:
        """Decide on ``key`` fetched now with fingerprint ``fp``; store the outcome."""
        index = self.index
        now = time.time() if now is None else now
        distance = duplicate_of = None
        with index.batch():
            raw = index.get_record(key)
            record = PageRecord.parse(raw)
            last_fp = None if record is None else record.last_fp
            if record is None or last_fp is None:
                match = index.check_and_add(key, fp)
                if match is None:
                    verdict = NEW
                else:
                    verdict, distance, duplicate_of = NEAR_DUPLICATE, match.distance, match.key
                new_record = PageRecord.first(fp, now=now, duplicate_of=duplicate_of)
            else:
                distance = change = (fp ^ last_fp).bit_count()
                if change <= self.change_threshold:
                    verdict = UNCHANGED
                    duplicate_of = record.duplicate_of
                    if duplicate_of is None and index.get(key) != fp:
                        index.add(key, fp)  # keep the canonical page's newest fingerprint
                else:
                    verdict = CHANGED
                    # check_and_add forgets the URL's old fingerprint when its new content is a
                    # near-duplicate: old content must not keep matching future pages.
                    match = index.check_and_add(key, fp)
                    if match is not None:
                        verdict, distance, duplicate_of = NEAR_DUPLICATE, match.distance, match.key
                new_record = record.updated(
                    fp,
                    change,
                    change > self.change_threshold,
                    now=now,
                    history_size=self.history_size,
                    duplicate_of=duplicate_of,
                )
            index.put_record(key, new_record.to_bytes(), due=new_record.next_due)
        return Verdict(verdict, fp, distance, duplicate_of, new_record, record is None and raw is not None)
