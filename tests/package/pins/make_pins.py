"""The pinned set: what the package computes on a fixed sample, kept in ``pins.json`` so that a
move or a restructure of the code cannot change it unnoticed (``test_pins.py`` recomputes it).

Recorded per page: the fingerprint on both paths (native and Python), the fallback, the
extraction method and coverage, the change sketch, the content key and the novelty text
(``PageFingerprint.own.novelty_text()``); per step of a short :class:`ChangeTracker` sequence on an
LMDB index (new, copy, edit, refetch, short pages and their copies): the verdict, distance and
duplicated key; then the bytes of every record written.

The sample: a few pages of the shared data (``../shared/data`` beside the repository: English
news HTML, GBK-encoded Chinese news HTML, Chinese text, revision pairs) and generated pages. Pages
from the shared data are pinned under ``shared`` and checked only where the data is present.

Regenerate (from the code the pins must hold for, e.g. main's)::

    PYTHONPATH=<checkout> python tests/package/pins/make_pins.py
"""

from __future__ import annotations

import gzip
import inspect
import itertools
import json
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
PINS = Path(__file__).resolve().parent / "pins.json"

_WORDS = (
    "harbour crane river orchard apple village market bridge engine signal garden winter summer "
    "library council railway station teacher student museum painting theatre festival doctor "
    "hospital bakery bread cheese mountain valley forest meadow farmer tractor weather storm"
).split()


def generated_pages() -> dict[str, str]:
    """Deterministic pages: an article, its copy, an edit, a short page and a Chinese one."""
    def paragraph(seed: int, n: int = 60) -> str:
        return " ".join(_WORDS[(seed * 7 + i * i * 3 + i) % len(_WORDS)] for i in range(n)) + "."

    def page(title: str, paragraphs: list[str], footer: str = "Contact us. Privacy policy.") -> str:
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        return (
            f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
            f"<article><h1>{title}</h1>{body}</article><footer>{footer}</footer></body></html>"
        )

    article = [paragraph(s) for s in range(1, 6)]
    edited = [*article[:4], paragraph(40, 90)]
    zh = "今天的天气很好，我们一家人去公园散步，还看到了很多盛开的花。这家餐厅的菜味道一般，服务也不到位。"
    return {
        "article": page("Harbour cranes return", article),
        "edit": page("Harbour cranes return", edited),
        "other": page("Orchard keeps apples", [paragraph(s) for s in range(11, 16)]),
        "short": page("Not found", ["The page you asked for is not here."]),
        "zh": page("公园", [zh * 3, zh[::-1] * 2]),
    }


def api_page() -> str:
    """An API reference page: its own heading, declaration and description above long inherited
    docs (pinned with the pages, not in the tracker sequence, whose pins stay as they were)."""
    inherited = "".join(
        "<p>" + " ".join(_WORDS[(seed * 5 + i * i + 2 * i) % len(_WORDS)] for i in range(60)) + ".</p>"
        for seed in range(21, 25)
    )
    return (
        "<html><head><title>Crane (Harbour API)</title></head><body><main><div class='header'>"
        "<h1>Class Crane</h1></div><div class='sig'>public class <a href='#'>Crane</a> extends "
        "<a href='#'>Machine</a></div><div class='block'>A crane that lifts containers.</div>"
        f"<section><h2>Methods inherited from Machine</h2>{inherited}</section></main></body></html>"
    )


