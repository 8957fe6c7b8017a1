"""Tests for scrapy_simhash.extract: charset decoding, main-content extraction, titles, bad input."""

from __future__ import annotations

import gzip
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import lxml.html
import pytest
from helpers.pages import EN_PARAS
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_simhash.text.extract import MAX_HTML_CHARS, Document, decode_html, extract

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"

# Texts written for these tests.
ZH_PARAS = [
    "今年春天，城东的老菜市场完成了改造，原来的铁皮屋顶换成了透光的玻璃，摊位也重新编号。",
    "附近的居民说，改造以后市场里明亮了许多，排水沟不再堵塞，下雨天也不用踩着积水买菜了。",
    "市场管理处表示，下一步还要在二楼开设一个小型食堂，让早起进货的摊主们能吃上一口热饭。",
]
NAV = ["Home", "World", "Business", "Sport", "Weather", "Contact"]


def _links(words: list[str]) -> str:
    return "".join(f'<li><a href="/{w.lower()}">{w}</a></li>' for w in words)


def _article_page(title: str = "Ferry timetable changes - Island Gazette") -> str:
    paras = "".join(f"<p>{p}</p>" for p in EN_PARAS)
    related = _links(
        [
            "Bridge closed for repairs",
            "New bus route to the airport",
            "Lighthouse open to visitors",
            "Fish market moves to the quay",
        ]
    )
    return f"""<!DOCTYPE html><html><head><title>{title}</title>
<script>var tracking = "do not index this script text";</script>
<style>.x {{ color: red }}</style></head>
<body>
<header><div class="logo">Island Gazette</div></header>
<nav><ul>{_links(NAV)}</ul></nav>
<div id="main"><article><h1>Ferry timetable changes</h1>{paras}
<div class="share-buttons">Share on Facebook Share on Twitter</div>
<div class="related"><h3>Related stories</h3><ul>{related}</ul></div>
</article></div>
<div class="sidebar"><h3>Most read</h3><p>Weather warning for the weekend, strong winds expected.</p>
<ul>{_links(["Storm", "Tides", "Events"])}</ul></div>
<footer><p>Copyright 2024 Island Gazette. All rights reserved.</p><ul>{_links(["About", "Privacy"])}</ul></footer>
</body></html>"""


def _table_page_gbk(declare: bool) -> bytes:
    meta = '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">' if declare else ""
    nav = " | ".join(
        f'<a href="/c{i}.html">{w}</a>'
        for i, w in enumerate(["首页", "新闻", "财经", "体育", "娱乐", "汽车", "房产", "论坛"])
    )
    body = "<br><br>".join("　　" + p for p in ZH_PARAS)
    related = "<br>".join(
        f'<a href="/r{i}.html">{t}</a>'
        for i, t in enumerate(["老城区新建三座停车场", "公交线路调整通知", "社区图书馆延长开放时间"])
    )
    html = f"""<html><head><title>老菜市场改造完成_城市频道_东城网</title>{meta}</head>
<body><table width="760"><tr><td colspan="2">{nav}</td></tr>
<tr><td width="180" valign="top"><a href="/a.html">热点排行</a><br><a href="/b.html">图片新闻</a><br>
<a href="/c.html">专题报道</a></td>
<td valign="top"><font size="4"><b>老菜市场改造完成</b></font><br>{body}<br><br>
相关链接：<br>{related}</td></tr>
<tr><td colspan="2">版权所有 东城网 2005</td></tr></table></body></html>"""
    return html.encode("gbk")


# --------------------------------------------------------------------------- charset


def test_gbk_without_any_declaration_is_sniffed():
    body = _table_page_gbk(declare=False)
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    text, enc = decode_html(body)
    assert enc == "gb18030"
    assert ZH_PARAS[0] in text


def test_gbk_with_a_stray_byte_is_still_sniffed_as_gb18030():
    body = _table_page_gbk(declare=False)
    cut = body.index("排水沟".encode("gbk"))
    body = body[:cut] + b"\xc7" + b"[" + body[cut:]  # a lead byte without its trail byte
    text, enc = decode_html(body)
    assert enc == "gb18030"
    assert ZH_PARAS[2] in text


def test_meta_charset_is_used():
    body = '<html><head><meta charset="gbk"><title>标题</title></head><body>中文</body></html>'
    text, enc = decode_html(body.encode("gbk"))
    assert enc == "gb18030"  # GBK is decoded as its superset
    assert "中文" in text


def test_http_header_charset_beats_meta():
    body = '<html><head><meta charset="iso-8859-1"></head><body>中文内容</body></html>'.encode("gbk")
    text, enc = decode_html(body, content_type="text/html; charset=GBK")
    assert enc == "gb18030"
    assert "中文内容" in text
    # Without the header the meta (cp1252) wins, and the text is mojibake.
    text2, enc2 = decode_html(body)
    assert enc2 == "cp1252" and "中文内容" not in text2


def test_content_type_may_be_bytes_as_in_scrapy_headers():
    body = "<html><body>中文内容</body></html>".encode("gbk")
    text, enc = decode_html(body, content_type=b"text/html; charset=gb2312")
    assert enc == "gb18030" and "中文内容" in text
    assert extract(body, content_type=b"text/html; charset=gbk").text == "中文内容"


def test_explicit_encoding_beats_header_and_meta():
    body = '<html><head><meta charset="utf-8"></head><body>Grüße</body></html>'.encode("cp1252")
    text, enc = decode_html(body, encoding="latin-1", content_type="text/html; charset=utf-8")
    assert enc == "cp1252"
    assert "Grüße" in text


def test_unknown_explicit_encoding_is_a_value_error():
    with pytest.raises(ValueError, match="encoding='no-such-codec'"):
        decode_html(b"<p>x</p>", encoding="no-such-codec")


