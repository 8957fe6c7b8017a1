"""Benchmark: does rjieba give jieba's tokens, and how much faster is it? One process, real Chinese text.

Run: ``.venv/bin/python benchmarks/speed/bench_rjieba.py [--repeat N] [--limit N]`` (about 5 minutes)

Corpus (``shared/data`` beside the repository): ``zh-text`` (CLUECorpusSmall sample lines,
UD GSDSimp sentences, the yanyiwu news article), ``zh-web-cee/cleaned`` (69 hand-cleaned pages)
and the Chinese texts of ``revisions/pairs.jsonl.gz`` (distinct versions).

1. Whole documents: ``jieba.lcut(doc, HMM=h)`` vs ``rjieba.Jieba().cut(doc, h)`` for h in
   (True, False), also against the other HMM value to find which call matches. Share of documents
   with identical token sequences, and how the first difference looks.
2. Our tokenizer (``text.tokenizers.get_tokenizer``): jieba (our exact re-implementation of jieba's
   precise mode on Han runs) vs rjieba on the same normalised text. This is what decides whether
   ``tokenizer="rjieba"`` may share jieba's identity (identical fingerprints).
3. Speed: median over passes of the whole corpus, jieba.lcut vs rjieba.cut, our tokenize with
   either backend, and ``Fingerprinter.fingerprint_text`` end to end with either; ratios in the
   same process.
"""

from __future__ import annotations

import argparse
import logging
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the corpus loader: tests/helpers/data.py
from helpers.data import load_corpus

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, clear_caches
from scrapy_simhash.text.features import normalize
from scrapy_simhash.text.tokenizers import get_tokenizer


def first_diff(a: list[str], b: list[str]) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"jieba {a[max(0, i - 2) : i + 4]} | rjieba {b[max(0, i - 2) : i + 4]}"


def classify(a: list[str], b: list[str]) -> str:
    """Rough kind of the first difference: Han segmentation or non-Han (space, Latin, digits)."""
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    window = "".join(a[i : i + 3]) + "".join(b[i : i + 3])
    if any("\u4e00" <= ch <= "\u9fd5" for ch in window):
        return "han"
    if window.strip() == "" or any(ch.isspace() for ch in window):
        return "whitespace"
    return "latin/digits/punct"


def _safe(fp: Fingerprinter):
    def run(text: str) -> int | None:
        try:
            return fp.fingerprint_text(text)
        except EmptyTextError:
            return None

    return run


def timed(func, docs: list[str], repeat: int, before=None) -> float:
    runs = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        for d in docs:
            func(d)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--limit",
        type=int,
        default=300,
        help="documents per source (default 300; 0 = all)",
    )
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--sections", default="123", help="which parts to run, e.g. 2 (default 123)")
    args = ap.parse_args()
    import jieba
    import rjieba

    logging.getLogger("jieba").setLevel(logging.WARNING)  # jieba sets DEBUG at import
    jieba.initialize()
    rj = rjieba.Jieba()
    corpus = load_corpus(args.limit)
    total_docs = sum(map(len, corpus.values()))
    total_chars = sum(len(d) for docs in corpus.values() for d in docs)
    print(
        f"corpus: {total_docs} documents, {total_chars / 1e6:.2f} M chars: "
        + ", ".join(f"{k} {len(v)}" for k, v in corpus.items())
    )

    if "1" in args.sections:
        whole_documents(corpus, jieba, rj, args.examples)
    verdict = our_tokenizer(corpus, jieba, args.examples) if "2" in args.sections else None
    if "3" in args.sections:
        speed(corpus, jieba, rj, args.repeat, total_chars)
    if verdict is not None:
        print(
            "\nverdict: "
            + (
                "rjieba gives our jieba tokens on every document: tokenizer='rjieba' may share jieba's identity"
                if verdict
                else "rjieba differs from jieba on some documents: tokenizer='rjieba' keeps its own identity"
            )
        )


