"""Benchmark: ``scrapy-simhash dedup`` on a JSON lines corpus beside two peers, in one run.

Run: ``.venv/bin/python benchmarks/speed/bench_dedup.py [--lines 100000] [--workers 2]`` (about 5 minutes
on 2 cores, most of them the peers').

Corpus: real Chinese sentences of 8 to 100 characters from ``../shared/data/zh-text`` (the
CLUECorpusSmall sample and UD GSDSimp; benchmark only, never shipped), recombined into documents
of 3 to 6 sentences, one JSON object per line (``{"id", "text"}``). A tenth of the documents get 1 to 3 near copies with
the edits a scraped corpus shows (a character dropped, punctuation changed, a short phrase added
at either end, two sentences swapped); each document and its copies form a known group, and the
lines are shuffled. A correct run drops, from every group, all lines but the first.

Methods, each in a fresh process (its peak RSS is its own; the pool workers' peak is given apart):

- ``ours``: ``scrapy_simhash.commands.dedup.dedup`` (the ``dedup`` subcommand: defaults, 64 bits,
  k = 3, keep-adds 100), with ``--workers`` processes and with 1; and with ``--keep-adds 0``
  (resemblance alone), one process.
- ``simhash``: ``jieba.lcut`` + ``simhash.Simhash`` (64 bits) + ``simhash.SimhashIndex`` (k = 3):
  drop a line when ``get_near_dups`` finds a kept one, else ``add`` it.
- ``minhash``: ``jieba.lcut`` word sets, datasketch ``MinHash`` (128 permutations,
  ``update_batch``) + ``MinHashLSH`` (threshold 0.8): drop when ``query`` finds a kept one.

Printed: lines/s (wall clock), lines per CPU second (the process and its pool's workers: what
other jobs on a shared machine do not change), peak RSS, dropped lines, precision (dropped lines
whose matched line is of the same group) and recall (correct drops / lines that should go).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data" / "zh-text"
sys.path.insert(0, str(REPO))

_SENTENCE = re.compile(r"[^。！？!?；\n]+[。！？!?；]?")
_MIN_CHARS, _MAX_CHARS = 8, 100
_PHRASES = ["（记者 王明）", "【来源：网络】", "点击查看更多", "本文转载自新华网", "编辑：李华"]


def sentences() -> list[str]:
    out: list[str] = []
    with gzip.open(DATA / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz", "rt", encoding="utf-8") as f:
        for line in f:
            out += [s.strip() for s in _SENTENCE.findall(line)]
    for name in ("zh_gsdsimp-dev.txt", "zh_gsdsimp-test.txt"):
        out += (DATA / "ud-gsdsimp" / name).read_text(encoding="utf-8").splitlines()
    # 8 to 100 characters: a longer "sentence" (a review without full stops) would dominate every
    # document it is drawn into, and make documents of different groups true near-duplicates.
    return sorted({s for s in out if _MIN_CHARS <= len(s) <= _MAX_CHARS})


def _edit(rng: random.Random, parts: list[str]) -> list[str]:
    parts = list(parts)
    kind = rng.randrange(4)
    if kind == 0:
        i = rng.randrange(len(parts))
        s = parts[i]
        j = rng.randrange(len(s))
        parts[i] = s[:j] + s[j + 1 :]
    elif kind == 1:
        parts = [p.replace("，", ",").replace("。", ".") for p in parts]
    elif kind == 2:
        phrase = rng.choice(_PHRASES)
        parts = [phrase, *parts] if rng.random() < 0.5 else [*parts, phrase]
    else:
        i = rng.randrange(len(parts) - 1)
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
    return parts


def build(path: Path, n_lines: int, seed: int = 7) -> list[int]:
    """Write the corpus; return each line's group id."""
    rng = random.Random(seed)
    pool = sentences()
    docs: list[tuple[int, list[str]]] = []
    group = 0
    while len(docs) < n_lines:
        parts = rng.sample(pool, rng.randint(3, 6))
        docs.append((group, parts))
        if rng.random() < 0.1:
            for _ in range(rng.randint(1, 3)):
                docs.append((group, _edit(rng, parts)))
        group += 1
    docs = docs[:n_lines]
    rng.shuffle(docs)
    with path.open("w", encoding="utf-8") as f:
        for i, (_, parts) in enumerate(docs):
            f.write(json.dumps({"id": i, "text": "".join(parts)}, ensure_ascii=False) + "\n")
    return [g for g, _ in docs]


