"""Benchmark: the native core vs the Python path vs the seed-004 pipeline, one process, real data.

Run: ``.venv/bin/python benchmarks/bench_native.py [--repeat N] [--fuzz N]`` (``./dev test`` or
``./dev bench`` builds the native core first; about 3 minutes with the defaults).

1. Text -> fingerprint, per document (median of ``--repeat`` interleaved passes, so that load from
   other processes hits all three alike): ``Fingerprinter()`` with the native core, the same on
   the Python path (``native=False``; rjieba segments when installed), and seed 004
   (``jieba.analyse.extract_tags(text, topK=200, withWeight=True)`` + ``simhash.Simhash``).
   Corpora: the hand-cleaned zh-web-cee texts, one side of every revision pair (zh and en), the
   main text that every page of shared/data extracts to. Median and p99 ms per document, MB/s
   (UTF-8 bytes over the summed medians), and the ratio Python / native of the medians.
2. HTML -> fingerprint end to end (``fingerprint_page``: decode and extraction stay Python, lxml)
   on the zh-web-cee and scrapinghub-aeb pages, native vs Python; seed 004 as ``html_text`` +
   the same. MB/s over the HTML bytes.
3. ``--fuzz N`` (alone with ``--repeat 0``): N generated documents (seeded, mixed scripts, numbers, punctuation, line breaks
   between Han characters, emoji), native vs Python: how many tokens and fingerprints differ.
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

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))

from bench_fingerprint import time_interleaved

from scrapy_simhash.extract import extract
from scrapy_simhash.features import FeatureExtractor
from scrapy_simhash.fingerprint import EmptyTextError, Fingerprinter

clock = time.perf_counter


def load_pages() -> dict[str, list[bytes]]:
    zh = sorted((DATA / "zh-web-cee" / "original").glob("*.html"))
    en = sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))
    if not zh and not en:
        sys.exit(f"no data under {DATA.resolve()}")
    return {
        "zh-web-cee pages": [p.read_bytes() for p in zh],
        "scrapinghub-aeb pages": [gzip.decompress(p.read_bytes()) for p in en],
    }


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


def fingerprint_or_none(f: Fingerprinter, text: str) -> int | None:
    try:
        return f.fingerprint_text(text)
    except EmptyTextError:
        return None


_PIECES = (
    "中文 分词 的 天安门 我们 研究生命 起源 结婚的和尚未结婚的 ， 。 ？ hello Don't it\u2019s ' \u2019 abc中文 ÉCOLE "
    "straße İstanbul ǅ Ελληνικά русский عربى हिन्दी ไทย 日本語のテキスト 한국어 ١٢٣ ४२ 3.14 1,000 12:30 "
    "2024-01-02 a/b x² ½ Ⅻ ① ｆｕｌｌ １２３ 😀 👍🏽 \u200b \u00a0 \u3000 _ - . 𠀀 \u9fd5 \u9fd6 ﬁ Ǆ ß ﾊﾝｶｸ ⁄ ™"
).split(" ") + [" ", "\n", " \n ", "\r\n", "\t"]


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
    args = ap.parse_args()
    logging.getLogger("jieba").setLevel(logging.WARNING)

    import html_text
    import jieba
    import jieba.analyse
    import simhash

    native, python = Fingerprinter(native=True), Fingerprinter(native=False)
    if not native.native:
        sys.exit("the native core is not built: ./dev test (or cd native && maturin develop --release)")
    print(f"Python path tokenizer: {python.tokenizer_backend}; native core: scrapy_simhash_native")
    jieba.initialize()

    def seed004(text: str) -> int:
        return simhash.Simhash(jieba.analyse.extract_tags(text, topK=200, withWeight=True)).value

    if not args.repeat:
        fuzz(args.fuzz)
        return
    pages = load_pages()
    texts = load_texts(pages)
    labels = ["native", "Python path", "seed 004 (tfidf+simhash)"]
    funcs = [lambda t: fingerprint_or_none(native, t), lambda t: fingerprint_or_none(python, t), seed004]
    for f in funcs:  # load dictionaries and tables
        f("预热 warm-up text")
    print("\n== text -> fingerprint")
    for name, docs in texts.items():
        docs = [d for d in docs if d.strip()]
        report(name, labels, time_interleaved(funcs, docs, args.repeat), sum(len(d.encode()) for d in docs))

    print("\n== HTML -> fingerprint (extraction in Python on lxml; features natively or not)")

    def page_fp(f: Fingerprinter, body: bytes) -> int | None:
        try:
            return f.fingerprint_page(body).fp
        except EmptyTextError:
            return None

    def seed004_page(body: bytes) -> int:
        return seed004(html_text.extract_text(body.decode("utf-8", "replace")))

    page_funcs = [lambda b: page_fp(native, b), lambda b: page_fp(python, b), seed004_page]
    for name, bodies in pages.items():
        report(
            name,
            ["native", "Python path", "seed 004 (html-text)"],
            time_interleaved(page_funcs, bodies, args.repeat),
            sum(map(len, bodies)),
        )
        assert all(page_fp(native, b) == page_fp(python, b) for b in bodies), "native and Python fingerprints differ"
    if args.fuzz:
        fuzz(args.fuzz)


if __name__ == "__main__":
    main()
