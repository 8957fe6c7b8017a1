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

import hashlib
import logging
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

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

FEATURE_MODES = ("words", "shingles", "chars", "sentences")
WEIGHTINGS = ("tf", "log_tf", "tfidf", "seed000")
TOKENIZERS = ("auto", "jieba", "rjieba")
#: "auto": rjieba when it gives jieba's tokens (a verified version is installed), else jieba.
DEFAULT_TOKENIZER = "auto"
NUMBER_TOKEN = "<num>"
MAX_SHINGLE_SIZE = 16

_DATA = Path(__file__).resolve().parents[1] / "data"

# jieba segments only U+4E00..U+9FD5 as Han (re_han_default); other ideographs are letters.
# The token rules (the module docstring says why): a Han run goes to the segmenter; a token that
# starts with a digit (letters and digits joined to it, and digits after . , : / -) is a number;
# one that starts with a letter is a word, digits included, and an apostrophe between letters joins
# words. No token but a Han run holds a Han character, and "_" joins nothing.
_HAN = "\u4e00-\u9fd5"
_ALNUM = rf"[^\W_{_HAN}]"  # a letter or digit that is not Han
_TOKEN_RE = re.compile(
    rf"(?P<han>[{_HAN}]+)"
    rf"|(?P<num>\d(?:{_ALNUM}|[.,:/\-]\d)*)"
    rf"|(?P<word>[^\W\d_]{_ALNUM}*(?:['\u2019][^\W\d_{_HAN}]{_ALNUM}*)*)"
)
# A line break between two Han characters (of jieba's range): removed before segmenting.
_HAN_LINE_BREAK_RE = re.compile(r"(?<=[\u4e00-\u9fd5])\s*\n\s*(?=[\u4e00-\u9fd5])")
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


