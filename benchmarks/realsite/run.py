"""Real-site benchmark: real Scrapy crawls of real documentation sites that nobody here wrote, with the
true duplicates real sites have, judged against each page's whole visible text.

    .venv/bin/python benchmarks/realsite/run.py [--sites python,django,...] [--max-pages N] [--json OUT]
        [--keep DIR] [--no-install] [--url-rules]

Each site comes from a Debian package (installed with apt-get where missing; ``--no-install`` skips
a missing one instead). Its first pages in breadth-first link order from its start page (200, or
the site's own cap: the Python documentation whole; ``--max-pages`` for all sites) are copied to a
temporary directory, duplicates are added (``prepare.py``: a mirror of some pages, print views,
tracking-parameter URLs, soft-404 URLs), and the copy is served on 127.0.0.1 by the benchmark
itself. Then, per site:

1. crawl 1: a real Scrapy crawl with ``ADDONS = {"scrapy_simhash.Addon": 0}`` into an empty index,
   a generic spider that follows every link to a page of the served set;
2. scripted edits of the served copy: on a twentieth of the pages, text blocks of the content area
   are deleted at random until 40% of them and a third of their text are gone (expected
   ``changed``); on another twentieth only the digits of the text's numbers change (tokens that
   start with a digit: dates, counters, version and line numbers; not the digits of words such as
   ``u64``, which are content): expected ``unchanged``;
3. crawl 2 of the same URLs into the same index (no other page may be ``changed``).

Reported per site: pages; drops (``near_duplicate`` verdicts of crawl 1); lossy drops (the
content-loss judge, ``judge.content_loss``): a drop whose page holds at least 100 characters of its
own text that the kept page lacks (the page's lines outside its chrome, less the site's template
lines, those that recur on a tenth of its pages; digits and hex hashes masked; runs of 16 characters
or more), as a count and a share of the pages, each printed with the lines that hold what it loses;
drops whose page and kept page have a character 5-gram Jaccard of their whole visible text under 0.5
(and are not copies the benchmark made); false drops: either, printed with the Jaccard and what was
fingerprinted for each; true drops; recall on the added duplicates (of each group, all but one page
should be dropped by a true drop); the share of each page's visible text that is fingerprinted (median, and the pages under
25%, listed with their titles); the share of each page's content text that is fingerprinted
(``judge.content_share``: the characters of its lines outside its chrome, less the site's template
lines, that the fingerprinted title and text hold; median, and the pages under 25%); change detection; and ms per page: the CPU time of
``Fingerprinter().fingerprint_html`` on every fetched body, after the crawl, in page order (median,
p99, max).

``--url-rules``: both crawls run with ``SIMHASH_URL_RULES`` on. Every request the rules skipped is
fetched from the served copy right after its crawl (before the edits, for crawl 1) and judged by
the product's keep-adds rule (:func:`lossy_skips`: scrapy-simhash's default decision on it after
every page its crawl fetched; a skip is lossy when that page would have been kept), and, for crawl
1, by the content-loss judge against the kept page the rule made it a copy of. Reported per site:
requests skipped (the fetches saved), lossy skips, the rules learned.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from w3lib.url import canonicalize_url

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from crawl import body_file, crawl, serve, split_records
from judge import (
    FALSE_DROP_JACCARD,
    LOSS_CHARS,
    collapse,
    content_loss,
    content_share,
    decode,
    fingerprinted,
    jaccard,
    page_lines,
    parse,
    template_lines,
    visible_text,
)
from prepare import PRINTED_FROM, SOFT404_FILE, Page, apply_edits, build, link_key, plan_edits

from scrapy_simhash import Fingerprinter

LOW_SHARE = 0.25
DEFAULT_PAGES = 200
SHOW = 30  # pages listed at most per list (the JSON has them all)
LOST_LINE = 110  # characters of a lost line printed and kept in the JSON
LOST_SHOW = 8  # lost lines printed per drop


@dataclass(frozen=True)
class Site:
    name: str
    package: str
    root: str  # directory of the HTML files
    start: str  # start page, relative to root
    generator: str
    lang: str
    include: str | None = None  # regex a page's path must match
    max_pages: int = DEFAULT_PAGES  # pages crawled unless --max-pages says otherwise


SITES = [
    # The whole site (530 pages): the crawl of issue 7, whose index and search pages were dropped.
    Site("python", "python3.11-doc", "/usr/share/doc/python3.11/html", "index.html", "Sphinx", "en", max_pages=600),
    Site("django", "python-django-doc", "/usr/share/doc/python-django-doc/html", "index.html", "Sphinx", "en"),
    Site("sphinx", "sphinx-doc", "/usr/share/doc/sphinx-doc/html", "index.html", "Sphinx", "en"),
    Site("scrapy", "python-scrapy-doc", "/usr/share/doc/python-scrapy-doc/html", "index.html", "Sphinx", "en"),
    Site("git", "git-doc", "/usr/share/doc/git-doc", "git.html", "AsciiDoc", "en"),
    Site("handbook-en", "debian-handbook", "/usr/share/doc/debian-handbook/html/en-US", "index.html", "Publican", "en"),
    Site("handbook-zh", "debian-handbook", "/usr/share/doc/debian-handbook/html/zh-CN", "index.html", "Publican", "zh"),
    Site(
        "reference-en",
        "debian-reference-en",
        "/usr/share/debian-reference",
        "index.en.html",
        "DocBook XSL",
        "en",
        r"\.en\.html$",
    ),
    Site(
        "reference-zh",
        "debian-reference-zh-cn",
        "/usr/share/debian-reference",
        "index.zh-cn.html",
        "DocBook XSL",
        "zh",
        r"\.zh-cn\.html$",
    ),
    Site(
        "maint-guide-zh",
        "maint-guide-zh-cn",
        "/usr/share/doc/maint-guide-zh-cn/html",
        "index.zh-cn.html",
        "DocBook XSL",
        "zh",
    ),
    Site(
        "boost", "libboost1.74-doc", "/usr/share/doc/libboost1.74-doc/doc/html", "index.html", "BoostBook/Doxygen", "en"
    ),
    # rust-doc is 500 MB installed: two slices of it, the book and the standard library's API pages.
    Site("rust-book", "rust-doc", "/usr/share/doc/rust-doc/html/book", "index.html", "mdBook", "en"),
    Site("rust-std", "rust-doc", "/usr/share/doc/rust-doc/html/std", "index.html", "rustdoc", "en"),
    # Added after the extraction was done, to check it on sites it was not tuned on.
    Site(
        "postgresql",
        "postgresql-doc-15",
        "/usr/share/doc/postgresql-doc-15/html",
        "index.html",
        "DocBook (SGML)",
        "en",
        max_pages=300,
    ),
    # The Apache manual in 11 languages (untranslated pages are English copies), from the English start page.
    Site(
        "apache",
        "apache2-doc",
        "/usr/share/doc/apache2-doc/manual",
        "en/index.html",
        "Apache XSLT",
        "en",
        max_pages=300,
    ),
    Site("cmake", "cmake-doc", "/usr/share/doc/cmake-doc/html", "index.html", "Sphinx", "en"),
    # Added in the sixth session, out of sample again: three more generators, API references above all.
    Site(
        "commons-lang",
        "libcommons-lang3-java-doc",
        "/usr/share/doc/libcommons-lang3-java/api",
        "index.html",
        "Javadoc",
        "en",
        max_pages=300,
    ),
    Site("glib", "libglib2.0-doc", "/usr/share/gtk-doc/html/glib", "index.html", "gtk-doc", "en"),
    Site("octave", "octave-doc", "/usr/share/doc/octave/octave.html", "index.html", "Texinfo", "en", max_pages=300),
    # Added for the content-loss judge: API references of four more generators (gi-docgen, QDoc,
    # Doxygen, SQLite's own), whose class and function pages share most of their text with their
    # siblings', and a release-notes series.
    Site("gtk4", "libgtk-4-doc", "/usr/share/doc/libgtk-4-doc/gtk4", "index.html", "gi-docgen", "en"),
    Site(
        "qt-widgets",
        "qtbase5-doc-html",
        "/usr/share/qt5/doc",
        "qtwidgets/qtwidgets-module.html",
        "QDoc",
        "en",
        r"^qtwidgets/",
    ),
    Site(
        "xerces", "libxerces-c-doc", "/usr/share/doc/libxerces-c-doc/html/apiDocs-3", "annotated.html", "Doxygen", "en"
    ),
    # SQLite's C API (the session extension's pages, then the core's), from SQLite's own generator.
    Site(
        "sqlite-api",
        "sqlite3-doc",
        "/usr/share/doc/sqlite3",
        "session/intro.html",
        "SQLite (Tcl)",
        "en",
        r"^(c3ref|session)/",
        max_pages=300,
    ),
    # The release-notes series: each patch release's page repeats its base release's notes and adds
    # its own (all 224 release pages, from the chronology).
    Site(
        "sqlite-releases",
        "sqlite3-doc",
        "/usr/share/doc/sqlite3",
        "chronology.html",
        "SQLite (Tcl)",
        "en",
        r"^releaselog/",
        max_pages=240,
    ),
    # Added for issue 34 item 6, not tuned on (run once with the final code): Erlang/OTP's reference
    # manuals (erl_docgen), the ERTS, Kernel and STDLIB applications' module pages (one page per
    # module, its functions' signatures and descriptions), user's guides and release notes, from the
    # list of applications (their pages link to each other's by JavaScript only).
    Site(
        "erlang",
        "erlang-doc",
        "/usr/share/doc/erlang-doc",
        "doc/applications.html",
        "erl_docgen",
        "en",
        r"^(doc/applications\.html|(lib/)?(stdlib|kernel|erts)-[^/]+/doc/html/[^/]+\.html)$",
        max_pages=300,
    ),
    # Docutils' own documentation (docutils-doc), written by its HTML writer (rst2html, not Sphinx).
    Site("docutils", "docutils-doc", "/usr/share/doc/docutils-doc", "docs/index.html", "Docutils (rst2html)", "en"),
    # LilyPond's web site in Chinese with its English pages and the English Music Glossary that it
    # links to (Texinfo via texi2html, LilyPond's own templates): glossary entries of a few lines or
    # a table beside a sidebar of all 360 entries, which outweighs them.
    Site(
        "lilypond-zh",
        "lilypond-doc-html-zh",
        "/usr/share/doc/lilypond/html/Documentation",
        "web/manuals.zh.html",
        "texi2html (LilyPond)",
        "zh",
        r"^(web/[^/.]+(\.zh)?\.html|music-glossary/[^/]+\.html)$",
        max_pages=300,
    ),
    # Added for issue 34: Haskell's libraries (Haddock), from the unix package's contents, whose
    # modules come in pairs (System.Posix.Files and its ByteString twin: the same docs, other
    # signatures); module pages and package contents, not the hyperlinked sources.
    Site(
        "haddock",
        "ghc-doc",
        "/usr/share/doc/ghc-doc/html/libraries",
        "unix-2.7.2.2/index.html",
        "Haddock",
        "en",
        r"^[^/]+/[^/]+\.html$",
        max_pages=300,
    ),
]


# ----------------------------------------------------------------------------------- packages
def ensure_packages(sites: list[Site], install: bool) -> list[Site]:
    """The sites whose package is installed (installing the missing ones with apt-get if ``install``)."""
    missing = sorted({s.package for s in sites if not Path(s.root, s.start).is_file()})
    if missing and install:
        print(f"installing {' '.join(missing)} with apt-get ...", flush=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], check=False)
    ready = [s for s in sites if Path(s.root, s.start).is_file()]
    for s in sites:
        if s not in ready:
            print(f"skipped {s.name}: {Path(s.root, s.start)} is missing (apt-get install {s.package})")
    return ready


# ----------------------------------------------------------------------------------- one site
def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


class Fetched:
    """A fetched page of crawl 1: its visible text, what was fingerprinted, fingerprinting time."""

    def __init__(self, record: dict[str, Any], body: bytes, page: Page | None, fingerprinter: Any) -> None:
        self.record = record
        self.page = page
        ctype = record["content_type"] or None
        # Timed first, before anything else reads the page (no cache holds its tokens yet), as CPU
        # time of this thread: other processes on the machine do not inflate it.
        started = time.thread_time()
        with contextlib.suppress(ValueError):  # EmptyTextError: no text at all
            fingerprinter.fingerprint_html(body, record["url"], content_type=ctype)
        self.ms = (time.thread_time() - started) * 1000
        root = parse(decode(body, ctype))
        self.page_title = collapse(root.findtext(".//title") or "") if root is not None else ""
        self.visible = visible_text(root)
        self.lines = page_lines(body, ctype)
        if page is not None and page.kind == "print":  # the line prepare.print_view adds is not the site's
            self.lines = [line for line in self.lines if not line.startswith(PRINTED_FROM)]
        self.title, self.text = fingerprinted(body, ctype)
        self.share = min(1.0, len(collapse(self.text)) / len(self.visible)) if self.visible else 1.0
        self.content_share = 1.0  # of its content text (set by run_site: it needs the site's template)

    @property
    def group(self) -> str | None:
        return self.page.group if self.page else None

    def describe(self, limit: int = 160) -> str:
        text = collapse(self.text)
        more = f" ... ({len(text)} chars)" if len(text) > limit else ""
        return f"title={self.title!r} text={text[:limit]!r}{more}"


def fetch_body(url: str) -> tuple[bytes, str]:
    """The body and Content-Type of ``url`` (a page of the served copy)."""
    with urllib.request.urlopen(url, timeout=60) as answer:
        return answer.read(), answer.headers.get("Content-Type") or ""


def lossy_skips(fetched: list[tuple[str, bytes, str]], skipped: list[tuple[str, bytes, str]]) -> list[str]:
    """The URLs of ``skipped`` (url, body, Content-Type) that scrapy-simhash's default decision
    would keep (``new``) after the ``fetched`` pages, in their order, each skip decided alone."""
    from scrapy.settings import Settings

    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.scrapy.component import canonical_key
    from scrapy_simhash.scrapy.settings import build_fingerprinter, load_config
    from scrapy_simhash.store.index import SimhashIndex

    config = load_config(Settings({"SIMHASH_ENABLED": True}))
    fingerprinter = build_fingerprinter(config)
    tracker = ChangeTracker(SimhashIndex(**config.index_kwargs()), **config.tracker_kwargs())

    def observe(url: str, body: bytes, ctype: str) -> str:
        try:
            page = fingerprinter.fingerprint_page(body, url, content_type=ctype or None)
        except ValueError:  # no text at all: not a page the middleware decides
            return "no text"
        return tracker.observe(canonical_key(url), page, now=1.0).verdict

    for url, body, ctype in fetched:
        observe(url, body, ctype)
    lossy = []
    for url, body, ctype in skipped:
        key = canonical_key(url)
        if observe(url, body, ctype) == "new":
            lossy.append(url)
        tracker.index.remove(key)  # each skip judged against the fetched pages only
        tracker.index.delete_record(key)
    return lossy


def run_site(site: Site, work: Path, max_pages: int, url_rules: bool = False) -> dict[str, Any]:
    """Builds, serves and crawls one site twice (edits in between); returns its figures
    (``url_rules``: crawls with the URL rules on, and the judged skips)."""
    served = work / "site"
    pages = build(Path(site.root), site.start, served, max_pages, site.include)
    plan_edits(served, pages)
    by_key = {p.key: p for p in pages}
    bodies = work / "bodies"
    bodies.mkdir()
    bodies2 = work / "bodies2"
    t0 = time.perf_counter()
    skips: list[list[tuple[str, bytes, str]]] = [[], []]
    with serve(served, work / SOFT404_FILE) as base:
        config: dict[str, Any] = {
            "base": base,
            "start": pages[0].url_path,
            "allowed": [p.url_path for p in pages],
            "index_dir": str(work / "index"),
            "bodies": str(bodies),
            "url_rules": url_rules,
        }
        run1, skipped1, rules1 = split_records(crawl(config))
        skips[0] = [(r["url"], *fetch_body(r["url"])) for r in skipped1]
        apply_edits(served, pages)
        if url_rules:
            bodies2.mkdir()
        run2, skipped2, rules2 = split_records(crawl({**config, "bodies": str(bodies2) if url_rules else None}))
        skips[1] = [(r["url"], *fetch_body(r["url"])) for r in skipped2]
    crawl_s = time.perf_counter() - t0

    fp = Fingerprinter()
    fetched: dict[str, Fetched] = {}
    for rec in run1:
        if rec["status"] == 200:
            body = body_file(bodies, rec["url"]).read_bytes()
            page = by_key.get(link_key(rec["url"], rec["url"]) or "")
            fetched[canonicalize_url(rec["url"])] = Fetched(rec, body, page, fp)
    if not fetched:
        raise RuntimeError(f"crawl 1 of {site.name} fetched no page: is {base}{pages[0].url_path} served?")

    template = template_lines([f.lines for f in fetched.values()])
    for f in fetched.values():
        covered, total = content_share(f.lines, f.title + "\n" + f.text, template)
        f.content_share = covered / total if total else 1.0
    drops = judged_drops(fetched, template)
    n_false = sum(d["false"] for d in drops)
    n_lossy = sum(d["lossy"] for d in drops)
    expected, found, missed = _recall(fetched, drops)
    own = [f for f in fetched.values() if f.page is not None and f.page.kind == "page"]
    ms = [f.ms for f in fetched.values()]
    return {
        "site": site.name,
        "package": site.package,
        "generator": site.generator,
        "lang": site.lang,
        "max_pages": max_pages,
        "served_urls": len(pages),
        "pages": len(fetched),
        "drops": len(drops),
        "false_drops": n_false,
        "lossy_drops": n_lossy,
        "lossy_share": n_lossy / len(fetched),
        "low_jaccard_drops": sum(d["low_jaccard"] for d in drops),
        "true_drops": len(drops) - n_false,
        "drop_list": drops,
        "added_duplicates": expected,
        "added_found": found,
        "recall": found / expected if expected else None,
        "missed_groups": missed,
        "share_median": statistics.median(f.share for f in own) if own else None,
        "low_share": _low_share(own),
        "content_share_median": statistics.median(f.content_share for f in own) if own else None,
        "low_content_share": _low_share(own, "content_share"),
        "change": _change(fetched, run2),
        "ms_median": statistics.median(ms),
        "ms_p99": _percentile(ms, 0.99),
        "ms_max": max(ms),
        "crawl_s": round(crawl_s, 1),
        "url_rules": (
            _url_rules(
                fetched, template, (run1, run2), (skipped1, skipped2), skips, (rules1, rules2), (bodies, bodies2)
            )
            if url_rules
            else None
        ),
    }


def _url_rules(
    fetched: dict[str, Fetched],
    template: set[str],
    runs: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    skipped: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    skips: list[list[tuple[str, bytes, str]]],
    rules: tuple[dict[str, Any], dict[str, Any]],
    bodies: tuple[Path, Path],
) -> dict[str, Any]:
    """Per crawl: fetches, requests skipped, the skips the product would keep (lossy), and for
    crawl 1 the skips whose page holds ``LOSS_CHARS`` of its own text that its kept page lacks."""
    out: dict[str, Any] = {}
    for n, (run, skipped_n, skips_n, rules_n, folder) in enumerate(zip(runs, skipped, skips, rules, bodies), 1):
        pages = [
            (r["url"], body_file(folder, r["url"]).read_bytes(), r["content_type"]) for r in run if r["status"] == 200
        ]
        lost = []
        for record, (url, body, ctype) in zip(skipped_n, skips_n):
            kept = fetched.get(canonicalize_url(record["kept"])) if n == 1 else None
            if kept is not None:
                loss = content_loss(page_lines(body, ctype or None), kept.lines, template)
                if loss.chars >= LOSS_CHARS:
                    lost.append({"url": url, "kept": record["kept"], "lost_chars": loss.chars})
        out[f"crawl{n}"] = {
            "fetches": len(run),
            "skipped": len(skips_n),
            "lossy": lossy_skips(pages, skips_n),
            "content_lost": lost,
            "skips": [[r["url"], r["kept"]] for r in skipped_n],
            "stats": rules_n.get("url_rules", {}),
            "learned": rules_n.get("learned", []),
        }
    return out


def judged_drops(fetched: dict[str, Fetched], template: set[str]) -> list[dict[str, Any]]:
    """The near-duplicate verdicts of crawl 1, each judged against the page it duplicates: a drop is
    false when it loses content (the dropped page holds ``LOSS_CHARS`` of its own text that the kept
    page lacks, ``judge.content_loss``), or when the two pages' Jaccard is under
    ``FALSE_DROP_JACCARD`` and they are not copies the benchmark made."""
    drops = []
    for f in fetched.values():
        if f.record["verdict"] != "near_duplicate":
            continue
        other = fetched.get(f.record["duplicate_of"] or "")
        j = jaccard(f.visible, other.visible) if other else None
        same_group = other is not None and f.group is not None and f.group == other.group
        loss = content_loss(f.lines, other.lines if other else [], template)
        low_jaccard = not same_group and (j is None or j < FALSE_DROP_JACCARD)
        lossy = loss.chars >= LOSS_CHARS
        drops.append(
            {
                "url": f.record["url"],
                "duplicate_of": f.record["duplicate_of"],
                "distance": f.record["distance"],
                "jaccard": None if j is None else round(j, 3),
                "lost_chars": loss.chars,
                "lost_lines": [[line[:LOST_LINE], n] for line, n in loss.lines],
                "lossy": lossy,
                "low_jaccard": low_jaccard,
                "false": lossy or low_jaccard,
                "added_duplicate": same_group,
                "fingerprinted": f.describe(),
                "fingerprinted_other": other.describe() if other else None,
            }
        )
    return drops


def _recall(fetched: dict[str, Fetched], drops: list[dict[str, Any]]) -> tuple[int, int, list[dict[str, Any]]]:
    """(expected, found, missed groups): of each group of added duplicates, all pages but one
    should be dropped by a true drop."""
    true_dropped = {canonicalize_url(d["url"]) for d in drops if not d["false"]}
    groups: dict[str, dict[str, Fetched]] = {}
    for key, f in fetched.items():
        if f.group:
            groups.setdefault(f.group, {})[key] = f
    expected = found = 0
    missed = []
    for g, members in groups.items():
        hits = sum(key in true_dropped for key in members)
        expected += len(members) - 1
        found += min(hits, len(members) - 1)
        if hits < len(members) - 1:
            verdicts = [(x.record["url"], x.record["verdict"], x.record["distance"]) for x in members.values()]
            missed.append({"group": g, "verdicts": verdicts})
    return expected, found, missed


def _low_share(own: list[Fetched], share: str = "share") -> list[dict[str, Any]]:
    """The pages with less than ``LOW_SHARE`` of their visible text (``share="content_share"``: of
    their content text) fingerprinted, lowest first."""
    return [
        {
            "url": f.record["url"],
            "page_title": f.page_title,
            "share": round(getattr(f, share), 3),
            "visible_chars": len(f.visible),
            "fingerprinted_chars": len(collapse(f.text)),
            "fingerprinted": f.describe(100),
        }
        for f in sorted((f for f in own if getattr(f, share) < LOW_SHARE), key=lambda f: getattr(f, share))
    ]


def _change(fetched: dict[str, Fetched], run2: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Crawl 2's verdicts on the big edits (expected ``changed``), the digit edits (``unchanged``)
    and every other page (anything but ``changed``)."""
    verdict2 = {canonicalize_url(r["url"]): r for r in run2 if r["status"] == 200}
    change: dict[str, dict[str, Any]] = {}
    for name, edit, expected in (
        ("big", "big", "changed"),
        ("digits", "digits", "unchanged"),
        ("untouched", None, None),
    ):
        rows = []
        for key, f in fetched.items():
            if f.page is None or f.page.edit != edit or key not in verdict2:
                continue
            r = verdict2[key]
            ok = r["verdict"] == expected if expected else r["verdict"] != "changed"
            rows.append({"url": r["url"], "verdict": r["verdict"], "distance": r["distance"], "ok": ok, **f.page.info})
        change[name] = {
            "expected": expected or "not changed",
            "pages": len(rows),
            "ok": sum(r["ok"] for r in rows),
            "failures": [r for r in rows if not r["ok"]],
        }
    return change