def test_bom_beats_everything():
    body = "\ufeff<html><head><meta charset='gbk'></head><body>中文 text</body></html>".encode("utf-8")
    text, enc = decode_html(body, content_type="text/html; charset=gbk")
    assert enc == "utf-8"
    assert text.startswith("<html>")
    assert "中文 text" in text
    text16, enc16 = decode_html("\ufeff<p>中文</p>".encode("utf-16-le"))
    assert enc16.startswith("utf-16") and "中文" in text16


def test_valid_utf8_overrules_a_wrong_declaration():
    body = '<html><head><meta charset="gb2312"></head><body>这是UTF-8页面。</body></html>'.encode()
    text, enc = decode_html(body)
    assert enc == "utf-8"
    assert "这是UTF-8页面。" in text


def test_undecodable_bytes_never_raise():
    body = b"<html><body><p>caf\xe9 \x81\x8d\x90 \xff\xfe\xfd na\xefve</p></body></html>"
    text, enc = decode_html(body)
    assert enc == "cp1252"
    assert "café" in text
    doc = extract(body, content_type="text/html; charset=utf-8")
    assert isinstance(doc.text, str)


def test_extract_reports_the_encoding():
    assert extract(_table_page_gbk(declare=True)).encoding == "gb18030"
    assert extract("<p>already text</p>").encoding is None


# --------------------------------------------------------------------------- main content


def test_article_kept_and_chrome_dropped():
    doc = extract(_article_page())
    for para in EN_PARAS:
        assert para in doc.text
    for junk in [
        "Weather",
        "Bridge closed",
        "Share on",
        "Copyright",
        "Most read",
        "Island Gazette",
        "tracking",
        "color: red",
        "Lighthouse",
        "Privacy",
    ]:
        assert junk not in doc.text, junk
    # One paragraph per line.
    assert doc.text.split("\n") == EN_PARAS


def test_visible_text_keeps_chrome_but_not_scripts():
    doc = extract(_article_page(), main_content=False)
    for para in EN_PARAS:
        assert para in doc.text
    for chrome in ["Weather", "Bridge closed", "Copyright 2024", "Most read"]:
        assert chrome in doc.text
    assert "tracking" not in doc.text and "color: red" not in doc.text
    assert "Ferry timetable changes - Island Gazette" not in doc.text  # <title> is not body text


def test_table_layout_page():
    doc = extract(_table_page_gbk(declare=True))
    assert doc.encoding == "gb18030"
    assert doc.title == "老菜市场改造完成"
    lines = doc.text.split("\n")
    for para in ZH_PARAS:
        assert para in lines  # <br> breaks are paragraph breaks, indentation stripped
    for junk in ["首页", "热点排行", "公交线路调整通知", "相关链接", "版权所有"]:
        assert junk not in doc.text, junk


def test_text_between_han_characters_has_no_source_line_breaks():
    html = "<html><body><div><p>今天上午，城东的老菜市场\n完成了改造，\n摊主们都很高兴。这是一个很长的句子，用来凑够长度。</p></div></body></html>"
    doc = extract(html)
    assert "老菜市场完成了改造，摊主们都很高兴。" in doc.text


def test_content_inside_a_chrome_looking_wrapper_is_found():
    paras = "".join(f"<span>{p}</span><br>" for p in EN_PARAS)
    html = f"""<html><body><nav>{_links(NAV)}</nav>
<div class="widget Blog"><div class="post-body">{paras}</div></div></body></html>"""
    doc = extract(html)
    for para in EN_PARAS:
        assert para in doc.text
    assert "Weather" not in doc.text


def test_aspnet_form_wrapper_keeps_content():
    paras = "".join(f"<p>{p}</p>" for p in EN_PARAS)
    html = f'<html><body><form id="aspnetForm" method="post"><div>{paras}</div><input value="x"></form></body></html>'
    doc = extract(html)
    assert doc.text.split("\n") == EN_PARAS


# --------------------------------------------------------------------------- metadata lines


def _with_line(line_html: str, paras: list[str] = EN_PARAS, where: int = 1) -> str:
    """An article page with ``line_html`` between its paragraphs (at index ``where``): not at an
    edge, where trimming would drop any short block anyway."""
    blocks = [f"<p>{p}</p>" for p in paras]
    blocks.insert(where, line_html)
    return f"""<html><head><title>Ferry timetable changes</title></head><body>
<nav><ul>{_links(NAV)}</ul></nav><article><h1>Ferry timetable changes</h1>{"".join(blocks)}</article>
</body></html>"""


@pytest.mark.parametrize(
    "line_html",
    [
        # the bundled demo's garden-festival pair: these lines differ between two copies of one article
        (
            '<div class="meta"><span class="byline">By Daniel Osei</span> <time>Saturday 14 September 2024</time>'
            ' <span class="views">1,204 views</span></div>'
        ),
        (
            '<div class="meta"><span class="byline">By Daniel Osei</span> <time>Published 14 September 2024, '
            'updated 16 September 2024 08:15</time> <span class="views">12,877 views, 23 comments</span></div>'
        ),
        # the same lines without telling markup: the text alone says metadata
        "<div>By Daniel Osei Published 14 September 2024, updated 16 September 2024 08:15 12,877 views, 23 comments</div>",
        "<p>Posted by admin on March 3, 2021 at 10:30 pm | 5 comments</p>",
        "<p>Last updated: 2021-03-03 10:30 UTC</p>",
        "<div>作者:zboygirl 阅读(1660) 评论(5) 编辑发表于:2005-07-31 12:30</div>",
        "<div>发布时间：2024年9月14日 10:30 来源：新华网 作者：张三 浏览次数：1234</div>",
        # markup only: a byline of names, a <time> of its own
        '<p class="post-meta">By Daniel Osei and Maria Lopez, Staff Reporters</p>',
        "<div><time>Sat 14 Sep</time></div>",
    ],
    ids=[
        "demo-news-meta",
        "demo-archive-meta",
        "text-only",
        "posted-by",
        "last-updated",
        "zh-blog",
        "zh-news",
        "byline-class",
        "time-element",
    ],
)
def test_metadata_lines_are_dropped(line_html):
    doc = extract(_with_line(line_html))
    assert doc.text.split("\n") == EN_PARAS
    # All visible text still has it: only the main content drops metadata.
    visible = extract(_with_line(line_html), main_content=False).text
    assert len(visible.split("\n")) > len(EN_PARAS) + 1


