"""A refetched page is ``changed`` when its own text adds ``SIMHASH_KEEP_ADDS`` characters to its
last fetch's, however alike the fingerprints and change sketches are (``Reason.CHANGED_ADDS``).

On a real LMDB store in a tmp dir (and a real redis-server), with the real fingerprinter: a long
guide page with one paragraph rewritten moves its fingerprint 3 bits (the threshold) and leaves its
change sketch over ``SIMHASH_CHANGE_SIMILARITY`` alike (asserted); each decision test also runs
with the rule off (``keep_adds=0``) and asserts that the page is then ``unchanged``, so that each
fails without it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.pages import guide_page

from scrapy_simhash import defaults
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import CHANGED, NEAR_DUPLICATE, NEW, UNCHANGED, Reason
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.fingerprint.sketch import sketch_similarity
from scrapy_simhash.schedule import FreshnessPolicy
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.record import (
    PageRecord,
    change_size,
    evidence_text,
    frame_evidence,
    schedule_of,
    schedule_state_of,
)

FP = Fingerprinter()
V1 = FP.fingerprint_page(guide_page(1))
V2 = FP.fingerprint_page(guide_page(2, date="2024-04-02"))
URL = "https://docs.example/guide/harbour"
DAY = 86400.0


@pytest.fixture
def lmdb(tmp_path: Path) -> Iterator[SimhashIndex]:
    index = SimhashIndex(LmdbStore(tmp_path / "pages", map_size=1 << 24))
    yield index
    index.close()


@pytest.fixture(params=["lmdb", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SimhashIndex]:
    """An index on a real LMDB file in a tmp dir, or on a real redis-server (a prefix of its own)."""
    if request.param == "lmdb":
        index = SimhashIndex(LmdbStore(tmp_path / "pages", map_size=1 << 24))
    else:
        from scrapy_simhash.store.redisstore import RedisStore

        server = request.getfixturevalue("redis_server")
        index = SimhashIndex(RedisStore(server.url, prefix=f"{tmp_path}-change"))
    yield index
    index.close()


def test_the_rewrite_is_one_the_fingerprint_and_the_sketch_both_miss() -> None:
    assert (V1.fp ^ V2.fp).bit_count() <= defaults.SIMHASH_CHANGE_THRESHOLD
    assert V1.sketch is not None and V2.sketch is not None
    assert sketch_similarity(V1.sketch, V2.sketch) >= defaults.SIMHASH_CHANGE_SIMILARITY
    assert V1.own is not None and V2.own is not None
    assert V2.own.added(V1.own.novelty_text()) >= 250  # the rewritten paragraph, of ~6,900 characters


@pytest.mark.parametrize("keep_adds", [defaults.SIMHASH_KEEP_ADDS, 0])
def test_a_known_page_with_a_paragraph_rewritten_is_changed(store: SimhashIndex, keep_adds: int) -> None:
    policy = FreshnessPolicy()
    tracker = ChangeTracker(store, keep_adds=keep_adds, policy=policy)
    first = tracker.observe(URL, V1, now=0.0)
    assert first.verdict == NEW and first.record is not None
    second = tracker.observe(URL, V2, now=DAY)
    if not keep_adds:  # the rule off: resemblance alone calls it unchanged, and its new text is lost
        assert (second.verdict, second.reason) == (UNCHANGED, Reason.UNCHANGED)
        return
    assert (second.verdict, second.reason, second.kept) == (CHANGED, Reason.CHANGED_ADDS, None)
    assert Reason.CHANGED_ADDS.stat == "simhash/changed/adds"
    record = PageRecord.parse(store.get_record(URL))
    assert record is not None and record == second.record
    assert record.change_count == 1 and record.last_changed == DAY and record.history[0] == (V2.fp, 3)
    assert store.get(URL) == V2.fp  # the index holds the new content
    evidence = evidence_text(store.get_evidence(URL), V2.fp)
    assert V2.own is not None and evidence == V2.own.novelty_text()  # what the next fetch is measured against
    # The change's size is the sketches' (at least one just past the threshold), as for any change.
    weight = max(change_size(V1.sketch, V2.sketch, 3), defaults.SIMHASH_CHANGE_THRESHOLD + 1)
    next_due, schedule = schedule_of(policy.observe(schedule_state_of(first.record), DAY, True, weight))
    assert (record.next_due, dict(record.schedule or {})) == (next_due, dict(schedule))


def test_the_next_fetch_is_measured_against_the_new_version(tmp_path: Path) -> None:
    index = SimhashIndex(LmdbStore(tmp_path / "pages", map_size=1 << 24))
    tracker = ChangeTracker(index)
    tracker.observe(URL, V1, now=0.0)
    assert tracker.observe(URL, V2, now=DAY).verdict == CHANGED
    index.close()
    index = SimhashIndex(LmdbStore(tmp_path / "pages", map_size=1 << 24))  # another run
    try:
        tracker = ChangeTracker(index)
        same = FP.fingerprint_page(guide_page(2, date="2024-05-03", word="harbour"))  # a date and a word
        assert tracker.observe(URL, same, now=2 * DAY).verdict == UNCHANGED
        assert tracker.observe(URL, V2, now=3 * DAY).verdict == UNCHANGED
        back = FP.fingerprint_page(guide_page(3))  # rewritten again
        assert tracker.observe(URL, back, now=4 * DAY).reason == Reason.CHANGED_ADDS
    finally:
        index.close()


def test_an_edit_that_adds_nothing_stays_unchanged(lmdb: SimhashIndex) -> None:
    tracker = ChangeTracker(lmdb)
    tracker.observe(URL, V1, now=0.0)
    edited = FP.fingerprint_page(guide_page(1, date="2025-01-31", word="harbour"))
    assert edited.own is not None and V1.own is not None and edited.own.added(V1.own.novelty_text()) == 0
    assert tracker.observe(URL, edited, now=DAY).verdict == UNCHANGED


@pytest.mark.parametrize("keep_adds", [defaults.SIMHASH_KEEP_ADDS, 0])
def test_a_near_duplicate_is_judged_against_the_page_it_duplicates(store: SimhashIndex, keep_adds: int) -> None:
    # b's record holds no novelty text (a dropped page is nobody's candidate): the page it
    # duplicates holds what a reader has; b's new version adds to it, so b is changed and kept.
    tracker = ChangeTracker(store, keep_adds=keep_adds)
    copy = "https://mirror.example/guide/harbour"
    assert tracker.observe(URL, V1, now=0.0).verdict == NEW
    dup = tracker.observe(copy, FP.fingerprint_page(guide_page(1, date="2024-03-02")), now=1.0)
    assert (dup.verdict, dup.duplicate_of) == (NEAR_DUPLICATE, URL)
    assert not PageRecord.parse(store.get_record(copy)).evidence  # type: ignore[union-attr]
    again = tracker.observe(copy, V2, now=DAY)
    if not keep_adds:
        assert (again.verdict, again.duplicate_of) == (UNCHANGED, URL)  # held back: its paragraph lost
        return
    assert (again.verdict, again.reason, again.kept) == (CHANGED, Reason.CHANGED_ADDS, Reason.KEPT_ADDS)
    assert again.adds_to == URL and again.adds is not None and again.adds >= 250
    assert again.duplicate_of is None and store.get(copy) == V2.fp
    # The page it duplicated is unchanged, and a copy of b's new version is b's near-duplicate.
    assert tracker.observe(URL, V1, now=DAY + 1).verdict == UNCHANGED
    third = tracker.observe("https://print.example/guide", FP.fingerprint_page(guide_page(2)), now=DAY + 2)
    assert (third.verdict, third.duplicate_of) == (NEAR_DUPLICATE, copy)


def test_a_copy_of_a_page_that_lost_its_text_is_kept_when_refetched(lmdb: SimhashIndex) -> None:
    # The kept page's paragraph is rewritten; its untouched copy now holds the only version of
    # the old paragraph in the index: its refetch is changed and kept, so that nothing is lost.
    tracker = ChangeTracker(lmdb)
    copy = "https://mirror.example/guide/harbour"
    tracker.observe(URL, V1, now=0.0)
    assert tracker.observe(copy, V1, now=1.0).duplicate_of == URL
    assert tracker.observe(URL, V2, now=DAY).reason == Reason.CHANGED_ADDS
    again = tracker.observe(copy, V1, now=DAY + 1)
    assert (again.verdict, again.reason, again.kept) == (CHANGED, Reason.CHANGED_ADDS, Reason.KEPT_ADDS)
    assert again.adds_to == URL


def test_a_near_duplicate_of_the_same_text_stays_unchanged(lmdb: SimhashIndex) -> None:
    tracker = ChangeTracker(lmdb)
    copy = "https://mirror.example/guide/harbour"
    tracker.observe(URL, V1, now=0.0)
    assert tracker.observe(copy, V1, now=1.0).verdict == NEAR_DUPLICATE
    edited = FP.fingerprint_page(guide_page(1, date="2025-01-31", word="harbour"))
    assert (tracker.observe(copy, edited, now=DAY).verdict, lmdb.get(copy)) == (UNCHANGED, None)


def test_a_record_whose_evidence_is_gone_is_judged_as_before(lmdb: SimhashIndex) -> None:
    tracker = ChangeTracker(lmdb)
    first = tracker.observe(URL, V1, now=0.0).record
    assert first is not None and first.evidence
    lmdb.put_record(URL, first.to_bytes(), evidence=b"")  # its evidence gone (over the bound, lost)
    assert tracker.observe(URL, V2, now=DAY).verdict == UNCHANGED  # the fingerprint and the sketch decide
    lmdb.put_record(URL, first.to_bytes(), evidence=frame_evidence(V1.fp, b"\x05garbage"))  # unreadable: the same
    assert tracker.observe(URL, V2, now=2 * DAY).verdict == UNCHANGED


def test_a_refetch_showing_the_same_text_keeps_its_evidence_unwritten(
    lmdb: SimhashIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unchanged refetch whose whole visible text is the last fetch's writes no evidence (the
    stored one is the same); one whose text moved (a date) writes its own."""
    tracker = ChangeTracker(lmdb)
    tracker.observe(URL, V1, now=0.0)
    stored = lmdb.get_evidence(URL)
    written: list[bytes | None] = []
    put = lmdb.put_record

    def recording_put(*a: Any, **kw: Any) -> None:
        written.append(kw.get("evidence"))
        put(*a, **kw)

    monkeypatch.setattr(lmdb, "put_record", recording_put)
    again = tracker.observe(URL, V1, now=DAY)
    assert again.verdict == UNCHANGED and again.record is not None and again.record.evidence
    assert written == [None] and lmdb.get_evidence(URL) == stored
    dated = FP.fingerprint_page(guide_page(1, date="2025-01-31"))
    assert tracker.observe(URL, dated, now=2 * DAY).verdict == UNCHANGED
    assert written[1] and evidence_text(written[1], dated.fp) is not None