# ----------------------------------------------------------------------------------- report
def _ratio(ok: int, n: int) -> str:
    return f"{ok}/{n}" if n else "-"


def print_site(r: dict[str, Any]) -> None:
    c = r["change"]
    print(f"\n## {r['site']} ({r['package']}, {r['generator']}, {r['lang']})\n")
    rows = [
        ("pages fetched (crawl 1)", r["pages"]),
        ("drops", r["drops"]),
        (f"lossy drops (>= {LOSS_CHARS} chars lost)", r["lossy_drops"]),
        ("lossy drops, share of pages", f"{r['lossy_share']:.2%}"),
        ("drops at Jaccard < 0.5", r["low_jaccard_drops"]),
        ("false drops (lossy or Jaccard < 0.5)", r["false_drops"]),
        ("true drops", r["true_drops"]),
        ("recall on added duplicates", f"{r['added_found']}/{r['added_duplicates']}"),
        ("median share of visible text fingerprinted", _share(r["share_median"])),
        ("pages under 25% fingerprinted", len(r["low_share"])),
        ("median share of content text fingerprinted", _share(r["content_share_median"])),
        ("pages under 25% of content text fingerprinted", len(r["low_content_share"])),
        ("big edits -> changed", _ratio(c["big"]["ok"], c["big"]["pages"])),
        ("digit edits -> unchanged", _ratio(c["digits"]["ok"], c["digits"]["pages"])),
        ("untouched pages -> not changed", _ratio(c["untouched"]["ok"], c["untouched"]["pages"])),
        ("ms/page median / p99 / max", f"{r['ms_median']:.1f} / {r['ms_p99']:.1f} / {r['ms_max']:.1f}"),
        ("two crawls + edits, s", r["crawl_s"]),
    ]
    rules = r.get("url_rules")
    if rules:
        for n in ("crawl1", "crawl2"):
            u = rules[n]
            rows.append(
                (f"URL rules, {n}: fetches / requests skipped (fetches saved)", f"{u['fetches']} / {u['skipped']}")
            )
            rows.append((f"URL rules, {n}: lossy skips (the product would keep the page)", len(u["lossy"])))
        rows.append(
            ("URL rules, crawl1: skips losing >= 100 chars of their kept page", len(rules["crawl1"]["content_lost"]))
        )
    print("| measure | value |\n| --- | --- |")
    for k, v in rows:
        print(f"| {k} | {v} |")
    if rules:
        for n in ("crawl1", "crawl2"):
            u = rules[n]
            for line in u["learned"]:
                print(f"  {n}: {line}")
            for url in u["lossy"]:
                print(f"  {n}: LOSSY skip {url}")
            for d in u["content_lost"]:
                print(f"  {n}: skip losing {d['lost_chars']} chars: {d['url']} ~ {d['kept']}")
    if r["false_drops"]:
        print(
            "\nfalse drops (page ~ kept page; Jaccard of the whole visible text; characters of the page's own"
            " text that the kept page lacks, and the lines that hold them):"
        )
        for d in r["drop_list"]:
            if d["false"]:
                print(f"  J={d['jaccard']} d={d['distance']} lost={d['lost_chars']} {d['url']} ~ {d['duplicate_of']}")
                print(f"      this:  {d['fingerprinted']}")
                print(f"      other: {d['fingerprinted_other']}")
                _print_lost(d)
    others = [d for d in r["drop_list"] if not d["false"] and not d["added_duplicate"]]
    if others:
        print(
            f"\ntrue drops that are not copies the benchmark made (under {LOSS_CHARS} characters lost, Jaccard of"
            " the whole visible text >= 0.5):"
        )
        for d in others:
            print(f"  J={d['jaccard']} d={d['distance']} lost={d['lost_chars']} {d['url']} ~ {d['duplicate_of']}")
            _print_lost(d)
    if r["missed_groups"]:
        print("\nadded duplicates not dropped:")
        for m in r["missed_groups"]:
            print(f"  {m['group']}: " + "; ".join(f"{u} {v} d={d}" for u, v, d in m["verdicts"]))
    for key, what in (("low_share", "visible"), ("low_content_share", "content")):
        _print_low(r[key], what)
    for name in ("big", "digits", "untouched"):
        for f in c[name]["failures"]:
            extra = {k: v for k, v in f.items() if k not in ("url", "verdict", "distance", "ok")}
            print(
                f"  edit {name}: {f['url']} got {f['verdict']} (d={f['distance']}), expected {c[name]['expected']} {extra}"
            )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_low(low: list[dict[str, Any]], what: str) -> None:
    if not low:
        return
    more = f" (the first {SHOW} of {len(low)})" if len(low) > SHOW else ""
    print(f"\npages under {LOW_SHARE:.0%} of their {what} text fingerprinted{more}:")
    for p in low[:SHOW]:
        print(
            f"  {p['share']:.2f} ({p['fingerprinted_chars']}/{p['visible_chars']} chars) {p['url']} {p['page_title']!r}"
        )
        print(f"      {p['fingerprinted']}")


