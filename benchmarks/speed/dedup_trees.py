"""Benchmark: the ``dedup`` command of two or more source trees on the same corpus, one process each.

Run: ``python benchmarks/speed/dedup_trees.py --lines 100000 TREE [TREE ...]`` (a tree: a checkout's
root, e.g. one made by ``git archive main | tar -x -C /tmp/main``). The corpus is
``bench_dedup.py``'s; each tree's ``dedup`` runs in a fresh process with ``PYTHONPATH=TREE``, one
worker (``workers=1``, the fingerprints in the same process), ``--repeat`` times, the runs interleaved.

Printed per tree: lines per CPU second (the best run: what other jobs on a shared machine change
least), peak RSS (the largest), dropped lines and the report's SHA-256 (the same bytes: the same drops).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(tree: str, path: Path, report: Path) -> None:
    from scrapy_simhash.commands.dedup import dedup

    assert Path(sys.modules["scrapy_simhash"].__file__ or "").resolve().is_relative_to(Path(tree).resolve())
    start = time.process_time()
    with path.open("rb") as src, open(os.devnull, "wb") as kept, report.open("wb") as rep:
        result = dedup(src, kept, rep, ("text",), {"bits": 64}, max_distance=3, workers=1)
    cpu = time.process_time() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cpu": cpu, "rss_mb": rss, "lines": result.lines, "dropped": result.dropped}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return
    sys.path.insert(0, str(HERE))
    from bench_dedup import build

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        build(path, args.lines)
        print(f"corpus: bench_dedup.py's, {args.lines:,} lines, {path.stat().st_size / 1e6:.1f} MB")
        runs: dict[str, list[dict]] = {tree: [] for tree in args.trees}
        for _ in range(args.repeat):
            for i, tree in enumerate(args.trees):
                report = Path(tmp) / f"report{i}"
                env = {**os.environ, "PYTHONPATH": tree}
                cmd = [sys.executable, __file__, "--child", tree, str(path), str(report)]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env, cwd=tmp)
                row = json.loads(out.stdout.splitlines()[-1])
                row["sha"] = hashlib.sha256(report.read_bytes()).hexdigest()[:16]
                runs[tree].append(row)
        print(f"{'tree':<28}{'lines/CPU s':>12}{'CPU s':>8}{'peak RSS':>10}{'dropped':>9}  report sha256")
        for tree, rows in runs.items():
            best = min(rows, key=lambda r: r["cpu"])
            shas = {r["sha"] for r in rows}
            print(
                f"{tree:<28}{best['lines'] / best['cpu']:>12,.0f}{best['cpu']:>8.1f}"
                f"{max(r['rss_mb'] for r in rows):>7.0f} MB{best['dropped']:>9,}  {','.join(sorted(shas))}"
            )


if __name__ == "__main__":
    main()
