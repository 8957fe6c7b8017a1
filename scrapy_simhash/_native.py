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
"""

from __future__ import annotations

import importlib
import re
import threading
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


def _ranges(pattern: str) -> list[tuple[int, int]]:
    """Half-open code point ranges of the characters that ``re`` matches with ``pattern``."""
    every = "".join(map(chr, range(0x110000)))
    return [m.span() for m in re.finditer(pattern + "+", every)]


def core() -> Any:
    """The shared ``scrapy_simhash_native.Core`` (jieba's dictionary loaded once per process)."""
    global _CORE
    if _CORE is None:
        with _LOCK:
            if _CORE is None:
                require()
                from scrapy_simhash import features

                _CORE = _MODULE.Core(
                    str(features._jieba_dict_path()),
                    sorted(features._STOP_AND_NUMBER),
                    _ranges(r"[^\W\d_]"),
                    _ranges(r"\d"),
                    _ranges(r"\s"),
                    features._LOG_TF,
                )
    return _CORE
