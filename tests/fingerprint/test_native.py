"""The native core (``scrapy_simhash_native``, built from ``native/``) against the Python reference:
identical tokens and fingerprints on every text of ``shared/data`` (and what its pages extract to)
and on generated text. Skipped with a message when the native core is not built; never in CI
(``./dev test`` builds it there)."""

from __future__ import annotations

import gzip
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any, Literal

import pytest
from helpers.ci import native_required
from helpers.data import load_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_simhash import _native
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, exact_fp, simhash_from_weights
from scrapy_simhash.fingerprint.templates import SiteTemplates, line_key
from scrapy_simhash.text.extract import Document, extract
from scrapy_simhash.text.features import FeatureExtractor, normalize

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"

if _native.module() is None:
    if native_required():
        raise RuntimeError(f"CI runs the native tests: the native core must be built ({_native.unavailable()})")
    pytest.skip(
        "the native core is not built (./dev test builds it where cargo exists; "
        "or: cd native && maturin develop --release)",
        allow_module_level=True,
    )

# Options the native core implements, each against the same options on the Python path.
VARIANTS: list[dict[str, Any]] = [
    {},
    {"hmm": True},
    {"bits": 128},
    {"feature_hash": "xxh3"},
    {"bits": 128, "feature_hash": "xxh3", "weighting": "tf"},
    {"min_features": 0},
]


def _pair(**kw: object) -> tuple[Fingerprinter, Fingerprinter]:
    """Native and Python fingerprinters with options ``kw`` and no time budget (a page that runs
    past it on a loaded machine would be cut on one path only)."""
    kw.setdefault("time_budget", 0)
    return Fingerprinter(native=True, **kw), Fingerprinter(native=False, **kw)  # type: ignore[arg-type]


def _fp(f: Fingerprinter, text: str, title: str = "") -> int | None:
    try:
        return f.fingerprint_text(text, title)
    except EmptyTextError:
        return None


@cache
def corpus() -> dict[str, list[str]]:
    """Every text of shared/data: the Chinese texts, the revision pairs (both sides) and the main
    text, title and visible text that the Python extraction gives for every page."""
    out = load_corpus(None)  # the Chinese texts and the Chinese side of the revision pairs
    cee = DATA / "zh-web-cee"
    out["zh-web-cee-author"] = [p.read_text(encoding="utf-8") for p in sorted((cee / "author").glob("*.txt"))]
    with gzip.open(DATA / "revisions" / "pairs.jsonl.gz", "rt", encoding="utf-8") as f:
        en = (json.loads(line) for line in f)
        out["revisions-en"] = list(
            dict.fromkeys(t for rec in en if rec["lang"] == "en" for t in (rec["text_a"], rec["text_b"]))
        )
    pages = [p.read_bytes() for p in sorted((cee / "original").glob("*.html"))]
    pages += [gzip.decompress(p.read_bytes()) for p in sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))]
    extracted: list[str] = []
    for page in pages:
        for main_content in (True, False):
            doc = extract(page, main_content=main_content)
            extracted += [doc.title, doc.text, doc.visible]
    out["pages"] = extracted
    return {k: v for k, v in out.items() if v}


#: The corpus tests read ../shared/data beside the checkout (the project's shared data, never
#: shipped); a checkout without it runs the generated-text and the example-site tests only.
needs_data = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"{DATA} not found beside the repo: the corpus differential tests need it"
)


@needs_data
def test_corpus_is_there() -> None:
    sizes = {k: len(v) for k, v in corpus().items()}
    assert set(sizes) >= {"clue-sample", "zh-web-cee", "revisions-zh", "revisions-en", "pages"}, sizes
    assert sum(sizes.values()) > 5000, sizes


def _reference_fp(f: Fingerprinter, tokens: list[str]) -> int | None:
    """``Fingerprinter._fingerprint`` on the Python path from already computed tokens (each
    corpus text is tokenized once by Python, its slow part)."""
    weights = f._extractor.weigh(tokens)
    if not weights:
        return None
    if len(weights) < f.min_features:
        return exact_fp(tokens, f.bits) or 1
    return simhash_from_weights(weights, bits=f.bits, feature_hash=f.feature_hash) or 1


