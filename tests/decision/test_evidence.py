"""A drop needs evidence: bounded extraction (deep, huge, slow pages), what short and template-only
pages get, site templates learned from the crawl, and the middleware never dropping on template alone."""

from __future__ import annotations

import importlib
import random
import time
import types
from pathlib import Path
from typing import Any

import pytest
from helpers.pages import EN_ARTICLES, make_response, run
from hypothesis import given, settings
from hypothesis import strategies as st

import scrapy_simhash
from scrapy_simhash.decision import CHANGED, NEW, UNCHANGED
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.simhash import Fingerprinter, hamming, hash_cache
from scrapy_simhash.fingerprint.templates import (
    HostTemplate,
    IndexTemplateStore,
    MemoryTemplateStore,
    SiteTemplates,
    host_of,
    line_key,
)
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord, visible_key
from scrapy_simhash.text.cache import SizedCache
from scrapy_simhash.text.extract import MAX_ELEMENTS, extract

extract_module = importlib.import_module("scrapy_simhash.text.extract")  # the package exports a function of this name
templates_module = importlib.import_module("scrapy_simhash.fingerprint.templates")
blocks_module = importlib.import_module("scrapy_simhash.text.blocks")
native_module = importlib.import_module("scrapy_simhash.text.native")

ARTICLES = [" ".join(paras) for _, paras in EN_ARTICLES.values()]
FOOTER = (
    "Django is a registered trademark of the Django Software Foundation. Hosting is donated by "
    "a kind sponsor, and the documentation is written by hundreds of volunteers around the world; "
    "please consider a donation so that the project can keep its servers, its events and its fellows."
)
SIDEBAR = "".join(f'<li><a href="/topic/{i}">Topic number {i} of the guide</a></li>' for i in range(30))


def doc_page(title: str, body: str, site: str = "Example 3.2 documentation", landmark: bool = True) -> str:
    """A documentation page: sidebar, the body (in a role="main" element, or not), and a footer
    paragraph in no chrome tag or class."""
    role = ' role="main"' if landmark else ""
    return f"""<html><head><title>{title} — {site}</title></head><body>
<div class="sphinxsidebar"><ul>{SIDEBAR}</ul></div>
<div class="document"><div class="body"{role}><h1>{title}<a class="headerlink" href="#">¶</a></h1>
{body}</div></div>
<div class="end"><p>{FOOTER}</p></div></body></html>"""


NAMES = "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike".split()


FP = Fingerprinter()


# --------------------------------------------------------------------------- bounded extraction


def test_two_articles_behind_3000_unclosed_divs_are_not_near_duplicates():
    deep = "<html><head><title>Deep</title></head><body>" + "<div class=wrap>" * 3000
    a, b = (extract(deep + f"<p>{text}</p></body></html>") for text in ARTICLES[:2])
    assert a.method == b.method == "deep"
    assert ARTICLES[0][:200] in a.text and ARTICLES[1][:200] in b.text
    fa, fb = (FP.fingerprint_html(deep + f"<p>{text}</p></body></html>") for text in ARTICLES[:2])
    assert hamming(fa, fb) > 10


def test_a_page_of_250000_br_separated_words_takes_the_regex_path():
    rng = random.Random(7)
    words = [f"{rng.choice('bcdfg')}{rng.choice('aeiou')}{rng.choice('lmnrst')}" for _ in range(250_000)]
    page = "<html><head><title>Words</title></head><body>" + "<br>".join(words) + "</body></html>"
    doc = extract(page)
    assert doc.method == "large" and doc.title == "Words"
    assert doc.text.split("\n")[:3] == words[:3]
    assert MAX_ELEMENTS < 250_000
    assert FP.fingerprint_page(page).method == "large"


def test_a_walk_past_its_time_budget_falls_back_to_the_regex_text():
    page = "<html><body>" + "".join(f"<p>paragraph {i} of a long page</p>" for i in range(10_000)) + "</body></html>"
    doc = extract(page, time_budget=1e-9)
    assert doc.method == "budget"
    assert "paragraph 9999 of a long page" in doc.text
    assert extract(page).method != "budget"  # no budget: walked
    assert "extract/budget" in Fingerprinter(time_budget=1e-9).fingerprint_page(page).stats()
    with pytest.raises(ValueError, match="time_budget"):
        Fingerprinter(time_budget=-1)


