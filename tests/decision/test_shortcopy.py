"""Copies of short pages (``scrapy_simhash.decision.shortcopy``): a print view of a short page is dropped, two
different pages that share their content-like text are kept.

Store level (memory, LMDB, Redis): the pages ``ChangeTracker.observe`` drops are exactly the
brute-force ones: a short page is a copy of a kept short page with its content key when every one
of its visible lines is a line of the kept page (numbers aside) or names the kept page's path. End to end: a real
Scrapy crawl of pages served on 127.0.0.1.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.demo import Pages, demo
from helpers.stores import StoreKind

from scrapy_simhash.decision import shortcopy
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.fingerprint.templates import line_keys
from scrapy_simhash.store.index import SimhashIndex

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()
POOL = [f"{a} {b}" for a in WORDS[:6] for b in WORDS[6:]]
URL = "https://example.com/p{}.html"


def _page(rng: random.Random, i: int, kept: dict[int, tuple[int, int, list[str]]]) -> tuple[int, list[str]]:
    """A page's content key and visible lines: often some of a kept page's lines, sometimes with a
    line that names a page or a line of the pool, sometimes with a line of its own."""
    if kept and rng.random() < 0.7:
        j = rng.choice(list(kept))
        theirs = kept[j][2]
        lines = rng.sample(theirs, rng.randint(1, len(theirs)))
        if rng.random() < 0.5:
            lines.append(f"Printed from /p{rng.choice((j, rng.choice(list(kept))))}.html")
        if rng.random() < 0.2:
            lines.append(rng.choice(POOL))
        content_key = kept[j][1] if rng.random() < 0.8 else rng.randint(1, 3)
    else:
        lines = rng.sample(POOL, rng.randint(1, 8))
        content_key = rng.randint(1, 3)
    if rng.random() < 0.2:
        lines.append(f"own line {WORDS[i % len(WORDS)]} {WORDS[(i // len(WORDS)) % len(WORDS)]}")
    return content_key, lines


def _digits_as_0(line: str) -> str:
    return re.sub(r"\d+", "0", line)


def test_tracker_drops_exactly_the_brute_force_copies(kind: StoreKind, tmp_path: Path) -> None:
    rng = random.Random(5)
    index = SimhashIndex(kind.make(tmp_path / "s"), max_distance=3, max_candidates=0)
    tracker = ChangeTracker(index)
    kept: dict[int, tuple[int, int, list[str]]] = {}  # page number -> (fp, content key, lines)
    dropped = 0
    for i in range(250):
        content_key, lines = _page(rng, i, kept)
        fp = rng.getrandbits(64) | 1
        verdict = tracker.observe(
            URL.format(i),
            PageFingerprint.of(fp, fallback="short", content_key=content_key, visible="\n".join(lines)),
            now=1000.0 + i,
        )
        expected: tuple[str, str | None] = (NEW, None)
        same_key = [j for j, (_, ck, _) in kept.items() if ck == content_key][-shortcopy.MAX_URLS :]
        named = [j for j in kept if f"Printed from /p{j}.html" in lines and j not in same_key]
        for j in same_key + named:  # a line that names a kept page proposes it too
            theirs = {_digits_as_0(line) for line in kept[j][2]}  # numbers count for nothing, as in the hash
            if all(_digits_as_0(line) in theirs or line == f"Printed from /p{j}.html" for line in lines):
                expected = (NEAR_DUPLICATE, URL.format(j))
                break
        assert (verdict.verdict, verdict.duplicate_of) == expected, i
        if expected[0] == NEW:
            kept[i] = (fp, content_key, lines)
            assert index.get(URL.format(i)) == fp
        else:
            dropped += 1
            assert expected[1] is not None
            assert verdict.distance == (fp ^ kept[int(expected[1][21:-5])][0]).bit_count()
            assert index.get(URL.format(i)) is None
    assert dropped > 30 and len(kept) > 30
    index.close()


def test_a_kept_page_that_changed_is_no_candidate_and_a_page_with_more_lines_is_no_copy() -> None:
    index = SimhashIndex()
    tracker = ChangeTracker(index)
    full = "Menu\nThe concurrent package\nOne module: futures.\nFooter"
    printed = "The concurrent package\nOne module: futures.\nPrinted from /concurrent.html"
    a, b = "https://x.test/concurrent.html", "https://x.test/print/concurrent.html"

    def short(key: str, fp: int, visible: str) -> str:
        return tracker.observe(key, PageFingerprint.of(fp, fallback="short", content_key=7, visible=visible)).verdict

    # a print view of another page first: the full page has lines it lacks, so it is kept
    assert short(b, 0x0F0F_0000_0000_0000, printed.replace("/concurrent.html", "/elsewhere.html")) == NEW
    assert short(a, 0x00F0_F000_0000_0000, full) == NEW
    index.remove(b)  # b is no candidate any more: its fingerprint left the index
    assert (
        tracker.observe(
            "https://x.test/c", PageFingerprint.of(0x0000_0F0F_0000_0000, fallback="short", visible=printed)
        ).verdict
        == NEW
    )
    assert short("https://x.test/d", 0x0000_0000_F0F0_0000, printed) == NEAR_DUPLICATE  # of a
    # a refetched with other content (no longer short): its evidence is stale, so no drop
    assert tracker.observe(a, PageFingerprint.of(0x0000_0000_0F0F_0000)).verdict == "changed"
    assert short("https://x.test/e", 0x0000_0000_0000_F0F0, printed) == NEW


def test_the_full_page_after_its_print_view_is_its_copy(kind: StoreKind, tmp_path: Path) -> None:
    """The print view kept first: the full page it names, with the same content-like text and
    every line of the print view but its pointer, is dropped as its copy (it adds only navigation
    and a footer); a page that the print view does not name, or that lacks one of its lines, is
    kept, and a pointer that is no line of the kept page names nothing."""
    index = SimhashIndex(kind.make(tmp_path / "s"), max_distance=3, max_candidates=0)
    tracker = ChangeTracker(index)
    printed = "The concurrent package\nOne module: futures.\nPrinted from /concurrent.html"
    full = "Menu\nThe concurrent package\nOne module: futures.\nFooter"
    base = "https://x.test/"

    def short(path: str, fp: int, visible: str) -> tuple[str, str | None]:
        verdict = tracker.observe(base + path, PageFingerprint.of(fp, fallback="short", content_key=7, visible=visible))
        return verdict.verdict, verdict.duplicate_of

    assert short("print/concurrent.html", 0x0F0F_0000_0000_0000, printed) == (NEW, None)
    assert short("other.html", 0x00F0_0000_0000_0000, full) == (NEW, None)  # not the page it names
    index.remove(base + "other.html")
    assert short("concurrent.html?a=1", 0x0000_F000_0000_0000, "Menu\nThe concurrent package") == (NEW, None)
    index.remove(base + "concurrent.html?a=1")
    assert short("concurrent.html", 0x0000_0F00_0000_0000, full) == (NEAR_DUPLICATE, base + "print/concurrent.html")
    index.close()
    # a pointer that is no line of the kept page (any more) names nothing
    lines, pointer = full.split("\n"), printed.rsplit("\n", 1)[1]
    keys = np.array(sorted(line_keys(printed.split("\n"))), dtype="<u8")
    assert shortcopy.is_print_of(lines, base + "concurrent.html", keys, [pointer])
    assert not shortcopy.is_print_of(lines, base + "concurrent.html", keys[keys != line_keys([pointer])[0]], [pointer])


def test_a_print_view_with_another_content_key_is_found_by_the_page_it_names() -> None:
    """A print view without its page's header line ("Part I. Tutorial": another content key) is
    proposed by the page its pointer names, and dropped when its lines are that page's; one with
    a line of its own is kept."""
    index = SimhashIndex()
    tracker = ChangeTracker(index)
    full = "Part I. Tutorial\nChapter 2. The SQL Language\nTable of Contents\n2.1. Introduction"
    printed = "Chapter 2. The SQL Language\nTable of Contents\n2.1. Introduction\nPrinted from /tutorial-sql.html"

    def short(path: str, fp: int, content_key: int, visible: str) -> tuple[str, str | None]:
        page = PageFingerprint.of(fp, fallback="short", content_key=content_key, visible=visible)
        verdict = tracker.observe("https://pg.test/" + path, page)
        return verdict.verdict, verdict.duplicate_of

    assert short("tutorial-sql.html", 0x0F0F_0000_0000_0000, 7, full) == (NEW, None)
    assert short("print/a.html", 0x00F0_0000_0000_0000, 9, printed + "\n2.2. Concepts") == (NEW, None)
    assert short("print/tutorial-sql.html", 0x0000_F000_0000_0000, 8, printed) == (
        NEAR_DUPLICATE,
        "https://pg.test/tutorial-sql.html",
    )
    assert shortcopy.named_urls(
        ["Printed from /a/b.html.", "See /c.html for the rest of the chapter"], "https://h.test/x/y"
    ) == ["https://h.test/a/b.html"]


def test_names_page() -> None:
    assert shortcopy.names_page("Printed from /library/concurrent.html", "http://h:80/library/concurrent.html")
    assert shortcopy.names_page("Retrieved from HTTP://H/a%20b.html", "http://h/a b.html")
    assert not shortcopy.names_page("Printed from /library/concurrent.html", "http://h/library/")
    assert not shortcopy.names_page("Home", "http://h/")  # the root path names nothing


# -- end to end ---------------------------------------------------------------------------------

_NAV = "<nav><ul>" + "".join(f"<li><a href='/index.html'>Chapter {w}</a></li>" for w in WORDS[:8]) + "</ul></nav>"
_LICENCE = (
    "Distributed under the Boost Software License, Version 1.0. (See accompanying file "
    "LICENSE_1_0.txt or copy at http://www.boost.org/LICENSE_1_0.txt)"
)


def _doc(title: str, main: str, sidebar: str = "", nav: str = _NAV, after: str = "") -> str:
    side = f"<div class=sidebar><p>{sidebar}</p></div>" if sidebar else ""
    footer = "<footer>Copyright the authors. Built with Sphinx.</footer>" if nav else ""
    return (
        f"<html><head><title>{title} — Docs</title></head><body>{nav}{side}"
        f"<main><h1>{title}</h1>{main}</main>{footer}{after}</body></html>"
    )


@pytest.mark.e2e
def test_crawl_drops_the_print_view_of_a_short_page_and_keeps_the_boost_like_pair(tmp_path: Path) -> None:
    body = "<p>Currently, there is only one module in this package: futures, for launching parallel tasks.</p>"
    pages = {
        "concurrent.html": _doc("The concurrent package", body + "<p><a href='/print/concurrent.html'>Print</a></p>"),
        "print/concurrent.html": _doc(
            "The concurrent package", body, nav="", after="<p>Printed from /concurrent.html</p>"
        ),
        "ack-a.html": _doc("Acknowledgements", f"<p>{_LICENCE}</p>", "Thanks to Ada and Grace, who reviewed it twice."),
        "ack-b.html": _doc("Acknowledgements", f"<p>{_LICENCE}</p>", "Thanks to Edsger and Barbara for the tests."),
    }
    fper = Fingerprinter()
    got = {name: fper.fingerprint_page(html, f"http://h/{name}") for name, html in pages.items()}
    assert all(p.fallback == "short" for p in got.values())
    # the premises: print view and Boost pair share their content key, not their exact hash
    assert got["ack-a.html"].content_key == got["ack-b.html"].content_key is not None
    assert got["concurrent.html"].fp != got["print/concurrent.html"].fp
    server = Pages(pages)
    try:
        log = tmp_path / "pages.jsonl"
        stats = demo.run_crawl(
            server.url("/index.html"),
            items_path=tmp_path / "items.jsonl",
            stats_path=tmp_path / "stats.json",
            page_log=log,
            settings={
                "SIMHASH_DIR": str(tmp_path / "simhash"),
                "CONCURRENT_REQUESTS": 1,
                "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
            },
            timeout=120,
        )
        verdicts = {line["url"].split("/", 3)[3]: line for line in demo.read_jsonl(log)}
    finally:
        server.stop()
    assert verdicts["concurrent.html"]["verdict"] == "new"
    assert verdicts["print/concurrent.html"]["verdict"] == "near_duplicate"
    assert verdicts["print/concurrent.html"]["duplicate_of"].endswith("/concurrent.html")
    assert stats.get("simhash/duplicate/short_copy") == 1
    assert verdicts["ack-a.html"]["verdict"] == verdicts["ack-b.html"]["verdict"] == "new"


def test_a_print_line_in_the_content_like_text_leaves_the_content_key_as_it_was() -> None:
    """A short page whose print view's "Printed from /path" line is a content-like block (outside
    the content, not chrome: Haddock's print views) has its page's content key: the copy rule then
    finds it; another content-like line beside it still makes another key."""
    fp = Fingerprinter()
    body = (
        "<p>This module provides a small set of low-level functions for packing and unpacking bytes.</p>"
        "<p class='x'>The programmer level view of packed strings is a system library.</p>"
    )

    def page(extra: str) -> str:
        return (
            "<html><head><title>GHC.Pack</title></head><body><div id='package-header'>base: Basic libraries</div>"
            f"<div id='content'>{body}</div>{extra}</body></html>"
        )

    original = fp.fingerprint_page(page(""), "http://h.example/GHC-Pack.html")
    printed = fp.fingerprint_page(page("<p>Printed from /GHC-Pack.html</p>"), "http://h.example/print/GHC-Pack.html")
    other = fp.fingerprint_page(
        page("<p>Printed from the packing module, see also unpacking</p>"), "http://h.example/o"
    )
    assert original.fallback == printed.fallback == "short"
    assert "Printed from /GHC-Pack.html" in printed.visible
    assert printed.content_key == original.content_key
    assert other.content_key != original.content_key
    tracker = ChangeTracker(SimhashIndex())
    assert tracker.observe("http://h.example/GHC-Pack.html", original, now=1.0).verdict == NEW
    copy = tracker.observe("http://h.example/print/GHC-Pack.html", printed, now=1.0)
    assert (copy.verdict, copy.duplicate_of) == (NEAR_DUPLICATE, "http://h.example/GHC-Pack.html")
