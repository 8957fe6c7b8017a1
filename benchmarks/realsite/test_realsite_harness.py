"""The real-site benchmark's own logic (benchmarks/realsite/) on a tiny generated site: page selection,
duplicate injection, scripted edits, the soft-404 server and the Jaccard judge. No Debian package
and no crawl needed."""

from __future__ import annotations

import random
import sys
import urllib.request
from pathlib import Path

import pytest
from lxml import html as lxml_html

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "realsite"))

from crawl import serve
from judge import (
    LOSS_CHARS,
    content_loss,
    content_share,
    decode,
    jaccard,
    mask,
    page_lines,
    parse,
    template_lines,
    visible_text,
)
from prepare import (
    SOFT404_FILE,
    SOFT404_TEXT,
    apply_edits,
    build,
    delete_blocks,
    link_key,
    plan_edits,
    shift_digits,
    text_blocks,
)

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()
N_PAGES = 40


def _page(i: int, links: list[int]) -> str:
    nav = "".join(f'<li><a href="p{j}.html">Page number {j}</a></li>' for j in links)
    paras = "".join(
        f"<p>Paragraph {k} of page {i}: "
        + " ".join(WORDS[(i * 7 + k * 3 + w) % len(WORDS)] for w in range(12))
        + f" on 2023-0{1 + k % 9}-1{k % 10}.</p>"
        for k in range(8)
    )
    return (
        f"<html><head><title>Page {i}</title><script>var x = 12345;</script></head><body>"
        f'<div class="sidebar"><ul>{nav}</ul></div>'
        f'<div class="document"><h1>Page {i}</h1>{paras}<pre>code &#8212; {i}</pre></div>'
        "<footer>Site footer with a copyright 2008-2023 line.</footer></body></html>"
    )


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    for i in range(N_PAGES):
        links = [j for j in (2 * i + 1, 2 * i + 2) if j < N_PAGES]  # a binary tree: BFS order is 0, 1, 2, ...
        (src / f"p{i}.html").write_text(_page(i, links), encoding="utf-8")
    (src / "p0.html").write_text(_page(0, [1, 2]).replace("</ul>", '<li><a href="sub/">Sub</a></li></ul>'))
    (src / "sub" / "index.html").write_text(_page(99, []), encoding="utf-8")
    return src


def test_link_key_resolves_relative_links_and_keeps_the_query() -> None:
    base = "http://h:1/a/b.html"
    assert link_key(base, "c.html#x") == "a/c.html"
    assert link_key(base, "../d%20e.html?utm_source=x") == "d e.html?utm_source=x"
    assert link_key(base, "sub/") == "a/sub/index.html"
    assert link_key(base, "http://other/x.html") is None
    assert link_key(base, "mailto:a@b") is None


