"""The decision layer: what one fetched page is (new, a near-duplicate of a kept page, unchanged or
changed since its last fetch) and why (``verdicts``), decided over the index in one store
transaction (``tracker``: :class:`ChangeTracker`), keeping a record per URL
(:mod:`scrapy_simhash.store.record`), the copies of short and template-only pages (``shortcopy``) and the near copies of short
texts beyond ``max_distance`` (``shorttext``: items). It imports the fingerprint and
store layers, never the Scrapy glue."""

from scrapy_simhash.decision.tracker import ChangeTracker, DueRow, Plan, Verdict
from scrapy_simhash.decision.verdicts import (
    CHANGED,
    NEAR_DUPLICATE,
    NEW,
    UNCHANGED,
    VERDICTS,
    Reason,
    VerdictKind,
    change_verdict,
)

__all__ = [
    "CHANGED",
    "NEAR_DUPLICATE",
    "NEW",
    "UNCHANGED",
    "VERDICTS",
    "ChangeTracker",
    "DueRow",
    "Plan",
    "Reason",
    "Verdict",
    "VerdictKind",
    "change_verdict",
]
