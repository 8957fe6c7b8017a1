"""An API reference page's own entries are in its fingerprinted text (``text.entries.with_entries``):
the member signatures inside its content whose type names link to the types' pages (Haddock's
``unionFileModes :: FileMode -> FileMode -> FileMode``), which the content region leaves out as
link lists; not a list of links without code inside the content. The same on the native walk
and the Python walk."""

from __future__ import annotations

import pytest

from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.text.extract import extract
from scrapy_simhash.text.native import html_walker

NATIVE = [False, True] if html_walker() is not None else [False]

_T = "<a href='../base/System-Posix-Types.html#t:{0}' title='System.Posix.Types'>{0}</a>"

#: (name, argument types, result, one-line description)
MEMBERS = [
    (
        "unionFileModes",
        ["FileMode", "FileMode"],
        "FileMode",
        "Combines the two file modes into one that contains both.",
    ),
    (
        "intersectFileModes",
        ["FileMode", "FileMode"],
        "FileMode",
        "Combines two file modes into one that has the common.",
    ),
    ("setFileMode", ["FilePath", "FileMode"], "IO ()", "Changes the permission of the file given by path to mode."),
    ("setFdMode", ["Fd", "FileMode"], "IO ()", "Acts like setFileMode but uses a file descriptor instead."),
    ("fileAccess", ["FilePath", "Bool", "Bool"], "IO Bool", "Checks if the file can be accessed by the process."),
    ("getFileStatus", ["FilePath"], "IO FileStatus", "Gets the status information of the file given by path."),
]


def signature(name: str, args: list[str], result: str, anchor: bool) -> str:
    types = " -&gt; ".join(_T.format(t) for t in args)
    head = f"<a id='v:{name}' class='def'>{name}</a>" if anchor else f"<a href='#v:{name}'>{name}</a>"
    tail = " <a href='src/M.html#{0}' class='link'>Source</a> <a href='#v:{0}' class='selflink'>#</a>" if anchor else ""
    return f"{head} :: {types} -&gt; {_T.format(result)}{tail.format(name)}"


def haddock_page(module: str) -> str:
    """A Haddock module page: header, contents, description, synopsis and the documented members."""
    synopsis = "".join(f"<li class='src short'>{signature(n, a, r, False)}</li>" for n, a, r, _ in MEMBERS)
    members = "".join(
        f"<div class='top'><p class='src'>{signature(n, a, r, True)}</p><div class='doc'><p>{d}</p></div></div>"
        for n, a, r, d in MEMBERS
    )
    return (
        f"<html><head><title>{module}</title></head><body><div id='package-header'><span class='caption'>"
        "unix-2.7.2.2: POSIX functionality</span><ul class='links' id='page-menu'><li><a href='index.html'>Contents</a>"
        "</li><li><a href='doc-index.html'>Index</a></li></ul></div><div id='content'><div id='module-header'>"
        f"<p class='caption'>{module}</p></div><div id='description'><p class='caption'>Description</p><div class='doc'>"
        "<p>Functions defined by the POSIX standards for manipulating and querying the file system. Names of "
        "underlying POSIX functions are indicated whenever possible.</p></div></div><div id='synopsis'><details id='syn'>"
        f"<summary>Synopsis</summary><ul>{synopsis}</ul></details></div><div id='interface'><h1>File modes</h1>"
        f"{members}<p><a href='a.html'>System.Posix.Types</a> <a href='b.html'>System.Posix.Files</a></p>"
        "<h1>File status</h1><div class='doc'><p>POSIX defines operations to get information, such as owner, "
        "permissions, size and access times, about a file.</p></div></div></div></body></html>"
    )


