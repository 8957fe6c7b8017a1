"""Builds the bundled demo site (example_project/site/) and its manifest of near-duplicate groups.

Run ``python example_project/sitegen/build.py`` after editing texts.py or the templates below; the generated
files are committed, so the demo and the tests never need this script.
"""

from __future__ import annotations

import html
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from texts import ARTICLES, ROUNDUP

SITE = Path(__file__).resolve().parents[1] / "site"
E = html.escape

MOST_READ = [
    ("/news/tram-line.html", "Waterfront tram line carries its first passengers"),
    ("/news/storm-harbour.html", "Storm damage closes the harbour swimming area"),
    ("/news/bakery.html", "Family bakery on Bridge Street celebrates fifty years"),
    ("/news/library-hours.html", "Central Library to open on Sundays from next month"),
    ("/news/weekly.html", "The week in Harbor City"),
]
HOT_ZH = [
    ("/zh/news/bridge.html", "跨江大桥下月起夜间分段限行"),
    ("/zh/news/museum-night.html", "市博物馆推出夏季夜场"),
    ("/zh/news/tea.html", "山城茶农试种高山新茶"),
    ("/zh/news/canteen.html", "社区长者食堂开张"),
    ("/zh/news/museum-silk.html", "市博物馆新展聚焦古代丝绸"),
]


def _links(items: list[tuple[str, str]]) -> str:
    return "\n".join(f'      <li><a href="{E(href)}">{E(text)}</a></li>' for href, text in items)


def _paras(art: dict[str, Any]) -> str:
    return "\n".join(f"    <p>{E(p)}</p>" for p in art["paragraphs"])


# ---------------------------------------------------------------- templates
def harbor_daily(
    art: dict[str, Any],
    *,
    date: str,
    views: str,
    path: str,
    ad: str = "",
    related: str = "",
    banner: str = "",
    print_path: str | None = None,
) -> str:
    """Template A: the English news site, with nav, sidebar, ads, related links and a long footer."""
    print_link = f'<a class="print" href="{print_path}">Print this article</a>' if print_path else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="page-type" content="article">
<title>{E(art["title"])} - Harbor Daily</title>
<link rel="stylesheet" href="/static/harbor.css">
</head>
<body>
{banner}
<header class="masthead">
  <a class="logo" href="/index.html">Harbor Daily</a>
  <span class="tagline">News from Harbor City and the coast since 1921</span>
  <nav>
    <ul>
      <li><a href="/index.html">Home</a></li>
      <li><a href="/index.html#city">City</a></li>
      <li><a href="/index.html#transport">Transport</a></li>
      <li><a href="/index.html#culture">Culture</a></li>
      <li><a href="/index.html#weather">Weather</a></li>
      <li><a href="/zh/index.html">中文版</a></li>
    </ul>
  </nav>
  <form class="search" action="/search"><input name="q" placeholder="Search Harbor Daily"></form>
</header>
<div class="breadcrumb"><a href="/index.html">Home</a> &rsaquo; {E(art["section"])}</div>
<main>
  <article>
    <h1>{E(art["title"])}</h1>
    <div class="meta"><span class="byline">{E(art["byline"])}</span> <time>{E(date)}</time>
      <span class="views">{E(views)}</span> {print_link}</div>
{_paras(art)}
  </article>
  {ad}
  {related}
</main>
<aside class="sidebar">
  <h2>Most read</h2>
  <ol>
{_links(MOST_READ)}
  </ol>
  <h2>Newsletter</h2>
  <p>Get the morning briefing in your inbox every weekday. Sign up on our newsletter page.</p>
</aside>
<footer>
  <p>Harbor Daily is published by Harbor Media Cooperative. All rights reserved. Reproduction without
  permission is prohibited.</p>
  <ul class="footer-links">
    <li><a href="/index.html">About us</a></li>
    <li><a href="/index.html">Contact the newsroom</a></li>
    <li><a href="/index.html">Privacy policy</a></li>
    <li><a href="/index.html">Cookie settings</a></li>
    <li><a href="/index.html">Advertise with us</a></li>
  </ul>
