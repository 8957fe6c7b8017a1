"""Normalised text -> tokens (step 2 of :mod:`scrapy_simhash.text.features`): the token rules, and
the segmenters of Han runs: jieba in precise mode, or rjieba (its Rust port) where an installed
version is verified to give jieba's tokens (:func:`auto_tokenizer`)."""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from scrapy_simhash.text.cache import SizedCache

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


TOKENIZERS = ("auto", "jieba", "rjieba")


#: "auto": rjieba when it gives jieba's tokens (a verified version is installed), else jieba.
DEFAULT_TOKENIZER = "auto"


NUMBER_TOKEN = "<num>"


# jieba segments only U+4E00..U+9FD5 as Han (re_han_default); other ideographs are letters.
# The token rules (the module docstring says why): a Han run goes to the segmenter; a token that
# starts with a digit (letters and digits joined to it, and digits after . , : / -) is a number;
# one that starts with a letter is a word, digits included, and an apostrophe between letters joins
# words. No token but a Han run holds a Han character, and "_" joins nothing.
_HAN = "\u4e00-\u9fd5"


_ALNUM = rf"[^\W_{_HAN}]"  # a letter or digit that is not Han


TOKEN_RE = re.compile(
    rf"(?P<han>[{_HAN}]+)"
    rf"|(?P<num>\d(?:{_ALNUM}|[.,:/\-]\d)*)"
    rf"|(?P<word>[^\W\d_]{_ALNUM}*(?:['\u2019][^\W\d_{_HAN}]{_ALNUM}*)*)"
)


# A line break between two Han characters (of jieba's range): removed before segmenting.
HAN_LINE_BREAK_RE = re.compile(r"(?<=[\u4e00-\u9fd5])\s*\n\s*(?=[\u4e00-\u9fd5])")


def file_digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


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
        for han, num, word in TOKEN_RE.findall(text):
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


def jieba_dict_path() -> Path:
    import jieba

    return cast("Path", Path(jieba.__file__).resolve().parent / jieba.DEFAULT_DICT_NAME)


_JIEBA_IDENTITY: str | None = None


def jieba_identity() -> str:
    """``jieba-<version>/dict-<sha256 prefix of dict.txt>``."""
    global _JIEBA_IDENTITY
    if _JIEBA_IDENTITY is None:
        import jieba

        _JIEBA_IDENTITY = f"jieba-{jieba.__version__}/dict-{file_digest(jieba_dict_path())}"
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
    generators. ``tests/text/test_features.py`` and ``benchmarks/speed/bench_rjieba.py`` check it against
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


# (rjieba version, jieba identity) pairs for which benchmarks/speed/bench_rjieba.py found rjieba's tokens
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
        return cast("list[str]", _cut(run, _hmm))

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
