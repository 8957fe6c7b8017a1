"""The wide tier of the near-duplicate decision (``SIMHASH_WIDE_DISTANCE``), against brute force.

Store level: ``check_and_add(..., wide)`` returns exactly the stored keys at a distance
``k < d <= wide`` whose table key equals, or lies one bit away from, the new fingerprint's in some
table, and changes nothing else. Tracker level: the pages ``ChangeTracker.observe`` drops beyond
``k`` are exactly the brute-force ones among those candidates whose change sketches both fill
``WIDE_MIN_SLOTS`` slots and are at least ``wide_similarity`` alike; with the tier off the verdicts
are the k tier's alone. Memory, LMDB and Redis (standalone and cluster) stores.
"""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from helpers.demo import Pages, demo
from helpers.stores import LAYOUT, StoreKind, open_store

from scrapy_simhash.decision.tracker import WIDE_MIN_SLOTS, ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.fingerprint.sketch import SKETCH_BYTES, SLOTS, filled, sketch_similarity
from scrapy_simhash.store.index import SimhashIndex

if TYPE_CHECKING:
    from collections.abc import Iterator

K, WIDE = 3, 12


def _flip(rng: random.Random, fp: int, d: int) -> int:
    for bit in rng.sample(range(64), d):
        fp ^= 1 << bit
    return fp


def _fingerprints(rng: random.Random, n: int) -> list[int]:
    """Fingerprints in families: each a few bits (0-14) away from one of a few roots, some random."""
    roots = [rng.getrandbits(64) for _ in range(6)]
    return [
        rng.getrandbits(64) if rng.random() < 0.15 else _flip(rng, rng.choice(roots), rng.randint(0, 14))
        for _ in range(n)
    ]


def _sketch(rng: random.Random, base: np.ndarray) -> bytes:
    """A sketch that keeps a random share of ``base``'s slots, the others new or emptied."""
    out = base.copy()
    keep = rng.choice((0.5, 0.7, 0.8, 0.9, 1.0))
    for i in range(SLOTS):
        if rng.random() > keep:
            out[i] = 0 if rng.random() < 0.3 else rng.randint(1, 65535)
    return out.astype("<u2").tobytes()


def test_store_returns_the_wide_candidates_of_brute_force(kind: StoreKind, tmp_path: Path) -> None:
    store = open_store(kind.make, tmp_path / "s")
    rng = random.Random(7)
    kept: dict[bytes, bytes] = {}
    n_wide = 0
    for i, v in enumerate(_fingerprints(rng, 400)):
        key, fp = f"k{i % 350}".encode(), v.to_bytes(8, "big")  # some keys come back with new content
        others = {kk: f for kk, f in kept.items() if kk != key}
        dist = {kk: (int.from_bytes(f, "big") ^ v).bit_count() for kk, f in others.items()}
        probe = store.check_and_add(key, fp, K, 0, WIDE)
        hits = sorted((d, kk) for kk, d in dist.items() if d <= K)
        assert [(h.distance, h.key) for h in probe.hits] == hits
        if hits:
            assert probe.wide == ()
            kept.pop(key, None)
            continue
        expected = sorted(
            (d, kk) for kk, d in dist.items() if K < d <= WIDE and LAYOUT.key_distance(others[kk], fp) <= 1
        )
        assert [(h.distance, h.key) for h in probe.wide] == expected
        assert all(h.fp == others[h.key] for h in probe.wide)
        n_wide += bool(expected)
        kept[key] = fp
    assert n_wide > 20  # the families put many pairs in (k, wide]
    assert dict(zip(kept, store.get(list(kept)))) == kept
    store.close()


