"""An API reference page's own heading, declaration and description are in its fingerprinted
text (``extract(...).text``), not only the member docs that the content scoring finds: generated
pages shaped like Javadoc, rustdoc and gi-docgen pages, news articles that must keep their text
without headline, byline, share links or sidebars, the native walk against the Python one, and
(where Debian's documentation packages are installed) the real pages of those generators."""

from __future__ import annotations

import importlib
import random
import re
from pathlib import Path

import pytest
from helpers.pages import EN_PARAS
from lxml import html as lxml_html

from scrapy_simhash.text.extract import extract

nat = importlib.import_module("scrapy_simhash.text.native")

# Inherited member docs: long sentences, the part of the page the content scoring picks.
INHERITED = [
    (
        "Returns a hash code value for the object, which is supported for the benefit of hash "
        "tables such as those provided by the collections of the standard library."
    ),
    (
        "Indicates whether some other object is equal to this one, where the equals method "
        "implements an equivalence relation on non-null object references of the same kind."
    ),
    (
        "Creates and returns a copy of this object, where the precise meaning of copy may depend "
        "on the class of the object and on the fields that the class declares."
    ),
    (
        "Wakes up a single thread that is waiting on the monitor of this object, chosen at the "
        "discretion of the implementation among the threads that wait on it."
    ),
]


def _inherited(tag: str = "div") -> str:
    return "".join(f'<{tag} class="block"><p>{p}</p></{tag}>' for p in INHERITED * 2)


def _lines(html: str) -> list[str]:
    return extract(html).text.split("\n")


def javadoc_page() -> str:
    """A Javadoc class page: the heading in a header, a declaration whose names link to their
    pages, a one-line description, then long inherited member docs."""
    return f"""<html><head><title>CharRange (Example Lang 3.12 API)</title></head><body>
<header><nav><ul><li><a href="index.html">Overview</a></li><li><a href="tree.html">Tree</a></li></ul></nav></header>
<main role="main"><div class="header"><div class="sub-title">Package org.example.lang</div>
<h1 title="Class CharRange" class="title">Class CharRange</h1></div>
<div class="inheritance"><a href="Object.html">java.lang.Object</a></div>
<section class="class-description"><div class="type-signature">public final class
<a href="src/CharRange.html">CharRange</a> extends <a href="Object.html">Object</a></div>
<div class="block">A contiguous range of characters.</div></section>
<section class="details"><h2>Methods inherited from class java.lang.Object</h2>{_inherited()}</section>
</main><footer><p>Copyright 2001-2021 Example Foundation. All rights reserved.</p></footer></body></html>"""


def rustdoc_page() -> str:
    """A rustdoc struct page: the heading with linked path parts, the declaration in a <pre>, a
    one-line description, then long trait implementation docs."""
    return f"""<html><head><title>Range in std::ops - Rust</title></head><body>
<nav class="sidebar"><h2><a href="#">Range</a></h2><ul><li><a href="#impl-Clone">Clone</a></li></ul></nav>
<main><div class="width-limiter"><section id="main-content" class="content">
<div class="main-heading"><h1>Struct <a href="../index.html">std</a>::<a href="index.html">ops</a>::<a href="#">Range</a></h1>
<span class="out-of-band"><a class="src" href="#">source</a></span></div>
<pre class="rust item-decl"><code>pub struct Range&lt;Idx&gt; {{ pub start: Idx, pub end: Idx }}</code></pre>
<details class="toggle top-doc" open><summary>Expand description</summary>
<div class="docblock"><p>A half-open range bounded inclusively below and exclusively above.</p></div></details>
<h2 id="trait-implementations" class="section-header">Trait Implementations</h2>
<div id="trait-implementations-list">{_inherited("details")}</div>
</section></div></main></body></html>"""


