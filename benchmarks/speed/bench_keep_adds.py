"""Benchmark: what the containment check (``SIMHASH_KEEP_ADDS``) costs per page, on real pages.

Run: ``.venv/bin/python benchmarks/speed/bench_keep_adds.py [--pages 250] [--rounds 5] [--zlib-level 0]``
(reads ``../shared/data/scrapinghub-aeb``: real news pages).

The same functions the crawl calls, on the real pages' fingerprints (``Fingerprinter.fingerprint_page``,
made before the clock runs):

- ``fingerprint_page``: the whole per-page fingerprint (for scale), and of it ``own text``: the
  page's own text (``fingerprint.own_text``) and ``sketch``: the bytes its record keeps;
- the decision (``ChangeTracker.observe`` on LMDB, ``durable=False`` as a crawl, the default
  ``FreshnessPolicy``) of each page under a new URL (``new``) and of its copy under another URL
  (``copy``: the check reads the kept page's record and finds the same text) and of an edited
  copy under a third URL (``edited copy``: a word inserted mid-text, so the check compares the
  texts' grams), then of each page refetched under its own URL (``refetch``: unchanged; the
  change rule finds its own text in its record's) and refetched with the word inserted
  (``edited refetch``: ``unchanged``, after comparing the texts), with the page's own text
  (``own``, what the crawl passes), without it (``resemblance only``: the decision before the
  check) and with it but ``keep_adds=0`` (``own, keep_adds 0``: the same records written, neither
  the check nor the change rule run), in alternating rounds on indexes of their own; CPU time of
  this thread.

Prints medians in ms per page, the ratio of the decision with the check to without, and the bytes
the check adds to a record (median, 90th percentile, largest). ``--zlib-level 0`` stores the text
uncompressed: what the check costs without compressing it (the decision with it is still over
1.2x the decision without it, for the records' larger writes and reading the text back).
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from statistics import median

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import novelty
from scrapy_simhash.fingerprint.novelty import OwnText
from scrapy_simhash.fingerprint.simhash import Fingerprinter, own_text
from scrapy_simhash.schedule import FreshnessPolicy
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.text.extract import extract

DATA = REPO / ".." / "shared" / "data" / "scrapinghub-aeb" / "html"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--zlib-level",
        type=int,
        default=novelty.ZLIB_LEVEL,
        help="the text sketch's zlib level (0: stored, not compressed: the check's cost without compression)",
    )
    args = parser.parse_args()
    novelty.ZLIB_LEVEL = args.zlib_level
    clock = time.thread_time
    bodies = [gzip.decompress(p.read_bytes()) for p in sorted(DATA.glob("*.html.gz"))[: args.pages]]
    fper = Fingerprinter()
    pages = [fper.fingerprint_page(body) for body in bodies]
    docs = [extract(body) for body in bodies]

    def per_page(work: list, run) -> float:  # type: ignore[no-untyped-def,type-arg]
        t = clock()
        for item in work:
            run(item)
        return (clock() - t) / len(work) * 1e3

    def edit(doc) -> OwnText:  # type: ignore[no-untyped-def]
        """The page's own text with a word inserted mid-text."""
        text = "\n".join([doc.title, doc.text, *([doc.rest] if doc.rest else [])])
        return OwnText((text[: len(text) // 2] + " updated " + text[len(text) // 2 :]).split("\n"))

    edited = {i: edit(docs[i]) for i, p in enumerate(pages) if p.own is not None}
    times: dict[str, list[float]] = {}
    tmp = Path(tempfile.mkdtemp(prefix="bench-keep-adds-"))
    for r in range(args.rounds):
        times.setdefault("fingerprint_page", []).append(per_page(bodies, fper.fingerprint_page))
        times.setdefault("own text", []).append(per_page(docs, lambda d: own_text(d, None, None)))
        owns = [p.own for p in pages]
        times.setdefault("sketch", []).append(per_page(owns, lambda o: o.novelty_text()))
        for label, with_own in (("own", True), ("resemblance only", False), ("own, keep_adds 0", True)):
            index = SimhashIndex.open(tmp / f"{label}-{r}", durable=False)
            tracker = ChangeTracker(index, policy=FreshnessPolicy(), keep_adds=0 if "0" in label else 100)

            def observe(item, *, prefix: str, tracker=tracker, with_own=with_own, edit=False) -> None:  # type: ignore[no-untyped-def]
                i, page = item
                own = page.own
                if edit:
                    own = edited[i]
                tracker.observe(f"https://{prefix}.example/{i}", replace(page, own=own if with_own else None), 1.0)

            work = list(enumerate(pages))
            times.setdefault(f"decision, new ({label})", []).append(per_page(work, lambda x: observe(x, prefix="site")))
            times.setdefault(f"decision, copy ({label})", []).append(
                per_page(work, lambda x: observe(x, prefix="mirror"))
            )
            times.setdefault(f"decision, edited copy ({label})", []).append(
                per_page(work, lambda x: observe(x, prefix="edited", edit=True))
            )
            times.setdefault(f"decision, refetch ({label})", []).append(per_page(work, lambda x: observe(x, prefix="site")))
            times.setdefault(f"decision, edited refetch ({label})", []).append(
                per_page(work, lambda x: observe(x, prefix="site", edit=True))
            )
            index.close()
    print(f"{len(pages)} real news pages, {args.rounds} rounds, ms of CPU per page (median of the rounds):")
    for name, values in times.items():
        print(f"  {name}: {median(values):.3f}")
    for kind in ("new", "copy", "edited copy", "refetch", "edited refetch"):
        ratio = median(times[f"decision, {kind} (own)"]) / median(times[f"decision, {kind} (resemblance only)"])
        print(f"  decision with the check / without, {kind}: {ratio:.2f}")
    for kind in ("refetch", "edited refetch"):  # the same records written: the change rule's cost alone
        ratio = median(times[f"decision, {kind} (own)"]) / median(times[f"decision, {kind} (own, keep_adds 0)"])
        print(f"  decision with the change rule / without (SIMHASH_KEEP_ADDS 0), {kind}: {ratio:.2f}")
    sizes = sorted(len(p.own.novelty_text()) for p in pages if p.own is not None)
    print(
        f"  bytes the check adds to a record: median {median(sizes):.0f}, 90th percentile "
        f"{sizes[int(0.9 * len(sizes))]}, largest {sizes[-1]}"
    )


if __name__ == "__main__":
    main()
