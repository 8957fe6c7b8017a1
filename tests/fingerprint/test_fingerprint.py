"""Tests for scrapy_simhash.fingerprint.simhash: pinned fingerprints, stability, distances, bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from scrapy_simhash.fingerprint.simhash import (
    EmptyTextError,
    Fingerprinter,
    hamming,
    hamming_similarity,
    simhash_from_weights,
    weighted_simhash,
)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"

ZH = (
    "北京市政府今天发布了新的城市交通规划，计划在未来五年内新建三条地铁线路。"
    "规划指出，公共交通的分担率将提高到百分之六十，同时鼓励市民骑自行车出行。"
    "专家认为，这项规划有助于缓解交通拥堵，但是资金来源仍然是一个难题。"
    "总之，城市交通的发展需要政府、企业和市民共同努力。"
)
EN = (
    "The city council approved a new transport plan on Monday. It adds three metro lines over the "
    "next five years and raises the share of public transport to sixty percent. Experts say the plan "
    "will ease congestion, but funding remains an open question. Cyclists welcomed the new bike lanes."
)
TITLE = "北京发布城市交通规划"

# Pinned fingerprints: any change here changes every stored index; bump FINGERPRINT_VERSION.
PINNED: dict[tuple[str, str, str, int], int] = {
    ("zh", "words", "tf", 64): 0xC6CCCDD64D438004,
    ("zh", "words", "tf", 128): 0xEC9F535658AB4A0F160E3B10313A2190,
    ("zh", "words", "log_tf", 64): 0xE7CCCDD7CD4B9005,
    ("zh", "words", "log_tf", 128): 0xEDDF535458AB4B0F960E3B14713B2398,
    ("zh", "words", "tfidf", 64): 0xE788CDD6CD43A005,
    ("zh", "words", "tfidf", 128): 0xEC9F53165AAB4A0F922E3B00317A2190,
    ("zh", "words", "seed000", 64): 0xE688CFD6C943A21D,
    ("zh", "words", "seed000", 128): 0xFC9E5B16DAEB4E0F90AE7301B15A29B4,
    ("zh", "shingles", "log_tf", 64): 0x12E7780685F48B84,
    ("zh", "shingles", "log_tf", 128): 0x6A401645D47030854CDE29E941783436,
    ("zh", "chars", "log_tf", 64): 0x71E3DA5F5F766EA4,
    ("zh", "chars", "log_tf", 128): 0xD625CE4BFFAA913130BD22946865A63A,
    ("zh", "sentences", "tf", 64): 0xEA2D9B0A717A473C,
    ("zh", "sentences", "tf", 128): 0xB78D9B6966E0035AF7553FC3CEF6403B,
    ("en", "words", "tf", 64): 0x5F561C29EF011C56,
    ("en", "words", "tf", 128): 0x3C0FA90D024D1DA15442D5036CE982A,
    ("en", "words", "log_tf", 64): 0x5F561C2DEF411C56,
    ("en", "words", "log_tf", 128): 0x3D4FAB3D0A4D1DA35443D5036DF982F,
    ("en", "words", "tfidf", 64): 0x5F561C29EF011C56,
    ("en", "words", "tfidf", 128): 0x3C0FA90D024D1DA15442D5036CE982A,
    ("en", "words", "seed000", 64): 0x7F565C2DEF031C56,
    ("en", "words", "seed000", 128): 0x3C4FAB7D024D1DB55542D5036DF9A2A,
    ("en", "shingles", "log_tf", 64): 0x3690C1AA5858C405,
    ("en", "shingles", "log_tf", 128): 0xCE0506A957320577034A3159479B3045,
    ("en", "chars", "log_tf", 64): 0xD8E4F3055BB74CD7,
    ("en", "chars", "log_tf", 128): 0xC15C1DF9499A0F0C57435D425DC6ADFE,
    ("en", "sentences", "tf", 64): 0x1132E77EEDD40A64,
    ("en", "sentences", "tf", 128): 0x7B91088228DFCF234DEEB4A7B1C0CF57,
}
PINNED_DEFAULT_ZH = 0xE7CCCDD7CD4B9005
PINNED_HMM_ZH = 0xE7CCCDD7CD4B9005
PINNED_XXH3_ZH = 0xBC86DA0166EC9F0D
PINNED_XXH3_EN_128 = 0x78BFF21FA077A7C84A57381F3BB433A7


def _fp(lang: str, features: str, weighting: str, bits: int, tokenizer: str = "auto") -> int:
    fp = Fingerprinter(bits=bits, features=features, weighting=weighting, min_features=0, tokenizer=tokenizer)
    text = ZH if lang == "zh" else EN
    return fp.fingerprint_text(text, TITLE if lang == "zh" else "")


CASES = [
    ("words", "tf"),
    ("words", "log_tf"),
    ("words", "tfidf"),
    ("words", "seed000"),
    ("shingles", "log_tf"),
    ("chars", "log_tf"),
    ("sentences", "tf"),
]


@pytest.mark.parametrize("tokenizer", ["auto", "jieba"])
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize(("features", "weighting"), CASES)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_pinned_fingerprints(lang, features, weighting, bits, tokenizer):
    got = _fp(lang, features, weighting, bits, tokenizer)
    assert 0 < got < (1 << bits)
    assert got == PINNED[(lang, features, weighting, bits)], hex(got)


def test_pinned_defaults_hmm_and_xxh3():
    assert Fingerprinter().fingerprint_text(ZH, TITLE) == PINNED_DEFAULT_ZH
    assert Fingerprinter(tokenizer="jieba").fingerprint_text(ZH, TITLE) == PINNED_DEFAULT_ZH
    assert Fingerprinter(hmm=True).fingerprint_text(ZH, TITLE) == PINNED_HMM_ZH
    assert Fingerprinter(hmm=True, tokenizer="jieba").fingerprint_text(ZH, TITLE) == PINNED_HMM_ZH
    pytest.importorskip("xxhash")
    xxh3 = Fingerprinter(feature_hash="xxh3")
    assert xxh3.fingerprint_text(ZH, TITLE) == PINNED_XXH3_ZH
    assert Fingerprinter(bits=128, feature_hash="xxh3").fingerprint_text(EN) == PINNED_XXH3_EN_128


# Fingerprint version 3: identifiers keep their digits (u64, i128, sha256, python3), numbers take
# the letters joined to them (3rd, 12px, 1.2k), a Han character ends a word (u64类型).
IDENTIFIERS = (
    "The u64 type is a 64-bit unsigned integer; u64::MAX is 18446744073709551615. Convert an i128 "
    "with try_from, hash it with sha256, encode it as utf8 over ipv6, and decode h264 video in python3. "
    "Released 2026-11-23, the 3rd release, with 12px icons and 1.2k downloads on x86_64 since v1.2.3; "
    "在Rust语言中使用u64类型。"
)
PINNED_IDENTIFIERS = {64: 0xFAE00A893D2FC39A, 128: 0x7DAEAEC5864E1427C0D5EA98945499E1}


@pytest.mark.parametrize("native", [None, False])
@pytest.mark.parametrize("bits", [64, 128])
def test_pinned_identifiers(bits, native):
    got = Fingerprinter(bits=bits, min_features=0, native=native).fingerprint_text(IDENTIFIERS)
    assert got == PINNED_IDENTIFIERS[bits], hex(got)


@pytest.mark.parametrize("stored", ["2", "3", "4", "5", "6"])
def test_index_of_an_earlier_fingerprint_version_is_refused_with_the_fix(tmp_path, stored):
    """An LMDB index made by fingerprint version 2 to 6 (before a page's own heading, declaration
    and description, then its member signatures, then its members' C function names, joined its text,
    then before a class naming a place inside the content column was content) is reported (version and fix named), never rebuilt or
    deleted; the current version opens it only after a reset."""
    import hashlib

    from scrapy_simhash import SettingsMismatchError, SimhashIndex

    current = Fingerprinter().settings
    assert current["version"] == "7"
    old = {**current, "version": stored}
    path = tmp_path / "pages"
    with SimhashIndex.open(path, fingerprint_settings=old) as idx:
        idx.add("http://a.example/", 0xF0F0F0F0)

    def checksums():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}

    before = checksums()
    with pytest.raises(SettingsMismatchError) as err:
        SimhashIndex.open(path, fingerprint_settings=current)
    msg = str(err.value)
    assert err.value.setting == "fingerprint_settings['version']"
    assert (err.value.stored, err.value.requested) == (stored, "7")
    assert f"fingerprint version '{stored}'" in msg and "fingerprint version '7'" in msg and str(path) in msg
    assert "SIMHASH_DIR" in msg and "reset" in msg
    assert checksums() == before
    with SimhashIndex.open(path, fingerprint_settings=old, readonly=True) as idx:
        assert idx.get("http://a.example/") == 0xF0F0F0F0  # still there, as it was
    with SimhashIndex.open(path, fingerprint_settings=current, reset=True) as idx:
        assert len(idx) == 0


_CHILD = """
import json, sys
from scrapy_simhash.fingerprint.simhash import Fingerprinter
zh, en = json.loads(sys.stdin.read())
out = [Fingerprinter(bits=b, **kw).fingerprint_text(t) for b in (64, 128) for t in (zh, en)
       for kw in ({}, {"weighting": "tfidf"}, {"features": "shingles"})]
