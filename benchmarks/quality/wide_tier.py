"""The wide tier of the near-duplicate decision, measured on the quality pairs with the product's own parts.

Run ``nice -n 10 .venv/bin/python benchmarks/quality/wide_tier.py --out
benchmarks/quality/wide_tier-results.txt`` (``--quick`` for a subset). For every document of the quality pairs
(``build_pairs.build``) it takes what a crawl stores: the 64-bit fingerprint and the change sketch
(``Fingerprinter.fingerprint_page``: a 64 x 16-bit one-permutation MinHash of word 3-shingles,
:mod:`scrapy_simhash.fingerprint.sketch`) and the page's fallback (short / template). A pair is a
near-duplicate for the product when

* its distance is <= k (3): today's tier; or
* the wide tier: its distance is <= ``k_wide``, the two fingerprints share the key of at least one
  table of the index's layout (so the candidate is in a bucket the lookup reads anyway: no new
  index), neither page is a fallback, both sketches fill at least ``min_slots`` of the 64 slots
  (enough shingles to judge by) and the sketches' similarity is >= ``T``.

Printed per rule: pooled precision and recall, recall of the categories issue 7 bars
(short_edit, real_swap), FPR on the negatives, the revisions' recall on pairs with Jaccard >= 0.95
and the number of revision pairs accepted under Jaccard 0.5 (the issue's false-drop line), and
the share of the pairs within ``(k, k_wide]`` whose fingerprints share a table key (what the
lookup can find at all), per data set.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import build_pairs as bp

from scrapy_simhash import defaults
from scrapy_simhash.decision.tracker import WIDE_MIN_SLOTS
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.fingerprint.sketch import filled, sketch_similarity
from scrapy_simhash.store.base import TableLayout
from scrapy_simhash.text.extract import Document

K = defaults.SIMHASH_MAX_DISTANCE


def page_facts(ps: bp.PairSet, fper: Fingerprinter) -> dict[str, tuple[int, str | None, bytes | None] | None]:
    """``(fp, fallback, sketch)`` of every document, as a crawl computes them (``None``: no text)."""
    out: dict[str, tuple[int, str | None, bytes | None] | None] = {}
    t0 = time.perf_counter()
    for n, (i, doc) in enumerate(ps.docs.items()):
        try:
            if doc.kind == "html":
                pf = fper.fingerprint_page(doc.content)
                out[i] = (pf.fp, pf.fallback, pf.sketch)
            else:  # a text: what the pipeline or fingerprint_page computes from a body of this text
                text = Document(title=doc.title, text=doc.content, encoding=None)  # type: ignore[arg-type]
                fp, short, sk, *_ = fper._native_page(text) or fper._python_page(text)
                out[i] = (fp, "short" if short else None, sk)
        except EmptyTextError:
            out[i] = None
        if n % 2000 == 0:
            print(f"  {n}/{len(ps.docs)} documents, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


Facts = tuple[int, str | None, bytes | None]


def _unlike(a: Facts, b: Facts) -> bool:
    """Whether two pages within k are no near-duplicates by ``SIMHASH_NEAR_SIMILARITY``: neither a
    short page, both change sketches fill ``WIDE_MIN_SLOTS`` slots and are less alike than it."""
    sa, sb = a[2], b[2]
    if "short" in (a[1], b[1]) or not defaults.SIMHASH_NEAR_SIMILARITY or sa is None or sb is None:
        return False
    if min(filled(sa), filled(sb)) < WIDE_MIN_SLOTS:
        return False
    return sketch_similarity(sa, sb) < defaults.SIMHASH_NEAR_SIMILARITY


def product_duplicate(a: Facts | None, b: Facts | None, layout: TableLayout) -> tuple[bool, int]:
    """The product's near-duplicate decision on two pages (``ChangeTracker`` with the default
    settings): ``(duplicate, distance)``, within k when the change sketches do not disagree, or
    by the wide tier."""
    if a is None or b is None:
        return False, 99
    d = (a[0] ^ b[0]).bit_count()
    if d <= K:
        return not _unlike(a, b), d
    if not K < d <= defaults.SIMHASH_WIDE_DISTANCE or a[1] is not None or b[1] is not None:
        return False, d
    sa, sb = a[2], b[2]
    if sa is None or sb is None or min(filled(sa), filled(sb)) < WIDE_MIN_SLOTS:
        return False, d
    found = layout.key_distance(a[0].to_bytes(8, "big"), b[0].to_bytes(8, "big")) <= 1
    return found and sketch_similarity(sa, sb) >= defaults.SIMHASH_WIDE_SIMILARITY, d


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cache", type=Path, help="keep the documents' fingerprints and sketches in this file")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    ps = bp.build(quick=args.quick)
    if args.cache and args.cache.exists():
        facts = pickle.loads(args.cache.read_bytes())
    else:
        facts = page_facts(ps, Fingerprinter())
        if args.cache:
            args.cache.write_bytes(pickle.dumps(facts))
    layout = TableLayout(64, K, K + 1)
    lines: list[str] = []

    def say(s: str = "") -> None:
        print(s)
        lines.append(s)

    rows = []
    for p in ps.pairs:
        if p.group not in ("near", "neg", "rev"):
            continue
        fa, fb = facts[p.a], facts[p.b]
        if fa is None or fb is None:
            rows.append((p, 99, 99, False, 0.0, 0))
            continue
        d = (fa[0] ^ fb[0]).bit_count()
        near_key = layout.key_distance(fa[0].to_bytes(8, "big"), fb[0].to_bytes(8, "big"))  # 0: a shared bucket
        ok = fa[1] is None and fb[1] is None and fa[2] is not None and fb[2] is not None
        sim = sketch_similarity(fa[2], fb[2]) if ok else 0.0
        slots = min(filled(fa[2]), filled(fb[2])) if ok else 0
        rows.append((p, d, near_key, ok, sim, slots))

    say(
        f"{len(ps.docs)} documents, {len(rows)} near/neg/rev pairs; layout: {len(layout.tables)} tables of "
        f"{layout.key_bits[0]}-bit keys (k = {K})\n"
    )
    say("Share of the pairs at distance d whose table keys are within `radius` bits in some table (found by a")
    say("lookup that reads the buckets of its table keys, radius 0, and of every key one bit away, radius 1):\n")
    say("| pairs | radius | " + " | ".join(f"d={d}" for d in range(K + 1, 17)) + " |")
    say("| --- | --- |" + " --- |" * (16 - K))
    for name, sel in (
        ("near (synthetic)", lambda p: p.group == "near"),
        ("short_edit", lambda p: p.category == "short_edit"),
        ("real_swap", lambda p: p.category == "real_swap"),
        ("revisions J>=0.95", lambda p: p.group == "rev" and p.meta["jaccard5"] >= 0.95),
        ("neg (all)", lambda p: p.group == "neg"),
    ):
        for radius in (0, 1):
            cells = []
            for d in range(K + 1, 17):
                at = [r for r in rows if sel(r[0]) and r[1] == d]
                cells.append(f"{sum(r[2] <= radius for r in at)}/{len(at)}" if at else "-")
            say(f"| {name} | {radius} | " + " | ".join(cells) + " |")
    say()

    cats = sorted({r[0].category for r in rows})
    neg_cats = {r[0].category for r in rows if r[0].group == "neg"}
    say(
        "| rule | P | R | short_edit | real_swap | FP neg (of) | rev R(J>=0.95) | rev accepted J<0.5 | rev accepted J 0.5-0.9 |"
    )
    say("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rules = [("d<=3", None)]
    for radius in (0, 1):
        for kw in (8, 12):
            for t in (0.7, 0.75, 0.8, 0.85, 0.9):
                for ms in (16, 32):
                    rules.append((f"d<=3 | d<={kw} & radius {radius} & sim>={t} & slots>={ms}", (kw, t, ms, radius)))
    for name, rule in rules:
        acc = {c: [0, 0] for c in cats}
        tp = fp_ = fn = 0
        rhi = rhit = rlow = rmid = 0
        for p, d, near_key, ok, sim, slots in rows:
            yes = d <= K
            if not yes and rule is not None:
                kw, t, ms, radius = rule
                yes = d <= kw and near_key <= radius and ok and sim >= t and slots >= ms
            acc[p.category][0] += yes
            acc[p.category][1] += 1
            if p.group == "near":
                tp += yes
                fn += not yes
            elif p.group == "neg":
                fp_ += yes
            else:
                j5 = p.meta["jaccard5"]
                if j5 >= 0.95:
                    rhi += 1
                    rhit += yes
                rlow += yes and j5 < 0.5
                rmid += yes and 0.5 <= j5 < 0.9
        neg = sum(v[1] for c, v in acc.items() if c in neg_cats)
        prec = tp / (tp + fp_) if tp + fp_ else 1.0
        say(
            f"| {name} | {prec:.4f} | {tp / max(tp + fn, 1):.3f} | {acc['short_edit'][0] / acc['short_edit'][1]:.3f} | "
            f"{acc['real_swap'][0] / acc['real_swap'][1]:.3f} | {fp_} ({neg}) | {rhit / max(rhi, 1):.3f} ({rhi}) | {rlow} | {rmid} |"
        )
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
