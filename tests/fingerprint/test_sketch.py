"""The change sketch (sketch.py): its estimate against brute-force Jaccard, its determinism, its
place in the record and in the change decision (ChangeTracker, the middleware)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import replace

import pytest
from helpers.pages import EN_ARTICLES, OPTIONS_A, OPTIONS_B, make_response, options_page, run

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.simhash import Fingerprinter, hash_cache
from scrapy_simhash.fingerprint.sketch import (
    SKETCH_BYTES,
    STORED_BYTES,
    filled,
    sketch_similarity,
    sketch_tokens,
    stored,
)
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.text.extract import extract

TOKENS = "the quick brown fox jumps over the lazy dog <num> times 快速 的 狐狸".split()
#: The sketch of TOKENS: blake2b, splitmix64 and uint16 slots, the same on every machine.
GOLDEN = (
    "00000000000000000000b7cc0000000000007962552d00000000000000008ad1000000000000000000000000"
    "0000000000000000000049200000000000000000000063aa000000000000000000000000adb5000000000000"
    "e5ac000000000000dc4564de00000000000000000000000000000000000000000000000000000000"
)


def sketch(tokens: list[str]) -> bytes:
    return sketch_tokens(hash_cache("blake2b", 64).digests(tokens))


def shingles(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)}


def test_sketch_is_fixed_bytes_across_processes():
    assert sketch(TOKENS).hex() == GOLDEN and len(GOLDEN) == 2 * SKETCH_BYTES
    code = (
        "from scrapy_simhash.fingerprint.simhash import hash_cache; from scrapy_simhash.fingerprint.sketch import sketch_tokens; "
        f"print(sketch_tokens(hash_cache('blake2b', 64).digests({TOKENS!r})).hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == GOLDEN


def test_similarity_estimates_brute_force_jaccard():
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(3000)]
    errors = []
    for _ in range(60):
        base = rng.choices(vocabulary, k=rng.randint(300, 3000))
        cut = rng.randint(0, len(base) // 2)
        start = rng.randint(0, len(base) - cut)
        edited = base[:start] + base[start + cut :] + rng.choices(vocabulary, k=rng.randint(0, 200))
        a, b = shingles(base), shingles(edited)
        exact = len(a & b) / len(a | b)
        errors.append(abs(sketch_similarity(sketch(base), sketch(edited)) - exact))
    errors.sort()
    assert errors[len(errors) // 2] < 0.05 and errors[-1] < 0.2  # 64 slots: standard error <= 0.0625
    assert sketch_similarity(sketch(TOKENS), sketch(TOKENS)) == 1.0
    assert sketch_similarity(sketch(TOKENS), sketch([t + "x" for t in TOKENS])) == 0.0
    assert sketch_similarity(sketch([]), sketch([])) == 1.0
    assert sketch_similarity(sketch(["one"]), sketch(["one", "two"])) == 0.0  # under 3 words: one shingle
    with pytest.raises(ValueError, match="sketch has 128 bytes"):
        sketch_similarity(b"short", sketch(TOKENS))


LINES = [
    f"option {w} sets the {w} value"
    for w in "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()
]


def test_an_edit_outside_the_fingerprinted_text_moves_the_sketch_not_the_fingerprint():
    fper = Fingerprinter()
    before, after = fper.fingerprint_page(options_page(LINES)), fper.fingerprint_page(options_page(LINES[:6]))
    assert before.coverage < 0.75  # the list is not fingerprinted ...
    assert (before.fp ^ after.fp).bit_count() <= 3  # ... so the fingerprint barely moves
    assert before.sketch is not None and after.sketch is not None
    assert sketch_similarity(before.sketch, after.sketch) < 0.9
    digits = fper.fingerprint_page(options_page(LINES, stamp="2031-12-30"))  # numbers are normalised
    assert digits.sketch == before.sketch and digits.fp == before.fp


SECTIONS = [
    f"{n}. {a} {b}"
    for n, (a, b) in enumerate(
        (a, b)
        for a in "Tables Columns Constraints Schemas Privileges Indexes Views Triggers".split()
        for b in ("Basics", "Defaults", "Naming", "Storage", "Caveats")
    )
]


def chapter_page(sections: list[str], intro: str | None = None) -> str:
    """A chapter's hub page (DocBook, Sphinx): a short introduction beside its table of contents,
    a list of links to its sections that outweighs the introduction."""
    intro = intro or EN_ARTICLES["orchard"][1][0]
    toc = "".join(f'<dt><a href="s{i}.html">{s}</a></dt>' for i, s in enumerate(sections))
    return (
        "<html><head><title>Chapter 5. Data Definition</title></head><body>"
        '<div class=navheader><a href="prev.html">Prev</a> <a href="index.html">Home</a></div>'
        "<div class=chapter><h2>Chapter 5. Data Definition</h2><div class=toc><p><b>Table of Contents</b></p>"
        f"<dl>{toc}</dl></div><p>{intro}</p></div>"
        "<div class=navfooter><a href=next.html>Next</a></div></body></html>"
    )


def test_a_hub_page_that_loses_half_its_table_of_contents_is_changed():
    fper = Fingerprinter()
    before, after = fper.fingerprint_page(chapter_page(SECTIONS)), fper.fingerprint_page(chapter_page(SECTIONS[::2]))
    doc = extract(chapter_page(SECTIONS))
    assert doc.method == "main" and "Tables Basics" not in doc.text  # the introduction is the key ...
    assert "1. Tables Defaults" in doc.rest.splitlines()
    assert before.fp == after.fp  # ... so the fingerprint does not move
    assert before.sketch is not None and after.sketch is not None
    assert sketch_similarity(before.sketch, after.sketch) < 0.9  # the sketch sees the lost sections
    renumbered = [s.replace(s.split(".")[0], str(int(s.split(".")[0]) + 7), 1) for s in SECTIONS]
    assert fper.fingerprint_page(chapter_page(renumbered)).sketch == before.sketch  # numbers are normalised
    # An article with more text than links: a changed list of related links is no change.
    title, paragraphs = EN_ARTICLES["harbour"]
    article = "".join(f"<p>{p}</p>" for p in paragraphs)

    def news(related: list[str]) -> str:
        links = "".join(f'<li><a href="/n/{i}.html">{r}</a></li>' for i, r in enumerate(related))
        return f"<html><body><div class=story><h1>{title}</h1>{article}<ul>{links}</ul></div></body></html>"

    one, other = fper.fingerprint_page(news(SECTIONS[:8])), fper.fingerprint_page(news(SECTIONS[20:28]))
    assert one.sketch == other.sketch and one.fp == other.fp
    # A short article beside a sidebar's "most read" list that outweighs it: the list is another
    # container's, no part of the sketch (the same article under two states of the list is a copy).
    intro = " ".join(EN_ARTICLES["orchard"][1][:2])

    def short(hot: list[str]) -> str:
        links = "".join(f'<li><a href="/t/{i}.html">{h}</a></li>' for i, h in enumerate(hot))
        return (
            f"<html><body><table><tr><td><div><h1>Orchard</h1><p>{intro}</p></div></td>"
            f"<td><div><h3>Most read</h3><ul>{links}</ul></div></td></tr></table></body></html>"
        )

    one, other = fper.fingerprint_page(short(SECTIONS[:40])), fper.fingerprint_page(short(SECTIONS[::-1]))
    assert one.fallback is None and one.sketch == other.sketch and one.fp == other.fp


def test_the_record_keeps_the_sketch():
    record = PageRecord.first(0x1234_5678_9ABC_DEF0, now=10.0)
    with_sketch = replace(record, sketch=sketch(TOKENS))
    assert with_sketch.sketch is not None
    raw = with_sketch.to_bytes()
    # At 8 bits a slot: each slot's low byte, a filled slot whose low byte is 0 as 1.
    slots = [int.from_bytes(with_sketch.sketch[i : i + 2], "little") for i in range(0, SKETCH_BYTES, 2)]
    assert raw[-STORED_BYTES:] == bytes(0 if v == 0 else (v & 0xFF) or 1 for v in slots)
    assert len(raw) == len(record.to_bytes()) + STORED_BYTES
    assert PageRecord.from_bytes(raw) == replace(with_sketch, sketch=stored(with_sketch.sketch))
    assert PageRecord.from_bytes(record.to_bytes()).sketch is None
    assert with_sketch.updated(1, 40, True, now=11.0).sketch == with_sketch.sketch
    with pytest.raises(ValueError, match="not a page record"):
        PageRecord.from_bytes(raw[:-1])


def test_a_stored_sketch_compares_as_the_whole_one_at_8_bits():
    rng = random.Random(5)
    for _ in range(200):
        x = [
            rng.choice((0, 0x100, 0x200, 0x1FF, 0x2FF)) if rng.random() < 0.3 else rng.randrange(65536)
            for _ in range(64)
        ]
        y = [v if rng.random() < 0.5 else rng.randrange(65536) for v in x]
        a, b = (b"".join(v.to_bytes(2, "little") for v in vs) for vs in (x, y))
        cut = [[0 if v == 0 else (v & 0xFF) or 1 for v in vs] for vs in (x, y)]
        used = [i for i in range(64) if cut[0][i] or cut[1][i]]
        expected = sum(cut[0][i] == cut[1][i] for i in used) / len(used) if used else 1.0
        assert sketch_similarity(a, b) == sketch_similarity(stored(a), b) == sketch_similarity(stored(a), stored(b)) == expected
        assert filled(stored(a)) == filled(a) == sum(v != 0 for v in x) and stored(stored(a)) == stored(a)
    with pytest.raises(ValueError, match="a sketch has"):
        stored(bytes(65))
    with pytest.raises(ValueError, match="a sketch has"):
        filled(bytes(65))


def test_change_tracker_changed_by_the_sketch_alone():
    tracker = ChangeTracker(SimhashIndex(), change_threshold=3)
    fp = 0xF0F0_0000_0000_0000
    full, half = sketch([f"w{i}" for i in range(400)]), sketch([f"w{i}" for i in range(200)])
    assert tracker.observe("a", PageFingerprint.of(fp, sketch=full), now=1.0).verdict == "new"
    same = tracker.observe("a", PageFingerprint.of(fp ^ 1, sketch=full), now=2.0)
    assert same.record is not None and (same.verdict, same.record.sketch) == ("unchanged", stored(full))
    moved = tracker.observe("a", PageFingerprint.of(fp ^ 1, sketch=half), now=3.0)
    assert (moved.verdict, moved.distance) == ("changed", 0)  # the distance stays the fingerprint's
    assert moved.record is not None and moved.record.change_count == 1 and moved.record.last_changed == 3.0
    # a record without a sketch or a page without one: the fingerprint decides
    assert tracker.observe("a", PageFingerprint.of(fp ^ 1), now=4.0).verdict == "unchanged"
    assert tracker.observe("a", PageFingerprint.of(fp ^ 1, sketch=full), now=5.0).verdict == "unchanged"
    off = ChangeTracker(tracker.index, change_threshold=3, change_similarity=0.0)
    assert off.observe("a", PageFingerprint.of(fp ^ 1, sketch=half), now=6.0).verdict == "unchanged"
    with pytest.raises(ValueError, match="change_similarity"):
        ChangeTracker(tracker.index, change_similarity=1.5)


def test_middleware_counts_a_change_seen_by_the_sketch(make_mw):
    mw = make_mw()
    url = "https://docs.example.com/options.html"
    run(mw, make_response(url, options_page(LINES)))
    again = make_response(url, options_page(LINES, stamp="2025-06-30"))
    run(mw, again)
    assert again.meta["simhash_verdict"] == "unchanged"
    edited = make_response(url, options_page(LINES[:6]))
    item = {"a": 1}
    assert run(mw, edited, [item]) == [item]
    assert edited.meta["simhash_verdict"] == "changed" and edited.meta["simhash_distance"] <= 3
    stats = mw.crawler.stats
    assert stats.get_value("simhash/changed") == 1 and stats.get_value("simhash/changed/sketch") == 1
    off = make_mw(SIMHASH_CHANGE_SIMILARITY=0, SIMHASH_DIR=str(mw.path.parent.parent / "off"))
    run(off, make_response(url, options_page(LINES)))
    response = make_response(url, options_page(LINES[:6]))
    run(off, response)
    assert response.meta["simhash_verdict"] == "unchanged"


@pytest.mark.parametrize("value", [-0.1, 1.5, "x", True])
@pytest.mark.parametrize("name", ["SIMHASH_CHANGE_SIMILARITY", "SIMHASH_NEAR_SIMILARITY"])
def test_similarity_settings_are_validated(make_mw, name, value):
    with pytest.raises(ValueError, match=name):
        make_mw(**{name: value})


def test_middleware_keeps_a_page_whose_sketch_disagrees_with_its_match(make_mw):
    """Two pages whose fingerprinted part is one shared article but whose other content differs
    (two commands' manual pages sharing an option list, the other way round): within k, yet no
    near-duplicates (simhash/kept/unlike); a true copy of either is still dropped."""
    mw = make_mw()
    first = make_response("https://docs.example.com/a.html", options_page(OPTIONS_A))
    other = make_response("https://docs.example.com/b.html", options_page(OPTIONS_B))
    run(mw, first)
    assert run(mw, other, [{"b": 1}]) == [{"b": 1}]
    assert first.meta["simhash_fp"] == other.meta["simhash_fp"]  # distance 0: only the sketch tells them apart
    assert other.meta["simhash_verdict"] == "new" and other.meta["simhash_duplicate_of"] is None
    copy = make_response("https://mirror.example.com/b.html", options_page(OPTIONS_B, stamp="2025-02-02"))
    assert run(mw, copy, [{"c": 1}]) == []
    assert (copy.meta["simhash_verdict"], copy.meta["simhash_duplicate_of"]) == ("near_duplicate", other.url)
    stats = mw.crawler.stats
    assert stats.get_value("simhash/kept/unlike") == 1 and stats.get_value("simhash/new") == 2
    run(mw, make_response(other.url, options_page(OPTIONS_B)))  # refetched: unchanged, not unlike again
    assert stats.get_value("simhash/unchanged") == 1 and stats.get_value("simhash/kept/unlike") == 1
    off = make_mw(SIMHASH_NEAR_SIMILARITY=0, SIMHASH_KEEP_ADDS=0, SIMHASH_DIR=str(mw.path.parent.parent / "off"))
    run(off, make_response(first.url, options_page(OPTIONS_A)))
    again = make_response(other.url, options_page(OPTIONS_B))
    run(off, again)
    assert (again.meta["simhash_verdict"], again.meta["simhash_distance"]) == ("near_duplicate", 0)


def test_short_page_sketch_covers_its_content_not_its_chrome():
    """A short page's fingerprint is the exact hash of all its visible text (chrome included);
    its change sketch is its content's: an edit of the navigation alone moves the first only."""

    def page(nav: str) -> str:
        links = "".join(f'<li><a href="/{w}">{w} section</a></li>' for w in nav.split())
        return (
            f"<html><head><title>Opening hours</title></head><body><nav><ul>{links}</ul></nav>"
            "<main><h1>Opening hours</h1><p>The reading room opens at nine on weekdays.</p></main>"
            "<footer>Harbor City Library</footer></body></html>"
        )

    f = Fingerprinter()
    a = f.fingerprint_page(page("news events archive contact about"))
    b = f.fingerprint_page(page("news events archive contact about press jobs"))
    assert a.fallback == b.fallback == "short"
    assert a.fp != b.fp
    assert a.sketch is not None and a.sketch == b.sketch
