"""Benchmark: main-content extraction quality (token F1) and speed, ours vs html-text and trafilatura.

Run: ``.venv/bin/python benchmarks/speed/bench_extract.py [--repeat N] [--limit N] [--dataset NAME]``

Data sets (``shared/data`` beside the repository, read-only):

- ``scrapinghub-aeb``: 181 news/blog pages (``html/*.html.gz``) with a human-checked
  ``articleBody`` (``ground-truth.json.gz``), almost all English.
- ``zh-web-cee``: 69 Chinese pages, mostly GB2312/GBK from ~2005 (``original/*.html``) with the
  hand-copied main text (``cleaned/*.txt``).

Quality: bag-of-tokens precision / recall / F1 of the extracted text against the ground truth,
with multiset counts, averaged over pages (an empty extraction scores 0). Tokens: every Han
character is one token; other runs of letters/digits are lower-cased words; punctuation and
whitespace are ignored. The same tokenizer is used for both data sets.

Speed: every extractor gets the same decoded ``str`` (decoded once by
:func:`scrapy_simhash.text.extract.decode_html`, which is timed separately); the time per page is the
median over ``--repeat`` runs, and the table shows the median over pages, pages per second from
it, the mean, and the ratio to trafilatura measured in the same process. Timings on a shared
2-core machine are noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import re
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))

from scrapy_simhash.text.extract import decode_html, extract

_TOKEN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def tokens(text: str) -> Counter[str]:
    """Han characters one by one, other letter/digit runs as lower-cased words."""
    return Counter(_TOKEN_RE.findall(text.lower()))


def prf(extracted: str, truth: str) -> tuple[float, float, float]:
    got, want = tokens(extracted), tokens(truth)
    common = sum((got & want).values())
    if not common:
        return 0.0, 0.0, 0.0
    p = common / sum(got.values())
    r = common / sum(want.values())
    return p, r, 2 * p * r / (p + r)


def load_aeb(limit: int | None) -> list[tuple[str, bytes, str]]:
    root = DATA / "scrapinghub-aeb"
    with gzip.open(root / "ground-truth.json.gz", "rt", encoding="utf-8") as f:
        truth = json.load(f)
    pages = []
    for path in sorted((root / "html").glob("*.html.gz")):
        key = path.name.split(".")[0]
        if key in truth:
            pages.append((key, gzip.decompress(path.read_bytes()), truth[key]["articleBody"]))
    return pages[:limit]


def load_zh(limit: int | None) -> list[tuple[str, bytes, str]]:
    root = DATA / "zh-web-cee"
    pages = []
    for path in sorted((root / "original").glob("*.html")):
        truth = root / "cleaned" / (path.stem + ".txt")
        if truth.exists():
            pages.append((path.stem, path.read_bytes(), truth.read_text(encoding="utf-8")))
    return pages[:limit]


def _ours_main(html: str) -> str:
    return extract(html).text


def _ours_all(html: str) -> str:
    return extract(html, main_content=False).text


def extractors() -> dict[str, Callable[[str], str]]:
    out: dict[str, Callable[[str], str]] = {"ours (main)": _ours_main, "ours (all)": _ours_all}
    try:
        import html_text

        out["html-text"] = html_text.extract_text
    except ImportError:
        print("html-text not installed: skipped")
    try:
        import trafilatura

        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        out["trafilatura"] = lambda html: trafilatura.extract(html) or ""
    except ImportError:
        print("trafilatura not installed: skipped")
    return out


def run(name: str, pages: list[tuple[str, bytes, str]], repeat: int, verbose: bool) -> None:
    decoded = []
    decode_times = []
    for _key, body, _truth in pages:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            text, _enc = decode_html(body)
            times.append(time.perf_counter() - t0)
        decode_times.append(statistics.median(times))
        decoded.append(text)
    kb = statistics.mean(len(b) for _k, b, _t in pages) / 1024
    print(
        f"\n## {name}: {len(pages)} pages, mean {kb:.0f} KB; decode_html median "
        f"{statistics.median(decode_times) * 1e3:.2f} ms/page"
    )
    rows = []
    per_page: dict[str, list[float]] = {}
    for ex_name, fn in extractors().items():
        f1s, ps, rs, times = [], [], [], []
        for (_key, _body, truth), html in zip(pages, decoded):
            reps = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                text = fn(html)
                reps.append(time.perf_counter() - t0)
            times.append(statistics.median(reps))
            p, r, f1 = prf(text, truth)
            ps.append(p)
            rs.append(r)
            f1s.append(f1)
        per_page[ex_name] = f1s
        rows.append(
            (
                ex_name,
                statistics.mean(ps),
                statistics.mean(rs),
                statistics.mean(f1s),
                statistics.median(f1s),
                statistics.median(times),
                statistics.mean(times),
            )
        )
    ref = next((r for r in rows if r[0] == "trafilatura"), rows[0])
    print(
        f"| extractor | P | R | F1 mean | F1 median | ms/page (median) | pages/s | ms/page (mean) | time vs {ref[0]} |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for ex_name, p, r, f1, f1_med, t_med, t_mean in rows:
        print(
            f"| {ex_name} | {p:.3f} | {r:.3f} | {f1:.3f} | {f1_med:.3f} | {t_med * 1e3:.2f} | "
            f"{1 / t_med:.0f} | {t_mean * 1e3:.2f} | {t_med / ref[5]:.2f}x |"
        )
    if verbose:
        names = list(per_page)
        print("\nper page F1: " + " ".join(names))
        for i, (key, _b, _t) in enumerate(pages):
            print(key[:12], " ".join(f"{per_page[n][i]:.2f}" for n in names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per page (median)")
    parser.add_argument("--limit", type=int, default=None, help="first N pages of each set")
    parser.add_argument("--dataset", choices=["aeb", "zh", "all"], default="all")
    parser.add_argument("-v", "--verbose", action="store_true", help="per-page F1")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"data folder {DATA.resolve()} not found (expected shared/data beside the repo)")
    warnings.simplefilter("ignore")
    if args.dataset in ("aeb", "all"):
        run("scrapinghub-aeb", load_aeb(args.limit), args.repeat, args.verbose)
    if args.dataset in ("zh", "all"):
        run("zh-web-cee", load_zh(args.limit), args.repeat, args.verbose)


if __name__ == "__main__":
    main()
