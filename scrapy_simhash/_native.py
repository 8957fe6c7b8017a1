"""The optional native core: the companion distribution ``scrapy-simhash-native`` (module
``scrapy_simhash_native``, Rust, built from ``native/`` with maturin).

It does ``features.py``'s text -> tokens and ``fingerprint.py``'s tokens -> fingerprint for
``features="words"`` with ``weighting="log_tf"`` or ``"tf"`` (the defaults), with the GIL
released, and gives the Python path's tokens and fingerprints exactly (``tests/test_native.py``).
Everything that depends on the running Python's Unicode tables stays Python's: the text is
normalised by ``features.normalize`` before it is handed over, and the character classes of the
token regex are computed here by ``re`` itself, on every code point.

``Fingerprinter(native=None)`` (the default) uses it when it imports; ``native=False`` never;
``native=True`` requires it.

It also walks the tree that lxml parsed (``HtmlWalker``, ``native/src/html.rs``): the blocks of
``extract._Walker.walk``, read from libxml2's nodes directly, on the lxml / libxml2 versions in
:data:`HTML_VERIFIED` only; elsewhere, and on a tree it does not handle, the Python walk runs
(counted in :data:`HTML_WALKS`; :func:`html_walk_status` is what the start-up line says).

And it runs the regular-expression fallback of ``extract`` (``FlatText``, ``native/src/flat.rs``:
``_flat_text``, the title of ``_flat_document``, ``_unescape``) and ``templates.line_keys``, with
the tables of the running Python (:func:`flat_text`).

A page's fingerprint, change sketch, content key and the template line keys of its text come from
one call (``Core.page``, ``Fingerprinter._native_page``): the text is normalised once, and no token
crosses to Python.
"""

from __future__ import annotations

import array
import importlib
import re
import sys
import threading
from collections import Counter
from functools import cache
from typing import Any

NATIVE_WEIGHTINGS = ("log_tf", "tf")
_INSTALL_HINT = (
    "the native core (scrapy_simhash_native) is not installed: pip install ./native from a checkout "
    "(needs a Rust toolchain), or pass native=False / set SIMHASH_NATIVE = False"
)

_MODULE: Any = None
_IMPORT_ERROR: str | None = None
_CORE: Any = None
_LOCK = threading.Lock()


def module() -> Any:
    """The ``scrapy_simhash_native`` module, or ``None`` when it does not import."""
    global _MODULE, _IMPORT_ERROR
    if _MODULE is None and _IMPORT_ERROR is None:
        try:
            _MODULE = importlib.import_module("scrapy_simhash_native")
        except ImportError as exc:  # not installed, or built for another platform
            _IMPORT_ERROR = str(exc)
    return _MODULE


def require() -> None:
    """Raise ImportError (naming the fix) when the native core does not import."""
    if module() is None:
        raise ImportError(f"{_INSTALL_HINT} ({_IMPORT_ERROR})")


@cache
def _every() -> str:
    """Every code point, in order (4.4 MB: dropped by :func:`_ranges_done` once the tables are made).
    Decoded from UTF-32 in one piece: joining a million one-character strings made ~65 MB of them
    at once, a peak of the crawler's memory that it kept in its arenas."""
    codes = array.array("I", range(0x110000))  # C's unsigned int: 4 bytes on every supported platform
    return codes.tobytes().decode(f"utf-32-{'le' if sys.byteorder == 'little' else 'be'}", "surrogatepass")


@cache
def _ranges(pattern: str) -> list[tuple[int, int]]:
    """Half-open code point ranges of the characters that ``re`` matches with ``pattern``."""
    return [m.span() for m in re.finditer(pattern + "+", _every())]


def _ranges_done() -> None:
    _every.cache_clear()


def core() -> Any:
    """The shared ``scrapy_simhash_native.Core`` (jieba's dictionary loaded once per process)."""
    global _CORE
    if _CORE is None:
        with _LOCK:
            if _CORE is None:
                require()
                from scrapy_simhash.text import features

                _CORE = _MODULE.Core(
                    str(features._jieba_dict_path()),
                    sorted(features._STOP_AND_NUMBER),
                    _ranges(r"[^\W\d_]"),
                    _ranges(r"\d"),
                    _ranges(r"\s"),
                    features._LOG_TF,
                )
                _ranges_done()
    return _CORE