def shared_pages() -> dict[str, str | bytes]:
    """A few pages of the shared data (empty when it is absent)."""
    pages: dict[str, str | bytes] = {}
    if not DATA.is_dir():
        return pages
    for path in sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))[:6]:
        pages[f"aeb/{path.name[:12]}"] = gzip.decompress(path.read_bytes())
    for path in sorted((DATA / "zh-web-cee" / "original").glob("*.html"))[:6]:
        pages[f"cee/{path.name[:8]}"] = path.read_bytes()  # GBK, mostly without a declared charset
    with gzip.open(DATA / "zh-text" / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz", "rt") as f:
        for i, line in enumerate(itertools.islice((x for x in f if len(x) > 200), 4)):
            pages[f"clue/{i}"] = f"<html><body><p>{line.strip()}</p></body></html>"
    with gzip.open(DATA / "revisions" / "pairs.jsonl.gz", "rt") as f:
        for i, line in enumerate(itertools.islice(f, 6)):
            pair = json.loads(line)
            for side in ("a", "b"):
                paras = "".join(f"<p>{p}</p>" for p in pair[f"text_{side}"].split("\n\n") if p.strip())
                pages[f"rev/{i}{side}"] = f"<html><body><article>{paras}</article></body></html>"
    return pages


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def page_pins(pages: Mapping[str, str | bytes]) -> dict[str, Any]:
    """Each page's fingerprints (both paths), evidence and sketches."""
    from scrapy_simhash import EmptyTextError, Fingerprinter

    native, python = Fingerprinter(native=True), Fingerprinter(native=False)
    out: dict[str, Any] = {}
    for name, html in pages.items():
        url = f"http://pins.test/{name}"
        row: dict[str, Any] = {}
        for label, fpr in (("native", native), ("python", python)):
            try:
                page = fpr.fingerprint_page(html, url)
            except EmptyTextError:
                row[label] = "empty"
                continue
            row[label] = {
                "fp": format(page.fp, "x"),
                "fallback": page.fallback,
                "method": page.method,
                "coverage": round(page.coverage, 6),
                "sketch": _hex(page.sketch),
                "content_key": page.content_key,
                "novelty": _hex(page.own.novelty_text()) if page.own is not None and page.own.chars else None,
                "fingerprint_text": format(fpr.fingerprint_text(html if isinstance(html, str) else "x"), "x"),
            }
        out[name] = row
    return out


def tracker_pins(pages: Mapping[str, str | bytes]) -> dict[str, Any]:
    """A ChangeTracker sequence on an LMDB index: each step's verdict, then every record's bytes."""
    from scrapy_simhash import Fingerprinter, SimhashIndex
    from scrapy_simhash.schedule import FreshnessPolicy

    try:
        from scrapy_simhash.decision import ChangeTracker
    except ImportError:  # the layout before the decision layer (to regenerate from older code)
        from scrapy_simhash.recrawl import ChangeTracker  # type: ignore[no-redef,import-not-found]

    fpr = Fingerprinter()
    names = list(pages)
    steps = [(f"u/{n}", n) for n in names]  # every page new (or a copy of an earlier one)
    steps += [(f"copy/{n}", n) for n in names[:4]]  # copies under other URLs
    steps += [(f"u/{n}", n) for n in names[:3]]  # unchanged refetches
    steps += [(f"u/{a}", b) for a, b in itertools.pairwise(names[:4])]  # a URL whose page changed
    log: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        index = SimhashIndex.open(Path(tmp) / "index", fingerprint_settings=fpr.settings)
        try:
            tracker = ChangeTracker(index, policy=FreshnessPolicy(), keep_adds=150)
            for i, (key, name) in enumerate(steps):
                page = fpr.fingerprint_page(pages[name], f"http://pins.test/{key}")
                now = 1_000_000.0 + 3600.0 * i
                if "page" in inspect.signature(tracker.observe).parameters:
                    verdict = tracker.observe(key, page, now)
                else:  # the keyword form of the code before the tracker took the page
                    older: Any = tracker  # its observe of then, not the annotated one of now
                    verdict = older.observe(
                        key,
                        page.fp,
                        now,
                        may_match=page.may_match,
                        sketch=page.sketch,
                        fallback=page.fallback,
                        content_key=page.content_key,
                        visible=page.visible,
                        own=page.own,
                    )
                log.append([key, name, str(verdict.verdict), verdict.distance, verdict.duplicate_of, verdict.adds_to])
            keys = sorted({key for key, _ in steps})
            records = dict(zip(keys, (_hex(r) for r in index.get_records(keys)), strict=True))
        finally:
            index.close()
    return {"steps": log, "records": records}


def compute(shared: bool) -> dict[str, Any]:
    """The pinned values of the generated pages, and of the shared data's when ``shared``."""
    pages: Mapping[str, str | bytes] = {**generated_pages(), "api": api_page()}
    out = {"generated": {"pages": page_pins(pages), "tracker": tracker_pins(generated_pages())}}
    if shared:
        pages = shared_pages()
        out["shared"] = {"pages": page_pins(pages), "tracker": tracker_pins(pages)}
    return out


def main() -> int:
    if not DATA.is_dir():
        print(f"{DATA} not found: the pins need the shared data", file=sys.stderr)
        return 1
    PINS.write_text(json.dumps(compute(True), indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {PINS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
