"""The native regular-expression fallback (``FlatText``, native/src/flat.rs) gives the Python
reference's title and text (``extract.TITLE_RE`` + ``_unescape``, ``_flat_text``) on real pages,
the pathological pages and generated hostile strings, and ``templates.line_keys`` gives
``line_key``'s keys."""

from __future__ import annotations

import functools
import importlib
import random
from pathlib import Path

import pytest
from helpers.ci import native_required
from helpers.data import load_pages
from helpers.native_fuzz import flat_fuzz, flat_outcomes, pathological_pages

from scrapy_simhash.fingerprint import templates
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.text.features import normalize
from scrapy_simhash.text.native import native_flat_text

ex = importlib.import_module("scrapy_simhash.text.extract")  # the package exports the function too

REPO = Path(__file__).resolve().parents[2]
DOC = Path("/usr/share/doc")

if native_flat_text() is None:
    if native_required():
        raise RuntimeError("CI runs the native tests: the native core has no FlatText")
    pytest.skip("the native core is not installed (or has no FlatText)", allow_module_level=True)


def _prepared(page: str | bytes) -> str:
    return ex.prepare(ex.decode_html(page)[0] if isinstance(page, bytes) else page)


@functools.cache
def _real_pages() -> list[tuple[str, str]]:
    out = [(f"{name}[{i}]", _prepared(p)) for name, bodies in load_pages().items() for i, p in enumerate(bodies)]
    docs = sorted(f for f in DOC.glob("*/**/*.html") if f.is_file())
    out += [(str(f), _prepared(f.read_bytes())) for f in random.Random(4).sample(docs, min(len(docs), 150))]
    out += [(p.name, _prepared(p.read_bytes())) for p in sorted(REPO.glob("example_project/site/**/*.html"))]
    return out


@pytest.mark.slow
def test_real_pages_identical() -> None:
    pages = _real_pages()
    assert len(pages) >= 20
    for name, page in pages:
        assert flat_outcomes(page, True) == flat_outcomes(page, False), name


def test_pathological_pages_identical_and_the_fallback_runs_natively() -> None:
    native, python = Fingerprinter(), Fingerprinter(native=False)
    for name, page in pathological_pages(0).items():
        if name == "script-10mb":  # its script is cut before the fallback could see it
            continue
        assert flat_outcomes(_prepared(page), True) == flat_outcomes(_prepared(page), False), name
    page = pathological_pages(0)["br-250k"]
    a, b = native.fingerprint_page(page), python.fingerprint_page(page)
    assert a.method == b.method == "large"
    assert (a.fp, a.title, a.visible, a.sketch) == (b.fp, b.title, b.visible, b.sketch)


def test_generated_hostile_strings_identical() -> None:
    assert flat_fuzz(3000, seed=5) == 0  # bench_native.py --flat-fuzz 100000: the same, at scale


@pytest.mark.parametrize(
    "page",
    [
        "<title>A &amp; B &ampx; &notit;</title><p>x&nbsp;y</p><script>var a='<p>'</script >z",
        "&#x41;&#65&#0;&#128;&#xD800;&#1114112;&#11;&#x;&#;&&#X1F600;&#xFFFE;&#13;",
        "<SCR\u0130PT>a</scr\u0130pt>b<\u017fcript>c</script>d<\u017fcript>e</\u017fcript>f",
        "<t\u0131tle>T</TITLE><titlex>no</title><title>\u212a</title",
        "<tr\n>a</TD\t><br/>b</ blockquote><p>c\u3000\n\u00a0d\x1c\n\n e \u2028 f</p>",
        "<p>unclosed <script> and <style",
    ],
)
def test_edge_cases_identical(page: str) -> None:
    assert flat_outcomes(page, True) == flat_outcomes(page, False)


def test_a_long_decimal_reference_is_no_crash() -> None:
    """int() refuses over 4,300 digits: the reference reads the number (a code point or not)."""
    for digits, expected in (("0" * 5000 + "65", "A"), ("1" * 5000, "\ufffd"), ("0" * 5000, "\ufffd")):
        page = f"<p>x&#{digits};y</p>"
        assert ex.unescape(page) == f"<p>x{expected}y</p>"
        assert flat_outcomes(page, True) == flat_outcomes(page, False) == (None, f"x{expected}y")
    big = "<html><body>" + "<br>w" * 70_000 + "&#" + "9" * 5000 + ";</body></html>"
    for native in (True, False):
        doc = ex.extract(big, native=native)
        assert doc.method == "large" and doc.text.endswith("w\ufffd")


def test_line_keys_are_line_key() -> None:
    lines = [
        "Ｍｅｎｕ 12",
        "menu  7",
        "",
        "  ΑΣ x",
        "a\u2028b ١٢٣ c",
        "\x1c x \x85",
        "İ K ſ",
        "ΣΑΣ",
        "line\nbreak",
        "lone \ud800 surrogate",
    ]
    for _, page in _real_pages()[:200]:
        lines += ex.flat_text(page).split("\n")[:50]
    expected = [templates.line_key(line) for line in lines]
    templates._KEYS.clear()
    assert templates.line_keys(lines) == expected
    assert templates.line_keys(lines) == expected  # from the cache
    plain = [line for line in lines if "\n" not in line and "\ud800" not in line]
    expected = [templates.line_key(line) for line in plain]
    assert native_flat_text().line_keys(normalize("\n".join(plain))) == expected
    templates._KEYS.clear()
    assert templates.line_keys(plain) == expected