@pytest.mark.slow
@needs_data
def test_corpus_identical() -> None:
    """Every text: native tokens == Python tokens; native fingerprints == the Python path's from
    those tokens (two option sets), and == ``fingerprint_text`` on the Python path for a sample."""
    native_ex, python_ex = FeatureExtractor(native=True), FeatureExtractor(native=False)
    assert native_ex.native_core() is not None and python_ex.native_core() is None
    natives = [Fingerprinter(native=True), Fingerprinter(native=True, bits=128, feature_hash="xxh3", weighting="tf")]
    pairs = [_pair(**options) for options in VARIANTS]
    checked = 0
    for name, texts in corpus().items():
        for i, text in enumerate(texts):
            tokens = python_ex.tokens(text)
            assert native_ex.tokens(text) == tokens, f"{name}[{i}]"
            for f in natives:
                assert _fp(f, text) == _reference_fp(f, tokens), f"{name}[{i}] {f!r}"
            if i % 50 == 0:
                title = texts[i - 1][:40]
                for a, b in pairs:
                    assert _fp(a, text, title) == _fp(b, text, title), f"{name}[{i}] {a!r}"
            checked += 1
    assert checked == sum(map(len, corpus().values()))


@needs_data
def test_corpus_identical_with_hmm() -> None:
    native_ex, python_ex = FeatureExtractor(hmm=True, native=True), FeatureExtractor(hmm=True, native=False)
    for name in ("clue-sample", "ud-gsdsimp", "yanyiwu-news", "zh-web-cee", "zh-web-cee-author", "pages"):
        for i, text in enumerate(corpus().get(name, [])):
            assert native_ex.tokens(text) == python_ex.tokens(text), f"{name}[{i}]"


def test_pages_identical_end_to_end() -> None:
    """Whole pages (fingerprint, evidence and change sketch): the demo site's pages (in the repo:
    English, Chinese, GBK, empty) and the first real Chinese pages of shared/data when present."""
    native, python = _pair()
    pages = sorted(Path(__file__).resolve().parents[2].glob("example_project/site/**/*.html"))
    pages += sorted((DATA / "zh-web-cee" / "original").glob("*.html"))[:20]
    assert len(pages) >= 20
    compared = 0
    for p in pages:
        page = p.read_bytes()
        try:
            expected = python.fingerprint_page(page)
        except EmptyTextError:
            with pytest.raises(EmptyTextError):
                native.fingerprint_page(page)
            continue
        assert native.fingerprint_page(page) == expected, p.name
        compared += 1
    assert compared >= 20


# Generated text: mixed scripts, digits of several scripts and their separators, apostrophes,
# punctuation, whitespace and line breaks between Han characters, emoji, full-width forms.
_PIECES = st.sampled_from(
    (
        "中文|分词|的|天安门|我们|研究生命|起源|结婚的和尚未结婚的|，|。|？|hello|Don't|it\u2019s|'|\u2019|abc中文|"
        "ÉCOLE|straße|İstanbul|ǅ|Ελληνικά|русский|عربى|हिन्दी|ไทย|日本語のテキスト|한국어|١٢٣|४२|3.14|1,000|"
        "12:30|2024-01-02|a/b|x²|½|Ⅻ|①|ｆｕｌｌ|１２３|😀|👍🏽|\u200b|\u00a0|\u3000| |\n|\r\n|\t| \n |_|-|.|"
        "𠀀|\u9fd5|\u9fd6|\u4dff|ﬁ|Ǆ|ß|ﾊﾝｶｸ|⁄|™|<num>|"
        "u64|i128|f32|sha256|x86_64|v1.2.3|python3.11|3rd|12px|1.2k|0x1f|a'1|٣a|u٣|é2|ｕ６４|中3|3中|a1'b2|9'"
    ).split("|")
)
_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
_TEXT = st.one_of(
    st.lists(_PIECES, max_size=60).map("".join),
    st.text(st.characters(blacklist_categories=_SURROGATES), max_size=200),
    st.lists(st.one_of(_PIECES, st.text(st.characters(blacklist_categories=_SURROGATES), max_size=5)), max_size=40).map(
        "".join
    ),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT, title=_TEXT, hmm=st.booleans())