def test_copies_differing_only_in_metadata_have_the_same_text():
    # What the demo site's garden-festival group needs: before, one line was kept (a GOOD block:
    # long, with commas) and the other trimmed, so the fingerprints were 4 bits apart.
    html = _article_page().replace(
        "<h1>Ferry timetable changes</h1>",
        '<h1>Ferry timetable changes</h1><div class="meta"><span class="byline">By Ann Lee</span> {}</div>',
    )
    short = html.replace("{}", "<time>Saturday 14 September 2024</time> <span>1,204 views</span>")
    long = html.replace(
        "{}",
        "<time>Published 14 September 2024, updated 16 September 2024 08:15</time> "
        "<span>12,877 views, 23 comments</span>",
    )
    assert extract(short).text == extract(long).text == "\n".join(EN_PARAS)


@pytest.mark.parametrize(
    "line",
    [
        # article text that mentions dates, times and numbers
        "On 14 September 2024 the council voted to keep the ferry running all year.",
        "The festival returns on 12 September 2025.",
        "Tickets cost 4.50 on weekdays and 6.00 at weekends, from 1 May 2024.",
        "2017年2月17日，山东省聊城市中级法院一审以故意伤害罪判处于欢无期徒刑。",
        "（2004年12月11－12日，南开大学）",
        # lists and tables in an article: no word that says metadata, no year
        "Tue – Sat 4PM (Closed on Sun & Mon)",
        "9:20—9:50",
        "225.86",
        "1999.99",
        "第一场(a)：12月11日下午1:30-3:30",
    ],
)
def test_article_lines_with_dates_and_numbers_stay(line):
    doc = extract(_with_line(f"<p>{line}</p>"))
    assert line in doc.text.split("\n")


def test_a_sentence_inside_metadata_markup_stays():
    line = "The garden opens at nine, closes at six, and entry is free for everyone."
    doc = extract(_with_line(f'<p class="info">{line}</p>'))
    assert line in doc.text.split("\n")


def test_a_metadata_class_around_the_whole_article_is_not_metadata():
    paras = EN_PARAS + [p.replace("The ", "This year the ", 1) for p in EN_PARAS]
    body = "".join(f"<p>{p}</p>" for p in paras)
    html = f"""<html><body><nav><ul>{_links(NAV)}</ul></nav>
<div class="article-info"><p>By Ann Lee</p>{body}</div></body></html>"""
    doc = extract(html)
    assert doc.text.split("\n") == paras


def test_no_main_content_falls_back_to_visible_text():
    html = "<html><body><div><span>Opening hours</span> <span>Mon-Fri 9-17</span></div></body></html>"
    doc = extract(html)
    assert doc.text == "Opening hours Mon-Fri 9-17"


def test_body_inside_head_after_unknown_tag():
    # libxml2 nests <body> in <head> after an unknown tag there (seen on old Chinese portals).
    paras = "".join(f"<p>{p}</p>" for p in ZH_PARAS)
    html = f"<html><head><title>t</title><cms_include:style><body><div>{paras}</div></body></html>"
    doc = extract(html)
    assert doc.text.split("\n") == ZH_PARAS


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        ("Ferry timetable changes - Island Gazette", "Ferry timetable changes"),
        ("Ferry timetable changes | Island Gazette", "Ferry timetable changes"),
        (
            "Island Gazette | Ferry timetable changes for the winter",
            "Ferry timetable changes for the winter",
        ),
        ("老菜市场改造完成_城市频道_新浪网", "老菜市场改造完成"),
        ("老菜市场改造完成——东城网", "老菜市场改造完成"),
        ("工商部门初定广告属于虚假宣传-搜狐财经", "工商部门初定广告属于虚假宣传"),
        ("Lunar probe - a short guide", "a short guide"),  # the longer part wins
        (
            "Twenty-one pilots tour dates",
            "Twenty-one pilots tour dates",
        ),  # a bare hyphen is no separator
        ("  Plain   title  ", "Plain title"),
        ("e-mail tips for beginners", "e-mail tips for beginners"),
        ("iPhone15_太平洋电脑网_手机频道", "太平洋电脑网"),  # "_" beside a Han character separates
    ],
)
def test_title_site_name_removed(raw, title):
    assert extract(f"<html><head><title>{raw}</title></head><body><p>x</p></body></html>").title == title


@pytest.mark.parametrize(
    ("raw", "headings", "title"),
    [
        # rustdoc: a name under 4 characters, a whole word of the heading
        ("u64 - Rust", '<h1>Primitive Type <a href="#">u64</a></h1>', "u64"),
        # mdBook: the site's name is the first <h1> (the menu bar); the page's own comes first in <title>
        (
            "Data Types - The Rust Programming Language",
            '<div id="menu-bar"><h1 class="menu-title">The Rust Programming Language</h1></div><h1>Data Types</h1>',
            "Data Types",
        ),
        # mdBook's section pages: the page's own heading is an <h2> inside <main>
        (
            "Comments - The Rust Programming Language",
            (
                '<div id="menu-bar"><h1 class="menu-title">The Rust Programming Language</h1></div>'
                '<main><h2 id="comments">Comments</h2></main>'
            ),
            "Comments",
        ),
        # a part under 4 characters only where no longer part is repeated
        (
            "A - Keywords - The Rust Programming Language",
            '<h1 class="menu-title">The Rust Programming Language</h1><main><h2>Appendix A: Keywords</h2></main>',
            "Keywords",
        ),
        # a theme's site-title <h1> in the header, the article's <h2> in <main>
        (
            "Harbour Times | Storm closes the harbour",
            '<header><h1 class="site-title">Harbour Times</h1></header><main><h2>Storm closes the harbour</h2></main>',
            "Storm closes the harbour",
        ),
        ("CMAKE_AR — CMake 3.25.1 Documentation", "<h1>CMAKE_AR</h1>", "CMAKE_AR"),
        ("Models — Django documentation", "<h1>Models</h1>", "Models"),
        ("Go - Rustic Recipes", "<h1>Rustic Recipes</h1>", "Rustic Recipes"),  # "go" is no word of the heading
    ],
)
def test_title_is_the_part_a_heading_repeats(raw, headings, title):
    html = f"<html><head><title>{raw}</title></head><body>{headings}<p>x</p></body></html>"
    assert extract(html).title == title
    assert extract(html, native=False).title == title


