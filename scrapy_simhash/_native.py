"""The one boundary to the optional native core: the companion distribution
``scrapy-simhash-native`` (module ``scrapy_simhash_native``, Rust, built from ``native/`` with
maturin).

The core is imported here and nowhere else, once, and used only when its ``__version__`` is the
package's (``scrapy_simhash.__version__``) and it has every function the package calls
(:data:`API`); otherwise the Python code runs everywhere, :func:`unavailable` says why (one warning
in the log names the fix: ``pip install ./native`` again), and ``native=True`` /
``SIMHASH_NATIVE = True`` fails with that message (:func:`require`).

Each module whose work the core can do takes its counterpart from one function here and chooses
once, the way CPython's ``json`` takes ``_json``; the Python code is the reference and the fallback,
and gives the same values (the differential tests in ``tests/``):

================================  ================================  ===============================
chosen in (for)                   native counterpart                made by
================================  ================================  ===============================
``text.features`` (features,      text -> tokens -> fingerprint,    :func:`core` (``Core``)
``fingerprint.simhash``)          change sketch, line keys
``text.native`` (``text.blocks``, the walk over lxml's tree and    :func:`html_walker`
``text.region``)                  the blocks' classes               (``HtmlWalker``)
``text.native`` (``text.flat``,   the regular-expression fallback,  :func:`flat_text`
``fingerprint.templates``)        the template line keys            (``FlatText``)
================================  ================================  ===============================

The record codec, the schedule's numbers and the title are Python only: natively they saved under
1% of a page (``native/``'s measurements), not worth a second implementation to keep identical.

This module imports no other module of the package (but ``_version``): what a counterpart needs
(the tables of the running Python's ``re`` and ``html``, a module's constants, the predicates the
walk calls back) is passed explicitly by the module it serves.
"""

from __future__ import annotations

import array
import importlib
import logging
import re
import sys
import threading
from functools import cache
from typing import TYPE_CHECKING, Any

from scrapy_simhash._version import __version__

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

logger = logging.getLogger(__name__)

#: The weightings the core computes (``Fingerprinter(weighting=...)``).
NATIVE_WEIGHTINGS = ("log_tf", "tf")
#: What the package calls in the core: a build without one of them is not used (a method names
#: its class: a build of the same version from older sources lacks it).
API = (
    "Core",
    "HtmlWalker",
    "FlatText",
    "HtmlWalker.comment_runs",
    "HtmlWalker.class_words",
    "HtmlWalker.rule_names",
    "HtmlWalker.main_blocks",
    "HtmlWalker.walk_fields",
)
_FIX = "pip install ./native again from this checkout (needs a Rust toolchain)"
_INSTALL_HINT = (
    "the native core (scrapy_simhash_native) is not installed: pip install ./native from a checkout "
    "(needs a Rust toolchain), or pass native=False / set SIMHASH_NATIVE = False"
)

_MODULE: Any = None
_UNAVAILABLE: str | None = None
_LOADED = False
_CORE: Any = None
_LOCK = threading.Lock()


def module() -> Any:
    """The ``scrapy_simhash_native`` module, or ``None`` when it does not import, is of another
    version than the package or lacks part of :data:`API` (:func:`unavailable` says which)."""
    global _MODULE, _UNAVAILABLE, _LOADED
    if not _LOADED:
        with _LOCK:
            if not _LOADED:
                _MODULE, _UNAVAILABLE = _load()
                _LOADED = True
    return _MODULE


def _load() -> tuple[Any, str | None]:
    try:
        mod = importlib.import_module("scrapy_simhash_native")
    except ImportError as exc:  # not installed, or built for another platform: the Python path, quietly
        return None, f"{_INSTALL_HINT} ({exc})"
    mod, why = check(mod)
    if why is not None:  # installed but not usable: said once, with the fix
        logger.warning("The native core is not used: %s", why)
    return mod, why


def _has(mod: Any, dotted: str) -> bool:
    for name in dotted.split("."):
        if not hasattr(mod, name):
            return False
        mod = getattr(mod, name)
    return True


def check(mod: Any) -> tuple[Any, str | None]:
    """``(mod, None)`` when ``mod`` is a core this package may use, else ``(None, why)``."""
    version = getattr(mod, "__version__", None)
    if version != __version__:
        return None, f"scrapy_simhash_native {version} is not scrapy-simhash {__version__}'s: {_FIX}"
    missing = [name for name in API if not _has(mod, name)]
    if missing:
        return None, f"scrapy_simhash_native {version} lacks {', '.join(missing)} (an older build): {_FIX}"
    return mod, None