# --------------------------------------------------------------------------- the HTML walk

#: (lxml major version, libxml2 major version) families whose struct layouts the native walk reads
#: (lxml's public ``struct LxmlElement``: ``PyObject_HEAD``, ``_doc``, ``_c_node``, unchanged since
#: lxml 2; libxml2's ``xmlNode`` / ``xmlAttr``, public ABI, stable within libxml2 2.x). Checked
#: against the headers of lxml 6.1.3 (libxml2 2.14.6), and the differential tests
#: (``tests/test_native_html.py``) run on whatever pair is installed, in CI on every push. Every call
#: also checks that the element's node points back to it (``_private``). On any other family the
#: Python walk runs. A family, not a release: a patch release of lxml must not turn the walk off.
HTML_VERIFIED = frozenset({(5, 2), (6, 2)})

#: Pages walked natively ("native") and by Python, with the reason ("python: <why>").
HTML_WALKS: Counter[str] = Counter()

_WALKER: Any = None
_WALKER_ERROR: str | None = None


def _lxml_versions() -> tuple[tuple[int, ...], tuple[int, ...]]:
    from lxml import etree

    return tuple(etree.LXML_VERSION), tuple(etree.LIBXML_VERSION)


def html_walker() -> Any:
    """The shared ``scrapy_simhash_native.HtmlWalker``, or ``None`` (see :func:`html_walk_status`)."""
    global _WALKER, _WALKER_ERROR
    if _WALKER is None and _WALKER_ERROR is None:
        with _LOCK:
            if _WALKER is None and _WALKER_ERROR is None:
                lxml_version, libxml_version = _lxml_versions()
                mod = module()
                if mod is None:
                    _WALKER_ERROR = "the native core is not installed"
                elif not hasattr(mod, "HtmlWalker"):
                    _WALKER_ERROR = "the installed native core has no HTML walk (rebuild it: ./dev test)"
                elif (lxml_version[0], libxml_version[0]) not in HTML_VERIFIED:
                    _WALKER_ERROR = (
                        f"lxml {'.'.join(map(str, lxml_version))} with libxml2 {'.'.join(map(str, libxml_version))} "
                        "is not verified for it (_native.HTML_VERIFIED)"
                    )
                else:
                    from lxml import etree

                    ex = importlib.import_module("scrapy_simhash.text.extract")
                    _WALKER = mod.HtmlWalker(
                        etree._Element,
                        _ranges(r"\s"),
                        sorted(ex._BLOCK),
                        sorted(ex._INVISIBLE),
                        sorted(ex._CHROME_TAGS),
                        ex._WRAPPER_PARAGRAPHS,
                        lambda attrs: ex._cached_search(ex._NEGATIVE_CACHE, ex._NEGATIVE_RE, attrs),
                        lambda attrs: ex._cached_search(ex._META_CACHE, ex._META_CLASS_RE, attrs),
                        lambda style: ex._DISPLAY_NONE_RE.search(style) is not None,
                        "".join(chr(c) for start, end in _ranges(ex._PUNCT_RE.pattern) for c in range(start, end)),
                        "".join(sorted(ex._SENTENCE_END)),
                        list(ex._ELLIPSES),
                        _ranges(r"\d"),
                        list(ex._META_KEYWORDS_SORTED),
                        _literal_words(ex._META_HAN_KEYWORD_RE.pattern),
                        ex._boilerplate_any,
                        lambda text: ex._BOILERPLATE_RE.match(text) is not None,
                        ex._is_meta_text,
                    )
                    _ranges_done()
    return _WALKER


def _literal_words(pattern: str) -> list[str]:
    """The words of a regex that is an alternation of literal words (checked)."""
    words = pattern.split("|")
    if not all(re.fullmatch(r"\w+", w) for w in words):
        raise ValueError(f"not an alternation of words: {pattern!r}")
    return words


_FLAT: Any = None