def test_title_falls_back_to_og_title_then_h1():
    og = '<html><head><meta property="og:title" content="Open graph title - Site"></head><body>x</body></html>'
    assert extract(og).title == "Open graph title"
    h1 = "<html><body><h1>Heading title</h1><p>x</p></body></html>"
    assert extract(h1).title == "Heading title"
    assert extract("<p>no title</p>").title == ""


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", [None, 42, 3.5, ["<p>x</p>"], {"html": "x"}])
def test_non_str_bytes_is_a_type_error(bad):
    with pytest.raises(TypeError, match="html must be str or bytes"):
        extract(bad)


def test_decode_html_rejects_str():
    with pytest.raises(TypeError, match="body must be bytes"):
        decode_html("<p>x</p>")  # type: ignore[arg-type]  # the wrong type on purpose


@pytest.mark.parametrize(
    "junk",
    [
        b"",
        "",
        "   \n\t ",
        b"   ",
        b"\x00\x01\x02\xff\xfe" * 1000,
        bytes(range(256)) * 50,
        "<<<>>><!--",
        "</p></div></html>",
        "<?xml version='1.0' encoding='utf-8'?><p>xml decl</p>",
        "text\x00with\x00nul bytes and more text",
    ],
)
def test_junk_gives_a_document(junk):
    doc = extract(junk)
    assert isinstance(doc, Document)
    assert isinstance(doc.text, str) and isinstance(doc.title, str)


def test_empty_and_whitespace_give_empty_text():
    doc = extract(b"")
    assert (doc.title, doc.text, doc.encoding, doc.method) == ("", "", "utf-8", "empty")
    assert extract("  \n ").text == ""


def test_broken_markup_keeps_text():
    doc = extract("<html><body><div><p>" + EN_PARAS[0] + "<p><b>" + EN_PARAS[1] + "</div></td></html>")
    assert EN_PARAS[0] in doc.text and EN_PARAS[1] in doc.text
    assert "xml decl" in extract("<?xml version='1.0' encoding='utf-8'?><p>xml decl</p>").text


def test_huge_page_is_cut_not_choked_on():
    para = "<p>" + EN_PARAS[0] + "</p>\n"
    body = ("<html><body><div>" + para * (20_000_000 // len(para)) + "</div></body></html>").encode()
    assert len(body) > 19_000_000
    doc = extract(body)
    lines = doc.text.split("\n")
    assert set(lines) == {EN_PARAS[0]}
    assert len(doc.text) <= MAX_HTML_CHARS


def test_deep_nesting():
    # libxml2 keeps up to ~2000 levels with huge_tree (256 without); the walk flattens below 200.
    html = "<div>" * 1500 + "<p>" + EN_PARAS[0] + "</p>" + "</div>" * 1500
    assert EN_PARAS[0] in extract(html).text


_TAGS = [
    "p",
    "div",
    "td",
    "tr",
    "table",
    "br",
    "a",
    "script",
    "nav",
    "li",
    "span",
    "title",
    "head",
    "body",
    "html",
    "style",
    "form",
    "iframe",
    "text",
    "!--",
    "?xml",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(_TAGS).map(lambda t: f"<{t}>"),
            st.sampled_from(_TAGS).map(lambda t: f"</{t}>"),
            st.sampled_from(
                [
                    '<a href="x">',
                    '<div class="sidebar">',
                    '<p style="display:none">',
                    "&nbsp;",
                    "&#0;",
                    "\x00",
                    "<meta charset=gbk>",
                    "<![CDATA[",
                    "\ufeff",
                ]
            ),
        ),
        max_size=60,
    )
)
def test_fuzzed_markup_never_raises(parts):
    html = "".join(parts)
    for page in (html, html.encode("utf-8", "surrogatepass")):
        for main in (True, False):
            doc = extract(page, main_content=main)
            assert isinstance(doc.text, str) and "\x00" not in doc.text


@settings(max_examples=100, deadline=None)
@given(
    st.binary(max_size=3000),
    st.sampled_from([None, "text/html; charset=utf-8", "text/html; charset=x-junk"]),
)
def test_fuzzed_bytes_never_raise(body, content_type):
    text, enc = decode_html(body, content_type=content_type)
    assert isinstance(text, str) and isinstance(enc, str)
    assert isinstance(extract(body, content_type=content_type), Document)


def test_threads_give_the_same_result():
    from concurrent.futures import ThreadPoolExecutor

    pages = [_article_page(f"Page {i} - Site") for i in range(40)] + [_table_page_gbk(True)] * 40
    expected = [extract(p) for p in pages]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(extract, pages)) == expected


# --------------------------------------------------------------------------- real pages

_TOKEN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _f1(got: str, want: str) -> float:
    a, b = Counter(_TOKEN_RE.findall(got.lower())), Counter(_TOKEN_RE.findall(want.lower()))
    common = sum((a & b).values())
    if not common:
        return 0.0
    p, r = common / sum(a.values()), common / sum(b.values())
    return 2 * p * r / (p + r)


