"""Text -> weighted features: normalisation, tokens (jieba for Han runs), stop words, feature modes, weights.

Pure: no Scrapy import. The pipeline, in order:

1. ``normalize``: Unicode NFKC (full-width letters, digits and punctuation become half-width) and
   lower case.
2. ``Tokenizer.tokenize``: Han runs (U+4E00..U+9FD5, jieba's own Han range) are segmented by jieba
   in precise mode (run by rjieba when it is installed in a version verified to give jieba's
   tokens, see ``auto_tokenizer``). Every other token is a maximal run of letters and digits
   (word characters but ``_`` and Han), and what it starts with decides what it is:

   - a **letter**: a word, its digits included, so that ``u64``, ``i128``, ``f32``, ``sha256``,
     ``utf8``, ``ipv6``, ``h264`` and ``python3`` are words of their own (``u16`` and ``u64``
     are different words). An apostrophe between two letters joins (``it's``).
   - a **digit**: a number, the placeholder ``NUMBER_TOKEN``, with the letters and digits joined
     to it and digits after ``. , : / -``: ``2026-11-23``, ``12:30``, ``1,000``, ``3rd``,
     ``12px``, ``1.2k``, ``0x1f`` are one ``NUMBER_TOKEN`` each, so that dates, counters,
     ordinals and sizes do not move bits.

   Consequences, by rule: ``x86_64`` is ``x86`` and a number (``_`` separates, as in
   ``snake_case``); ``v1.2.3`` is ``v1`` and a number (``.`` ends a word, and what follows is a
   number: a new minor version moves no bit, a new major one does); ``python3.11`` is
   ``python3`` and a number. A Han character always ends a word or number (``使用python3语言``
   is 使用, ``python3``, 语言), and letters of two other scripts side by side are one word.
   Digits are Unicode decimal digits (category Nd) after NFKC, which has made full-width, circled
   and superscript digits ASCII; other scripts' digits (Arabic-Indic, Devanagari) follow the
   same rules. Punctuation, symbols, ``_`` and control characters produce no token.
3. ``FeatureExtractor.extract``: stop words removed, then one of the feature modes
   (``"words"``, ``"shingles"``, ``"chars"``, ``"sentences"``) and one of the weightings
   (``"tf"``, ``"log_tf"``, ``"tfidf"``, ``"seed000"``).

Everything here is deterministic: no Python ``hash()``, and dictionaries are only iterated in
insertion order (which depends on the text alone).
"""

from __future__ import annotations

import math
import re
import statistics
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from itertools import filterfalse
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_simhash import _native
from scrapy_simhash.text.tokenizers import (
    DEFAULT_TOKENIZER,
    HAN_LINE_BREAK_RE,
    NUMBER_TOKEN,
    TOKEN_RE,
    TOKENIZERS,
    Tokenizer,
    file_digest,
    get_tokenizer,
    jieba_dict_path,
    jieba_identity,
    rjieba_matches_jieba,
)

if TYPE_CHECKING:
    from collections.abc import Callable

FEATURE_MODES = ("words", "shingles", "chars", "sentences")
WEIGHTINGS = ("tf", "log_tf", "tfidf", "seed000")
MAX_SHINGLE_SIZE = 16

_DATA = Path(__file__).resolve().parents[1] / "data"

# Seed 003: sentence boundaries. After NFKC the full-width ？！ are ASCII; 。 (U+3002) stays.
_SENTENCE_RE = re.compile(r"[。？！!?\n]+")

# Seed 000 weighting: pos = 3 for nouns, 2 for verbs, 1 otherwise (jieba/ICTCLAS tag prefixes).
_POS_WEIGHT = {"n": 3.0, "v": 2.0}
_SIGNAL_BONUS = 5.0
_TITLE_BONUS = 5.0


# Characters whose compatibility decomposition (NFKD) is ASCII: full-width forms, U+3000, NBSP,
# "…"... NFKC composes the concatenation of the characters' decompositions, so replacing them by
# their decompositions first changes nothing in the result; it only spares unicodedata its slow
# path (decomposing and recomposing the whole text) on Chinese text, whose only characters that
# are not in NFKC are usually full-width punctuation.
_NFKD_ASCII = {
    c: d
    for c, d in ((c, unicodedata.normalize("NFKD", chr(c))) for c in range(0x80, 0x10000))
    if d != chr(c) and d.isascii()
}
_NFKD_ASCII_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_NFKD_ASCII)) + "]+")


