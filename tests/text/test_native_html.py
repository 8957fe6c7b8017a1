"""The native HTML walk (``HtmlWalker``, ``native/src/html.rs``) against the Python walk
(``extract.Walker.walk``, the reference): identical blocks (text, folded text, weight, link and
metadata characters, owner, flags, class and teaser flag), element numbering, landmark, and identical documents (title,
text, visible text, rest, method, coverage) and page fingerprints (with their change sketch), on
every page of ``../shared/data``, the demo site's pages, a sample of the Debian documentation HTML
under /usr/share/doc, and generated hostile HTML. Skipped with a message when the native core is
not built (never in CI) or a corpus is absent."""

from __future__ import annotations

import importlib
import random
from pathlib import Path
from typing import Any, cast

import pytest
from helpers.ci import native_required
from helpers.data import load_pages
from helpers.native_fuzz import (
    HTML_ATTRS,
    HTML_DEPTHS,
    HTML_ENCODINGS,
    HTML_TAGS,
    HTML_TEXTS,
    html_outcomes,
    page_root,
    random_html,
    walked,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter

ex = importlib.import_module("scrapy_simhash.text.extract")  # the package exports the function too
nat = importlib.import_module("scrapy_simhash.text.native")

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
DOC = Path("/usr/share/doc")

if nat.html_walker() is None:
    if native_required():
        raise RuntimeError(f"CI runs the native walk tests: {nat.html_walk_status()}")
    pytest.skip(f"no native HTML walk: {nat.html_walk_status()}", allow_module_level=True)


def assert_same(page: str | bytes, name: str = "") -> None:
    """Native and Python walks give the same blocks and documents on ``page``."""
    assert html_outcomes(page, True) == html_outcomes(page, False), name


def _page_fp(f: Fingerprinter, page: bytes) -> object:
    try:
        return f.fingerprint_page(page)
    except EmptyTextError:
        return None


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} not found beside the repo: the corpus tests need it")
def test_shared_data_pages_identical() -> None:
    pages = [(f"{name}[{i}]", page) for name, bodies in load_pages().items() for i, page in enumerate(bodies)]
    assert len(pages) >= 200
    native, python = Fingerprinter(time_budget=0), Fingerprinter(native=False, time_budget=0)
    assert native.html_walk == "native HTML walk"
    before = nat.HTML_WALKS["native"]
    for name, page in pages:
        assert_same(page, name)
        assert _page_fp(native, page) == _page_fp(python, page), name
    assert nat.HTML_WALKS["native"] - before >= 3 * len(pages)  # every walk ran natively


def test_demo_site_pages_identical() -> None:
    pages = sorted(REPO.glob("example_project/site/**/*.html"))
    assert len(pages) >= 20
    native, python = Fingerprinter(time_budget=0), Fingerprinter(native=False, time_budget=0)
    for p in pages:
        page = p.read_bytes()
        assert_same(page, p.name)
        assert _page_fp(native, page) == _page_fp(python, page), p.name