def _clock_readers() -> list[types.ModuleType]:
    """Every module of the layers a page's fingerprint runs through that reads the clock."""
    readers = []
    for layer in ("text", "fingerprint"):
        for path in sorted((Path(scrapy_simhash.__file__).parent / layer).glob("*.py")):
            if "time." in path.read_text(encoding="utf-8"):
                module = importlib.import_module(f"scrapy_simhash.{layer}.{path.stem}".removesuffix(".__init__"))
                if getattr(module, "time", None) is time:
                    readers.append(module)
    return readers


def test_the_default_fingerprint_does_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's fingerprint is the same on a loaded machine: with the default settings no clock
    decides anything (the work caps do). Here every clock reading of every module that reads one
    is 1,000 s after the last, so the opt-in budget is spent at its first check whatever the load."""
    page = "<html><body>" + "".join(f"<p>paragraph {i} of a long page</p>" for i in range(10_000)) + "</body></html>"
    quiet = Fingerprinter().fingerprint_page(page)
    readings = iter(range(0, 10**9, 1000))
    clock = types.SimpleNamespace(perf_counter=lambda: float(next(readings)))
    readers = _clock_readers()
    assert {m.__name__.rsplit(".", 1)[1] for m in readers} >= {"extract", "blocks", "native"}
    for module in readers:
        monkeypatch.setattr(module, "time", clock)
    loaded = Fingerprinter().fingerprint_page(page)
    assert (loaded.fp, loaded.method, loaded.sketch) == (quiet.fp, quiet.method, quiet.sketch)
    assert quiet.method != "budget" and next(readings) > 0  # the clock was there to be read
    for native in (False, True):  # opt-in: it decides (the native walk is handed a budget already spent)
        assert Fingerprinter(time_budget=5.0, native=native).fingerprint_page(page).method == "budget"


def test_a_huge_inline_script_does_not_push_the_article_past_the_cut():
    script = "<script>var x = '" + "a" * 10_000_000 + "';</script>"
    page = f"<html><head>{script}</head><body><p>{ARTICLES[0]}</p></body></html>".encode()
    assert ARTICLES[0][:300] in extract(page).text


def test_caches_are_bounded_in_characters():
    cache = SizedCache(max_entries=1000, max_chars=10_000)
    for i in range(100):
        cache.put(f"{i:04d}" + "x" * 996, True)
        assert cache.chars <= 10_000 and len(cache) <= 10
    hashes = hash_cache("blake2b", 64)
    long_tokens = " ".join(f"{i:05d}".translate(str.maketrans("0123456789", "abcdefghij")) * 200 for i in range(3000))
    FP.fingerprint_text(long_tokens)
    assert hashes.data.chars <= hashes.data.max_chars


# --------------------------------------------------------------------------- what a page gets


def test_the_page_title_is_its_own_not_the_site_name():
    page = doc_page("Models", "<p>" + ARTICLES[0] + "</p>", site="Django 3.2 documentation")
    assert extract(page).title == "Models"


def test_an_index_page_is_its_list_and_two_index_pages_differ():
    def index(letter: str) -> str:
        entries = "".join(
            f'<li><a href="/{letter}{i}">{letter}entry{i} (module {letter}{i * 7})</a></li>' for i in range(60)
        )
        return doc_page(f"Index {letter}", f"<h2>{letter}</h2><ul>{entries}</ul>")

    a, b = extract(index("A")), extract(index("B"))
    assert a.method == b.method == "list" and "Aentry59" in a.text and "Bentry0" in b.text
    assert FOOTER not in a.text
    assert hamming(FP.fingerprint_html(index("A")), FP.fingerprint_html(index("B"))) > 10


def test_short_text_gets_an_exact_hash_and_only_identical_pages_match():
    soft404 = "<html><body><nav><a href=/>Home</a></nav><h1>Not found</h1><p>Sorry, no such page.</p></body></html>"
    other = soft404.replace("no such page", "no such file")
    a, b = FP.fingerprint_page(soft404, "http://x.test/a"), FP.fingerprint_page(soft404, "http://x.test/b")
    c = FP.fingerprint_page(other, "http://x.test/c")
    assert a.fallback == "short" and a.stats()[0] == "fallback/short"
    assert a.fp == b.fp and hamming(a.fp, c.fp) > 10


def test_a_short_kept_text_shared_by_different_pages_does_not_make_them_match():
    """Seen on Boost's documentation: two acknowledgement pages whose kept text was only the
    licence line got one exact hash and one was dropped. The exact hash covers the whole visible
    page, so only identical pages match."""
    licence = (
        "Distributed under the Boost Software License, Version 1.0. (See accompanying file "
        "LICENSE_1_0.txt or copy at http://www.boost.org/LICENSE_1_0.txt)"
    )

    def page(thanks: str) -> str:
        return (
            f"<html><head><title>Acknowledgements</title></head><body>"
            f"<div class=sidebar><p>{thanks}</p></div><main><p>{licence}</p></main></body></html>"
        )

    a = FP.fingerprint_page(page("Thanks to Ada and Grace, who reviewed the array library twice."), "http://x.test/a")
    b = FP.fingerprint_page(
        page("Thanks to Edsger and Barbara for the heap's priority queue tests."), "http://x.test/b"
    )
    again = FP.fingerprint_page(
        page("Thanks to Ada and Grace, who reviewed the array library twice."), "http://x.test/c"
    )
    assert a.fallback == b.fallback == "short"
    assert licence.split()[0] in a.visible and "Ada" in a.visible
    assert a.fp != b.fp and hamming(a.fp, b.fp) > 10
    assert a.fp == again.fp  # the same page under another URL still matches
    assert FP.fingerprint_html(page("Thanks to Ada and Grace, who reviewed the array library twice.")) == a.fp


# --------------------------------------------------------------------------- site templates


def test_template_lines_are_learned_per_host_and_bounded():
    tpl = SiteTemplates(min_pages=3, max_lines=50)
    for i in range(5):
        tpl.observe(f"http://a.test/p{i}", ["Site footer 2024", f"own line {NAMES[i]}", "Menu"])
    lines = ["Site footer 2031", "own line alpha", "Menu", "new"]
    assert tpl.template_lines("http://a.test/x", lines) == {"Site footer 2031", "Menu"}  # digits ignored
    assert tpl.template_lines("http://b.test/x", lines) == set()  # another host
    for i in range(200):
        tpl.observe("http://a.test/q", [f"unique {chr(97 + i % 26)}{chr(97 + i // 26)}", "Menu"])
    assert len(tpl._hosts["a.test"].counts) <= 50
    assert "Menu" in tpl.template_lines("http://a.test/x", lines)  # the most frequent lines stay
    mirrored = SiteTemplates(min_pages=3)
    for i in range(10):  # one page under ten URLs (tracking parameters): counted once
        mirrored.observe(f"http://c.test/p?utm={i}", ["the page's own text"], fp=12345)
    assert mirrored.template_lines("http://c.test/p", ["the page's own text"]) == set()


def test_the_tracker_teaches_its_templates_every_page_but_an_unchanged_refetch():
    """What a crawl's decision shows the site templates: each new, changed or duplicate page once,
    under its URL's host; an unchanged refetch in a later crawl (its own text again) never."""
    tracker = ChangeTracker(SimhashIndex(max_distance=3))
    store = MemoryTemplateStore()
    tracker.templates = SiteTemplates(store, min_pages=2)
    fp = 0x0123_4567_89AB_CDEF
    page = PageFingerprint.of(fp, visible="Own text of the page\nSite footer")
    url = "http://a.test/p"
    assert tracker.observe("k1", page, 1.0, url=url).verdict == NEW
    tracker.templates.flush()
    tracker.templates = tpl = SiteTemplates(store, min_pages=2)  # the next crawl
    assert tracker.observe("k1", page, 2.0, url=url).verdict == UNCHANGED
    assert tpl.template_lines(url, ["Own text of the page"]) == set()  # counted once, not twice
    moved = PageFingerprint.of(fp ^ 0xFFFF_0000_0000_0000, visible="Other text\nSite footer")
    assert tracker.observe("k1", moved, 3.0, url=url).verdict == CHANGED
    assert tpl.template_lines(url, ["Site footer", "Other text"]) == {"Site footer"}  # seen on two pages
    assert tpl.template_lines("http://b.test/p", ["Site footer"]) == set()  # learned per host


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.integers(0, 2**64 - 1) | st.integers(0, 40), st.integers(1, 9) | st.integers(1, 3), max_size=120
    ),
    st.integers(0, 130),
)
def test_a_full_host_keeps_its_most_seen_lines_as_a_sort_would(counts: dict[int, int], n: int) -> None:
    """``_most_seen`` (what a host keeps when it has too many lines) keeps what sorting every
    line by (fewest pages last, then key) and cutting at ``n`` keeps, counts and all."""
    expected = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
    kept = templates_module._most_seen(counts, n)
    assert kept == expected
    # Stored the same whatever the order the lines were kept in: by key.
    entries = b"".join(templates_module._ENTRY.pack(k, c) for k, c in sorted(expected.items()))
    assert HostTemplate(7, kept).to_bytes() == templates_module._HEADER.pack(b"SHT1", 7, len(expected)) + entries


