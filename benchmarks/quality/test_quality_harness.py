"""Quality benchmark harness: deterministic pairs, correct metrics, and the shipped defaults against issue 4's bars."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data"
sys.path.insert(0, str(ROOT / "benchmarks" / "quality"))

import build_pairs as bp
import evaluate as ev

needs_data = pytest.mark.skipif(
    not (DATA / "zh-web-cee").is_dir() or not (DATA / "scrapinghub-aeb").is_dir(),
    reason="../shared/data (zh-web-cee, scrapinghub-aeb) is absent: the quality pairs are built from it",
)


def test_prf_on_a_hand_made_example() -> None:
    labels = [1, 1, 1, 1, 0, 0, 0, 0]
    dists = [0, 2, 3, 7, 1, 4, 9, 30]
    # k = 3: TP = 3 (0, 2, 3), FP = 1 (1), FN = 1 (7)
    p, r, f, tp, fp, fn = ev.prf(labels, dists, 3)
    assert (tp, fp, fn) == (3, 1, 1)
    assert p == pytest.approx(0.75) and r == pytest.approx(0.75) and f == pytest.approx(0.75)
    # k = 0: only the distance-0 positive
    p, r, f, *_ = ev.prf(labels, dists, 0)
    assert (p, r) == (1.0, 0.25)
    assert f == pytest.approx(0.4)
    # an unusable fingerprint (INF) is never a duplicate
    assert ev.prf([1, 0], [ev.INF, ev.INF], 64)[3:] == (0, 0, 1)


def test_spearman_on_hand_made_examples() -> None:
    assert abs(ev.spearman([1, 2, 3, 4], [10, 20, 30, 40]) - 1.0) < 1e-12
    assert abs(ev.spearman([1, 2, 3, 4], [4, 3, 2, 1]) + 1.0) < 1e-12
    assert abs(ev.spearman([1, 1, 2, 3], [1, 2, 3, 4]) - 0.9486832980505138) < 1e-12  # ties averaged


def test_best_threshold_and_change_accuracy() -> None:
    labels = [1, 1, 1, 0, 0]
    dists = [1, 2, 5, 6, 20]
    k, f = ev.best_threshold(labels, dists, range(13))
    assert k == 5 and f == pytest.approx(1.0)
    changed = [0, 0, 0, 1, 1, 1]
    cd = [0, 1, 4, 3, 9, 12]
    assert ev.change_accuracy(changed, cd, 2) == pytest.approx(5 / 6)
    t, acc = ev.best_change_threshold(changed, cd, range(13))
    assert (t, acc) == (1, pytest.approx(5 / 6))  # the smallest of the best thresholds (1 and 2)


def test_edits_are_what_they_claim() -> None:
    import random

    art = bp.Article("x", "zh", "标题", ["今天天气很好。我们去公园散步。", "公园里有很多人。孩子们在玩耍。"])
    donor = bp.Article("y", "zh", "别的", ["股市今天大涨。投资者非常高兴。"])
    rng = random.Random(1)
    assert bp.to_width_variant("ab1，。") == "ａｂ１,."
    typo = bp.edit_typo(art.paras, rng, "zh")
    assert sum(a != b for a, b in zip("".join(typo), "".join(art.paras))) == 1
    removed = bp.edit_sentence(art.paras, rng, "zh", donor, add=False)
    assert len("".join(removed)) < len("".join(art.paras))
    half = bp.rewrite(art.paras, random.Random(2), "zh", donor, 0.5)
    assert any(s in "".join(half) for s in ("股市今天大涨。", "投资者非常高兴。"))


@needs_data
def test_pair_builder_is_deterministic() -> None:
    a = bp.build(quick=True, revisions=False)
    b = bp.build(quick=True, revisions=False)
    assert a.digest() == b.digest()
    assert [(p.category, p.a, p.b) for p in a.pairs] == [(p.category, p.a, p.b) for p in b.pairs]
    cats = {p.category for p in a.pairs}
    assert {
        "template_swap",
        "dynamic_noise",
        "editorial",
        "encoding",
        "width",
        "yanyiwu",
        "same_template",
        "short_pages",
        "noise_only",
        "rewrite_30",
    } <= cats
    # a different seed gives different pairs
    assert bp.build(quick=True, revisions=False, seed=1).digest() != a.digest()


@pytest.mark.slow
@needs_data
def test_shipped_defaults_meet_the_bars() -> None:
    """Issue 4's bars for the shipped defaults (``Fingerprinter()``, SIMHASH_MAX_DISTANCE,
    SIMHASH_CHANGE_THRESHOLD, SIMHASH_WIDE_DISTANCE) on the synthetic pairs (all of them; the real
    revision pairs are left to the benchmark): precision >= 0.99 within k, recall >= 0.95 of the
    product's decision (within k, or the wide tier), FPR <= 0.1% on different articles under one
    template within k, change verdict accuracy >= 0.95.

    Recall is the product's decision's, as in the benchmark's bars: the distance alone sits at the
    bar by SimHash noise (0.956 with fingerprint version 2, 0.948 with version 3, whose tokens differ
    on a few features per page; one template_swap pair moved from distance 1 to 5 with the same
    single feature differing between its pages under both versions)."""
    import wide_tier

    from scrapy_simhash import defaults
    from scrapy_simhash.fingerprint.simhash import Fingerprinter
    from scrapy_simhash.store.base import TableLayout

    ps = bp.build(revisions=False)
    r = ev.run(ev.ours(), ps)
    # Issue 4's categories: the two harder ones added for issue 7 (one sentence removed from a short
    # article, a real page vs its text under another template) have their own bars: see
    # test_product_decision_meets_issue_7_recall_bars.
    near = [c for c in ev.cats_of(ps, "near") if c not in ("short_edit", "real_swap")]
    neg = ev.cats_of(ps, "neg")
    k = defaults.SIMHASH_MAX_DISTANCE
    p, rec_k, *_ = ev.prf(*r.group(*near, *neg), k)
    assert p >= 0.99, p
    sub = bp.PairSet()
    sub.pairs = [x for x in ps.pairs if x.category in near]
    sub.docs = {i: ps.docs[i] for x in sub.pairs for i in (x.a, x.b)}
    facts = wide_tier.page_facts(sub, Fingerprinter())
    layout = TableLayout(64, wide_tier.K, wide_tier.K + 1)
    found = [wide_tier.product_duplicate(facts[x.a], facts[x.b], layout)[0] for x in sub.pairs]
    rec = sum(found) / len(found)
    assert rec >= 0.95 and rec >= rec_k, (rec, rec_k)
    assert ev.rate(r.by_cat["same_template"], k) <= 0.001
    acc = ev.change_accuracy(*r.group(*ev.cats_of(ps, "change")), defaults.SIMHASH_CHANGE_THRESHOLD)
    assert acc >= 0.95, acc


@needs_data
def test_product_decision_meets_issue_7_recall_bars() -> None:
    """Issue 7's bars on the two harder categories for the product's decision (within k, or the
    wide tier with its defaults): recall >= 0.90 on one sentence removed from a short article and
    on a real page vs its text under another site's template, and none of the short-page negatives
    accepted (the 25,244 same-template negatives are left to the benchmark)."""
    import wide_tier

    from scrapy_simhash.fingerprint.simhash import Fingerprinter
    from scrapy_simhash.store.base import TableLayout

    ps = bp.build(revisions=False)
    keep = {"short_edit", "real_swap", "short_pages"}
    sub = bp.PairSet()
    sub.pairs = [p for p in ps.pairs if p.category in keep]
    sub.docs = {i: ps.docs[i] for p in sub.pairs for i in (p.a, p.b)}
    facts = wide_tier.page_facts(sub, Fingerprinter())
    layout = TableLayout(64, wide_tier.K, wide_tier.K + 1)
    verdicts: dict[str, list[bool]] = {}
    for p in sub.pairs:
        verdicts.setdefault(p.category, []).append(wide_tier.product_duplicate(facts[p.a], facts[p.b], layout)[0])
    for cat in ("short_edit", "real_swap"):
        assert sum(verdicts[cat]) / len(verdicts[cat]) >= 0.90, (cat, sum(verdicts[cat]), len(verdicts[cat]))
    assert verdicts["short_pages"] and not any(verdicts["short_pages"])


def test_added_chars_counts_new_runs_not_changed_words_or_numbers() -> None:
    old = "The quick brown fox jumps over the lazy dog near the river bank on 2024-01-02."
    assert bp.added_chars(old, old) == 0
    assert bp.added_chars(old, old.replace("2024-01-02", "2025-11-30")) == 0  # digits masked
    assert bp.added_chars(old, old.replace("lazy", "sleepy")) == 0  # a changed word is no run of 16
    extra = " A whole new sentence that the old text never had, about something else entirely."
    added = bp.added_chars(old, old + extra)
    assert len(extra) - bp.ADDED_WINDOW <= added <= len(extra)
    assert bp.added_chars(old + extra, old) == 0  # a removal adds nothing


def test_add_paragraph_inserts_one_long_paragraph_of_the_donor() -> None:
    import random

    art = bp.Article("x", "en", "T", ["First paragraph.", "Second paragraph.", "Third paragraph."])
    donor = bp.Article("y", "en", "D", ["Short.", "D" * 150, "E" * 900])
    paras, added = bp.add_paragraph(art.paras, random.Random(3), donor)
    assert added == 150 and len(paras) == 4 and "D" * 150 in paras
    assert paras[0] == "First paragraph." and [p for p in paras if p != "D" * 150] == art.paras


@needs_data
def test_adds_paragraph_pairs_add_one_paragraph_and_are_kept_pairs() -> None:
    ps = bp.build(quick=True, revisions=False)
    adds = [p for p in ps.pairs if p.category == "adds_paragraph"]
    assert len(adds) == 24 and all(p.group == "keep" and p.label == 0 for p in adds)
    for p in adds:
        a, b = str(ps.docs[p.a].content), str(ps.docs[p.b].content)
        assert len(b) > len(a) and p.meta["added"] >= bp.ADDED_PARAGRAPH
        assert bp.added_chars(a, b) >= 100  # what a drop would lose: more than one short sentence


def test_keep_adds_decides_with_the_product_tracker() -> None:
    """keep_adds.py's decision is the tracker's: a text served as a page, then its copy with a
    changed date dropped, a different text kept."""
    import keep_adds

    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
    paras = [" ".join(words[(i + j) % len(words)] for j in range(40)) + f" paragraph {i}." for i in range(12)]
    other = [" ".join(reversed(p.split())) + " other" for p in paras]
    ps = bp.PairSet()
    a = ps.doc("text", "\n\n".join(paras) + "\n\nUpdated 2024-01-02.", title="A page")
    b = ps.doc("text", "\n\n".join(paras) + "\n\nUpdated 2025-03-04.", title="A page")
    c = ps.doc("text", "\n\n".join(other), title="Another page")
    assert "<article><p>" in keep_adds.text_page(ps.docs[a])
    decider = keep_adds.Decider(ps)
    assert decider.decide(a, b) == (True, True)
    assert decider.decide(a, c) == (False, False)