</footer>
</body>
</html>
"""


def riverside_review(art: dict[str, Any], *, date: str) -> str:
    """Template B: a partner site that republishes Harbor Daily articles in its own layout."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="page-type" content="article">
<title>{E(art["title"])} | The Riverside Review</title>
</head>
<body class="rr">
<header id="top-bar">Riverside Review &middot; Independent local journalism for the river valley &middot;
  <a href="/index.html">Subscribe</a></header>
<div id="nav-wrap"><ul id="menu">
  <li><a href="/index.html">Front page</a></li><li><a href="/index.html">Valley</a></li>
  <li><a href="/index.html">Business</a></li><li><a href="/index.html">Farming</a></li>
  <li><a href="/index.html">Letters</a></li><li><a href="/index.html">Obituaries</a></li>
</ul></div>
<div id="content">
  <div class="story">
    <h2 class="headline">{E(art["title"])}</h2>
    <p class="dateline">Syndicated from Harbor Daily &mdash; {E(date)}</p>
{_paras(art)}
    <p class="credit">This story first appeared in Harbor Daily and is republished with permission.</p>
  </div>
  <aside id="rail">
    <h3>Valley weather</h3>
    <p>Showers clearing by noon, highs of fourteen degrees. Frost possible in the upper valley overnight.</p>
    <h3>Upcoming events</h3>
    <ul><li>Farmers' market, Saturday</li><li>Choir concert at St Anne's, Sunday</li>
    <li>Valley history society talk, Tuesday</li></ul>
  </aside>
</div>
<div id="bottom">&copy; The Riverside Review. Printed and published in the river valley.
  <a href="/index.html">Terms</a> | <a href="/index.html">Corrections</a></div>
</body>
</html>
"""


def print_view(art: dict[str, Any], *, date: str, site: str) -> str:
    """Print view: the article alone, no navigation."""
    lang = art["lang"]
    return f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="page-type" content="article">
<meta name="robots" content="noindex">
<title>{E(art["title"])}</title>
</head>
<body onload="window.print()">
<h1>{E(art["title"])}</h1>
<p><em>{E(art["byline"])}, {E(date)}</em></p>
{_paras(art)}
<hr>
<p class="printed-from">{E(site)}</p>
</body>
</html>
"""


def chenguang(
    art: dict[str, Any],
    *,
    date: str,
    views: str,
    charset_meta: str | None = "utf-8",
    banner: str = "",
    related: bool = True,
) -> str:
    """Template C: the Chinese news site 晨光网 (div layout, hot list, related reading, ICP footer)."""
    meta = f'<meta charset="{charset_meta}">\n' if charset_meta else ""
    rel = ""
    if related:
        rel = f"""<div class="related">
    <h3>相关阅读</h3>
    <ul>
{_links([(h, t) for h, t in HOT_ZH[::-1][:3]])}
    </ul>
  </div>"""
    return f"""<!DOCTYPE html>
<html lang="zh-CN">
<head>
{meta}<meta name="page-type" content="article">
<title>{E(art["title"])}_晨光网</title>
</head>
<body>
{banner}
<div class="header">
  <a class="logo" href="/zh/index.html">晨光网</a>
  <ul class="nav">
    <li><a href="/zh/index.html">首页</a></li>
    <li><a href="/zh/index.html#local">本地</a></li>
    <li><a href="/zh/index.html#traffic">交通</a></li>
    <li><a href="/zh/index.html#culture">文化</a></li>
    <li><a href="/zh/index.html#life">民生</a></li>
    <li><a href="/index.html">English</a></li>
  </ul>
</div>
<div class="crumbs">当前位置：<a href="/zh/index.html">首页</a> &gt; {E(art["section"])} &gt; 正文</div>
<div class="main">
  <div class="article">
    <h1>{E(art["title"])}</h1>
    <div class="info">{E(date)} 来源：晨光网 {E(art["byline"])} <span class="pv">{E(views)}</span></div>
    <div class="content">
{_paras(art)}
    </div>
    <div class="editor">责任编辑：王佳</div>
  </div>
  {rel}
</div>
<div class="side">
  <h3>热门排行</h3>
  <ol>
{_links(HOT_ZH)}
  </ol>
</div>
<div class="footer">
  <p>晨光网版权所有，未经书面授权禁止转载。违法和不良信息举报电话：0000-12345678</p>
  <p><a href="/zh/index.html">关于我们</a> | <a href="/zh/index.html">联系我们</a> | <a href="/zh/index.html">广告服务</a>
  | 示例ICP备00000000号</p>
</div>
</body>
</html>
"""


