"""A recrawl of one URL on the real revision pairs: is the second version ``changed``, with and
without the rule that a refetch whose own text adds ``SIMHASH_KEEP_ADDS`` characters is changed.

    nice -n 10 .venv/bin/python benchmarks/quality/recrawl_changes.py [--limit N] [--json OUT]

Each pair of ``revisions/pairs.jsonl.gz`` (``build_pairs.load_revisions``) is two fetches of one
URL: each version served as the page a site would make of it (``keep_adds.text_page``), the real
``Fingerprinter().fingerprint_page``, then ``ChangeTracker.observe`` of the first and, a day later,
of the second over a fresh index in memory with the product's default settings. "before": the
same with ``SIMHASH_KEEP_ADDS = 0`` (which turns the rule off; one URL alone in its index, there is
no drop for it to decide, so that is the decision without the rule). Printed per group of pairs
by what the second version adds (``build_pairs.added_chars``): the share called ``changed``
before and after, and how many the rule alone turned to ``changed`` (``changed/adds``).
Bars: adding >= 300 characters, ``changed`` >= 0.95 after; adding < 100 characters, ``unchanged``
at the rate of before.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import build_pairs as bp
from keep_adds import text_page
from scrapy.settings import Settings

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import CHANGED, Reason
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, PageFingerprint
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex

DAY = 86400.0
MUST_CHANGE = bp.MUST_KEEP  # 300: a second version that adds this many characters is a change to export
SMALL_ADD = 100  # under this, an edit a recrawl may call unchanged (as today)


def recrawl(pages: tuple[PageFingerprint, ...], settings: dict[str, Any]) -> tuple[bool, bool]:
    """``(changed, by_adds)``: the verdict on the second fetch of one URL, and whether the rule
    alone called it changed."""
    config = load_config(Settings(settings))
    tracker = ChangeTracker(SimhashIndex(**config.index_kwargs()), **config.tracker_kwargs())
    tracker.observe("https://docs.example/page", pages[0], now=0.0)
    second = tracker.observe("https://docs.example/page", pages[1], now=DAY)
    return second.verdict == CHANGED, second.reason == Reason.CHANGED_ADDS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, help="the first N pairs only")
    ap.add_argument("--json", type=Path, help="write the rows to this JSON file")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    revs = bp.load_revisions()[: args.limit]
    fper = Fingerprinter()
    rows: list[dict[str, Any]] = []
    for n, r in enumerate(revs):
        try:
            pages = tuple(
                fper.fingerprint_page(text_page(bp.Doc(f"{n}{side}", "text", r[f"text_{side}"], lang=r["lang"])))
                for side in "ab"
            )
        except EmptyTextError:
            continue
        before, _ = recrawl(pages, {"SIMHASH_KEEP_ADDS": 0})
        after, by_adds = recrawl(pages, {})
        added = bp.added_chars(r["text_a"], r["text_b"])
        rows.append({"lang": r["lang"], "jaccard5": r["jaccard5"], "added": added})
        rows[-1].update(before=before, after=after, by_adds=by_adds)
    print(f"{len(rows)} revision pairs recrawled in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    groups = [
        (f"adds >= {MUST_CHANGE} chars", lambda x: x["added"] >= MUST_CHANGE, "changed >= 0.95"),
        (f"adds >= {MUST_CHANGE} chars, J >= 0.9", lambda x: x["added"] >= MUST_CHANGE and x["jaccard5"] >= 0.9, "-"),
        (f"adds {SMALL_ADD}-{MUST_CHANGE - 1} chars", lambda x: SMALL_ADD <= x["added"] < MUST_CHANGE, "-"),
        (f"adds < {SMALL_ADD} chars", lambda x: x["added"] < SMALL_ADD, "unchanged as before"),
        (f"adds < {SMALL_ADD} chars, J >= 0.95", lambda x: x["added"] < SMALL_ADD and x["jaccard5"] >= 0.95, "-"),
    ]
    print("| revision pairs (second version) | lang | n | changed before | changed after | changed/adds | bar |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    table = []
    for name, keep, bar in groups:
        for lang in ("all", "en", "zh"):
            sel = [x for x in rows if keep(x) and lang in ("all", x["lang"])]
            if not sel:
                continue
            b, a, by = (sum(x[k] for x in sel) for k in ("before", "after", "by_adds"))
            print(
                f"| {name} | {lang} | {len(sel)} | {b} ({b / len(sel):.3f}) | {a} ({a / len(sel):.3f}) | {by} "
                f"| {bar if lang == 'all' else ''} |"
            )
            table.append({"set": name, "lang": lang, "pairs": len(sel), "before": b, "after": a, "by_adds": by})
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    print(f"\n{time.perf_counter() - t0:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
