"""Real-site benchmark: real Scrapy crawls of real documentation sites that nobody here wrote, with the
true duplicates real sites have, judged against each page's whole visible text.

    .venv/bin/python benchmarks/realsite/run.py [--sites django,git-en,...] [--max-pages 200] [--json OUT]

Each site comes from a Debian package (installed with apt-get where missing; ``--no-install`` skips
a missing one instead). Its first ``--max-pages`` pages in breadth-first link order from its start
page are copied to a temporary directory, duplicates are added (``prepare.py``: a mirror of some
pages, print views, tracking-parameter URLs, soft-404 URLs), and the copy is served on 127.0.0.1 by
the benchmark itself. Then, per site:

1. crawl 1: a real Scrapy crawl with ``ADDONS = {"scrapy_simhash.Addon": 0}`` into an empty index,
   a generic spider that follows every link to a page of the served set;
2. scripted edits of the served copy: on a twentieth of the pages a third or more (40%) of the text
   blocks are deleted (expected ``changed``), on another twentieth only the digits of the text change
   (dates, counters, numbers: expected ``unchanged``);
3. crawl 2 of the same URLs into the same index (every other page is expected ``unchanged``).

Reported per site: pages; drops (``near_duplicate`` verdicts of crawl 1); false drops: a drop whose
page and duplicated page have a character 5-gram Jaccard of their whole visible text under 0.5 (and
are not copies the benchmark made), printed with the Jaccard and what was fingerprinted for each;
true drops; recall on the added duplicates (of each group all but one page should be dropped); the
share of each page's visible text that is fingerprinted (median, and the pages under 25%, listed);
change detection; and ms per page: ``Fingerprinter().fingerprint_html`` timed on every fetched body
after the crawl (median, p99, max).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from w3lib.url import canonicalize_url

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from crawl import body_file, crawl, serve
from judge import FALSE_DROP_JACCARD, collapse, decode, fingerprinted, jaccard, parse, visible_text
from prepare import SOFT404_FILE, Page, apply_edits, build, plan_edits

LOW_SHARE = 0.25


@dataclass(frozen=True)
class Site:
    name: str
    package: str
    root: str  # directory of the HTML files
    start: str  # start page, relative to root
    generator: str
    lang: str
    include: str | None = None  # regex a page's path must match


SITES = [
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
        self.visible = visible_text(parse(decode(body, ctype)))
        self.title, self.text = fingerprinted(body, ctype)
        started = time.perf_counter()
        try:
            fingerprinter.fingerprint_html(body, record["url"], content_type=ctype)
        except ValueError:  # EmptyTextError: no text at all
            pass
        self.ms = (time.perf_counter() - started) * 1000
        self.share = min(1.0, len(collapse(self.text)) / len(self.visible)) if self.visible else 1.0

    @property
    def group(self) -> str | None:
        return self.page.group if self.page else None

    def describe(self, limit: int = 160) -> str:
        text = collapse(self.text)
        more = f" ... ({len(text)} chars)" if len(text) > limit else ""
        return f"title={self.title!r} text={text[:limit]!r}{more}"


def run_site(site: Site, work: Path, max_pages: int, settings: dict[str, Any]) -> dict[str, Any]:
    from scrapy_simhash import Fingerprinter

    served = work / "site"
    pages = build(Path(site.root), site.start, served, max_pages, site.include)
    plan_edits(served, pages)
    by_key = {p.key: p for p in pages}
    bodies = work / "bodies"
    bodies.mkdir()
    t0 = time.perf_counter()
    with serve(served, work / SOFT404_FILE) as base:
        config: dict[str, Any] = {
            "base": base,
            "start": pages[0].url_path,
            "allowed": [p.url_path for p in pages],
            "index_dir": str(work / "index"),
            "bodies": str(bodies),
            "settings": settings,
        }
        run1 = crawl(config)
        apply_edits(served, pages)
        run2 = crawl({**config, "bodies": None})
    crawl_s = time.perf_counter() - t0

    from prepare import link_key

    def page_of(url: str) -> Page | None:
        return by_key.get(link_key(url, url) or "")

    fp = Fingerprinter()
    fetched: dict[str, Fetched] = {}
    for rec in run1:
        if rec["status"] == 200:
            fetched[canonicalize_url(rec["url"])] = Fetched(
                rec, body_file(bodies, rec["url"]).read_bytes(), page_of(rec["url"]), fp
            )

    # drops
    drops = []
    for key, f in fetched.items():
        if f.record["verdict"] != "near_duplicate":
            continue
        other = fetched.get(f.record["duplicate_of"] or "")
        j = jaccard(f.visible, other.visible) if other else None
        same_group = other is not None and f.group is not None and f.group == other.group
        drops.append(
            {
                "url": f.record["url"],
                "duplicate_of": f.record["duplicate_of"],
                "distance": f.record["distance"],
                "jaccard": None if j is None else round(j, 3),
                "false": not same_group and (j is None or j < FALSE_DROP_JACCARD),
                "added_duplicate": same_group,
                "fingerprinted": f.describe(),
                "fingerprinted_other": other.describe() if other else None,
            }
        )
    false_drops = [d for d in drops if d["false"]]

    # recall on the added duplicates
    groups: dict[str, list[Fetched]] = {}
    for f in fetched.values():
        if f.group:
            groups.setdefault(f.group, []).append(f)
    expected = sum(len(m) - 1 for m in groups.values())
    found = sum(min(len(m) - 1, sum(x.record["verdict"] == "near_duplicate" for x in m)) for m in groups.values())
    missed = [
        {"group": g, "verdicts": [(x.record["url"], x.record["verdict"], x.record["distance"]) for x in m]}
        for g, m in groups.items()
        if sum(x.record["verdict"] == "near_duplicate" for x in m) < len(m) - 1
    ]

    # share of the visible text fingerprinted (the site's own pages)
    own = [f for f in fetched.values() if f.page is not None and f.page.kind == "page"]
    low = sorted((f for f in own if f.share < LOW_SHARE), key=lambda f: f.share)
    low_pages = [
        {
            "url": f.record["url"],
            "share": round(f.share, 3),
            "visible_chars": len(f.visible),
            "fingerprinted_chars": len(collapse(f.text)),
            "fingerprinted": f.describe(100),
        }
        for f in low
    ]

    # change detection
    verdict2 = {canonicalize_url(r["url"]): r for r in run2 if r["status"] == 200}
    change: dict[str, dict[str, Any]] = {}
    for edit, want in (("big", "changed"), ("digits", "unchanged"), (None, "unchanged")):
        name = edit or "untouched"
        rows = []
        for key, f in fetched.items():
            if f.page is None or f.page.edit != edit or key not in verdict2:
                continue
            r = verdict2[key]
            ok = r["verdict"] == want if edit else r["verdict"] != "changed"
            rows.append({"url": r["url"], "verdict": r["verdict"], "distance": r["distance"], "ok": ok, **f.page.info})
        change[name] = {
            "expected": want,
            "pages": len(rows),
            "ok": sum(r["ok"] for r in rows),
            "failures": [r for r in rows if not r["ok"]],
        }

    if not fetched:
        raise RuntimeError(f"crawl 1 of {site.name} fetched no page: is {base}{pages[0].url_path} served?")
    ms = [f.ms for f in fetched.values()]
    return {
        "site": site.name,
        "package": site.package,
        "generator": site.generator,
        "lang": site.lang,
        "served_urls": len(pages),
        "pages": len(fetched),
        "responses_crawl2": len(verdict2),
        "drops": len(drops),
        "false_drops": len(false_drops),
        "true_drops": len(drops) - len(false_drops),
        "drop_list": drops,
        "added_duplicates": expected,
        "added_found": found,
        "recall": found / expected if expected else None,
        "missed_groups": missed,
        "share_median": statistics.median(f.share for f in own) if own else None,
        "low_share": low_pages,
        "change": change,
        "ms_median": statistics.median(ms) if ms else None,
        "ms_p99": _percentile(ms, 0.99),
        "ms_max": max(ms, default=0.0),
        "crawl_s": round(crawl_s, 1),
    }


# ----------------------------------------------------------------------------------- report
def _ratio(ok: int, n: int) -> str:
    return f"{ok}/{n}" if n else "-"


def print_site(r: dict[str, Any]) -> None:
    c = r["change"]
    print(f"\n## {r['site']} ({r['package']}, {r['generator']}, {r['lang']})\n")
    rows = [
        ("pages fetched (crawl 1)", r["pages"]),
        ("drops", r["drops"]),
        ("false drops (Jaccard < 0.5)", r["false_drops"]),
        ("true drops", r["true_drops"]),
        ("recall on added duplicates", f"{r['added_found']}/{r['added_duplicates']}"),
        ("median share of visible text fingerprinted", f"{r['share_median']:.2f}" if r["share_median"] else "-"),
        ("pages under 25% fingerprinted", len(r["low_share"])),
        ("big edits -> changed", _ratio(c["big"]["ok"], c["big"]["pages"])),
        ("digit edits -> unchanged", _ratio(c["digits"]["ok"], c["digits"]["pages"])),
        ("untouched pages -> not changed", _ratio(c["untouched"]["ok"], c["untouched"]["pages"])),
        ("ms/page median / p99 / max", f"{r['ms_median']:.1f} / {r['ms_p99']:.1f} / {r['ms_max']:.1f}"),
        ("two crawls + edits, s", r["crawl_s"]),
    ]
    print("| measure | value |\n| --- | --- |")
    for k, v in rows:
        print(f"| {k} | {v} |")
    if r["false_drops"]:
        print("\nfalse drops (page ~ duplicated page, Jaccard of the whole visible text):")
        for d in r["drop_list"]:
            if d["false"]:
                print(f"  J={d['jaccard']} d={d['distance']} {d['url']} ~ {d['duplicate_of']}")
                print(f"      this:  {d['fingerprinted']}")
                print(f"      other: {d['fingerprinted_other']}")
    if r["missed_groups"]:
        print("\nadded duplicates not dropped:")
        for m in r["missed_groups"]:
            print(f"  {m['group']}: " + "; ".join(f"{u} {v} d={d}" for u, v, d in m["verdicts"]))
    if r["low_share"]:
        print(f"\npages under {LOW_SHARE:.0%} of their visible text fingerprinted:")
        for p in r["low_share"]:
            print(f"  {p['share']:.2f} ({p['fingerprinted_chars']}/{p['visible_chars']} chars) {p['url']}")
            print(f"      {p['fingerprinted']}")
    for name in ("big", "digits", "untouched"):
        for f in c[name]["failures"]:
            extra = {k: v for k, v in f.items() if k not in ("url", "verdict", "distance", "ok")}
            print(
                f"  edit {name}: {f['url']} got {f['verdict']} (d={f['distance']}), expected {c[name]['expected']} {extra}"
            )


def summary(results: list[dict[str, Any]]) -> str:
    head = (
        "| site | generator | lang | pages | drops | false drops | true drops | recall (added dups) "
        "| median fingerprinted | pages < 25% | big edit -> changed | digits -> unchanged "
        "| untouched changed | ms/page median / p99 / max |"
    )
    lines = [head, "|" + " --- |" * 14]
    for r in results:
        c = r["change"]
        recall = f"{r['recall']:.2f} ({r['added_found']}/{r['added_duplicates']})" if r["recall"] is not None else "-"
        untouched_bad = c["untouched"]["pages"] - c["untouched"]["ok"]
        lines.append(
            f"| {r['site']} | {r['generator']} | {r['lang']} | {r['pages']} | {r['drops']} | {r['false_drops']} "
            f"| {r['true_drops']} | {recall} | {r['share_median']:.2f} | {len(r['low_share'])} "
            f"| {_ratio(c['big']['ok'], c['big']['pages'])} | {_ratio(c['digits']['ok'], c['digits']['pages'])} "
            f"| {untouched_bad}/{c['untouched']['pages']} "
            f"| {r['ms_median']:.1f} / {r['ms_p99']:.1f} / {r['ms_max']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", default=",".join(s.name for s in SITES), help="comma-separated site names")
    parser.add_argument("--max-pages", type=int, default=200, help="pages per site (default 200)")
    parser.add_argument("--json", type=Path, help="write the full results to this JSON file")
    parser.add_argument("--no-install", action="store_true", help="skip sites whose package is missing")
    parser.add_argument("--keep", type=Path, help="keep the served copies and crawl data under this directory")
    args = parser.parse_args(argv)
    known = {s.name: s for s in SITES}
    names = [n for n in args.sites.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"--sites: unknown {unknown}; choose from {sorted(known)}")
    sites = ensure_packages([known[n] for n in names], install=not args.no_install)

    results: list[dict[str, Any]] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="realsite-") as tmp:
        for site in sites:
            work = (args.keep or Path(tmp)) / site.name
            if work.exists():
                shutil.rmtree(work)
            work.mkdir(parents=True)
            print(f"== {site.name}: crawling ...", flush=True)
            try:
                result = run_site(site, work, args.max_pages, {})
            except (
                RuntimeError,
                OSError,
                ValueError,
                subprocess.TimeoutExpired,
            ) as exc:  # one broken site must not lose the others' figures
                print(f"{site.name} FAILED: {exc}")
                failed.append(site.name)
                continue
            print_site(result)
            results.append(result)
    if results:
        print("\n## Summary\n")
        print(summary(results))
    if args.json:
        args.json.write_text(json.dumps({"max_pages": args.max_pages, "sites": results}, indent=1, ensure_ascii=False))
        print(f"\nwrote {args.json}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
