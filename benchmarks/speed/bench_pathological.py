"""Benchmark: pages built to be expensive, ours (``Fingerprinter().fingerprint_page``) vs trafilatura.

Run: ``.venv/bin/python benchmarks/speed/bench_pathological.py [--repeat N]``

Pages (built here, deterministic):

- ``br-250k``: 250,000 words separated by ``<br>`` (1.25 MB; issue 7 wants it under 0.5 s);
- ``p-50k``: 50,000 short paragraphs (walked: under the element cap);
- ``deep-3000``: an article behind 3,000 unclosed ``<div>`` (libxml2 stops at depth 2048);
- ``script-10mb``: an article after a 10 MB inline ``<script>`` (as bytes: removed before the cut);
- ``table-20k``: a 2,000 x 10 table of short cells (a Chinese portal's layout, scaled up);
- the ``--docs`` largest ``*.html`` under ``/usr/share/doc`` (real generated documentation), if any.

For each page: the median time of ``--repeat`` runs of the whole fingerprint (decoding where the
page is bytes, extraction, features, hash) and what it took (``method``, the fallback); and
trafilatura's ``extract`` on the same input, timed the same way, with the ratio. Timings on a shared
machine are noisy: compare the ratios, and the time against the budget (``Fingerprinter.time_budget``).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the pages: tests/helpers/native_fuzz.py

from helpers.native_fuzz import pathological_pages as pages

from scrapy_simhash.fingerprint.simhash import Fingerprinter


def timed(fn, arg, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn(arg)
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--docs", type=int, default=6, help="how many of the largest real documentation pages")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    fp = Fingerprinter()
    fp.fingerprint_text("warm up the tokenizer")
    try:
        import trafilatura
    except ImportError:
        trafilatura = None
    print(f"time budget {fp.time_budget:g} s; median of {args.repeat} runs\n")
    print("| page | size | ours ms | method / fallback | trafilatura ms | ratio |")
    print("|---|---|---|---|---|---|")
    for name, page in pages(args.docs).items():
        ours, page_fp = timed(fp.fingerprint_page, page, args.repeat)
        how = f"{page_fp.method} / {page_fp.fallback or '-'}"  # type: ignore[attr-defined]
        if trafilatura is not None:
            text = page.decode("utf-8", "replace") if isinstance(page, bytes) else page
            theirs, _ = timed(trafilatura.extract, text, 1 if len(text) > 2_000_000 else args.repeat)
            peer, ratio = f"{theirs * 1000:.0f}", f"{ours / theirs:.2f}"
        else:
            peer = ratio = "-"
        print(f"| {name} | {len(page) / 1e6:.2f} MB | {ours * 1000:.0f} | {how} | {peer} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