def test_generated_text_identical(text: str, title: str, hmm: bool) -> None:
    native = FeatureExtractor(hmm=hmm, native=True)
    python = FeatureExtractor(hmm=hmm, native=False)
    assert native.tokens(text) == python.tokens(text)
    for options in ({"hmm": hmm, "min_features": 0}, {"hmm": hmm, "bits": 128, "feature_hash": "xxh3"}):
        a, b = _pair(**options)
        assert _fp(a, text, title) == _fp(b, text, title)


def _doc(title: str, text: str, rest: str = "") -> Document:
    return Document(title=title, text=text, encoding=None, visible=f"{title}\n{text}\n{rest}", rest=rest)


def _same_page(native: Fingerprinter, python: Fingerprinter, doc: Document) -> bool:
    """``Fingerprinter._native_page`` (one call of ``Core.page``) == the Python path's fingerprint,
    short flag, change sketch and content key, and its line keys and normalised lines are
    ``templates.line_key`` and ``normalize`` of each line of the text. False where the native
    core declined (lone surrogates: the Python path runs)."""
    try:
        expected = python._python_page(doc)
    except EmptyTextError:
        expected = None
    try:
        got = native._native_page(doc)
    except EmptyTextError:
        assert expected is None
        return True
    if got is None:
        return False
    assert expected is not None
    assert got[:4] == expected[:4]
    lines = got[4]
    if lines is not None:
        raw = doc.text.split("\n")
        assert lines.keys == [line_key(line) for line in raw]
        assert lines.normalised() == [normalize(line) for line in raw]
    unkeyed = native._native_page(doc, lines=False)  # no template check: no line keys made
    assert unkeyed is not None and unkeyed[:4] == got[:4] and unkeyed[4] is None
    assert native._content_key(doc) == python._content_key(doc)  # a template-only page's content key
    return True


_SURROGATE = st.sampled_from(("", "", "", "\ud800", "x\udfff y"))


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_TEXT, text=_TEXT, rest=_TEXT, odd=_SURROGATE, variant=st.sampled_from(VARIANTS))
def test_generated_page_identical(title: str, text: str, rest: str, odd: str, variant: dict[str, object]) -> None:
    """``Core.page``: generated title, text and other text (lone surrogates now and then), with
    every option set the native core implements, native == Python."""
    native, python = _pair(**variant)
    _same_page(native, python, _doc(title, text, rest + odd))
    # few features: the short path's content key covers the other text's tokens too
    _same_page(native, python, _doc(title[:10], text[:20], rest))


def test_page_of_a_long_text_cut_at_max_chars() -> None:
    native, python = _pair(max_chars=50)
    doc = _doc("Title\nline two", "first line 12\n" + "word " * 40 + "\nlast", "other text " * 30)
    assert _same_page(native, python, doc)
    page = native._native_page(doc)
    assert page is not None and page[4] is None  # cut: the lines are keyed where they are used


_TEMPLATE = [
    "Home | News | About 2024",
    "Copyright © 2024 Example Ltd. All rights reserved",
    "订阅 我们的 新闻 今日 要闻",
]
_SITE = SiteTemplates(min_pages=2)
for _i in range(3):
    _SITE.observe("http://example.com/p", [*_TEMPLATE, f"page {_i} of its own"], fp=_i)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    own=st.lists(_TEXT, max_size=6),
    template=st.lists(
        st.sampled_from([*_TEMPLATE, "ＨＯＭＥ | news | about 1999", "COPYRIGHT © 7 EXAMPLE LTD. all rights reserved"]),
        max_size=4,
    ),
    order=st.randoms(use_true_random=False),
    min_features=st.sampled_from((0, 5, 24)),
)
def test_template_only_identical(own: list[str], template: list[str], order: Any, min_features: int) -> None:
    """``_template_only`` with the native core's line keys and normalised lines (the learned
    template's lines, some written with other digits, case and widths, mixed into generated
    lines) == the Python path's."""
    lines = own + template
    order.shuffle(lines)
    text = "\n".join(lines)
    native, python = _pair(min_features=min_features)
    try:
        parts = native._native_page(_doc("", text))
    except EmptyTextError:
        return
    assert parts is not None
    url = "http://example.com/x"
    assert native._template_only(text, url, _SITE, parts[4]) == python._template_only(text, url, _SITE, None)