def _doc_sample(n: int) -> list[Path]:
    """``n`` HTML files of /usr/share/doc, the same ones on every run, from every package."""
    files = sorted(f for f in DOC.glob("*/**/*.html") if f.is_file())
    by_package: dict[str, list[Path]] = {}
    for f in files:
        by_package.setdefault(f.relative_to(DOC).parts[0], []).append(f)
    rng = random.Random(12)
    out: list[Path] = []
    for package in sorted(by_package):
        out += rng.sample(by_package[package], min(len(by_package[package]), max(2, n // len(by_package))))
    return out


@pytest.mark.skipif(not any(DOC.glob("*/**/*.html")), reason=f"no HTML documentation under {DOC}")
def test_debian_documentation_identical() -> None:
    sample = _doc_sample(120)
    assert len(sample) >= 20
    for p in sample:
        assert_same(p.read_bytes(), str(p))


# Generated hostile HTML (bench_native's pieces): nesting past the flattening depth (200) and past
# libxml2's, broken tags, comments, entities, huge attributes, chrome and metadata classes, hidden
# elements, landmarks, every kind of whitespace, full-width forms, CJK text with spaces.
@st.composite
def _hostile(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 60))):
        kind = draw(st.integers(0, 9))
        if kind <= 3:
            parts.append(draw(st.sampled_from(HTML_TEXTS)))
        elif kind <= 6:
            tag = draw(st.sampled_from(HTML_TAGS))
            attrs = draw(st.lists(st.sampled_from(HTML_ATTRS), max_size=3))
            parts.append(f"<{tag} {' '.join(attrs)}>")
        elif kind == 7:
            parts.append(f"</{draw(st.sampled_from(HTML_TAGS))}>")
        elif kind == 8:
            parts.append(draw(st.text(max_size=20)))
        else:  # nesting: past the flattening depth, sometimes past libxml2's limit
            depth = draw(st.sampled_from(HTML_DEPTHS))
            tag = draw(st.sampled_from(("div", "span", "b", "section")))
            parts.append(f"<{tag}>x " * depth)
    return "".join(parts)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(html=_hostile(), encoding=st.sampled_from(HTML_ENCODINGS))
def test_generated_hostile_html_identical(html: str, encoding: str) -> None:
    page: str | bytes = html if encoding == "str" else html.encode(encoding, "replace")
    assert_same(page)


def test_big_hostile_pages_identical() -> None:
    """3,000 unclosed <div> (past libxml2's depth: flattened), 250,000 <br> (past the element cap:
    no walk), 50,000 elements in one paragraph, 1,900 levels of <span> (flattened at depth 200)."""
    pages = [
        "<html><body>" + "<div>text " * 3000,
        "<html><body><p>" + "word<br>" * 250_000,
        "<html><body><p>" + "<b>w</b> " * 25_000 + "</p>" + "<p class=sidebar>x</p>" * 2000,
        "<html><body>" + "<span>a " * 1900 + "<p>end</p>",
        "<html><body><div class=menu>" + "<p>para</p>" * 6 + "</div><time>2024</time></body></html>",
    ]
    for page in pages:
        assert_same(page)


def test_budget_stops_like_the_python_walk() -> None:
    page = "<html><body>" + "<p>a</p>" * 30_000
    for native in (True, False):
        assert ex.extract(page, time_budget=1e-9, native=native).method == "budget"
    page = "<html><body>" + "<p>a</p><br>" * 21_000  # 42,000 elements, 21,000 blocks
    assert ex.extract(page, native=True).method == ex.extract(page, native=False).method == "large"


def test_what_it_does_not_handle_runs_the_python_walk() -> None:
    """A tree with an entity reference node or a namespaced element (never made by lxml's HTML
    parser): the Python walk runs, counted with the reason."""
    for add, reason in (
        (lambda body: body.append(etree.Entity("nbsp")), "python: an entity reference node"),
        (lambda body: etree.SubElement(body, "{urn:x}y").set("class", "a"), "python: a namespaced element"),
    ):
        root = ex.parse_prepared("<html><body><p>one</p><p>two</p></body></html>")
        add(root.find("body"))
        before = nat.HTML_WALKS[reason]
        assert not nat.walk_native(ex.Walker(), root)
        assert nat.HTML_WALKS[reason] == before + 1
    assert nat.native_walk("<p>", None, 10, 10) is None  # not an lxml element


def test_the_native_walk_takes_its_rules_as_data() -> None:
    """The native walk's block classes follow the thresholds of the rules it is given
    (``text.rules.native_rules``); a rule missing from them is named."""
    from scrapy_simhash import _native
    from scrapy_simhash.text import region, rules

    root = ex.parse_prepared("<html><body><p>" + "A sentence of some words. " * 12 + "</p></body></html>")

    def classes(**changed: object) -> list[int]:
        given = rules.native_rules(boilerplate_any=region.is_boilerplate, meta_text=region.is_meta_text, **changed)
        result = _native.html_walker(etree._Element, given).walk(root, remaining=None, max_blocks=100, step=100)
        return [block[6] for block in result[1]]

    assert classes() == [region.GOOD]
    assert classes(good_weight=10**6, good_punct_weight=10**6, good_sentence_weight=10**6) == [region.SHORT]
    assert classes(link_density=-1.0) == [region.LINKS]
    given = rules.native_rules(boilerplate_any=region.is_boilerplate, meta_text=region.is_meta_text)
    assert sorted(given) == sorted(_native.module().HtmlWalker.rule_names())  # every rule read, none left over
    del given["teaser_max_weight"]
    with pytest.raises(ValueError, match="teaser_max_weight"):
        _native.html_walker(etree._Element, given)


def test_the_walk_asks_python_once_per_text() -> None:
    """The walk asks each Python text predicate (``boilerplate_any``, ``boilerplate_start``,
    ``meta_text``) once per distinct block text: a second walk of the same page, and a repeated
    line, ask nothing more, and give the same blocks as the first."""
    from scrapy_simhash import _native
    from scrapy_simhash.text import region, rules

    asked: list[tuple[str, str]] = []

    def counted(name: str, predicate: Any) -> Any:
        def ask(text: str) -> Any:
            asked.append((name, text))
            return predicate(text)

        return ask

    given = rules.native_rules(
        boilerplate_any=counted("any", region.is_boilerplate), meta_text=counted("meta", region.is_meta_text)
    )
    given["boilerplate_start"] = counted("start", given["boilerplate_start"])
    walker = _native.html_walker(etree._Element, given)
    lines = ["Posted 2024-03-01 by Ann", "Copyright © 2024 Example", "Share this", "12 views"]
    root = ex.parse_prepared("<html><body>" + "".join(f"<p>{line}</p>" for line in lines * 3) + "</body></html>")
    first = walker.walk(root, remaining=None, max_blocks=100, step=100)
    once = list(asked)
    assert {name for name, _ in once} == {"any", "start", "meta"}
    assert len(once) == len(set(once))  # each text asked once for each predicate, not once a line
    assert walker.walk(root, remaining=None, max_blocks=100, step=100)[1] == first[1]
    assert asked == once
    python = cast("list[tuple[Any, ...]]", walked(root, False)[0])  # the blocks
    assert [block[6] for block in first[1]] == [block[7] for block in python]


def test_unverified_lxml_runs_the_python_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nat, "HTML_VERIFIED", frozenset())
    monkeypatch.setattr(nat, "_WALKERS", {})
    monkeypatch.setattr(nat, "_WALKER_ERROR", None)
    assert nat.html_walker() is None
    status = Fingerprinter().html_walk
    assert status.startswith("Python HTML walk (lxml ") and "is not verified" in status, status
    reason = f"python: {nat._WALKER_ERROR}"
    before = nat.HTML_WALKS[reason]
    doc = ex.extract("<html><body><p>Some text that is long enough to be kept as the page text.</p></body></html>")
    assert doc.text == "Some text that is long enough to be kept as the page text."
    assert nat.HTML_WALKS[reason] == before + 1


