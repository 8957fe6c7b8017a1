"""``extract(html, tree=...)``: the page read from the lxml tree parsel built from the same text (a
spider's ``response.selector.root``) gives exactly the values of our own parse (title, text,
visible text, rest, method, coverage; fingerprints, change sketches, own text and verdicts), on both
walks; where it cannot (a page cut for its size, a CleanEval prefix, a tree cut at libxml2's depth
limit, comments that split counted text), the page is parsed again and ``Document.parse`` says why."""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers.data import load_pages
from parsel import Selector

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import simhash
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.text.blocks import Walker
from scrapy_simhash.text.charset import MAX_HTML_CHARS
from scrapy_simhash.text.native import HTML_WALKS, html_walker

ex = importlib.import_module("scrapy_simhash.text.extract")  # the package exports the function too

NATIVE = [False, True] if html_walker() is not None else [False]

ARTICLE = " ".join(
    f"Sentence {i} of the harbour report says the cranes were moved to the eastern quay." for i in range(12)
)


def parsel_tree(html: str) -> Any:
    """The tree a spider's ``response.css`` reads: parsel's, from the same text."""
    return Selector(text=html, type="html").root


def assert_same(html: str, native: bool, parse: str = "shared") -> None:
    own = ex.extract(html, native=native)
    shared = ex.extract(html, native=native, tree=parsel_tree(html))
    assert shared == ex.Document(**{**own.__dict__, "parse": parse})
    assert own.parse == "own"


@pytest.mark.parametrize("native", NATIVE)
def test_comments_pis_and_xml_declaration_are_skipped(native: bool) -> None:
    html = (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html><!-- top -->'
        "<html><head><title>Cranes <!-- not here --> - Harbour News</title></head><body>"
        "<nav><a href='/'>Home</a><!-- menu --><a href='/a'>Archive</a></nav>"
        f"<article><h1>Cranes<!-- x --> moved</h1><p>{ARTICLE}<?php echo 1 ?></p>"
        "<p>More<!-- split -->text in one run, <b>bold</b><!-- c --> and a tail.</p></article>"
        "<footer>(c) 2024 Harbour News<!-- f --></footer></body></html>"
    )
    tree = parsel_tree(html)
    assert any(not isinstance(n.tag, str) for n in tree.iter())  # parsel kept them
    assert_same(html, native)
    doc = ex.extract(html, native=native, tree=tree)
    assert "Moretext in one run" in doc.visible and "not here" not in doc.visible


@pytest.mark.parametrize("native", NATIVE)
def test_a_comment_splitting_link_text_is_parsed_again(native: bool) -> None:
    html = f"<html><body><p>{ARTICLE}</p><p><a href='/x'>Read the whole <!-- c --> report</a> here.</p></body></html>"
    assert_same(html, native, parse="own/comments")
    # Why: the walk counts a link's characters per piece, so parsel's tree gives other counts.
    own, shared = Walker(), Walker()
    own.walk(ex.parse_prepared(ex.prepare(html)), 0, False, 0)
    shared.walk(parsel_tree(html), 0, False, 0)
    for w in (own, shared):
        w.flush()
    assert [b.text for b in own.blocks] == [b.text for b in shared.blocks]
    assert [b.links for b in own.blocks] != [b.links for b in shared.blocks]


def test_a_comment_splitting_text_outside_links_shares_the_tree() -> None:
    html = f"<html><body><p>{ARTICLE} <!-- c --> and more.</p></body></html>"
    assert_same(html, native=False)


@pytest.mark.parametrize("native", NATIVE)
def test_a_tree_cut_at_the_depth_limit_is_parsed_again(native: bool) -> None:
    html = f"<html><body><p>{ARTICLE}</p>" + "<div>" * 2100 + "deep</div><p>after the nesting</p></body></html>"
    assert_same(html, native, parse="own/deep")
    assert ex.extract(html, native=native).method == "deep"