@pytest.mark.parametrize("native", NATIVE)
def test_member_signatures_are_fingerprinted(native: bool) -> None:
    doc = extract(haddock_page("System.Posix.Files"), native=native)
    lines = doc.text.split("\n")
    for name, args, result, description in MEMBERS:
        declared = f"{name} :: {' -> '.join(args)} -> {result}"
        assert declared in lines  # the synopsis's line
        assert f"{declared} Source #" in lines  # the member's own
        assert description in lines
        assert declared not in doc.inner.split("\n") + doc.rest.split("\n")
    # a line of links inside the content without code, and the page's header, stay out
    assert "System.Posix.Types System.Posix.Files" not in lines
    assert not any("POSIX functionality" in line for line in lines)


@pytest.mark.parametrize("native", NATIVE)
def test_a_twin_with_other_signatures_has_another_fingerprint_text(native: bool) -> None:
    """System.Posix.Files and its ByteString twin share every description; the signatures (another
    path type) are what tells their fingerprinted texts apart."""
    files = haddock_page("System.Posix.Files")
    twin = files.replace("#t:FilePath' title='System.Posix.Types'>FilePath", "#t:RawFilePath' title='S'>RawFilePath")
    a, b = extract(files, native=native), extract(twin, native=native)
    assert a.text != b.text
    assert {line for line in b.text.split("\n") if "RawFilePath" in line} >= {
        "setFileMode :: RawFilePath -> FileMode -> IO ()",
        "getFileStatus :: RawFilePath -> IO FileStatus",
    }


def test_both_walks_give_the_same_page() -> None:
    if len(NATIVE) < 2:
        pytest.skip("no native HTML walk")
    page = haddock_page("System.Posix.Files")
    assert extract(page, native=True) == extract(page, native=False)
    assert Fingerprinter(native=True).fingerprint_page(page) == Fingerprinter(native=False).fingerprint_page(page)


#: (name, type, parameters, description) of a Javadoc class page's methods.
METHODS = [
    ("nextInt", "int", "int startInclusive, int endExclusive", "Returns a random integer within the specified range."),
    ("nextLong", "long", "long startInclusive, long endExclusive", "Returns a random long within the specified range."),
    ("nextFloat", "float", "float startInclusive, float endExclusive", "Returns a random float within the range."),
    ("nextBytes", "byte[]", "int count", "Creates an array of random bytes of the given length."),
    ("nextDouble", "double", "double startInclusive, double endExclusive", "Returns a random double within the range."),
    ("nextBoolean", "boolean", "", "Returns a random boolean value, true or false."),
    ("nextShort", "short", "short startInclusive, short endExclusive", "Returns a random short within the range."),
    ("nextChar", "char", "char startInclusive, char endExclusive", "Returns a random character within the range."),
    ("nextGaussian", "double", "double mean, double deviation", "Returns a random value of the normal distribution."),
    ("nextSeed", "long", "", "Returns the seed of the generator that this class uses."),
]


def javadoc_page(landmark: bool) -> str:
    """A Javadoc class page (in a ``<main>`` landmark, or not): a class description of two
    paragraphs, the method summary and each method's details (its signature and short lines)."""
    rows = "".join(
        f"<tr><td><code>static {t}</code></td><td><code><a href='#{m}'>{m}</a>({p})</code></td>"
        f"<td><div class='block'>{d}</div></td></tr>"
        for m, t, p, d in METHODS
    )
    details = "".join(
        f"<section class='detail' id='{m}'><h3>{m}</h3><div class='member-signature'>public static {t} {m}({p})"
        f"</div><div class='block'>{d}</div><dl><dt>Returns:</dt><dd>the random value</dd></dl></section>"
        for m, t, p, d in METHODS
    )
    tag = "main" if landmark else "div"
    return (
        "<html><head><title>RandomUtils (Commons Lang API)</title></head><body><nav><a href='/'>Overview</a> "
        f"<a href='/p'>Package</a></nav><{tag}><h1>Class RandomUtils</h1><section class='class-description'>"
        "<div class='type-signature'>public class RandomUtils extends Object</div><div class='block'><p>Utility "
        "library that supplements the standard Random class. Please note that the project provides a component "
        "dedicated to pseudo-random number generation, namely Commons RNG, that may be a better choice for "
        "applications with more stringent requirements (performance and correctness).</p><p>Instances of Random "
        "are not cryptographically secure: use a secure generator where the values must not be guessed, as for "
        "keys, tokens and salts, and seed it from the system's source of entropy.</p></div></section>"
        f"<section class='summary'><h2>Method Summary</h2><table>{rows}</table></section>"
        f"<section class='details'><h2>Method Details</h2>{details}</section></{tag}>"
        "<footer>Copyright 2001-2025. All rights reserved.</footer></body></html>"
    )


