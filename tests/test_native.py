"""The native core (``scrapy_simhash_native``, built from ``native/``) against the Python reference:
identical tokens and fingerprints on every text of ``shared/data`` (and what its pages extract to)
and on generated text. Skipped with a message when the native core is not built; never in CI
(``./dev test`` builds it there)."""

from __future__ import annotations

import gzip
import json
import os
import sys
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_simhash import _native
from scrapy_simhash.extract import extract
from scrapy_simhash.features import FeatureExtractor
from scrapy_simhash.fingerprint import EmptyTextError, Fingerprinter, _exact_fp, _hash_cache, simhash_from_weights
from scrapy_simhash.sketch import sketch_tokens

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_rjieba import load_corpus

if _native.module() is None:
    if os.environ.get("CI"):
        raise RuntimeError(f"CI runs the native tests: the native core must be built ({_native._IMPORT_ERROR})")
    pytest.skip(
        "the native core is not built (./dev test builds it where cargo exists; "
        "or: cd native && maturin develop --release)",
        allow_module_level=True,
    )

# Options the native core implements, each against the same options on the Python path.
VARIANTS = [
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
        return _exact_fp(tokens, f.bits) or 1
    return simhash_from_weights(weights, bits=f.bits, feature_hash=f.feature_hash) or 1


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
    pages = sorted(Path(__file__).resolve().parents[1].glob("example_project/site/**/*.html"))
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
_TEXT = st.one_of(
    st.lists(_PIECES, max_size=60).map("".join),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
    st.lists(st.one_of(_PIECES, st.text(st.characters(blacklist_categories=("Cs",)), max_size=5)), max_size=40).map(
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


def _python_sketch(tokens: list[str]) -> bytes:
    return sketch_tokens(_hash_cache("blake2b", 64).digests(tokens))


@settings(max_examples=500, deadline=None)
@given(tokens=st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=80))
def test_generated_sketch_identical(tokens: list[str]) -> None:
    """The change sketch (``sketch.sketch_tokens``): 0 to 80 tokens (fewer than a shingle, repeats,
    lone surrogates: the Python path), native == Python."""
    assert Fingerprinter()._sketch(tokens) == _python_sketch(tokens)
    if all(t == t.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for t in tokens):
        assert bytes(_native.core().sketch(tokens)) == _python_sketch(tokens)


@needs_data
def test_corpus_sketch_identical() -> None:
    core = _native.core()
    for name, texts in corpus().items():
        for i, text in enumerate(texts[::7]):
            tokens = FeatureExtractor(native=True).tokens(text)
            assert bytes(core.sketch(tokens)) == _python_sketch(tokens), f"{name}[{7 * i}]"


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

    from conftest import build_from_crawler

    from scrapy_simhash.middleware import SimhashSpiderMiddleware

    crawler = make_crawler(SIMHASH_NATIVE=setting)
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.middleware"):
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
        "from scrapy_simhash import features\n"
        "from scrapy_simhash.fingerprint import Fingerprinter\n"
        "f = Fingerprinter()\n"
        "settings = f.settings\n"
        "f.fingerprint_page('<title>t</title><p>' + '新闻报道 news report. ' * 40 + '</p>')\n"
        "assert f.native, 'not native'\n"
        "assert 'rjieba' not in sys.modules, 'rjieba imported'\n"
        "assert features._JIEBA_DT is None and not features._TOKENIZERS, 'a Python segmenter was built'\n"
        "print(sorted(settings.items()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str(sorted(Fingerprinter(native=False).settings.items()))