def test_line_keys_of_seen_and_new_lines_are_line_key():
    """``line_keys`` over lines keyed before (the cache), new ones, blank ones and repeats gives
    :func:`line_key` of each, in order, and after the cache is emptied midway."""
    seen = [f"Seen line {NAMES[i % len(NAMES)]} {i}" for i in range(5)]
    templates_module.line_keys(seen)
    lines = [seen[0], "Brand Ｎｅｗ line 12", "", seen[3], "brand new line 7", seen[0], "  ", "Ünïcode line"]
    expected = [line_key(line) for line in lines]
    assert templates_module.line_keys(lines) == expected
    templates_module._KEYS.clear()
    assert templates_module.line_keys(lines) == expected
    assert templates_module.line_keys([]) == []


def test_templates_are_stored_and_read_back_and_bad_bytes_are_counted():
    store = MemoryTemplateStore()
    tpl = SiteTemplates(store, min_pages=2, save_every=1000)
    for i in range(3):
        tpl.observe(f"http://a.test/{i}", ["shared", f"own {NAMES[i]}"])
    assert store.data == {}
    tpl.flush()
    again = SiteTemplates(store, min_pages=2)
    assert again.template_lines("http://a.test/z", ["shared", "own bravo"]) == {"shared"}
    raw = store.data["a.test"]
    assert HostTemplate.from_bytes(raw).to_bytes() == raw
    store.data["b.test"] = b"junk"
    assert again.template_lines("http://b.test/", ["shared"]) == set()
    assert again.unreadable == 1
    assert host_of("https://User@Docs.Example.org:8080/a?b") == "docs.example.org:8080"
    assert line_key("Ｍｅｎｕ 12") == line_key("menu  7")


