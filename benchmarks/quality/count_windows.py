"""How ``novelty`` counts what a page adds in Chinese: windows and runs by characters or by weight.

    nice .venv/bin/python benchmarks/quality/count_windows.py [--quick]

For each set of pairs (built by ``build_pairs.py``), the share whose second page's own text the
count puts under 100 (``SIMHASH_KEEP_ADDS``: dropped, if it resembles the first) and the median
count, for these ways of counting (the product's normalised own texts, the first page's whole
shown text; a Han, kana or hangul character weighs ``w``):

* ``chars``: ``w`` = 1, windows and runs of 16 characters (the count before issue 34);
* ``w3``: ``w`` = 3, windows and runs of 16 characters;
* ``w3 windows by weight``: ``w`` = 3, windows of 16 units (6 Han characters), runs of 16 characters
  (the product's count);
* ``w3 windows and runs by weight``: both of 16 units;
* ``w2 windows by weight``: ``w`` = 2.

The sets that must stay under 100 (drops that lose nothing): real revisions at Jaccard >= 0.95
that add under 100 characters (``build_pairs.added_chars``), the synthetic near-duplicates; those
that must pass it: ``adds_paragraph``, ``adds_sentences``, ``rewritten``, revisions adding 300
characters or more.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import build_pairs as bp
from keep_adds import Decider

from scrapy_simhash.fingerprint import novelty
from scrapy_simhash.fingerprint.novelty import gram_text, one_line

WINDOW = 16
WAYS = {
    "chars": (1, False, False),
    "w3": (3, False, False),
    "w3 windows by weight": (3, True, False),
    "w3 windows and runs by weight": (3, True, True),
    "w2 windows by weight": (2, True, False),
}


def _weights(text: str, w: int) -> np.ndarray:
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return np.where(novelty._weights(cps) > 1, w, 1), cps


def _windows(text: str, w: int, by_weight: bool) -> tuple[set[str], list[tuple[int, int]]]:
    """Each window of ``text`` within a line (the fewest characters from a position weighing
    ``WINDOW`` or more; by characters unless ``by_weight``): the set of their texts, their spans."""
    weights, cps = _weights(text, w)
    units = np.concatenate([[0], np.cumsum(weights if by_weight else np.ones(len(cps), dtype=np.int64))])
    ends = np.searchsorted(units, units[:-1] + WINDOW)
    breaks = np.concatenate([[0], np.cumsum(cps == 10)])
    spans = [(i, e) for i, e in enumerate(ends.tolist()) if e <= len(cps) and breaks[e] == breaks[i]]
    return {text[i:e] for i, e in spans}, spans


def count(new: str, kept: str, w: int, windows_by_weight: bool, runs_by_weight: bool) -> float:
    """What the normalised ``new`` adds to the normalised ``kept`` counted this way."""
    if new in kept:
        return 0.0
    kept_lines = set(kept.split("\n"))
    text = "\n".join(dict.fromkeys(line for line in new.split("\n") if line not in kept_lines))
    have, _ = _windows(one_line(kept), w, windows_by_weight)
    _, spans = _windows(text, w, windows_by_weight)
    covered = np.zeros(len(text) + 1, dtype=np.int64)
    for i, e in spans:
        if text[i:e] in have:
            covered[i] += 1
            covered[e] -= 1
    weights, cps = _weights(text, w)
    bare = (np.cumsum(covered)[: len(text)] == 0) & (cps != 10)
    edges = np.diff(bare.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    total = 0.0
    for a, b in zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()):
        if (int(weights[a:b].sum()) if runs_by_weight else b - a) >= WINDOW:
            total += float(weights[a:b].sum())
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the quick pair set")
    args = ap.parse_args(argv)
    ps = bp.build(quick=args.quick)
    decider = Decider(ps)
    sets: dict[str, list[dict[str, float]]] = {}
    for p in ps.pairs:
        lang, added = p.meta.get("lang"), p.meta.get("added", 0)
        if p.category in ("adds_paragraph", "adds_sentences", "rewritten", "real_swap"):
            name = f"{p.category} {lang}"
        elif p.category == "revisions" and p.meta["jaccard5"] >= 0.95 and added < 100:
            name = f"revisions J >= 0.95 adding < 100, {lang}"
        elif p.category == "revisions" and added >= bp.MUST_KEEP:
            name = f"revisions adding >= {bp.MUST_KEEP}, {lang}"
        elif p.group == "near":
            name = f"synthetic near-duplicates {lang}"
        else:
            continue
        a, b = decider.page(p.a), decider.page(p.b)
        if a is None or b is None or a.own is None or b.own is None:
            continue
        kept = gram_text("\n".join(a.own._lines or ()) + "\n" + "\n".join(a.own._rest or ()))
        sets.setdefault(name, []).append({way: count(b.own.text, kept, *args_) for way, args_ in WAYS.items()})
    print("Share counted under 100 (median count):\n")
    print("| pairs | n | " + " | ".join(WAYS) + " |")
    print("| --- | --- |" + " --- |" * len(WAYS))
    for name in sorted(sets):
        rows = sets[name]
        cells = [np.array([r[way] for r in rows]) for way in WAYS]
        print(f"| {name} | {len(rows)} | " + " | ".join(f"{np.mean(c < 100):.3f} ({np.median(c):.0f})" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
