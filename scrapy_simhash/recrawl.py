"""Per-URL change tracking: the record kept for every canonical URL and how a new fetch updates it.

Pure: no Scrapy import. The middleware stores records with ``SimhashIndex.put_record`` as compact
JSON (fingerprints as hexadecimal strings, so that 128-bit values survive any JSON reader).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["CHANGED", "NEAR_DUPLICATE", "NEW", "UNCHANGED", "VERDICTS", "PageRecord", "change_verdict"]

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
    Times are Unix seconds.
    """

    first_seen: float
    last_fetched: float
    last_changed: float
    fetch_count: int = 1
    change_count: int = 0
    history: tuple[tuple[int, int | None], ...] = field(default_factory=tuple)
    duplicate_of: str | None = None

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
        return replace(
            self,
            last_fetched=now,
            last_changed=now if changed else self.last_changed,
            fetch_count=self.fetch_count + 1,
            change_count=self.change_count + (1 if changed else 0),
            history=(((fp, distance),) + self.history)[:history_size],
            duplicate_of=duplicate_of,
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