@pytest.mark.skipif(not (DATA / "zh-web-cee").is_dir(), reason="shared/data/zh-web-cee not found beside the repo")
def test_token_f1_on_zh_web_cee():
    root = DATA / "zh-web-cee"
    scores = [
        _f1(extract(p.read_bytes()).text, (root / "cleaned" / f"{p.stem}.txt").read_text("utf-8"))
        for p in sorted((root / "original").glob("*.html"))
    ]
    assert len(scores) == 69
    assert statistics.mean(scores) > 0.90  # measured 0.928 (trafilatura 2.3: 0.866)


@pytest.mark.skipif(
    not (DATA / "scrapinghub-aeb").is_dir(),
    reason="shared/data/scrapinghub-aeb not found beside the repo",
)
def test_token_f1_on_scrapinghub_aeb():
    root = DATA / "scrapinghub-aeb"
    with gzip.open(root / "ground-truth.json.gz", "rt", encoding="utf-8") as f:
        truth = json.load(f)
    scores = [
        _f1(
            extract(gzip.decompress(p.read_bytes())).text,
            truth[p.name.split(".")[0]]["articleBody"],
        )
        for p in sorted((root / "html").glob("*.html.gz"))
    ]
    assert len(scores) == 181
    assert statistics.mean(scores) > 0.92  # measured 0.959 (trafilatura 2.3: 0.948)


# --------------------------------------------------------------------------- width invariance

_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"}
_HALF_WIDTH = dict(zip("，；：！？（）", ",;:!?()"))


def _width_variant(text: str) -> str:
    """Latin letters and digits full-width, Chinese punctuation half-width: the same text after NFKC."""
    return "".join(_FULL_WIDTH.get(c) or _HALF_WIDTH.get(c) or c for c in text)


def _wiki_page(convert: Callable[[str], str]) -> str:
    """A Chinese encyclopedia-like page with Latin names, dates and numbers; ``convert`` maps its text."""
    paras = [
        "金永国（Kim Young Kook，1976年4月25日－），韩国男歌手、主持人，1995年以组合Turbo出道。",
        "他在2010年加入综艺节目Running Man，节目播出超过600集，并在2014年参加Asia Tour巡回见面会。",
        "（2020年4月17日）此条目需要补充更多来源，请协助补充多方面可靠来源以改善这篇条目。",
        "代表作品有《一个男人》、《讨人喜欢》，2021年他开设了YouTube频道GYM JONG KOOK，订阅者超过300万。",
        "他的经纪公司先后为Star Music（1996年至2001年）、JK Entertainment（2011年至2014年）等。",
        # Latin text without punctuation: light, so not content-like; as heavy as Han if its
        # full-width letters counted 3 each (then the variant kept it).
        "Kim Young Kook official fan club and shop in Seoul open since the year 2001",
    ]
    sidebar = "".join(f"<p>{convert(t)}</p>" for t in ("Running Man 第1集", "Kim Young Kook 2014", "Turbo 1995"))
    byline = convert("发布时间：2024-05-01 08:15 阅读：1234")
    nav = "".join(f'<li><a href="/n{i}">{convert(w)}</a></li>' for i, w in enumerate(["首页", "Wiki", "FAQ", "登录"]))
    body = "".join(f"<p>{convert(p)}</p>" for p in paras)
    return f"""<html><head><title>{convert("金永国 Kim Young Kook - 环球百科")}</title></head><body>
<ul class="menu">{nav}</ul>
<div id="content"><h1>金永国</h1><div class="info">{byline}</div>{body}</div>
<div class="box">{sidebar}</div>
<div id="foot"><p>{convert("Copyright © 2024 环球百科 All rights reserved")}</p></div>
</body></html>"""


def test_full_width_variant_extracts_the_same_text():
    """Block signals are width-invariant: a page and its full-width / half-width variant choose the
    same blocks, and their texts are equal after NFKC (full-width Latin words keep their spaces)."""
    import unicodedata

    page, variant = _wiki_page(lambda t: t), _wiki_page(_width_variant)
    assert unicodedata.normalize("NFKC", page) == unicodedata.normalize("NFKC", variant)
    assert page != variant
    a, b = extract(page), extract(variant)
    assert unicodedata.normalize("NFKC", a.text) == unicodedata.normalize("NFKC", b.text)
    assert a.title == "金永国 Kim Young Kook" and unicodedata.normalize("NFKC", b.title) == a.title
    assert "Kim Young Kook" in unicodedata.normalize("NFKC", b.text)
    assert "Ｋｉｍ Ｙｏｕｎｇ Ｋｏｏｋ" in b.text  # returned as written, spaces kept
    assert "订阅者超过300万" in a.text
    assert "fan club" not in a.text
    for text in (unicodedata.normalize("NFKC", a.text), unicodedata.normalize("NFKC", b.text)):
        assert "阅读" not in text  # the dateline is metadata in both widths
        assert "首页" not in text and "Copyright" not in text


def test_spaces_go_between_han_and_punctuation_of_either_width():
    a = extract("<p>" + "今天天气很好 ， 我们去公园散步 。 " * 4 + "</p>").text
    b = extract("<p>" + "今天天气很好 , 我们去公园散步 . " * 4 + "</p>").text
    assert a.startswith("今天天气很好，我们去公园散步。今天")
    assert b.startswith("今天天气很好,我们去公园散步.今天")
    c = extract("<p>" + "Ｔｈｅ ｆｅｒｒｙ ｌｅａｖｅｓ ａｔ ｎｏｏｎ 每天中午开船。" * 4 + "</p>").text
    assert c.startswith("Ｔｈｅ ｆｅｒｒｙ ｌｅａｖｅｓ ａｔ ｎｏｏｎ 每天中午开船。")


# --------------------------------------------------------------------------- tables of short lines