def _nfkd_ascii(match: re.Match[str]) -> str:
    return match.group().translate(_NFKD_ASCII)


def normalize(text: str) -> str:
    """NFKC-normalise ``text`` (full-width -> half-width) and lower-case it."""
    if text.isascii():
        return text.lower()  # NFKC leaves ASCII as it is
    if not unicodedata.is_normalized("NFKC", text):
        text = _NFKD_ASCII_RE.sub(_nfkd_ascii, text)
    return unicodedata.normalize("NFKC", text).lower()


def _read_word_list(name: str) -> frozenset[str]:
    words = set()
    for line in (_DATA / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            words.add(normalize(line))
    return frozenset(words)


_STOP_FILES = ("stopwords_zh.txt", "stopwords_en.txt")
_SIGNAL_FILE = "signal_words_zh.txt"
STOP_WORDS: frozenset[str] = _read_word_list(_STOP_FILES[0]) | _read_word_list(_STOP_FILES[1])
SIGNAL_WORDS: frozenset[str] = _read_word_list(_SIGNAL_FILE)
_STOP_AND_NUMBER = STOP_WORDS | {NUMBER_TOKEN}
#: Checksum of the stop-word and signal-word lists (part of the fingerprint settings).
WORD_LISTS_DIGEST = file_digest(*(_DATA / n for n in (*_STOP_FILES, _SIGNAL_FILE)))


# ---------------------------------------------------------------------------------------------
# Lexical tables (jieba's IDF and POS tags), loaded lazily


class _Lazy:
    def __init__(self, loader: Callable[[], Any]) -> None:
        self._loader = loader
        self._value: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._loader()
        return self._value


def _idf_path() -> Path:
    import jieba

    return Path(jieba.__file__).resolve().parent / "analyse" / "idf.txt"


def _load_idf() -> tuple[dict[str, float], float, str]:
    path = _idf_path()
    table: dict[str, float] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            word, _, value = line.rstrip("\n").rpartition(" ")
            if word:
                table[word] = float(value)
    # Unknown words get the median IDF, as jieba.analyse.TFIDF does.
    median = statistics.median(table.values())
    return table, median, file_digest(path)


def _load_pos() -> dict[str, str]:
    tags: dict[str, str] = {}
    with open(jieba_dict_path(), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                tags[parts[0]] = parts[2]
    return tags


_IDF = _Lazy(_load_idf)
_POS = _Lazy(_load_pos)


def idf_identity() -> str:
    """``jieba-idf-<sha256 prefix of jieba/analyse/idf.txt>``."""
    return f"jieba-idf-{_IDF.get()[2]}"


# ---------------------------------------------------------------------------------------------
# Features


class Features(NamedTuple):
    """Weighted features of one text and its full token sequence (for the short-text fallback)."""

    weights: dict[str, float]
    tokens: list[str]


@dataclass(frozen=True)
class FeatureExtractor:
    """Text (+ title) -> ``Features``: the title's tokens and the text's, weighted.

    Its options are ``Fingerprinter``'s ``features``, ``weighting``, ``tokenizer``, ``hmm`` and
    ``shingle_size``, described in ``docs/topics/how-it-works.rst`` (Features); the segmenter is
    chosen at first use and kept.
    """

    features: str = "words"
    weighting: str = "log_tf"
    shingle_size: int = 3
    tokenizer: str = DEFAULT_TOKENIZER
    hmm: bool = False
    #: The native core (``_native``): None = when it imports, False = never, True = required.
    #: It changes no output, so it is no setting.
    native: bool | None = field(default=None, compare=False)
    _tok: Tokenizer | None = field(default=None, init=False, repr=False, compare=False)
    _core: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_choice("features", self.features, FEATURE_MODES)
        _check_choice("weighting", self.weighting, WEIGHTINGS)
        _check_choice("tokenizer", self.tokenizer, TOKENIZERS)
        if not isinstance(self.hmm, bool):
            raise TypeError(f"hmm must be True or False, got {self.hmm!r}")
        if self.native is not None and not isinstance(self.native, bool):
            raise TypeError(f"native must be None, True or False, got {self.native!r}")
        if self.native:
            _native.require()
        if (
            not isinstance(self.shingle_size, int)
            or isinstance(self.shingle_size, bool)
            or not 1 <= self.shingle_size <= MAX_SHINGLE_SIZE
        ):
            raise ValueError(
                f"shingle_size ({self.shingle_size!r}) is invalid: it must be an int between 1 and {MAX_SHINGLE_SIZE}"
            )
        if self.weighting == "seed000" and self.features != "words":
            raise ValueError(
                f"weighting='seed000' needs features='words' (got features={self.features!r}): "
                "its part-of-speech, length and title factors are defined on words"
            )

    @property
    def uses_segmenter(self) -> bool:
        return self.features != "chars"

    def _tokenizer(self) -> Tokenizer:
        tok = self._tok
        if tok is None:
            tok = get_tokenizer(self.tokenizer, self.hmm)
            object.__setattr__(self, "_tok", tok)  # frozen dataclass: a cache, not a field
        return tok

    def native_core(self) -> Any:
        """The native core when it makes this extractor's tokens (``features`` other than "chars"
        and "sentences", jieba's segmentation), else ``None``. Decided at the first call."""
        core = self._core
        if core is None:
            usable = (
                self.native is not False
                and self.features in ("words", "shingles")
                and (self.tokenizer != "rjieba" or rjieba_matches_jieba())
            )
            core = (usable and _native.core(str(jieba_dict_path()), _STOP_AND_NUMBER, _LOG_TF)) or False
            object.__setattr__(self, "_core", core)
        return core or None

    @property
    def backend(self) -> str | None:
        """The segmenter in use, ``"jieba"`` or ``"rjieba"`` (``"auto"`` resolved); ``None`` for
        ``features="chars"``, which segments nothing."""
        return self._tokenizer().name if self.uses_segmenter else None

    def settings(self) -> dict[str, object]:
        """Every option here that changes features, with the identities of the tables used."""
        out: dict[str, object] = {
            "features": self.features,
            "weighting": self.weighting,
            "shingle_size": self.shingle_size if self.features in ("shingles", "chars") else None,
            "normalization": "nfkc-lower-num",
            "word_lists": WORD_LISTS_DIGEST,
        }
        if self.uses_segmenter:
            # The segmentation, not the library that ran it: a verified rjieba reports "jieba"
            # (so does "auto", which only picks a verified one: its identity is jieba's whichever
            # runs, known without importing rjieba, which builds a dictionary of 35 MB that the
            # native core does not need), so that an index built with any of them accepts the others.
            identity = jieba_identity() if self.tokenizer == "auto" else self._tokenizer().identity
            out["tokenizer"] = "jieba" if identity == jieba_identity() else self.tokenizer
            out["hmm"] = self.hmm
            out["tokenizer_identity"] = identity
        else:
            out["tokenizer"] = None
            out["hmm"] = None
            out["tokenizer_identity"] = None
        if self.weighting in ("tfidf", "seed000"):
            out["idf"] = idf_identity()
        if self.weighting == "seed000":
            out["pos"] = jieba_identity()
        return out

    # -- tokens

    def tokens(self, text: str) -> list[str]:
        """All tokens of ``text`` (normalised here), stop words included. A line break between two
        Han characters is no word boundary: a page that wraps its Chinese text with <br> every few
        dozen characters segments like the same text in paragraphs."""
        norm = normalize(text)
        core = self.native_core()
        if core is not None:
            try:
                return core.tokens(norm, self.hmm)  # type: ignore[no-any-return]
            except UnicodeEncodeError:  # lone surrogates: not UTF-8, Python's path takes them
                pass
        if "\n" in norm and not norm.isascii():
            norm = HAN_LINE_BREAK_RE.sub("", norm)
        if self.features == "chars":
            return _char_units(norm)
        return self._tokenizer().tokenize(norm)

    def extract(self, text: str, title: str = "") -> Features:
        """Weighted features of ``title`` + ``text``."""
        full = f"{title}\n{text}" if title else text
        if self.features == "sentences":
            return self._sentences(full)
        tokens = self.tokens(full)
        return Features(self.weigh(tokens, title), tokens)

    def weigh(self, tokens: list[str], title: str = "") -> dict[str, float]:
        """``{feature: weight}`` from ``tokens`` (of ``self.tokens``); not for "sentences".

        Empty when nothing but numbers and stop words is left, in every mode (so that a text of
        numbers only has no fingerprint rather than one shared by all such texts).
        """
        if self.features == "chars":
            if all(t == NUMBER_TOKEN for t in tokens):
                return {}
            return self._weigh_generic(_ngrams(tokens, self.shingle_size), _table_idf)
        if self.features == "words":
            skip = _STOP_AND_NUMBER
            words = list(filterfalse(skip.__contains__, tokens))
            if self.weighting == "seed000":
                title_words = set(self.tokens(title)) if title else set()
                return _seed000(words, title_words)
            return self._weigh_generic(words, _table_idf)
        if self.features == "sentences":
            raise ValueError("weigh() does not apply to features='sentences'; use extract()")
        # shingles
        stop = STOP_WORDS
        content = [t for t in tokens if t not in stop]
        if all(t == NUMBER_TOKEN for t in content):
            return {}
        if len(content) < self.shingle_size:
            grams = [" ".join(content)] if content else []
        else:
            grams = _ngrams(content, self.shingle_size, sep=" ")
        return self._weigh_generic(grams, _shingle_idf)

    def _sentences(self, full: str) -> Features:
        norm = normalize(full)
        tok = self._tokenizer()
        sentences: list[str] = []
        all_tokens: list[str] = []
        for part in _SENTENCE_RE.split(norm):
            toks = tok.tokenize(part)
            all_tokens.extend(toks)
            content = [t for t in toks if t not in STOP_WORDS]
            if any(t != NUMBER_TOKEN for t in content):
                sentences.append(" ".join(content))
        return Features(self._weigh_generic(sentences, None), all_tokens)

    def _weigh_generic(
        self,
        feats: list[str],
        idf: Callable[[str, dict[str, float], float], float] | None,
    ) -> dict[str, float]:
        counts: dict[str, float] = dict(Counter(feats))  # C-speed counting
        w = self.weighting
        if w == "tf":
            return counts
        if w == "log_tf":
            if counts and max(counts.values()) < len(_LOG_TF):
                return dict(zip(counts, map(_LOG_TF.__getitem__, counts.values())))  # type: ignore[arg-type]
            return {f: 1.0 + math.log(c) for f, c in counts.items()}
        # tfidf
        if idf is None:
            return counts
        table, median, _ = _IDF.get()
        return {f: c * idf(f, table, median) for f, c in counts.items()}


#: ``1.0 + math.log(c)`` for small counts c (the same floats, looked up).
_LOG_TF = [0.0] + [1.0 + math.log(c) for c in range(1, 256)]


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}={value!r} is invalid: it must be one of {', '.join(map(repr, choices))}")


def _ngrams(units: list[str], n: int, sep: str = "") -> list[str]:
    if len(units) <= n:
        return [sep.join(units)] if units else []
    return [sep.join(units[i : i + n]) for i in range(len(units) - n + 1)]


def _char_units(norm: str) -> list[str]:
    units: list[str] = []
    for m in TOKEN_RE.finditer(norm):
        kind = m.lastgroup
        if kind == "han":
            units.extend(m.group())
        elif kind == "num":
            units.append(NUMBER_TOKEN)
        else:
            units.append(m.group())
    return units


def _table_idf(feature: str, table: dict[str, float], median: float) -> float:
    """IDF of a word or a character n-gram: its own entry, else the median."""
    return table.get(feature, median)


def _shingle_idf(shingle: str, table: dict[str, float], median: float) -> float:
    words = shingle.split(" ")
    return sum(table.get(w, median) for w in words) / len(words)


def _seed000(words: list[str], title_words: set[str]) -> dict[str, float]:
    counts: dict[str, float] = {}
    for w in words:
        counts[w] = counts.get(w, 0.0) + 1.0
    if not counts:
        return counts
    table, median, _ = _IDF.get()
    tags: dict[str, str] = _POS.get()
    lengths = [len(w) for w in counts]
    lo, hi = min(lengths), max(lengths)
    span = hi - lo
    out: dict[str, float] = {}
    for w, c in counts.items():
        tag = tags.get(w, "x")
        pos = _POS_WEIGHT.get(tag[:1], 1.0)
        len_norm = (len(w) - lo) / span if span else 0.0
        signal = _SIGNAL_BONUS if any(s in w for s in SIGNAL_WORDS) else 0.0
        in_title = _TITLE_BONUS if w in title_words else 0.0
        out[w] = c * table.get(w, median) * (1.0 + pos + len_norm + signal + in_title)
    return out