def test_a_page_cut_for_its_size_or_with_a_corpus_prefix_is_parsed_again() -> None:
    big = (
        f"<html><body><p>{ARTICLE}</p>"
        + f"<p>{'filler text ' * 100}</p>" * (MAX_HTML_CHARS // 1200 + 1)
        + "</body></html>"
    )
    assert len(big) > MAX_HTML_CHARS
    assert_same(big, native=False, parse="own/size")
    prefixed = f'<text id="http://x/1" title="t"><html><body><p>{ARTICLE}</p></body></html>'
    assert_same(prefixed, native=False, parse="own/prefix")


def test_bytes_or_a_subtree_are_never_walked_as_the_page() -> None:
    html = f"<html><body><p>{ARTICLE}</p></body></html>"
    tree = parsel_tree(html)
    assert ex.extract(html.encode(), tree=tree).parse == "own/bytes"
    assert ex.extract(html, tree=tree[0]).parse == "own/not_root"


@pytest.mark.skipif(html_walker() is None, reason="no native HTML walk")
def test_the_native_walk_reads_parsels_tree() -> None:
    html = f"<html><body><p>{ARTICLE}</p></body></html>"
    before = HTML_WALKS["native"]
    assert ex.extract(html, tree=parsel_tree(html)).parse == "shared"
    assert HTML_WALKS["native"] == before + 1


def _own(page: Any) -> Any:
    own = page.own
    return None if own is None else (own.text, own.chars, own._rest, own.novelty_text())


@pytest.mark.slow
@pytest.mark.parametrize("native", NATIVE)
def test_every_real_page_gives_the_same_values_from_parsels_tree(native: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every news page of ../shared/data (English, GBK Chinese): the same fingerprint, change
    sketch, own text and verdicts (two trackers, one fed from each parse), on both walks."""
    monkeypatch.setattr(simhash, "RECENT_PAGES", 0)  # a page's second call reads the tree, not the first's values
    fingerprinter = Fingerprinter(native=native)
    trackers = {how: ChangeTracker(SimhashIndex(max_distance=3)) for how in ("own", "tree")}
    shared, seen = 0, Counter[str]()
    for corpus, bodies in load_pages().items():
        for i, body in enumerate(bodies):
            html, _ = ex.decode_html(body)
            url = f"http://{corpus.split()[0]}.example/{i}?utm_source=feed"
            own = fingerprinter.fingerprint_page(html, url)
            tree = fingerprinter.fingerprint_page(html, url, tree=parsel_tree(html))
            assert (tree, _own(tree)) == (own, _own(own)), (corpus, i, tree.parse)
            shared += tree.parse == "shared"
            for key in (url.split("?")[0], url.split("?")[0] + "/copy"):  # then a copy: near_duplicate
                now = 1_000_000.0 + i
                verdicts = [trackers[how].observe(key, page, now) for how, page in (("own", own), ("tree", tree))]
                assert verdicts[0] == verdicts[1], (corpus, i)
                seen[verdicts[0].verdict.value] += 1
    assert shared >= 150  # most pages (the zh pages carry a corpus prefix: parsed again)
    assert seen["new"] and seen["near_duplicate"], seen


def _load_pins() -> Any:
    path = Path(__file__).resolve().parents[1] / "package" / "pins" / "make_pins.py"
    spec = importlib.util.spec_from_file_location("make_pins_shared_tree", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(html_walker() is None, reason="the pins hold the native path's values too")
def test_the_pinned_set_from_parsels_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned values (tests/package/pins: fingerprints of both paths, change and novelty
    sketches, verdicts, record bytes), computed with every page read from parsel's tree (none
    taken from a page with the same text before it: ``parse="recent"``)."""
    monkeypatch.setattr(simhash, "RECENT_PAGES", 0)
    pins = _load_pins()
    pinned = json.loads(pins.PINS.read_text(encoding="utf-8"))
    original = Fingerprinter.fingerprint_page
    parses: Counter[str] = Counter()

    def from_parsels_tree(self: Fingerprinter, html: Any, url: Any = None, **kwargs: Any) -> Any:
        text = ex.decode_html(html)[0] if isinstance(html, bytes) else html  # what extract decodes
        page = original(self, text, url, tree=parsel_tree(text), **kwargs)
        parses[page.parse] += 1
        return page

    monkeypatch.setattr(Fingerprinter, "fingerprint_page", from_parsels_tree)
    shared = pins.DATA.is_dir()
    computed = pins.compute(shared)
    for part in ("generated", "shared") if shared else ("generated",):
        assert computed[part]["pages"] == pinned[part]["pages"], part
        assert computed[part]["tracker"] == pinned[part]["tracker"], part
    assert parses["shared"] > 0.8 * sum(parses.values()), parses


def _runs_with_text(tree: Any) -> bool:
    """The rule ``HtmlWalker.comment_runs`` reads the tree by, in Python: a run of comments and
    processing instructions with more than ASCII white space in two of its pieces (the text before
    it, each node's tail)."""
    ascii_space = " \t\n\r\x0b\x0c"
    for node in tree.iter(ex.etree.Comment, ex.etree.ProcessingInstruction):
        prev = node.getprevious()
        if prev is not None and prev.tag in (ex.etree.Comment, ex.etree.ProcessingInstruction):
            continue
        pieces = [node.getparent().text if prev is None else prev.tail]
        nxt = node
        while nxt is not None and nxt.tag in (ex.etree.Comment, ex.etree.ProcessingInstruction):
            pieces.append(nxt.tail)
            nxt = nxt.getnext()
        if sum(1 for p in pieces if p and p.strip(ascii_space)) >= 2:
            return True
    return False


def _random_page(rng: Any) -> str:
    texts = ["", " ", "\n ", "\xa0", "\x1c", "\u3000", "word", "two words ", " x"]
    marks = ["<!-- c -->", "<?pi x?>", "<!---->"]

    def inner(depth: int) -> str:
        out = []
        for _ in range(rng.randint(0, 4)):
            roll = rng.random()
            if roll < 0.35:
                out.append(rng.choice(marks))
            elif roll < 0.6 and depth < 4:
                tag = rng.choice(["p", "a", "time", "span", "div class='byline'", "b"])
                out.append(f"<{tag}>{inner(depth + 1)}</{tag.split()[0]}>")
            else:
                out.append(rng.choice(texts))
        return "".join(out)

    return f"<html><body><p>{ARTICLE}</p>{inner(0)}<div>{inner(1)}</div></body></html>"


@pytest.mark.skipif(html_walker() is None, reason="no native HTML walk")
def test_the_native_comment_check_is_false_only_where_no_comment_splits_text() -> None:
    """``HtmlWalker.comment_runs`` (which lets ``_tree_differs`` skip the Python comment check)
    reads the tree by its rule exactly, and is never false where ``_comment_splits`` is true: on
    random trees of comments, processing instructions and white space of every kind, and on every
    real page."""
    import random

    from scrapy_simhash.text.native import native_comment_runs

    rng = random.Random(5)
    seen = Counter[tuple[bool, bool]]()
    for _ in range(3000):
        tree = parsel_tree(_random_page(rng))
        native = native_comment_runs(tree)
        assert native == _runs_with_text(tree)
        assert _walk_reads_comments(tree) is native  # the walk reads the same, as it goes
        splits = ex._comment_splits(tree)
        assert native or not splits
        seen[native, splits] += 1
    assert seen[True, True] and seen[True, False] and seen[False, False]
    for bodies in load_pages().values():
        for body in bodies:
            tree = parsel_tree(ex.decode_html(body)[0])
            assert native_comment_runs(tree) or not ex._comment_splits(tree)
            assert _walk_reads_comments(tree) is native_comment_runs(tree)


def _walk_reads_comments(tree: Any) -> bool | None:
    """The native walk's reading of ``tree``'s comments (``Walker.comments``)."""
    from scrapy_simhash.text.native import walk_native

    walker = ex.Walker()
    return walker.comments if walk_native(walker, tree) else None  # None: the Python walk takes it


@pytest.mark.skipif(html_walker() is None, reason="no native HTML walk")
def test_the_walk_reads_comments_in_what_it_skips() -> None:
    """A comment that splits text inside an element the walk skips (a script's fallback, hidden
    text) is read as ``HtmlWalker.comment_runs`` reads it; one in markup deeper than the walk goes
    leaves the tree to the Python walk (which the comment check of ``_tree_differs`` follows)."""
    hidden = f"<html><body><p>{ARTICLE}</p><div hidden>one <!-- c --> two</div></body></html>"
    deep = f"<html><body><p>{ARTICLE}</p>{'<div>' * 210}one <!-- c --> two{'</div>' * 210}</body></html>"
    inside = f"<html><body><p>{ARTICLE}</p><noscript><p>one <!-- c --> two</p></noscript></body></html>"
    quiet = f"<html><body><p>{ARTICLE}</p><div hidden>one <!-- c --></div></body></html>"
    from scrapy_simhash.text.native import native_comment_runs

    for html, expected in ((hidden, True), (deep, True), (inside, True), (quiet, False)):
        tree = parsel_tree(html)
        assert native_comment_runs(tree) is expected, html[-80:]
        assert _walk_reads_comments(tree) is (None if html is deep else expected), html[-80:]


@pytest.mark.skipif(html_walker() is None, reason="no native HTML walk")
def test_a_comment_splitting_link_text_is_found_with_the_native_check() -> None:
    html = f"<html><body><p>{ARTICLE}</p><p><a href='/x'>Read the whole <!-- c --> report</a> here.</p></body></html>"
    tree = parsel_tree(html)
    assert ex._tree_differs(tree, html, native=True) == ex._tree_differs(tree, html, native=False) == "comments"
    quiet = f"<html><body><!-- a --><p>{ARTICLE}<!-- b --></p>\n<!-- c --><?pi?>\n</body></html>"
    assert ex._tree_differs(parsel_tree(quiet), quiet, native=True) is None
