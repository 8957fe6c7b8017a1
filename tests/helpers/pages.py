"""Hand-built pages and responses, and running the spider middleware on them as Scrapy would."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response

try:
    from scrapy.utils.misc import build_from_crawler
except ImportError:  # Scrapy < 2.12

    def build_from_crawler(objcls: Any, crawler: Any, /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
        return objcls.from_crawler(crawler, *args, **kwargs)


__all__ = [
    "EN_ARTICLES",
    "ZH_ARTICLES",
    "SimhashTestSpider",
    "article_html",
    "build_from_crawler",
    "guide_page",
    "html_page",
    "make_response",
    "run",
]


# Texts written for these tests: long enough for SimHash (several hundred characters each) and
# about different subjects, so that unrelated pages are far apart.
EN_ARTICLES: dict[str, tuple[str, list[str]]] = {
    "harbour": (
        "Harbour cranes return after a decade of repairs",
        [
            (
                "After ten years of delays, the three container cranes at the north quay of the old "
                "harbour were lifted back onto their rails on Tuesday morning, watched by a crowd of "
                "former dock workers who had campaigned for their restoration since the storm of 2014."
            ),
            (
                "The engineering firm in charge of the work replaced every steel cable, rebuilt the "
                "operator cabins with modern glass and rewired the slewing motors, which now draw their "
                "power from the solar roof of the neighbouring warehouse instead of diesel generators."
            ),
            (
                "The port authority expects the first ships to be unloaded by the restored cranes in "
                "the spring, when a shipping line from Rotterdam resumes its weekly service. Until then, "
                "guided tours will let visitors climb to the cabins on Saturdays, weather permitting."
            ),
        ],
    ),
    "orchard": (
        "Village orchard keeps forty forgotten apple varieties alive",
        [
            (
                "On a slope above the river, a volunteer group tends an orchard of forty old apple "
                "varieties that had vanished from nurseries, from russets with rough golden skin to a "
                "tiny red winter apple that keeps in a cellar until the following May."
            ),
            (
                "Each autumn the members graft scions onto young rootstock and give the trees away at "
                "a market in the village hall, asking only that the new owners report how the trees "
                "fare in their gardens, so that the group can map which varieties suit which soils."
            ),
            (
                "A botanist from the regional university has begun to sequence the genomes of the "
                "rarest trees, hoping to find genes for resistance to scab and canker that commercial "
                "growers lost when they narrowed their orchards to a handful of supermarket favourites."
            ),
        ],
    ),
    "telescope": (
        "Amateur astronomers build a radio telescope from satellite dishes",
        [
            (
                "Members of a local astronomy club have linked six discarded satellite television "
                "dishes into a small radio interferometer on the roof of a secondary school, and last "
                "month they recorded the hydrogen line emitted by clouds of gas in the Milky Way."
            ),
            (
                "The project cost less than two thousand euros: the dishes came from a recycling yard, "
                "the receivers are software defined radios built for hobbyists, and the pupils wrote "
                "the correlation software themselves during an after-school programming course."
            ),
            (
                "Their next goal is to measure the rotation of the galaxy by tracking the Doppler shift "
                "of the hydrogen signal across the sky, an experiment that professional observatories "
                "first performed in the nineteen fifties with instruments the size of a house."
            ),
        ],
    ),
}


ZH_ARTICLES: dict[str, tuple[str, list[str]]] = {
    "metro": (
        "城市地铁新线路今日开通运营",
        [
            (
                "今天上午，本市地铁五号线正式开通运营，全长三十二公里，共设二十四座车站，连接城市北部的"
                "大学城和南部的高铁站。首班列车早上六点从大学城站发出，不少市民专门赶来体验。"
            ),
            (
                "据地铁公司介绍，新线路采用全自动无人驾驶系统，列车最高时速八十公里，高峰时段行车间隔"
                "缩短到两分半钟。各车站均设有无障碍电梯和母婴室，站台安装了全高安全门。"
            ),
            (
                "交通部门预计，五号线开通后每天可分担约四十万人次的客流，明显缓解南北方向道路的拥堵。"
                "沿线居民表示，过去坐公交车要一个多小时，现在三十分钟就能到达市中心。"
            ),
        ],
    ),
    "tea": (
        "山区茶农借助网络直播打开销路",
        [
            (
                "春茶上市时节，山区的茶农们不再只等收购商上门，而是在茶园里架起手机，通过网络直播向"
                "全国各地的观众介绍采茶、杀青和揉捻的过程，一场直播常常能卖出几百斤新茶。"
            ),
            (
                "村里的合作社为年轻人开设了直播培训班，教他们拍摄技巧和产品讲解，还统一了包装和质量"
                "标准。负责人说，茶叶的价格比往年提高了三成，外出打工的年轻人也开始回乡创业。"
            ),
            (
                "专家提醒，农产品直播销售要重视品质和售后服务，建立可追溯的质量体系，才能让消费者放心"
                "购买，让特色产业走得更远，真正带动山区群众增收致富。"
            ),
        ],
    ),
}


#: Three paragraphs of an English news article (the text layer's tests).
EN_PARAS = [
    (
        "The ferry between the two islands resumed its winter timetable this week, with four "
        "crossings a day instead of seven, after the operator finished repairs to the hull."
    ),
    (
        "Passengers who travel with bicycles are asked to book a place in advance, because the "
        "smaller winter vessel has room for only twelve bicycles on its open rear deck."
    ),
    (
        "The harbour office said that the summer timetable will return in April, when the larger "
        "vessel comes back from its yearly inspection at the shipyard on the mainland."
    ),
]


def html_page(
    title: str,
    paragraphs: list[str],
    *,
    site: str = "Example News",
    sidebar: str = "",
    charset: str | None = "utf-8",
    lang: str = "en",
) -> str:
    """A realistic article page: navigation, the article, a sidebar and a footer."""
    meta = f'<meta charset="{charset}">' if charset else ""
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head>{meta}<title>{title} - {site}</title></head>
<body>
<nav><a href="/">Home</a> <a href="/world">World</a> <a href="/science">Science</a></nav>
<article><h1>{title}</h1>
{body}
</article>
<aside>{sidebar}</aside>
<footer>&copy; {site}. All rights reserved.</footer>
</body></html>"""