#: Release notes of 2,000 entries (~200,000 characters: over 64 KiB compressed), as a big real
#: page has them: each entry a fix's summary in words of its own, and its ticket number.
_RNG = random.Random(34)
_WORDS = ["".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(3, 9))) for _ in range(5000)]
_ENTRIES = [f"<p>Fixed {' '.join(_RNG.choice(_WORDS) for _ in range(12))}. Own Id {i}</p>" for i in range(2000)]


def _paragraph(seed: int) -> str:
    """A paragraph of 300 characters or more, in words of the notes' own."""
    rng, words = random.Random(seed), list[str]()
    while len(" ".join(words)) < 300:
        words.append(rng.choice(_WORDS))
    return " ".join(words).capitalize() + "."


def _notes(paragraph: str = "", at: int = 700) -> str:
    body = list(_ENTRIES)
    if paragraph:
        body.insert(at, f"<p>{paragraph}</p>")
    return (
        "<html><head><title>Runtime Release Notes</title></head><body><main><h1>Runtime Release Notes</h1>"
        f"{''.join(body)}</main></body></html>"
    )


def test_a_big_page_adding_a_paragraph_is_changed(lmdb: SimhashIndex) -> None:
    """A page whose text is over 64 KiB compressed (real release notes: erlang's notes.html, 350,000
    characters): with its text kept whole, a refetch that adds one 300-character paragraph is
    ``changed``, whichever paragraph it is and wherever it lands. With a sample (the 64 KiB bound of
    before) what it adds is an estimate: of these four, some counted under 100, ``unchanged``."""
    first = FP.fingerprint_page(_notes())
    assert first.own is not None and first.own.chars > 150_000
    assert first.own.novelty_text(1 << 16)[:1] == b"\x02" and first.own.novelty_text()[:1] == b"\x05"  # a sample, the text

    def verdicts(index: SimhashIndex | None = None, **kwargs: Any) -> list[str]:
        out: list[str] = []
        for seed, at in ((1, 150), (7, 700), (23, 1100), (30, 1650)):
            tracker = ChangeTracker(index or SimhashIndex(), **kwargs)
            tracker.observe(URL + str(seed), first, now=0.0)
            out.append(
                tracker.observe(URL + str(seed), FP.fingerprint_page(_notes(_paragraph(seed), at)), now=DAY).verdict
            )
        return out

    assert verdicts(lmdb) == [CHANGED] * 4
    assert verdicts(evidence_max_bytes=1 << 16).count(UNCHANGED) >= 2  # the sample misses some
