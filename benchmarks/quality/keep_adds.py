"""The product's near-duplicate decision where a drop would lose content, and where it must still drop:
the quality benchmark's figures for issue 21 in a few minutes (``evaluate.py`` takes half an hour).

    nice -n 10 .venv/bin/python benchmarks/quality/keep_adds.py [--quick] [--synthetic] [--json OUT]

The decision is the product's own: ``scrapy-simhash explain``'s :func:`pair_verdict` (a
``ChangeTracker`` with the default settings over an index in memory) given the two pages'
``Fingerprinter().fingerprint_page``, the first page observed, then the second; the verdict on the
second is the decision. A text (the revisions) is served as the page a site would make of it (its
title, then one ``<p>`` per paragraph in an ``<article>``). Beside it, the decision that
``evaluate.py``'s and ``wide_tier.py``'s bars use (``wide_tier.product_duplicate``: the rules
re-implemented on the fingerprint, fallback and change sketch), on the same pages: the two should
agree, and a rule added to the tracker shows here as disagreements until ``wide_tier`` has it too.

Printed (``build_pairs.py`` builds the pairs; ``added``: the characters the second page adds,
:func:`build_pairs.added_chars`):

* ``adds_paragraph``: the second page adds a paragraph: dropped (should be none), in Chinese and in
  English; in the reverse order (the article after the article with the paragraph: it adds
  nothing): dropped (should be all);
* ``adds_sentences`` (three or four sentences of another article added as a paragraph) and
  ``rewritten`` (30-50 % of the sentences replaced), in Chinese and in English: dropped (should be
  none); and the change pairs ``rewrite_30`` .. ``rewrite_50`` (dates and counters changed too);
* revisions whose second version adds ``MUST_KEEP`` (300) characters or more ("must keep"):
  dropped, all and at a Jaccard of 0.8 or more;
* revisions at Jaccard >= 0.95 that add under 100 characters: dropped (recall);
* revisions at Jaccard <= 0.6: dropped (false positives);
* with ``--synthetic``: the synthetic near-duplicates (recall, all and those that add under 100
  characters), the negatives (false positives), precision with ``adds_paragraph`` counted as
  negatives, and the recall on ``real_swap`` (a real page vs its text under another template).
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import build_pairs as bp
import wide_tier
from scrapy.settings import Settings

from scrapy_simhash.commands.reports import pair_verdict
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, PageFingerprint
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.base import TableLayout
from scrapy_simhash.text.extract import extract

SMALL_ADD = 100  # "adds under 100 characters": a near-duplicate that must still be dropped
HIGH_J = 0.95
LOW_J = 0.6
MUST_KEEP_J = 0.8


def text_page(doc: bp.Doc) -> str:
    """The page a site would serve for a text: its title, one paragraph per block of lines."""
    text = str(doc.content)
    paras = [p.strip() for p in text.split("\n\n") if p.strip()]
    body = "".join("<p>" + html.escape(p).replace("\n", "<br>\n") + "</p>\n" for p in paras)
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(doc.title)}</title></head>"
        f"<body><article>{body}</article></body></html>"
    )


class Decider:
    """The two decisions on pairs of documents, with each document fingerprinted once."""

    def __init__(self, ps: bp.PairSet, keep_adds: int | None = None) -> None:
        self.ps = ps
        #: The product's settings (``SIMHASH_KEEP_ADDS`` set when ``keep_adds`` is given).
        self.config = None if keep_adds is None else load_config(Settings({"SIMHASH_KEEP_ADDS": keep_adds}))
        self.fper = Fingerprinter()
        self.layout = TableLayout(64, wide_tier.K, wide_tier.K + 1)
        self.pages: dict[str, PageFingerprint | None] = {}

    def page(self, i: str) -> PageFingerprint | None:
        if i not in self.pages:
            doc = self.ps.docs[i]
            try:
                self.pages[i] = self.fper.fingerprint_page(doc.content if doc.kind == "html" else text_page(doc))
            except EmptyTextError:
                self.pages[i] = None
        return self.pages[i]

    def added(self, a: str, b: str) -> int:
        """The characters ``b``'s text adds to ``a``'s (:func:`build_pairs.added_chars`; a page's
        text: its title and extracted text, without the template's navigation, ads and links)."""
        return bp.added_chars(self.text(a), self.text(b))

    def text(self, i: str) -> str:
        doc = self.ps.docs[i]
        if doc.kind != "html":
            return f"{doc.title}\n{doc.content}"
        extracted = extract(doc.content)
        return f"{extracted.title}\n{extracted.text}"

    def decide(self, a: str, b: str) -> tuple[bool, bool]:
        """``(tracker, wide_tier)``: whether each decision drops ``b`` observed after ``a``."""
        pa, pb = self.page(a), self.page(b)
        if pa is None or pb is None:
            return False, False
        tracker = pair_verdict(
            [f"http://a.example/{a}", f"http://b.example/{b}"], [pa, pb], self.fper.bits, self.config
        )
        facts = [(p.fp, p.fallback, p.sketch) for p in (pa, pb)]
        return tracker["verdict"] == NEAR_DUPLICATE, wide_tier.product_duplicate(facts[0], facts[1], self.layout)[0]


_MEETS = {True: "yes", False: "NO", None: "-"}


def measure(
    decider: Decider,
    name: str,
    pairs: list[bp.Pair],
    bar: str,
    ok: Callable[[float], bool] | None,
    reverse: bool = False,
) -> dict[str, Any]:
    """The share of ``pairs`` whose second page (the first with ``reverse``) each decision drops."""
    t0 = time.perf_counter()
    both = [decider.decide(p.b, p.a) if reverse else decider.decide(p.a, p.b) for p in pairs]
    dropped = sum(t for t, _ in both)
    share = dropped / len(pairs) if pairs else float("nan")
    row = {
        "set": name,
        "pairs": len(pairs),
        "dropped": dropped,
        "share": share,
        "bar": bar,
        "meets": None if ok is None else bool(pairs) and ok(share),  # None: a figure for reference
        "wide_tier_dropped": sum(w for _, w in both),
        "disagree": sum(t != w for t, w in both),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(
        f"| {name} | {len(pairs)} | {dropped} ({share:.3f}) | {bar} | {_MEETS[row['meets']]} "
        f"| {row['wide_tier_dropped']} | {row['disagree']} |",
        flush=True,
    )
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the quick pair set (fewer articles, 300 revision pairs)")
    ap.add_argument("--synthetic", action="store_true", help="also the synthetic near-duplicates and negatives")
    ap.add_argument("--json", type=Path, help="write the rows to this JSON file")
    ap.add_argument("--keep-adds", type=int, help="SIMHASH_KEEP_ADDS for the product's decision (default: its default)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    ps = bp.build(quick=args.quick)
    print(f"{len(ps.pairs)} pairs built in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    decider = Decider(ps, args.keep_adds)
    by_cat: dict[str, list[bp.Pair]] = {}
    for p in ps.pairs:
        by_cat.setdefault(p.category, []).append(p)
    rev = by_cat.get("revisions", [])
    adds = by_cat["adds_paragraph"]
    must = [p for p in rev if p.meta["added"] >= bp.MUST_KEEP]
    rewrites = [p for c in ("rewrite_30", "rewrite_40", "rewrite_50") for p in by_cat[c]]

    print("| pairs | n | dropped by the product (share) | bar | meets | wide_tier.product_duplicate | disagree |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    keeps = [
        (name, lang, [p for p in pairs if p.meta["lang"] == lang])
        for name, pairs in (
            ("adds_paragraph: the second page adds a paragraph", adds),
            ("adds_sentences: adds three or four sentences of another article", by_cat["adds_sentences"]),
            ("rewritten: 30-50% of the sentences replaced", by_cat["rewritten"]),
            ("rewrite_30..50: the change pairs (dates, counters changed too)", rewrites),
        )
        for lang in ("zh", "en")
    ]
    rows = [measure(decider, f"{name}, {lang}", pairs, "<= 0.01", lambda s: s <= 0.01) for name, lang, pairs in keeps]
    rows += [
        measure(
            decider,
            "adds_paragraph reversed: the article after itself with a paragraph (adds nothing)",
            adds,
            "-",
            None,
            reverse=True,
        ),
        measure(decider, f"revisions adding >= {bp.MUST_KEEP} chars (must keep)", must, "<= 0.05", lambda s: s <= 0.05),
        measure(
            decider,
            f"revisions adding >= {bp.MUST_KEEP} chars at J >= {MUST_KEEP_J}",
            [p for p in must if p.meta["jaccard5"] >= MUST_KEEP_J],
            "<= 0.05",
            lambda s: s <= 0.05,
        ),
        measure(
            decider,
            f"revisions J >= {HIGH_J} adding < {SMALL_ADD} chars (recall)",
            [p for p in rev if p.meta["jaccard5"] >= HIGH_J and p.meta["added"] < SMALL_ADD],
            ">= 0.95",
            lambda s: s >= 0.95,
        ),
        measure(
            decider,
            f"revisions J <= {LOW_J} (false positives)",
            [p for p in rev if p.meta["jaccard5"] <= LOW_J],
            "<= 0.005",
            lambda s: s <= 0.005,
        ),
    ]
    if args.synthetic:
        rows += synthetic_rows(decider, ps, by_cat, adds_dropped=rows[0]["dropped"] + rows[1]["dropped"])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"\n{time.perf_counter() - t0:.0f} s in all", file=sys.stderr)
    return 0


def synthetic_rows(
    decider: Decider, ps: bp.PairSet, by_cat: dict[str, list[bp.Pair]], adds_dropped: int
) -> list[dict[str, Any]]:
    """Recall on the synthetic near-duplicates (all; those whose second page's text adds under
    ``SMALL_ADD`` characters; ``real_swap``), false positives on the negatives, and precision
    with the ``adds_paragraph`` pairs counted as negatives (``adds_dropped`` of them dropped)."""
    near = [p for p in ps.pairs if p.group == "near"]
    small = [p for p in near if decider.added(p.a, p.b) < SMALL_ADD]
    neg = [p for p in ps.pairs if p.group == "neg"]
    rows = [
        measure(decider, "synthetic near-duplicates (recall)", near, "-", None),
        measure(
            decider,
            f"synthetic near-duplicates adding < {SMALL_ADD} chars (recall)",
            small,
            ">= 0.95",
            lambda s: s >= 0.95,
        ),
        measure(decider, "real_swap (recall)", by_cat["real_swap"], ">= 0.90", lambda s: s >= 0.90),
        measure(decider, "synthetic negatives (false positives)", neg, "<= 0.001", lambda s: s <= 0.001),
    ]
    tp = rows[0]["dropped"]
    fp = rows[3]["dropped"] + adds_dropped
    precision = tp / (tp + fp) if tp + fp else 1.0
    print(f"\nprecision with adds_paragraph counted as negatives: {precision:.4f} ({tp} TP, {fp} FP; bar >= 0.99)")
    rows.append({"set": "precision with adds_paragraph", "share": precision, "tp": tp, "fp": fp, "bar": ">= 0.99"})
    return rows


if __name__ == "__main__":
    sys.exit(main())