class SizedCache(dict):  # type: ignore[type-arg]
    """A dict of pure results bounded in entries and in the characters of its keys and values
    (a proxy for bytes: about 1-4 bytes a character, plus ~100 bytes of overhead per entry):
    when either bound would be passed it is emptied, which costs nothing and keeps memory bounded
    whatever the input (30,000 long distinct tokens cannot grow it past ``max_chars``).

    ``put(key, value, size)``: ``size`` is the value's size in characters (0 for a bool)."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        super().__init__()
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.chars = 0

    def put(self, key: str, value: Any, size: int = 0) -> None:
        cost = len(key) + size
        if len(self) >= self.max_entries or self.chars + cost > self.max_chars:
            self.clear()
        self[key] = value
        self.chars += cost

    def clear(self) -> None:
        super().clear()
        self.chars = 0


def _read_word_list(name: str) -> frozenset[str]:
    words = set()
    for line in (_DATA / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            words.add(normalize(line))
    return frozenset(words)


def _file_digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


_STOP_FILES = ("stopwords_zh.txt", "stopwords_en.txt")
_SIGNAL_FILE = "signal_words_zh.txt"
STOP_WORDS: frozenset[str] = _read_word_list(_STOP_FILES[0]) | _read_word_list(_STOP_FILES[1])
SIGNAL_WORDS: frozenset[str] = _read_word_list(_SIGNAL_FILE)
_STOP_AND_NUMBER = STOP_WORDS | {NUMBER_TOKEN}
#: Checksum of the stop-word and signal-word lists (part of the fingerprint settings).
WORD_LISTS_DIGEST = _file_digest(*(_DATA / n for n in (*_STOP_FILES, _SIGNAL_FILE)))


# ---------------------------------------------------------------------------------------------
# Tokenizers


class Tokenizer:
    """Turns normalised text into tokens; Han runs go to a segmenter (jieba or rjieba).

    Build with ``get_tokenizer``; instances are shared and thread-safe: initialisation takes a
    lock, our jieba loop keeps no state but a cache of pure results, and rjieba's ``Jieba.cut``
    only reads its (private, never modified) dictionary, with the GIL released.
    """

    name: str
    hmm: bool

    def __init__(self, name: str, hmm: bool) -> None:
        self.name = name
        self.hmm = hmm
        self._cut: Callable[[str], Iterable[str]] | None = None
        self._identity: str | None = None
        self._lock = threading.Lock()

    def _init(self) -> Callable[[str], Iterable[str]]:
        with self._lock:
            if self._cut is None:
                self._cut, self._identity = _init_jieba(self.hmm) if self.name == "jieba" else _init_rjieba(self.hmm)
            return self._cut

    @property
    def identity(self) -> str:
        """A string that changes whenever the tokens could change (library, version, dictionary).
        Known without loading the dictionary (the index's settings need it where the native core
        segments: loading rjieba's or jieba's dictionary too cost a crawl 35-60 MB)."""
        if self._identity is None:
            if self.name == "jieba":
                self._identity = jieba_identity()
            else:
                _import_rjieba()
                self._identity = rjieba_identity()
        return self._identity

    def clear_cache(self) -> None:
        """Forget cached segmentations (they are a pure function of the text: for benchmarks)."""
        cutter = getattr(self._cut, "__self__", None)
        if isinstance(cutter, _JiebaCutter):
            cutter.hmm_cache.clear()

    def cut_han(self, run: str) -> Iterable[str]:
        """Segment one run of Han characters (precise mode)."""
        cut = self._cut or self._init()
        return cut(run)

    def tokenize(self, text: str) -> list[str]:
        """Tokens of already-normalised ``text``; numbers become ``NUMBER_TOKEN`` (module docstring)."""
        cut = self._cut or self._init()
        out: list[str] = []
        append = out.append
        extend = out.extend
        # Exactly one group of each match is non-empty (each needs a character).
        for han, num, word in _TOKEN_RE.findall(text):
            if han:
                extend(cut(han))
            elif num:
                append(NUMBER_TOKEN)
            else:
                append(word)
        return out


_JIEBA_DT: Any = None
_JIEBA_LOCK = threading.Lock()


def _jieba_tokenizer() -> Any:
    """A private, initialised ``jieba.Tokenizer`` on jieba's default dictionary.

    Private, so that ``jieba.add_word`` / ``jieba.set_dictionary`` calls elsewhere in the process
    cannot silently change our tokens. jieba logs "Building prefix dict..." to stderr at
    initialisation: its logger is raised to WARNING for that call only.
    """
    global _JIEBA_DT
    with _JIEBA_LOCK:
        if _JIEBA_DT is None:
            import jieba

            jlog = logging.getLogger("jieba")
            level = jlog.level
            jlog.setLevel(logging.WARNING)
            try:
                dt = jieba.Tokenizer()
                dt.initialize()
            finally:
                jlog.setLevel(level)
            _JIEBA_DT = dt
        return _JIEBA_DT


def _jieba_dict_path() -> Path:
    import jieba

    return Path(jieba.__file__).resolve().parent / jieba.DEFAULT_DICT_NAME


_JIEBA_IDENTITY: str | None = None


def jieba_identity() -> str:
    """``jieba-<version>/dict-<sha256 prefix of dict.txt>``."""
    global _JIEBA_IDENTITY
    if _JIEBA_IDENTITY is None:
        import jieba

        _JIEBA_IDENTITY = f"jieba-{jieba.__version__}/dict-{_file_digest(_jieba_dict_path())}"
    return _JIEBA_IDENTITY


def _init_jieba(hmm: bool) -> tuple[Callable[[str], Iterable[str]], str]:
    dt = _jieba_tokenizer()
    return _JiebaCutter(dt, hmm).cut, jieba_identity()


_HMM_CACHE_SIZE = 1 << 16
_HMM_CACHE_CHARS = 4 << 20  # characters of keys and values (a few MB)


class _JiebaCutter:
    """jieba's precise mode on one run of Han characters: the same tokens, 2.5-3x faster.

    ``jieba.Tokenizer.cut`` on a pure Han run calls ``__cut_DAG`` (HMM) or ``__cut_DAG_NO_HMM``:
    build the DAG of dictionary words (``get_DAG``), pick the most probable path right to left
    (``calc``: ``max((log(freq or 1) - log(total) + route[x + 1][0], x))``, ties to the larger
    x), then with HMM hand each run of single characters that is not itself a dictionary word to
    ``jieba.finalseg.cut``. This class does the same arithmetic in the same order (so the same
    floats and the same ties) in one loop without building the DAG dict, route tuples and
    generators. ``tests/test_features.py`` and ``benchmarks/bench_rjieba.py`` check it against
    ``jieba.lcut`` token for token.
    """

    def __init__(self, dt: Any, hmm: bool) -> None:
        from jieba import finalseg

        self.freq: dict[str, int] = dt.FREQ
        self.logtotal = math.log(dt.total)
        self.hmm = hmm
        self.finalseg_cut = finalseg.cut
        # finalseg.cut (HMM Viterbi in pure Python) is a pure function of its input and costs
        # about as much as the whole DAG search; its inputs (runs of unknown single characters)
        # repeat a lot across pages, so its results are cached.
        self.hmm_cache = SizedCache(_HMM_CACHE_SIZE, _HMM_CACHE_CHARS)

    def _route(self, sentence: str) -> list[int]:
        """End index (exclusive) of the word starting at each position of the best path."""
        freq_get = self.freq.get
        log = math.log
        logtotal = self.logtotal
        n = len(sentence)
        score = [0.0] * (n + 1)
        end = [0] * (n + 1)
        for k in range(n - 1, -1, -1):
            best = 0.0
            best_x = -1
            i = k
            frag = sentence[k]
            while True:
                f = freq_get(frag)
                if f is None:
                    break
                if f:
                    s = log(f) - logtotal + score[i + 1]
                    if best_x < 0 or s >= best:
                        best = s
                        best_x = i
                i += 1
                if i >= n:
                    break
                frag = sentence[k : i + 1]
            if best_x < 0:
                # no dictionary word starts here: the single character, freq 0/None -> 1
                f = freq_get(sentence[k]) or 1
                best = log(f) - logtotal + score[k + 1]
                best_x = k
            score[k] = best
            end[k] = best_x + 1
        return end

    def cut(self, sentence: str) -> list[str]:
        end = self._route(sentence)
        n = len(sentence)
        out: list[str] = []
        x = 0
        if not self.hmm:
            while x < n:
                y = end[x]
                out.append(sentence[x:y])
                x = y
            return out
        freq_get = self.freq.get
        buf_start = -1
        while x < n:
            y = end[x]
            if y - x == 1:
                if buf_start < 0:
                    buf_start = x
            else:
                if buf_start >= 0:
                    self._flush(sentence[buf_start:x], out, freq_get)
                    buf_start = -1
                out.append(sentence[x:y])
            x = y
        if buf_start >= 0:
            self._flush(sentence[buf_start:], out, freq_get)
        return out

    def _flush(self, buf: str, out: list[str], freq_get: Callable[[str], int | None]) -> None:
        if len(buf) == 1:
            out.append(buf)
        elif not freq_get(buf):
            words = self.hmm_cache.get(buf)
            if words is None:
                words = tuple(self.finalseg_cut(buf))
                self.hmm_cache.put(buf, words, len(buf))
            out.extend(words)
        else:
            out.extend(buf)


# (rjieba version, jieba identity) pairs for which benchmarks/bench_rjieba.py found rjieba's tokens
# identical to ours on every Han run of the whole corpus (5,705 documents, 23 M characters), HMM on
# and off. For these, tokenizer="rjieba" records jieba's identity, so its fingerprints are
# interchangeable with tokenizer="jieba". Any other version keeps its own identity.
_RJIEBA_VERIFIED = {("0.2.2", "jieba-0.42.1/dict-7197c3211ddd9896")}


def _import_rjieba() -> Any:
    try:
        import rjieba
    except ImportError as exc:
        raise ImportError("tokenizer='rjieba' needs the rjieba package: pip install scrapy-simhash[rjieba]") from exc
    return rjieba


def _init_rjieba(hmm: bool) -> tuple[Callable[[str], Iterable[str]], str]:
    rjieba = _import_rjieba()
    # A private instance: rjieba.add_word() elsewhere in the process must not change our tokens.
    cut = rjieba.Jieba().cut

    def block(run: str, _cut: Any = cut, _hmm: bool = hmm) -> list[str]:
        return _cut(run, _hmm)

    return block, rjieba_identity()


def rjieba_identity() -> str:
    """jieba's identity when this rjieba version was verified to give jieba's tokens, else
    ``rjieba-<version>``."""
    from importlib.metadata import version

    rjieba_version = version("rjieba")
    if (rjieba_version, jieba_identity()) in _RJIEBA_VERIFIED:
        return jieba_identity()
    return f"rjieba-{rjieba_version}"


def rjieba_matches_jieba() -> bool:
    """True when tokenizer="rjieba" shares jieba's identity (identical fingerprints)."""
    from importlib.metadata import PackageNotFoundError

    try:
        return rjieba_identity() == jieba_identity()
    except PackageNotFoundError:
        return False


