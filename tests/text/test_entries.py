"""An API reference page's own entries are in its fingerprinted text (``text.region._with_entries``):
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
    ("unionFileModes", ["FileMode", "FileMode"], "FileMode", "Combines the two file modes into one that contains both."),
    ("intersectFileModes", ["FileMode", "FileMode"], "FileMode", "Combines two file modes into one that has the common."),
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