def _texts(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def run_ours(path: Path, workers: int, keep_adds: int = 100) -> list[tuple[int, int]]:
    from scrapy_simhash.commands.dedup import dedup

    report = path.with_suffix(f".ours{workers}-{keep_adds}")
    with path.open("rb") as src, open("/dev/null", "wb") as kept, report.open("wb") as rep:
        dedup(src, kept, rep, ("text",), {"bits": 64}, max_distance=3, keep_adds=keep_adds, workers=workers)
    return [(row["line"], row["kept_line"]) for row in map(json.loads, report.read_text().splitlines())]


def run_simhash(path: Path) -> list[tuple[int, int]]:
    import logging

    import jieba
    from simhash import Simhash, SimhashIndex

    jieba.setLogLevel(logging.WARNING)
    logging.getLogger("simhash").setLevel(logging.ERROR)
    index = SimhashIndex([], f=64, k=3)
    drops = []
    for n, text in enumerate(_texts(path), 1):
        fp = Simhash(jieba.lcut(text), f=64)
        found = index.get_near_dups(fp)
        if found:
            drops.append((n, int(found[0])))
        else:
            index.add(str(n), fp)
    return drops


def run_minhash(path: Path) -> list[tuple[int, int]]:
    import logging

    import jieba
    from datasketch import MinHash, MinHashLSH

    jieba.setLogLevel(logging.WARNING)
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    drops = []
    for n, text in enumerate(_texts(path), 1):
        m = MinHash(num_perm=128)
        m.update_batch([w.encode("utf-8") for w in set(jieba.lcut(text))])
        found = lsh.query(m)
        if found:
            drops.append((n, min(found)))
        else:
            lsh.insert(n, m)
    return drops


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (the pool's workers)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def child(method: str, path: Path, workers: int) -> None:
    start, start_cpu = time.perf_counter(), _cpu()
    if method == "ours":
        drops = run_ours(path, workers)
    elif method == "ours0":
        drops = run_ours(path, workers, keep_adds=0)
    elif method == "simhash":
        drops = run_simhash(path)
    else:
        drops = run_minhash(path)
    seconds, cpu = time.perf_counter() - start, _cpu() - start_cpu
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_mb": own, "worker_rss_mb": kids, "drops": drops}))


def score(groups: list[int], drops: list[tuple[int, int]]) -> tuple[float, float]:
    sizes: dict[int, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    should = sum(s - 1 for s in sizes.values())
    correct = sum(1 for line, kept in drops if groups[line - 1] == groups[kept - 1])
    return (correct / len(drops) if drops else 1.0), correct / should


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), int(args.child[2]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        groups = build(path, args.lines)
        n = len(groups)
        should = n - len(set(groups))
        print(
            f"corpus: {n:,} lines, {path.stat().st_size / 1e6:.1f} MB, {len(set(groups)):,} groups, {should:,} lines to drop"
        )
        print(
            f"{'method':<34}{'lines/s':>9}{'/CPU s':>8}{'seconds':>9}{'peak RSS':>10}{'workers':>9}{'dropped':>9}"
            f"{'precision':>10}{'recall':>8}"
        )
        rates, cpu_rates = {}, {}
        runs = [("ours", args.workers), ("ours", 1), ("ours0", 1), ("simhash", 1), ("minhash", 1)]
        labels = {
            "ours": "scrapy-simhash dedup, {w} process(es)",
            "ours0": "the same, --keep-adds 0, {w}",
            "simhash": "jieba + simhash + SimhashIndex",
            "minhash": "jieba + datasketch MinHashLSH",
        }
        for method, workers in runs:
            cmd = [sys.executable, __file__, "--child", method, str(path), str(workers)]
            result = subprocess.run(cmd, capture_output=True, text=True, check=True)
            out = json.loads(result.stdout.splitlines()[-1])
            precision, recall = score(groups, [tuple(d) for d in out["drops"]])
            label = labels[method].format(w=workers)
            rates[label] = n / out["seconds"]
            cpu_rates[label] = n / out["cpu"]
            workers_rss = f"{out['worker_rss_mb']:.0f} MB" if method.startswith("ours") and workers > 1 else "-"
            print(
                f"{label:<34}{rates[label]:>9,.0f}{cpu_rates[label]:>8,.0f}{out['seconds']:>9.1f}{out['rss_mb']:>7.0f} MB{workers_rss:>9}"
                f"{len(out['drops']):>9,}{precision:>10.4f}{recall:>8.4f}"
            )
        ours = rates[labels["ours"].format(w=1)]
        ours_cpu = cpu_rates[labels["ours"].format(w=1)]
        for label in (labels["simhash"], labels["minhash"]):
            print(
                f"speed, one process each: ours / {label}: {ours / rates[label]:.2f}x "
                f"(per CPU second: {ours_cpu / cpu_rates[label]:.2f}x)"
            )


if __name__ == "__main__":
    main()