def _regions(page: str | bytes) -> list[tuple[list[int], list[int]]]:
    """The content regions ``_choose`` asks for on ``page`` (its content blocks, its blocks outside
    chrome tags, both relaxed), each natively (``HtmlWalker.main_blocks``) and in Python
    (``region._main_blocks_python``), as the chosen blocks' positions in the page."""
    from scrapy_simhash.text import region

    root = page_root(page)
    walker = ex.Walker()
    if root is None or not nat.walk_native(walker, root):
        return []
    walker.flush()
    assert walker.core is nat.html_walker(type(root))
    at = {id(b): i for i, b in enumerate(walker.blocks)}
    content = [b for b in walker.blocks if not b.flags]
    unchromed = [b for b in walker.blocks if not b.flags & ex.IN_CHROME_TAG]
    out = []
    for blocks in (content, unchromed, walker.blocks[: len(walker.blocks) // 2]):
        for relaxed in (False, True):
            python = region._main_blocks_python(walker, blocks, relaxed)
            native = walker.core.main_blocks(blocks, walker.parent, walker.end, relaxed)
            if native is None:  # an unclassified block (full-width): Python's, and then classified
                assert any(b.base == -2 for b in blocks)
                native = walker.core.main_blocks(blocks, walker.parent, walker.end, relaxed)
            out.append(([at[id(b)] for b in native], [at[id(b)] for b in python]))
    return out


@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} not found beside the repo: the corpus tests need it")
def test_content_region_identical() -> None:
    """The native content region (``HtmlWalker.main_blocks``) is the Python one, block for block,
    on every real page and on generated hostile pages, for each set of blocks ``_choose`` asks about."""
    pages: list[str | bytes] = [page for bodies in load_pages().values() for page in bodies]
    rng = random.Random(37)
    pages += [random_html(rng) for _ in range(300)]
    regions = found = 0
    for page in pages:
        for native, python in _regions(page):
            assert native == python
            regions += 1
            found += bool(python)
    assert regions >= 6 * 250 and found >= 3 * 250  # most real pages have a region


def test_content_region_reads_the_rules() -> None:
    """The region's decay and widening come from the rules it is given (``DECAY``,
    ``EXTEND_RATIO``, ``EXTEND_LEVELS``): a long paragraph beside a short one in a wider element."""
    from scrapy_simhash import _native
    from scrapy_simhash.text import region, rules

    sentence = "A sentence of some words, and more. "
    short, long = sentence * 6, sentence * 20
    root = ex.parse_prepared(f"<html><body><div><div><p>{short}</p></div><p>{long}</p></div></body></html>")

    def region_of(**changed: object) -> list[int]:
        given = rules.native_rules(boilerplate_any=region.is_boilerplate, meta_text=region.is_meta_text, **changed)
        core = _native.html_walker(etree._Element, given)
        _, found, parent, end, *_ = core.walk(root, remaining=None, max_blocks=100, step=100)
        blocks = [ex.Block(*b[:5]) for b in found]
        for b in blocks:
            region.block_kind(b, False)
        return [len(b.text) for b in core.main_blocks(blocks, parent, end, False)]

    both, alone = [len(short.strip()), len(long.strip())], [len(long.strip())]
    assert region_of() == both  # their <div> scores best
    own = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # each block scores its element alone: the long <p> is best
    assert region_of(decay=own) == alone  # (its <div> holds under 1.5 times its good text)
    assert region_of(decay=own, extend_ratio=1.2) == both
    assert region_of(decay=own, extend_ratio=1.2, extend_levels=0) == alone


def test_walker_reads_only_lxml_elements() -> None:
    class NotLxml:
        pass

    with pytest.raises(ValueError, match=r"not an lxml\.etree\._Element: NotLxml"):
        nat.html_walker().walk(NotLxml(), remaining=None, max_blocks=10, step=10)


def test_class_words_match_as_the_regular_expressions() -> None:
    """The walk's class/id tests (``HtmlWalker``'s ``ClassWords``, from the word lists that build
    ``_NEGATIVE_RE`` and ``_META_CLASS_RE``) answer as the regular expressions do on the lower-cased
    string: on random strings of their words, token separators, Unicode white space and digits
    (which ``\\s`` and ``\\d`` match) and letters whose lower case is special, and on every class
    and id of the real pages."""
    from scrapy_simhash.text import blocks

    walker = nat.html_walker()
    words = [*blocks._NEGATIVE_WORDS, *blocks._NEGATIVE_TOKENS, *blocks._META_CLASS_WORDS, *blocks._META_CLASS_TOKENS]
    words += [*blocks._NEGATIVE_NOT_AFTER, "center", "main", "content"]  # and the pieces of those
    pieces = [*words, *"abdeinstvx-_ 07\t\n", "\u00a0", "\u2003", "\x1c", "\u0663", "\u00e9", "\u4e2d"]
    pieces += ["NAV", "Comment", "Meta", "\u212a", "\u0130", "\u03a3", "HİDE"]  # case: Kelvin sign, dotted I, sigma

    def expected(text: str) -> tuple[bool, bool]:  # as the Python walk asks: _cached_search
        return bool(blocks._NEGATIVE_RE.search(text.lower())), bool(blocks.META_CLASS_RE.search(text.lower()))

    rng = random.Random(3)
    seen = set()
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))
        assert walker.class_words(text) == expected(text), repr(text)
        seen.add(expected(text))
    assert seen == {(False, False), (True, False), (False, True), (True, True)}
    for bodies in load_pages().values():
        for body in bodies:
            for el in etree.fromstring(body, etree.HTMLParser()).iter():
                text = f"{el.get('class') or ''} {el.get('id') or ''}"
                assert walker.class_words(text) == expected(text), repr(text)


