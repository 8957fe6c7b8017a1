"""The one boundary to the native core (``scrapy_simhash._native``): a core of another version, or
one that lacks part of the API, is not used, said once with the fix, and ``native=True`` is refused
with that message."""

from __future__ import annotations

import subprocess
import sys
import types

from scrapy_simhash import __version__, _native

OTHER_VERSION = r"""
import logging, sys, types
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stdout)
fake = types.ModuleType("scrapy_simhash_native")
fake.__version__ = "0.0.1"
sys.modules["scrapy_simhash_native"] = fake
from scrapy_simhash.fingerprint.simhash import Fingerprinter
f = Fingerprinter()
print("native:", f.native, f.html_walk)
print("fingerprint:", f.fingerprint_text("Harbour cranes return after a decade of repairs"))
try:
    Fingerprinter(native=True)
except ImportError as exc:
    print("refused:", exc)
"""


def test_a_core_of_another_version_is_not_used_and_native_true_is_refused() -> None:
    out = subprocess.run([sys.executable, "-c", OTHER_VERSION], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    warnings = [line for line in lines if line.startswith("WARNING")]
    assert warnings == [
        (
            f"WARNING scrapy_simhash._native: The native core is not used: scrapy_simhash_native 0.0.1 is not "
            f"scrapy-simhash {__version__}'s: pip install ./native again from this checkout (needs a Rust toolchain)"
        )
    ]
    assert "native: False Python HTML walk (the native core is not used (scrapy_simhash_native 0.0.1" in out
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    fp = Fingerprinter(native=False).fingerprint_text("Harbour cranes return after a decade of repairs")
    assert f"fingerprint: {fp}" in lines
    refused = next(line for line in lines if line.startswith("refused:"))
    assert "scrapy_simhash_native 0.0.1 is not" in refused and "pip install ./native again" in refused


def test_check_names_what_is_missing() -> None:
    partial = types.SimpleNamespace(__version__=__version__, Core=object, HtmlWalker=object)
    mod, why = _native.check(partial)
    assert mod is None
    assert why is not None and "lacks FlatText" in why and "pip install ./native again" in why
    walker = types.SimpleNamespace(comment_runs=None)
    older = types.SimpleNamespace(__version__=__version__, Core=object, HtmlWalker=walker, FlatText=object)
    why = _native.check(older)[1]
    assert why is not None and "lacks HtmlWalker.class_words" in why  # a build of older sources
    walker.class_words = None
    why = _native.check(older)[1]
    assert why is not None and "lacks HtmlWalker.rule_names" in why  # a walker that took its rules one by one
    walker.rule_names = None
    why = _native.check(older)[1]
    assert why is not None and "lacks HtmlWalker.main_blocks" in why  # one without the content region
    walker.main_blocks = None
    why = _native.check(older)[1]
    assert why is not None and "lacks HtmlWalker.walk_fields" in why  # one whose walk reads no comments
    walker.walk_fields = None
    assert _native.check(older)[1] is None