_AUTO_BACKEND: str | None = None
_AUTO_LOCK = threading.Lock()


def auto_tokenizer() -> str:
    """The segmenter that ``tokenizer="auto"`` runs in this process: ``"rjieba"`` when rjieba
    imports and its version was verified to give jieba's tokens (``rjieba_matches_jieba``: same
    tokens, same identity, same fingerprints), else ``"jieba"``. Decided once per process."""
    global _AUTO_BACKEND
    backend = _AUTO_BACKEND
    if backend is None:
        with _AUTO_LOCK:
            backend = _AUTO_BACKEND
            if backend is None:
                backend = _AUTO_BACKEND = "rjieba" if _rjieba_usable() else "jieba"
    return backend


def _rjieba_usable() -> bool:
    try:
        import rjieba  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed (ImportError) or a broken binary wheel
        return False
    return rjieba_matches_jieba()


_TOKENIZERS: dict[tuple[str, bool], Tokenizer] = {}


def get_tokenizer(name: str = DEFAULT_TOKENIZER, hmm: bool = False) -> Tokenizer:
    """The shared ``Tokenizer`` for ``name`` ("auto", "jieba" or "rjieba") and the HMM flag.

    ``"auto"`` gives the ``Tokenizer`` of ``auto_tokenizer()`` (its ``name`` says which).
    """
    if name not in TOKENIZERS:
        raise ValueError(f"tokenizer={name!r} is invalid: it must be one of {', '.join(TOKENIZERS)}")
    if name == "auto":
        name = auto_tokenizer()
    key = (name, bool(hmm))
    tok = _TOKENIZERS.get(key)
    if tok is None:
        tok = _TOKENIZERS.setdefault(key, Tokenizer(name, bool(hmm)))
    return tok


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
    return table, median, _file_digest(path)


