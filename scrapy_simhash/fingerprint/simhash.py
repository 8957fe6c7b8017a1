"""Weighted features -> 64- or 128-bit SimHash fingerprint (int); ``hamming`` and ``similarity``.

Pure: no Scrapy import. ``Fingerprinter`` ties ``features.FeatureExtractor`` (tokens, weights),
a stable feature hash and a vectorised weighted sum (numpy) together; ``Fingerprinter.settings``
lists every option that changes fingerprints, for the index metadata.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from scrapy_simhash import _native
from scrapy_simhash.fingerprint.novelty import OwnText
from scrapy_simhash.fingerprint.sketch import sketch_tokens
from scrapy_simhash.text.cache import SizedCache
from scrapy_simhash.text.features import FeatureExtractor, normalize
from scrapy_simhash.text.native import html_walk_status
from scrapy_simhash.text.region import POINTER_RE, is_pointer
from scrapy_simhash.text.tokenizers import DEFAULT_TOKENIZER

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from scrapy_simhash.fingerprint.templates import SiteTemplates
    from scrapy_simhash.text.extract import Document

__all__ = [
    "DEFAULT_FEATURES",
    "DEFAULT_TOKENIZER",
    "DEFAULT_WEIGHTING",
    "FALLBACKS",
    "EmptyTextError",
    "Fallback",
    "Fingerprinter",
    "PageFingerprint",
    "clear_caches",
    "hamming",
    "hamming_similarity",
    "simhash_from_weights",
]

#: Bumped whenever the fingerprint of some text (or page) changes for the same options. "3": a
#: word that starts with a letter keeps its digits (``u64``), a number takes the letters joined
#: to it (``3rd``), a Han character ends a word (``features`` module docstring). "4": a page's
#: own heading, declaration and description join its text (an API reference page whose region
#: is its member docs: ``text.region.with_heading``). "5": its member signatures whose type names
#: are links join it too (``text.entries.with_entries``). "6": so do its members' C function names
#: alone (``gtk_cell_area_activate``: gi-docgen, gtk-doc). "7": a class/id that names a place
#: inside the content column (``column-center-bottom``) is no chrome, and a line that only points
#: at a page ("Printed from /a/b.html") no part of the body's column
#: (``text.region.without_sidebar``). An index of another version raises
#: ``SettingsMismatchError`` naming the version and the fix.
FINGERPRINT_VERSION = "7"

# The defaults, chosen on the quality benchmark's pairs: docs/topics/how-it-works.rst says why,
# benchmarks/README.md gives the figures.
DEFAULT_BITS = 64
DEFAULT_FEATURES = "words"
DEFAULT_WEIGHTING = "log_tf"
DEFAULT_SHINGLE_SIZE = 3
DEFAULT_HMM = False
# A text with fewer distinct features gets an exact hash (a two-sentence site footer has 8-15).
DEFAULT_MIN_FEATURES = 24
DEFAULT_MAX_CHARS = 500_000
#: Seconds a page's extraction may take before its text is taken by regular expressions alone;
#: 0: no clock. Off by default: a clock makes a page's fingerprint depend on the machine's load (a
#: big page walked in 0.4 s on a quiet machine ran past 1 s on a loaded one, fell back and came out
#: "changed"). A page's work is bounded without it, the same on every machine: at most
#: ``extract.MAX_ELEMENTS`` elements walked, ``MAX_BLOCKS`` blocks, ``MAX_HTML_CHARS`` characters
#: parsed and ``max_chars`` characters tokenised (``benchmarks/speed/bench_pathological.py``).
DEFAULT_TIME_BUDGET = 0.0
# blake2b (the standard library's) rather than xxh3: with the hash cache, xxh3 saves too little to
# be worth a dependency (benchmarks/speed/bench_fingerprint.py).
DEFAULT_FEATURE_HASH = "blake2b"
FEATURE_HASHES = ("xxh3", "blake2b")
BITS = (64, 128)

# Weights are scaled to integers <= 2**_WEIGHT_BITS before summing: float64 sums of integers
# below 2**53 are exact, so the result is the same whatever the summation order (numpy/BLAS may
# reorder) and on every machine. 2**24 keeps 7 significant digits and allows 2**28 features.
_WEIGHT_BITS = 24
_HASH_CACHE_SIZE = 1 << 17
_HASH_CACHE_CHARS = 8 << 20  # characters of the cached feature strings (a long token is costly)


def hamming(a: int, b: int) -> int:
    """Number of differing bits between fingerprints ``a`` and ``b`` (non-negative ints)."""
    if not isinstance(a, int) or not isinstance(b, int):
        raise TypeError(f"hamming() expects two ints, got {type(a).__name__} and {type(b).__name__}")
    if a < 0 or b < 0:
        raise ValueError(f"fingerprints are non-negative ints, got {a if a < 0 else b}")
    return (a ^ b).bit_count()


def hamming_similarity(a: int, b: int, bits: int = 64) -> float:
    """``1 - hamming(a, b) / bits``: 1.0 for identical fingerprints, about 0.5 for unrelated ones."""
    if bits not in BITS:
        raise ValueError(f"bits ({bits!r}) is invalid: it must be 64 or 128")
    if a >> bits or b >> bits:
        raise ValueError(f"fingerprint wider than bits={bits}: {max(a, b):#x}")
    return 1.0 - hamming(a, b) / bits


class EmptyTextError(ValueError):
    """The text yields no features (empty, whitespace or punctuation only); it has no fingerprint."""


_EMPTY_TEXT = "text has no features (empty, whitespace, numbers or punctuation only)"

# ---------------------------------------------------------------------------------------------
# Feature hashing


def _hasher(name: str, nbytes: int) -> Callable[[bytes], bytes]:
    if name == "xxh3":
        try:
            import xxhash
        except ImportError as exc:
            raise ImportError(
                "feature_hash='xxh3' needs the xxhash package: pip install xxhash "
                "(or pass feature_hash='blake2b', which changes every fingerprint)"
            ) from exc
        return xxhash.xxh3_64_digest if nbytes == 8 else xxhash.xxh3_128_digest
    if name == "blake2b":

        def blake(data: bytes, _n: int = nbytes, _b: Callable[..., Any] = hashlib.blake2b) -> bytes:
            return bytes(_b(data, digest_size=_n).digest())

        return blake
    raise ValueError(f"feature_hash={name!r} is invalid: it must be one of {', '.join(map(repr, FEATURE_HASHES))}")


class _HashCache:
    """feature string -> digest bytes; bounded in entries and characters (cleared when full);
    shared by Fingerprinters."""

    def __init__(self, fn: Callable[[bytes], bytes], size: int = _HASH_CACHE_SIZE) -> None:
        self.fn = fn
        self.size = size
        self.data = SizedCache(size, _HASH_CACHE_CHARS)

    def digests(self, features: Iterable[str]) -> list[bytes]:
        data = self.data
        get = data.get
        put = data.put
        fn = self.fn
        out: list[bytes] = []
        append = out.append
        for f in features:
            d = get(f)
            if d is None:
                d = fn(f.encode("utf-8", "surrogatepass"))
                # Emptied when full: cheap, and the hot tokens come back within a page or two.
                put(f, d, 16)
            append(d)
        return out


_CACHES: dict[tuple[str, int], _HashCache] = {}
_CACHES_LOCK = threading.Lock()


def hash_cache(name: str, bits: int) -> _HashCache:
    key = (name, bits)
    cache = _CACHES.get(key)
    if cache is None:
        fn = _hasher(name, bits // 8)
        with _CACHES_LOCK:
            cache = _CACHES.setdefault(key, _HashCache(fn))
    return cache


def clear_caches() -> None:
    """Empty the feature-hash and segmentation caches (benchmarks use it; results don't change)."""
    from scrapy_simhash.text import tokenizers

    for cache in list(_CACHES.values()):
        cache.data.clear()
    for tok in list(tokenizers._TOKENIZERS.values()):
        tok.clear_cache()


def weighted_simhash(digests: Sequence[bytes], weights: Sequence[float], bits: int) -> int:
    """SimHash of features given by their digests (bits // 8 bytes each) and positive weights.

    Bit i of the fingerprint is bit (i % 8) of byte i // 8 of the digests (little-endian), set when
    the weighted sum of +w (bit 1) / -w (bit 0) over all features is > 0.

    Determinism: weights are first scaled to integers (at most 2**24, at least 1), so every sum is
    an exact integer in float64 and the result does not depend on the order of the features or
    on how numpy/BLAS groups the additions (this replaces sorting the features before summing).
    """
    n = len(digests)
    nbytes = bits // 8
    matrix = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(n, nbytes)
    bitmat = np.unpackbits(matrix, axis=1, bitorder="little")
    w = np.asarray(weights, dtype=np.float64)
    top = float(w.max())
    if not math.isfinite(top) or top <= 0:
        raise ValueError("feature weights must be finite and positive")
    wq = np.maximum(np.rint(w * ((1 << _WEIGHT_BITS) / top)), 1.0)
    # sum_j w_j * (2 b_ij - 1) > 0  <=>  2 * (w @ b)_i > sum(w)
    ones = wq @ bitmat
    fp_bits = 2.0 * ones > float(wq.sum())
    return int.from_bytes(np.packbits(fp_bits, bitorder="little").tobytes(), "little")


def simhash_from_weights(
    weights: Mapping[str, float],
    *,
    bits: int = DEFAULT_BITS,
    feature_hash: str = DEFAULT_FEATURE_HASH,
) -> int:
    """SimHash of a ``{feature: weight}`` mapping (weights > 0), without the zero remapping.

    Use ``Fingerprinter`` for text; this is the bare algorithm (e.g. for a token list:
    ``simhash_from_weights(collections.Counter(tokens))``).
    """
    if bits not in BITS:
        raise ValueError(f"bits ({bits!r}) is invalid: it must be 64 or 128")
    if not weights:
        raise EmptyTextError("no features: a SimHash needs at least one")
    cache = hash_cache(feature_hash, bits)
    return weighted_simhash(cache.digests(weights.keys()), list(weights.values()), bits)


def exact_fp(tokens: Sequence[str], bits: int) -> int:
    digest = hashlib.blake2b(
        "\x1f".join(tokens).encode("utf-8", "surrogatepass"),
        digest_size=bits // 8,
        person=b"simhash-exact",
    ).digest()
    return int.from_bytes(digest, "little")


# ---------------------------------------------------------------------------------------------


class Fallback(str, Enum):
    """Why a page's fingerprint is no evidence of a near-duplicate: what it falls back to
    (``PageFingerprint.fallback``; stat ``simhash/fallback/<value>``). str-valued: its text is its
    value, and it compares equal to it.

    "short": its text has fewer than ``min_features`` distinct features, so its fingerprint is an
    exact hash of that text (only pages with the same text match, such as soft-404 pages);
    "template": without the lines that are its site's learned template, its text has fewer than
    ``min_features`` features, so it may not be a near-duplicate at all.
    """

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]

    SHORT = "short"
    TEMPLATE = "template"


