"""``region._meta_says``, the first test of a metadata line: the same answer as the one regular
expression it stands for (``_META_SAYS_RE``, case-insensitive), on random lines built to hit each of
its alternatives and their edges, and on the lines of the shared data's texts."""

from __future__ import annotations

import random

import pytest
from helpers.data import DATA, load_corpus

from scrapy_simhash.text import region
from scrapy_simhash.text.rules import META_KEYWORDS

#: What the lines are made of: the keywords in mixed case, their parts, years and dates with each
#: separator (ASCII and full-width), numbers near years ("1999.99", "20245"), the Han keywords
#: and dates, the characters that fold to an ASCII letter in ``re`` or whose lower() holds one
#: (İ ı ſ K), other letters, digits and white space.
_PIECES = [
    *META_KEYWORDS,
    *(w.upper() for w in META_KEYWORDS),
    *(w.title() for w in META_KEYWORDS),
    *(w[:-1] for w in META_KEYWORDS),
    "1999", "2024", "2099", "1899", "20245", "1999.99", "2024,5", "2024．1", "2024，1",
    "12-5-2024", "3/14/15", "2024.09.14", "２０２４", "1－2－3", "1／2／3", "1．2．3", "12:30",
    "阅读", "发布", "更新", "来源", "作者", "时间", "日期", "发表", "次数", "阅", "布", "年", "月",
    "\u0130", "\u0131", "\u017f", "\u212a", "view\u017f", "li\u212aes", "REPL\u0130ES", "v\u0131ews",
    "é", "ß", "Ǆ", "ﬀ", "x", "y", "a", "-", "/", ".", ",", "，", " ", " ", "\u3000", "\t", "0", "7",
]


def _says(text: str) -> bool:
    return region._META_SAYS_RE.search(text) is not None


def test_random_lines_get_the_expressions_answer() -> None:
    rng = random.Random(20261203)
    said = 0
    for _ in range(40_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 6)))
        expected = _says(text)
        said += expected
        assert region._meta_says(text, text.lower()) == expected, repr(text)
    assert 10_000 < said < 35_000  # both answers are tested often


@pytest.mark.parametrize(
    "text",
    ["view\u017f 12", "Posted 2024", "reads", "12 REPL\u0130ES", "发布于 3", "1999.99 views", "1999.99", "２０２４", "a\u212a 1"],
)
def test_the_edges_get_the_expressions_answer(text: str) -> None:
    assert region._meta_says(text, text.lower()) == _says(text)


@pytest.mark.skipif(not (DATA / "zh-text").is_dir(), reason="needs ../shared/data")
def test_real_lines_get_the_expressions_answer() -> None:
    lines = [line for texts in load_corpus(400).values() for text in texts for line in text.splitlines()]
    assert len(lines) > 1_000
    for line in lines:
        short = line[:120]
        assert region._meta_says(short, short.lower()) == _says(short), repr(short)