def test_tracker_drops_exactly_the_brute_force_pairs(kind: StoreKind, tmp_path: Path) -> None:
    rng = random.Random(11)
    fps = _fingerprints(rng, 300)
    # sketches: pages of one family share a base sketch (so similar ones are near in both), some sparse
    bases = [np.array([rng.randint(1, 65535) for _ in range(SLOTS)]) for _ in range(4)]
    sparse = np.array([rng.randint(1, 65535) if i < 20 else 0 for i in range(SLOTS)])
    sketches = [_sketch(rng, sparse if rng.random() < 0.1 else rng.choice(bases)) for _ in fps]
    for wide, near in ((WIDE, 0.6), (0, 0.6), (WIDE, 0.0)):
        index = SimhashIndex(kind.make(tmp_path / f"t{wide}-{near}"), max_distance=K, max_candidates=0)
        tracker = ChangeTracker(index, wide_distance=wide, wide_similarity=0.75, near_similarity=near)
        kept: dict[str, tuple[int, bytes]] = {}
        outcomes = {NEW: 0, "k": 0, "wide": 0, "unlike": 0, "not_nearest": 0}
        for i, (fp, sk) in enumerate(zip(fps, sketches)):
            key = f"https://example.com/{i}"
            verdict = tracker.observe(key, PageFingerprint.of(fp, sketch=sk), now=1000.0 + i)
            dist = {kk: (f ^ fp).bit_count() for kk, (f, _) in kept.items()}
            hits = sorted((d, kk) for kk, d in dist.items() if d <= K)
            # within k, a candidate is no evidence when both sketches are filled and under `near` alike
            evidence = [
                (d, kk)
                for d, kk in hits
                if not (
                    near
                    and min(filled(sk), filled(kept[kk][1])) >= WIDE_MIN_SLOTS
                    and sketch_similarity(sk, kept[kk][1]) < near
                )
            ]
            expected: tuple[str, str | None, int | None] = (NEW, None, None)
            if evidence:
                expected = (NEAR_DUPLICATE, evidence[0][1], evidence[0][0])
                outcomes["not_nearest"] += evidence[0] != hits[0]
            elif not hits and wide and filled(sk) >= WIDE_MIN_SLOTS:
                best = None
                for d, kk in sorted((d, kk) for kk, d in dist.items() if K < d <= wide):
                    f, other = kept[kk]
                    if LAYOUT.key_distance(f.to_bytes(8, "big"), fp.to_bytes(8, "big")) > 1:
                        continue
                    if filled(other) < WIDE_MIN_SLOTS or sketch_similarity(sk, other) < 0.75:
                        continue
                    if best is None or sketch_similarity(sk, other) > best[0]:
                        best = (sketch_similarity(sk, other), kk, d)
                if best is not None:
                    expected = (NEAR_DUPLICATE, best[1], best[2])
            assert (verdict.verdict, verdict.duplicate_of, verdict.distance) == expected, i
            assert verdict.unlike == (hits[0][1] if hits and not evidence else None), i
            if expected[0] == NEW:
                kept[key] = (fp, sk)
                outcomes[NEW] += 1
                outcomes["unlike"] += bool(hits)
            else:
                assert expected[2] is not None
                outcomes["k" if expected[2] <= K else "wide"] += 1
            assert index.get(key) == (fp if expected[0] == NEW else None)
        assert outcomes[NEW] > 50 and outcomes["k"] > 20
        assert (outcomes["wide"] > 10) == bool(wide)
        assert (outcomes["unlike"] > 5) == bool(near)
        assert (outcomes["not_nearest"] > 0) == bool(near), outcomes
        index.close()


def test_wide_tier_needs_evidence_and_a_matching_record(tmp_path: Path) -> None:
    index = SimhashIndex(max_distance=K)
    tracker = ChangeTracker(index, wide_distance=WIDE, wide_similarity=0.75)
    full = bytes(range(1, SKETCH_BYTES + 1))
    base = 0x0123_4567_89AB_CDEF

    def near(*bits: int) -> int:  # base with these bits flipped: the top block stays, so found
        return base ^ sum(1 << b for b in bits)

    assert tracker.observe("a", PageFingerprint.of(base, sketch=full), now=1.0).verdict == NEW
    # a fallback page (short: an exact hash) is never a wide duplicate, nor a page without a sketch
    assert tracker.observe("b", PageFingerprint.of(near(0, 1, 2, 3, 4), sketch=full, fallback="short"), now=2.0).verdict == NEW
    index.remove("b")
    assert tracker.observe("c", PageFingerprint.of(near(5, 6, 7, 8, 9)), now=3.0).verdict == NEW
    # nor one whose sketch fills too few slots
    sparse = full[:40] + bytes(SKETCH_BYTES - 40)
    assert filled(sparse) < WIDE_MIN_SLOTS
    assert tracker.observe("d", PageFingerprint.of(near(10, 11, 12, 13, 14), sketch=sparse), now=4.0).verdict == NEW
    v = tracker.observe("e", PageFingerprint.of(near(16, 17, 18, 19, 20, 21), sketch=full), now=5.0)
    assert (v.verdict, v.duplicate_of, v.distance) == (NEAR_DUPLICATE, "a", 6)
    assert index.get("e") is None and index.get("a") == base
    # the kept page's record must hold the sketch of its indexed fingerprint
    index.add("a", base ^ (1 << 63))
    assert tracker.observe("f", PageFingerprint.of(near(22, 23, 24, 25, 26, 27), sketch=full), now=6.0).verdict == NEW
    # off: the same page is new
    off = ChangeTracker(SimhashIndex(max_distance=K), wide_distance=0)
    assert off.observe("a", PageFingerprint.of(base, sketch=full), now=1.0).verdict == NEW
    assert off.observe("e", PageFingerprint.of(near(16, 17, 18, 19, 20, 21), sketch=full), now=2.0).verdict == NEW
    with pytest.raises(ValueError, match="wide_distance"):
        ChangeTracker(index, wide_distance=-1)
    with pytest.raises(ValueError, match="wide_similarity"):
        ChangeTracker(index, wide_similarity=0.0)