def whole_documents(corpus, jieba, rj, n_examples: int) -> None:
    print("\n1. whole documents: jieba.lcut(doc, HMM=h) vs rjieba.Jieba().cut(doc, hmm), identical share")
    docs_all = [d for v in corpus.values() for d in v]
    jt = {h: [jieba.lcut(d, HMM=h) for d in docs_all] for h in (True, False)}
    rt = {h: [rj.cut(d, h) for d in docs_all] for h in (True, False)}
    for h in (True, False):
        for rh in (True, False):
            same = 0
            kinds: Counter[str] = Counter()
            examples: list[str] = []
            for a, b in zip(jt[h], rt[rh]):
                if a == b:
                    same += 1
                else:
                    kinds[classify(a, b)] += 1
                    if len(examples) < n_examples:
                        examples.append(first_diff(a, b))
            n = len(docs_all)
            print(
                f"  jieba HMM={h!s:5} vs rjieba hmm={rh!s:5}: {same}/{n} = {same / n:.1%} identical; "
                f"first difference: {dict(kinds)}"
            )
            if h == rh:
                for e in examples:
                    print(f"      e.g. {e}")


def our_tokenizer(corpus, jieba, n_examples: int) -> bool:
    print("\n2. our tokenizer (NFKC, lower case, numbers -> <num>, Han runs segmented): jieba vs rjieba")
    verdict = True
    for h in (True, False):
        tj, tr = get_tokenizer("jieba", h), get_tokenizer("rjieba", h)
        same = n = 0
        examples: list[str] = []
        per_set = {}
        for name, docs in corpus.items():
            s0 = same
            for d in docs:
                norm = normalize(d)
                a, b = tj.tokenize(norm), tr.tokenize(norm)
                n += 1
                if a == b:
                    same += 1
                elif len(examples) < n_examples:
                    examples.append(first_diff(a, b))
            per_set[name] = f"{same - s0}/{len(docs)}"
        verdict &= same == n
        print(
            f"  hmm={h!s:5}: {same}/{n} = {same / n:.2%} identical  ({', '.join(f'{k} {v}' for k, v in per_set.items())})"
        )
        for e in examples:
            print(f"      e.g. {e}")
        # our jieba re-implementation vs jieba itself, on the Han runs it is used for
        han = re.compile("[\u4e00-\u9fd5]+")
        runs = [r for docs in corpus.values() for d in docs for r in han.findall(normalize(d))]
        mism = sum(list(tj.cut_han(r)) != jieba.lcut(r, HMM=h) for r in runs)
        print(f"  hmm={h!s:5}: our jieba cutter vs jieba.lcut on {len(runs)} Han runs: {mism} differ")
    return verdict


def speed(corpus, jieba, rj, repeat: int, total_chars: int) -> None:
    print(f"\n3. speed, median of {repeat} passes over the corpus ({total_chars / 1e6:.2f} M chars)")
    docs = [d for v in corpus.values() for d in v]
    norms = [normalize(d) for d in docs]
    for h in (True, False):
        t_j = timed(lambda d, h=h: jieba.lcut(d, HMM=h), docs, repeat)
        t_r = timed(lambda d, h=h: rj.cut(d, h), docs, repeat)
        tj, tr = get_tokenizer("jieba", h), get_tokenizer("rjieba", h)
        # our HMM cache is emptied before each pass: it only helps across documents
        t_oj = timed(tj.tokenize, norms, repeat, tj.clear_cache)
        t_or = timed(tr.tokenize, norms, repeat)
        print(
            f"  hmm={h!s:5}: jieba.lcut {t_j:6.2f} s ({total_chars / t_j / 1e6:.2f} M chars/s)  "
            f"rjieba.cut {t_r:6.2f} s  -> rjieba {t_j / t_r:5.1f}x faster"
        )
        print(
            f"              ours/jieba {t_oj:6.2f} s (vs jieba.lcut {t_j / t_oj:4.2f}x)  ours/rjieba {t_or:6.2f} s  "
            f"-> ours/rjieba {t_oj / t_or:5.1f}x faster than ours/jieba"
        )
        # end to end: text -> fingerprint (default options but this HMM flag)
        fj = Fingerprinter(hmm=h)
        fr = Fingerprinter(hmm=h, tokenizer="rjieba")
        t_fj = timed(_safe(fj), docs, repeat, clear_caches)
        t_fr = timed(_safe(fr), docs, repeat, clear_caches)
        same = sum(_safe(fj)(d) == _safe(fr)(d) for d in docs)
        print(
            f"              Fingerprinter.fingerprint_text: jieba {t_fj:6.2f} s  rjieba {t_fr:6.2f} s  "
            f"-> {t_fj / t_fr:4.1f}x end to end; identical fingerprints {same}/{len(docs)}"
        )


if __name__ == "__main__":
    main()