def _print_lost(drop: dict[str, Any]) -> None:
    lines = drop["lost_lines"]
    for line, n in lines[:LOST_SHOW]:
        print(f"      - {n:4d} {line!r}")
    if len(lines) > LOST_SHOW:
        print(f"      ... {len(lines) - LOST_SHOW} more lines")


def summary(results: list[dict[str, Any]]) -> str:
    head = (
        "| site | generator | lang | pages | drops | lossy drops (share of pages) | J < 0.5 | true drops "
        "| recall (added dups) "
        "| median fingerprinted (visible / content text) | pages < 25% (visible / content) | big edit -> changed | digits -> unchanged "
        "| untouched changed | ms/page median / p99 / max |"
    )
    lines = [head, "|" + " --- |" * 15]
    for r in results:
        c = r["change"]
        recall = f"{r['recall']:.2f} ({r['added_found']}/{r['added_duplicates']})" if r["recall"] is not None else "-"
        untouched_bad = c["untouched"]["pages"] - c["untouched"]["ok"]
        lines.append(
            f"| {r['site']} | {r['generator']} | {r['lang']} | {r['pages']} | {r['drops']} "
            f"| {r['lossy_drops']} ({r['lossy_share']:.1%}) | {r['low_jaccard_drops']} "
            f"| {r['true_drops']} | {recall} | {_share(r['share_median'])} / {_share(r['content_share_median'])} "
            f"| {len(r['low_share'])} / {len(r['low_content_share'])} "
            f"| {_ratio(c['big']['ok'], c['big']['pages'])} | {_ratio(c['digits']['ok'], c['digits']['pages'])} "
            f"| {untouched_bad}/{c['untouched']['pages']} "
            f"| {r['ms_median']:.1f} / {r['ms_p99']:.1f} / {r['ms_max']:.1f} |"
        )
    return "\n".join(lines)


