"""The size cut of a large page (``flat.cut``) against its reference: the same text as searching
``html.lower()`` for ``<script`` / ``<style`` and their end tags."""

from __future__ import annotations

import random
import re
import sys

import pytest
from helpers.data import DATA, load_pages

from scrapy_simhash.text import flat
from scrapy_simhash.text.charset import MAX_HTML_CHARS, decode_html

_REFERENCE_START_RE = re.compile(r"<(script|style)\b")


def cut_reference(html: str) -> str:
    """``_cut`` as it was written first: every search in the lower-cased page."""
    lower = html.lower()
    out: list[str] = []
    size = pos = 0
    while size < MAX_HTML_CHARS:
        match = _REFERENCE_START_RE.search(lower, pos)
        if match is None:
            out.append(html[pos:])
            break
        out.append(html[pos : match.start()])
        size += match.start() - pos
        end = lower.find("</" + match.group(1), match.end())
        if end < 0:
            break
        pos = end
    return " ".join(out)[:MAX_HTML_CHARS]


def _code_points() -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]


def test_lower_case_is_one_character_but_for_u0130() -> None:
    # _cut reads positions in the page itself only where its lower case has the same length.
    assert [c for c in _code_points() if len(c.lower()) != 1] == ["\u0130"]


def test_only_ascii_letters_lower_case_to_the_letters_of_script_and_style() -> None:
    letters = set("scriptyle<>/")
    assert {c for c in _code_points() if letters & set(c.lower())} == letters | set("SCRIPTYLE") | {"\u0130"}


def test_a_character_is_a_word_character_exactly_when_its_lower_case_is() -> None:
    word = re.compile(r"\w")
    assert [c for c in _code_points() if bool(word.match(c)) != bool(word.match(c.lower()))] == []


_PIECES = [
    "<script>", "<SCRIPT type=x>", "<Style>", "</script>", "</STYLE >", "</sCrIpT", "<scripts>", "<style_",
    "<ſcript>", "<\u212aey>", "\u0130", "İ<script>", "Σ", "ΣΣ<style>", "a", "中文", " ", "\n", "<", "/", "<p>", "x" * 50,
]  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_cut_is_the_reference_on_random_pages(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(flat, "MAX_HTML_CHARS", 200)
    monkeypatch.setattr(sys.modules[__name__], "MAX_HTML_CHARS", 200)
    rng = random.Random(seed)
    for _ in range(200):
        html = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 60)))
        assert flat.cut(html) == cut_reference(html), html


@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} not found beside the repo: the corpus tests need it")
def test_cut_is_the_reference_on_the_shared_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    # a cap inside every page: each is cut where its scripts and styles are
    monkeypatch.setattr(flat, "MAX_HTML_CHARS", 20_000)
    monkeypatch.setattr(sys.modules[__name__], "MAX_HTML_CHARS", 20_000)
    pages = [decode_html(page)[0] for bodies in load_pages().values() for page in bodies]
    assert len(pages) >= 200
    for html in pages:
        assert flat.cut(html) == cut_reference(html)
