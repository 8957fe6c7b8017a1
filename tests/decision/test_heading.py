"""A page about another named thing is not its copy (``Reason.KEPT_HEADING``): a page that
resembles a kept page but whose own heading (its cleaned title, numbers and versions out) names
something else is kept, however little text it adds; a copy (a mirror, a print view, a tracking
URL, the same page of another version) keeps its heading and is still dropped.

Each keep is checked with the rule taken out too (``OwnText.names_other`` answering no), so that
the test fails without it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from helpers.pages import make_response, run

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW, Reason
from scrapy_simhash.fingerprint import novelty
from scrapy_simhash.fingerprint.novelty import OwnText, heading_key
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.record import evidence_text, frame_evidence, read_evidence

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

FP = Fingerprinter()
_RNG = random.Random(34)
WORDS = ["".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(3, 9))) for _ in range(3000)]


def sentence(rng: random.Random, words: int = 16) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


#: The shared docstring of two sibling functions (a Sphinx API reference built from one template).
_SHARED = [sentence(random.Random(i)) for i in range(12)]


def api_page(name: str, truth: str, version: str = "1.26") -> str:
    """A Sphinx-like API page of function ``name``: what it returns "where the condition is
    ``truth``", the shared parameter docs, and examples that call it by name."""
    params = "".join(f"<dt>arg{i}</dt><dd><p>{text}</p></dd>" for i, text in enumerate(_SHARED))
    return (
        f"<html><head><title>pkg.{name} — Pkg v{version} Manual</title></head><body>"
        "<nav class='sidebar'><a href='/'>Pkg</a> <a href='/reference'>Reference</a> <a href='/user'>User guide</a></nav>"
        f"<main><section><h1>pkg.{name}<a class='headerlink' href='#'>#</a></h1>"
        f"<dl class='py function'><dt class='sig'>pkg.{name}(condition, x, y, /)</dt><dd>"
        f"<p>Return elements chosen from x or y where the condition is {truth}.</p>"
        f"<dl class='field-list'>{params}</dl>"
        f"<p>Examples</p><pre>&gt;&gt;&gt; pkg.{name}(a &lt; 5, a, 10*a)</pre></dd></dl></section></main>"
        f"<footer>© Copyright 2008-2024, Pkg Developers. Version {version}.</footer></body></html>"
    )


def print_view(page: str) -> str:
    """The page without its navigation and footer, with the line a print view adds."""
    start, end = page.index("<nav"), page.index("</nav>") + len("</nav>")
    page = page[:start] + page[end:]
    start = page.index("<footer>")
    return page[:start] + "<p>Printed from https://docs.example/reference/generated/pkg.where.html</p></body></html>"


def observe(tracker: ChangeTracker, url: str, html: str) -> Any:
    return tracker.observe(url, FP.fingerprint_page(html, url=url), now=1.0)


@pytest.fixture(params=["memory", "lmdb"])
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], SimhashIndex]]:
    made: list[SimhashIndex] = []

    def factory() -> SimhashIndex:
        if request.param == "memory":
            index = SimhashIndex()
        else:
            index = SimhashIndex(LmdbStore(tmp_path / f"lmdb{len(made)}", map_size=1 << 24))
        made.append(index)
        return index

    yield factory
    for index in made:
        index.close()


def test_heading_key_leaves_out_numbers_and_versions_not_names() -> None:
    assert heading_key("pkg.where — Pkg v1.26") == heading_key("PKG.WHERE — Pkg v2.0")
    assert heading_key("SQLite Release 3.39.4 On 2022-09-29") == heading_key("SQLite Release 3.40.0 On 2022-11-16")
    assert heading_key("Ｃｈａｒｓｅｔ") == heading_key("charset")  # NFKC: a full-width copy
    assert heading_key("Primitive Type u64") != heading_key("Primitive Type u32")  # digits of names count
    assert heading_key("pkg.where") != heading_key("pkg.where_not")
    assert heading_key("3.12") is None and heading_key("") is None  # no letters: no evidence


