"""How well a 64-bit distance ranks real revisions by how much they changed, per fingerprint option.

Run ``.venv/bin/python benchmarks/quality/distance_rank.py`` (~2 min). For each ``Fingerprinter``
configuration it fingerprints both texts of the 2,904 real revision pairs
(``../shared/data/revisions``) and prints Spearman's rank correlation of the Hamming distance with
1 - the exact character 5-gram Jaccard (all pairs, English, Chinese), and the recall at k = 3 on
the pairs with Jaccard >= 0.95: the two revisions bars of issue 7 for the distance alone (0.92 and
0.95). The short-text fallback is off (``min_features=0``) so that every pair has a SimHash.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evaluate import spearman

from scrapy_simhash.fingerprint.simhash import Fingerprinter

PAIRS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "revisions" / "pairs.jsonl.gz"
CONFIGS: list[dict[str, object]] = [
    {},
    {"weighting": "tf"},
    {"weighting": "tfidf"},
    {"features": "shingles", "shingle_size": 2},
    {"features": "shingles", "shingle_size": 3},
    {"features": "chars", "shingle_size": 5},
    {"bits": 128},
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=3, help="the recall's k (doubled for 128 bits)")
    args = ap.parse_args()
    with gzip.open(PAIRS, "rt", encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    truth = [1 - p["jaccard5"] for p in pairs]
    print(f"{len(pairs)} revision pairs; Spearman(distance, 1 - Jaccard) and recall at k on Jaccard >= 0.95")
    print("| configuration | Spearman, all | en | zh | recall at k, Jaccard >= 0.95 | s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for cfg in CONFIGS:
        fper = Fingerprinter(min_features=0, **cfg)  # type: ignore[arg-type]
        k = args.k * (2 if cfg.get("bits") == 128 else 1)
        t = time.perf_counter()
        ds = [(fper.fingerprint_text(p["text_a"]) ^ fper.fingerprint_text(p["text_b"])).bit_count() for p in pairs]
        by = {
            lang: spearman(
                [d for d, p in zip(ds, pairs) if p["lang"] == lang],
                [x for x, p in zip(truth, pairs) if p["lang"] == lang],
            )
            for lang in ("en", "zh")
        }
        hi = [d for d, p in zip(ds, pairs) if p["jaccard5"] >= 0.95]
        name = ", ".join(f"{key}={value}" for key, value in cfg.items()) or "defaults (words, log_tf, 64 bits)"
        print(
            f"| {name} | {spearman(ds, truth):.3f} | {by['en']:.3f} | {by['zh']:.3f} "
            f"| {sum(d <= k for d in hi) / len(hi):.3f} (k = {k}) | {time.perf_counter() - t:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