class _FailingIndex:
    """An AuxBlobs (what IndexTemplateStore reads and writes) whose disk is gone."""

    def get_aux(self, name: str) -> bytes | None:
        raise OSError("disk gone")

    def put_aux(self, name: str, value: bytes | None) -> None:
        raise OSError("disk gone")


def test_a_failing_template_store_is_counted_and_learning_goes_on():
    tpl = SiteTemplates(IndexTemplateStore(_FailingIndex()), min_pages=2, save_every=1)
    for i in range(3):
        tpl.observe(f"http://a.test/{i}", ["shared", f"own {i}"])
    assert tpl.template_lines("http://a.test/", ["shared"]) == {"shared"}
    assert tpl.store_errors >= 3


def _site_page(i: int) -> tuple[str, str]:
    """Page ``i`` of one site with no content landmark: pages 0-2 are articles; the others are
    stubs, the site's template and one line of their own (so the footer paragraph is their
    longest text)."""
    if i < 3:
        return f"http://docs.test/a{i}", doc_page(f"Article {NAMES[i]}", f"<p>{ARTICLES[i]}</p>", landmark=False)
    name = NAMES[i]
    return f"http://docs.test/p{i}", doc_page(f"Stub {name}", f"<p>Stub {name} has one line.</p>", landmark=False)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 11), min_size=4, max_size=40))