def gidocgen_page() -> str:
    """A gi-docgen class page: the heading (which the title names) in a header, the declaration
    and a one-line description, the class's own methods as short lines, and one long inherited
    signal doc."""
    methods = "".join(
        f'<div class="docblock"><h6><a href="method.FlowBox.{m}.html">gtk_flow_box_{m}</a></h6>'
        f"<p>{d}</p></div>"
        for m, d in [
            ("append", "Adds child to the end of self."),
            ("bind_model", "Binds model to box."),
            ("get_activate_on_single_click", "Returns whether children activate on a single click."),
            ("get_child_at_index", "Gets the nth child in the box."),
            ("get_column_spacing", "Gets the horizontal spacing."),
            ("get_homogeneous", "Returns whether the box is homogeneous."),
            ("get_max_children_per_line", "Gets the maximum number of children per line."),
            ("get_selected_children", "Creates a list of all selected children."),
            ("insert", "Inserts the widget into box at position."),
            ("invalidate_filter", "Updates the filtering for all children."),
            ("remove", "Removes a child from box."),
            ("select_all", "Select all children of box, if the selection mode allows it."),
        ]
    )
    return f"""<html><head><title>Gtk.FlowBox</title></head><body>
<nav><ul><li><a href="index.html">Gtk</a></li><li><a href="classes_hierarchy.html">Classes</a></li></ul></nav>
<section id="main" class="content"><header><h3>Class</h3><h1><a href="index.html">Gtk</a>FlowBox</h1></header>
<section><div class="toggle-wrapper"><h4 id="description">Description <a class="srclink" href="#">[src]</a></h4>
<pre><code>final class Gtk.FlowBox : Gtk.Widget {{ /* No available fields */ }}</code></pre>
<div class="docblock"><p>A GtkFlowBox puts child widgets in a reflowing grid.</p></div></div>
<div class="toggle-wrapper methods"><h4 id="methods">Instance methods</h4>{methods}</div>
<div class="toggle-wrapper signals"><h4>Signals inherited from GObject (1)</h4>
<div class="docblock"><p>{INHERITED[0]} {INHERITED[1]}</p></div></div>
</section></section></body></html>"""


@pytest.mark.parametrize(
    ("page", "own"),
    [
        (
            javadoc_page(),
            ["Class CharRange", "public final class CharRange extends Object", "A contiguous range of characters."],
        ),
        (
            rustdoc_page(),
            [
                "Struct std::ops::Range",
                "pub struct Range<Idx> { pub start: Idx, pub end: Idx }",
                "A half-open range bounded inclusively below and exclusively above.",
            ],
        ),
        (
            gidocgen_page(),
            [
                "GtkFlowBox",
                "final class Gtk.FlowBox : Gtk.Widget { /* No available fields */ }",
                "A GtkFlowBox puts child widgets in a reflowing grid.",
            ],
        ),
    ],
    ids=["javadoc", "rustdoc", "gi-docgen"],
)
def test_an_api_page_s_own_heading_declaration_and_description_are_in_its_text(page: str, own: list[str]) -> None:
    lines = _lines(page)
    for line in own:
        assert line in lines, (line, lines)
    assert INHERITED[0] in "\n".join(lines)  # the member docs stay
    assert lines.index(own[0]) < lines.index(own[1]) < lines.index(own[2])  # in page order
    assert not {"Overview", "Tree", "Clone", "Classes"} & set(lines)  # navigation stays out
    assert not any("Copyright" in line for line in lines)


def test_an_edit_of_an_api_page_s_own_description_moves_its_fingerprint() -> None:
    """What the rule is for: the class's own description is fingerprinted, so editing it changes
    the page's fingerprint (before, only the inherited docs were)."""
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    f = Fingerprinter()
    page = rustdoc_page()
    edited = page.replace(
        "A half-open range bounded inclusively below and exclusively above.",
        "An iterator over a closed interval of integers that never overflows its upper bound.",
    )
    assert f.fingerprint_page(page).fp != f.fingerprint_page(edited).fp


# --------------------------------------------------------------------------- news articles