def jiangcheng_portal(art: dict[str, Any], *, date: str) -> str:
    """Template D: a Chinese portal that reprints the article in an old table layout (no charset declared)."""
    hot = "\n".join(f'<tr><td class="hot">&middot; <a href="{E(h)}">{E(t)}</a></td></tr>' for h, t in HOT_ZH)
    return f"""<html>
<head>
<meta name="page-type" content="article">
<title>{E(art["title"])}-江城门户-社会频道</title>
</head>
<body>
<table width="980" align="center" border="0" cellpadding="0" cellspacing="0">
<tr><td colspan="2" class="top">江城门户 | 新闻 | 社会 | 财经 | 房产 | 汽车 | 论坛 | 设为首页 | 加入收藏</td></tr>
<tr>
<td width="700" valign="top">
  <table width="100%"><tr><td class="title"><b>{E(art["title"])}</b></td></tr>
  <tr><td class="src">{E(date)} 转载自：晨光网 作者：{E(art["byline"])} 【字号 大 中 小】</td></tr>
  <tr><td class="body">
{_paras(art)}
  </td></tr>
  <tr><td class="tail">（本文转自晨光网，如有侵权请联系删除）【责任编辑：赵磊】</td></tr>
  </table>
</td>
<td width="280" valign="top">
  <table width="100%"><tr><td class="box">热点新闻</td></tr>
{hot}
  <tr><td class="ad">【广告】江城装修节 全场五折起 电话预约送设计</td></tr>
  </table>
</td>
</tr>
<tr><td colspan="2" class="foot">江城门户 版权所有 Copyright 江城网络 | 关于我们 | 网站地图 | 举报中心</td></tr>
</table>
</body>
</html>
"""


AD_1 = """<div class="ad">Advertisement: Harbor Motors autumn sale - zero per cent finance on all family cars
  until the end of the month. Visit our showroom on Dock Road.</div>"""
AD_2 = """<div class="ad">Sponsored: Learn to sail this winter with Coastline Sailing School. Beginners'
  courses every weekend, equipment included, book online today.</div>"""
RELATED_1 = """<aside class="related"><h2>Related stories</h2><ul>
  <li><a href="/news/garden-festival.html">Harvest festival fills Eastfield community garden</a></li>
  <li><a href="/news/library-seeds.html">Library launches seed-lending cabinet for city gardeners</a></li>
</ul></aside>"""
RELATED_2 = """<aside class="related"><h2>You may also like</h2><ul>
  <li><a href="/news/winter-timetable.html">Tram and bus operator publishes its winter timetable</a></li>
  <li><a href="/news/storm-harbour.html">Storm damage closes the harbour swimming area</a></li>
  <li><a href="/news/tram-line.html">Waterfront tram line carries its first passengers</a></li>
</ul></aside>"""
MIRROR_EN = '<div class="mirror-note">You are reading a mirror of harbordaily.example.</div>'
MIRROR_ZH = '<div class="mirror-note">本页为晨光网镜像站点</div>'


# ---------------------------------------------------------------- the pages
_PDF = (
    b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> "
    b"endobj\n3 0 obj << /Length 8 >> stream\n\x00\x01\x02\x03\x04\x05\x06\x07\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
)


