"""A recrawl of a real big page that adds one real paragraph: is it ``changed``?

    nice -n 10 .venv/bin/python benchmarks/quality/big_page_adds.py [--pages N] [--seeds N]
        [--evidence-max-bytes B] [--json OUT]

Takes the biggest HTML pages of the documentation packages installed from Debian (``ROOTS``: the
largest files of each package whose own text, as the crawl sees it, has at least ``--min-chars``
characters: release notes, API indexes, one-page manuals), and for each of ``--seeds`` seeds inserts
a real paragraph of 300 and of 600 characters (the first sentences of a paragraph of another
package's page, cut at a word) as a ``<p>`` after one of its paragraphs chosen at random among those
in its own text (an edit to its content; a page without one is left out). Each pair is a recrawl of
one URL through the functions the crawl calls: ``Fingerprinter().fingerprint_page`` of both bodies,
then ``ChangeTracker.observe`` of the first and, a day later, of the second over a fresh index in
memory with the product's settings (``SIMHASH_EVIDENCE_MAX_BYTES`` from ``--evidence-max-bytes``,
else the default). Printed: per inserted size, the share called ``changed`` (bar: >= 0.95 at 300
characters), and per page its own text's length, its evidence's bytes (a text or a sample) and what
the second fetch was counted to add (``OwnText.added`` against the first fetch's sketch). The
evidence bytes are what a big page costs: compare them across bounds.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scrapy.settings import Settings

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import CHANGED
from scrapy_simhash.fingerprint.novelty import gram_text
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, PageFingerprint
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex

DAY = 86400.0
#: The installed documentation packages whose big pages are measured (those present).
ROOTS = [
    "/usr/share/doc/erlang-doc",
    "/usr/share/doc/ghc-doc",
    "/usr/share/doc/rust-doc",
    "/usr/share/doc/openjdk-17-jre-headless",
    "/usr/share/doc/python3.11",
    "/usr/share/doc/lilypond",
    "/usr/share/doc/libboost1.74-doc",
    "/usr/share/doc/sqlite3",
    "/usr/share/doc/python-django-doc",
    "/usr/share/doc/nodejs",
    "/usr/share/qt5/doc",
    "/usr/share/doc/postgresql-doc-15",
]
SIZES = (300, 600)
_PARA_RE = re.compile(rb"<p[^>]*>(.*?)</p>", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<[^>]+>")


def _text(fragment: bytes) -> str:
    import html

    return " ".join(html.unescape(_TAG_RE.sub(" ", fragment.decode("utf-8", "replace"))).split())


def paragraphs(files: list[Path], least: int) -> list[str]:
    """Real paragraphs of at least ``least`` characters of the pages ``files``."""
    out = []
    for f in files:
        for m in _PARA_RE.finditer(f.read_bytes()):
            text = _text(m.group(1))
            if len(text) >= least and "." in text:
                out.append(text)
    return out


def cut(text: str, size: int) -> str:
    """``text`` cut at the last word's end within ``size`` characters (at least ``size - 20``)."""
    head = text[: size + 1]
    end = head.rfind(" ")
    return head[:end] if end >= size - 20 else text[:size]


def insert(body: bytes, para: str, rng: random.Random, own: str) -> bytes | None:
    """``body`` with ``para`` as a ``<p>`` after the end of a paragraph chosen at random among
    those whose text is in the page's own text ``own`` (normalised): an edit to its content, not
    to a list of links; ``None``: the page has no such paragraph."""
    import html

    ends = [m.end() for m in _PARA_RE.finditer(body) if len(t := gram_text(_text(m.group(1)))) >= 40 and t in own]
    if not ends:
        return None
    at = rng.choice(ends)
    return body[:at] + b"<p>" + html.escape(para).encode() + b"</p>" + body[at:]


def recrawl(first: PageFingerprint, second: PageFingerprint, settings: dict[str, Any]) -> tuple[bool, str]:
    """``(changed, reason)``: the verdict on the second fetch of one URL."""
    config = load_config(Settings(settings))
    tracker = ChangeTracker(SimhashIndex(**config.index_kwargs()), **config.tracker_kwargs())
    tracker.observe("https://docs.example/big.html", first, now=0.0)
    verdict = tracker.observe("https://docs.example/big.html", second, now=DAY)
    return verdict.verdict == CHANGED, str(verdict.reason)


def big_pages(fper: Fingerprinter, per_root: int, min_chars: int) -> list[tuple[Path, bytes, PageFingerprint]]:
    """Each root's largest HTML files whose own text has at least ``min_chars`` characters (at most
    ``per_root`` of them), with their fingerprints."""
    out = []
    for root in map(Path, ROOTS):
        if not root.is_dir():
            continue
        files = sorted(root.rglob("*.html"), key=lambda p: p.stat().st_size, reverse=True)
        found = 0
        for f in files[: 6 * per_root]:
            if found >= per_root or f.stat().st_size > 4 * 1024 * 1024:  # SIMHASH_MAX_BODY_SIZE
                continue
            body = f.read_bytes()
            try:
                page = fper.fingerprint_page(body, url="https://docs.example/big.html")
            except EmptyTextError:
                continue
            if page.own is not None and page.own.chars >= min_chars:
                out.append((f, body, page))
                found += 1
    return out