#: The fallbacks, in this order.
FALLBACKS: tuple[Fallback, ...] = tuple(Fallback)


@dataclass(frozen=True)
class PageFingerprint:
    """A page's fingerprint and the evidence a decision reads beside it
    (:meth:`Fingerprinter.fingerprint_page` makes it)."""

    #: The SimHash of the page's text (an exact hash when ``fallback`` is "short"); never depends
    #: on learned site templates.
    fp: int
    #: ``None``, or one of :data:`FALLBACKS`: what the fingerprint rests on instead of the text.
    fallback: Fallback | None
    #: How the text was extracted (``extract.Document.method``).
    method: str
    #: The share of the page's visible text the fingerprinted text holds.
    coverage: float
    #: The title used.
    title: str = ""
    #: All visible text, one block per line: what site templates are learned from.
    visible: str = ""
    #: The change sketch (:mod:`scrapy_simhash.fingerprint.sketch`) of the title, the text and the
    #: page's other content-like text; ``None`` when they have no words.
    sketch: bytes | None = None
    #: On a short or template-only page, an exact hash of the same tokens: what proposes a copy
    #: (:mod:`scrapy_simhash.decision.shortcopy`); ``None`` otherwise.
    content_key: int | None = None
    #: The page's own text (:class:`~scrapy_simhash.fingerprint.novelty.OwnText`), what a drop checks
    #: first; ``None``: not computed.
    own: OwnText | None = field(default=None, compare=False, repr=False)
    #: Whose parse of the page it comes from (``extract.Document.parse``): "own", "shared" (the
    #: tree given to ``fingerprint_page``), "own/<why>" (that tree was not used), "recent" (the
    #: values of a page with the same text fingerprinted just before): never changes a value.
    parse: str = field(default="own", compare=False, repr=False)

    @classmethod
    def of(
        cls,
        fp: int,
        *,
        sketch: bytes | None = None,
        fallback: Fallback | str | None = None,
        content_key: int | None = None,
        visible: str = "",
        own: OwnText | None = None,
    ) -> PageFingerprint:
        """A page known by its fingerprint and evidence alone, for a caller that fingerprints
        elsewhere (a fingerprint kept from an earlier run, a test): no title, the whole text
        extracted (``method="main"``, ``coverage=1.0``)."""
        return cls(
            fp, None if fallback is None else Fallback(fallback), "main", 1.0, "", visible, sketch, content_key, own
        )

    @property
    def may_match(self) -> bool:
        """Whether the page may be a near-duplicate, or the page another one duplicates, by the
        index (a template-only page is neither; its exact copies are found by ``shortcopy``)."""
        return self.fallback != Fallback.TEMPLATE

    def stats(self) -> list[str]:
        """Stats keys (without prefix) worth counting: ``fallback/<reason>`` and ``extract/<method>``
        for every extraction other than the content region, ``parse/shared`` / ``parse/own/<why>``
        for a page given with its tree, ``parse/recent`` (``parse``)."""
        out = [] if self.fallback is None else [f"fallback/{self.fallback}"]
        if self.method not in ("main", "all"):
            out.append(f"extract/{self.method}")
        if self.parse != "own":
            out.append(f"parse/{self.parse}")
        return out