def test_build_selects_pages_breadth_first_and_adds_duplicates(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "work" / "site"
    pages = build(source, "p0.html", dest, max_pages=31)
    own = [p for p in pages if p.kind == "page"]
    assert [p.path for p in own[:3]] == ["p0.html", "p1.html", "p2.html"]
    assert len(own) == 31 and "sub/index.html" in {p.path for p in own}
    kinds = {p.kind for p in pages}
    assert kinds == {"page", "mirror", "print", "tracking", "soft404"}
    soft = [p for p in pages if p.kind == "soft404"]
    assert len(soft) >= 3 and all(not (dest / p.path).exists() for p in soft)
    assert SOFT404_TEXT in visible_text(parse(decode((dest.parent / SOFT404_FILE).read_bytes())))
    by_group: dict[str, list] = {}
    for p in pages:
        if p.group and p.kind != "soft404":
            by_group.setdefault(p.group, []).append(p)
    assert len(by_group) == 3 and all(len(m) == 2 for m in by_group.values())
    linked = " ".join((dest / p.path).read_text() for p in own)
    for members in by_group.values():
        original, copy = members
        assert original.kind == "page"
        assert copy.url_path.replace("&", "&amp;") in linked or copy.url_path in linked  # the crawl finds it
        text = visible_text(parse(decode((dest / original.path).read_bytes())))
        if copy.kind == "mirror":
            assert (dest / copy.path).read_bytes() == (dest / original.path).read_bytes()
        elif copy.kind == "print":
            printed = visible_text(parse(decode((dest / copy.path).read_bytes())))
            assert "Page number" not in printed and "Site footer" not in printed  # no navigation, no footer
            assert jaccard(text, printed) >= 0.5
        else:
            assert copy.query.startswith("utm_source=") and copy.path == original.path


def test_a_mirror_holds_its_page_as_served_with_the_links_added_to_it(source: Path, tmp_path: Path) -> None:
    # A seed whose mirrored page also gets a broken link (to a soft-404 URL): before, the mirror was
    # copied first and lacked it (sqlite-api's session.html: a line the mirror lacks, so kept).
    for seed in range(60):
        dest = tmp_path / f"s{seed}" / "site"
        pages = build(source, "p0.html", dest, max_pages=31, seed=seed)
        mirror = next(p for p in pages if p.kind == "mirror")
        original = dest / mirror.path.removeprefix("mirror/")
        if "Old page" in original.read_text():
            assert (dest / mirror.path).read_bytes() == original.read_bytes()
            return
    pytest.fail("no seed gives a mirrored page a broken link")


def test_a_big_edit_deletes_content_never_a_list_of_links_in_the_content_area(tmp_path: Path) -> None:
    # LilyPond's glossary: each entry's page holds the whole glossary's list of entries (300 links)
    # in its content area, beside two short paragraphs; deleting 40% of the blocks deleted links
    # alone, the entry stayed as it was, and the benchmark counted `unchanged` a missed change.
    toc = "".join(f'<li><a href="e{k}.html">1.{k} entry number {k}</a></li>' for k in range(60))
    paras = "".join(
        f"<p>Paragraph {k}: " + " ".join(WORDS[(k + w) % len(WORDS)] for w in range(14)) + ".</p>" for k in range(8)
    )
    page = tmp_path / "entry.html"
    page.write_text(f"<html><head><title>Entry</title></head><body><div><ul>{toc}</ul>{paras}</div></body></html>")
    assert len(text_blocks(parse(page.read_text()))) == 8  # the paragraphs, not the links
    info = delete_blocks(page, 0.4, random.Random(3))
    text = page.read_text()
    assert all(f"entry number {k}<" in text for k in range(60))  # every link is left
    assert info["deleted"] >= 3 and sum(f"<p>Paragraph {k}:" in text for k in range(8)) <= 5


def test_edits_delete_a_third_of_the_blocks_or_change_only_digits(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "work" / "site"
    pages = build(source, "p0.html", dest, max_pages=N_PAGES)
    plan_edits(dest, pages)
    big = [p for p in pages if p.edit == "big"]
    digits = [p for p in pages if p.edit == "digits"]
    assert big and digits and not {p.path for p in big} & {p.path for p in digits}
    assert all(p.group is None and p.path != "p0.html" for p in big + digits)
    before = {p.path: (dest / p.path).read_text() for p in pages if p.kind == "page"}
    apply_edits(dest, pages)
    for p in big:
        assert p.info["deleted"] * 3 >= p.info["blocks"]
        assert len(text_blocks(parse((dest / p.path).read_text()))) <= p.info["blocks"] - p.info["deleted"]
        assert p.info["text_after"] < p.info["text_before"]
    for p in digits:
        old, new = before[p.path], (dest / p.path).read_text()
        assert p.info["digits"] > 0 and old != new and len(old) == len(new)
        assert [c for c in old if not c.isdigit()] == [c for c in new if not c.isdigit()]
        assert "var x = 12345;" in new and "&#8212;" in new  # scripts and entities untouched
    untouched = [p for p in pages if p.kind == "page" and p.edit is None]
    assert all((dest / p.path).read_text() == before[p.path] for p in untouched)


def test_digit_edits_move_numbers_not_names_and_keep_a_year_a_year(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    names = "x86_64 MFD_HUGE_64KB 100_000 0u128 0x4a sha256"
    page.write_text(f"<html><body><p>Last revised: May 19, 2023 at 08:12:33 GMT. {names} 3rd 12px</p></body></html>")
    info = shift_digits(page)
    text = page.read_text()
    # Before: "May 42, 5356 at 31:45:66" (no year: the line is no date), x86_97, MFD_HUGE_97KB, 433_333, 3u451.
    assert "May 42, 2056 at 31:45:66 GMT" in text
    assert "x86_64 MFD_HUGE_64KB 433_000 3u128 3x4a sha256 6rd 45px" in text
    assert info["digits"] == 2 + 2 + 6 + 3 + 1 + 1 + 1 + 2  # 19, 20(23), 08:12:33, 100, 0(u128), 0(x4a), 3rd, 12px


def test_server_ignores_the_query_and_answers_unknown_paths_with_a_soft_404(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "work" / "site"
    build(source, "p0.html", dest, max_pages=5)
    with serve(dest, dest.parent / SOFT404_FILE) as base:
        with urllib.request.urlopen(base + "/p1.html") as page, urllib.request.urlopen(base + "/p1.html?u=1") as same:
            assert page.read() == same.read()
        with urllib.request.urlopen(base + "/no/such/page.html") as missing:
            assert missing.status == 200 and SOFT404_TEXT.encode() in missing.read()


def test_judge_jaccard_and_visible_text() -> None:
    assert jaccard("the same text here", "the same text here") == 1.0
    assert jaccard("", "") == 1.0
    assert jaccard("completely different words", "nothing alike at all here") < 0.5
    a = " ".join(WORDS)
    assert 0.5 < jaccard(a, a + " one more sentence") < 1.0
    root = parse(
        "<html><head><title>T</title><style>p{}</style></head><body><p>Visible <b>text</b></p>"
        "<script>hidden()</script><div hidden>gone</div><div style='display: none'>gone too</div></body></html>"
    )
    assert visible_text(root) == "T Visible text"
    assert visible_text(parse('<?xml version="1.0" encoding="UTF-8"?><html><body><p>x</p></body></html>')) == "x"


BASE_NOTES = [
    "Add the unixepoch() SQL function and the auto modifier for date and time functions.",
    "Improve the query planner so that it uses covering indexes on more expressions.",
    "Allow the CLI to read its input from a named pipe without buffering whole lines.",
]
OWN_NOTES = [
    "Fix a long-standing problem in the btree balancer that might cause index corruption.",
    "Use a mutex to protect the PRAGMA temp_store_directory statement in threaded builds.",
]


def _release(version: str, date: str, notes: list[str], sha: str) -> bytes:
    items = "".join(f"<li>{n}</li>" for n in notes)
    return (
        f"<html><head><title>Release {version}</title></head><body>"
        f'<div class="sidebar"><ul><li>Download the latest release of the library here</li></ul></div>'
        f"<h1>Release {version} on {date}</h1><ul>{items}</ul>"
        f"<table><tr><td>SHA3-256 for the amalgamation:</td><td>{sha}</td></tr></table>"
        "<p>Copyright notice of the whole project, repeated on every page of the site.</p></body></html>"
    ).encode()


def test_page_lines_one_line_per_block_without_the_chrome() -> None:
    lines = page_lines(_release("3.39.0", "2022-06-25", BASE_NOTES, "a29f9949895322"))
    assert lines[0] == "Release 3.39.0"  # the title
    assert "Release 3.39.0 on 2022-06-25" in lines and BASE_NOTES[0] in lines
    assert "SHA3-256 for the amalgamation: a29f9949895322" in lines  # a table row is one line
    assert not any("Download the latest" in line for line in lines)  # the sidebar is chrome
    nav = page_lines(b"<html><body><nav><p>Home Next</p></nav><div role='navigation'>Up</div><p>Text</p></body></html>")
    assert nav == ["Text"]
    wrapped = page_lines(
        b"<html><body><p>One paragraph\nwrapped in the source</p><pre>line 1\n<b>line</b> 2</pre></body></html>"
    )
    assert wrapped == ["One paragraph wrapped in the source", "line 1", "line 2"]


def test_page_lines_keep_a_wrapper_whose_class_says_chrome() -> None:
    # QDoc leaves <div class="header"> open around the whole page: it holds the main heading and
    # most of the text, so it is the page's wrapper; the navigation bar inside it is still chrome.
    body = (
        b"<html><body><div class='header'><div class='navigationbar'><ul><li>Qt 5.15</li><li>Qt Widgets</li></ul>"
        b"</div><div class='content'><h1>QToolBox Class</h1><p>The QToolBox class provides a column of tabbed"
        b" widget items.</p><p>A toolbox is a widget that displays a column of tabs one above the other.</p>"
        b"</div></div></body></html>"
    )
    assert page_lines(body) == [
        "QToolBox Class",
        "The QToolBox class provides a column of tabbed widget items.",
        "A toolbox is a widget that displays a column of tabs one above the other.",
    ]
    # Read the Docs: a <nav> sidebar that outweighs a short page beside <div class="wy-nav-content-wrap">,
    # which holds the heading and the rest of the text: the wrapper's share is of the text outside the <nav>.
    toc = "".join(f"<li>Chapter {i} of the book</li>" for i in range(20))
    rtd = (
        f"<html><body><nav class='wy-nav-side'><ul>{toc}</ul></nav><div class='wy-nav-content-wrap'>"
        "<h1>Source code for scrapy.http.response.xml</h1><pre>class XmlResponse(TextResponse):\n    pass</pre>"
        "</div></body></html>"
    ).encode()
    assert page_lines(rtd) == ["Source code for scrapy.http.response.xml", "class XmlResponse(TextResponse):", "pass"]
    # A sidebar that outweighs a short page, without its main heading, stays chrome.
    sidebar = (
        "<html><body><div class='sidebar'><ul>"
        + "".join(f"<li>Chapter {i} of the book</li>" for i in range(20))
        + "</ul></div><div><h1>Acknowledgements</h1><p>Thanks to all.</p></div></body></html>"
    ).encode()
    assert page_lines(sidebar) == ["Acknowledgements", "Thanks to all."]


def test_content_share_counts_the_content_text_that_is_fingerprinted() -> None:
    lines = [
        "The QToolBox class provides a column of tabbed widget items.",  # 60 characters
        "Short cell",  # under 16 characters: covered when it is in the text whole
        "Copyright 2024 The Qt Company",  # a template line: not the page's own text
    ]
    template = {mask(lines[2])}
    assert content_share(lines, lines[0] + "\nShort cell", template) == (70, 70)
    assert content_share(lines, lines[0], template) == (60, 70)
    assert content_share(lines, "", template) == (0, 70)
    # A renamed word is not fingerprinted, nor the characters around it that no 16-character window
    # of the text covers; the rest of the line is.
    covered, total = content_share([lines[0]], lines[0].replace("tabbed", "tabular"))
    assert total == 60 and 30 < covered <= 60 - len("tabbed")
    # Fingerprinted text that is not the page's content (navigation) does not raise the share.
    assert content_share(lines, "Home Next Previous Index " * 40, template) == (0, 70)


def test_mask_hides_digits_and_hex_hashes_but_not_words() -> None:
    assert mask("Release 3.39.4 on 2022-09-29") == mask("Release 3.40.10 on 2023-01-03") == "release 0.0.0 on 0-0-0"
    assert mask("hash a29f9949895322 and f65082298127e") == "hash # and #"
    assert mask("the deadbeef word and u64") == "the deadbeef word and u0"  # no digit: a word, not a hash


def test_template_lines_recur_on_many_pages() -> None:
    pages = [[f"Page {i} text of its own, one line", "Copyright 2008-2023 the project"] for i in range(60)]
    pages[0].append("A line on two pages only, not the template")
    pages[1].append("A line on two pages only, not the template")
    template = template_lines(pages)
    assert template == {
        mask("Copyright 2008-2023 the project"),
        mask("Page 1 text of its own, one line"),
    }  # digits masked


def test_content_loss_of_a_patch_release_dropped_as_its_base_release() -> None:
    base = page_lines(_release("3.39.0", "2022-06-25", BASE_NOTES, "a29f9949895322"))
    patch = page_lines(_release("3.39.4", "2022-09-29", BASE_NOTES + OWN_NOTES, "f65082298127e2"))
    loss = content_loss(patch, base)
    assert loss.chars >= LOSS_CHARS
    assert [line for line, _ in loss.lines] == OWN_NOTES
    assert content_loss(base, patch).chars == 0  # the base release's page is inside the patch's: nothing lost
    template = {mask(OWN_NOTES[0]), mask(OWN_NOTES[1])}
    assert content_loss(patch, base, template).chars == 0  # template lines are not the page's own text


def test_content_loss_ignores_changed_numbers_hashes_and_single_words() -> None:
    page = page_lines(_release("3.39.0", "2022-06-25", BASE_NOTES, "a29f9949895322"))
    copy = page_lines(_release("3.40.1", "2023-12-28", BASE_NOTES, "0bc3417fe0a9d1"))
    assert content_loss(copy, page).chars == 0
    renamed = [BASE_NOTES[0], BASE_NOTES[1].replace("covering", "partial"), BASE_NOTES[2]]
    assert content_loss(page_lines(_release("3.39.0", "2022-06-25", renamed, "a29f9949895322")), page).chars == 0
    lost = [len(mask(line)) for line in page if len(mask(line)) >= 16]  # masked: digit runs are one character
    assert content_loss(page, []).chars == sum(lost)  # no kept page: all the own text is lost


def test_drops_judge_content_loss_and_leave_out_the_print_line(source: Path, tmp_path: Path) -> None:
    """run.judged_drops: a print view dropped as its page loses nothing (the "Printed from" line is the
    benchmark's), a page dropped as one without three of its paragraphs is lossy."""
    from prepare import Page, print_view
    from run import Fetched, judged_drops

    from scrapy_simhash import Fingerprinter

    fper = Fingerprinter()
    body = (source / "p3.html").read_bytes()
    root, encoding = print_view(body, "/p3.html")
    printed = lxml_html.tostring(root, encoding="unicode").encode(encoding)
    base = "http://127.0.0.1:1/"

    def fetched(path: str, data: bytes, kind: str, verdict: str | None, of: str | None) -> Fetched:
        record = {"url": base + path, "content_type": "text/html", "verdict": verdict, "duplicate_of": of}
        record["distance"] = 0
        return Fetched(record, data, Page(path, kind=kind, group="print:p3.html" if "p3" in path else None), fper)

    own = "".join(
        f"<p>Release {i} fixes a bug in the planner that corrupts indexes of table t{i}.</p>" for i in range(3)
    )
    other = body.replace(b"</h1>", b"</h1>" + own.encode())  # p3 and three notes of its own
    pages = {
        base + "p3.html": fetched("p3.html", body, "page", None, None),
        base + "print/p3.html": fetched("print/p3.html", printed, "print", "near_duplicate", base + "p3.html"),
        base + "p4.html": fetched("p4.html", other, "page", "near_duplicate", base + "p3.html"),
    }
    drops = {d["url"]: d for d in judged_drops(pages, set())}
    copy, different = drops[base + "print/p3.html"], drops[base + "p4.html"]
    assert copy["lost_chars"] == 0 and not copy["false"]
    assert different["lossy"] and different["false"] and different["lost_chars"] >= LOSS_CHARS
    assert [line for line, _ in different["lost_lines"]] == [
        f"Release {i} fixes a bug in the planner that corrupts indexes of table t{i}." for i in range(3)
    ]


def test_a_print_view_keeps_its_pages_charset(tmp_path: Path) -> None:
    """A page in EUC-KR that says so in ``<meta http-equiv>`` (apache2-doc's ko/ pages): its print
    view, written in EUC-KR, says so too (the serializer drops that meta: the print view was read
    as another charset, a copy no site serves, and never dropped)."""
    from prepare import decode, print_view, write_tree

    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=EUC-KR"><title>문서</title>'
        "</head><body><div><h1>아파치 문서</h1><p>설정 지시어와 모듈의 참조 설명서입니다. 가상호스트와 로그파일.</p></div></body></html>"
    ).encode("euc-kr")
    root, encoding = print_view(page, "/ko/index.html")
    write_tree(tmp_path / "print.html", root, encoding)
    text = decode((tmp_path / "print.html").read_bytes())
    assert "아파치 문서" in text and "Printed from /ko/index.html" in text


def test_a_skip_is_lossy_when_the_products_decision_would_keep_its_page(source: Path) -> None:
    """run.lossy_skips (--url-rules): a skipped copy of a fetched page, or its print view, loses
    nothing; a skipped page with three paragraphs of its own, or a page no fetch showed, is lossy."""
    from prepare import print_view
    from run import lossy_skips

    base = "http://127.0.0.1:1/"
    body = {i: (source / f"p{i}.html").read_bytes() for i in (3, 4, 5)}
    root, encoding = print_view(body[3], "/p3.html")
    printed = lxml_html.tostring(root, encoding="unicode").encode(encoding)
    own = "".join(
        f"<p>Release {i} fixes a bug in the planner that corrupts indexes of table t{i}.</p>" for i in range(3)
    )
    ctype = "text/html"
    fetched = [(base + "p3.html", body[3], ctype), (base + "p4.html", body[4], ctype)]
    skipped = [
        (base + "p3.html?utm_source=x", body[3], ctype),
        (base + "print/p3.html", printed, ctype),
        (base + "p3.html?ref=adds", body[3].replace(b"</h1>", b"</h1>" + own.encode()), ctype),
        (base + "p5.html?utm_source=x", body[5], ctype),
    ]
    assert lossy_skips(fetched, skipped) == [base + "p3.html?ref=adds", base + "p5.html?utm_source=x"]
    # each skip is judged against the fetched pages alone: the same skips in another order, the same
    assert lossy_skips(fetched, skipped[::-1]) == [base + "p5.html?utm_source=x", base + "p3.html?ref=adds"]


def test_a_skipped_request_is_read_from_the_rules_ignore_request() -> None:
    """crawl.skip_record reads the URL rules' IgnoreRequest message
    (scrapy_simhash.scrapy.urlrules); another IgnoreRequest is no skip. split_records parts a
    crawl's records."""
    from crawl import skip_record, split_records

    message = "simhash: http://h/p1?utm_source=a is a copy of http://h/p1 by URL rule param:utm_source, slash:add"
    record = skip_record(message)
    assert record == {"url": "http://h/p1?utm_source=a", "status": None, "skipped": True, "kept": "http://h/p1"}
    assert skip_record("Forbidden by robots.txt") is None
    page = {"url": "http://h/p1", "status": 200}
    summary = {"url_rules": {"simhash/url_rules/skipped": 1}, "learned": [], "status": None, "url": None}
    assert split_records([page, record, summary]) == ([page], [record], summary)
    assert split_records([page]) == ([page], [], {})