def _png() -> bytes:
    """A 2x2 grey PNG."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x80\x80" for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def pages() -> list[dict[str, Any]]:
    """Every page of the site: path (with query for tracking URLs), the file that serves it, and its role."""
    A = ARTICLES
    out: list[dict[str, Any]] = []

    def add(
        path: str,
        article: str,
        html_text: str | None,
        *,
        variant: str,
        file: str | None = None,
        encoding: str = "utf-8",
        content_type: str = "text/html; charset=utf-8",
    ) -> None:
        out.append(
            {
                "path": path,
                "article": article,
                "variant": variant,
                "html": html_text,
                "file": file or path.split("?")[0].lstrip("/"),
                "encoding": encoding,
                "content_type": content_type,
                "lang": A[article]["lang"] if article in A else "en",
            }
        )

    # English, template A unless noted.
    art = A["library-hours"]
    add(
        "/news/library-hours.html",
        "library-hours",
        harbor_daily(
            art,
            date="Tuesday 4 March 2025",
            views="2,481 views",
            path="/news/library-hours.html",
            print_path="/print/news/library-hours.html",
        ),
        variant="original",
    )
    add(
        "/mirror/news/library-hours.html",
        "library-hours",
        harbor_daily(
            art,
            date="Tuesday 4 March 2025",
            views="2,481 views",
            path="/mirror/news/library-hours.html",
            banner=MIRROR_EN,
            print_path="/print/news/library-hours.html",
        ),
        variant="mirror",
    )
    add(
        "/print/news/library-hours.html",
        "library-hours",
        print_view(art, date="4 March 2025", site="Printed from harbordaily.example"),
        variant="print view",
    )
    add(
        "/news/library-hours.html?utm_source=newsletter&utm_medium=email&utm_campaign=weekly",
        "library-hours",
        None,
        variant="tracking parameters",
    )
    add(
        "/news/library-seeds.html",
        "library-seeds",
        harbor_daily(
            A["library-seeds"], date="Friday 7 March 2025", views="918 views", path="/news/library-seeds.html"
        ),
        variant="original",
    )

    art = A["garden-festival"]
    add(
        "/news/garden-festival.html",
        "garden-festival",
        harbor_daily(art, date="Saturday 14 September 2024", views="1,204 views", path="/news/garden-festival.html"),
        variant="original",
    )
    add(
        "/archive/2024/09/garden-festival.html",
        "garden-festival",
        harbor_daily(
            art,
            date="Published 14 September 2024, updated 16 September 2024 08:15",
            views="12,877 views, 23 comments",
            path="/archive/2024/09/garden-festival.html",
        ),
        variant="other dates and view counter",
    )

    art = A["tram-line"]
    add(
        "/news/tram-line.html",
        "tram-line",
        harbor_daily(art, date="Monday 2 June 2025", views="5,032 views", path="/news/tram-line.html"),
        variant="original",
    )
    add(
        "/partners/riverside/tram-line.html",
        "tram-line",
        riverside_review(art, date="June 3, 2025"),
        variant="syndicated copy, other site template",
    )
    add(
        "/news/winter-timetable.html",
        "winter-timetable",
        harbor_daily(
            A["winter-timetable"],
            date="Thursday 23 October 2025",
            views="3,310 views",
            path="/news/winter-timetable.html",
        ),
        variant="original",
    )

    art = A["bakery"]
    add(
        "/news/bakery.html",
        "bakery",
        harbor_daily(
            art, date="Monday 12 May 2025", views="4,115 views", path="/news/bakery.html", ad=AD_1, related=RELATED_1
        ),
        variant="original",
    )
    add(
        "/amp/bakery.html",
        "bakery",
        harbor_daily(
            art, date="Monday 12 May 2025", views="4,115 views", path="/amp/bakery.html", ad=AD_2, related=RELATED_2
        ),
        variant="other ads and related links",
        content_type="text/html",
    )
    add(
        "/news/storm-harbour.html",
        "storm-harbour",
        harbor_daily(
            A["storm-harbour"], date="Friday 10 October 2025", views="7,721 views", path="/news/storm-harbour.html"
        ),
        variant="original",
    )

    # Chinese, template C unless noted.
    art = A["tea"]
    add("/zh/news/tea.html", "tea", chenguang(art, date="2025-04-08 10:20", views="阅读 3216"), variant="UTF-8")
    add(
        "/zh/gbk/tea.html",
        "tea",
        chenguang(art, date="2025-04-08 10:20", views="阅读 3216", charset_meta="gbk"),
        variant="GBK, <meta charset=gbk>, no charset in Content-Type",
        encoding="gbk",
        content_type="text/html",
    )
    add(
        "/zh/gbk/tea-nometa.html",
        "tea",
        chenguang(art, date="2025-04-08 10:20", views="阅读 3216", charset_meta=None),
        variant="GBK, no charset declared anywhere",
        encoding="gbk",
        content_type="text/html",
    )

    art = A["bridge"]
    add(
        "/zh/news/bridge.html",
        "bridge",
        chenguang(art, date="2025-06-20 08:45", views="阅读 10532"),
        variant="original",
    )
    add(
        "/zh/mirror/news/bridge.html",
        "bridge",
        chenguang(art, date="2025-06-20 08:45", views="阅读 10532", banner=MIRROR_ZH),
        variant="mirror",
    )
    add(
        "/zh/print/news/bridge.html",
        "bridge",
        print_view(art, date="2025-06-20", site="打印自晨光网"),
        variant="print view",
    )
    add(
        "/zh/news/bridge-check.html",
        "bridge-check",
        chenguang(A["bridge-check"], date="2025-06-25 16:10", views="阅读 2874"),
        variant="original",
    )

    art = A["museum-night"]
    add(
        "/zh/news/museum-night.html",
        "museum-night",
        chenguang(art, date="2025-07-02 09:30", views="阅读 1523"),
        variant="original",
    )
    add(
        "/zh/archive/2025/07/museum-night.html",
        "museum-night",
        chenguang(art, date="发布时间：2025-07-02 09:30 更新时间：2025-07-04 18:02", views="阅读 48211 评论 36"),
        variant="other dates and counters",
    )
    add(
        "/zh/news/museum-silk.html",
        "museum-silk",
        chenguang(A["museum-silk"], date="2025-07-10 11:00", views="阅读 6630"),
        variant="original",
    )

    art = A["canteen"]
    add(
        "/zh/news/canteen.html",
        "canteen",
        chenguang(art, date="2025-05-19 15:40", views="阅读 8890"),
        variant="original",
    )
    add("/zh/news/canteen.html?utm_source=wechat&utm_medium=social", "canteen", None, variant="tracking parameters")
    add(
        "/portal/shehui/20250520/canteen.html",
        "canteen",
        jiangcheng_portal(art, date="2025年05月20日 07:12"),
        variant="syndicated copy, table-layout portal, no charset declared",
        content_type="text/html",
    )

    # The weekly roundup: rewritten between site editions (the demo's second run shows it as "changed").
    add(
        "/news/weekly.html",
        "weekly",
        harbor_daily(ROUNDUP[1], date="Sunday 8 June 2025", views="1,872 views", path="/news/weekly.html"),
        variant="edition 1",
    )
    return out


def index_pages(all_pages: list[dict[str, Any]]) -> dict[str, str]:
    def listing(lang: str) -> str:
        items = []
        for p in all_pages:
            if p["lang"] != lang:
                continue
            title = ARTICLES[p["article"]]["title"] if p["article"] in ARTICLES else ROUNDUP[1]["title"]
            items.append(f'    <li><a href="{E(p["path"])}">{E(title)}</a> <small>({E(p["variant"])})</small></li>')
        return "\n".join(items)

    en = f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Harbor Daily - demo site for scrapy-simhash</title></head>
<body>
<h1>Harbor Daily</h1>
<p>A small static site with known near-duplicate groups, crawled by the scrapy-simhash demo.</p>
<ul>
{listing("en")}
</ul>
<p><a href="/zh/index.html">中文版</a></p>
<p>Downloads: <a href="/files/winter-timetable.pdf">winter timetable (PDF)</a>,
<a href="/static/harbor-logo.png">logo</a>, <a href="/misc/empty.html">an empty page</a>.</p>
</body>
</html>
"""
    zh = f"""<!DOCTYPE html>
<html lang="zh-CN">
<head><meta charset="utf-8"><title>晨光网 - scrapy-simhash 演示站点</title></head>
<body>
<h1>晨光网</h1>
<ul>
{listing("zh")}
</ul>
<p><a href="/index.html">English</a></p>
</body>
</html>
"""
    return {"index.html": en, "zh/index.html": zh}