def test_a_page_refetched_unchanged_keeps_its_verdict_input_while_its_site_is_learned(order: list[int]):
    """Interleaved fetches of the pages of one host, learning after each: every refetch of a page
    gives the fingerprint of its first fetch, and template learning only ever takes evidence away."""
    tpl = SiteTemplates(min_pages=3)
    first: dict[int, Any] = {}
    for i in order:
        url, page = _site_page(i)
        got = FP.fingerprint_page(page, url, templates=tpl)
        if i in first:
            assert got.fp == first[i].fp
            assert got.fallback in (first[i].fallback, "template")
        else:
            first[i] = got
            tpl.observe(url, got.visible.split("\n"), got.fp)  # as the middleware: not refetches
        if i < 3:
            assert got.may_match  # an article is never template-only


def test_a_stub_page_is_template_only_once_its_site_is_learned():
    tpl = SiteTemplates(min_pages=3)
    for i in range(3, 10):
        url, page = _site_page(i)
        tpl.observe(url, FP.fingerprint_page(page, url).visible.split("\n"))
    url, page = _site_page(11)
    got = FP.fingerprint_page(page, url, templates=tpl)
    assert got.fallback == "template" and not got.may_match and "fallback/template" in got.stats()
    assert got.fp == FP.fingerprint_page(page, url).fp  # the fingerprint does not depend on it


def test_middleware_never_drops_a_page_whose_text_is_its_site_template(make_mw: Any):
    """Stubs that share a long footer and differ by one line: without template evidence some would
    be near-duplicates of each other; with it, none is, while a real copy of an article still is."""
    mw = make_mw()
    verdicts = []
    for i in range(3, 13):
        url, page = _site_page(i)
        response = make_response(url, page)
        run(mw, response, [{"i": i}])
        verdicts.append(response.meta["simhash_verdict"])
    # The first pages of a host are judged before anything is learned (DEFAULT_MIN_PAGES = 6):
    # stubs whose longest text is the shared footer may match then; never afterwards.
    assert "near_duplicate" not in verdicts[7:]
    stats = mw.crawler.stats
    assert stats.get_value("simhash/fallback/template", 0) >= 4
    url, page = _site_page(0)
    run(mw, make_response(url, page))
    copy = make_response("http://docs.test/mirror/a0", page)
    assert run(mw, copy, [{"i": 0}]) == []
    assert copy.meta["simhash_verdict"] == "near_duplicate"


def test_an_exact_copy_of_a_template_only_page_is_its_near_duplicate(make_mw: Any):
    """A template-only page is never indexed, so the index cannot find its copy under another URL;
    its kept evidence (``shortcopy``) does: the exact copy and the print view without the site's
    navigation are dropped, another stub of the site (one line of its own differs) is not."""
    mw = make_mw()
    for i in range(3, 12):
        url, page = _site_page(i)
        run(mw, make_response(url, page), [{"i": i}])
    stats = mw.crawler.stats
    assert stats.get_value("simhash/fallback/template", 0) >= 3  # p9, p10, p11: after 6 pages were learned
    url, page = _site_page(11)
    copy = make_response("http://docs.test/mirror/p11", page)
    assert run(mw, copy, [{"i": 11}]) == []
    assert copy.meta["simhash_verdict"] == "near_duplicate"
    assert copy.meta["simhash_duplicate_of"] == url
    print_view = page.replace(f"<ul>{SIDEBAR}</ul>", "<p>Printed from http://docs.test/p11</p>")
    printed = make_response("http://docs.test/print/p11", print_view)
    assert run(mw, printed, [{"i": 11}]) == []
    assert printed.meta["simhash_verdict"] == "near_duplicate"
    assert stats.get_value("simhash/duplicate/template_copy") == 2
    url, page = _site_page(12)  # template-only too, with a line of its own that p11 lacks
    other = make_response(url, page)
    assert run(mw, other, [{"i": 12}]) == [{"i": 12}]
    assert other.meta["simhash_verdict"] == "new"