def _standings_page() -> str:
    drivers = [
        "Kyle Busch", "Martin Truex Jr.", "Kevin Harvick", "Denny Hamlin", "Joey Logano", "Ryan Blaney",
        "Kyle Larson", "Brad Keselowski", "Clint Bowyer", "Chase Elliott", "William Byron", "Alex Bowman",
    ]  # fmt: skip
    rows = "".join(
        f"<p>{i} {name} {5040 - 97 * i} {i % 4} {i % 3} {17 - i % 9} {27 - i % 11}</p>"
        for k in range(4)
        for i, name in enumerate(drivers, 1 + 12 * k)
    )
    teasers = "".join(
        f'<li><a href="/story/{i}">{t}</a></li>'
        for i, t in enumerate(
            [
                "Bridge closed for repairs over the long weekend",
                "New bus route to the airport starts on Monday",
                "Lighthouse open to visitors again after twenty years",
                "Fish market moves to the quay in the spring",
            ]
        )
    )
    return f"""<html><head><title>Cup Series standings - Race Desk</title></head><body>
<div id="top"><span>Updated 20:01</span> <a href="/signin">Sign in</a></div>
<ul class="nav">{_links(NAV)}</ul>
<div id="main"><h1>Cup Series standings</h1>
<div class="byline">By Staff Writer | Aug 14, 2019 6:01 PM | 877522 views</div>
<p>On this page you will always find the updated standings after the latest race!</p>
<p>Final standings of the Cup Series in 2019 after 36 races:</p>
<p>Pos. Driver Points Wins Poles Top 5 Top 10</p>{rows}
<p>Comments that are rude, off topic or unreadable will not be approved by the moderators of this site.</p>
</div>
<div class="more"><h3>Most read</h3><ul>{teasers}</ul></div>
<p>About us | Contact | Careers | Privacy Policy | Terms of Use</p>
</body></html>"""


def test_a_table_of_short_lines_is_the_content():
    """A page whose body is 48 short numeric lines (no block looks like prose): the region with the
    most text that is neither links nor metadata, not the one sentence-like line, nor the chrome."""
    text = extract(_standings_page()).text
    lines = text.split("\n")
    assert "1 Kyle Busch 4943 1 1 16 26" in lines
    assert "48 Alex Bowman 384 0 0 14 23" in lines
    assert lines[0] == "Cup Series standings"
    assert "Final standings of the Cup Series in 2019 after 36 races:" in lines
    assert "Sign in" not in text and "Weather" not in text  # chrome
    assert "877522 views" not in text  # byline
    assert "Bridge closed" not in text and "Privacy Policy" not in text


def test_a_short_article_is_not_replaced_by_a_bigger_list_beside_it():
    article = (
        "The harbour office said the summer timetable will return in April, when the larger vessel "
        "comes back from its yearly inspection."
    )
    hours = "".join(f"<p>{day} 9:00 to 17:{i}0 at the ticket office</p>" for i, day in enumerate(NAV * 6))
    page = f"""<html><body><ul class="nav">{_links(NAV)}</ul>
<div id="story"><h1>Summer timetable</h1><p>{article}</p></div>
<div class="box"><h3>Opening hours</h3>{hours}</div></body></html>"""
    assert extract(page).text == article


GLOSSARY = (
    "accent adagio allegro alto andante arpeggio ballad bar baritone bass "
    "beam beat breve cadence canon chord clef coda crescendo da capo diminuendo dominant duet dynamics "
    "ensemble fermata fifth flat forte fugue glissando harmony interval key largo legato lento major "
    "measure melody meter minor mode mordent motif natural note octave opus ostinato pedal phrase piano "
    "pitch presto quarter rest rhythm rondo scale score sharp slur sonata staccato staff suite tempo "
    "tenor theme tie timbre tone treble tremolo trill triplet tutti unison vibrato voice waltz"
).split()


def _glossary_page(entry: str, body: str) -> str:
    """A page of a texinfo manual's glossary (LilyPond's Music Glossary): inside ``div#main`` the
    navigation table, the entry's heading, its body and a footer; beside it, ``div#tocframe``, the
    sidebar that links every entry of the glossary."""
    nav = (
        '<table class="nav_table"><tr><td>[<a href="prev.html"> &lt; Previous </a>]</td>'
        '<td>[<a href="index.html">Top</a>]</td><td>[<a href="next.html"> Next &gt; </a>]</td></tr></table>'
    )
    toc = "".join(f'<li><a href="e{i}.html">1.{i} {name}</a></li>' for i, name in enumerate(GLOSSARY))
    return f"""<html><head><title>Music Glossary: {entry}</title></head><body>
<div id="main">{nav}<h1 class="section">{entry}</h1>{body}<h4>See also</h4><p><a href="pitch.html">Pitch names</a>.</p>
{nav}<div id="footer"><p>This page is for Glossary 2.24 (stable-branch).</p></div></div>
<div id="tocframe"><p class="toc_uplink"><a href="../manuals.html">&lt;&lt; Back to Documentation Index</a></p>
<h4 class="toc_header"><a href="index.html">Music Glossary</a></h4><ul class="toc">{toc}</ul></div></body></html>"""


def test_a_sidebar_of_links_beside_the_body_is_never_the_content():
    """A glossary entry of one sentence and a line of translations beside the glossary's sidebar
    (some 60 times its weight): the entry is the content, the sidebar never (with it, any two
    entries would look alike), on both walks."""
    body = (
        "<p>ES: acento, I: accento, F: accent, D: Akzent, NL: accent, DK: accent, S: accent, FI: aksentti.</p>"
        "<p>The stress of one tone over others.</p>"
    )
    for native in (True, False):
        doc = extract(_glossary_page("1.4 accent", body), native=native)
        lines, rest = doc.text.split("\n"), doc.rest.split("\n")
        assert lines[0].startswith("ES: acento") and "The stress of one tone over others." in lines + rest
        assert doc.method != "list" and not set(lines) & {f"1.{i} {name}" for i, name in enumerate(GLOSSARY)}
    fermata = "<p>ES: calderón, I: corona, F: point d'orgue, D: Fermate.</p><p>A sign to hold a note.</p>"
    other = extract(_glossary_page("1.57 fermata", fermata))
    assert not set(other.text.split("\n")) & set(doc.text.split("\n"))


