"""The shared data beside the repository (``../shared/data``: real pages and texts; tests that read
it are skipped where it is absent) and its loaders, shared with the benchmarks."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def load_corpus(limit: int | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    zt = DATA / "zh-text"
    clue = zt / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz"
    if clue.exists():
        with gzip.open(clue, "rt", encoding="utf-8") as f:
            out["clue-sample"] = [ln for ln in f.read().splitlines() if ln.strip()]
    ud = sorted((zt / "ud-gsdsimp").glob("*.txt"))
    if ud:
        out["ud-gsdsimp"] = [ln for p in ud for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
    news = sorted((zt / "yanyiwu-news-pair").glob("*.txt"))
    if news:
        out["yanyiwu-news"] = [p.read_text(encoding="utf-8") for p in news]
    cee = sorted((DATA / "zh-web-cee" / "cleaned").glob("*.txt"))
    if cee:
        out["zh-web-cee"] = [p.read_text(encoding="utf-8") for p in cee]
    pairs = DATA / "revisions" / "pairs.jsonl.gz"
    if pairs.exists():
        seen: dict[str, None] = {}
        with gzip.open(pairs, "rt", encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                if rec["lang"] == "zh":
                    seen.setdefault(rec["text_a"])
                    seen.setdefault(rec["text_b"])
        out["revisions-zh"] = list(seen)
    if not out:
        sys.exit(f"no data under {DATA.resolve()}")
    return {k: v[:limit] if limit else v for k, v in out.items()}


def load_pages() -> dict[str, list[bytes]]:
    zh = sorted((DATA / "zh-web-cee" / "original").glob("*.html"))
    en = sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))
    if not zh and not en:
        sys.exit(f"no data under {DATA.resolve()}")
    return {
        "zh-web-cee pages": [p.read_bytes() for p in zh],
        "scrapinghub-aeb pages": [gzip.decompress(p.read_bytes()) for p in en],
    }
