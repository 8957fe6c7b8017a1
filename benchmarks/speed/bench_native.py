"""Benchmark: the native core vs the Python path vs the seed-004 pipeline, one process, real data.

Run: ``.venv/bin/python benchmarks/speed/bench_native.py [--repeat N] [--no-text] [--fuzz N] [--html-fuzz N] [--flat-fuzz N]`` (``./dev test`` or
``./dev bench`` builds the native core first; about 3 minutes with the defaults).

1. Text -> fingerprint, per document (median of ``--repeat`` interleaved passes, so that load from
   other processes hits all three alike): ``Fingerprinter()`` with the native core, the same on
   the Python path (``native=False``; rjieba segments when installed), and seed 004
   (``jieba.analyse.extract_tags(text, topK=200, withWeight=True)`` + ``simhash.Simhash``).
   Corpora: the hand-cleaned zh-web-cee texts, one side of every revision pair (zh and en), the
   main text that every page of shared/data extracts to. Median and p99 ms per document, MB/s
   (UTF-8 bytes over the summed medians), and the ratio Python / native of the medians.
2. HTML -> fingerprint end to end (``fingerprint_page``: decoding, lxml's parse, the walk over the
   tree, the decisions, features, the change sketch) on the zh-web-cee and scrapinghub-aeb pages
   and ``--site-pages`` pages of each real-site benchmark site under /usr/share/doc
   (``benchmarks/realsite/run.py``'s SITES, the same ones every run): native (the native core
   walks lxml's tree and computes the features) vs the Python path (``native=False``) vs seed
   004 (``html_text`` + the same). MB/s over the HTML bytes. Then where the native path's time
   goes on the real pages (medians per stage: lxml's parse is a floor no walk can lower), and the
   pathological pages of ``bench_pathological.py`` (250,000 ``<br>``, 50,000 paragraphs, a
   20,000-cell table), with lxml's parse of each alone.
3. ``--fuzz N`` (alone with ``--repeat 0``): N generated documents (seeded, mixed scripts, numbers, punctuation, line breaks
   between Han characters, emoji), native vs Python: how many tokens and fingerprints differ.
4. ``--html-fuzz N`` (alone with ``--repeat 0``): N generated hostile HTML documents (seeded:
   broken and unclosed tags, nesting past the walk's flattening depth, chrome/metadata classes,
   hidden elements, entities, comments, every kind of whitespace, full-width forms; as str or
   bytes in four encodings), native walk vs Python walk: how many differ in their blocks or in
   their documents (main content and all visible text).
5. ``--flat-fuzz N`` (alone with ``--repeat 0``): N generated hostile strings (:func:`random_flat`)
   through the regular-expression fallback (``_flat_text``, ``_TITLE_RE``, ``_unescape``),
   natively (``FlatText``) vs Python: how many differ in their title or text.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the hostile pages and the data's loaders: tests/helpers/

import contextlib
import importlib

from bench_fingerprint import time_interleaved
from helpers.data import load_pages
from helpers.native_fuzz import flat_fuzz, html_outcomes, random_html

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.text.extract import extract
from scrapy_simhash.text.features import FeatureExtractor

ex = importlib.import_module("scrapy_simhash.text.extract")  # the package exports the function too
nat = importlib.import_module("scrapy_simhash.text.native")

clock = time.perf_counter


def load_site_pages(per_site: int) -> dict[str, list[bytes]]:
    """``per_site`` pages of each real-site benchmark site installed under /usr/share/doc (every
    k-th of its sorted pages, so the same ones every run), as one corpus."""
    sys.path.insert(0, str(REPO / "benchmarks" / "realsite"))
    import re

    from run import SITES

    out: list[bytes] = []
    for site in SITES:
        files = sorted(Path(site.root).rglob("*.html"))
        if site.include:
            files = [f for f in files if re.search(site.include, f.name)]
        files = [f for f in files if f.is_file()]
        step = max(1, len(files) // per_site) if per_site else 0
        out += [f.read_bytes() for f in files[::step][:per_site]] if step else []
    return {"real-site pages (/usr/share/doc)": out} if out else {}


def load_texts(pages: dict[str, list[bytes]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {
        "zh-web-cee texts": [
            p.read_text(encoding="utf-8") for p in sorted((DATA / "zh-web-cee" / "cleaned").glob("*.txt"))
        ]
    }
    by_lang: dict[str, list[str]] = {"zh": [], "en": []}
    with gzip.open(DATA / "revisions" / "pairs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            by_lang[rec["lang"]].append(rec["text_a"])
    out["revisions zh"] = by_lang["zh"]
    out["revisions en"] = by_lang["en"]
    out["page main texts"] = [extract(p).text for ps in pages.values() for p in ps]
    return out


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


def report(name: str, labels: list[str], timings: list[list[float]], nbytes: int) -> None:
    print(f"\n{name}: {len(timings[0])} documents, {nbytes / 1e6:.1f} MB")
    print(f"  {'':<22}{'median ms':>10}{'p99 ms':>10}{'MB/s':>9}{'x native':>10}")
    native_median = statistics.median(timings[0])
    for label, ts in zip(labels, timings):
        med = statistics.median(ts)
        mbs = nbytes / sum(ts) / 1e6
        print(f"  {label:<22}{med * 1e3:>10.3f}{p99(ts) * 1e3:>10.2f}{mbs:>9.1f}{med / native_median:>10.1f}")


def page_fp(f: Fingerprinter, body: bytes) -> int | None:
    try:
        return f.fingerprint_page(body).fp
    except EmptyTextError:
        return None


def fingerprint_or_none(f: Fingerprinter, text: str) -> int | None:
    try:
        return f.fingerprint_text(text)
    except EmptyTextError:
        return None


_PIECES = [
    *(
        "中文 分词 的 天安门 我们 研究生命 起源 结婚的和尚未结婚的 ， 。 ？ hello Don't it\u2019s ' \u2019 abc中文 ÉCOLE "
        "straße İstanbul ǅ Ελληνικά русский عربى हिन्दी ไทย 日本語のテキスト 한국어 ١٢٣ ४२ 3.14 1,000 12:30 "
        "2024-01-02 a/b x² ½ Ⅻ ① ｆｕｌｌ １２３ 😀 👍🏽 \u200b \u00a0 \u3000 _ - . 𠀀 \u9fd5 \u9fd6 ﬁ Ǆ ß ﾊﾝｶｸ ⁄ ™ "
        "u64 i128 f32 sha256 x86_64 v1.2.3 python3.11 3rd 12px 1.2k 0x1f a'1 ٣a u٣ é2 ｕ６４ 中3 3中 a1'b2 9'"
    ).split(" "),
    " ", "\n", " \n ", "\r\n", "\t",
]


def random_document(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randrange(0, 400)):
        if rng.random() < 0.1:
            parts.append(
                "".join(chr(rng.choice((rng.randrange(32, 0x3000), rng.randrange(0x3000, 0x10000)))) for _ in range(3))
            )
        else:
            parts.append(rng.choice(_PIECES))
    return "".join(c for c in "".join(parts) if not 0xD800 <= ord(c) < 0xE000)


def html_fuzz(n: int) -> None:
    rng = random.Random(12)
    diffs = 0
    t = clock()
    for i in range(n):
        page = random_html(rng)
        if html_outcomes(page, True) != html_outcomes(page, False):
            diffs += 1
            print(f"  document {i} differs", flush=True)
    print(
        f"\nhtml fuzz: {n} generated hostile HTML documents in {clock() - t:.0f} s: {diffs} with other blocks or documents"
    )


def fuzz(n: int) -> None:
    rng = random.Random(12)
    native_ex, python_ex = FeatureExtractor(native=True), FeatureExtractor(native=False)
    pairs = [
        (Fingerprinter(native=True, **o), Fingerprinter(native=False, **o))  # type: ignore[arg-type]
        for o in ({}, {"min_features": 0, "bits": 128, "feature_hash": "xxh3"})
    ]
    token_diffs = fp_diffs = 0
    t = clock()
    for _ in range(n):
        doc = random_document(rng)
        token_diffs += native_ex.tokens(doc) != python_ex.tokens(doc)
        fp_diffs += any(fingerprint_or_none(a, doc) != fingerprint_or_none(b, doc) for a, b in pairs)
    print(
        f"\nfuzz: {n} generated documents in {clock() - t:.0f} s: {token_diffs} with other tokens, {fp_diffs} with other fingerprints"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed passes (0: none, e.g. with --fuzz)")
    ap.add_argument("--fuzz", type=int, default=0, metavar="N")
    ap.add_argument("--html-fuzz", type=int, default=0, metavar="N")
    ap.add_argument("--flat-fuzz", type=int, default=0, metavar="N")
    ap.add_argument("--no-text", action="store_true", help="skip section 1 (text -> fingerprint)")
    ap.add_argument("--site-pages", type=int, default=30, metavar="N", help="pages per real site (0: none)")
    args = ap.parse_args()
    logging.getLogger("jieba").setLevel(logging.WARNING)

    import html_text
    import jieba
    import jieba.analyse
    import simhash

    native, python = Fingerprinter(native=True), Fingerprinter(native=False)
    if not native.native:
        sys.exit("the native core is not built: ./dev test (or cd native && maturin develop --release)")
    print(
        f"Python path tokenizer: {python.tokenizer_backend}; native core: scrapy_simhash_native, {native.html_walk}; "
        f"lxml {'.'.join(map(str, ex.etree.LXML_VERSION))}, libxml2 {'.'.join(map(str, ex.etree.LIBXML_VERSION))}"
    )
    jieba.initialize()

    def seed004(text: str) -> int:
        return simhash.Simhash(jieba.analyse.extract_tags(text, topK=200, withWeight=True)).value

    if not args.repeat:
        if args.fuzz:
            fuzz(args.fuzz)
        if args.html_fuzz:
            html_fuzz(args.html_fuzz)
        if args.flat_fuzz:
            t = clock()
            diffs = flat_fuzz(args.flat_fuzz)
            print(
                f"\nflat fuzz: {args.flat_fuzz} generated hostile strings in {clock() - t:.0f} s: {diffs} with another title or text"
            )
        return
    pages = load_pages()
    texts = load_texts(pages)
    labels = ["native", "Python path", "seed 004 (tfidf+simhash)"]
    funcs = [lambda t: fingerprint_or_none(native, t), lambda t: fingerprint_or_none(python, t), seed004]
    for f in funcs:  # load dictionaries and tables
        f("预热 warm-up text")
    print("\n== text -> fingerprint")
    for name, docs in texts.items() if not args.no_text else ():
        docs = [d for d in docs if d.strip()]
        report(name, labels, time_interleaved(funcs, docs, args.repeat), sum(len(d.encode()) for d in docs))

    print("\n== HTML -> fingerprint (lxml's parse; the walk and the features natively or not)")

    def seed004_page(body: bytes) -> int:
        return seed004(html_text.extract_text(body.decode("utf-8", "replace")))

    page_funcs = [lambda b: page_fp(native, b), lambda b: page_fp(python, b), seed004_page]
    pages.update(load_site_pages(args.site_pages))
    for name, bodies in pages.items():
        report(
            name,
            ["native", "Python path", "seed 004 (html-text)"],
            time_interleaved(page_funcs, bodies, args.repeat),
            sum(map(len, bodies)),
        )
        assert all(page_fp(native, b) == page_fp(python, b) for b in bodies), "native and Python fingerprints differ"
    real = [b for name, bodies in pages.items() if "zh-web-cee" not in name for b in bodies]
    stages(native, real)
    pathological(native, python, args.repeat)
    if args.fuzz:
        fuzz(args.fuzz)
    if args.html_fuzz:
        html_fuzz(args.html_fuzz)


def stages(native: Fingerprinter, bodies: list[bytes]) -> None:
    """Median ms per stage of the native path on ``bodies`` (each stage timed alone)."""
    times: dict[str, list[float]] = {}

    def timed(name: str, fn, *args):  # type: ignore[no-untyped-def]
        t = clock()
        out = fn(*args)
        times.setdefault(name, []).append(clock() - t)
        return out

    for body in bodies:
        html = ex.prepare(timed("decode", ex.decode_html, body)[0])
        try:
            root = timed("lxml parse", ex.parse_prepared, html)
        except ex._TooDeep:
            continue
        if root is None:
            continue
        timed("title, native", ex.title_and_heading, root)
        timed("title, Python", ex.title_and_heading, root, False)
        walker = ex.Walker()
        timed("walk, native", nat.walk_native, walker, root)
        timed("walk, Python", ex.Walker().walk, root, 0, False, 0)
        timed("decisions", ex._choose, walker)
        timed("extract, native", extract, body)
        timed("fingerprint_page, native", page_fp, native, body)
    print(f"\nwhere the native path's time goes: {len(bodies)} real pages (scrapinghub-aeb, real sites), median ms")
    for name, ts in times.items():
        print(f"  {name:<28}{statistics.median(ts) * 1e3:>8.3f}")


def pathological(native: Fingerprinter, python: Fingerprinter, repeat: int) -> None:
    """bench_pathological.py's built pages: fingerprint_page native and Python, lxml's parse alone."""
    from helpers.native_fuzz import pathological_pages as built

    print("\npathological pages, median ms of", max(repeat, 1), "runs")
    print(f"  {'':<14}{'native':>10}{'Python':>10}{'lxml parse':>12}  method")
    for name, page in built(0).items():
        if name == "script-10mb":
            continue
        runs: list[list[float]] = [[], [], []]
        for _ in range(max(repeat, 1)):
            for k, f in enumerate((native, python)):
                t = clock()
                f.fingerprint_page(page)
                runs[k].append(clock() - t)
            html = ex.prepare(page if isinstance(page, str) else page.decode())
            t = clock()
            with contextlib.suppress(ex._TooDeep):
                ex.parse_prepared(html)
            runs[2].append(clock() - t)
        med = [statistics.median(r) * 1e3 for r in runs]
        print(f"  {name:<14}{med[0]:>10.1f}{med[1]:>10.1f}{med[2]:>12.1f}  {native.fingerprint_page(page).method}")


if __name__ == "__main__":
    main()
