"""What the item pipeline's short-text rule (``duplicate/short_text``) drops on real items.

Run: ``python benchmarks/quality/short_text_items.py [--show 30]`` (a minute or two).

Items, from ``../shared/data`` (benchmark only, never shipped), fed in this order to one
:class:`~scrapy_simhash.scrapy.pipeline.SimhashDedupPipeline` (default settings, an in-memory
index, ``SIMHASH_ITEM_FIELDS = ["title", "body"]``):

- ``clue``: each line of the CLUECorpusSmall sample (real Chinese web text: news, reviews,
  posts; 2,500 lines, a tenth of them under 40 characters), one item each;
- ``revision``: each version of each document of ``revisions/pairs.jsonl.gz`` (Markdown files at
  real commits: typo fixes, link changes, rewrites), one item per version, in commit order;
- ``article``: the headline and body of each page of ``scrapinghub-aeb`` and ``zh-web-cee``.

Each item runs twice: as the pipeline decides (no short-text rule), and with the ``dedup``
command's short-text rule handed to the same decision (what the pipeline would drop with it). Printed: items, drops by reason in both runs, and each ``short_text`` drop:
the item it was dropped for, whether both are versions of one document, what the dropped item
adds to it (characters, the rule's measure) and the runs of its text that the kept item lacks
(what the drop loses, :func:`~scrapy_simhash.fingerprint.novelty.uncovered` with runs of 4
characters or more).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))
FIELDS = ["title", "body"]


def items() -> list[tuple[str, str, dict[str, Any]]]:
    """``(source, document, item)`` of every item, in feeding order."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    clue = DATA / "zh-text" / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz"
    with gzip.open(clue, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            if line.strip():
                out.append(("clue", f"clue:{n}", {"url": f"clue:{n}", "title": "", "body": line.strip()}))
    versions: dict[tuple[str, str, str], tuple[str, str]] = {}
    with gzip.open(DATA / "revisions" / "pairs.jsonl.gz", "rt", encoding="utf-8") as f:
        for row in map(json.loads, f):
            for side in ("a", "b"):
                path = row.get(f"path_{side}") or row["path"]
                versions[(row["repo"], path, row[f"commit_{side}"])] = (row[f"date_{side}"], row[f"text_{side}"])
    for (repo, path, commit), (_, text) in sorted(versions.items(), key=lambda kv: (kv[1][0], kv[0])):
        url = f"{repo}/{path}@{commit[:10]}"
        out.append(("revision", f"{repo}/{path}", {"url": url, "title": "", "body": text}))
    with gzip.open(DATA / "scrapinghub-aeb" / "ground-truth.json.gz", "rt", encoding="utf-8") as f:
        truth = json.load(f)
    for sha, page in sorted(truth.items()):
        body = page.get("articleBody") or ""
        out.append(
            ("article", f"aeb:{sha[:10]}", {"url": f"aeb:{sha}", "title": page.get("headline") or "", "body": body})
        )
    for path in sorted((DATA / "zh-web-cee" / "cleaned").glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        out.append(("article", f"cee:{path.stem[:8]}", {"url": f"cee:{path.stem}", "title": "", "body": text}))
    return out


def run(rows: list[tuple[str, str, dict[str, Any]]], short: bool) -> list[Any]:
    """Each item's verdict (``None``: not fingerprinted) from one pipeline; ``short``: with the
    short-text rule (``dedup``'s), which the pipeline does not apply, handed to its decision."""
    from scrapy import Spider
    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler

    from scrapy_simhash.decision.shorttext import short_text
    from scrapy_simhash.fingerprint.fields import fields_text
    from scrapy_simhash.scrapy.pipeline import SimhashDedupPipeline

    settings = {
        "SIMHASH_ENABLED": True,
        "SIMHASH_ITEM_FIELDS": FIELDS,
        "SIMHASH_STORE": "scrapy_simhash.store.memory.MemoryStore",
        "LOG_LEVEL": "ERROR",
    }
    crawler = get_crawler(Spider, settings)
    spider = Spider.from_crawler(crawler, name="items")
    pipe = SimhashDedupPipeline.from_crawler(crawler)
    pipe.open_spider(spider)
    tracker = pipe.tracker
    assert tracker is not None
    seen: list[Any] = []
    decide = tracker.deduplicate
    current: list[dict[str, Any]] = []

    def deduplicate(key: str, fp: int, own: Any = None, given: Any = None) -> Any:
        title, text = fields_text(current[-1], FIELDS)
        mine = f"{title}\n{text}" if title and text else title or text  # as dedup builds a line's
        verdict = decide(key, fp, own, short_text(mine) if short else given)
        seen.append(verdict)
        return verdict

    tracker.deduplicate = deduplicate  # type: ignore[method-assign]
    verdicts: list[Any] = []
    for _, _, item in rows:
        before = len(seen)
        current.append(item)
        with contextlib.suppress(DropItem):
            pipe.process_item(dict(item), spider)
        verdicts.append(seen[-1] if len(seen) > before else None)
    pipe.close_spider(spider)
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=30, help="short_text drops to print in full")
    args = parser.parse_args()
    from scrapy_simhash.decision.shorttext import SHORT_CHARS
    from scrapy_simhash.fingerprint.novelty import gram_text, uncovered

    rows = items()
    by_url = {item["url"]: (source, doc, item) for source, doc, item in rows}
    sources = Counter(source for source, _, _ in rows)
    short_items = Counter(
        source for source, _, item in rows if len((item["title"] + "\n" + item["body"]).strip()) <= SHORT_CHARS
    )
    print("items: " + ", ".join(f"{s} {n:,} ({short_items[s]:,} short)" for s, n in sources.items()))
    results = {}
    for short in (False, True):
        verdicts = run(rows, short)
        reasons = Counter(
            (source, str(v.reason)) for (source, _, _), v in zip(rows, verdicts) if v is not None and v.duplicate_of
        )
        results[short] = verdicts
        label = "with dedup's short-text rule" if short else "as the pipeline decides"
        print(f"dropped, {label}: " + (", ".join(f"{s} {r}: {n}" for (s, r), n in sorted(reasons.items())) or "none"))
    drops = [
        (row, v)
        for row, v in zip(rows, results[True])
        if v is not None and v.duplicate_of and str(v.reason) == "duplicate/short_text"
    ]
    same_doc = sum(by_url[v.duplicate_of][1] == doc for (_, doc, _), v in drops)
    print(f"short_text drops: {len(drops)}, of them a version of the kept item's own document: {same_doc}")
    for (source, doc, item), v in drops[: args.show]:
        kept = by_url[v.duplicate_of][2]
        mine = gram_text((item["title"] + "\n" + item["body"]).strip())
        theirs = gram_text((kept["title"] + "\n" + kept["body"]).strip())
        lost = uncovered(mine, theirs, 4)
        same = "same document" if by_url[v.duplicate_of][1] == doc else "OTHER document"
        print(f"- {source} {item['url']} <- kept {v.duplicate_of} ({same}; adds {v.adds}, distance {v.distance})")
        print(f"    lost runs (>= 4 chars): {lost[:6]!r}")
        print(f"    dropped: {mine[:160]!r}")
        print(f"    kept:    {theirs[:160]!r}")


if __name__ == "__main__":
    main()
