"""The rules both walks use: the tag and class/id tables, keyword lists, patterns and thresholds
that the Python walk and block classes (:mod:`~scrapy_simhash.text.blocks`,
:mod:`~scrapy_simhash.text.region`, :mod:`~scrapy_simhash.text.flat`) read, and that the native core
receives as data (:func:`native_rules`: one mapping, no constant of its own). Change a rule here and
both paths follow."""

from __future__ import annotations

import re
from typing import Any

# --------------------------------------------------------------------------- the walk (blocks.py)

#: A page cut into more text blocks than this is not judged block by block: its text is found by
#: regular expressions (``method="large"``); each block costs a few microseconds per decision.
MAX_BLOCKS = 20_000

#: Elements walked before the walk checks its time budget again.
BUDGET_STEP = 2048

#: Never text: skipped in both modes (with their content; their tail text is kept). Not <head>:
#: libxml2 puts the whole <body> inside <head> after an unknown tag there (<sohu_cms_include>).
INVISIBLE = frozenset(
    "title script style noscript template svg math canvas object embed iframe frame frameset "
    "select datalist option optgroup textarea button input audio video source track map area "
    "param link meta base".split()
)

#: Page chrome: also skipped in main-content mode.
CHROME_TAGS = frozenset("nav aside footer header menu dialog figure figcaption".split())

#: Tags that start a new text block.
BLOCK = frozenset(
    "address article aside blockquote body caption center dd details dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html legend li main menu nav "
    "ol p pre section summary table tbody td tfoot th thead tr ul br".split()
)

#: class/id words of page chrome (substrings: long words; whole tokens: short ones).
NEGATIVE_WORDS = tuple(
    "sidebar side-bar footer breadcrumb crumbs comment navbar navigation menu share sharing social related "
    "recommend advert sponsor banner popup modal cookie newsletter subscribe copyright pagination pager "
    "disqus masthead toolbar widget promo outbrain taboola caption gallery slideshow carousel".split()
)
NEGATIVE_TOKENS = tuple(
    "nav ad ads adv tag tags foot header hd login signup rss link links topbar bottom print hidden hide".split()
)
#: A token that names a place inside the content column is no chrome: a negative token whose
#: class/id string, up to the token's end, ends with one of these ("column-center-bottom":
#: LilyPond's "Old News" and "Legalese" sections; "page-bottom" and "bottom" stay chrome).
NEGATIVE_NOT_AFTER = tuple(f"{column}{sep}bottom" for column in ("center", "main", "content") for sep in "-_")

#: An element with a chrome class/id that holds this many <p>/<br> is a wrapper of the page, not
#: chrome ("penci_sidebar", "header-style-2" on a container): it is walked, and link density decides.
WRAPPER_PARAGRAPHS = 5

#: class/id words of metadata lines (byline, dateline, counters): these substrings, or whole tokens.
META_CLASS_WORDS = tuple(
    "byline dateline timestamp pubdate publishdate postmeta post-meta entry-meta article-meta postinfo "
    "post-info article-info view-count viewcount".split()
)
META_CLASS_TOKENS = tuple("meta info date datetime time stats counter view views author".split())

#: An inline style that hides its element.
DISPLAY_NONE_RE = re.compile(r"display\s*:\s*none", re.IGNORECASE)

#: Sentence punctuation, full-width too (the block signals accept both widths).
PUNCT_RE = re.compile(r"[.,;:!?，。；：！？、．]")

#: The regular-expression fallback (flat.py): elements whose content is never text.
INVISIBLE_ELEMENTS = "script|style|noscript|template|svg|math|textarea|select|object|iframe"

# --------------------------------------------------------------------------- the block classes (region.py)

#: A block ending in one of these ends a sentence.
SENTENCE_END = frozenset(".!?。！？．\"”’'＂＇")

#: A block ending in one of these is cut short (a teaser of another article, on a page with several).
ELLIPSES = ("...", "…", "．．．", "更多>>", "详细>>", "更多＞＞", "详细＞＞", "more", "More")

#: Short lines that are page furniture wherever they appear (start of the line) ...
BOILERPLATE_RE = re.compile(
    r"^(?:copyright|©|[(（]c[)）]|all rights reserved|版权所有|责任编辑|编辑[:：]|分享到|分享至|"
    r"相关(?:链接|新闻|阅读|文章|报道|专题)|上一篇|下一篇|上一页|下一页|打印本页|关闭窗口|返回顶部|"
    r"返回首页|【?(?:打印|关闭|字体|收藏|评论|推荐)|点击(?:这里|此处)|share this|share on|"
    r"related (?:articles|posts|stories|content)|advertisement|read more|sign up|subscribe|"
    r"follow us|click here|posted in|filed under|tags?[:：])",
    re.IGNORECASE,
)

#: ... or anywhere in a block of modest size (copyright lines, cookie banners).
BOILERPLATE_ANY_RE = re.compile(
    r"all rights reserved|版权所有|copyright ©|©\s*\d{4}|"
    r"\bcookies?\b.{0,300}\b(?:consent|privacy|polic(?:y|ies)|accept)",
    re.IGNORECASE | re.DOTALL,
)

