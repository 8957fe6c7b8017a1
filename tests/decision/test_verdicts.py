"""The decision says why (``Verdict.reason``, ``Verdict.kept``): each rule of the tracker sets its
reason where it decides, and the middleware only counts it. The verdicts, reasons and fallbacks are
str-valued enums whose text is the bare string they replace (stats, log lines, meta, JSON). The
evidence that finds a kept short or template-only page's copies is written with its record, not
by the lookup."""

from __future__ import annotations

import json
from enum import Enum

import pytest

from scrapy_simhash.decision import CHANGED, NEAR_DUPLICATE, NEW, UNCHANGED, VERDICTS, ChangeTracker, Reason, shortcopy
from scrapy_simhash.fingerprint import Fallback, PageFingerprint
from scrapy_simhash.fingerprint.simhash import hash_cache
from scrapy_simhash.fingerprint.sketch import sketch_tokens
from scrapy_simhash.store.index import SimhashIndex

FP = 0x0123_4567_89AB_CDEF
FAR = FP ^ 0xFFFF_FFFF_0000_0000


def _sketch(word: str) -> bytes:
    return sketch_tokens(hash_cache("blake2b", 64).digests([f"{word}{j}" for j in range(200)]))


def _tracker(**kwargs: object) -> ChangeTracker:
    return ChangeTracker(SimhashIndex(max_distance=3), **kwargs)  # type: ignore[arg-type]


def test_each_verdict_carries_its_reason() -> None:
    tracker = _tracker()
    first = tracker.observe("a", PageFingerprint.of(FP), 1.0)
    assert (first.verdict, first.reason, first.kept) == (NEW, Reason.NEW, None)
    again = tracker.observe("a", PageFingerprint.of(FP), 2.0)
    assert (again.verdict, again.reason) == (UNCHANGED, Reason.UNCHANGED)
    copy = tracker.observe("b", PageFingerprint.of(FP ^ 0b11), 3.0)
    assert (copy.verdict, copy.reason, copy.duplicate_of) == (NEAR_DUPLICATE, Reason.NEAR, "a")
    moved = tracker.observe("a", PageFingerprint.of(FAR), 4.0)
    assert (moved.verdict, moved.reason) == (CHANGED, Reason.CHANGED)


def test_a_change_seen_by_the_sketch_alone() -> None:
    tracker = _tracker(change_similarity=0.9)
    tracker.observe("a", PageFingerprint.of(FP, sketch=_sketch("one")), 1.0)
    verdict = tracker.observe("a", PageFingerprint.of(FP ^ 1, sketch=_sketch("two")), 2.0)
    assert (verdict.verdict, verdict.reason, verdict.distance) == (CHANGED, Reason.CHANGED_SKETCH, 1)


def test_kept_beside_a_page_whose_sketch_disagrees() -> None:
    tracker = _tracker(near_similarity=0.6)
    tracker.observe("a", PageFingerprint.of(FP, sketch=_sketch("one")), 1.0)
    verdict = tracker.observe("b", PageFingerprint.of(FP ^ 1, sketch=_sketch("two")), 2.0)
    assert (verdict.verdict, verdict.reason, verdict.kept, verdict.unlike) == (NEW, Reason.NEW, Reason.KEPT_UNLIKE, "a")


def test_the_wide_tier() -> None:
    tracker = _tracker(wide_distance=8, wide_similarity=0.8)
    tracker.observe("a", PageFingerprint.of(FP, sketch=_sketch("one")), 1.0)
    verdict = tracker.observe("b", PageFingerprint.of(FP ^ 0b11111, sketch=_sketch("one")), 2.0)
    assert (verdict.verdict, verdict.reason, verdict.distance) == (NEAR_DUPLICATE, Reason.WIDE, 5)


@pytest.mark.parametrize(("fallback", "reason"), [(Fallback.SHORT, Reason.SHORT_COPY), (Fallback.TEMPLATE, Reason.TEMPLATE_COPY)])
def test_copies_of_short_and_template_only_pages(fallback: Fallback, reason: Reason) -> None:
    tracker = _tracker()
    kept = PageFingerprint.of(FP, fallback=fallback, content_key=7, visible="Menu\nThanks for your order")
    assert tracker.observe("http://a.test/thanks", kept, 1.0).reason == Reason.NEW
    printed = PageFingerprint.of(FAR, fallback=fallback, content_key=7, visible="Thanks for your order")
    verdict = tracker.observe("http://a.test/print", printed, 2.0)
    assert (verdict.verdict, verdict.reason, verdict.duplicate_of) == (NEAR_DUPLICATE, reason, "http://a.test/thanks")


def test_the_lookup_writes_nothing_and_the_evidence_comes_with_the_record() -> None:
    tracker = _tracker()
    index = tracker.index
    page = PageFingerprint.of(FP, fallback=Fallback.SHORT, content_key=7, visible="Thanks for your order")
    with index.batch("a"):
        match, evidence = shortcopy.find_copy(index, "a", FP, 7, page.visible)
    assert match is None and evidence is not None
    assert index.get_aux(shortcopy._key_name(7)) is None  # a lookup, not a write
    tracker.observe("a", page, 1.0)
    assert json.loads(index.get_aux(shortcopy._key_name(7)) or b"[]") == ["a"]
    assert index.get_aux(shortcopy._page_name("a")) is not None


def test_verdicts_reasons_and_fallbacks_read_as_their_strings() -> None:
    assert VERDICTS == ("new", "near_duplicate", "unchanged", "changed")
    values: list[Enum] = [*VERDICTS, *Reason, *Fallback]
    for value in values:
        assert isinstance(value, str) and value == value.value
        assert f"simhash/{value}" == "simhash/" + value.value == "simhash/%s" % value  # noqa: UP031 - as logging formats
        assert json.dumps(value) == json.dumps(value.value)
    assert Reason.WIDE.stat == "simhash/duplicate/wide" and Reason.NEAR.stat is None and Reason.NEW.stat is None