print(json.dumps(out))
"""


@pytest.mark.e2e
def test_same_fingerprint_in_other_processes():
    expected = [
        Fingerprinter(bits=b, **kw).fingerprint_text(t)
        for b in (64, 128)
        for t in (ZH, EN)
        for kw in cast("list[dict[str, Any]]", [{}, {"weighting": "tfidf"}, {"features": "shingles"}])
    ]
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=json.dumps([ZH, EN]),
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        assert json.loads(proc.stdout) == expected
        # jieba initialises quietly (no "Building prefix dict ..." on stderr)
        assert "prefix dict" not in proc.stderr


@pytest.mark.parametrize("bits", [64, 128])
def test_one_word_edit_is_close_unrelated_is_far(bits):
    # ZH and EN have only 30-40 distinct words: one of them moves several bits (SimHash is weak on
    # short texts), still far fewer than unrelated texts (~bits/2). See the news article test for
    # a page-sized text.
    fp = Fingerprinter(bits=bits)
    a = fp.fingerprint_text(ZH)
    edited = fp.fingerprint_text(ZH.replace("自行车", "电动车"))
    assert 0 < hamming(a, edited) <= 12 * bits // 64
    e = fp.fingerprint_text(EN)
    assert 0 < hamming(e, fp.fingerprint_text(EN.replace("Monday", "Tuesday"))) <= 12 * bits // 64
    assert hamming(a, e) >= 20 * bits // 64
    other = "小猫在花园里追蝴蝶，妈妈在厨房里做饭。晚上我们一起看电影，然后早早睡觉。明天要去爬山，记得带水。"
    assert hamming(a, fp.fingerprint_text(other)) >= 20 * bits // 64


@pytest.mark.parametrize("bits", [64, 128])
def test_one_word_edit_on_a_news_article(bits):
    path = DATA / "zh-text" / "yanyiwu-news-pair" / "news_content.txt"
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    text = path.read_text(encoding="utf-8")
    fp = Fingerprinter(bits=bits)
    a = fp.fingerprint_text(text)
    words = sorted(set(re.findall(r"[\u4e00-\u9fd5]{2}", text)))[::7][:40]
    distances = [hamming(a, fp.fingerprint_text(text.replace(w, "电脑", 1))) for w in words]
    # a 2-character replacement changes 1-3 words of ~1,000: a few bits at most, ~1 on average
    assert max(distances) <= 6 * bits // 64
    assert 0 < sum(distances) / len(distances) <= 1.5 * bits / 64
    assert sum(d <= 3 * bits // 64 for d in distances) >= 0.9 * len(distances)
    unrelated = fp.fingerprint_text(ZH * 5)
    assert hamming(a, unrelated) > 12 * bits // 64


def test_numbers_and_width_do_not_move_bits():
    fp = Fingerprinter()
    a = fp.fingerprint_text("发布时间：2020-01-02 10:00，阅读 1234 次。" + ZH)
    b = fp.fingerprint_text("发布时间：２０２４-１２-３１ 23:59，阅读 98 次。" + ZH)
    assert a == b


def test_title_counts():
    fp = Fingerprinter()
    assert fp.fingerprint_text(ZH, TITLE) != fp.fingerprint_text(ZH)
    assert fp.fingerprint_text(ZH, TITLE) == fp.fingerprint_text(ZH, TITLE)


@pytest.mark.parametrize("bad", [None, b"bytes", bytearray(b"x"), 42])
def test_non_str_is_type_error_with_hint(bad):
    with pytest.raises(TypeError, match="expects str") as info:
        Fingerprinter().fingerprint_text(bad)
    if isinstance(bad, (bytes, bytearray)):
        assert "decode" in str(info.value)


def test_title_must_be_str():
    with pytest.raises(TypeError, match="title"):
        Fingerprinter().fingerprint_text(ZH, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t ", "，。！？…——《》“”", "!!! ... ???", "12 345 6.7", "\x00\x01\x02"],
)
def test_featureless_text_raises(text):
    for features in ("words", "shingles", "chars", "sentences"):
        with pytest.raises(EmptyTextError):
            Fingerprinter(features=features).fingerprint_text(text)
    assert issubclass(EmptyTextError, ValueError)


def test_binary_junk_str():
    junk = bytes(range(256)).decode("latin-1") * 50 + "\ud800\udfff"
    fp = Fingerprinter()
    a = fp.fingerprint_text(junk)
    assert 0 < a < 1 << 64
    assert fp.fingerprint_text(junk) == a


def test_huge_text_is_bounded():
    para = EN + " " + ZH + "\n"
    text = para * (20_000_000 // len(para) + 1)
    assert len(text) >= 20_000_000
    fp = Fingerprinter(max_chars=200_000)
    got = fp.fingerprint_text(text)
    # only the first max_chars characters count
    assert got == fp.fingerprint_text(text[:200_000])
    assert got == fp.fingerprint_text(text[:200_000] + "完全不同的结尾" * 1000)
    assert hamming(got, fp.fingerprint_text(para * 10)) <= 3


def test_short_text_fallback_is_exact():
    fp = Fingerprinter(min_features=8)
    a = fp.fingerprint_text("北京 烤鸭 好吃")
    assert a == fp.fingerprint_text("北京  烤鸭，好吃！")  # same normalised tokens
    b = fp.fingerprint_text("北京 烤鸭 难吃")
    assert a != b
    # exact hash: unrelated bits, unlike a SimHash of 3 features where one edit moves ~1/3 of them
    no_fallback = Fingerprinter(min_features=0)
    assert no_fallback.fingerprint_text("北京 烤鸭 好吃") != a


def test_simhash_zero_maps_to_one():
    # A zero fingerprint is possible in principle (all bit sums <= 0); Fingerprinter returns 1 then.
    assert weighted_simhash([b"\x00" * 8], [1.0], 64) == 0
    assert weighted_simhash([b"\xff" * 8, b"\x00" * 8], [1.0, 1.0], 64) == 0  # ties -> 0
    assert weighted_simhash([b"\xff" * 8, b"\x00" * 8], [2.0, 1.0], 64) == (1 << 64) - 1


def test_simhash_matches_bit_loop():
    rng = np.random.default_rng(7)
    digests = [rng.bytes(16) for _ in range(300)]
    weights = rng.uniform(0.5, 5.0, size=300).round(3).tolist()
    expected = 0
    for i in range(128):
        s = sum(w if (int.from_bytes(d, "little") >> i) & 1 else -w for d, w in zip(digests, weights))
        expected |= (s > 0) << i
    assert weighted_simhash(digests, weights, 128) == expected


def test_simhash_from_weights_order_independent():
    w = {f"w{i}": 1.0 + (i % 7) / 3 for i in range(500)}
    rev = dict(reversed(list(w.items())))
    assert simhash_from_weights(w) == simhash_from_weights(rev)
    with pytest.raises(EmptyTextError):
        simhash_from_weights({})


def test_hamming_and_similarity():
    assert hamming(0b1011, 0b0001) == 2
    assert hamming(1 << 127, 0) == 1
    assert hamming_similarity(0, 0) == 1.0
    assert hamming_similarity(0, (1 << 64) - 1) == 0.0
    assert hamming_similarity(0, 0b11, bits=128) == pytest.approx(1 - 2 / 128)
    with pytest.raises(ValueError, match="bits"):
        hamming_similarity(0, 0, bits=32)
    with pytest.raises(ValueError, match="non-negative"):
        hamming(-1, 0)
    with pytest.raises(TypeError):
        hamming("a", 0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"bits": 32}, ["bits", "32", "64 or 128"]),
        ({"bits": True}, ["bits", "True"]),
        ({"min_features": -1}, ["min_features", "-1", "between 0"]),
        ({"max_chars": "10"}, ["max_chars", "'10'", "int"]),
        ({"shingle_size": 99}, ["shingle_size", "99", "between 1 and 16"]),
        ({"features": "ngrams"}, ["features", "'ngrams'", "'words'"]),
        ({"weighting": "idf"}, ["weighting", "'idf'", "'tfidf'"]),
        ({"tokenizer": "pkuseg"}, ["tokenizer", "'pkuseg'", "'jieba'"]),
        ({"feature_hash": "md5"}, ["feature_hash", "'md5'", "'blake2b'"]),
    ],
)
def test_invalid_settings_name_argument_and_range(kwargs, words):
    with pytest.raises(ValueError, match=words[0]) as info:
        Fingerprinter(**kwargs)
    for w in words:
        assert w in str(info.value)


def test_main_content_must_be_bool():
    with pytest.raises(TypeError, match="main_content"):
        Fingerprinter(main_content=1)  # type: ignore[arg-type]


def test_settings_are_json_and_complete():
    s = Fingerprinter().settings
    assert json.loads(json.dumps(s)) == s
    for key in (
        "version",
        "bits",
        "features",
        "weighting",
        "tokenizer",
        "tokenizer_identity",
        "hmm",
        "feature_hash",
        "min_features",
        "max_chars",
        "main_content",
        "word_lists",
    ):
        assert key in s
    assert isinstance(s["tokenizer_identity"], str) and s["tokenizer_identity"].startswith("jieba-")
    variants: list[dict[str, Any]] = [
        {"bits": 128},
        {"features": "shingles"},
        {"weighting": "tfidf"},
        {"hmm": True},
        {"min_features": 0},
        {"feature_hash": "xxh3"},
        {"main_content": False},
        {"max_chars": 0},
    ]
    try:
        import xxhash  # noqa: F401
    except ImportError:  # an optional dependency
        variants.remove({"feature_hash": "xxh3"})
    for kw in variants:
        assert Fingerprinter(**kw).settings != s, kw
    assert "idf" in Fingerprinter(weighting="tfidf").settings


@pytest.mark.parametrize("tokenizer", ["auto", "jieba"])
def test_threads_give_same_fingerprints(tokenizer):
    # One Fingerprinter shared by worker threads (rjieba releases the GIL while it segments, so the
    # threads really overlap there).
    texts = [ZH.replace("三", str(i)) + "第" + "一二三四五六七八九十"[i % 10] + "章" for i in range(40)]
    texts += [(ZH * 20).replace("交通", "交" * (i % 5 + 1)) for i in range(10)]
    shared = Fingerprinter(tokenizer=tokenizer)
    expected = [Fingerprinter(tokenizer="jieba").fingerprint_text(t) for t in texts]
    results: dict[int, list[int]] = {}

    def work(k: int) -> None:
        own = Fingerprinter(tokenizer=tokenizer)
        results[k] = [shared.fingerprint_text(t) for t in texts] + [own.fingerprint_text(t) for t in texts]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert all(r == expected * 2 for r in results.values())


def test_fingerprint_html_uses_extract():
    from scrapy_simhash.text.extract import extract

    html = (
        "<html><head><meta charset='gbk'><title>城市交通规划</title></head><body>"
        f"<div><p>{ZH}</p><p>{ZH[:40]}</p></div></body></html>"
    ).encode("gbk")
    fp = Fingerprinter()
    doc = extract(html)
    assert fp.fingerprint_html(html) == fp.fingerprint_document(doc) == fp.fingerprint_text(doc.text, doc.title)
    assert hamming(fp.fingerprint_html(html), fp.fingerprint_text(ZH)) <= 8
    with pytest.raises(EmptyTextError):
        fp.fingerprint_html(b"<html><body><p> </p></body></html>")


def test_rjieba_tokenizer_settings():
    pytest.importorskip("rjieba")
    from scrapy_simhash.text import tokenizers

    j = Fingerprinter()
    r = Fingerprinter(tokenizer="rjieba")
    if tokenizers.rjieba_matches_jieba():
        assert r.settings == j.settings  # an index built with one accepts the other
        assert r.fingerprint_text(ZH) == j.fingerprint_text(ZH)
        assert r.fingerprint_text(EN + ZH, TITLE) == j.fingerprint_text(EN + ZH, TITLE)
    else:
        assert r.settings["tokenizer_identity"] != j.settings["tokenizer_identity"]


def _zh_texts() -> list[str]:
    folder = DATA / "zh-text"
    if not folder.is_dir():
        pytest.skip(f"shared data not found: {folder}")
    import gzip

    texts = [p.read_text(encoding="utf-8") for p in sorted((folder / "yanyiwu-news-pair").glob("*.txt"))]
    with gzip.open(folder / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz", "rt", encoding="utf-8") as f:
        texts += [line for _, line in zip(range(30), f)]
    lines = (folder / "ud-gsdsimp" / "zh_gsdsimp-dev.txt").read_text(encoding="utf-8").splitlines()
    texts += ["\n".join(lines[i : i + 40]) for i in range(0, min(len(lines), 400), 40)]
    return texts


def test_auto_is_the_default_and_is_jieba_on_real_texts():
    from scrapy_simhash.text import tokenizers

    texts = _zh_texts()
    assert len(texts) >= 40
    default = Fingerprinter()
    assert default.tokenizer == "auto"
    try:
        import rjieba  # noqa: F401
    except ImportError:
        assert default.tokenizer_backend == "jieba"
    else:
        # rjieba installed: "auto" uses it exactly when its version is the verified one
        assert default.tokenizer_backend == ("rjieba" if tokenizers.rjieba_matches_jieba() else "jieba")
    assert Fingerprinter(tokenizer="jieba").tokenizer_backend == "jieba"
    assert Fingerprinter(features="chars").tokenizer_backend is None
    for hmm in (False, True):
        auto, jieba = Fingerprinter(hmm=hmm), Fingerprinter(hmm=hmm, tokenizer="jieba")
        assert auto.settings == jieba.settings
        assert [auto.fingerprint_text(t) for t in texts] == [jieba.fingerprint_text(t) for t in texts]


def test_auto_picks_rjieba_here():
    """In this environment (rjieba 0.2.2 in the dev extras) the default really runs rjieba."""
    pytest.importorskip("rjieba")
    from scrapy_simhash.text import tokenizers

    if not tokenizers.rjieba_matches_jieba():
        pytest.skip("the installed rjieba is not a verified version: 'auto' runs jieba")
    assert Fingerprinter().tokenizer_backend == "rjieba"
    assert Fingerprinter(hmm=True).tokenizer_backend == "rjieba"


def test_auto_without_rjieba_falls_back_to_jieba(monkeypatch):
    from scrapy_simhash.text import tokenizers

    monkeypatch.setitem(sys.modules, "rjieba", None)  # import rjieba -> ImportError
    monkeypatch.setattr(tokenizers, "_AUTO_BACKEND", None)  # decide again
    fp = Fingerprinter()
    assert fp.tokenizer_backend == "jieba"
    assert fp.settings == Fingerprinter(tokenizer="jieba").settings
    assert fp.fingerprint_text(ZH, TITLE) == PINNED_DEFAULT_ZH
    assert Fingerprinter(hmm=True).fingerprint_text(ZH, TITLE) == PINNED_HMM_ZH


_NO_RJIEBA_CHILD = """
import json, sys
sys.modules["rjieba"] = None  # as if rjieba were not installed
from scrapy_simhash.fingerprint.simhash import Fingerprinter
zh, title = json.loads(sys.stdin.read())
fp = Fingerprinter()
print(json.dumps([fp.tokenizer_backend, fp.settings, fp.fingerprint_text(zh, title)]))
"""


@pytest.mark.e2e
def test_auto_without_rjieba_in_a_fresh_process():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _NO_RJIEBA_CHILD],
        input=json.dumps([ZH, TITLE]),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    backend, settings, fp = json.loads(proc.stdout)
    assert backend == "jieba"
    assert settings == Fingerprinter(tokenizer="jieba").settings == Fingerprinter().settings
    assert fp == PINNED_DEFAULT_ZH
    assert proc.stderr == ""  # silent fallback