def main() -> None:
    all_pages = pages()
    if SITE.exists():
        for child in SITE.iterdir():
            if child.name not in ("ATTRIBUTION.md",):
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    SITE.mkdir(exist_ok=True)
    for p in all_pages:
        if p["html"] is None:
            continue
        target = SITE / p["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(p["html"].encode(p["encoding"]))
    for name, text in index_pages(all_pages).items():
        (SITE / name).parent.mkdir(parents=True, exist_ok=True)
        (SITE / name).write_text(text, encoding="utf-8")
    # Edition 2 of the site: only the files that differ from edition 1.
    ed2 = SITE / "_editions" / "2" / "news" / "weekly.html"
    ed2.parent.mkdir(parents=True, exist_ok=True)
    ed2.write_text(
        harbor_daily(ROUNDUP[2], date="Sunday 15 June 2025", views="2,406 views", path="/news/weekly.html"),
        encoding="utf-8",
    )

    # Responses that scrapy-simhash must skip (and count), not fingerprint.
    skipped = {
        "/files/winter-timetable.pdf": ("application/pdf", _PDF, "non_text"),
        "/static/harbor-logo.png": ("image/png", _png(), "non_text"),
        "/misc/empty.html": ("text/html; charset=utf-8", b"", "empty"),
    }
    for path, (_, body, _) in skipped.items():
        (SITE / path[1:]).parent.mkdir(parents=True, exist_ok=True)
        (SITE / path[1:]).write_bytes(body)

    by_article: dict[str, list[dict[str, Any]]] = {}
    for p in all_pages:
        by_article.setdefault(p["article"], []).append(p)
    groups = []
    singletons = []
    hard_negative_of = {
        "library-seeds": "library-hours",
        "winter-timetable": "tram-line",
        "storm-harbour": "bakery",
        "bridge-check": "bridge",
        "museum-silk": "museum-night",
        "weekly": "tram-line",
    }
    for article, members in by_article.items():
        entry = {
            "id": article,
            "lang": members[0]["lang"],
            "title": (ARTICLES.get(article) or ROUNDUP[1])["title"],
            "pages": [{"path": m["path"], "variant": m["variant"]} for m in members],
        }
        if len(members) > 1:
            groups.append(entry)
        else:
            entry["hard_negative_of"] = hard_negative_of.get(article)
            singletons.append(entry)
    manifest = {
        "description": "Expected near-duplicate groups of the demo site. Every page listed under groups or "
        "singletons is an article page (one item each); exactly one page per group should be "
        "kept. Non-article pages yield no item.",
        "start_path": "/index.html",
        "groups": groups,
        "singletons": singletons,
        "non_article_pages": ["/index.html", "/zh/index.html"],
        "skipped_pages": {path: reason for path, (_, _, reason) in skipped.items()},
        "changed_in_edition_2": ["/news/weekly.html"],
        "serve": {
            p["path"].split("?")[0]: {"file": p["file"], "content_type": p["content_type"], "encoding": p["encoding"]}
            for p in all_pages
            if p["html"] is not None
        },
    }
    for path, (content_type, _, _) in skipped.items():
        manifest["serve"][path] = {"file": path[1:], "content_type": content_type, "encoding": "binary"}
    (SITE / "groups.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    n_pages = sum(len(g["pages"]) for g in groups) + len(singletons)
    print(f"wrote {n_pages} article URLs ({len(groups)} groups, {len(singletons)} singletons) to {SITE}")


if __name__ == "__main__":
    main()
