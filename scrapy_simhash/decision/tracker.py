"""The per-page decision: :class:`ChangeTracker` decides one fetched page (new, near-duplicate,
unchanged, changed, and why: :class:`~scrapy_simhash.decision.verdicts.Reason`) over a
:class:`~scrapy_simhash.store.index.SimhashIndex` in one store transaction and keeps its record
there (:class:`~scrapy_simhash.store.record.PageRecord`); and the recrawl plan of a URL.

Pure: no Scrapy import. The middleware calls it and counts and logs what it says; nothing else
decides.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from scrapy_simhash import defaults
from scrapy_simhash.decision import shortcopy, shorttext
from scrapy_simhash.decision.selection import DueRow, select_known
from scrapy_simhash.decision.verdicts import CHANGED, NEAR_DUPLICATE, NEW, UNCHANGED, Reason, VerdictKind
from scrapy_simhash.fingerprint.simhash import Fallback
from scrapy_simhash.fingerprint.sketch import filled, is_sketch, sketch_similarity, stored
from scrapy_simhash.store.record import (
    PageRecord,
    build_record,
    change_size,
    evidence_text,
    frame_evidence,
    read_evidence,
    schedule_of,
    schedule_state_of,
    visible_key,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scrapy_simhash.fingerprint import PageFingerprint
    from scrapy_simhash.fingerprint.novelty import OwnText
    from scrapy_simhash.fingerprint.templates import SiteTemplates
    from scrapy_simhash.schedule import SchedulePolicy
    from scrapy_simhash.store.index import Match, SimhashIndex

    #: What a decision's rules call: the index, or its snapshot view (the same calls).
    Index = SimhashIndex

__all__ = ["ChangeTracker", "DueRow", "Plan", "Verdict"]


_T = TypeVar("_T")


class Verdict(NamedTuple):
    """The decision on one fetched page: ``verdict`` (one of :data:`VERDICTS`), its fingerprint,
    distance, duplicated key and stored record, and why (``reason``, ``kept``).

    ``unlike``, ``adds_to``, ``adds`` and ``evidence_missing`` name the kept page a resembling page
    was measured against and what came of it; ``docs/reference/verdicts.rst`` describes each field.
    """

    verdict: VerdictKind
    fp: int
    distance: int | None = None
    duplicate_of: str | None = None
    record: PageRecord | None = None
    replaced_unreadable: bool = False
    unlike: str | None = None
    adds_to: str | None = None
    adds: float | None = None
    reason: Reason | None = None
    kept: Reason | None = None
    evidence_missing: bool = False


class _Found(NamedTuple):
    """What the near-duplicate rules found for a page: the page it duplicates (``None``: none), by
    which rule (``reason``), the key of a page within ``max_distance`` it was kept beside
    (``unlike``), and the evidence to store where it is kept as a short or template-only page
    (written with its record, in the same transaction)."""

    match: Match | None
    reason: Reason | None = None
    unlike: str | None = None
    evidence: shortcopy.Evidence | None = None


#: A first record's fields after its history, but for its evidence flag (duplicate_of to visible_key).
_FIRST_REST = (None, None, None, None, None, False, None, None, None)

#: Nothing found (most pages): one instance.
_NOTHING = _Found(None)


class Plan(NamedTuple):
    """What to do with a request for one key (:meth:`ChangeTracker.plan`): ``status`` is ``"new"``
    (no record), ``"due"`` or ``"not_due"``; ``priority`` the policy's value of a fetch now when
    due (at least 1), else 0; ``due`` the record's due time (``None``: new, or a record
    without a schedule, which is always due); ``key`` the key whose record decided (the redirect
    target of a moved URL)."""

    status: str
    priority: float
    due: float | None
    key: str


PLAN_NEW, PLAN_DUE, PLAN_NOT_DUE = "new", "due", "not_due"

#: The wide tier's evidence: both change sketches fill at least this many of their 64 slots
#: (about 44 distinct word 3-shingles or more), so that no short page is judged by a few shingles.
WIDE_MIN_SLOTS = 32


class ChangeTracker:
    """The per-page decision over an index: near-duplicate check, change tracking, record update and
    recrawl schedule.

    :meth:`observe` decides on one fetched page in one store transaction and returns its
    :class:`Verdict`; store failures raise :class:`~scrapy_simhash.errors.StoreError`.

    :param change_threshold: the most bits a refetched page's fingerprint may move and stay
        ``unchanged`` (`SIMHASH_CHANGE_THRESHOLD`).
    :param change_similarity: the change sketch similarity under which a refetched page is
        ``changed`` (`SIMHASH_CHANGE_SIMILARITY`; 0: off).
    :param history_size: past fingerprints kept per URL (`SIMHASH_HISTORY_SIZE`).
    :param policy: the recrawl :class:`~scrapy_simhash.schedule.SchedulePolicy`
        (`SIMHASH_RECRAWL_POLICY`); ``None``: records get no schedule (always due).
    :param clock: Unix time now (`SIMHASH_CLOCK`), for calls without ``now``.
    :param wide_distance: the wide tier's largest distance (`SIMHASH_WIDE_DISTANCE`;
        ``<= index.max_distance``: off).
    :param wide_similarity: the least change sketch similarity of a wide-tier match
        (`SIMHASH_WIDE_SIMILARITY`).
    :param near_similarity: the least change sketch similarity of a drop within ``max_distance``
        (`SIMHASH_NEAR_SIMILARITY`; 0: off).
    :param keep_adds: characters of its own text that keep a page beside a kept page it resembles,
        and make a refetch ``changed`` (`SIMHASH_KEEP_ADDS`; 0: off, no evidence stored).
    :param evidence_max_bytes: the most bytes of a kept page's novelty evidence
        (`SIMHASH_EVIDENCE_MAX_BYTES`; 0: no bound).
    """

    def __init__(
        self,
        index: SimhashIndex,
        *,
        change_threshold: int = defaults.SIMHASH_CHANGE_THRESHOLD,
        history_size: int = defaults.SIMHASH_HISTORY_SIZE,
        policy: SchedulePolicy | None = None,
        clock: Callable[[], float] = time.time,
        change_similarity: float = defaults.SIMHASH_CHANGE_SIMILARITY,
        wide_distance: int = defaults.SIMHASH_WIDE_DISTANCE,
        wide_similarity: float = defaults.SIMHASH_WIDE_SIMILARITY,
        near_similarity: float = defaults.SIMHASH_NEAR_SIMILARITY,
        keep_adds: int = defaults.SIMHASH_KEEP_ADDS,
        evidence_max_bytes: int = defaults.SIMHASH_EVIDENCE_MAX_BYTES,
    ) -> None:
        if history_size < 1:
            raise ValueError(f"history_size ({history_size!r}) is invalid: it must be >= 1")
        if not 0.0 <= change_similarity <= 1.0:
            raise ValueError(f"change_similarity ({change_similarity!r}) is invalid: it must be between 0 and 1")
        if isinstance(wide_distance, bool) or not isinstance(wide_distance, int) or wide_distance < 0:
            raise ValueError(f"wide_distance ({wide_distance!r}) is invalid: it must be an int >= 0 (0: off)")
        if not 0.0 < wide_similarity <= 1.0:
            raise ValueError(f"wide_similarity ({wide_similarity!r}) is invalid: it must be above 0 and at most 1")
        if not 0.0 <= near_similarity <= 1.0:
            raise ValueError(f"near_similarity ({near_similarity!r}) is invalid: it must be between 0 (off) and 1")
        if isinstance(keep_adds, bool) or not isinstance(keep_adds, int) or keep_adds < 0:
            raise ValueError(f"keep_adds ({keep_adds!r}) is invalid: it must be an int >= 0 (0: off)")
        if isinstance(evidence_max_bytes, bool) or not isinstance(evidence_max_bytes, int) or evidence_max_bytes < 0:
            raise ValueError(
                f"evidence_max_bytes ({evidence_max_bytes!r}) is invalid: it must be an int >= 0 (0: no bound)"
            )
        self.keep_adds = keep_adds
        self.evidence_max_bytes = evidence_max_bytes
        self.index = index
        self.wide_distance = wide_distance
        self.wide_similarity = wide_similarity
        self.near_similarity = near_similarity
        self.change_threshold = change_threshold
        self.change_similarity = change_similarity
        self.history_size = history_size
        self.policy = policy
        self.clock = clock
        #: The site templates that :meth:`observe` teaches (the spider middleware's; ``None``: none).
        self.templates: SiteTemplates | None = None

    def deduplicate(
        self, key: str, fp: int, own: OwnText | None = None, short: shorttext.ShortText | None = None
    ) -> Verdict:
        """Only the near-duplicate decision (the item pipeline, the ``dedup`` command): ``new``
        (``fp`` is now ``key``'s fingerprint) or ``near_duplicate`` of a key within the index's
        ``max_distance`` (check-and-add), in one batch. With ``own`` (the item's own text) and
        ``keep_adds``, the containment rule of :meth:`observe` applies (``Verdict.adds``: what it
        adds to the page it duplicates, or to the one it resembles and is kept beside,
        ``adds_to``), and a kept key's novelty evidence is stored, what later keys are measured
        against. With ``short`` (:func:`~scrapy_simhash.decision.shorttext.short_text` of its
        text; the ``dedup`` command), a key that no key within ``max_distance`` makes redundant is also a near-duplicate
        of a kept short text it resembles (:mod:`~scrapy_simhash.decision.shorttext`, the earliest
        key first) and adds fewer than ``keep_adds`` characters to (``Reason.SHORT_TEXT``)."""
        return self._decided(key, fp, 0, lambda ix: self._deduplicate(ix, key, fp, own, short), self._measures(own))

    def _deduplicate(
        self, ix: Index, key: str, fp: int, own: OwnText | None, short: shorttext.ShortText | None
    ) -> Verdict:
        """:meth:`deduplicate` over ``ix`` (:meth:`SimhashIndex.decisions`' view)."""
        match = ix.check_and_add(key, fp)
        adds_to = adds = kept = None
        missing = False
        reason = Reason.NEAR
        if match is not None:
            match, adds_to, adds, kept, missing = self._adds(ix, key, fp, match, own, True)
        lookup = None if short is None else shorttext.Lookup(ix, key, short)
        if match is None and lookup is not None:
            resembled = None
            for found in lookup.resembling():
                if not self.keep_adds or found.adds < self.keep_adds:
                    ix.remove(key)  # indexed above: a duplicate now
                    match, adds, reason = self._short_match(found, fp), found.adds, Reason.SHORT_TEXT
                    break
                resembled = resembled or found
            if match is None and resembled is not None and adds_to is None:
                adds_to, adds, kept = resembled.key, resembled.adds, Reason.KEPT_ADDS
        if match is not None:
            return Verdict(
                NEAR_DUPLICATE,
                fp,
                match.distance,
                match.key,
                adds=adds,
                reason=reason,
                evidence_missing=missing,
            )
        if own is not None and self.keep_adds:
            evidence = self._evidence(fp, own)
            now = time.time()  # PageRecord.first's, with its evidence flag (as _observe builds it)
            history = ((fp, None),)
            record = build_record(PageRecord, now, now, now, 1, 0, history, *_FIRST_REST, evidence is not None)
            ix.put_record(key, record.to_bytes(), evidence=evidence or b"")
        if lookup is not None:
            lookup.remember(fp)
        return Verdict(NEW, fp, adds_to=adds_to, adds=adds, reason=Reason.NEW, kept=kept, evidence_missing=missing)

    @staticmethod
    def _short_match(found: shorttext.Resembled, fp: int) -> Match:
        from scrapy_simhash.store.index import Match

        return Match(found.key, found.fp, (fp ^ found.fp).bit_count())

    def _evidence(self, fp: int, own: OwnText) -> bytes | None:
        """The novelty evidence of a page kept with fingerprint ``fp`` (framed for the store:
        ``b""`` when it is over ``evidence_max_bytes``), ``None`` for a page without own text."""
        if not own.has_text:
            return None
        limit = self.evidence_max_bytes
        sketch = own.novelty_text(limit or _NO_BOUND)
        return b"" if limit and len(sketch) > limit else frame_evidence(fp, sketch, own.heading)

    def observe(
        self,
        key: str,
        page: PageFingerprint,
        now: float | None = None,
        *,
        validators: tuple[str | None, str | None] = (None, None),
        url: str | None = None,
    ) -> Verdict:
        """Decide on ``key`` fetched now as ``page``, and store the outcome, the response's
        ``validators`` (ETag, Last-Modified) and the page's evidence in one transaction. Returns
        the :class:`Verdict`; the rules it applies are described in docs/topics/how-it-works.rst.
        A page that is not ``unchanged`` is then shown to :attr:`templates` (``url``: its site)."""
        now = self.clock() if now is None else now
        verdict = self._decided(
            key,
            page.fp,
            self._wide_for(page),
            lambda ix: self._observe(ix, key, page, now, validators),
            self._measures(page.own),
        )
        if self.templates is not None and verdict.verdict != UNCHANGED:
            # Not an unchanged refetch, nor (by fingerprint) an exact copy: those must not make a
            # page's own text look like its site's template.
            self.templates.observe(url or key, page.visible.split("\n"), page.fp)
        return verdict

    def _decided(self, key: str, fp: int | None, wide: int, rule: Callable[[Index], _T], evidence: bool = False) -> _T:
        """``rule(view)``: one decision on ``key`` over the index's view of it, written with its
        result (:meth:`SimhashIndex.decisions`: decided again where another process changed
        what it read)."""
        for attempt in self.index.decisions(key, fp, wide, evidence=evidence):
            with attempt as view:
                result = rule(view)
        return result

    def _measures(self, own: OwnText | None) -> bool:
        """Whether a decision on a page with own text ``own`` may read novelty evidence."""
        return bool(self.keep_adds) and own is not None and own.has_text

    def _wide_for(self, page: PageFingerprint) -> int:
        """The wide tier's distance where :meth:`_check_and_add` may look ``page`` up with it, else 0."""
        sketch = page.sketch
        if not page.may_match or page.fallback is not None or not is_sketch(sketch):
            return 0
        return self.wide_distance if filled(sketch) >= WIDE_MIN_SLOTS else 0

    def _observe(
        self, ix: Index, key: str, page: PageFingerprint, now: float, validators: tuple[str | None, str | None]
    ) -> Verdict:
        """:meth:`observe` over ``ix`` (:meth:`SimhashIndex.decisions`' view): its rules as functions
        of what ``ix`` read, its writes made to ``ix``."""
        fp, may_match, sketch, fallback = page.fp, page.may_match, page.sketch, page.fallback
        content_key, visible, own = page.content_key, page.visible, page.own
        index = ix
        vkey = visible_key(visible)
        distance = duplicate_of = adds_to = adds = kept = None
        missing = False
        found = _NOTHING
        change = 0  # the change distance to the last fetch (what the schedule weighs a change by)
        raw = index.get_record(key)
        record = PageRecord.parse(raw)
        last_fp = None if record is None else record.last_fp
        if record is None or last_fp is None:
            if may_match:
                found = self._check_and_add(ix, key, fp, sketch, fallback, content_key, visible)
            elif fallback == Fallback.TEMPLATE and content_key is not None:
                found = self._template_copy(ix, key, fp, content_key, visible, vkey)
            match = found.match
            if match is not None:
                match, adds_to, adds, kept, missing = self._adds(ix, key, fp, match, own, may_match)
            if match is None:
                verdict, reason = NEW, Reason.NEW
            else:
                verdict, distance, duplicate_of = NEAR_DUPLICATE, match.distance, match.key
                reason = self._duplicate_reason(found, match, fallback)
            changed: bool | None = None
            # An alias or a gone record without history: it is back, first seen as it was.
            first_seen = now if record is None else record.first_seen
            last_changed, fetch_count, change_count = now, 1, 0
            history: tuple[tuple[int, int | None], ...] = ((fp, None),)
            next_due, schedule = None, None
        else:
            distance = change = (fp ^ last_fp).bit_count()
            # Changed: the fingerprint moved, or the body did though the fingerprint did not
            # (an edit outside the fingerprinted part, or spread thin over a long page).
            changed = change > self.change_threshold or self._sketch_moved(record.sketch, sketch)
            # Or its own text adds what a drop would lose, however alike the two fetches look.
            by_adds = not changed and self._adds_to_last(ix, record, own, key)
            changed = changed or by_adds
            if not may_match:
                verdict, reason = (
                    (CHANGED, self._change_reason(change, by_adds)) if changed else (UNCHANGED, Reason.UNCHANGED)
                )
                duplicate_of = None if changed else record.duplicate_of
                index.remove(key)  # its earlier content must not keep matching other pages
            elif not changed:
                verdict, reason = UNCHANGED, Reason.UNCHANGED
                duplicate_of = record.duplicate_of
                if duplicate_of is None and index.get(key) != fp:
                    index.add(key, fp)  # keep the canonical page's newest fingerprint
            else:
                verdict, reason = CHANGED, self._change_reason(change, by_adds)
                # check_and_add forgets the URL's old fingerprint when its new content is a
                # near-duplicate: old content must not keep matching future pages.
                found = self._check_and_add(ix, key, fp, sketch, fallback, content_key, visible)
                match = found.match
                if match is not None:
                    match, adds_to, adds, kept, missing = self._adds(ix, key, fp, match, own, may_match)
                if match is not None:
                    verdict, distance, duplicate_of = NEAR_DUPLICATE, match.distance, match.key
                    reason = self._duplicate_reason(found, match, fallback)
            first_seen = record.first_seen
            last_changed = now if changed else record.last_changed
            fetch_count, change_count = record.fetch_count + 1, record.change_count + changed
            history = ((fp, change), *record.history)[: self.history_size]
            next_due, schedule = record.next_due, record.schedule
        if self.policy is not None:
            # The size of a change: the change sketches' (on the bits' scale), else the bits';
            # at least one just past the threshold (a change seen by the sketch alone).
            size = change_size(record.sketch if record is not None else None, sketch, change)
            weight = max(size, self.change_threshold + 1) if changed else 0
            next_due, schedule = self._schedule(record, now, changed, weight)
        # What a page that resembles this one is compared with (stored apart from the record, in
        # the same transaction); a dropped page is no candidate; with keep_adds off, none.
        # A refetch that shows the same text as the last fetch keeps its stored evidence: no write.
        keep = (
            verdict == UNCHANGED
            and record is not None
            and record.evidence
            and fp == last_fp
            and vkey is not None
            and vkey == record.visible_key
        )
        evidence = None
        if not keep and own is not None and verdict != NEAR_DUPLICATE and self.keep_adds:
            evidence = self._evidence(fp, own)
        # The fields in order, without dataclasses.replace or the frozen __init__: every page.
        new_record = build_record(
            PageRecord,
            first_seen,
            now,
            last_changed,
            fetch_count,
            change_count,
            history,
            duplicate_of,
            next_due,
            schedule,
            validators[0],
            validators[1],
            False,
            None,
            None if sketch is None else stored(sketch),  # as the record keeps it
            vkey,
            keep or evidence is not None,
        )
        if found.evidence is not None:  # kept as a short or template-only page: what finds its copies
            shortcopy.remember(index, found.evidence)
        index.put_record(key, new_record.to_bytes(), due=next_due, evidence=None if keep else evidence or b"")
        replaced = record is None and raw is not None
        if found.unlike is not None:
            kept = Reason.KEPT_UNLIKE
        return Verdict(
            verdict,
            fp,
            distance,
            duplicate_of,
            new_record,
            replaced,
            found.unlike,
            adds_to,
            adds,
            reason,
            kept,
            missing,
        )

    @staticmethod
    def _duplicate_reason(found: _Found, match: Match, fallback: str | None) -> Reason:
        """The rule that found the page ``match`` that a page duplicates: ``found``'s, or the k tier's
        when the containment check (``_adds``) chose another kept page within ``max_distance``; a
        template-only page is only ever a copy."""
        if fallback == Fallback.TEMPLATE:
            return Reason.TEMPLATE_COPY
        assert found.reason is not None
        return found.reason if match is found.match else Reason.NEAR

    def _change_reason(self, change: int, by_adds: bool = False) -> Reason:
        """A change seen by the fingerprint (it moved more than ``change_threshold``), by the
        change sketch alone, or by what the page's own text adds alone (``by_adds``)."""
        if by_adds:
            return Reason.CHANGED_ADDS
        return Reason.CHANGED if change > self.change_threshold else Reason.CHANGED_SKETCH

    def _adds_to_last(self, ix: Index, record: PageRecord, own: OwnText | None, key: str) -> bool:
        """Whether a refetched page's own text adds at least ``keep_adds`` characters to what its
        URL showed at the last fetch (its evidence), or, for a near-duplicate (it has none), to the
        page it duplicates; ``False`` when there is no evidence to judge by."""
        if not self.keep_adds or own is None or not own.has_text:
            return False
        if record.duplicate_of is not None and not record.evidence:
            key = record.duplicate_of
            kept = PageRecord.parse(ix.get_record(key))
            if kept is None:
                return False
            record = kept
        if not record.evidence or record.last_fp is None:
            return False
        sketch = evidence_text(ix.get_evidence(key), record.last_fp)
        if sketch is None:
            return False
        try:
            return own.added(sketch) >= self.keep_adds
        except ValueError:  # unreadable evidence: the fingerprint and the change sketch decide
            return False

    def _template_copy(self, ix: Index, key: str, fp: int, content_key: int, visible: str, vkey: int | None) -> _Found:
        """A page of nothing but its site's template (never indexed) is only a copy: of an indexed
        page whose whole visible text was the same (:meth:`_exact_copy`), else of a kept
        template-only page (``shortcopy``'s rule); kept, its evidence is stored with its record."""
        match = None if vkey is None else self._exact_copy(ix, key, fp, vkey)
        if match is not None:
            return _Found(match, Reason.TEMPLATE_COPY)
        match, evidence = shortcopy.find_copy(ix, key, fp, content_key, visible, lambda url: self._recorded_fp(ix, url))
        return _Found(match, Reason.TEMPLATE_COPY, evidence=evidence)

    def _adds(
        self, ix: Index, key: str, fp: int, match: Match, own: OwnText | None, may_match: bool
    ) -> tuple[Match | None, str | None, float | None, Reason | None, bool]:
        """The containment check before a drop (see ``keep_adds``): ``(match, None, adds, None,
        missing)`` when ``key``'s own text adds fewer than ``keep_adds`` characters to the matched
        page's, or to another indexed page's within ``max_distance`` (then that one is the match),
        or cannot be judged (the match has no evidence: ``adds`` ``None``), and its own heading
        does not name something else than that page's; else ``(None, match.key, adds, why,
        missing)``: the page is kept (and indexed, when it ``may_match``: the check-and-add that
        found the match did not store it), ``why`` ``Reason.KEPT_HEADING`` when it adds too little
        but names something else, else ``Reason.KEPT_ADDS``. ``missing``: a candidate's evidence
        was gone (no evidence for a drop: it counts as adding everything)."""
        threshold = self.keep_adds
        if not threshold or own is None:
            return match, None, None, None, False
        first, named, missing = self._added(ix, own, match)
        if not missing and not named and (first is None or first < threshold):
            return match, None, first, None, False  # nothing new, or no evidence of the match's content to judge by
        others = [c for c in ix.near(fp, exclude=key) if c.key != match.key]
        for candidate, record in self._indexed_records(ix, others):
            added, other, gone = self._added(ix, own, candidate, record)
            missing |= gone
            if not other and added is not None and added < threshold:
                return candidate, None, added, None, missing  # another kept page of the same name holds it all
        if may_match:
            ix.add(key, fp)
        by_name = named and (first is None or first < threshold)
        return None, match.key, first, Reason.KEPT_HEADING if by_name else Reason.KEPT_ADDS, missing

    def _added(
        self, ix: Index, own: OwnText, candidate: Match, record: PageRecord | None = None
    ) -> tuple[float | None, bool, bool]:
        """What ``own`` adds to ``candidate``'s content (``record``: its record, else read), whether
        ``own``'s heading names something else than that content's
        (:meth:`~scrapy_simhash.fingerprint.novelty.OwnText.names_other`) and whether its evidence
        is gone: ``(None, False, False)`` when its record is not of its indexed content or says it
        has no evidence; ``(None, False, True)`` when the record says it has evidence but the
        evidence is missing, of other content or unreadable (the only read of it)."""
        if record is None:
            record = next((r for _, r in self._indexed_records(ix, [candidate])), None)
        if record is None or not record.evidence:
            return None, False, False
        evidence = read_evidence(ix.get_evidence(candidate.key), candidate.fp)
        if evidence is None:
            return None, False, True
        sketch, heading = evidence
        try:
            adds = own.added(sketch)
            # The heading's and the names' rule decide only a page that adds too little.
            return adds, adds < self.keep_adds and own.names_other(sketch, heading), False
        except ValueError:  # unreadable: gone
            return None, False, True

    def _check_and_add(
        self,
        ix: Index,
        key: str,
        fp: int,
        sketch: bytes | None,
        fallback: str | None,
        content_key: int | None = None,
        visible: str = "",
    ) -> _Found:
        """The near-duplicate decision: a match within the index's ``max_distance`` whose change
        sketch does not disagree (``near_similarity``), else the wide tier's (see
        ``wide_distance``) or, for a short page, the kept short page it is a copy of
        (``shortcopy``), after which ``key``'s fingerprint leaves the index; with the rule that
        found it, and the key of the nearest page within ``max_distance`` that was no evidence
        (``Verdict.unlike``)."""
        index = ix
        if fallback == Fallback.SHORT and content_key is not None:
            match = index.check_and_add(key, fp)  # an exact hash: equal token sequences
            if match is not None:
                return _Found(match, Reason.NEAR)
            match, evidence = shortcopy.find_copy(index, key, fp, content_key, visible)
            if match is not None:
                index.remove(key)  # a duplicate: the same state as after any drop
            return _Found(match, Reason.SHORT_COPY, evidence=evidence)
        wide = self.wide_distance
        # The page's sketch is evidence (either way) when it fills WIDE_MIN_SLOTS slots.
        sketch = sketch if sketch is not None and is_sketch(sketch) and filled(sketch) >= WIDE_MIN_SLOTS else None
        if wide <= index.max_distance or fallback is not None or sketch is None:
            return self._with_evidence(ix, key, fp, index.check_and_add(key, fp), sketch)
        match, candidates = index.check_and_add_wide(key, fp, wide)
        if match is not None:
            return self._with_evidence(ix, key, fp, match, sketch)
        if not candidates:
            return _NOTHING
        best, best_similarity = None, 0.0
        for candidate, other in self._sketches(ix, candidates):
            s = sketch_similarity(sketch, other)
            if s >= self.wide_similarity and s > best_similarity:
                best, best_similarity = candidate, s
        if best is not None:
            index.remove(key)  # a duplicate: the same state as after a drop within max_distance
        return _Found(best, Reason.WIDE)

    def _exact_copy(self, ix: Index, key: str, fp: int, vkey: int) -> Match | None:
        """The nearest indexed page within ``max_distance`` of ``fp`` whose record says that its
        indexed content had the visible text whose :func:`visible_key` is ``vkey``: ``key`` is an
        exact copy of it (read only; for a page that is never indexed)."""
        candidates = ix.near(fp, exclude=key)
        return next((c for c, record in self._indexed_records(ix, candidates) if record.visible_key == vkey), None)

    def _recorded_fp(self, ix: Index, key: str) -> int | None:
        """``key``'s last fingerprint in its record (``None``: no record, or one without history)."""
        record = PageRecord.parse(ix.get_record(key))
        return None if record is None else record.last_fp

    def _sketches(self, ix: Index, candidates: list[Match]) -> Iterator[tuple[Match, bytes]]:
        """Each candidate with the change sketch of its indexed content, where its record holds
        one that fills at least :data:`WIDE_MIN_SLOTS` slots (one batched record read)."""
        for candidate, record in self._indexed_records(ix, candidates):
            other = record.sketch
            if other is not None and is_sketch(other) and filled(other) >= WIDE_MIN_SLOTS:
                yield candidate, other

    def _indexed_records(self, ix: Index, candidates: list[Match]) -> Iterator[tuple[Match, PageRecord]]:
        """Each candidate with its record, where the record is of the content its indexed
        fingerprint was made of (its last fingerprint is that one; one batched record read)."""
        if not candidates:
            return
        for candidate, raw in zip(candidates, ix.get_records([c.key for c in candidates])):
            record = PageRecord.parse(raw)
            if record is not None and record.last_fp == candidate.fp:
                yield candidate, record

    def _with_evidence(self, ix: Index, key: str, fp: int, match: Match | None, sketch: bytes | None) -> _Found:
        """``match`` (check-and-add's, within ``max_distance``) when the change sketches are
        evidence for it (see ``near_similarity``), else the nearest other page within
        ``max_distance`` that is; with none, ``key`` keeps ``fp`` in the index and the first
        candidate's key is returned beside ``None``. ``sketch``: the page's, ``None`` unless it fills
        :data:`WIDE_MIN_SLOTS` slots (checked by the caller)."""
        threshold = self.near_similarity
        if match is None or not threshold or sketch is None:
            return _Found(match, Reason.NEAR)
        candidates, unlike = [match], set[str]()
        for nearest_only in (True, False):
            unlike |= {c.key for c, other in self._sketches(ix, candidates) if sketch_similarity(sketch, other) < threshold}
            for candidate in candidates:
                if candidate.key not in unlike:
                    return _Found(candidate, Reason.NEAR)  # check-and-add has not stored fp: a drop as it is
            if nearest_only:  # the nearest is no evidence: the others within max_distance, nearest first
                candidates = [c for c in ix.near(fp, exclude=key) if c.key not in unlike]
        ix.add(key, fp)  # kept: check-and-add found a match and did not store it
        return _Found(None, unlike=match.key)

    def _sketch_moved(self, old: bytes | None, new: bytes | None) -> bool:
        """Whether the change sketches of two fetches say the body changed (``False`` when either
        fetch has none, or the sketch is off)."""
        if old is None or new is None or not self.change_similarity or old == new:
            return False  # equal sketches: similarity 1 (most refetches), no arithmetic
        return is_sketch(old) and is_sketch(new) and sketch_similarity(old, new) < self.change_similarity

    def not_modified(
        self, key: str, now: float | None = None, *, validators: tuple[str | None, str | None] = (None, None)
    ) -> Verdict | None:
        """Record a ``304 Not Modified`` answer for ``key``: an ``unchanged`` fetch without a
        fingerprint (the last one is kept); new validators replace the stored ones. ``None``
        when ``key`` has no fingerprint history (nothing to be unchanged from)."""
        now = self.clock() if now is None else now

        def decide(ix: Index) -> Verdict | None:
            record = PageRecord.parse(ix.get_record(key))
            if record is None or record.last_fp is None:
                return None
            new_record = record.updated(
                record.last_fp, 0, False, now=now, history_size=self.history_size, duplicate_of=record.duplicate_of
            )
            new_record = replace(
                new_record,
                etag=validators[0] or record.etag,
                last_modified=validators[1] or record.last_modified,
                gone=False,
            )
            if self.policy is not None:
                next_due, schedule = self._schedule(record, now, False, 0)
                new_record = replace(new_record, schedule=schedule, next_due=next_due)
            ix.put_record(key, new_record.to_bytes(), due=new_record.next_due)
            return Verdict(UNCHANGED, record.last_fp, 0, record.duplicate_of, new_record, reason=Reason.UNCHANGED)

        return self._decided(key, None, 0, decide)

    def observe_body(
        self,
        key: str,
        digest: int,
        now: float | None = None,
        *,
        validators: tuple[str | None, str | None] = (None, None),
    ) -> Verdict:
        """Record a fetch of a response that is no page (a PDF, an image, an empty body), so that
        it is scheduled like one: ``digest`` (a hash of its bytes) is kept as its fingerprint,
        other bytes than at the last fetch are a change (of unknown size), and the validators
        are kept for conditional requests. It never enters the near-duplicate index (and leaves
        it, if the URL held a page before). The verdict is ``new``, ``changed`` or
        ``unchanged``."""
        now = self.clock() if now is None else now

        def decide(ix: Index) -> Verdict:
            raw = ix.get_record(key)
            record = PageRecord.parse(raw)
            ix.remove(key)
            if record is None or record.last_fp is None:
                verdict, changed, new_record = NEW, None, PageRecord.first(digest, now=now)
                if record is not None:  # an alias or a gone record: back, first seen as it was
                    new_record = replace(new_record, first_seen=record.first_seen)
            else:
                changed = digest != record.last_fp
                verdict = CHANGED if changed else UNCHANGED
                new_record = record.updated(
                    digest, (digest ^ record.last_fp).bit_count(), changed, now=now, history_size=self.history_size
                )
            new_record = replace(
                new_record, etag=validators[0], last_modified=validators[1], gone=False, sketch=None, visible_key=None
            )
            if self.policy is not None:
                next_due, schedule = self._schedule(record, now, changed, None)
                new_record = replace(new_record, schedule=schedule, next_due=next_due)
            ix.put_record(key, new_record.to_bytes(), due=new_record.next_due, evidence=b"")
            reason = Reason.NEW if verdict == NEW else Reason.CHANGED if verdict == CHANGED else Reason.UNCHANGED
            return Verdict(verdict, digest, None, None, new_record, record is None and raw is not None, reason=reason)

        return self._decided(key, None, 0, decide)

    def gone(self, key: str, now: float | None = None, *, remove: bool = False) -> bool:
        """Record a 404/410 answer for ``key``: its fingerprint leaves the near-duplicate index;
        its record is deleted (``remove``) or kept, marked gone, due again after the policy's
        longest interval. ``False`` when ``key`` was not known (nothing changes)."""
        now = self.clock() if now is None else now

        def decide(ix: Index) -> bool:
            record = PageRecord.parse(ix.get_record(key))
            if record is None or record.moved_to is not None:
                return False
            ix.remove(key)
            if remove:
                ix.delete_record(key)
            else:
                longest = self.policy.max_interval if self.policy is not None else None
                next_due = None if longest is None else now + longest
                record = replace(
                    record, gone=True, last_fetched=now, duplicate_of=None, next_due=next_due, evidence=False
                )
                ix.put_record(key, record.to_bytes(), due=next_due, evidence=b"")
            return True

        return self._decided(key, None, 0, decide)

    def moved(self, key: str, target: str, now: float | None = None) -> bool:
        """Record that ``key`` redirects to ``target`` (whose record holds the page): ``key``
        keeps an alias record (no history, no due time) and leaves the near-duplicate index.
        ``False`` when it was already an alias of ``target`` (or is ``target``)."""
        if key == target:
            return False
        now = self.clock() if now is None else now

        def decide(ix: Index) -> bool:
            record = PageRecord.parse(ix.get_record(key))
            if record is not None and record.moved_to == target:
                return False
            ix.remove(key)
            alias = PageRecord(
                first_seen=now if record is None else record.first_seen,
                last_fetched=now,
                last_changed=now,
                moved_to=target,
            )
            ix.put_record(key, alias.to_bytes(), due=None, evidence=b"")
            return True

        return self._decided(key, None, 0, decide)

    def plan(self, key: str, now: float | None = None) -> Plan:
        """Whether a request for ``key`` is ``new``, ``due`` or ``not_due`` at ``now``, and its
        priority (see :class:`Plan`). A moved URL is planned by its target's record."""
        now = self.clock() if now is None else now
        record = PageRecord.parse(self.index.get_record(key))
        if record is not None and record.moved_to is not None:
            key = record.moved_to
            record = PageRecord.parse(self.index.get_record(key))
        if record is None or (record.last_fp is None and not record.gone):
            return Plan(PLAN_NEW, 0.0, None, key)
        if record.next_due is not None and now < record.next_due:
            return Plan(PLAN_NOT_DUE, 0.0, record.next_due, key)
        state = schedule_state_of(record)
        priority = 1.0 if state is None or self.policy is None else self.policy.priority(state, now)
        return Plan(PLAN_DUE, max(priority, 1.0), record.next_due, key)

    def due(self, now: float | None = None, limit: int | None = None) -> list[DueRow]:
        """The keys due at ``now`` (their due time has passed), most valuable first (the policy's
        priority; ties by due time): the ``limit`` first, or all (:meth:`selection` without a
        budget)."""
        rows = self.selection(now)
        return rows if limit is None else rows[: max(limit, 0)]

    def selection(self, now: float | None = None, budget: int = 0, run_period: float | None = None) -> list[DueRow]:
        """Return the known URLs a crawl at ``now`` fetches, in fetch order (:func:`~scrapy_simhash.schedule.plan_run`
        over every record with a due time): with ``budget`` the most valuable, else every due one.

        ``run_period`` (seconds since the run before, with a ``budget``) sets the policy's default
        interval from the budget (:func:`~scrapy_simhash.schedule.budget_interval`), for this ranking and
        the tracker's later fetches; how rows are ranked is in ``docs/topics/schedule.rst``.
        """
        now = self.clock() if now is None else now
        rows, self.policy = select_known(self.index, self.policy, now, budget, run_period)
        return rows

    def _schedule(
        self, old: PageRecord | None, now: float, changed: bool | None, distance: float | None
    ) -> tuple[float, Mapping[str, Any]]:
        """The next due time and schedule (a record's mapping, to the millisecond as stored)
        after a fetch at ``now``, by the policy (which must be set)."""
        assert self.policy is not None
        return schedule_of(self.policy.observe(schedule_state_of(old) if old is not None else None, now, changed, distance))


#: ``OwnText.novelty_text``'s text bytes without a bound (``evidence_max_bytes`` 0).
_NO_BOUND = 2**62