def _load_pos() -> dict[str, str]:
    tags: dict[str, str] = {}
    with open(_jieba_dict_path(), encoding="utf-8") as f:
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
    """Text (+ title) -> ``Features``. Options mirror ``Fingerprinter``'s keyword arguments.

    ``features``: ``"words"`` (content tokens), ``"shingles"`` (``shingle_size`` consecutive
    content tokens), ``"chars"`` (``shingle_size``-grams of units where a unit is one Han
    character or one non-Han token: needs no segmentation), ``"sentences"`` (seed 003: text split
    on 。？！!? and newlines; a sentence's feature is its content-token sequence).

    ``weighting``: ``"tf"`` (count), ``"log_tf"`` (1 + ln count), ``"tfidf"`` (count times
    jieba's IDF, the median IDF for unknown words; a shingle gets the mean IDF of its words, a
    sentence 1), ``"seed000"`` (words only: tf·idf·(1 + pos + len_norm + 5·signal + 5·in_title)
    with pos 3 for nouns, 2 for verbs, 1 otherwise, from jieba's dictionary tags; len_norm the
    word length scaled to 0..1 over the document; signal 1 when the word contains a seed-000
    signal word such as 总之 or 但是; in_title 1 when the word is also a title word).

    ``tokenizer``: ``"auto"`` (rjieba when a verified version is installed, else jieba: the same
    tokens either way), ``"jieba"`` or ``"rjieba"``; the segmenter is chosen at first use and kept.

    The title's tokens are features too (prepended to the text).
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
            core = (usable and _native.core(str(_jieba_dict_path()), _STOP_AND_NUMBER, _LOG_TF)) or False
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
            norm = _HAN_LINE_BREAK_RE.sub("", norm)
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
    for m in _TOKEN_RE.finditer(norm):
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
