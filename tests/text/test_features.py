"""Tests for scrapy_simhash.features: normalisation, tokens, stop words, feature modes, weightings."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest

from scrapy_simhash.text import features as F
from scrapy_simhash.text import tokenizers as T
from scrapy_simhash.text.features import FeatureExtractor, normalize
from scrapy_simhash.text.tokenizers import NUMBER_TOKEN, get_tokenizer

ZH = "我们在北京天安门广场吃烤鸭。小明硕士毕业于中国科学院计算所！"


def test_normalize_full_width_and_case():
    assert normalize("ＡＢＣ　ｄｅｆ１２３，Hello") == "abc def123,hello"


def test_tokens_han_latin_numbers_punctuation():
    tok = get_tokenizer("jieba", hmm=True)
    tokens = tok.tokenize(normalize("2020年2月6日，小明在北京 Python3.11 版本 hello-world!!"))
    assert tokens == [
        NUMBER_TOKEN,
        "年",
        NUMBER_TOKEN,
        "月",
        NUMBER_TOKEN,
        "日",
        "小明",
        "在",
        "北京",
        "python3",
        NUMBER_TOKEN,
        "版本",
        "hello",
        "world",
    ]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # A token that starts with a letter keeps its digits: these pages are different pages.
        (
            "u16 u64 i128 f32 sha256 UTF8 IPv6 h264 python3",
            ["u16", "u64", "i128", "f32", "sha256", "utf8", "ipv6", "h264", "python3"],
        ),
        # One that starts with a digit is a number, letters joined to it included.
        ("2026-11-23 12:30 1,000 3rd 12px 1.2k 0x1F 2nd", [NUMBER_TOKEN] * 8),
        # "_" and "." separate; what follows a "." is a number.
        (
            "x86_64 v1.2.3 python3.11 snake_case",
            ["x86", NUMBER_TOKEN, "v1", NUMBER_TOKEN, "python3", NUMBER_TOKEN, "snake", "case"],
        ),
        # A Han character ends a word or a number; apostrophes join letters only.
        (
            "使用Python3语言 第3章 it's rock\u2019n\u2019roll a'1",
            ["使用", "python3", "语言", "第", NUMBER_TOKEN, "章", "it's", "rock\u2019n\u2019roll", "a", NUMBER_TOKEN],
        ),
        # NFKC first: full-width and superscript digits are ASCII; other scripts' digits are digits.
        ("ｕ６４ x² ٣٤ u٣", ["u64", "x2", NUMBER_TOKEN, "u٣"]),
    ],
)
def test_token_rules(text, tokens):
    assert FeatureExtractor(native=False).tokens(text) == tokens
    assert FeatureExtractor().tokens(text) == tokens  # the native core when it is built


def test_identifiers_with_digits_are_different_pages_numbers_are_not():
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    page = "Methods of the primitive {t} type: {t}::MAX, {t}::from_be_bytes, checked_add. " * 3
    fp = Fingerprinter(min_features=0)
    assert fp.fingerprint_text(page.format(t="u16")) != fp.fingerprint_text(page.format(t="u64"))
    released = "Version 3.1.4 released on 2026-11-23, the 3rd release, 12px icons, build 1.2k"
    assert fp.fingerprint_text(released) == fp.fingerprint_text(
        released.translate(str.maketrans("0123456789", "9876543210"))
    )


def test_numbers_do_not_change_tokens():
    ex = FeatureExtractor()
    assert ex.tokens("发布于2020-01-02，阅读 1234 次") == ex.tokens("发布于2024-12-31，阅读 98 次")


def test_hmm_flag_changes_unknown_words():
    text = "小明硕士毕业"
    assert get_tokenizer("jieba", hmm=True).tokenize(text)[0] == "小明"
    assert get_tokenizer("jieba", hmm=False).tokenize(text)[:2] == ["小", "明"]


def test_jieba_is_private_and_matches_jieba_lcut_on_han_runs():
    import jieba

    tok = get_tokenizer("jieba", hmm=True)
    run = "我们在北京天安门广场吃烤鸭小明硕士毕业于中国科学院计算所"
    assert list(tok.cut_han(run)) == jieba.lcut(run, HMM=True)
    assert list(get_tokenizer("jieba", hmm=False).cut_han(run)) == jieba.lcut(run, HMM=False)


DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.mark.parametrize("hmm", [True, False])
def test_our_jieba_cutter_equals_jieba_on_real_pages(hmm):
    import jieba

    folder = DATA / "zh-web-cee" / "cleaned"
    if not folder.is_dir():
        pytest.skip(f"shared data not found: {folder}")
    texts = [p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt"))[:12]]
    tok = get_tokenizer("jieba", hmm=hmm)
    runs = [r for t in texts for r in re.findall("[\u4e00-\u9fd5]+", normalize(t))]
    assert len(runs) > 500
    tok.clear_cache()
    first = [list(tok.cut_han(r)) for r in runs]
    assert first == [jieba.lcut(r, HMM=hmm) for r in runs]
    assert [list(tok.cut_han(r)) for r in runs] == first  # cached HMM results change nothing


def test_words_mode_drops_stop_words_and_numbers():
    feats = FeatureExtractor(weighting="tf").extract("这是我们的 2 个苹果和 the apples of Paris")
    assert set(feats.weights) == {"苹果", "apples", "paris"}
    assert "的" in feats.tokens and NUMBER_TOKEN in feats.tokens  # tokens keep everything


def test_stop_word_lists_loaded():
    assert {"的", "了", "the", "and"} <= F.STOP_WORDS
    assert "总之" in F.SIGNAL_WORDS and "总之" not in F.STOP_WORDS


def test_shingles():
    feats = FeatureExtractor(features="shingles", shingle_size=2, weighting="tf").extract(
        "red apples, green apples, red apples"
    )
    assert feats.weights == {
        "red apples": 2.0,
        "apples green": 1.0,
        "green apples": 1.0,
        "apples red": 1.0,
    }


def test_shingles_shorter_than_size():
    feats = FeatureExtractor(features="shingles", shingle_size=4, weighting="tf").extract("red apples")
    assert feats.weights == {"red apples": 1.0}


def test_chars_mode_needs_no_segmentation():
    ex = FeatureExtractor(features="chars", shingle_size=2, weighting="tf")
    assert ex.settings()["tokenizer"] is None
    feats = ex.extract("北京烤鸭，北京 ok")
    assert feats.weights == {
        "北京": 2.0,
        "京烤": 1.0,
        "烤鸭": 1.0,
        "鸭北": 1.0,
        "京ok": 1.0,
    }


def test_sentences_mode():
    feats = FeatureExtractor(features="sentences", weighting="tf").extract(
        "苹果很好吃。苹果很好吃！香蕉呢? apples are red"
    )
    assert feats.weights == {"苹果 好吃": 2.0, "香蕉": 1.0, "apples red": 1.0}


def test_weighting_log_tf():
    feats = FeatureExtractor(weighting="log_tf").extract("apple apple apple pear")
    assert feats.weights == {"apple": pytest.approx(1 + math.log(3)), "pear": 1.0}


def test_weighting_tfidf_uses_jieba_idf_and_median_for_unknown():
    table, median, _ = F._IDF.get()
    feats = FeatureExtractor(weighting="tfidf").extract("烤鸭 烤鸭 zzqxunknown")
    assert feats.weights["烤鸭"] == pytest.approx(2 * table["烤鸭"])
    assert feats.weights["zzqxunknown"] == pytest.approx(median)
    assert 5 < median < 15


def test_weighting_seed000_pos_length_signal_title():
    table, _median, _ = F._IDF.get()
    ex = FeatureExtractor(weighting="seed000")
    # 烤鸭 (noun, pos 3), 吃 (verb, pos 2), 总之 (signal word)
    w = ex.extract("吃 烤鸭 总之", title="").weights
    lens = {"吃": 0.0, "烤鸭": 1.0, "总之": 1.0}
    assert w["吃"] == pytest.approx(table["吃"] * (1 + 2 + lens["吃"]))
    assert w["烤鸭"] == pytest.approx(table["烤鸭"] * (1 + 3 + lens["烤鸭"]))
    pos_zongzhi = F._POS_WEIGHT.get(F._POS.get()["总之"][:1], 1.0)
    assert w["总之"] == pytest.approx(table["总之"] * (1 + pos_zongzhi + 1.0 + 5))
    titled = ex.extract("吃 烤鸭 总之", title="烤鸭").weights
    # the title's words are features too (tf 2) and get the +5 title bonus
    assert titled["烤鸭"] == pytest.approx(2 * table["烤鸭"] * (1 + 3 + 1.0 + 5))


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"features": "bag"}, ["features", "'bag'", "words"]),
        ({"weighting": "bm25"}, ["weighting", "'bm25'", "log_tf"]),
        ({"tokenizer": "thulac"}, ["tokenizer", "'thulac'", "rjieba"]),
        ({"shingle_size": 0}, ["shingle_size", "0", "between 1 and 16"]),
        ({"shingle_size": 17}, ["shingle_size", "17", "between 1 and 16"]),
        ({"shingle_size": True}, ["shingle_size", "True"]),
        (
            {"features": "shingles", "weighting": "seed000"},
            ["seed000", "features='words'"],
        ),
    ],
)
def test_invalid_options_name_argument_and_range(kwargs, words):
    with pytest.raises(ValueError, match=words[0]) as info:
        FeatureExtractor(**kwargs)
    for w in words:
        assert w in str(info.value)


def test_hmm_must_be_bool():
    with pytest.raises(TypeError, match="hmm"):
        FeatureExtractor(hmm="yes")  # type: ignore[arg-type]


def test_rjieba_missing_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "rjieba", None)  # import rjieba -> ImportError
    with pytest.raises(ImportError, match=r"pip install scrapy-simhash\[rjieba\]"):
        T.Tokenizer("rjieba", hmm=True).tokenize("北京")


def test_rjieba_tokens():
    pytest.importorskip("rjieba")
    a = get_tokenizer("rjieba", hmm=True).tokenize(normalize(ZH))
    b = get_tokenizer("jieba", hmm=True).tokenize(normalize(ZH))
    assert a == b


def test_settings_identities():
    s = FeatureExtractor(weighting="tfidf").settings()
    assert isinstance(s["tokenizer_identity"], str) and isinstance(s["idf"], str)
    assert s["tokenizer_identity"].startswith("jieba-0.")
    assert "/dict-" in s["tokenizer_identity"]
    assert s["idf"].startswith("jieba-idf-")
    assert s["word_lists"] == F.WORD_LISTS_DIGEST
    pytest.importorskip("rjieba")
    r = FeatureExtractor(tokenizer="rjieba").settings()
    if T.rjieba_matches_jieba():
        assert r["tokenizer_identity"] == s["tokenizer_identity"]
        assert r["tokenizer"] == "jieba"
    else:
        assert isinstance(r["tokenizer_identity"], str) and r["tokenizer_identity"].startswith("rjieba-")
        assert r["tokenizer"] == "rjieba"


def test_rjieba_identity_is_pinned_to_verified_versions(monkeypatch):
    pytest.importorskip("rjieba")
    monkeypatch.setattr(T, "_RJIEBA_VERIFIED", set())
    assert T.rjieba_identity().startswith("rjieba-")
    assert not T.rjieba_matches_jieba()


def test_auto_picks_verified_rjieba_else_jieba():
    tok = get_tokenizer("auto", hmm=False)
    assert tok is get_tokenizer(T.auto_tokenizer(), hmm=False)
    try:
        import rjieba  # noqa: F401
    except ImportError:
        assert tok.name == "jieba"
    else:
        assert tok.name == ("rjieba" if T.rjieba_matches_jieba() else "jieba")
    ex = FeatureExtractor()
    assert ex.tokenizer == "auto" and ex.backend == tok.name
    assert FeatureExtractor(features="chars").backend is None
    assert ex.settings() == FeatureExtractor(tokenizer="jieba").settings()
    assert ex.tokens(ZH) == FeatureExtractor(tokenizer="jieba").tokens(ZH)


def test_auto_falls_back_to_jieba_without_rjieba(monkeypatch):
    monkeypatch.setitem(sys.modules, "rjieba", None)  # import rjieba -> ImportError
    monkeypatch.setattr(T, "_AUTO_BACKEND", None)  # decide again, in this "process without rjieba"
    assert T.auto_tokenizer() == "jieba"
    for hmm in (False, True):
        ex = FeatureExtractor(hmm=hmm)
        assert ex.backend == "jieba"
        assert ex.settings() == FeatureExtractor(tokenizer="jieba", hmm=hmm).settings()
        assert ex.settings()["tokenizer"] == "jieba"
        assert ex.tokens(ZH) == get_tokenizer("jieba", hmm).tokenize(normalize(ZH))


def test_auto_ignores_an_unverified_rjieba(monkeypatch):
    pytest.importorskip("rjieba")
    monkeypatch.setattr(T, "_RJIEBA_VERIFIED", set())
    monkeypatch.setattr(T, "_AUTO_BACKEND", None)
    assert T.auto_tokenizer() == "jieba"
    ex = FeatureExtractor()
    assert ex.backend == "jieba"
    assert ex.settings()["tokenizer_identity"] == T.jieba_identity()
    assert ex.settings()["tokenizer"] == "jieba"


def test_backend_is_decided_once_per_extractor(monkeypatch):
    ex = FeatureExtractor()
    first = ex.backend
    monkeypatch.setattr(T, "_AUTO_BACKEND", "jieba" if first == "rjieba" else "rjieba")
    assert ex.backend == first  # kept by the instance
