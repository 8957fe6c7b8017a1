"""Benchmark: where a page's fingerprint goes, stage by stage (CPU microseconds per page), as a
selector spider's crawl computes it: ``Fingerprinter.fingerprint_page(text, url, tree=root)`` on the
tree parsel built from the page (``response.selector.root``), right after the spider's read of its
links, native core on.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/bench_page_stages.py [--repeat 5] [--site real|generated]

The functions of :data:`STAGES` are wrapped with this thread's CPU clock (a recursive call counts
once; a stage absent from the code measured prints "-"), and every page is fingerprinted
``--repeat`` times, the pages in turn, the garbage collector run between pages only; a stage's time on a page is the median of its runs, and each
line is the mean over the pages. ``real``: the 250 real news pages of ``bench_crawl.py --site
real``; ``generated``: ``--pages`` article pages of its generated site. ``--baseline DIR``: the same
in another checkout (its code; ``--baseline-core``: a folder with its build of the native core),
one process each, alternating ``--rounds`` times, the medians of the rounds printed side by side.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: (label, "module:attribute" or "module:Class.attribute"): nested stages indented.
STAGES = (
    ("fingerprint_page", "scrapy_simhash.fingerprint.simhash:Fingerprinter.fingerprint_page"),
    ("  extract", "scrapy_simhash.text.extract:extract"),
    ("    prepare (NUL search, size cut)", "scrapy_simhash.text.extract:prepare|_prepare"),
    ("    _without_prefix (the shared tree's)", "scrapy_simhash.text.extract:_without_prefix"),
    ("    _too_many_elements", "scrapy_simhash.text.extract:_too_many_elements"),
    ("    _tree_differs", "scrapy_simhash.text.extract:_tree_differs"),
    ("      native_comment_runs (a second walk)", "scrapy_simhash.text.extract:native_comment_runs"),
    ("    title and heading", "scrapy_simhash.text.extract:title_and_heading|_title_and_heading"),
    ("    walk_native", "scrapy_simhash.text.extract:walk_native"),
    ("      HtmlWalker.walk", "scrapy_simhash.text.native:native_walk|_native_walk"),
    ("    _choose (content region, block decisions)", "scrapy_simhash.text.extract:_choose"),
    ("      main_blocks", "scrapy_simhash.text.extract:main_blocks|_main_blocks"),
    ("      with_heading", "scrapy_simhash.text.extract:with_heading|_with_heading"),
    ("      with_entries", "scrapy_simhash.text.extract:with_entries|_with_entries"),
    ("      without_sidebar", "scrapy_simhash.text.extract:without_sidebar|_without_sidebar"),
    ("    _inner", "scrapy_simhash.text.extract:_inner"),
    ("    block_rows", "scrapy_simhash.text.extract:block_rows|_rows"),
    ("  _native_page", "scrapy_simhash.fingerprint.simhash:Fingerprinter._native_page"),
    ("    normalize", "scrapy_simhash.fingerprint.simhash:normalize"),
    ("  own_text", "scrapy_simhash.fingerprint.simhash:own_text|_own_text"),
)


def pages_of(site: str, n: int) -> list[str]:
    """The decoded pages of ``site``."""
    import bench_crawl as bc

    from scrapy_simhash.text.charset import decode_html

    if site == "real":
        bodies = [gzip.decompress(p.read_bytes()) for p in sorted(bc.AEB.glob("*.html.gz"))]
        bodies += [bc._unwrapped(p.read_bytes()) for p in sorted(bc.CEE.glob("*.html"))]
    else:
        root = Path(tempfile.mkdtemp(prefix="stages-"))
        bc.build_site(root, n)
        bodies = [p.read_bytes() for p in sorted((root / "a").iterdir(), key=lambda p: int(p.stem))][:n]
    return [decode_html(b)[0] for b in bodies]


def _wrap(spent: dict[str, int]) -> None:
    """Wraps each stage present in the code with ``time.thread_time_ns``, summing into ``spent``."""
    depth = dict.fromkeys(spent, 0)
    for label, where in STAGES:
        module, _, path = where.partition(":")
        owner: Any = importlib.import_module(module)
        *outer, names = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        # "a|b": the function's name in this code, or in older code (a --baseline checkout)
        found = [n for n in names.split("|") if (n in owner.__dict__ if isinstance(owner, type) else hasattr(owner, n))]
        name = found[0] if found else names
        original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if original is None:
            spent.pop(label)
            continue

        def timed(*args: Any, _f: Any = original, _label: str = label, **kwargs: Any) -> Any:
            if depth[_label]:
                return _f(*args, **kwargs)
            depth[_label] += 1
            start = time.thread_time_ns()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] += time.thread_time_ns() - start
                depth[_label] -= 1

        setattr(owner, name, timed)


def measure(site: str, pages: int, repeat: int) -> dict[str, float]:
    """Mean over the pages of each stage's median CPU microseconds (absent stages left out)."""
    from parsel import Selector

    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    fp = Fingerprinter()
    if not fp.native or fp.html_walk != "native HTML walk":
        sys.exit(f"the native core does not run here: {fp.html_walk}")
    texts = pages_of(site, pages)
    # (every tree kept: a tree freed between the timed calls would charge its memory's return to
    # whatever runs next)
    selectors = [Selector(text=text) for text in texts]
    for text, sel in zip(texts, selectors):  # warm the caches a crawl has warm
        fp.fingerprint_page(text, "https://news.example/a", tree=sel.root)
    spent = {label: 0 for label, _ in STAGES}
    _wrap(spent)
    runs: dict[tuple[str, int], list[int]] = defaultdict(list)
    gc.disable()  # (its collections are no stage's: collected between pages, untimed)
    for _ in range(repeat):
        for i, text in enumerate(texts):
            gc.collect(0)
            sel = selectors[i]
            sel.css("a::attr(href)").getall()  # what the selector spider reads before (untimed)
            tree = sel.root
            for label in spent:
                spent[label] = 0
            fp.fingerprint_page(text, "https://news.example/a", tree=tree)
            for label, value in spent.items():
                runs[label, i].append(value)
    gc.enable()
    n = len(texts)
    return {label: statistics.fmean(statistics.median(runs[label, i]) for i in range(n)) / 1000 for label in spent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each page (the median is kept)")
    parser.add_argument("--site", choices=("real", "generated"), default="real")
    parser.add_argument("--pages", type=int, default=300, help="article pages of the generated site")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured alternately")
    parser.add_argument(
        "--baseline-core", type=Path, help="a folder holding the baseline's native core (first on its path)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --baseline")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.site, args.pages, args.repeat)))
        return
    if args.baseline is None:
        columns = {"this code": [measure(args.site, args.pages, args.repeat)]}
    else:
        columns = {"baseline": [], "this code": []}
        repo = HERE.parents[1]
        for _ in range(args.rounds):
            for column, root in (("baseline", args.baseline.resolve()), ("this code", repo)):
                path = [str(root), *([str(args.baseline_core)] if args.baseline_core and column == "baseline" else [])]
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")])}
                argv = [sys.executable, str(HERE / "bench_page_stages.py"), "--json", "--site", args.site]
                argv += ["--pages", str(args.pages), "--repeat", str(args.repeat)]
                out = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, check=True)
                columns[column].append(json.loads(out.stdout))
    print(
        f"{args.site} pages, CPU us per page (each page's median of {args.repeat} runs, mean over the pages"
        f"{f'; medians of {args.rounds} alternating rounds' if args.baseline else ''}):"
    )
    print(f"{'stage':54}" + "".join(f"{c:>12}" for c in columns))
    for label, _ in STAGES:
        cells = []
        for results in columns.values():
            values = [r[label] for r in results if label in r]
            cells.append(f"{statistics.median(values):12.0f}" if values else f"{'-':>12}")
        print(f"{label:54}" + "".join(cells))


if __name__ == "__main__":
    main()