class Fingerprinter:
    """Text or HTML -> SimHash fingerprint (an int below ``2**bits``, never 0).

    A text with no feature at all (empty, whitespace, punctuation) raises ``EmptyTextError``. The
    Scrapy glue fills the arguments from the ``SIMHASH_*`` settings; every one that changes
    fingerprints is in ``settings``.

    :param bits: 64 (default) or 128 (`SIMHASH_BITS`).
    :param features: "words" (default), "shingles", "chars" or "sentences" (`SIMHASH_FEATURES`).
    :param weighting: "log_tf" (default), "tf", "tfidf" or "seed000" (`SIMHASH_WEIGHTING`).
    :param hmm: let jieba's HMM join characters it has no dictionary word for (`SIMHASH_HMM`;
        default False).
    :param tokenizer: "auto" (default: rjieba when a verified version is installed, else jieba, the
        same fingerprints), "jieba" or "rjieba" (`SIMHASH_TOKENIZER`); ``tokenizer_backend`` says which.
    :param shingle_size: words per shingle / characters per n-gram, 1..16 (`SIMHASH_SHINGLE_SIZE`).
    :param min_features: a text with fewer distinct features gets an exact hash of its normalised
        tokens instead of a SimHash (`SIMHASH_MIN_FEATURES`, default 24; 0: off).
    :param max_chars: only this many first characters of a text are used (default 500,000; 0: no limit).
    :param main_content: fingerprint the main content of HTML (default) or all its visible text
        (`SIMHASH_MAIN_CONTENT`).
    :param feature_hash: "blake2b" (default) or "xxh3" (needs the xxhash package).
    :param time_budget: seconds one page's extraction may take before it falls back to regular
        expressions (default 0: no clock).
    :param native: the native core: ``None`` (default) uses it when installed, ``False`` never,
        ``True`` requires it (`SIMHASH_NATIVE`); ``native`` and ``html_walk`` say whether it runs.
    """

    def __init__(
        self,
        *,
        bits: int = DEFAULT_BITS,
        features: str = DEFAULT_FEATURES,
        weighting: str = DEFAULT_WEIGHTING,
        hmm: bool = DEFAULT_HMM,
        tokenizer: str = DEFAULT_TOKENIZER,
        shingle_size: int = DEFAULT_SHINGLE_SIZE,
        min_features: int = DEFAULT_MIN_FEATURES,
        max_chars: int = DEFAULT_MAX_CHARS,
        main_content: bool = True,
        feature_hash: str = DEFAULT_FEATURE_HASH,
        time_budget: float = DEFAULT_TIME_BUDGET,
        native: bool | None = None,
    ) -> None:
        if isinstance(bits, bool) or bits not in BITS:
            raise ValueError(f"bits ({bits!r}) is invalid: it must be 64 or 128")
        _check_int("min_features", min_features, 0, 1 << 20)
        _check_int("max_chars", max_chars, 0, 1 << 40)
        if not isinstance(main_content, bool):
            raise TypeError(f"main_content must be True or False, got {main_content!r}")
        if (
            not isinstance(time_budget, (int, float))
            or isinstance(time_budget, bool)
            or not 0 <= time_budget < math.inf
        ):
            raise ValueError(f"time_budget ({time_budget!r}) is invalid: it must be a number of seconds >= 0")
        self.time_budget = float(time_budget)
        if feature_hash not in FEATURE_HASHES:
            raise ValueError(
                f"feature_hash={feature_hash!r} is invalid: it must be one of {', '.join(map(repr, FEATURE_HASHES))}"
            )
        self.bits = bits
        self.min_features = min_features
        self.max_chars = max_chars
        self.main_content = main_content
        self.feature_hash = feature_hash
        self._extractor = FeatureExtractor(
            features=features,
            weighting=weighting,
            shingle_size=shingle_size,
            tokenizer=tokenizer,
            hmm=hmm,
            native=native,
        )
        self._cache = hash_cache(feature_hash, bits)  # fails early if xxhash is missing
        self._settings: dict[str, object] | None = None
        self._recent = _RecentPages(RECENT_PAGES, RECENT_CHARS)

    @property
    def features(self) -> str:
        return self._extractor.features

    @property
    def weighting(self) -> str:
        return self._extractor.weighting

    @property
    def tokenizer(self) -> str:
        """The ``tokenizer`` argument ("auto", "jieba" or "rjieba")."""
        return self._extractor.tokenizer

    @property
    def tokenizer_backend(self) -> str | None:
        """The segmenter that runs: "jieba" or "rjieba" ("auto" resolved, decided at the first
        call and kept); ``None`` for ``features="chars"``, which segments nothing. Loads the
        tokenizer's module (not yet its dictionary)."""
        return self._extractor.backend

    @property
    def native(self) -> bool:
        """Whether the native core (``scrapy-simhash-native``) computes this Fingerprinter's
        fingerprints of text: installed, not turned off with ``native=False``, and options it
        implements (``features="words"``, ``weighting`` "log_tf" or "tf", jieba's segmentation).
        The fingerprints are the same either way. Loads the core (jieba's dictionary) on first use."""
        return self._native_core() is not None

    @property
    def html_walk(self) -> str:
        """Which walk over the parsed page runs: "native HTML walk" (the native core reads lxml's
        tree: the same blocks), else "Python HTML walk (<why>)" (``native=False``, not installed,
        an lxml it was not verified on)."""
        if self._extractor.native is False:
            return "Python HTML walk (native=False)"
        return html_walk_status()

    def _native_core(self) -> Any:
        ex = self._extractor
        if ex.features != "words" or ex.weighting not in _native.NATIVE_WEIGHTINGS:
            return None
        return ex.native_core()

    @property
    def settings(self) -> dict[str, object]:
        """JSON-serialisable options that change fingerprints (stored in the index metadata).

        Includes the tokenizer and its dictionary identity, the IDF table identity when used, the
        feature hash and ``version``. Computing it initialises the tokenizer.
        """
        if self._settings is None:
            s: dict[str, object] = {"version": FINGERPRINT_VERSION, "bits": self.bits}
            s.update(self._extractor.settings())
            s.update(
                feature_hash=self.feature_hash,
                min_features=self.min_features,
                max_chars=self.max_chars,
                main_content=self.main_content,
            )
            self._settings = s
        return dict(self._settings)

    def __repr__(self) -> str:
        ex = self._extractor
        return (
            f"Fingerprinter(bits={self.bits}, features={ex.features!r}, weighting={ex.weighting!r}, "
            f"tokenizer={ex.tokenizer!r}, hmm={ex.hmm}, shingle_size={ex.shingle_size}, "
            f"min_features={self.min_features}, native={self.native})"
        )

    def fingerprint_text(self, text: str, title: str = "") -> int:
        """Fingerprint of ``text`` (plus ``title``, whose words count as features too).

        Raises ``TypeError`` for a non-str and ``EmptyTextError`` when there is no feature.
        """
        return self._fingerprint(text, title)[0]

    def _fingerprint(self, text: str, title: str, native: bool = True) -> tuple[int, bool, list[str]]:
        """``(fingerprint, whether it is the short-text exact hash, the tokens of title + text)``;
        the tokens are ``[]`` where the native core computed the fingerprint; ``native=False``
        runs the Python path, which always gives them."""
        if not isinstance(text, str):
            hint = (
                "; decode it first (or use fingerprint_html for HTML bytes)"
                if isinstance(text, (bytes, bytearray))
                else ""
            )
            raise TypeError(f"fingerprint_text() expects str, got {type(text).__name__}{hint}")
        if not isinstance(title, str):
            raise TypeError(f"title must be str, got {type(title).__name__}")
        if self.max_chars and len(text) > self.max_chars:
            text = text[: self.max_chars]
        core = self._native_core() if native else None
        if core is not None:
            try:
                result = core.fingerprint(normalize(f"{title}\n{text}" if title else text), **self._native_options())
            except UnicodeEncodeError:  # lone surrogates: not UTF-8, Python's path takes them
                pass
            else:
                if result is None:
                    raise EmptyTextError(_EMPTY_TEXT)
                fp, short = result
                return fp, short, []
        feats = self._extractor.extract(text, title)
        weights = feats.weights
        if not weights:
            raise EmptyTextError(_EMPTY_TEXT)
        if len(weights) < self.min_features:
            return exact_fp(feats.tokens, self.bits) or 1, True, feats.tokens
        fp = weighted_simhash(self._cache.digests(weights.keys()), list(weights.values()), self.bits)
        return fp or 1, False, feats.tokens

    def _native_options(self) -> dict[str, Any]:
        ex = self._extractor
        return {
            "hmm": ex.hmm,
            "bits": self.bits,
            "feature_hash": self.feature_hash,
            "weighting": ex.weighting,
            "min_features": self.min_features,
        }

    def fingerprint_document(self, doc: Document) -> int:
        """Fingerprint of an ``extract.Document`` (its ``text`` and ``title``)."""
        return self.fingerprint_text(doc.text, doc.title)

    def fingerprint_html(
        self,
        html: str | bytes,
        url: str | None = None,
        *,
        encoding: str | None = None,
        content_type: str | None = None,
    ) -> int:
        """Fingerprint of a page: ``extract.extract`` (main content unless ``main_content=False``)
        then ``fingerprint_document``. Raises ``EmptyTextError`` when the page has no text."""
        return self.fingerprint_page(html, url, encoding=encoding, content_type=content_type).fp

    def fingerprint_page(
        self,
        html: str | bytes,
        url: str | None = None,
        *,
        encoding: str | None = None,
        content_type: str | None = None,
        templates: SiteTemplates | None = None,
        tree: Any = None,
    ) -> PageFingerprint:
        """A page's fingerprint with the evidence it rests on (:class:`PageFingerprint`).

        The fingerprint is :meth:`fingerprint_html`'s. With ``templates`` (what was learned about
        ``url``'s site), a page whose fingerprinted text without its template lines has fewer than
        ``min_features`` features gets ``fallback="template"``: it may not be a near-duplicate.
        The fingerprint itself never depends on ``templates``. Raises ``EmptyTextError`` when the
        page has no text. ``tree``: the lxml tree parsel built from ``html`` (a ``str``: a spider's
        ``response.selector.root``), or a function that returns it, walked instead of parsing the
        page again where it gives the same values (``extract``'s ``tree``; ``PageFingerprint.parse``
        says whether it did). The text of one of the last :data:`RECENT_PAGES` pages (with the same
        ``encoding`` and ``content_type``) is not extracted again: it gets that page's values, and
        ``parse="recent"`` (the function is not called).
        """
        if isinstance(html, (bytearray, memoryview)):
            html = bytes(html)  # (kept: it must not change)
        content = self._recent.get(html, encoding, content_type) if isinstance(html, (str, bytes)) else None
        if content is None:
            tree = tree() if callable(tree) else tree
            content = self._content(html, encoding, content_type, templates is not None, tree)
            self._recent.put(html, encoding, content_type, content)
            return self._page(content, url, templates, content.doc.parse)
        return self._page(content, url, templates, "recent")

    def _content(
        self, html: str | bytes, encoding: str | None, content_type: str | None, lines: bool, tree: Any
    ) -> _Content:
        """What ``fingerprint_page`` reads of the page alone, whatever its URL and site templates."""
        from scrapy_simhash.text.extract import extract

        doc = extract(
            html,
            encoding=encoding,
            content_type=content_type,
            main_content=self.main_content,
            time_budget=self.time_budget or None,
            native=self._extractor.native is not False,
            tree=tree,
        )
        fp, short, sketch, content_key, keys = self._native_page(doc, lines) or self._python_page(doc)
        if short and doc.visible and doc.visible != doc.text:
            # Too little text to judge by: the exact hash covers the whole visible page, so that
            # only a page identical to it (a soft-404 under many URLs) matches, never one that
            # shares just the short text that was kept (a licence line, a footer).
            visible = doc.visible[: self.max_chars] if self.max_chars else doc.visible
            whole = self._extractor.extract(visible, doc.title).tokens
            if whole:
                fp = exact_fp(whole, self.bits) or 1
        if short and content_key is not None and doc.rest and POINTER_RE.search(doc.rest):
            # A line that only points at a page ("Printed from /a/b.html") is no content: a print
            # view's content key is its page's (the copy rule then compares their visible lines).
            rest = "\n".join(line for line in doc.rest.split("\n") if not is_pointer(line))
            content_key = self._content_key(replace(doc, rest=rest))
        return _Content(doc, fp, short, sketch, content_key, keys)

    def _page(self, content: _Content, url: str | None, templates: SiteTemplates | None, parse: str) -> PageFingerprint:
        """The :class:`PageFingerprint` of a page's ``content`` at ``url``, with its site's ``templates``."""
        doc, fp, sketch, content_key = content.doc, content.fp, content.sketch, content.content_key
        fallback = Fallback.SHORT if content.short else None
        if templates is not None and fallback is None and self._template_only(doc.text, url, templates, content.lines):
            fallback = Fallback.TEMPLATE
            content_key = self._content_key(doc)  # what proposes an exact copy of it (shortcopy)
        own = own_text(doc, url, templates)
        return PageFingerprint(
            fp, fallback, doc.method, doc.coverage, doc.title, doc.visible, sketch, content_key, own, parse
        )

    def _content_key(self, doc: Document) -> int | None:
        """A short page's content key (an exact hash of the tokens of the title, the text and the
        other content-like text) for a page that is not short: its tokens again, on either path."""
        parts = self._native_page(doc, lines=False, min_features=_ALL_SHORT)
        if parts is None:  # the Python path (or the core declined): the same tokens, the same hash
            _, _, tokens = self._fingerprint(doc.text, doc.title, native=False)
            if doc.rest:
                tokens = tokens + self._extractor.tokens(doc.rest[: self.max_chars] if self.max_chars else doc.rest)
            return (exact_fp(tokens, self.bits) or 1) if tokens else None
        return parts[3]

    def _python_page(self, doc: Document) -> _PageParts:
        """``(fingerprint, short, sketch, content_key, None)`` of ``doc`` on the Python path."""
        fp, short, tokens = self._fingerprint(doc.text, doc.title, native=False)
        # The change sketch: the title, the content text and the page's other content-like text
        # (doc.rest), never its chrome, also on a short page whose fingerprint covers all of it.
        if doc.rest:
            tokens = tokens + self._extractor.tokens(doc.rest[: self.max_chars] if self.max_chars else doc.rest)
        sketch = sketch_tokens(hash_cache("blake2b", 64).digests(tokens)) if tokens else None
        content_key = (exact_fp(tokens, self.bits) or 1) if short and tokens else None
        return fp, short, sketch, content_key, None

    def _native_page(self, doc: Document, lines: bool = True, min_features: int | None = None) -> _PageParts | None:
        """``fingerprint_page``'s fingerprint, short flag, sketch and content key of ``doc`` by the
        native core in one call (``Core.page``: the tokens never cross to Python), with the text's
        lines normalised and keyed for ``_template_only`` when ``lines`` (``None`` where the
        normalised text does not split into the same lines: a text cut at ``max_chars``); ``None``
        when the core does not run (the Python path then computes the same values)."""
        core = self._native_core()
        if core is None:
            return None
        text, title = doc.text, doc.title
        cut = bool(self.max_chars) and len(text) > self.max_chars
        if cut:
            text = text[: self.max_chars]
        norm = normalize(f"{title}\n{text}" if title else text)
        rest = doc.rest[: self.max_chars] if self.max_chars else doc.rest
        try:
            options = self._native_options()
            if min_features is not None:
                options["min_features"] = min_features
            result = core.page(norm, normalize(rest) if rest else None, **options, lines=lines)
        except UnicodeEncodeError:  # lone surrogates: not UTF-8, Python's path takes them
            return None
        if result is None:
            raise EmptyTextError(_EMPTY_TEXT)
        fp, short, sketch, content_key, keys = result
        skip = title.count("\n") + 1 if title else 0
        if lines and not cut and len(keys) == skip + text.count("\n") + 1:
            return fp, short, sketch, content_key, _Lines(keys[skip:], norm, skip)
        return fp, short, sketch, content_key, None

    def _template_only(self, text: str, url: str | None, templates: SiteTemplates, lines: _Lines | None) -> bool:
        """Whether ``text`` without the template lines of ``url``'s site has too few features;
        ``lines``: the keys and normalised forms of ``text``'s lines (``_native_page``), or ``None``."""
        raw = text.split("\n")
        template = templates.template_lines(url, raw, None if lines is None else lines.keys)
        if not template:
            return False
        least = max(self.min_features, 1)
        if lines is not None:  # the core took the text: its lines are UTF-8 and within max_chars
            own = "\n".join(norm for line, norm in zip(raw, lines.normalised()) if line not in template)
            return int(self._native_core().count_features(own, self._extractor.hmm)) < least
        own = "\n".join(line for line in raw if line not in template)
        if self.max_chars and len(own) > self.max_chars:
            own = own[: self.max_chars]
        return len(self._extractor.extract(own).weights) < least