def test_a_copy_of_a_page_kept_before_its_site_was_learned_is_its_near_duplicate(make_mw: Any):
    """A stub kept as an ordinary, indexed page before its site's template was learned, and its
    exact copy (another URL, the same visible text) fetched after, when the copy is template-only:
    the copy is the stub's near-duplicate by the visible text both records keep (not by the
    template-only page's fingerprint, which may not decide); a copy with one line of its own is not."""
    mw = make_mw()
    first_url, first_page = _site_page(3)
    first = make_response(first_url, first_page)
    run(mw, first, [{"i": 3}])
    assert first.meta["simhash_verdict"] == "new"
    stats = mw.crawler.stats
    assert stats.get_value("simhash/fallback/template", 0) == 0  # nothing learned yet: indexed
    for i in range(4, 12):
        url, page = _site_page(i)
        run(mw, make_response(url, page), [{"i": i}])
    learned = stats.get_value("simhash/fallback/template", 0)
    assert learned >= 3
    copy = make_response("http://docs.test/mirror/p3", first_page)
    assert run(mw, copy, [{"i": 3}]) == []
    assert stats.get_value("simhash/fallback/template") == learned + 1  # the copy is template-only
    assert copy.meta["simhash_verdict"] == "near_duplicate"
    assert copy.meta["simhash_duplicate_of"] == first_url
    assert stats.get_value("simhash/duplicate/template_copy") == 1
    more = first_page.replace("has one line.</p>", "has one line.</p><p>And a footnote.</p>")
    other = make_response("http://docs.test/mirror2/p3", more)
    assert run(mw, other, [{"i": 3}]) == [{"i": 3}]
    assert other.meta["simhash_verdict"] == "new"


@pytest.mark.parametrize("store", ["memory", "lmdb", "redis"])
def test_the_visible_text_decides_an_exact_copy_of_an_indexed_page(store: str, tmp_path: Any, request: Any):
    """ChangeTracker: a page that may not match (template-only) is the near-duplicate of an indexed
    page within max_distance only when that page's record holds the same visible text (of the
    content it was indexed with); on each store."""
    if store == "lmdb":
        index = SimhashIndex.open(tmp_path / "idx")
    elif store == "redis":
        from scrapy_simhash.store.redisstore import RedisStore

        index = SimhashIndex(RedisStore(request.getfixturevalue("redis_server").url, str(tmp_path)))
    else:
        index = SimhashIndex()
    request.addfinalizer(index.close)
    tracker = ChangeTracker(index)
    fp = 0x1234_5678_9ABC_DEF0
    tracker.observe("http://a.test/kept", PageFingerprint.of(fp, visible="Stub\nshared footer"), 1.0)
    kept = PageRecord.parse(index.get_record("http://a.test/kept"))
    assert kept is not None
    assert kept.visible_key == visible_key("Stub\nshared footer")
    assert kept.updated(fp, 0, False).visible_key == kept.visible_key  # a 304: the same content
    assert kept.updated(fp ^ 1, 1, False).visible_key is None  # never the key of other content
    # (content keys of their own: a kept template-only page's copies are shortcopy's, tested above)
    args: dict[str, Any] = {"fallback": "template"}
    near = fp ^ 0b101  # within max_distance (3)
    copy = tracker.observe(
        "http://a.test/copy", PageFingerprint.of(near, visible="Stub\nshared footer", content_key=1, **args), 2.0
    )
    assert (copy.verdict, copy.duplicate_of, copy.distance) == ("near_duplicate", "http://a.test/kept", 2)
    other = tracker.observe(
        "http://a.test/other", PageFingerprint.of(fp, visible="Stub two\nshared footer", content_key=2, **args), 3.0
    )
    assert other.verdict == "new"
    far = tracker.observe(
        "http://a.test/far", PageFingerprint.of(fp ^ 0xF, visible="Stub\nshared footer", content_key=3, **args), 4.0
    )
    assert far.verdict == "new"  # not within max_distance: the index does not propose it
    tracker.observe(
        "http://a.test/kept", PageFingerprint.of(fp ^ (0xFF << 40), visible="Stub, rewritten\nshared footer"), 5.0
    )
    late = tracker.observe(
        "http://a.test/late", PageFingerprint.of(fp, visible="Stub\nshared footer", content_key=4, **args), 6.0
    )
    assert late.verdict == "new"  # the kept page holds other content now