def test_the_evidence_keeps_the_heading_and_counts_as_before() -> None:
    """The heading key is stored in the page's evidence beside its sketch (the sketch is the same
    bytes with and without a heading): what a page adds is the same, and evidence without a key
    names nothing."""
    lines = [sentence(random.Random(i)) for i in range(6)]
    plain, headed = OwnText(lines), OwnText(lines, heading="pkg.where")
    new = OwnText([*lines[:4], sentence(random.Random(99))], heading="pkg.where_not")
    assert headed.novelty_text() == plain.novelty_text() and headed.heading == heading_key("pkg.where")
    framed = frame_evidence(0xABC, headed.novelty_text(), headed.heading)
    assert read_evidence(framed, 0xABC) == (headed.novelty_text(), heading_key("pkg.where"))
    assert read_evidence(frame_evidence(0xABC, plain.novelty_text(), plain.heading), 0xABC) == (plain.novelty_text(), None)
    assert evidence_text(framed, 0xABC) == headed.novelty_text() and read_evidence(framed, 0xABD) is None
    assert new.names_other(headed.novelty_text(), headed.heading) and not new.names_other(plain.novelty_text(), None)
    assert not new.names_other(headed.novelty_text(), new.heading)  # the same key: the same thing


def test_the_tracker_stores_the_heading_in_the_evidence(make_index: Callable[[], SimhashIndex]) -> None:
    index = make_index()
    page = FP.fingerprint_page(api_page("where", "True"), url="http://docs.example/pkg.where")
    ChangeTracker(index).observe("http://docs.example/pkg.where", page, now=1.0)
    assert page.own is not None and page.own.heading is not None
    stored = read_evidence(index.get_evidence("http://docs.example/pkg.where"), page.fp)
    assert stored == (page.own.novelty_text(), page.own.heading)


