"""How small a kept page's novelty evidence can be, and what a smaller, lossy one changes: (1) the
lossless floor per kept page on the real pages ``bytes_per_url.py`` uses (the AEB and zh-web-cee
pages of ``../shared/data``); (2) for sampled evidence sized to fit a budget, how many of the
product's verdicts change on ``benchmarks/quality/keep_adds.py``'s pairs and on the revisions.

    PYTHONPATH=. nice .venv/bin/python benchmarks/scale/evidence_floor.py [--quick] [--budgets 300,600,1000,1500,3000]

(1) The text the evidence holds (``OwnText.novelty_text``'s: the page's own lines, the rest it shows,
its table rows), per kept page: UTF-8; zstd at level 3 (today's evidence, its 1-byte kind
included) and 19; zstd with a dictionary (16 KB) trained on the first half of the set's pages and
measured on the second half (the data's pages come from many sites, one or two each: one
dictionary per set, the closest this data has to one per site), with the dictionary's own bytes
amortised over that half beside; ``all``: the mean over every page (the mix ``bytes_per_url.py``
stores); the same for the normalised text (``novelty.gram_text``: what the
comparison reads; the raw text is what a copy is recognised by).

(2) Variants of the evidence, each swapped in for ``OwnText.novelty_text`` (the product's decision
otherwise, ``keep_adds.Decider``: ``pair_verdict`` with the default settings): ``normalised``
(the normalised text, zstd 3: lossless for the count); ``sampled B`` (the sampled kind always,
``(B - 5) / 3`` anchors: ``B`` bytes at most); ``fit B`` (the text when it compresses to ``B``
bytes or fewer, else the sample of ``B`` bytes). Printed for each: its mean bytes per kept page
on the pages of (1); on keep_adds' pairs (the sets of its table but the synthetic ones: the
second page observed after the first, URLs apart), the pairs dropped today and kept now
(``drop->keep``) and kept today and dropped now (``keep->drop``: content lost), for all pairs and
for those whose second page must be kept (keep_adds' ``<= 0.01`` sets, and the revisions adding
``MUST_KEEP``, 300, characters or more); on the revisions
recrawled as one URL (``recrawl_changes.py``: the second fetch a day later), the second version
called ``changed`` today and ``unchanged`` now (content lost: the refetch is not exported) and the
reverse.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))
sys.path.insert(0, str(_HERE.parents[1] / "quality"))

import build_pairs as bp
import keep_adds
import recrawl_changes
import zstandard
from helpers.data import load_pages

from scrapy_simhash import Fingerprinter
from scrapy_simhash.fingerprint import novelty
from scrapy_simhash.fingerprint.novelty import OwnText, gram_text
from scrapy_simhash.fingerprint.simhash import EmptyTextError

DICT_BYTES = 16 * 1024
#: keep_adds' change pairs.
_REWRITES = ("rewrite_30", "rewrite_40", "rewrite_50")
_ORIGINAL = OwnText.novelty_text


def shown(own: OwnText) -> str:
    """The text a kept page's evidence holds (as ``OwnText.novelty_text`` joins it)."""
    return "\n".join([*(own._lines or ()), *(own._rest or ()), *own._rows])


def real_pages() -> dict[str, list[OwnText]]:
    """Set name -> the own texts of its pages that ``bytes_per_url.base_pages`` keeps."""
    fper = Fingerprinter()
    out: dict[str, list[OwnText]] = {}
    for name, htmls in load_pages().items():
        owns = out.setdefault(name, [])
        for html in htmls:
            try:
                page = fper.fingerprint_page(html)
            except EmptyTextError:
                continue
            if page.own is not None and page.own.has_text and page.may_match:
                owns.append(page.own)
    return out


