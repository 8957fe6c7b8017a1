"""Benchmark: what each function of the native core saves per page, against a whole page's cost.

Run: ``.venv/bin/python benchmarks/speed/bench_native_parts.py [--repeat 5] [--clock cpu]`` (about a
minute; needs the native core: ``./dev test`` or ``./dev bench`` builds it).

For every page of the real data (``../shared/data``: the 69 Chinese news pages of zh-web-cee, the
181 English pages of scrapinghub-aeb), each native function and the Python code it replaces run on
the same input, alternately, ``--repeat`` times in this process; a page's time is the median of its
runs. Printed per corpus, in microseconds of CPU (medians over the pages):

- ``page``: the whole cost that the parts are measured against: ``Fingerprinter.fingerprint_page``
  (native core on: decoding, lxml's parse, the walk, the features, the sketch) plus the per-page
  decision (``ChangeTracker.observe`` of a refetch with the default ``FreshnessPolicy``, on an LMDB
  index: the record read, the check-and-add, the schedule's step, the record write; every page
  refetched in turn, ``2 * --repeat`` times, the mean per page of a pass);
- per native function: the Python path, the native one, the time saved (Python - native) and that
  saving as a share of ``page``. Where a function runs once per page (``Core.page``, the walk, the
  title, the record codec) the share is what it saves a crawl; the others run only in some cases
  (said in their line), and the share is what they save on a page where they run.

The decision's functions (the record codec and CPython's rounding, once native in the core) were
removed for what this measured (under 1% of a page); the decision is Python only, and ``observe`` is
measured as it runs.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from scrapy_simhash.fingerprint import PageFingerprint

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import templates
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.schedule import DAY, FreshnessPolicy
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import schedule_state
from scrapy_simhash.text.features import normalize

ex = importlib.import_module("scrapy_simhash.text.extract")  # the package exports the function too
text_native = importlib.import_module("scrapy_simhash.text.native")
recrawl: Any = importlib.import_module("scrapy_simhash.decision.tracker")
schedule: Any = importlib.import_module("scrapy_simhash.schedule")

#: (name, when it runs)
PARTS = (
    ("Core.page", "every page"),
    ("HtmlWalker.walk", "every page"),
    ("record codec in observe", "every page (record read + write, schedule numbers and state)"),
    ("  pack_record (to_bytes)", "every page"),
    ("  unpack_record (from_bytes)", "every refetch"),
    ("  schedule_numbers", "every page with a schedule"),
    ("  schedule_state", "every refetch with a schedule"),
    ("Core.fingerprint", "fingerprint_text only (the item pipeline's texts)"),
    ("Core.tokens", "a short page's whole visible text"),
    ("Core.count_features", "a page with learned template lines"),
    ("FlatText.line_keys", "a page's lines not seen lately (template check)"),
    ("FlatText.document", "the regex fallback: > MAX_ELEMENTS, too deep"),
)


def load_pages() -> dict[str, list[bytes]]:
    zh = sorted((DATA / "zh-web-cee" / "original").glob("*.html"))
    en = sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))
    if not zh or not en:
        sys.exit(f"no data under {DATA.resolve()}")
    return {
        "zh news (zh-web-cee)": [p.read_bytes() for p in zh],
        "en news (scrapinghub-aeb)": [gzip.decompress(p.read_bytes()) for p in en],
    }


class Timer:
    """Per page and part, the times of the runs (nanoseconds)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self.runs: dict[tuple[str, str, int], list[int]] = {}

    def time(self, part: str, path: str, page: int, fn: Callable[..., Any], *args: Any, times: int = 1) -> None:
        """Time ``fn(*args)`` (the mean of ``times`` calls) as one run of ``part`` by ``path``."""
        start = self.clock()
        for _ in range(times):
            fn(*args)
        self.runs.setdefault((part, path, page), []).append((self.clock() - start) // times)

    def per_page(self, part: str, path: str, pages: int) -> list[float]:
        """Each page's median run (microseconds)."""
        return [
            statistics.median(self.runs[part, path, i]) / 1000 for i in range(pages) if (part, path, i) in self.runs
        ]


def walk(root: Any, native: bool) -> None:
    """``extract``'s walk of ``root``: natively, or the Python walk."""
    walker = ex.Walker(deadline=None)
    if not (native and text_native.walk_native(walker, root)):
        walker.walk(root, 0, False, 0)
    walker.flush()


def python_line_keys(text: str) -> list[int]:
    """``templates._compute_keys``' Python path."""
    return [templates._key_of(line) for line in normalize(text).split("\n")]


def run_corpus(name: str, pages: list[bytes], repeat: int, clock: Callable[[], int], tmp: Path) -> None:
    native = Fingerprinter()
    python = Fingerprinter(native=False)
    if not native.native or native.html_walk != "native HTML walk" or text_native.native_flat_text() is None:
        sys.exit(f"the native core does not run here: {native!r}, {native.html_walk}")
    core = native._native_core()
    hmm = native._extractor.hmm
    docs = [ex.extract(html) for html in pages]
    htmls = [ex.prepare(ex.decode_html(html)[0]) for html in pages]
    roots = [ex.parse_prepared(h) for h in htmls]
    index = SimhashIndex.open(tmp / name.split()[0], durable=False)
    tracker = ChangeTracker(index, policy=FreshnessPolicy())
    now = 1.7e9
    prints = [native.fingerprint_page(html) for html in pages]
    for day in range(3):  # the first fetch and two refetches: records with a schedule and history
        for i, p in enumerate(prints):
            tracker.observe(f"https://news.example/{i}", PageFingerprint.of(p.fp, sketch=p.sketch), now + day * DAY)
    now += 2 * DAY
    t = Timer(clock)
    flat = text_native.native_flat_text()
    # The decision: every page refetched in turn (a day after the fetch before, unchanged); a run's
    # time is its mean per page.
    observe: dict[str, list[float]] = {"python": [], "native": []}
    for _ in range(2 * repeat):
        on = True
        now += DAY
        start = clock()
        for i, p in enumerate(prints):
            tracker.observe(f"https://news.example/{i}", PageFingerprint.of(p.fp, sketch=p.sketch), now)
        observe["native" if on else "python"].append((clock() - start) / len(prints) / 1000)
    for _ in range(repeat):
        for i, html in enumerate(pages):
            doc, root, p, key = docs[i], roots[i], prints[i], f"https://news.example/{i}"
            t.time("fingerprint_page", "native", i, native.fingerprint_page, html)
            raw = index.get_record(key)
            assert raw is not None
            state = schedule_state(raw)
            assert state is not None
            t.time("Core.page", "python", i, python._python_page, doc)
            t.time("Core.page", "native", i, native._native_page, doc)
            for path, f in (("python", python), ("native", native)):
                on = f is native
                t.time("HtmlWalker.walk", path, i, walk, root, on)
                t.time("Core.fingerprint", path, i, partial(f._fingerprint, doc.text, doc.title, native=on))
                t.time("Core.tokens", path, i, f._extractor.tokens, doc.visible)
                t.time("FlatText.document", path, i, partial(ex._flat_document, htmls[i], None, "large", native=on))
            t.time(
                "Core.count_features", "python", i, lambda text: len(python._extractor.extract(text).weights), doc.text
            )
            t.time("Core.count_features", "native", i, core.count_features, normalize(doc.text), hmm)
            t.time("FlatText.line_keys", "python", i, python_line_keys, doc.text)
            t.time("FlatText.line_keys", "native", i, lambda text: flat.line_keys(normalize(text)), doc.text)
    index.close()
    n = len(pages)
    fingerprint = statistics.median(t.per_page("fingerprint_page", "native", n))
    page = fingerprint + statistics.median(observe["native"])
    print(f"\n== {name}: {n} pages, {statistics.median(len(h) for h in pages) / 1000:.0f} kB median")
    print(
        f"page (fingerprint_page + observe, native on): {page:,.0f} us (fingerprint_page {fingerprint:,.0f} "
        f"median, observe {statistics.median(observe['native']):,.0f} mean)"
    )
    print(
        f"{'native function':32} {'python us':>10} {'native us':>10} {'saved us':>9} {'x':>6} {'of page':>8}  runs on"
    )
    for part, runs_on in PARTS:
        if part == "record codec in observe":
            py, nat = observe["python"], observe["native"]
        else:
            py, nat = t.per_page(part, "python", n), t.per_page(part, "native", n)
        if not py:
            print(f"{part:32} (not in this build of the native core)")
            continue
        saved_us = statistics.median(py) - statistics.median(nat)
        print(
            f"{part:32} {statistics.median(py):10,.1f} {statistics.median(nat):10,.1f} {saved_us:9,.1f} "
            f"{statistics.median(py) / statistics.median(nat):6.1f} {saved_us / page:8.2%}  {runs_on}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each part per page (the median is kept)")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="cpu",
        help="this thread's CPU time (default: other processes on a shared machine do not count) or the wall clock",
    )
    args = parser.parse_args()
    clock = time.thread_time_ns if args.clock == "cpu" else time.perf_counter_ns
    with tempfile.TemporaryDirectory(prefix="bench-native-parts-") as tmp:
        for name, pages in load_pages().items():
            run_corpus(name, pages, args.repeat, clock, Path(tmp))


if __name__ == "__main__":
    main()