def test_a_sibling_api_page_with_another_heading_is_kept(
    make_index: Callable[[], SimhashIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pkg.where`` and its sibling ``pkg.where_not`` differ in the name, one word of the summary
    and the examples: too little text for ``SIMHASH_KEEP_ADDS``, but a page about another function."""
    kept, sibling = api_page("where", "True"), api_page("where_not", "False")
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://docs.example/pkg.where", kept).verdict == NEW
    found = observe(tracker, "http://docs.example/pkg.where_not", sibling)
    assert (found.verdict, found.kept, found.adds_to) == (NEW, Reason.KEPT_HEADING, "http://docs.example/pkg.where")
    assert found.adds is not None and found.adds < tracker.keep_adds  # the count alone would drop it
    # Without the rule, the same pages: the sibling goes as a copy of the kept page.
    monkeypatch.setattr(OwnText, "names_other", lambda self, kept, heading: False)
    without = ChangeTracker(make_index())
    observe(without, "http://docs.example/pkg.where", kept)
    dropped = observe(without, "http://docs.example/pkg.where_not", sibling)
    assert (dropped.verdict, dropped.duplicate_of) == (NEAR_DUPLICATE, "http://docs.example/pkg.where")


def test_copies_keep_their_heading_and_are_still_dropped(make_index: Callable[[], SimhashIndex]) -> None:
    """A print view, a mirror with tracking parameters and the same page of the next version are
    copies of the kept page (the same heading once numbers are out): all dropped, none kept by it."""
    original = api_page("where", "True")
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://docs.example/pkg.where", original).verdict == NEW
    copies = {
        "http://docs.example/print/pkg.where": print_view(original),
        "http://mirror.example/pkg.where?utm_source=feed": original,
        "http://docs.example/2.0/pkg.where": api_page("where", "True", version="2.0"),
    }
    for url, html in copies.items():
        verdict = observe(tracker, url, html)
        assert (verdict.verdict, verdict.duplicate_of, verdict.kept) == (
            NEAR_DUPLICATE,
            "http://docs.example/pkg.where",
            None,
        ), url


def test_a_copy_of_the_sibling_goes_as_the_sibling(make_index: Callable[[], SimhashIndex]) -> None:
    """With both siblings kept, a mirror of the second is dropped as a copy of the second (the page
    of its own name within reach), not kept because the first names something else."""
    tracker = ChangeTracker(make_index())
    observe(tracker, "http://docs.example/pkg.where", api_page("where", "True"))
    assert observe(tracker, "http://docs.example/pkg.where_not", api_page("where_not", "False")).verdict == NEW
    mirror = observe(tracker, "http://mirror.example/pkg.where_not", api_page("where_not", "False"))
    assert (mirror.verdict, mirror.duplicate_of) == (NEAR_DUPLICATE, "http://docs.example/pkg.where_not")


def test_the_heading_rule_is_part_of_keep_adds(make_index: Callable[[], SimhashIndex]) -> None:
    """``SIMHASH_KEEP_ADDS = 0`` (resemblance alone) turns it off with the count."""
    tracker = ChangeTracker(make_index(), keep_adds=0)
    observe(tracker, "http://docs.example/pkg.where", api_page("where", "True"))
    assert (
        observe(tracker, "http://docs.example/pkg.where_not", api_page("where_not", "False")).verdict == NEAR_DUPLICATE
    )


def test_middleware_counts_the_kept_sibling(make_mw: Callable[..., Any]) -> None:
    mw = make_mw()
    run(mw, make_response("http://docs.example/pkg.where", api_page("where", "True")))
    out = run(mw, make_response("http://docs.example/pkg.where_not", api_page("where_not", "False")), [{"n": 1}])
    assert out == [{"n": 1}]
    assert mw.stats.get_value("simhash/kept/heading") == 1
    assert mw.stats.get_value("simhash/kept/adds") is None
    run(mw, make_response("http://docs.example/print/pkg.where", print_view(api_page("where", "True"))), [{"n": 2}])
    assert mw.stats.get_value("simhash/near_duplicate") == 1


def test_a_syndicated_copy_under_another_title_is_still_dropped(make_index: Callable[[], SimhashIndex]) -> None:
    """A copy whose cleaned title is another part of the original's (its section, "Opinion"), or
    the headline cut mid-word, names nothing the kept page does not show: still dropped. A page
    whose heading the kept page never shows is kept beside it (the rule's other side)."""
    rng = random.Random(8)
    body = "".join(f"<p>{sentence(rng, 22)}</p>" for _ in range(10))
    headline = "Republicans Are Following the Council to Nowhere"
    original = (
        f"<html><head><title>{headline} - The Daily</title></head><body><nav><a href='/'>Home</a> "
        f"<a href='/opinion'>Opinion</a></nav><main><h1>{headline}</h1>{body}</main></body></html>"
    )

    def syndicated(title: str) -> str:
        return (
            f"<html><head><title>{title} - Feed Site</title></head><body><div class='menu'><a href='/'>Feed</a></div>"
            f"<h1>{title}</h1><div>{body}</div></body></html>"
        )

    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://daily.example/a", original).verdict == NEW
    for url, title in (
        ("http://feed.example/1", f"Opinion | {headline}"),
        ("http://feed.example/2", headline[:42]),  # "... to No"
    ):
        page = FP.fingerprint_page(syndicated(title), url=url)
        assert page.own is not None and page.own.heading != heading_key(headline)  # another heading
        verdict = tracker.observe(url, page, now=1.0)
        assert (verdict.verdict, verdict.duplicate_of) == (NEAR_DUPLICATE, "http://daily.example/a"), title
    other = observe(tracker, "http://feed.example/3", syndicated("Democrats Lead the Senate Again"))
    assert (other.verdict, other.kept) == (NEW, Reason.KEPT_HEADING)


def qdoc_page(container: str, std: str, variable: str = "it") -> str:
    """A QDoc page of a container's iterator's obsolete members (Qt 5's qset-iterator-obsolete.html
    and qhash-iterator-obsolete.html): one heading for both, the container named in code alone."""
    members = "".join(
        f"<h3 class='fn'>iterator iterator::operator{op}(int j) const</h3>"
        "<p>This function is obsolete. It is provided to keep old source code working.</p>"
        f"<p>This operator is deprecated in order to align with std::{std} functionality.</p>"
        f"<p>{sentence(random.Random(op))}</p>"
        for op in ("+", "+=", "-", "-=", "--")
    )
    return (
        "<html><head><title>Obsolete Members for iterator | Qt Core 5.15.8</title></head><body>"
        f"<div class='sidebar'><a href='{container.lower()}-iterator.html'>iterator</a></div>"
        "<div class='content mainContent'><h1 class='title'>Obsolete Members for iterator</h1>"
        "<p><b>The following members of class iterator are obsolete.</b> They are provided to keep old source"
        f" code working.</p>{members}<p>The prefix -- operator (--{variable}) makes the preceding item current."
        f" Calling this function on {container}::begin() leads to undefined results.</p></div></body></html>"
    )


def test_sibling_api_pages_that_name_other_code_under_one_heading_are_both_kept(
    make_index: Callable[[], SimhashIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    """QDoc's ``QHash::iterator`` and ``QSet::iterator`` obsolete-members pages: one heading, one
    template; they differ in ``std::unordered_map`` / ``std::unordered_set`` and ``QHash::begin`` /
    ``QSet::begin`` (too few characters for ``SIMHASH_KEEP_ADDS``): a page about another container,
    kept. Its copies (a print view, a tracking URL) name what it names: dropped."""
    qset, qhash = qdoc_page("QSet", "unordered_set"), qdoc_page("QHash", "unordered_map", "i")
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://doc.example/qset-iterator-obsolete.html", qset).verdict == NEW
    found = observe(tracker, "http://doc.example/qhash-iterator-obsolete.html", qhash)
    assert (found.verdict, found.kept) == (NEW, Reason.KEPT_HEADING)
    assert found.adds is not None and found.adds < tracker.keep_adds  # the count alone would drop it
    printed = qhash.replace("<div class='sidebar'>", "<div class='sidebar' hidden>").replace(
        "</div></body>", "<p>Printed from https://doc.example/qhash-iterator-obsolete.html</p></div></body>"
    )
    for url, html in (
        ("http://doc.example/qhash-iterator-obsolete.html?utm_source=x", qhash),
        ("http://doc.example/print/qhash", printed),
    ):
        copy = observe(tracker, url, html)
        assert (copy.verdict, copy.duplicate_of) == (
            NEAR_DUPLICATE,
            "http://doc.example/qhash-iterator-obsolete.html",
        ), url
    # Without the rule: the QHash page goes as a copy of the QSet page.
    monkeypatch.setattr(novelty, "renames", lambda own, rest, kept: False)
    without = ChangeTracker(make_index())
    observe(without, "http://doc.example/qset-iterator-obsolete.html", qset)
    dropped = observe(without, "http://doc.example/qhash-iterator-obsolete.html", qhash)
    assert (dropped.verdict, dropped.duplicate_of) == (NEAR_DUPLICATE, "http://doc.example/qset-iterator-obsolete.html")


QTCORE = Path("/usr/share/qt5/doc/qtcore")


@pytest.mark.skipif(not QTCORE.is_dir(), reason="Qt 5's documentation (Debian's qtbase5-doc-html) is not installed")
@pytest.mark.parametrize("member", ["iterator", "const-iterator"])
def test_qt5_qhash_and_qset_iterator_pages_are_both_kept(member: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real pair a user's crawl of Qt 5's reference dropped (and the const_iterator pair)."""
    pages = {name: (QTCORE / f"{name}-{member}-obsolete.html").read_bytes() for name in ("qset", "qhash")}

    def second(rule: bool) -> Any:
        if not rule:
            monkeypatch.setattr(novelty, "renames", lambda own, rest, kept: False)
        tracker = ChangeTracker(SimhashIndex())
        for name, body in pages.items():
            url = f"http://doc.example/qtcore/{name}-{member}-obsolete.html"
            verdict = tracker.observe(url, FP.fingerprint_page(body, url=url), now=1.0)
        return verdict

    found = second(rule=True)
    assert (found.verdict, found.kept) == (NEW, Reason.KEPT_HEADING)
    assert second(rule=False).verdict == NEAR_DUPLICATE  # without the rule: dropped, as they resemble each other


def test_code_names_and_renames() -> None:
    assert novelty.code_names("align with std::unordered_set; QSet::begin(), QHash, getValue, x86_64, e.g. Python") == {
        "std::unordered_set",
        "QSet::begin",
        "QHash",
        "getValue",
        "x0_0",
    }
    assert novelty.code_names("qt5::version and qt6::version") == {"qt0::version"}  # a version is no other name
    kept = "Calls QSet::begin on std::unordered_set."
    assert novelty.renames("Calls QHash::begin on std::unordered_map.", "", kept)  # another container
    assert not novelty.renames(kept, "", kept)  # a copy
    assert not novelty.renames(kept + " Also QSet::end.", "", kept)  # adds a name, puts none for another
    assert not novelty.renames("Calls QHash::begin.", "See QSet::begin, std::unordered_set", kept)  # it shows them
    assert not novelty.renames("Calls begin.", "", kept)  # names nothing
    # A print view's line names its URL, no code (sqlite's c3ref/txn_state.html and its print view).
    printed = kept + "\nPrinted from https://sqlite.example/c3ref/txn_state.html"
    assert novelty.code_names(printed) == novelty.code_names(kept)
    assert not novelty.renames(kept + " See sqlite3_txn_state.", "", printed)
    assert novelty.code_names(kept + "\nPrinted from /c3ref/txn_state.html") == novelty.code_names(kept)


def test_code_names_taken_word_by_word_find_what_the_whole_text_finds() -> None:
    """``code_names`` takes the addresses out word by word and looks only at the words that can hold
    a name: the same names as the plain patterns (each alternative with its own look-behind) over
    the whole text."""
    import re
    import unicodedata

    rng = random.Random(38)
    parts = [*"abcXYZ_:->~ \n\t9é中/@.w", "::", "->", "aB", "ABc", "q_x", "www.", "WWW.", "a@b.c", "x/y", "\u3000"]
    parts += ["\u00a0", "\uff57\uff57\uff57\uff0e", "\uff21"]  # NFKC: "www.", "A"
    parts += ["(Q", "Ab", "aBc", "x>", "\x1c", "\u2028", "\u0130", "\u01c5"]  # split() separators, cased non-ASCII
    plain = re.compile(
        r"(?<![\w:])[A-Za-z_]\w*(?:(?:::|->)~?[A-Za-z_]\w*)+"
        r"|(?<![\w:])[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9](?![\w:])"
        r"|(?<![\w:])(?:[a-z]+[A-Z]|[A-Z]+[a-z]+[A-Z]|[A-Z]{2,}[a-z])\w*(?![\w:])"
    )

    def whole(text: str) -> set[str]:
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        if "/" in text or "www." in text or "@" in text:
            text = novelty._ADDRESS_ANY_RE.sub(" ", text)
        return {re.sub(r"\d+", "0", name) for name in plain.findall(text)}

    for _ in range(40000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 30)))
        assert novelty.code_names(text) == whole(text), text


def test_a_copy_is_judged_without_reading_its_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page whose novelty text is the kept page's, line for line, names what it names: the names
    rule is not run for it (it costs a pass over both texts), and still is for a page that differs."""
    lines = ["Calls QSet::begin on std::unordered_set.", "Returns an iterator."]
    own = OwnText(lines, shown=[*lines, "See also QSet::end."])
    kept = own.novelty_text()
    read: list[str] = []
    real = novelty.code_names

    def code_names(text: str) -> set[str]:
        read.append(text)
        return real(text)

    monkeypatch.setattr(novelty, "code_names", code_names)
    assert not own.names_other(kept, own.heading)
    assert read == []
    sibling = OwnText(["Calls QHash::begin on std::unordered_map.", lines[1]], shown=[*lines[1:], "See also QHash::end."])
    assert sibling.names_other(kept, sibling.heading)
    assert read  # the rule ran


def test_no_character_takes_a_slash_or_an_at_sign_away_in_nfkc() -> None:
    """What the names rule's shortcut reads on the text as written: a "/" or an "@" in it is in its
    NFKC form too (``novelty._names_within``), beside any character."""
    import unicodedata

    lost = [
        (hex(cp), mark)
        for cp in range(0x110000)
        if not 0xD800 <= cp < 0xE000
        for mark in "/@"
        for text in (mark + chr(cp), chr(cp) + mark)
        if mark not in unicodedata.normalize("NFKC", text)
    ]
    assert lost == []


def test_a_page_whose_lines_the_kept_page_holds_names_nothing_else() -> None:
    """The shortcut of the names rule (``_names_within``: each of a page's lines is a line of the
    kept page's text): whenever it says so, ``code_names`` of the page's text finds no name that
    the kept page's lacks, also where the kept page's addresses change how words are read."""
    rng = random.Random(39)
    parts = [*"abcXYZ_:->~ \t9é中/@.w", "::", "aB", "ABc", "q_x", "www.", "WWW.", "a@b.c", "x/y", "\u3000"]
    parts += ["\uff57\uff57\uff57\uff0e", "\uff37\uff37\uff37\uff0e", "\uff0f", "\u2044", "\uff20", "\uff21"]  # NFKC
    parts += ["Foo_bar", "QHash::begin", "\u2028", "\u0130", "\u0301", "\ufb01x_y"]
    fired = 0
    for _ in range(30000):
        kept_lines = ["".join(rng.choice(parts) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 6))]
        lines = rng.sample(kept_lines, rng.randint(1, len(kept_lines)))
        if rng.random() < 0.2:  # a line of its own
            lines.append("".join(rng.choice(parts) for _ in range(rng.randint(1, 8))))
        own, kept = "\n".join(lines), "\n".join(kept_lines)
        if novelty._names_within(own, kept):
            fired += 1
            assert novelty.code_names(own) <= novelty.code_names(kept), (own, kept)
    assert fired > 10000
    copy = ["Calls QSet::begin on std::unordered_set.", "Returns an iterator."]
    assert novelty._names_within("\n".join(copy), "\n".join([*copy, "See also QSet::end, a/b."]))
    more = [*copy, "A line of its own."]
    assert not novelty._names_within("\n".join(more), "\n".join(copy))
    # Where the kept page's address would read a "WWW." word otherwise, both texts' names are read.
    www = [*copy, "WWW.Example_site"]
    assert novelty.code_names("\n".join(www)) - novelty.code_names("\n".join([*www, "see a/b"])) == {"Example_site"}
    assert not novelty._names_within("\n".join(www), "\n".join([*www, "see a/b"]))