def rules_summary(results: list[dict[str, Any]]) -> str:
    """The URL rules' table: per site, crawl 1's and crawl 2's fetches, skips and lossy skips."""
    head = (
        "| site | crawl 1 fetches | skipped (saved) | lossy | losing >= 100 chars | crawl 2 fetches | skipped | lossy "
        "| rules learned |"
    )
    lines = [
        head,
        "|" + " --- |" * 9,
    ]
    for r in results:
        u = r["url_rules"]
        one, two = u["crawl1"], u["crawl2"]
        learned = ", ".join(
            line.split("(", 1)[1].split(";")[0] for line in one["learned"] + two["learned"] if "(" in line
        )
        lines.append(
            f"| {r['site']} | {one['fetches']} | {one['skipped']} | {len(one['lossy'])} | {len(one['content_lost'])} "
            f"| {two['fetches']} | {two['skipped']} | {len(two['lossy'])} | {learned or '-'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", default=",".join(s.name for s in SITES), help="comma-separated site names")
    parser.add_argument(
        "--max-pages", type=int, help=f"pages per site (default {DEFAULT_PAGES}; python: its whole site, 530 pages)"
    )
    parser.add_argument("--json", type=Path, help="write the full results to this JSON file")
    parser.add_argument("--no-install", action="store_true", help="skip sites whose package is missing")
    parser.add_argument("--keep", type=Path, help="keep the served copies and crawl data under this directory")
    parser.add_argument(
        "--url-rules", action="store_true", help="crawl with SIMHASH_URL_RULES on and judge every skipped request"
    )
    args = parser.parse_args(argv)
    known = {s.name: s for s in SITES}
    names = [n for n in args.sites.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"--sites: unknown {unknown}; choose from {sorted(known)}")
    sites = ensure_packages([known[n] for n in names], install=not args.no_install)

    if args.keep:
        taken = [str(args.keep / s.name) for s in sites if (args.keep / s.name).exists()]
        if taken:
            parser.error(f"--keep: {', '.join(taken)} already exist; remove them or choose another directory")

    results: list[dict[str, Any]] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="realsite-") as tmp:
        for site in sites:
            work = (args.keep or Path(tmp)) / site.name
            work.mkdir(parents=True)
            print(f"== {site.name}: crawling ...", flush=True)
            # One broken site must not lose the others' figures.
            try:
                result = run_site(site, work, args.max_pages or site.max_pages, args.url_rules)
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
                print(f"{site.name} FAILED: {exc}")
                failed.append(site.name)
                continue
            print_site(result)
            results.append(result)
    if results:
        print("\n## Summary\n")
        print(summary(results))
        if args.url_rules:
            print("\n## URL rules (SIMHASH_URL_RULES on)\n")
            print(rules_summary(results))
    if args.json:
        args.json.write_text(json.dumps({"sites": results}, indent=1, ensure_ascii=False))
        print(f"\nwrote {args.json}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