BODY = EN_PARAS


def news_page(title: str, headline: str, site_heading: str = "") -> str:
    body = "".join(f"<p>{p}</p>" for p in BODY)
    masthead = f"<h1>{site_heading}</h1>" if site_heading else '<div class="logo">The Island Courier</div>'
    return f"""<html><head><title>{title}</title></head><body>
<header>{masthead}<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav></header>
<div id="page"><div class="crumbs"><a href="/">Home</a> / <a href="/news">News</a></div>
<article><h1>{headline}</h1><p>By Jane Doe</p><p><time datetime="2024-05-01">1 May 2024, 08:15</time></p>
<div><a href="https://facebook.com/share">Facebook</a> <a href="https://twitter.com/share">Twitter</a></div>
{body}<p>Topics: <a href="/t/ferries">Ferries</a>, <a href="/t/islands">Islands</a></p></article>
<aside><h3>Most read</h3><ul><li><a href="/a">Council approves new library budget after long debate</a></li>
<li><a href="/b">Bakery on the harbour front wins regional bread prize</a></li></ul></aside></div>
<footer><p>Copyright 2024 The Island Courier. All rights reserved.</p></footer></body></html>"""


def test_a_news_article_whose_title_is_its_headline_keeps_its_text() -> None:
    """The title names the headline: the article's text is its body, as before (no headline,
    byline, date, share links, tags, sidebar or navigation)."""
    page = news_page("Winter ferry timetable starts - The Island Courier", "Winter ferry timetable starts")
    assert extract(page).text == "\n".join(BODY)


def test_a_headline_the_title_does_not_name_joins_without_byline_or_share_links() -> None:
    """A headline other than the title (sharing its words) is the page's own line: it joins the
    text; the byline, date and share links between it and the body do not."""
    page = news_page("Ferry: winter timetable cuts crossings | The Island Courier", "Four ferry crossings a day")
    assert extract(page).text == "\n".join(["Four ferry crossings a day", *BODY])


def test_a_site_name_heading_with_nothing_of_the_title_is_not_the_page_s() -> None:
    """A site's name as the page's first <h1> (in its header), with no word of the title: the
    text is the article's body, not everything from the page header down."""
    page = news_page("Winter ferry timetable starts", "Four crossings a day", site_heading="The Island Courier")
    assert extract(page).text == "\n".join(BODY)


def test_a_section_number_does_not_decide_whether_the_title_names_the_heading() -> None:
    """A manual's section page: its title and heading carry the section number. A copy whose
    numbers moved in the title only (a renumbered edition, a digit edit that the markup splits)
    must give the same text: the title names the heading by its letters."""
    page = gidocgen_page().replace("<title>Gtk.FlowBox</title>", "<title>4. Gtk.FlowBox</title>")
    page = page.replace("FlowBox</h1>", "FlowBox 4.</h1>")
    renumbered = page.replace("<title>4. Gtk.FlowBox</title>", "<title>7. Gtk.FlowBox</title>")
    assert extract(page).text == extract(renumbered).text
    assert extract(page).text.startswith("GtkFlowBox")


def test_a_heading_in_the_site_header_does_not_widen_the_region() -> None:
    """The gi-docgen page with its heading moved into a site-level header (a ``<div id="header">``
    right under ``<body>``, as AsciiDoc's manual pages have it): the only element that holds the
    heading and the region is ``<body>``, and a copy without that header (a print view) must give
    nearly the same text, so the heading's container (the whole page) does not replace the region."""
    page = gidocgen_page()
    header = re.search(r"<header>.*?</header>", page, re.DOTALL)
    assert header is not None
    body = page.replace(header.group(0), "")
    moved = body.replace("<body>", f'<body><div id="header">{header.group(0)[8:-9]}</div>', 1)
    text, printed = extract(moved).text, extract(body).text  # ``body``: the print view
    assert not text.startswith("GtkFlowBox") and text.endswith(printed)  # the declaration may join
    # where the heading's header is inside the content's section, its container does (the rule)
    assert extract(page).text.startswith("GtkFlowBox")