_PARAS = "".join(f"<p>Paragraph {i} of the story, with a sentence.</p>" for i in range(6))
_FOUR = "".join(f"<p>Line {i}.</p>" for i in range(4))


@pytest.mark.parametrize(
    "page",
    [
        # nested chrome and metadata wrappers, with and without five <p>/<br> below each
        f"<html><body><div class=sidebar><div class=sidebar-inner>{_PARAS}</div><p>x</p></div></body></html>",
        f"<html><body><div class=sidebar><div class=menu>{_FOUR}</div><div class=nav>{_PARAS}</div></div></body></html>",
        f"<html><body><div class=post-meta><div class=byline>{_FOUR}<br></div><time>2024</time>{_FOUR}</div></body></html>",
        f"<html><body><div class=meta><div class=meta><div class=meta>{_FOUR}</div><p>a</p></div>{_FOUR}</div></body></html>",
        f"<html><body><div id=footer class=info><div class=comments>{_PARAS}</div></div><time>{_PARAS}</time></body></html>",
        f"<html><body><div class=nav><div class=x><div class=nav>{_PARAS}</div></div>{_PARAS}</div></body></html>",
        # upper case in the source (libxml2 lowers it), and one name per element past the name cache
        f"<HTML><BODY><DIV CLASS=Sidebar ID=Nav><P>a<BR>b</P>{_FOUR}</DIV><Main><P>c</P></Main></BODY></HTML>",
        "<html><body>"
        + "".join(f"<x-{i} class=nav{i % 3} k{i}=v role=x{i}><p>t {i}</p></x-{i}>" for i in range(400))
        + "<div role=main>main</div></body></html>",
        # wrappers whose five <p>/<br> are partly in hidden, invisible and flattened subtrees (they
        # count), after text of the same block, around a landmark
        "<html><body><div class=sidebar><div hidden><p>1</p><p>2</p><p>3</p></div><p>4</p>"
        + "<script>x</script><style>p{}</style><p>5</p>tail</div><p>after</p></body></html>",
        "<html><body><div class=sidebar><div style='display: none'><p>1</p><p>2</p><p>3</p><p>4</p>"
        + "</div>text</div><p>after</p></body></html>",
        "<html><body><div class=menu>top" + "<span>x " * 210 + "<p>a</p>" * 5 + "</div><p>after</p></body></html>",
        "<html><body><div class=menu>top" + "<span>x " * 210 + "<p>a</p>" * 4 + "</div><p>after</p></body></html>",
        f"<html><body><div>before text <div class=sidebar><main>m</main>{_PARAS}</div> after</div></body></html>",
        "<html><body><div>before text <span class=byline>by <b>x</b><br><br><br><br><br></span> after</div></body></html>",
        "<html><body><div>before <span class=byline>by <b>x</b><br><br><br><br></span> after</div></body></html>",
        "<html><body><div>before text <a href=x>link <time>2024<br><br><br><br><br>x</time></a> after</div></body></html>",
        f"<html><body><p>lead <div class='nav meta' role=main><div class=comments>{_FOUR}</div>{_FOUR}</div></p></body></html>",
    ],
)
def test_nested_wrappers_and_tag_names_identical(page: str) -> None:
    assert_same(page)


