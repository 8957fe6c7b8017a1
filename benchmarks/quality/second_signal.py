"""Offline measurement for issue 7: what a second, larger signature next to the 64-bit SimHash buys.

Run ``nice -n 10 .venv/bin/python benchmarks/quality/second_signal.py`` (``--quick`` for a subset).
Pairwise, no product change: for every document of the quality pairs (``build_pairs.build``) it
computes our 64-bit fingerprint (defaults) and a MinHash sketch (``--perm`` 32-bit minima of word
``w``-shingles of the fingerprinted text: title + main content, normalised tokens, numbers as one
placeholder), then prints, per decision rule, precision, recall and FPR on every category, the
revisions' bars (recall on Jaccard >= 0.95, Spearman of the distance with 1 - Jaccard), bytes per
record and the sketch's cost per page.

Rules: ``sim<=3`` (today's); ``sim<=3 or (sim<=K and J>=T)`` (a candidate beyond k = 3, found by a
second index, verified by the sketch's estimated Jaccard ``J`` AND a looser SimHash distance
``K``); the same with the containment ``C = |A & B| / min(|A|, |B|)`` estimated from ``J`` and the
two shingle counts. For each rule the share of the pairs it accepts beyond k = 3 that a banded
sketch index (``--bands`` x ``--rows``) would find at all is printed too (1 - (1 - J^r)^b).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import build_pairs as bp
from evaluate import spearman

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.text.extract import extract

_MASK32 = np.uint64(0xFFFFFFFF)


def _params(n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 2**63, size=n, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    return a, b


def shingle_hashes(tokens: list[str], w: int) -> np.ndarray:
    """Distinct 64-bit hashes (blake2b) of the ``w``-shingles of ``tokens``."""
    import hashlib

    if len(tokens) < w:
        grams = ["\x1f".join(tokens)] if tokens else []
    else:
        grams = ["\x1f".join(tokens[i : i + w]) for i in range(len(tokens) - w + 1)]
    hs = {
        int.from_bytes(hashlib.blake2b(g.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
        for g in grams
    }
    return np.fromiter(hs, dtype=np.uint64, count=len(hs))


def minhash(hs: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``len(a)`` 32-bit minima of (a*h + b) >> 32 over the shingle hashes ``hs``."""
    if hs.size == 0:
        return np.full(a.size, 0xFFFFFFFF, dtype=np.uint32)
    out = np.empty(a.size, dtype=np.uint32)
    for start in range(0, a.size, 32):
        aa, bb = a[start : start + 32, None], b[start : start + 32, None]
        with np.errstate(over="ignore"):
            v = (aa * hs[None, :] + bb) >> np.uint64(32)
        out[start : start + 32] = v.min(axis=1).astype(np.uint32)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--perm", type=int, default=128, help="minhash values per sketch (4 bytes each)")
    ap.add_argument("--shingle", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--bands", type=int, default=32)
    ap.add_argument("--rows", type=int, default=4)
    args = ap.parse_args(argv)

    ps = bp.build(quick=args.quick)
    fper = Fingerprinter()
    ex = fper._extractor
    a, b = _params(args.perm)
    fps: dict[str, int | None] = {}
    sk: dict[tuple[str, int], tuple[np.ndarray, int, frozenset[int]]] = {}
    cost = dict.fromkeys(args.shingle, 0.0)
    t0 = time.perf_counter()
    for i, (key, doc) in enumerate(ps.docs.items()):
        try:
            if doc.kind == "html":
                d = extract(doc.content, time_budget=None)
                text, title = d.text, d.title
            else:
                text, title = doc.content, doc.title  # type: ignore[assignment]
            fps[key] = fper.fingerprint_text(text, title)
        except EmptyTextError:
            fps[key] = None
            text, title = "", ""
        full = f"{title}\n{text}" if title else text
        toks = [t for t in ex.tokens(full[:500_000]) if t.strip() and any(c.isalnum() for c in t)]
        for w in args.shingle:
            t1 = time.perf_counter()
            hs = shingle_hashes(toks, w)
            mh = minhash(hs, a, b)
            cost[w] += time.perf_counter() - t1
            sk[(key, w)] = (mh, int(hs.size), frozenset(hs.tolist()))
        if i % 2000 == 0:
            print(f"  {i}/{len(ps.docs)} docs, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    n = len(ps.docs)
    print(f"{n} documents, {len(ps.pairs)} pairs; sketch cost per document (shingling + {args.perm} minima):")
    for w in args.shingle:
        print(f"  w={w}: {1000 * cost[w] / n:.2f} ms")
    print(f"bytes per sketch: {4 * args.perm} (+4 for the shingle count)\n")

    cats = sorted({p.category for p in ps.pairs})
    for w in args.shingle:
        rows = []
        for p in ps.pairs:
            fa, fb = fps[p.a], fps[p.b]
            d = 99 if fa is None or fb is None else (fa ^ fb).bit_count()
            (ma, na, sa), (mb, nb, sb) = sk[(p.a, w)], sk[(p.b, w)]
            j_est = float(np.mean(ma == mb)) if na and nb else 0.0
            u = len(sa | sb)
            j_true = len(sa & sb) / u if u else 0.0
            inter = j_est * (na + nb) / (1 + j_est)
            c_est = inter / min(na, nb) if min(na, nb) else 0.0
            rows.append((p, d, j_est, j_true, min(c_est, 1.0)))
        print(f"## word {w}-shingles\n")
        # exact vs estimated Jaccard
        err = [abs(r[2] - r[3]) for r in rows]
        print(f"|J_est - J| median {np.median(err):.3f}, p99 {np.percentile(err, 99):.3f}\n")
        rules = [("sim<=3", lambda d, j, c: d <= 3)]
        for K in (6, 8, 12, 16):
            for T in (0.6, 0.7, 0.8, 0.85, 0.9):
                rules.append((f"sim<=3 | sim<={K} & J>={T}", lambda d, j, c, K=K, T=T: d <= 3 or (d <= K and j >= T)))
        for K in (8, 12, 16):
            for T in (0.7, 0.8, 0.9):
                rules.append((f"sim<=3 | sim<={K} & C>={T}", lambda d, j, c, K=K, T=T: d <= 3 or (d <= K and c >= T)))
        print(
            "| rule | P | R | short_edit | real_swap | FPR same_template | FP same_topic | FP short_pages | rev P / R(J>=0.95) | rev FP(J<0.5) | LSH find (beyond 3) |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, rule in rules:
            acc = {c: [0, 0] for c in cats}
            tp = fp_ = fn = 0
            rtp = rfp = rhi = rhit = rlow = 0
            found, beyond = 0.0, 0
            for p, d, j, _jt, c in rows:
                yes = rule(d, j, c)
                acc[p.category][0] += yes
                acc[p.category][1] += 1
                if yes and d > 3:
                    beyond += 1
                    found += 1 - (1 - j**args.rows) ** args.bands
                if p.group in ("near", "neg"):
                    tp += yes and p.label == 1
                    fp_ += yes and p.label == 0
                    fn += (not yes) and p.label == 1
                elif p.group == "rev":
                    j5 = p.meta["jaccard5"]
                    rtp += yes and p.label == 1
                    rfp += yes and p.label == 0
                    if j5 >= 0.95:
                        rhi += 1
                        rhit += yes
                    if j5 < 0.5:
                        rlow += yes
            prec = tp / (tp + fp_) if tp + fp_ else 1.0
            rec = tp / (tp + fn) if tp + fn else 1.0
            rp = rtp / (rtp + rfp) if rtp + rfp else 1.0

            def r_(c: str, acc: dict[str, list[int]] = acc) -> str:
                x = acc.get(c)
                return f"{x[0] / x[1]:.3f}" if x and x[1] else "-"

            st = acc.get("same_template", [0, 1])
            print(
                f"| {name} | {prec:.4f} | {rec:.3f} | {r_('short_edit')} | {r_('real_swap')} | "
                f"{100 * st[0] / max(st[1], 1):.3f}% | {acc.get('same_topic', [0])[0]} | {acc.get('short_pages', [0])[0]} | "
                f"{rp:.3f} / {rhit / max(rhi, 1):.3f} | {rlow} | {found / beyond if beyond else 1:.3f} of {beyond} |"
            )
        # change distance: rank correlation on the revisions
        rev = [(d, j, jt, p.meta["jaccard5"]) for p, d, j, jt, _c in rows if p.group == "rev"]
        if rev:
            truth = [1 - r[3] for r in rev]
            print(
                f"\nrevisions Spearman with 1 - jaccard5: simhash distance {spearman([r[0] for r in rev], truth):.3f}, "
                f"1 - J_est {spearman([1 - r[1] for r in rev], truth):.3f}, 1 - J exact {spearman([1 - r[2] for r in rev], truth):.3f}, "
                f"sim + 64*(1-J_est) {spearman([r[0] + 64 * (1 - r[1]) for r in rev], truth):.3f}"
            )
        ch = [(p, d, j) for p, d, j, _jt, _c in rows if p.group == "change"]
        if ch:
            for T in (0.6, 0.7, 0.8, 0.9):
                ok = sum(((d > 3) or (j < T)) == bool(p.label) for p, d, j in ch)
                noise_changed = sum(((d > 3) or (j < T)) for p, d, j in ch if not p.label)
                print(
                    f"change verdict 'sim>3 or J<{T}': accuracy {ok / len(ch):.3f}, noise-only pairs changed {noise_changed}"
                )
        print()


if __name__ == "__main__":
    main()