def floor(texts: list[bytes]) -> dict[str, float]:
    """Codec -> mean bytes per page of ``texts``' second half (a dictionary trained on the first)."""
    train, test = texts[: len(texts) // 2], texts[len(texts) // 2 :]
    out = {"UTF-8": statistics.fmean(map(len, test))}
    for level in (3, 19):
        codec = zstandard.ZstdCompressor(level=level)
        out[f"zstd {level}"] = statistics.fmean(len(codec.compress(t)) for t in test)
    dictionary = zstandard.train_dictionary(DICT_BYTES, train)
    for level in (3, 19):
        codec = zstandard.ZstdCompressor(level=level, dict_data=dictionary)
        out[f"zstd {level} + dictionary"] = statistics.fmean(len(codec.compress(t)) for t in test)
    out["(the dictionary, per page)"] = len(dictionary.as_bytes()) / len(test)
    return out


def variant(kind: str, budget: int) -> Callable[[OwnText, int | None], bytes]:
    """An ``OwnText.novelty_text`` of the variant ``kind`` (``today``, ``normalised``, ``sampled``, ``fit``)."""

    def sketch(own: OwnText, text_bytes: int | None = None) -> bytes:
        if kind == "normalised":
            return _ORIGINAL(OwnText.normalised(gram_text(shown(own)) if own._lines is not None else own.text))
        if kind in ("sampled", "fit"):
            saved = novelty.NOVELTY_ANCHORS
            novelty.NOVELTY_ANCHORS = max((budget - 5) // 3, 1)
            try:
                return _ORIGINAL(own, 0 if kind == "sampled" else budget)
            finally:
                novelty.NOVELTY_ANCHORS = saved
        return _ORIGINAL(own, text_bytes)

    return sketch


@contextlib.contextmanager
def swapped(sketch: Callable[[OwnText, int | None], bytes]) -> Iterator[None]:
    """``OwnText.novelty_text`` is ``sketch`` inside."""
    OwnText.novelty_text = sketch  # type: ignore[method-assign]
    try:
        yield
    finally:
        OwnText.novelty_text = _ORIGINAL  # type: ignore[method-assign]


def pair_sets(quick: bool) -> tuple[keep_adds.Decider, list[bp.Pair], list[tuple[Any, ...]]]:
    """The decider, keep_adds' pairs (all but the synthetic ones), and the revisions as recrawls
    (each a pair of fingerprinted versions)."""
    ps = bp.build(quick=quick)
    pairs = [p for p in ps.pairs if p.group in ("keep", "rev") or p.category in _REWRITES]
    fper = Fingerprinter()
    revisions = []
    for n, r in enumerate(bp.load_revisions()[: 300 if quick else None]):
        try:
            revisions.append(
                tuple(
                    fper.fingerprint_page(
                        keep_adds.text_page(bp.Doc(f"{n}{side}", "text", r[f"text_{side}"], lang=r["lang"]))
                    )
                    for side in "ab"
                )
            )
        except EmptyTextError:
            continue
    return keep_adds.Decider(ps), pairs, revisions


def verdicts(
    decider: keep_adds.Decider, pairs: list[bp.Pair], revisions: list[tuple[Any, ...]]
) -> dict[str, list[bool]]:
    """Whether each pair's second page is dropped; whether each revision's refetch is ``changed``."""
    dropped = [decider.decide(p.a, p.b)[0] for p in pairs]
    # adds_paragraph reversed (keep_adds' row): the article after itself with a paragraph.
    dropped += [decider.decide(p.b, p.a)[0] for p in pairs if p.category == "adds_paragraph"]
    changed = [recrawl_changes.recrawl(pages, {})[0] for pages in revisions]
    return {"dropped": dropped, "changed": changed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="keep_adds' quick pair set, 300 revisions")
    parser.add_argument("--budgets", default="300,600,1000,1500,3000", help="evidence bytes per kept page to try")
    args = parser.parse_args()
    t0 = time.perf_counter()

    sets = real_pages()
    print("(1) The lossless floor: bytes per kept page (the second half of each set)\n")
    columns: dict[str, dict[str, float]] = {}
    weights = {name: len(owns) for name, owns in sets.items()}
    for normalised in (False, True):
        texts = {
            name: [(gram_text(shown(o)) if normalised else shown(o)).encode("utf-8", "surrogatepass") for o in owns]
            for name, owns in sets.items()
        }
        got = {name: floor(t) for name, t in texts.items()}
        # The mix bytes_per_url.py stores: every page of the sets alike.
        got["all"] = {
            c: sum(got[n][c] * w for n, w in weights.items()) / sum(weights.values()) for c in got[next(iter(sets))]
        }
        columns.update({f"{n}{', normalised' if normalised else ''}": v for n, v in got.items()})
    print(f"| codec | {' | '.join(columns)} |")
    print("| --- |" + " --- |" * len(columns))
    for codec in next(iter(columns.values())):
        print(f"| {codec} | {' | '.join(f'{c[codec]:,.0f}' for c in columns.values())} |")
    owns = [o for group in sets.values() for o in group]

    print("\n(2) Evidence variants: bytes per kept page, verdicts that change against today's\n")
    decider, pairs, revisions = pair_sets(args.quick)
    must = [p.group == "keep" or p.meta.get("added", 0) >= bp.MUST_KEEP for p in pairs]
    must += [False for p in pairs if p.category == "adds_paragraph"]
    print(
        f"{len(pairs)} pairs (+ adds_paragraph reversed), {sum(must)} of them to keep; "
        f"{len(revisions)} revisions recrawled",
        file=sys.stderr,
    )
    variants = [("today", 0), ("normalised", 0)]
    for budget in map(int, args.budgets.split(",")):
        variants += [("sampled", budget), ("fit", budget)]
    base: dict[str, list[bool]] | None = None
    print(
        "| evidence | B per kept page | pairs dropped | drop->keep | keep->drop | keep->drop of those to keep "
        "| revisions changed | changed->unchanged | unchanged->changed |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind, budget in variants:
        sketch = variant(kind, budget)
        size = statistics.fmean(len(sketch(o, None)) for o in owns)
        with swapped(sketch):
            got = verdicts(decider, pairs, revisions)
        if base is None:
            base = got
        d0, d1 = base["dropped"], got["dropped"]
        c0, c1 = base["changed"], got["changed"]
        to_keep = sum(a and not b for a, b in zip(d0, d1))
        to_drop = sum(b and not a for a, b in zip(d0, d1))
        to_drop_must = sum(b and not a and m for a, b, m in zip(d0, d1, must))
        lost = sum(a and not b for a, b in zip(c0, c1))
        gained = sum(b and not a for a, b in zip(c0, c1))
        label = kind if not budget else f"{kind} {budget}"
        print(
            f"| {label} | {size:,.0f} | {sum(d1)} | {to_keep} | {to_drop} | {to_drop_must} | {sum(c1)} "
            f"| {lost} | {gained} |",
            flush=True,
        )
    print(f"\n{time.perf_counter() - t0:.0f} s in all", file=sys.stderr)


if __name__ == "__main__":
    main()