#: Words that make a line metadata, besides a year: they "say" it ...
META_KEYWORDS = frozenset(
    "views viewed reads comments likes shares replies posted published updated modified edited ago".split()
)

#: ... and Han metadata words that say it (their characters count as metadata).
META_HAN_KEYWORD_RE = re.compile(r"阅读|浏览|评论|点击|发布|更新|来源|作者|时间|日期|发表|次数")

#: The thresholds of a block's class (``region._classify_base``; weights count a Han character 3).
#: A link list: over this share of link text ...
LINK_DENSITY = 0.6
#: ... or over this share, unless a sentence (2+ punctuation marks) at least ``LINKED_SENTENCE_WEIGHT`` heavy.
LINKED_DENSITY = 0.33
LINKED_SENTENCE_WEIGHT = 150
#: A sentence has at least this many punctuation marks.
SENTENCE_PUNCT = 2
#: Boilerplate (``BOILERPLATE_ANY_RE``) only in a block lighter than this; ``BOILERPLATE_RE`` lighter than the next.
BOILERPLATE_MAX_WEIGHT = 1000
BOILERPLATE_START_MAX_WEIGHT = 200
#: Blocks lighter than this can be metadata lines (bylines, datelines, counters), if at least
#: ``META_MARKUP_SHARE`` of their characters is inside <time> / metadata-class elements (or their text says so).
META_MAX_WEIGHT = 200
META_MARKUP_SHARE = 0.5
#: A teaser (ending in one of ``ELLIPSES``) is lighter than this.
TEASER_MAX_WEIGHT = 600
#: Content-like ("good"): this heavy, or ``GOOD_PUNCT_WEIGHT`` with 2+ punctuation marks, or
#: ``GOOD_SENTENCE_WEIGHT`` ending a sentence.
GOOD_WEIGHT = 160
GOOD_PUNCT_WEIGHT = 60
GOOD_SENTENCE_WEIGHT = 100

# --------------------------------------------------------------------------- the content region (region.py)

#: Share of a block's score credited to its element, parent, grandparent, ... (readability).
DECAY = (1.0, 1.0, 0.5, 1 / 9, 1 / 12, 1 / 15)
#: The content region grows to an ancestor at most ``EXTEND_LEVELS`` levels up (wrappers with no
#: more good text do not count) that holds at least ``EXTEND_RATIO`` times its good text.
EXTEND_RATIO = 1.5
EXTEND_LEVELS = 3


def native_rules(**predicates: Any) -> dict[str, Any]:
    """Every rule above as the native walk reads it (tag tables sorted, patterns as the pattern's
    own search or match, or as its source where the core reads the characters or words it matches),
    with ``predicates``: the Python functions the walk calls back (``boilerplate_any``, ``meta_text``)."""
    return {
        "block": sorted(BLOCK),
        "invisible": sorted(INVISIBLE),
        "chrome_tags": sorted(CHROME_TAGS),
        "wrapper_paragraphs": WRAPPER_PARAGRAPHS,
        "negative": (list(NEGATIVE_WORDS), list(NEGATIVE_TOKENS)),
        "negative_not_after": list(NEGATIVE_NOT_AFTER),
        "meta_class": (list(META_CLASS_WORDS), list(META_CLASS_TOKENS)),
        # the patterns' own methods: the walk takes a match for true and None for false, the
        # answers of `... is not None`, without a Python call around each
        "display_none": DISPLAY_NONE_RE.search,
        "punct": PUNCT_RE.pattern,  # its characters
        "sentence_end": "".join(sorted(SENTENCE_END)),
        "ellipses": list(ELLIPSES),
        "meta_keywords": sorted(META_KEYWORDS),
        "meta_han_keywords": META_HAN_KEYWORD_RE.pattern,  # its words
        "boilerplate_start": BOILERPLATE_RE.match,
        "link_density": LINK_DENSITY,
        "linked_density": LINKED_DENSITY,
        "linked_sentence_weight": LINKED_SENTENCE_WEIGHT,
        "sentence_punct": SENTENCE_PUNCT,
        "boilerplate_max_weight": BOILERPLATE_MAX_WEIGHT,
        "boilerplate_start_max_weight": BOILERPLATE_START_MAX_WEIGHT,
        "meta_max_weight": META_MAX_WEIGHT,
        "meta_markup_share": META_MARKUP_SHARE,
        "teaser_max_weight": TEASER_MAX_WEIGHT,
        "good_weight": GOOD_WEIGHT,
        "good_punct_weight": GOOD_PUNCT_WEIGHT,
        "good_sentence_weight": GOOD_SENTENCE_WEIGHT,
        "decay": list(DECAY),
        "extend_ratio": EXTEND_RATIO,
        "extend_levels": EXTEND_LEVELS,
        **predicates,
    }