class _Content(NamedTuple):
    """What ``fingerprint_page`` reads of a page's text alone (``Fingerprinter._content``)."""

    doc: Document
    fp: int
    short: bool
    sketch: bytes | None
    content_key: int | None
    lines: _Lines | None


#: How many of the last pages fingerprinted, and how many characters of their text at most, a
#: ``Fingerprinter`` keeps (``fingerprint_page``): a page under another URL with the same bytes (a
#: tracking parameter, ``/`` and ``/index.html``) is fetched a few pages after its original.
RECENT_PAGES = 32
RECENT_CHARS = 4_000_000


class _RecentPages:
    """The :class:`_Content` of the last pages fingerprinted, found by their text (and the encoding
    and content type it was decoded with): first by its length, then compared whole."""

    def __init__(self, entries: int, chars: int) -> None:
        self.entries = entries
        self.chars = chars
        self._by_size: dict[int, list[tuple[str | bytes, str | None, str | None, _Content]]] = {}
        self._order: deque[int] = deque()
        self._held = 0
        self._lock = threading.Lock()  # (a Fingerprinter may be shared by threads)

    def get(self, html: str | bytes, encoding: str | None, content_type: str | None) -> _Content | None:
        for text, enc, ctype, content in self._by_size.get(len(html), ()):
            if text == html and enc == encoding and ctype == content_type:
                return content
        return None

    def put(self, html: str | bytes, encoding: str | None, content_type: str | None, content: _Content) -> None:
        size = len(html)
        if size > self.chars or not self.entries:
            return
        with self._lock:
            while self._order and (len(self._order) >= self.entries or self._held + size > self.chars):
                oldest = self._order.popleft()
                same = self._by_size[oldest]
                del same[0]
                if not same:
                    del self._by_size[oldest]
                self._held -= oldest
            self._by_size.setdefault(size, []).append((html, encoding, content_type, content))
            self._order.append(size)
            self._held += size