def unavailable() -> str | None:
    """Why the core is not used (``None``: it is)."""
    module()
    return _UNAVAILABLE


def require() -> None:
    """Raise ImportError (naming the fix) when the core is not used."""
    if module() is None:
        raise ImportError(_UNAVAILABLE)


# --------------------------------------------------------------------------- the running Python's tables


@cache
def _every() -> str:
    """Every code point, in order (4.4 MB: dropped by :func:`ranges_done` once the tables are made).
    Decoded from UTF-32 in one piece: joining a million one-character strings made ~65 MB of them
    at once, a peak of the crawler's memory that it kept in its arenas."""
    codes = array.array("I", range(0x110000))  # C's unsigned int: 4 bytes on every supported platform
    return codes.tobytes().decode(f"utf-32-{'le' if sys.byteorder == 'little' else 'be'}", "surrogatepass")


@cache
def ranges(pattern: str) -> list[tuple[int, int]]:
    """Half-open code point ranges of the characters that ``re`` matches with ``pattern``."""
    return [m.span() for m in re.finditer(pattern + "+", _every())]


def chars(pattern: str) -> str:
    """Every character that ``re`` matches with ``pattern``, in order."""
    return "".join(chr(c) for start, end in ranges(pattern) for c in range(start, end))


def ranges_done() -> None:
    """Drop the table of every code point once a counterpart is made."""
    _every.cache_clear()


def literal_words(pattern: str) -> list[str]:
    """The words of a regex that is an alternation of literal words (checked)."""
    words = pattern.split("|")
    if not all(re.fullmatch(r"\w+", w) for w in words):
        raise ValueError(f"not an alternation of words: {pattern!r}")
    return words


# --------------------------------------------------------------------------- the counterparts


def core(dict_path: str, stop_words: Iterable[str], log_tf: Sequence[float]) -> Any:
    """The shared ``Core`` (jieba's dictionary ``dict_path`` loaded once per process; the arguments
    of the first call make it); ``None`` when the core is not used."""
    global _CORE
    if _CORE is None and module() is not None:
        with _LOCK:
            if _CORE is None:
                _CORE = _MODULE.Core(
                    dict_path, sorted(stop_words), ranges(r"[^\W\d_]"), ranges(r"\d"), ranges(r"\s"), list(log_tf)
                )
                ranges_done()
    return _CORE


def html_walker(element_type: type, rules: dict[str, Any]) -> Any:
    """A ``HtmlWalker`` over ``element_type`` (lxml's ``_Element``, or a subclass such as
    ``lxml.html.HtmlElement``, whose instances start with the same struct; the walker reads that
    exact class only) with ``rules`` (``text.rules.native_rules``: its predicates' answers are read
    as truth values); ``None`` when the core is not used."""
    mod = module()
    if mod is None:
        return None
    rules = {**rules, "punct": chars(rules["punct"]), "meta_han_keywords": literal_words(rules["meta_han_keywords"])}
    walker = mod.HtmlWalker(element_type, ranges(r"\s"), ranges(r"\d"), rules)
    ranges_done()
    return walker


def flat_text(invisible: Iterable[str], block: Iterable[str]) -> Any:
    """A ``FlatText`` (the regular-expression fallback of ``text.extract``: its ``invisible`` and
    ``block`` tags) with the tables of the running Python's ``re`` and ``html``; ``None`` when the
    core is not used or the ``html`` module lacks the tables it reads."""
    import html
    import html.entities

    mod = module()
    charrefs = getattr(html, "_invalid_charrefs", None)
    codepoints = getattr(html, "_invalid_codepoints", None)
    if mod is None or charrefs is None or codepoints is None:
        return None
    # The characters that re matches to an ASCII letter ignoring case (the letters, and a few
    # others: the Kelvin sign, the long s...), and the pairs that a back-reference ignoring case
    # accepts among them.
    letters = list(chars("(?i)[a-z]"))
    folds = [(c, a) for c in letters for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(a, c, re.IGNORECASE)]
    same = re.compile(r"(.)\1", re.IGNORECASE)
    backrefs = [(a, b) for a in letters for b in letters if a != b and same.fullmatch(a + b)]
    flat = mod.FlatText(
        ranges(r"\w"),
        ranges(r"\s"),
        ranges(r"\d"),
        folds,
        backrefs,
        list(invisible),
        sorted(block),
        html.entities.html5,
        charrefs,
        set(codepoints),
    )
    ranges_done()
    return flat