def cost(bounds: tuple[int, ...], least: int = 100_000) -> None:
    """What a bound costs: for every HTML file of the roots over ``least`` bytes (a smaller file's
    text compresses far below 64 KiB), its evidence as the tracker makes it (``OwnText.novelty_text`` at
    each bound: the text, else a sample), and the bytes per HTML file of the roots that each bound
    adds to the first's."""
    from scrapy_simhash.fingerprint.simhash import own_text
    from scrapy_simhash.text.extract import extract

    files = [f for root in map(Path, ROOTS) if Path(root).is_dir() for f in Path(root).rglob("*.html")]
    big = [f for f in files if least < f.stat().st_size <= 4 * 1024 * 1024]
    sketches: dict[int, list[bytes]] = {b: [] for b in bounds}
    for f in big:
        own = own_text(extract(f.read_bytes()), None, None)
        if own.has_text:
            for b in bounds:
                sketches[b].append(own.novelty_text(b))
    print(f"{len(files):,} HTML files, {len(big):,} over {least:,} bytes")
    print("| bound | pages with a sample | their evidence, bytes | added per HTML file, bytes |")
    print("| --- | --- | --- | --- |")
    base = sum(map(len, sketches[bounds[0]]))
    for b in bounds:
        total = sum(map(len, sketches[b]))
        sampled = sum(k[:1] == b"\x02" for k in sketches[b])
        print(f"| {b:,} | {sampled} | {total:,} | {(total - base) / len(files):.1f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=3, help="big pages per package (default 3)")
    ap.add_argument("--seeds", type=int, default=4, help="insertions per page and size (default 4)")
    ap.add_argument("--min-chars", type=int, default=100_000, help="own text at least (default 100,000)")
    ap.add_argument("--evidence-max-bytes", type=int, help="SIMHASH_EVIDENCE_MAX_BYTES (default: the product's)")
    ap.add_argument("--json", type=Path, help="write the rows to this JSON file")
    ap.add_argument("--cost", action="store_true", help="only what each bound costs (64 KiB, 256 KiB, 1 MiB)")
    args = ap.parse_args(argv)
    if args.cost:
        cost((1 << 16, 1 << 18, 1 << 20))
        return 0
    settings: dict[str, Any] = {}
    if args.evidence_max_bytes is not None:
        settings["SIMHASH_EVIDENCE_MAX_BYTES"] = args.evidence_max_bytes
    config = load_config(Settings(settings))
    t0 = time.perf_counter()
    fper = Fingerprinter()
    pages = big_pages(fper, args.pages, args.min_chars)
    if not pages:
        raise SystemExit("no big pages found: install erlang-doc, ghc-doc, rust-doc or python3.11-doc")
    rows = []
    roots = [r for r in ROOTS if Path(r).is_dir()]
    pools = {r: paragraphs(sorted(Path(r).rglob("*.html"), key=str)[:300], max(SIZES)) for r in roots}
    for path, body, first in pages:
        assert first.own is not None
        root = next(r for r in roots if str(path).startswith(r))
        # Paragraphs of another package: text the page cannot hold already.
        pool = next(pools[r] for r in roots[roots.index(root) + 1 :] + roots if r != root and pools[r])
        limit = config.evidence_max_bytes
        kept = first.own.novelty_text(limit or 2**62)
        for size in SIZES:
            for seed in range(args.seeds):
                rng = random.Random(f"{path}:{size}:{seed}")
                para = cut(rng.choice(pool), size)
                edited = insert(body, para, rng, first.own.text)
                if edited is None:
                    continue
                second = fper.fingerprint_page(edited, url="https://docs.example/big.html")
                assert second.own is not None
                changed, reason = recrawl(first, second, settings)
                rows.append(
                    {
                        "page": str(path),
                        "own_chars": first.own.chars,
                        "evidence_bytes": len(kept),
                        "evidence": "text" if kept[:1] == b"\x05" else "sample",
                        "size": size,
                        "seed": seed,
                        "in_own_text": gram_text(para)[:200] in second.own.text,
                        "counted": round(second.own.added(kept)),
                        "changed": changed,
                        "reason": reason,
                    }
                )
    print(
        f"{len(pages)} big pages, {len(rows)} recrawls in {time.perf_counter() - t0:.0f} s "
        f"(SIMHASH_EVIDENCE_MAX_BYTES = {config.evidence_max_bytes})"
    )
    print("| paragraph added | recrawls | changed | share | bar |")
    print("| --- | --- | --- | --- | --- |")
    for size in SIZES:
        sel = [r for r in rows if r["size"] == size]
        n = sum(r["changed"] for r in sel)
        bar = "changed >= 0.95" if size == 300 else "-"
        print(f"| {size} chars | {len(sel)} | {n} | {n / len(sel):.3f} | {bar} |")
    print("\n| page | own text chars | evidence | bytes | counted (300) | counted (600) | changed |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path, _, _ in pages:
        sel = [r for r in rows if r["page"] == str(path)]
        if not sel:
            continue
        counted = {s: ", ".join(str(r["counted"]) for r in sel if r["size"] == s) for s in SIZES}
        short = str(path).replace("/usr/share/doc/", "").replace("/usr/share/", "")
        print(
            f"| {short} | {sel[0]['own_chars']:,} | {sel[0]['evidence']} | {sel[0]['evidence_bytes']:,} "
            f"| {counted[300]} | {counted[600]} | {sum(r['changed'] for r in sel)}/{len(sel)} |"
        )
    outside = sum(not r["in_own_text"] for r in rows)
    print(f"\nrecrawls whose paragraph is not in the second fetch's own text: {outside}")
    print(
        f"evidence bytes per big page: median {statistics.median(r['evidence_bytes'] for r in rows):,.0f}, "
        f"max {max(r['evidence_bytes'] for r in rows):,}"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