#: ``min_features`` that makes every page short: ``Core.page`` then gives the content key.
_ALL_SHORT = 1 << 62


def own_text(doc: Document, url: str | None, templates: SiteTemplates | None) -> OwnText:
    """The page's own text: its title, its fingerprinted text, its other content-like lines
    (``doc.rest``) and the other lines inside its content (``doc.inner``: an API page's member
    signatures, whose type names are links) less those that are its site's learned template, and
    its table rows (``doc.rows``: each row's short cells as one line, counted, not sketched); what
    it shows (its sketch's text, what later pages are measured against): its title and whole
    visible text. The fingerprinted text keeps its recurring lines: on generated pages (sibling API
    pages, a page's translations and copies) they hold what tells the pages apart, and the template
    is learned from them too. Its heading: the page's title (the part of it that its own heading
    repeats: ``text.title``), what tells a page about another named thing from a copy."""
    lines = [doc.title, *doc.text.split("\n")]
    if doc.rest or doc.inner:
        rest = [*doc.rest.split("\n"), *doc.inner.split("\n")]
        template = templates.template_lines(url, rest) if templates is not None else set()
        lines += [line for line in rest if line not in template]
    shown = [doc.title, *doc.visible.split("\n")] if doc.visible else None
    return OwnText(lines, shown=shown, rows=doc.rows.split("\n") if doc.rows else (), heading=doc.title)


class _Lines(NamedTuple):
    """The lines of a page's text as the native core saw them: ``templates.line_key`` of each,
    and the normalised title and text (``features.normalize``) they were made from, whose first
    ``skip`` lines are the title's."""

    keys: list[int]
    norm: str
    skip: int

    def normalised(self) -> list[str]:
        """Each line of the text, normalised (split only when the template check needs it)."""
        return self.norm.split("\n")[self.skip :]


#: What ``fingerprint_page`` makes of a page's tokens: fingerprint, short, sketch, content key,
#: and the text's lines (``_Lines``, native path only).
_PageParts = tuple[int, bool, "bytes | None", "int | None", "_Lines | None"]


def _check_int(name: str, value: object, lo: int, hi: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} ({value!r}) is invalid: it must be an int between {lo} and {hi}")
