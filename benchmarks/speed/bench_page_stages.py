"""Benchmark: where a page's fingerprint goes, stage by stage (CPU microseconds per page), as a
selector spider's crawl computes it: ``Fingerprinter.fingerprint_page(text, url, tree=root)`` on the
tree parsel built from the page (``response.selector.root``), native core on.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/bench_page_stages.py [--repeat 5] [--site real|generated]

Each stage runs alone on the same page, the stages interleaved page by page, ``--repeat`` times;
a page's time is the median of its runs, and each line is the mean over the pages (so that the
stages add up to ``fingerprint_page``). ``real``: the 250 real news pages of ``bench_crawl.py
--site real``; ``generated``: ``--pages`` article pages of its generated site.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_crawl as bc
from parsel import Selector

from scrapy_simhash.fingerprint import simhash
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.text import extract as ex
from scrapy_simhash.text import native as text_native
from scrapy_simhash.text.charset import decode_html
from scrapy_simhash.text.title import _title_and_heading

#: (label, indent): the stages in the order printed; an indented stage is part of the one above.
LINES = (
    ("fingerprint_page", 0),
    ("extract", 1),
    ("_prepare, element count", 2),
    ("_tree_differs (comment check)", 2),
    ("title and heading", 2),
    ("walk (HtmlWalker.walk)", 2),
    ("walk: _Block objects (walk_native less the walk)", 2),
    ("_choose (content region, block decisions)", 2),
    ("rest of _walked (visible, inner, rest, rows)", 2),
    ("_native_page (normalize, Core.page)", 1),
    ("_own_text", 1),
    ("rest of fingerprint_page", 1),
)


def pages_of(site: str, n: int) -> list[str]:
    """The decoded pages of ``site``."""
    if site == "real":
        bodies = [gzip.decompress(p.read_bytes()) for p in sorted(bc.AEB.glob("*.html.gz"))]
        bodies += [bc._unwrapped(p.read_bytes()) for p in sorted(bc.CEE.glob("*.html"))]
    else:
        root = Path(tempfile.mkdtemp(prefix="stages-"))
        bc.build_site(root, n)
        bodies = [p.read_bytes() for p in sorted((root / "a").iterdir(), key=lambda p: int(p.stem))][:n]
    return [decode_html(b)[0] for b in bodies]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each stage per page (the median is kept)")
    parser.add_argument("--site", choices=("real", "generated"), default="real")
    parser.add_argument("--pages", type=int, default=300, help="article pages of the generated site")
    args = parser.parse_args()
    fp = Fingerprinter()
    if not fp.native or fp.html_walk != "native HTML walk":
        sys.exit(f"the native core does not run here: {fp.html_walk}")
    texts = pages_of(args.site, args.pages)
    trees = [Selector(text=t).root for t in texts]
    clock = time.thread_time_ns
    runs: dict[tuple[str, int], list[int]] = defaultdict(list)

    def timed(label: str, i: int, f: Callable[..., Any], *a: Any, **k: Any) -> Any:
        start = clock()
        out = f(*a, **k)
        runs[label, i].append(clock() - start)
        return out

    url = "https://news.example/a"
    for _ in range(args.repeat):
        for i, (text, tree) in enumerate(zip(texts, trees)):
            timed("fingerprint_page", i, fp.fingerprint_page, text, url, tree=tree)
            doc = timed("extract", i, ex.extract, text, tree=tree)
            timed("_prepare, element count", i, lambda t: ex._too_many_elements(ex._prepare(t)), text)
            timed("_tree_differs (comment check)", i, ex._tree_differs, tree, text)
            title, heading, named = timed("title and heading", i, _title_and_heading, tree)
            walker = text_native.html_walker(type(tree))
            from scrapy_simhash.text import rules

            timed(
                "walk (HtmlWalker.walk)",
                i,
                lambda r: walker.walk(r, remaining=None, max_blocks=rules.MAX_BLOCKS, step=rules.BUDGET_STEP),
                tree,
            )
            w = ex._Walker()
            timed("walk: _Block objects (walk_native less the walk)", i, text_native.walk_native, w, tree)
            w.flush()
            timed("_choose (content region, block decisions)", i, ex._choose, w, heading, named)
            timed("_native_page (normalize, Core.page)", i, fp._native_page, doc, True)
            timed("_own_text", i, simhash._own_text, doc, url, None)
    n = len(texts)

    def mean(label: str) -> float:
        return statistics.fmean(statistics.median(runs[label, i]) for i in range(n)) / 1000

    value = {label: mean(label) for label, _ in LINES if (label, 0) in runs}
    value["walk: _Block objects (walk_native less the walk)"] -= value["walk (HtmlWalker.walk)"]
    value["rest of _walked (visible, inner, rest, rows)"] = value["extract"] - sum(
        value[label] for label, indent in LINES[2:9] if indent == 2 and label in value
    )
    value["rest of fingerprint_page"] = value["fingerprint_page"] - sum(
        value[label] for label, indent in LINES if indent == 1 and label in value
    )
    print(f"{args.site}: {n} pages, {statistics.median(map(len, texts)) / 1000:.0f} k characters median, "
          f"{args.repeat} runs each, CPU us per page (mean of each page's median)")
    for label, indent in LINES:
        print(f"{'  ' * indent + label:60} {value[label]:8.0f}")


if __name__ == "__main__":
    main()