# -- end to end: real Scrapy crawls of pages served on 127.0.0.1 -----------------------------------

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
_PARA = re.compile(r"(<p[^>]*>)(.*?)(</p>)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def _real_pages() -> list[tuple[str, bytes]]:
    """Real pages: those of ``shared/data/scrapinghub-aeb`` beside the repo when it is there (news
    and blog pages of many sites), then the demo site's articles."""
    pages = []
    aeb = DATA / "scrapinghub-aeb" / "html"
    if aeb.is_dir():
        pages += [(p.name, gzip.decompress(p.read_bytes())) for p in sorted(aeb.glob("*.html.gz"))[:30]]
    site = demo.SITE_DIR / "news"
    pages += [(p.name, p.read_bytes()) for p in sorted(site.glob("*.html"))]
    return pages


def _one_sentence_edits(html: str) -> Iterator[str]:
    """``html`` with one sentence of one of its paragraphs removed, every way."""
    for m in _PARA.finditer(html):
        sentences = _SENTENCE_END.split(m.group(2))
        for i in range(len(sentences)) if len(sentences) > 1 else ():
            body = " ".join(sentences[:i] + sentences[i + 1 :])
            yield html[: m.start(2)] + body + html[m.end(2) :]


def _wide_pair() -> tuple[str, str, int]:
    """A real page and the same page with one sentence removed whose fingerprints are further apart
    than k but within the wide tier (found by its lookup, sketches alike): the first such pair."""
    fper = Fingerprinter()
    for _name, raw in _real_pages():
        html = raw.decode("utf-8", "replace")
        a = fper.fingerprint_page(html)
        if a.fallback is not None or a.sketch is None or filled(a.sketch) < WIDE_MIN_SLOTS:
            continue
        for edited in _one_sentence_edits(html):
            b = fper.fingerprint_page(edited)
            d = (a.fp ^ b.fp).bit_count()
            if not K < d <= WIDE or b.fallback is not None or b.sketch is None:
                continue
            if (
                LAYOUT.key_distance(a.fp.to_bytes(8, "big"), b.fp.to_bytes(8, "big")) <= 1
                and sketch_similarity(a.sketch, b.sketch) >= 0.8
            ):
                return html, edited, d
    raise AssertionError("no one-sentence edit of the real pages lies in the wide tier")


@pytest.mark.e2e
def test_crawl_drops_a_one_sentence_edit_and_keeps_pages_of_one_template(tmp_path: Path) -> None:
    page, edited, distance = _wide_pair()
    # two different articles of the demo site: one template, different text
    one, two = (demo.SITE_DIR / "news" / f"{n}.html" for n in ("storm-harbour", "library-seeds"))
    pages = {"page.html": page, "copy.html": edited, "one.html": one.read_text(), "two.html": two.read_text()}
    server = Pages(pages)
    try:
        runs = {}
        for wide in (WIDE, 0):
            log = tmp_path / f"pages-{wide}.jsonl"
            stats = demo.run_crawl(
                server.url("/index.html"),
                items_path=tmp_path / f"items-{wide}.jsonl",
                stats_path=tmp_path / f"stats-{wide}.json",
                page_log=log,
                settings={
                    "SIMHASH_DIR": str(tmp_path / f"simhash-{wide}"),
                    "SIMHASH_WIDE_DISTANCE": wide,
                    "CONCURRENT_REQUESTS": 1,
                    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
                },
                timeout=120,
            )
            verdicts = {line["url"].rsplit("/", 1)[1]: line for line in demo.read_jsonl(log)}
            runs[wide] = stats, verdicts
    finally:
        server.stop()
    stats, verdicts = runs[WIDE]
    first, second = (
        ("page.html", "copy.html") if verdicts["page.html"]["verdict"] == "new" else ("copy.html", "page.html")
    )
    assert verdicts[first]["verdict"] == "new"
    assert verdicts[second]["verdict"] == "near_duplicate"
    assert verdicts[second]["distance"] == distance
    assert verdicts[second]["duplicate_of"].endswith(first)
    assert stats.get("simhash/duplicate/wide") == 1
    assert verdicts["one.html"]["verdict"] == verdicts["two.html"]["verdict"] == "new"
    stats, verdicts = runs[0]  # the tier off: today's verdicts, both pages kept
    assert [verdicts[n]["verdict"] for n in pages] == ["new"] * 4
    assert "simhash/duplicate/wide" not in stats
