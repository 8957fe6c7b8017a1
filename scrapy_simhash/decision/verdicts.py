"""What the decision says about one fetched page: its verdict (:class:`VerdictKind`) and why
(:class:`Reason`).

Both are str-valued enums whose text (``str()``, f-strings, ``%s``, JSON) is their value, so that
the stats (``simhash/<verdict>``, ``simhash/<reason>``), log lines and meta keys read as they did
when they were bare strings, and each compares equal to its value (``NEW == "new"``).
"""

from __future__ import annotations

from enum import Enum

__all__ = ["CHANGED", "NEAR_DUPLICATE", "NEW", "UNCHANGED", "VERDICTS", "Reason", "VerdictKind", "change_verdict"]


class _Text(str, Enum):
    """A str-valued enum that reads as its value (Python 3.10 has no ``enum.StrEnum``)."""

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]


class VerdictKind(_Text):
    """The four verdicts; every fingerprinted response gets exactly one (stat ``simhash/<value>``)."""

    NEW = "new"
    NEAR_DUPLICATE = "near_duplicate"
    UNCHANGED = "unchanged"
    CHANGED = "changed"


NEW = VerdictKind.NEW
NEAR_DUPLICATE = VerdictKind.NEAR_DUPLICATE
UNCHANGED = VerdictKind.UNCHANGED
CHANGED = VerdictKind.CHANGED
#: The four verdicts, in this order.
VERDICTS: tuple[VerdictKind, ...] = tuple(VerdictKind)


class Reason(_Text):
    """Why a page got its verdict (``Verdict.reason``), or why a page that resembles a kept one was
    kept (``Verdict.kept``). The value of a reason that has a stat of its own is that stat's name
    (``simhash/<value>``: :attr:`counted`)."""

    #: No kept page is like it.
    NEW = "new"
    #: Refetched, neither its fingerprint nor its change sketch moved, and its own text adds fewer
    #: than ``keep_adds`` characters to the last fetch's.
    UNCHANGED = "unchanged"
    #: Refetched, and its fingerprint moved more than the change threshold.
    CHANGED = "changed"
    #: Refetched, and its body changed (the change sketches) though its fingerprint did not.
    CHANGED_SKETCH = "changed/sketch"
    #: Refetched, and its own text adds at least ``keep_adds`` characters to the last fetch's,
    #: though neither its fingerprint nor its change sketch moved.
    CHANGED_ADDS = "changed/adds"
    #: A near-duplicate within ``max_distance`` of a kept page (the index's k tier).
    NEAR = "duplicate/near"
    #: A near-duplicate by the wide tier (beyond ``max_distance``, the change sketches alike).
    WIDE = "duplicate/wide"
    #: A copy of a kept short page (``shortcopy``: its whole visible text is the kept page's).
    SHORT_COPY = "duplicate/short_copy"
    #: A near copy of a kept short text beyond ``max_distance`` (the ``dedup`` command's lines:
    #: ``shorttext``, the LSH of their character 5-grams).
    SHORT_TEXT = "duplicate/short_text"
    #: A copy of a kept page of nothing but its site's template.
    TEMPLATE_COPY = "duplicate/template_copy"
    #: Kept: within ``max_distance`` of a page whose change sketch disagrees (``near_similarity``).
    KEPT_UNLIKE = "kept/unlike"
    #: Kept: it resembles a kept page, but its own text adds at least ``keep_adds`` characters.
    KEPT_ADDS = "kept/adds"
    #: Kept: it resembles a kept page, but its own heading names something else (another function,
    #: class, module or entry: ``keep_adds``), or its own text names other code than that page's.
    KEPT_HEADING = "kept/heading"

    @property
    def stat(self) -> str | None:
        """The stat the reason has of its own beside its verdict's (``None``: none)."""
        return _STATS.get(self)


_STATS = {
    Reason.CHANGED_SKETCH: "simhash/changed/sketch",
    Reason.CHANGED_ADDS: "simhash/changed/adds",
    Reason.WIDE: "simhash/duplicate/wide",
    Reason.SHORT_COPY: "simhash/duplicate/short_copy",
    Reason.TEMPLATE_COPY: "simhash/duplicate/template_copy",
    Reason.KEPT_UNLIKE: "simhash/kept/unlike",
    Reason.KEPT_ADDS: "simhash/kept/adds",
    Reason.KEPT_HEADING: "simhash/kept/heading",
}


def change_verdict(distance: int, change_threshold: int) -> VerdictKind:
    """``changed`` when the change ``distance`` is above ``change_threshold``, else ``unchanged``
    (noise such as dates and counters moves a few bits)."""
    return CHANGED if distance > change_threshold else UNCHANGED
