"""The short-text rule of the item decision (``shorttext``): near copies of short texts that
their fingerprints put beyond ``max_distance``, found by the LSH of their character 5-grams, over
every store, against a brute-force reference."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers.pages import EN_ARTICLES, ZH_ARTICLES
from helpers.stores import StoreKind

from scrapy_simhash.decision import shorttext
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW, Reason
from scrapy_simhash.fingerprint.novelty import OwnText
from scrapy_simhash.store.index import SimhashIndex

PARAGRAPHS = [p for _, ps in ZH_ARTICLES.values() for p in ps] + [
    text for _, ps in EN_ARTICLES.values() for text in (" ".join(ps[:2]),) if len(text) <= shorttext.SHORT_CHARS - 200
]


def _texts(rng: random.Random, n: int) -> list[str]:
    """Short Chinese and English texts, and copies of earlier texts with the edits a scraped corpus
    shows (a character dropped, a phrase added, other punctuation, a piece of another text added)."""
    texts: list[str] = []
    for _ in range(n):
        if not texts or rng.random() < 0.4:
            texts.append(rng.choice(PARAGRAPHS))
            continue
        text = rng.choice(texts)
        kind = rng.randrange(4)
        if kind == 0:
            i = rng.randrange(len(text))
            text = text[:i] + text[i + 1 :]
        elif kind == 1:
            text += "（记者 王明）"
        elif kind == 2:
            text = text.replace("，", ",").replace("。", ".")
        else:
            text += " " + rng.choice(PARAGRAPHS)[-rng.choice((40, 150)) :]
        texts.append(text)
    return texts


def _expected(texts: list[str], keep_adds: int) -> list[tuple[int | None, bool]]:
    """Brute force: each text's kept text (the earliest that shares a band, agrees in at least
    ``MIN_ALIKE`` signature values, resembles it and to which it adds fewer than ``keep_adds``
    characters; ``None``: kept) and whether it was kept beside one it resembles."""
    kept: list[int] = []
    out: list[tuple[int | None, bool]] = []
    for i, text in enumerate(texts):
        sig = shorttext.signature(text)
        assert sig is not None
        match, resembled = None, False
        for j in kept:
            other = shorttext.signature(texts[j])
            assert other is not None
            if not set(shorttext.bands(sig)) & set(shorttext.bands(other)):
                continue
            if shorttext.alike(sig, other) < shorttext.MIN_ALIKE:
                continue
            adds = shorttext.resembles(text, texts[j])
            if adds is None:
                continue
            if not keep_adds or adds < keep_adds:
                match = j
                break
            resembled = True
        out.append((match, resembled and match is None))
        if match is None:
            kept.append(i)
    return out


@pytest.mark.parametrize("keep_adds", [100, 0])
def test_short_texts_are_dropped_exactly_as_brute_force(kind: StoreKind, tmp_path: Path, keep_adds: int) -> None:
    """Fingerprints far apart (random), so that only the short-text rule can find a copy."""
    rng = random.Random(0)
    texts = _texts(rng, 120)
    index = SimhashIndex(kind.make(tmp_path / "s"), max_distance=3, max_candidates=0)
    tracker = ChangeTracker(index, keep_adds=keep_adds)
    fps = [rng.getrandbits(64) for _ in texts]
    expected = _expected(texts, keep_adds)
    for i, (text, fp) in enumerate(zip(texts, fps)):
        verdict = tracker.deduplicate(f"item-{i:04d}", fp, OwnText([text]), shorttext.short_text(text))
        match, resembled = expected[i]
        if match is None:
            assert (verdict.verdict, verdict.duplicate_of, verdict.adds_to is not None) == (NEW, None, resembled), i
            assert index.get(f"item-{i:04d}") == fp
        else:
            assert (verdict.verdict, verdict.duplicate_of, verdict.reason) == (
                NEAR_DUPLICATE,
                f"item-{match:04d}",
                Reason.SHORT_TEXT,
            ), i
            assert verdict.distance == (fp ^ fps[match]).bit_count()
            assert index.get(f"item-{i:04d}") is None  # a duplicate leaves no fingerprint
    assert sum(m is not None for m, _ in expected) >= 20  # the rule had work to do
    if keep_adds:
        assert any(r for _, r in expected)  # ... and kept some that add a sentence
    index.close()


def test_a_kept_text_refetched_with_other_content_is_no_candidate() -> None:
    index = SimhashIndex(max_distance=3)
    tracker = ChangeTracker(index)
    text = PARAGRAPHS[0]
    assert tracker.deduplicate("a", 1, OwnText([text]), shorttext.short_text(text)).verdict == NEW
    index.add("a", 2)  # the key now holds another fingerprint: its stored text is stale
    copy = text + "（记者 王明）"
    verdict = tracker.deduplicate("b", (1 << 63) | 0xFFFF, OwnText([copy]), shorttext.short_text(copy))
    assert verdict.verdict == NEW


def test_long_texts_have_no_signature() -> None:
    assert shorttext.short_text("字" * (shorttext.SHORT_CHARS + 1)) is None
    assert shorttext.short_text("ab, c!") is None  # fewer than 5 letters and digits
    assert shorttext.short_text("abcde") is not None


def test_an_item_decisions_record_is_a_first_record_with_its_evidence_flag() -> None:
    from dataclasses import replace

    from scrapy_simhash.store.record import PageRecord

    index = SimhashIndex(max_distance=3)
    ChangeTracker(index).deduplicate("a", 5, OwnText(["a text of its own"]))
    record = PageRecord.parse(index.get_record("a"))
    assert record is not None
    assert record == replace(PageRecord.first(5, now=record.first_seen), evidence=True)