def test_a_print_views_pointer_line_after_the_sidebar_leaves_the_sidebar_out():
    """A print view of a glossary entry (no navigation table or footer, the sidebar kept) with its
    "Printed from /path" line after the sidebar: that line is no part of the body's column, so the
    sidebar stays navigation and the print view's text is its page's (with the line, the column
    was <body> and the text the whole sidebar: method "list", no copy found)."""
    body = "<p>ES: línea adicional, I: tagli addizionali, F: ligne supplémentaire, D: Hilfslinie.</p>"
    body += "<p>A ledger line is an extension of the staff.</p>"
    page = _glossary_page("1.173 ledger line", body)
    root = lxml.html.fromstring(page)
    for el in root.xpath("//table[@class='nav_table'] | //div[@id='footer']"):
        el.drop_tree()
    root.find("body").append(lxml.html.fromstring("<p>Printed from /music-glossary/ledger-line.html</p>"))
    printed = lxml.html.tostring(root, encoding="unicode")
    for native in (True, False):
        view, full = extract(printed, native=native), extract(page, native=native)
        assert view.method == full.method == "main" and view.text == full.text
        assert not set(view.text.split("\n")) & {f"1.{i} {name}" for i, name in enumerate(GLOSSARY)}


def test_a_section_at_the_bottom_of_the_content_column_is_content():
    """A class that names a place inside the content column ("column-center-bottom": LilyPond's
    "Old News" under its news items) is no chrome, on both walks: its sentence is the page's own
    text (it was left out as chrome, so a translation that lacked it looked like a copy); the
    word still makes a page's bottom bar chrome ("page-bottom")."""
    items = "".join(f"<div class='news-item'><h3>Release 2.24.{i}</h3>{EN_PARAS[i]}</div>" for i in range(3))
    older = "Older news can be found in the Attic, along with older announcements and changelogs."
    page = f"""<html><head><title>News</title></head><body><div id="main"><div class="column-center-top">
<h2>News</h2>{items}</div><div class="column-center-bottom"><h3>Old News</h3><p>{older}</p></div>
<div class="page-bottom"><p>This page is for LilyPond-2.24.1 (stable-branch), built on a tuesday.</p></div>
</div></body></html>"""
    for native in (True, False):
        doc = extract(page, native=native)
        assert older in doc.text.split("\n") + doc.rest.split("\n")
        assert "stable-branch" not in doc.text + doc.rest


def test_a_table_of_short_cells_beside_a_sidebar_is_the_content():
    """The glossary's table of pitch names (short cells, no sentence) is its page's content, with
    the sidebar left out; its rows, each one line of cells (``Document.rows``), are what the page
    adds."""
    names = [("c", "do", "do", "ut", "C"), ("c-sharp", "do sostenido", "do diesis", "ut dièse", "Cis")] * 15
    head = "<tr><th>EN</th><th>ES</th><th>I</th><th>F</th><th>D</th></tr>"
    rows = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in names)
    doc = extract(_glossary_page("3. Pitch names", f"<table>{head}{rows}</table>"))
    assert "c-sharp" in doc.text.split("\n") and "1.4 alto" not in doc.text
    assert doc.rows.split("\n")[:3] == ["EN ES I F D", "c do do ut C", "c-sharp do sostenido do diesis ut dièse Cis"]
    assert extract(_glossary_page("3. Pitch names", f"<table>{head}{rows}</table>"), native=False).rows == doc.rows


def test_a_table_of_contents_in_the_body_column_stays_the_content():
    """The glossary's own table of contents (its body is its list of links, beside the same
    sidebar) is still a listing: its entries are its text."""
    toc = "".join(f'<li><a href="e{i}.html">1.{i} {name}</a></li>' for i, name in enumerate(GLOSSARY))
    doc = extract(_glossary_page("Table of Contents", f'<ul class="contents">{toc}</ul>'))
    assert doc.method == "list" and f"1.{GLOSSARY.index('major')} major" in doc.text.split("\n")


def _api_page(extra: str = "") -> str:
    """A Javadoc-like class page: inside <main>, summary lines and signatures too short to count as
    sentences, and one line that does (a package name's dots read as punctuation)."""
    methods = "".join(
        f'<div class="col-first">static {t}[]</div><div class="col-second"><a href="#sort({t}[])">sort({t}[] array)</a></div>'
        f'<div class="col-last"><div class="block">Sorts and returns the given {t} array.</div></div>'
        for t in ("byte", "char", "double", "float", "int", "long", "short", "Object")
    )
    details = "".join(
        f'<section class="detail"><h3>sort</h3><div class="member-signature">public static {t}[] sort({t}[] array)</div>'
        f'<div class="block">Sorts the {t} array in place.</div><dl><dt>Parameters:</dt><dd>array - the array</dd>'
        f"<dt>Returns:</dt><dd>the given array</dd><dt>Since:</dt><dd>3.{i}</dd><dt>See Also:</dt>"
        f'<dd><a href="#x{i}">Arrays.sort({t}[])</a></dd></dl></section>'
        for i, t in enumerate(("byte", "char", "double", "float", "int", "long", "short", "Object") * 3)
    )
    return f"""<html><head><title>ArraySorter (Example 3.12 API)</title></head><body>
<header><nav><ul><li><a href="index.html">Overview</a></li><li><a href="tree.html">Tree</a></li></ul></nav></header>
<main role="main"><div class="header"><h1>Class ArraySorter</h1></div>
<section class="description"><div class="block">Sorts and returns arrays in the fluent style.</div>
<dl><dt>Since:</dt><dd>3.12.0</dd></dl></section>
<section class="summary"><h2>Method Summary</h2><div class="summary-table">{methods}</div>
<h3>Methods inherited from class java.lang.Object</h3><code>clone, equals, finalize, getClass, hashCode</code>
<h3>Methods inherited from class org.example.lang3.base.AbstractSorter</h3>{extra}</section>
<section class="details"><h2>Method Details</h2>{details}</section></main>
<footer><p>Copyright 2001-2021 Example Foundation. All rights reserved.</p></footer></body></html>"""