@pytest.mark.skipif(nat.html_walker() is None, reason="no native HTML walk")
@pytest.mark.parametrize(
    "page",
    [
        javadoc_page(),
        rustdoc_page(),
        gidocgen_page(),
        news_page("Ferry: winter timetable cuts crossings | The Island Courier", "Four ferry crossings a day"),
    ],
)
def test_native_and_python_walks_give_the_same_text(page: str) -> None:
    assert extract(page) == extract(page, native=False)


# --------------------------------------------------------------------------- Debian's documentation

DOC = Path("/usr/share/doc")
GENERATORS = {
    "javadoc": sorted((DOC / "libcommons-lang3-java/api/org/apache/commons/lang3").glob("[A-Z]*.html")),
    "rustdoc": sorted((DOC / "rust-doc/html/std").glob("*/struct.*.html")),
    "gi-docgen": sorted((DOC / "libgtk-4-doc/gtk4").glob("class.*.html")),
}


def _flat(el) -> str:
    """An element's text as a block of the walk reads it: its pieces joined, whitespace collapsed."""
    return " ".join("".join(el.itertext()).split())


def _own_parts(generator: str, root) -> tuple[str, list[str], list[str]]:
    """The page's own heading, the lines of its declaration and the first two paragraphs of its
    description, from its markup, as the walk's blocks read them."""
    if generator == "javadoc":
        head = root.xpath("//h1")[0]
        decl = root.xpath("//div[@class='type-signature']")[0]
        desc = root.xpath("//section[@class='class-description']//div[@class='block']")[:1]
    elif generator == "rustdoc":
        head = root.xpath("//h1")[0]
        decl = root.xpath("//*[contains(concat(' ', @class, ' '), ' item-decl ')]//pre")[0]
        desc = root.xpath("//details[contains(@class, 'top-doc')]//div[@class='docblock']/p")
    else:
        head = root.xpath("//section[@id='main']/header/h1")[0]
        decl = root.xpath("//section[@id='main']//pre")[0]
        desc = root.xpath("//section[@id='main']//pre/following-sibling::div[@class='docblock'][1]/p")
    lines = [" ".join(line.split()) for line in "".join(decl.itertext()).split("\n")]
    return _flat(head), [line for line in lines if line], [_flat(p) for p in desc[:2] if _flat(p)]


@pytest.mark.skipif(not any(GENERATORS.values()), reason=f"no Javadoc, rustdoc or gi-docgen pages under {DOC}")
@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_debian_api_pages_have_their_own_text(generator: str) -> None:
    """On real pages of each generator (a fixed sample of the installed ones): the heading (or a
    title that names it) is in the text, and the declaration or the description; on two pages
    in three, each (a declaration split over lines, or a description whose first line is a link,
    can miss)."""
    files = GENERATORS[generator]
    if not files:
        pytest.skip(f"no {generator} pages under {DOC}")
    checked = declared = described = 0
    for path in random.Random(21).sample(files, min(40, len(files))):
        page = path.read_bytes()
        try:
            head, decl, desc = _own_parts(generator, lxml_html.fromstring(page))
        except IndexError:  # no declaration (a package summary)
            continue
        doc = extract(page)
        flat = " ".join(doc.text.split())
        named = re.sub(r"[\W_]+", "", doc.title.casefold()) == re.sub(r"[\W_]+", "", head.casefold())
        assert head in doc.text.split("\n") or named, (path, head)
        has_decl = any(line in flat for line in decl if len(line) > 20)
        has_desc = any(p[:60] in flat for p in desc)
        assert has_decl or has_desc, (path, decl, desc)
        checked += 1
        declared += has_decl
        described += has_desc
    assert checked >= 10
    assert declared >= 2 / 3 * checked and described >= 2 / 3 * checked, (checked, declared, described)