@pytest.mark.parametrize(("max_blocks", "step"), [(0, 1), (2, 3), (8, 1), (12, 5), (16, 1), (16, 5), (20, 7)])
def test_block_cap_inside_wrappers_like_the_python_walk(
    max_blocks: int, step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The element and block caps stop the walk at the same element when they are reached inside a
    chrome or metadata wrapper, with and without five paragraphs."""
    from scrapy_simhash.text import blocks, rules

    monkeypatch.setattr(blocks, "MAX_BLOCKS", max_blocks)  # the Python walk's
    monkeypatch.setattr(blocks, "_BUDGET_STEP", step)
    monkeypatch.setattr(rules, "MAX_BLOCKS", max_blocks)  # the native walk's
    monkeypatch.setattr(rules, "BUDGET_STEP", step)
    page = (
        f"<html><body><p>one</p><div class=sidebar><h2>a</h2><p>b</p>{_PARAS}</div>"
        f"<div class=sidebar><h2>c</h2><p>d</p><p>e</p></div><p>two</p><span class=meta>x<br>y</span>"
        f"<div>t <span class=byline><b>by</b><br><br><br><br><br></span> u</div><p>three</p></body></html>"
    )

    root = ex.parse_prepared(page)
    assert walked(root, True) == walked(root, False)


def test_trees_built_by_hand_identical() -> None:
    """Trees the HTML parser never makes, read by the native walk's name cache (which keeps each
    name by its address): upper-case and mixed-case tag and attribute names (``<P>``, ``<BR>``,
    ``CLASS``), renamed elements, elements moved in from a document of another parser, the same
    names at other addresses."""
    root = ex.parse_prepared(f"<html><body><div class=sidebar>{_FOUR}</div><p>one</p></body></html>")
    body = root.find("body")
    for tag in ("P", "p", "BR", "br", "Div", "div", "MAIN", "time", "TIME", "nav", "A", "a"):
        el = etree.SubElement(body, tag)
        el.text = f"text of {tag}"
        el.tail = "tail "
    wrapper = etree.SubElement(body, "div", {"class": "comments"})
    for tag in ("P", "p", "p", "BR", "p", "br"):
        etree.SubElement(wrapper, tag).text = "para."
    shouty = etree.SubElement(body, "div", {"CLASS": "sidebar", "Id": "menu", "HIDDEN": "", "ROLE": "main"})
    shouty.text = "shouting attributes"
    renamed = etree.SubElement(body, "span")
    renamed.text = "renamed"
    renamed.tag = "p"
    other = etree.fromstring(
        f"<html><body><div class=meta>{_FOUR}<time>2024</time></div><p>moved</p></body></html>",
        etree.HTMLParser(remove_comments=True),
    )
    for el in list(other.find("body")):
        body.append(el)
    etree.SubElement(body, "div", {"class": "nav"}).extend(etree.SubElement(body, "p") for _ in range(5))
    assert walked(root, True) == walked(root, False)
