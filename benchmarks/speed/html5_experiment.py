"""Experiment (issue 12, the HTML half): would an HTML5 parser (html5ever) give our extraction the
tree that lxml (libxml2's HTML parser with recovery) gives it? What it showed: no. html5lib's
trees changed 3% of the Chinese pages' fingerprints and about 10% of their visible text, so the
native walk keeps lxml's parse (kept here as the record of that result, not run by ./dev bench).

Run: ``.venv/bin/pip install html5lib markupever && .venv/bin/python benchmarks/speed/html5_experiment.py``
(about 2 minutes; html5lib and markupever are for this experiment only).

1. Same outputs: every page of shared/data (zh-web-cee originals, scrapinghub-aeb) and a sample
   of the Debian documentation pages under /usr/share/doc (every ``--step``-th, sorted) go
   through ``extract.extract`` twice: as it is (lxml), and with its parse step swapped for
   html5lib building an lxml tree (html5lib is the WHATWG reference algorithm in Python that
   html5ever passes the same tree-construction tests as; comments dropped as our lxml parser
   does). Counted: pages whose title, main text and visible text are identical, and whose
   fingerprints are identical.
2. Parse speed: lxml's parse (our parser options) vs html5ever (markupever) on the same pages,
   median ms and MB/s: what the native parser would cost.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import re
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"
sys.path.insert(0, str(REPO))

import contextlib

import html5lib
import markupever
from lxml import etree

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.text.extract import decode_html, extract

extract_mod = importlib.import_module("scrapy_simhash.text.extract")  # the package exports a function of this name

clock = time.perf_counter


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _copy(src, parent):
    """xml.etree element -> lxml element under ``parent`` (comments dropped, as our lxml parser
    does: the text after a comment joins the text before it)."""
    last = None
    for child in src:
        if not isinstance(child.tag, str):  # a comment
            if child.tail:
                if last is None:
                    parent.text = (parent.text or "") + _CONTROL.sub("", child.tail)
                else:
                    last.tail = (last.tail or "") + _CONTROL.sub("", child.tail)
            continue
        try:
            el = etree.SubElement(parent, child.tag)
        except ValueError:  # a name lxml refuses
            el = etree.SubElement(parent, re.sub(r"[^A-Za-z0-9_.-]", "_", child.tag) or "x")
        for k, v in child.attrib.items():
            with contextlib.suppress(ValueError):
                el.set(k, _CONTROL.sub("", v))
        el.text = _CONTROL.sub("", child.text) if child.text else None
        el.tail = _CONTROL.sub("", child.tail) if child.tail else None
        _copy(child, el)
        last = el


def html5_parse(html: str):
    """``extract.parse_prepared`` with html5lib's tree (the WHATWG algorithm) as an lxml tree."""
    if not html.strip():
        return None
    src = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)
    root = etree.Element("html")
    _copy(src, root)
    return root


def load(step: int) -> dict[str, list[bytes]]:
    pages = {
        "zh-web-cee": [p.read_bytes() for p in sorted((DATA / "zh-web-cee" / "original").glob("*.html"))],
        "scrapinghub-aeb": [
            gzip.decompress(p.read_bytes()) for p in sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))
        ],
    }
    docs = sorted(Path("/usr/share/doc").rglob("*.html"))[::step]
    if docs:
        pages["debian-doc"] = [p.read_bytes() for p in docs]
    return pages


def fp(f: Fingerprinter, body: bytes) -> int | None:
    try:
        return f.fingerprint_page(body).fp
    except EmptyTextError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=200, help="every N-th Debian documentation page")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # html5lib's DataLossWarning on names XML cannot hold
    f = Fingerprinter(time_budget=0)
    lxml_parse = extract_mod.parse_prepared
    print(f"lxml {etree.LXML_VERSION} with libxml2 {etree.LIBXML_VERSION}")
    print(
        f"{'pages':<16}{'n':>5}{'same title':>11}{'same text':>10}{'same visible':>13}{'same fp':>9}"
        f"{'lxml ms':>9}{'h5ever ms':>10}{'lxml MB/s':>10}{'h5ever MB/s':>12}"
    )
    for name, bodies in load(args.step).items():
        same = [0, 0, 0, 0]
        t_lxml: list[float] = []
        t_h5: list[float] = []
        for body in bodies:
            extract_mod.parse_prepared = lxml_parse
            a, fa = extract(body, time_budget=None), fp(f, body)
            extract_mod.parse_prepared = html5_parse
            b, fb = extract(body, time_budget=None), fp(f, body)
            extract_mod.parse_prepared = lxml_parse
            same[0] += a.title == b.title
            same[1] += a.text == b.text
            same[2] += a.visible == b.visible
            same[3] += fa == fb
            html = decode_html(body)[0]
            data = html.encode("utf-8", "replace")
            t = clock()
            etree.fromstring(data, extract_mod._parser())
            t_lxml.append(clock() - t)
            t = clock()
            markupever.parse(html, markupever.HtmlOptions())
            t_h5.append(clock() - t)
        n = len(bodies)
        mb = sum(map(len, bodies)) / 1e6
        print(
            f"{name:<16}{n:>5}"
            + "".join(f"{s / n:>{w}.1%}" for s, w in zip(same, (11, 10, 13, 9)))
            + f"{statistics.median(t_lxml) * 1e3:>9.2f}{statistics.median(t_h5) * 1e3:>10.2f}"
            f"{mb / sum(t_lxml):>10.1f}{mb / sum(t_h5):>12.1f}"
        )


if __name__ == "__main__":
    main()