@pytest.mark.parametrize("landmark", [True, False])
@pytest.mark.parametrize("native", NATIVE)
def test_a_page_that_documents_members_is_its_member_docs(
    native: bool, landmark: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class page whose region is its description (the one block of sentences) beside the
    declarations of its methods is an API reference page: its member docs are its content (the
    methods' signatures and descriptions fingerprinted, with or without a ``<main>`` landmark).
    Without the rule (``_has_members`` answering no) the methods' descriptions are not."""
    page = javadoc_page(landmark)
    lines = extract(page, native=native).text.split("\n")
    for name, kind, params, description in METHODS:
        assert f"public static {kind} {name}({params})" in lines
        assert description in lines
    assert "Copyright 2001-2025. All rights reserved." not in lines
    monkeypatch.setattr("scrapy_simhash.text.extract.has_members", lambda blocks, main: False)
    without = extract(page, native=native).text.split("\n")
    assert not any(description in without for *_, description in METHODS)
    assert any(line.startswith("Utility library that supplements") for line in without)


_TYPES = ["f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]


def rustdoc_page(landmark: bool) -> str:
    """A rustdoc trait page: its declaration, description and implementors, each a ``code-header``
    heading (a class that looks like chrome), in a ``<main>`` landmark or not."""
    impls = "".join(
        f"<section id='impl-{t}' class='impl'><a href='src/x.rs.html' class='src rightside'>source</a>"
        f"<h3 class='code-header'>impl RemAssign&lt;{t}&gt; for {t}</h3></section>"
        for t in _TYPES
    )
    tag = "main" if landmark else "div"
    return (
        "<html><head><title>RemAssign in std::ops - Rust</title></head><body><nav class='sidebar'><a href='#'>"
        f"RemAssign</a><a href='#impl'>Implementors</a></nav><{tag}><h1>Trait std::ops::RemAssign</h1>"
        "<pre class='rust item-decl'><code>pub trait RemAssign&lt;Rhs = Self&gt; { fn rem_assign(&amp;mut self, "
        "rhs: Rhs); }</code></pre><details class='toggle top-doc' open><summary>Expand description</summary><div "
        "class='docblock'><p>The remainder assignment operator. The operation takes the value on its left, divides "
        "it by the value on its right and stores what is left of the division in the left operand.</p></div>"
        f"</details><h2 id='implementors'>Implementors</h2><div id='implementors-list'>{impls}</div></{tag}>"
        "</body></html>"
    )


@pytest.mark.parametrize("native", NATIVE)
def test_declarations_whose_class_looks_like_chrome_count_inside_a_landmark(native: bool) -> None:
    """rustdoc's implementors are ``<h3 class="code-header">`` headings: inside the page's ``<main>``
    landmark they are its entries; outside any landmark a class/id that says chrome keeps them out
    (a sidebar's list of declarations is navigation)."""
    inside = extract(rustdoc_page(True), native=native).text.split("\n")
    assert {f"impl RemAssign<{t}> for {t}" for t in _TYPES} <= set(inside)
    outside = extract(rustdoc_page(False), native=native).text.split("\n")
    assert not any(line.startswith("impl RemAssign") for line in outside)
    assert "pub trait RemAssign<Rhs = Self> { fn rem_assign(&mut self, rhs: Rhs); }" in inside + outside


#: (C function, one-line description) of a gi-docgen class page's instance methods.
C_METHODS = [
    ("gtk_cell_area_activate", "Activates area, usually by activating the currently focused cell."),
    ("gtk_cell_area_add_focus_sibling", "Adds sibling to the focusable area of the renderer, for a given row."),
    ("gtk_cell_area_apply_attributes", "Applies any connected attributes to the renderers in area."),
    ("gtk_cell_area_get_focus_cell", "Retrieves the currently focused cell for area, if there is one."),
]


def gi_docgen_page() -> str:
    """A gi-docgen class page: heading, declaration, description, then the instance methods, each a
    linked C function name over its one-line description."""
    methods = "".join(
        f"<div class=''><h6><a href='method.CellArea.{n[14:]}.html'>{n}</a></h6>"
        f"<div class='docblock'><p>{d}</p></div></div>"
        for n, d in C_METHODS
    )
    return (
        "<html><head><title>Gtk.CellArea</title></head><body><section id='main' class='content'><header>"
        "<h1><a href='index.html'>Gtk</a>CellArea</h1></header><section><div class='docblock c-decl'><pre><code>"
        "abstract class Gtk.CellArea : GObject.InitiallyUnowned {\n  /* No available fields */\n}</code></pre></div>"
        "<div class='toggle-wrapper'><h4 id='description'>Description</h4><div class='docblock'><p>The GtkCellArea is"
        " an abstract class for GtkCellLayout widgets to interface with an arbitrary number of GtkCellRenderers and"
        " interact with the user for a given GtkTreeModel row.</p><p>The cell area handles events, focus navigation,"
        " drawing and size requests and allocations for a given row of data.</p><p>Usually users do not have to"
        " interact with the GtkCellArea directly unless they are implementing a cell-layouting widget.</p></div></div>"
        f"<div class='toggle-wrapper methods'><h4 id='methods'>Instance methods</h4><div class='docblock'>{methods}"
        "</div></div></section></section></body></html>"
    )


@pytest.mark.parametrize("native", NATIVE)
def test_member_c_function_names_are_fingerprinted(native: bool) -> None:
    """gi-docgen's and gtk-doc's member lists name each member by its C function alone, a link: those
    names are the page's own entries (another class's page lists other names over like descriptions)."""
    lines = extract(gi_docgen_page(), native=native).text.split("\n")
    for name, _ in C_METHODS:
        assert name in lines
    assert "gtk" not in lines and "Gtk" not in lines  # not a link of the heading alone


def test_the_entry_test_reads_what_its_regex_reads() -> None:
    """``_is_entry``'s test of the characters every alternative of ``_ENTRY_RE`` needs never
    changes its answer: on declarations, headlines, the lines of every real page."""
    from helpers.data import load_pages

    from scrapy_simhash.text import entries
    from scrapy_simhash.text.blocks import Walker
    from scrapy_simhash.text.extract import decode_html, parse_prepared, prepare
    from scrapy_simhash.text.region import BOILERPLATE_RE, is_boilerplate

    def reference(text: str) -> bool:
        return (
            text.isascii()
            and entries._ENTRY_RE.search(text) is not None
            and not (text[0] == "<" and text[-1] == ">")
            and not is_boilerplate(text)
            and not BOILERPLATE_RE.match(text)
        )

    texts = [
        "unionFileModes :: FileMode -> FileMode",
        "add(long operand)",
        "| Just a",
        "= Nothing",
        "gtk_cell_area_activate",
        "fn rem_assign(&mut self, rhs: Rhs)",
        "Vec<T>",
        "public static int nextInt(int a)",
        "World news",
        "x => y",
        "Read more (2)",
        "struct\tFoo",
        "Cookie policy",
    ]
    for bodies in load_pages().values():
        for body in bodies[:40]:
            walker = Walker()
            walker.walk(parse_prepared(prepare(decode_html(body)[0])), 0, False, 0)
            walker.flush()
            texts += [b.norm for b in walker.blocks]
    found = [entries._is_entry(t) for t in texts]
    assert found == [reference(t) for t in texts]
    assert sum(found) >= 8  # (the declarations above at least)