def article_html(name: str, **kwargs: Any) -> str:
    if name in EN_ARTICLES:
        title, paragraphs = EN_ARTICLES[name]
        return html_page(title, paragraphs, **kwargs)
    title, paragraphs = ZH_ARTICLES[name]
    return html_page(title, paragraphs, lang="zh", **kwargs)


def make_response(
    url: str,
    body: str | bytes,
    *,
    encoding: str = "utf-8",
    headers: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
    cls: type[Response] = HtmlResponse,
) -> Response:
    """A response as Scrapy's downloader would build it, with its request attached."""
    if isinstance(body, str):
        body = body.encode(encoding)
    request = Request(url, meta=meta or {})
    return cls(url=url, body=body, headers=headers or {}, request=request)


class SimhashTestSpider(Spider):
    name = "test"


def run(mw: Any, response: Response, result: Iterable[Any] | None = None) -> list[Any]:
    """Run ``process_spider_output`` as Scrapy would, on the calling thread (``result`` is
    consumed lazily, like a callback's generator)."""
    return list(mw.process_spider_output(response, iter(result if result is not None else ())))


def options_page(lines: list[str], name: str = "harbour", stamp: str = "2024-01-01") -> str:
    """A documentation-like page: an article, then a list of short lines inside <main> that the
    content region leaves out (but that is content-like: the change sketch covers it)."""
    title, paragraphs = EN_ARTICLES[name]
    article = "".join(f"<p>{p}</p>" for p in paragraphs)
    items = "".join(f"<li>{x}</li>" for x in lines)
    return (
        f"<html><head><title>{title} - Docs</title></head><body><nav><a href=/>Home</a> <a href=/b>Blog</a></nav>"
        f"<main><h1>{title}</h1><p class=date>Updated {stamp}</p><div class=article>{article}</div>"
        f"<div class=opts><ul>{items}</ul></div></main><footer>Copyright 2024 Example</footer></body></html>"
    )


#: Two option lists that share no line: pages with one article and either list have one
#: fingerprint (the article) and change sketches ~0.2 alike (the lists are most of their text).
OPTIONS_A = [
    f"flag {w}{i} enables the {w} mode for stage {w}"
    for i, w in enumerate(
        "amber basil cedar dune ember fern grove heath iris jade kelp larch moss nettle olive".split()
    )
]


OPTIONS_B = [
    f"switch {w}{i} turns the {w} engine into state {w}"
    for i, w in enumerate(
        "apple birch clover daisy elm fig ginger hazel ivy juniper kale lotus mint nutmeg oak".split()
    )
]


#: The words of the articles above: a guide page made of them keeps its vocabulary when a paragraph is rewritten.
GUIDE_WORDS = sorted({w.strip(".,:;").lower() for _, ps in EN_ARTICLES.values() for p in ps for w in p.split()})


def guide_page(version: int = 1, seed: int = 37, *, date: str = "2024-03-01", word: str = "") -> str:
    """A long user's guide page (22 paragraphs, ~6,900 characters of text, drawn with ``seed``);
    from ``version`` 2 on, its second paragraph is rewritten (~300 new characters in the words of
    the page). ``date``: the date in its last line; ``word``: a word put in place of the first
    paragraph's first one (an edit that adds nothing). With seed 37 the rewrite moves the
    fingerprint 3 bits and leaves the change sketch 0.922 alike (the tests assert it)."""
    rng = random.Random(seed)

    def paragraph(rng: random.Random) -> str:
        return " ".join(rng.choice(GUIDE_WORDS) for _ in range(45)).capitalize() + "."

    paragraphs = [paragraph(rng) for _ in range(22)]
    if version > 1:
        paragraphs[1] = paragraph(random.Random(f"{seed}-{version}"))
    if word:
        paragraphs[0] = word.capitalize() + paragraphs[0][paragraphs[0].index(" ") :]
    paragraphs.append(f"This guide was last updated on {date}.")
    return html_page("A user's guide to the harbour", paragraphs).replace(
        "<head>", '<head><meta name="page-type" content="article">'
    )