def test_template_only_both_ways() -> None:
    native, python = _pair()
    words = " ".join(f"word{i}" for i in range(30))
    url = "http://example.com/x"
    for own, expected in (("a few words 12", True), (words, False), ("新闻 " + words[:60], True)):
        text = "\n".join([_TEMPLATE[0], own, *_TEMPLATE[1:]])
        parts = native._native_page(_doc("Title", text))
        assert parts is not None and parts[4] is not None
        assert native._template_only(text, url, _SITE, parts[4]) is expected
        assert python._template_only(text, url, _SITE, None) is expected


@needs_data
def test_corpus_page_identical() -> None:
    """``Core.page`` on the corpus: a text, a title and another text as the page's other text."""
    native, python = _pair()
    compared = 0
    for name, texts in corpus().items():
        for i in range(1, len(texts) - 1, 40):
            assert _same_page(native, python, _doc(texts[i - 1][:40], texts[i], texts[i + 1])), f"{name}[{i}]"
            compared += 1
    assert compared > 100


def test_huge_and_repetitive_text() -> None:
    # Counts past the log_tf table (255), a text past max_chars, one huge token.
    text = "apple banana 苹果香蕉 " * 5000 + " ".join(f"w{i:x}" for i in range(30000)) + "z" * 100_000
    for options in ({}, {"max_chars": 0}, {"weighting": "tf", "bits": 128}):
        a, b = _pair(**options)
        assert _fp(a, text) == _fp(b, text)


def test_lone_surrogates_take_the_python_path() -> None:
    native, python = _pair(min_features=0)
    text = "abc \ud800 中文 def"
    assert native.fingerprint_text(text) == python.fingerprint_text(text)
    assert FeatureExtractor(native=True).tokens(text) == FeatureExtractor(native=False).tokens(text)


def test_empty_texts_raise_on_both_paths() -> None:
    native, _ = _pair()
    for text in ("", "   ", "12 34", "的 了 the of", "!!!"):
        with pytest.raises(EmptyTextError):
            native.fingerprint_text(text)


def test_native_is_chosen_and_reported() -> None:
    assert Fingerprinter().native  # installed: the default uses it
    assert "native=True" in repr(Fingerprinter())
    assert not Fingerprinter(native=False).native
    assert "native=False" in repr(Fingerprinter(native=False))
    # options the native core does not implement run the Python path, native or not
    for options in ({"features": "shingles"}, {"weighting": "tfidf"}, {"features": "chars"}):
        assert not Fingerprinter(native=True, **options).native  # type: ignore[arg-type]
    # the same settings: indexes built either way are interchangeable
    assert Fingerprinter(native=True).settings == Fingerprinter(native=False).settings


def test_native_argument_is_checked() -> None:
    with pytest.raises(TypeError, match="native must be None, True or False"):
        Fingerprinter(native="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(("setting", "core"), [(None, "native"), (False, "Python"), ("False", "Python")])
def test_setting_and_start_up_line(make_crawler, caplog, setting: object, core: str) -> None:
    import logging

    from helpers.pages import build_from_crawler

    from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware

    crawler = make_crawler(SIMHASH_NATIVE=setting)
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.middleware"):
        mw = build_from_crawler(SimhashSpiderMiddleware, crawler)
    try:
        walk = "native HTML walk" if core == "native" else "Python HTML walk (native=False)"
        assert f"fingerprints, {core} fingerprint core, {walk})" in caplog.text
        assert mw.fingerprinter.native is (core == "native")
    finally:
        mw.spider_closed(crawler.spider, "finished")


def test_the_native_path_loads_no_python_segmenter() -> None:
    """A fresh process that fingerprints pages and reads the index settings natively never imports
    rjieba nor builds jieba's Python dictionary (35-60 MB it would not use), and its settings are
    those of the Python path."""
    import subprocess

    code = (
        "import sys\n"
        "from scrapy_simhash.text import tokenizers\n"
        "from scrapy_simhash.fingerprint.simhash import Fingerprinter\n"
        "f = Fingerprinter()\n"
        "settings = f.settings\n"
        "f.fingerprint_page('<title>t</title><p>' + '新闻报道 news report. ' * 40 + '</p>')\n"
        "assert f.native, 'not native'\n"
        "assert 'rjieba' not in sys.modules, 'rjieba imported'\n"
        "assert tokenizers._JIEBA_DT is None and not tokenizers._TOKENIZERS, 'a Python segmenter was built'\n"
        "print(sorted(settings.items()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str(sorted(Fingerprinter(native=False).settings.items()))