def test_an_api_reference_page_inside_main_is_its_summary_lines():
    """Inside a <main> landmark, a region of no paragraph that holds under a quarter of the
    landmark's content-like text (one line of a Javadoc page) gives way to all of it."""
    doc = extract(_api_page())
    assert doc.method == "page"
    lines = doc.text.split("\n")
    assert "Sorts and returns the given double array." in lines and "Sorts the long array in place." in lines
    assert "Sorts and returns arrays in the fluent style." in lines
    assert "Overview" not in lines and not any("Copyright" in line for line in lines)  # chrome stays out


def test_a_short_article_inside_main_is_not_replaced_by_the_list_beside_it():
    """The rule above needs a region of no paragraph: a short article beside a longer list of short
    lines, both inside <main>, keeps its own text (two articles beside one list are different pages)."""
    article = (
        "The harbour office said the summer timetable will return in April, when the larger vessel "
        "comes back from its yearly inspection."
    )
    hours = "".join(f"<p>{day} 9:00 to 17:{i}0 at the ticket office</p>" for i, day in enumerate(NAV * 6))
    page = f"""<html><body><ul class="nav">{_links(NAV)}</ul><main>
<div id="story"><h1>Summer timetable</h1><p>{article}</p></div>
<div class="box"><h3>Opening hours</h3>{hours}</div></main></body></html>"""
    doc = extract(page)
    assert doc.method == "main" and doc.text == article


@pytest.mark.parametrize(
    ("page", "large"),
    [
        ("<p>x</p>" * 40_000, False),  # 80,000 '<', but 40,000 start tags
        ("<br>" * 60_000 + "<p>x</p>" * 10_000, True),  # 70,000 start tags
        ("<br>" * 60_000, False),  # exactly the limit
        ("<br>" * 60_001, True),
        ("a < b " * 70_000, True),  # a bare '<' counts as a start tag: an upper bound
    ],
)
def test_a_page_is_large_by_its_start_tags_less_its_end_tags(page: str, large: bool) -> None:
    import scrapy_simhash.text.extract as ex

    assert ex.MAX_ELEMENTS == 60_000
    assert ex._too_many_elements(page) is (page.count("<") - page.count("</") > ex.MAX_ELEMENTS) is large


def _main_blocks_by_every_element(walker, blocks, relaxed=False):
    """``region.main_blocks`` as first written: sums and choice over every element of the page
    (the reference for the version that reads only the good blocks' owners and their ancestors)."""
    from scrapy_simhash.text import region as r

    if not blocks:
        return []
    n, parent = len(walker.parent), walker.parent
    good, score = [0] * n, [0.0] * n
    teasers = sum(1 for b in blocks if b.norm.endswith(r._ELLIPSES)) >= 2
    kinds = [r.block_kind(block, teasers, relaxed) for block in blocks]
    for block, kind in zip(blocks, kinds):
        if kind == r.GOOD:
            value = block.weight - block.links
            good[block.owner] += value
        elif kind == r.LINKS:
            value = -block.weight
        else:
            value = -block.weight / 4
        i = block.owner
        for decay in r._DECAY:
            score[i] += value * decay
            if not i:
                break
            i = parent[i]
    for i in range(n - 1, 0, -1):
        good[parent[i]] += good[i]
    best, best_score = 0, None
    for i in range(n):
        if good[i] and (best_score is None or score[i] > best_score):
            best, best_score = i, score[i]
    if best_score is None:
        return []
    while best:
        up, levels = parent[best], 1
        while up and good[up] == good[best]:
            up, levels = parent[up], levels + 1
        if levels <= r._EXTEND_LEVELS and good[up] >= r._EXTEND_RATIO * good[best]:
            best = up
        else:
            break
    lo, hi = best, walker.end[best]
    inside = [(b, k) for b, k in zip(blocks, kinds) if lo <= b.owner < hi]
    first = next((i for i, (_, k) in enumerate(inside) if k == r.GOOD), None)
    if first is None:
        return []
    last = max(i for i, (_, k) in enumerate(inside) if k == r.GOOD)
    return [b for b, k in inside[first : last + 1] if k > r.LINKS]


def test_the_region_is_the_one_every_element_would_give() -> None:
    """``main_blocks`` sums and compares only the elements that hold good text: the same region as
    over every element, on every real page, for the content blocks, the blocks outside chrome
    tags and the relaxed rule."""
    from helpers.data import load_pages

    import scrapy_simhash.text.extract as ex
    from scrapy_simhash.text.blocks import IN_CHROME_TAG, Walker
    from scrapy_simhash.text.region import main_blocks

    regions = 0
    for bodies in load_pages().values():
        for body in bodies:
            root = ex.parse_prepared(ex.prepare(ex.decode_html(body)[0]))
            if root is None:
                continue
            walker = Walker()
            walker.walk(root, 0, False, 0)
            walker.flush()
            for blocks in (
                [b for b in walker.blocks if not b.flags],
                [b for b in walker.blocks if not b.flags & IN_CHROME_TAG],
                walker.blocks,
            ):
                for relaxed in (False, True):
                    found = main_blocks(walker, blocks, relaxed)
                    assert found == _main_blocks_by_every_element(walker, blocks, relaxed)
                    regions += bool(found)
    assert regions > 1000
