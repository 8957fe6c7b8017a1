"""What binary word-pair features would do to the fingerprint: the revisions' Spearman bar against
the recall of the 64-bit distance alone (what the item pipeline decides by) and the product's decision.

Run ``.venv/bin/python benchmarks/quality/pair_features.py`` (~3 minutes). It fingerprints every
document of the quality benchmark (``build_pairs.build``: 31,313 labelled pairs and the 2,904 real
revisions) twice on the Python path: with the defaults (the tokens weighted ``1 + log(tf)``) and
with the same tokens and each pair of adjacent tokens, every feature of weight 1 (an experiment:
no ``Fingerprinter`` option makes it; the change sketch, the extraction and the short-text fallback
are the defaults'). For each it prints Spearman(distance, 1 - Jaccard) over the revisions, the
recall at k = 3 of the distance alone (the 680 near-duplicate pairs, ``short_edit``, and the
revisions with Jaccard >= 0.95), and the product's decision (``wide_tier.product_duplicate``: within
k unless the change sketches disagree, or the wide tier) on the same pairs.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import build_pairs as bp
import wide_tier
from evaluate import spearman

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, exact_fp, simhash_from_weights
from scrapy_simhash.store.base import TableLayout

K = 3


def _with_pairs(self: Fingerprinter, text: str, title: str, native: bool = True) -> tuple[int, bool, list[str]]:
    """``Fingerprinter._fingerprint`` with binary word and word-pair features (Python path)."""
    if self.max_chars and len(text) > self.max_chars:
        text = text[: self.max_chars]
    feats = self._extractor.extract(text, title)
    tokens = feats.tokens
    if not feats.weights:
        raise EmptyTextError("text has no features")
    if len(feats.weights) < self.min_features:
        return exact_fp(tokens, self.bits) or 1, True, tokens
    weights = dict.fromkeys(tokens, 1.0)
    weights.update((f"{a} {b}", 1.0) for a, b in itertools.pairwise(tokens))
    return simhash_from_weights(weights, bits=self.bits, feature_hash=self.feature_hash) or 1, False, tokens


def measure(ps: bp.PairSet, name: str) -> dict[str, Any]:
    t = time.perf_counter()
    facts = wide_tier.page_facts(ps, Fingerprinter(native=False))
    layout = TableLayout(64, wide_tier.K, wide_tier.K + 1)
    # per set of pairs: (within k, the product's decision) of each pair
    sets: dict[str, list[tuple[bool, bool]]] = {"near": [], "short_edit": [], "rev95": [], "neg": []}
    rev_d, rev_truth = [], []
    for p in ps.pairs:
        if p.group not in ("near", "neg", "rev"):
            continue
        a, b = facts[p.a], facts[p.b]
        dup, d = wide_tier.product_duplicate(a, b, layout)
        names = [p.group] + (["short_edit"] if p.category == "short_edit" else [])
        if p.group == "rev":
            names = ["rev95"] if p.meta["jaccard5"] >= 0.95 else []
            if a is not None and b is not None:
                rev_d.append((a[0] ^ b[0]).bit_count())
                rev_truth.append(1 - p.meta["jaccard5"])
        for name_ in names:
            sets[name_].append((d <= K, dup))

    def rate(name_: str, i: int) -> float:
        return sum(x[i] for x in sets[name_]) / max(len(sets[name_]), 1)

    neg = sets["neg"]
    return {
        "name": name,
        "spearman": spearman(rev_d, rev_truth),
        "alone": [rate(g, 0) for g in ("near", "short_edit", "rev95")],
        "product": [rate(g, 1) for g in ("near", "short_edit", "rev95")],
        "false": (sum(x[0] for x in neg), sum(x[1] for x in neg), len(neg)),
        "s": time.perf_counter() - t,
    }


def main() -> None:
    ps = bp.build(quick="--quick" in sys.argv, revisions=True)
    results = [measure(ps, "defaults: tokens, 1 + log(tf)")]
    Fingerprinter._fingerprint = _with_pairs  # type: ignore[method-assign]
    results.append(measure(ps, "tokens and adjacent pairs, weight 1"))
    print(
        "| features | Spearman, revisions | distance <= 3 alone: recall all / short_edit / revisions J >= 0.95 "
        "| the product's decision: same | false positives (alone / product) of negatives | s |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        fa, fp_, n = r["false"]
        print(
            f"| {r['name']} | {r['spearman']:.3f} | {' / '.join(f'{x:.3f}' for x in r['alone'])} "
            f"| {' / '.join(f'{x:.3f}' for x in r['product'])} | {fa} / {fp_} of {n} | {r['s']:.0f} |"
        )


if __name__ == "__main__":
    main()
