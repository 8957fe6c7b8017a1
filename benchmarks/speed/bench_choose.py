"""CPU time of the block decisions (``extract._choose``) and of one content region
(``region.main_blocks``, native and Python), with the native region and with the Python one, per real news page (the 250 pages of ``--site real``
in ``bench_crawl.py``), best of 5 passes, after the native walk.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/bench_choose.py
"""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_crawl as bc

from scrapy_simhash.text import extract as ex
from scrapy_simhash.text import region
from scrapy_simhash.text.title import title_and_heading


def _best(pages: list[Any], f: Any) -> float:
    """Microseconds per page of ``f`` over ``pages``, best of 5 passes (CPU time)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for page in pages:
            f(*page)
        best = min(best, time.process_time() - start)
    return best / len(pages) * 1e6


def main() -> int:
    bodies = [gzip.decompress(p.read_bytes()) for p in sorted(bc.AEB.glob("*.html.gz"))]
    bodies += [bc._unwrapped(p.read_bytes()) for p in sorted(bc.CEE.glob("*.html"))]
    pages = []
    for body in bodies:
        root = ex.parse_prepared(ex.prepare(ex.decode_html(body)[0]))
        walker = ex.Walker()
        if root is None or not ex.walk_native(walker, root):
            continue
        walker.flush()
        pages.append((walker, *title_and_heading(root)[1:]))
    print(f"{len(pages)} pages walked natively")
    choose = _best(pages, ex._choose)
    content = [(w, [b for b in w.blocks if not b.flags]) for w, _, _ in pages]
    native = _best(content, lambda w, c: w.core.main_blocks(c, w.parent, w.end, False))
    python = _best(content, region._main_blocks_python)
    cores = [w.core for w, _, _ in pages]
    for w, _, _ in pages:
        w.core = None  # the Python region (before issue 37's native one)
    choose_python = _best(pages, ex._choose)
    for (w, _, _), core in zip(pages, cores):
        w.core = core
    print(
        f"_choose: {choose:.0f} us/page, {choose_python:.0f} with the Python region; one region of the content blocks: native {native:.0f} us, Python {python:.0f} us"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