def flat_text() -> Any:
    """The shared ``scrapy_simhash_native.FlatText``, or ``None`` (not installed, an older build,
    a Python whose ``html`` module lacks the tables it reads)."""
    global _FLAT
    if _FLAT is None:
        with _LOCK:
            if _FLAT is None:
                _FLAT = _make_flat_text() or False
    return _FLAT or None


def _make_flat_text() -> Any:
    import html
    import html.entities

    mod = module()
    charrefs = getattr(html, "_invalid_charrefs", None)
    codepoints = getattr(html, "_invalid_codepoints", None)
    if mod is None or not hasattr(mod, "FlatText") or charrefs is None or codepoints is None:
        return None
    ex = importlib.import_module("scrapy_simhash.text.extract")
    # The characters that re matches to an ASCII letter ignoring case (the letters, and a few
    # others: the Kelvin sign, the long s...), and the pairs that a back-reference ignoring case
    # accepts among them.
    letters = [chr(c) for start, end in _ranges("(?i)[a-z]") for c in range(start, end)]
    folds = [(c, a) for c in letters for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(a, c, re.IGNORECASE)]
    same = re.compile(r"(.)\1", re.IGNORECASE)
    backrefs = [(a, b) for a in letters for b in letters if a != b and same.fullmatch(a + b)]
    flat = mod.FlatText(
        _ranges(r"\w"),
        _ranges(r"\s"),
        _ranges(r"\d"),
        folds,
        backrefs,
        [*ex._INVISIBLE_ELEMENTS.split("|"), "title"],
        sorted(ex._BLOCK),
        html.entities.html5,
        charrefs,
        set(codepoints),
    )
    _ranges_done()
    return flat


def html_walk_status() -> str:
    """For the start-up line: "native HTML walk", or "Python HTML walk (<why>)"."""
    if html_walker() is not None:
        return "native HTML walk"
    return f"Python HTML walk ({_WALKER_ERROR})"


def title_parts(root: Any) -> tuple[Any, ...] | None:
    """What ``extract._find_title`` reads of ``root``'s tree, natively (``HtmlWalker.title_parts``);
    ``None`` when the Python reads must run."""
    walker = html_walker()
    if walker is None:
        return None
    from lxml import etree

    if type(root) is not etree._Element:
        return None
    return walker.title_parts(root)  # type: ignore[no-any-return]


def walk_html(root: Any, remaining: float | None, max_blocks: int, step: int) -> tuple[Any, ...] | None:
    """The native walk of ``root`` (see ``HtmlWalker.walk``): ``("ok", ...)``, ``("large",)`` or
    ``("budget",)``; ``None`` when the Python walk must run (counted in :data:`HTML_WALKS`)."""
    walker = html_walker()
    if walker is None:
        HTML_WALKS[f"python: {_WALKER_ERROR}"] += 1
        return None
    from lxml import etree

    if type(root) is not etree._Element:
        HTML_WALKS[f"python: not an lxml.etree._Element ({type(root).__name__})"] += 1
        return None
    result = walker.walk(root, remaining=remaining, max_blocks=max_blocks, step=step)
    if result[0] == "unsupported":
        HTML_WALKS[f"python: {result[1]}"] += 1
        return None
    HTML_WALKS["native"] += 1
    return result  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- the decision's bookkeeping


_DECISION = ("pack_record", "unpack_record", "schedule_numbers", "schedule_state")


def decision() -> Any:
    """The module when it has the record codec and the schedule's numbers and state
    (``native/src/decision.rs``: :data:`_DECISION`), else ``None`` (not installed, or built before
    them). They give the Python code's bytes, numbers and states exactly and answer ``None`` where
    they do not handle a case; the callers (``recrawl``, ``schedule``) then run the Python code.

    They do not follow ``native=False`` / ``SIMHASH_NATIVE = False``, on purpose: that setting
    chooses how fingerprints are computed (a Fingerprinter's option), while the codec is the
    store's record format, chosen once per process where ``recrawl`` is imported, with no
    Fingerprinter at hand; its bytes are the Python code's either way
    (``tests/test_native_decision.py``), so following the setting would change nothing stored or
    decided. A process without the module (``tests/test_native_fallback.py``) runs the Python
    codec."""
    mod = module()
    return mod if mod is not None and all(hasattr(mod, name) for name in _DECISION) else None
