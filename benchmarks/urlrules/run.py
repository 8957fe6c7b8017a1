"""URL rules benchmark: real crawls of a site of real pages whose URLs have the copies real sites make, against MaybeDont and duplicate-url-discarder.

    PYTHONPATH=. .venv/bin/python benchmarks/urlrules/run.py [--site handbook|news] [--articles N] [--only CRAWLS] [--json OUT]

The site, served on 127.0.0.1: ``--articles`` real pages at ``/a/<n>``: the Debian Administrator's
Handbook (``/usr/share/doc/debian-handbook``, en-US; ``handbook``) or ``shared/data/scrapinghub-aeb``
news pages (``news``). Each article links to nine others, one under each kind of URL:
``?utm_source=home``, ``?sessionid=<linking page>``, ``/print/a/<n>``, ``/a/<n>/index.html``,
``/a/<n>/`` (copies of ``/a/<n>``), and ``?page=2``, ``?lang=fr``, ``?q=<n>``, ``/v2/a/<n>`` (each
another real page, served under no other URL: the handbook's translations, or other news pages; no
rule may skip them). The start page links to every article. The same spider (every link of the
host) crawls it with no rules, with scrapy-simhash's rules (a second run into the same index
starts with the first's rules), with MaybeDont's middleware (every request marked
``avoid_dup_content``) and with duplicate-url-discarder's add-on and its shipped rules
(duplicate-url-discarder-rules).

Reported per crawl: fetches; the avoidable fetches (a URL whose content, as the server serves it,
an earlier fetch of the same crawl showed) and the share of the rules-off crawl's avoided; skips
(URLs the rules-off crawl fetched and this one did not); lossy skips, judged by the product: every
skipped URL fetched after the crawl and decided by scrapy-simhash's default decision
(near-duplicate, keep-adds) against the pages the crawl fetched, lossy when it would be kept; the
skips the server's oracle calls lossy (content no fetch showed); skips with a content-changing
parameter.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[2]
NEWS = ROOT.parent / "shared" / "data" / "scrapinghub-aeb" / "html"
HANDBOOK = Path("/usr/share/doc/debian-handbook/html")
sys.path.insert(0, str(ROOT / "tests"))

from helpers import rules_crawl  # the tests' crawl in a child process

COPIES = ("utm", "session", "print", "index", "slash")
CHANGING = ("page", "lang", "q", "version")
KINDS = COPIES + CHANGING
#: The handbook translation that each content-changing URL of a page shows.
TRANSLATIONS = {"page": "de-DE", "lang": "fr-FR", "q": "es-ES", "version": "it-IT"}


def copy_url(m: int, kind: str, linking: int) -> str:
    return {
        "utm": f"/a/{m}?utm_source=home",
        "session": f"/a/{m}?sessionid=s{linking:04d}",
        "print": f"/print/a/{m}",
        "index": f"/a/{m}/index.html",
        "slash": f"/a/{m}/",
        "page": f"/a/{m}?page=2",
        "lang": f"/a/{m}?lang=fr",
        "q": f"/a/{m}?q=t{m}",
        "version": f"/v2/a/{m}",
    }[kind]


def kind_of(path: str) -> str:
    parts = urlsplit(path)
    query = parse_qs(parts.query)
    for name, key in (("utm", "utm_source"), ("session", "sessionid"), ("page", "page"), ("lang", "lang"), ("q", "q")):
        if key in query:
            return name
    if parts.path.startswith("/print/"):
        return "print"
    if parts.path.startswith("/v2/"):
        return "version"
    if parts.path.endswith("/index.html") and parts.path != "/index.html":
        return "index"
    if parts.path.endswith("/") and parts.path != "/":
        return "slash"
    return "canonical"


def handbook_pages(articles: int) -> list[list[bytes]]:
    """Per article, its en-US page and the four translations its content-changing URLs show."""
    names = sorted(p.name for p in (HANDBOOK / "en-US").glob("*.html"))
    names = [n for n in names if all((HANDBOOK / lang / n).exists() for lang in TRANSLATIONS.values())]
    return [
        [(HANDBOOK / lang / name).read_bytes() for lang in ("en-US", *TRANSLATIONS.values())]
        for name in names[:articles]
    ]


def news_pages(articles: int) -> list[list[bytes]]:
    """Per article, one news page and four others its content-changing URLs show."""
    files = sorted(NEWS.glob("*.html.gz"))[: 5 * articles]
    pages = [gzip.decompress(f.read_bytes()) for f in files]
    n = len(pages) // 5
    return [[pages[i], *(pages[n + 4 * i + j] for j in range(4))] for i in range(n)]


class CopySite:
    """Serves the articles under their copies; ``content(path)`` is the oracle: which page a URL shows."""

    def __init__(self, pages: list[list[bytes]]) -> None:
        self.pages = pages
        self.articles = len(pages)
        self.log: list[str] = []
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def content(self, path: str) -> tuple[int, int] | None:
        """(article, which of its pages: 0 the article, 1-4 its content-changing URLs'), ``None``: no page."""
        parts = urlsplit(path)
        segments = [s for s in parts.path.split("/") if s and s != "index.html"]
        if segments[:1] in (["print"], ["v2"]):
            segments = segments[1:]
        if len(segments) != 2 or segments[0] != "a" or not segments[1].isdigit():
            return None
        n = int(segments[1])
        if n >= self.articles:
            return None
        kind = kind_of(path)
        return (n, 1 + CHANGING.index(kind)) if kind in CHANGING else (n, 0)

    def body(self, path: str) -> bytes | None:
        if urlsplit(path).path == "/index.html":
            links = "".join(f'<li><a href="/a/{n}">article {n}</a></li>' for n in range(self.articles))
            return f"<html><body><h1>Articles</h1><ul>{links}</ul></body></html>".encode()
        shown = self.content(path)
        if shown is None:
            return None
        n, which = shown
        html = re.sub(
            rb"<a\s[^>]*href=", b"<a data-href=", self.pages[n][which], flags=re.IGNORECASE
        )  # no links off the site
        if which:
            return html
        related = [  # one link under each kind of URL, each to another article
            f'<li><a href="{copy_url((n + j + 1) % self.articles, kind, n)}">more</a></li>'
            for j, kind in enumerate(KINDS)
        ]
        nav = ("<ul class=related>" + "".join(related) + "</ul></body>").encode()
        return html.replace(b"</body>", nav, 1) if b"</body>" in html else html + nav

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.log.append(req.path)
        body = self.body(req.path)
        data = body if body is not None else b"<html><body>Not found</body></html>"
        req.send_response(200 if body is not None else 404)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def crawl(site: CopySite, tmp: Path, name: str, run: dict[str, Any]) -> dict[str, Any]:
    start = len(site.log)
    paths = {key: str(tmp / f"{name}-{key}") for key in ("stats_path", "page_log", "log_path")}
    settings = {"SIMHASH_DIR": str(tmp / run.get("index", name)), **run["settings"]}
    stats = rules_crawl.run(
        {**paths, "start_url": site.url("/index.html"), "settings": settings, "request_meta": run.get("meta")},
        timeout=3600,
    )
    learned = [
        line.split("(", 1)[1].split(";")[0]
        for line in Path(paths["log_path"]).read_text().splitlines()
        if "Learned a URL rule" in line
    ]
    return {"fetched": list(dict.fromkeys(site.log[start:])), "stats": stats, "learned": learned}


def keeps_judge(site: CopySite) -> Callable[[list[str], list[str]], list[str]]:
    """The product's judge: of ``skipped``, those scrapy-simhash's default decision would keep (new)
    after the ``fetched`` pages, each fetched from the server and decided alone."""
    from scrapy.settings import Settings

    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.scrapy.component import canonical_key
    from scrapy_simhash.scrapy.settings import build_fingerprinter, load_config
    from scrapy_simhash.store.index import SimhashIndex

    config = load_config(Settings({"SIMHASH_ENABLED": True}))
    fingerprinter = build_fingerprinter(config)

    def page(path: str) -> Any:
        body = site.body(path) or b""
        return fingerprinter.fingerprint_page(body, site.url(path), content_type="text/html; charset=utf-8")

    def judge(fetched: list[str], skipped: list[str]) -> list[str]:
        tracker = ChangeTracker(SimhashIndex(**config.index_kwargs()), **config.tracker_kwargs())
        for path in fetched:
            tracker.observe(canonical_key(site.url(path)), page(path), now=1.0)
        lossy = []
        for path in skipped:
            key = canonical_key(site.url(path))
            if tracker.observe(key, page(path), now=1.0).verdict == "new":
                lossy.append(path)
            tracker.index.remove(key)  # each skip judged against the fetched pages only
            tracker.index.delete_record(key)
        return lossy

    return judge


def avoidable(site: CopySite, fetched: list[str]) -> int:
    """Fetches of a page an earlier fetch of the crawl showed."""
    shown = [site.content(p) for p in fetched]
    return len([c for c in shown if c is not None]) - len({c for c in shown if c is not None})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", choices=("handbook", "news"), default="handbook")
    parser.add_argument("--articles", type=int, default=120)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", help="the crawls to run after 'off', separated by |")
    parser.add_argument("--keep", type=Path, help="keep the crawls' indexes and logs in this directory")
    args = parser.parse_args()
    pages = handbook_pages(args.articles) if args.site == "handbook" else news_pages(args.articles)
    site = CopySite(pages)
    rules = {"SIMHASH_URL_RULES": True}
    runs: dict[str, dict[str, Any]] = {
        "off": {"settings": {}},
        "scrapy-simhash rules": {"settings": rules},
        "scrapy-simhash rules, run 2": {"settings": rules, "index": "scrapy-simhash rules"},
        **{
            f"scrapy-simhash rules (support {support}, confidence {confidence})": {
                "settings": {
                    **rules,
                    "SIMHASH_URL_RULES_MIN_SUPPORT": support,
                    "SIMHASH_URL_RULES_CONFIDENCE": confidence,
                }
            }
            for support, confidence in ((20, 0.8), (20, 0.99))
        },
        "MaybeDont (defaults)": {
            "settings": {
                "AVOID_DUP_CONTENT_ENABLED": True,
                "DOWNLOADER_MIDDLEWARES": {"maybedont.scrapy_middleware.AvoidDupContentMiddleware": 200},
            },
            "meta": {"avoid_dup_content": True},
        },
        "MaybeDont (initial queue 50)": {
            "settings": {
                "AVOID_DUP_CONTENT_ENABLED": True,
                "AVOID_DUP_CONTENT_INITIAL_QUEUE_LIMIT": 50,
                "DOWNLOADER_MIDDLEWARES": {"maybedont.scrapy_middleware.AvoidDupContentMiddleware": 200},
            },
            "meta": {"avoid_dup_content": True},
        },
        "duplicate-url-discarder (shipped rules)": {
            "settings": {"ADDONS": {"scrapy_simhash.Addon": 0, "duplicate_url_discarder.Addon": 600}}
        },
    }
    if args.only:
        wanted = {"off", *args.only.split("|")}
        runs = {name: run for name, run in runs.items() if name in wanted}
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            tmp = str(args.keep or scratch)
            for name, run in runs.items():
                try:
                    results[name] = crawl(site, Path(tmp), name, run)
                except RuntimeError as exc:  # a peer that cannot run with today's Scrapy: say so
                    results[name] = {"error": str(exc).strip().splitlines()[-1][:300]}
            judge = keeps_judge(site)
            off = results["off"]["fetched"]
            base = avoidable(site, off)
            print(
                f"{args.site}: {site.articles} articles, {len(off)} URLs fetched without rules, "
                f"{base} of them avoidable (their page shown by an earlier fetch)"
            )
            print(
                f"{'crawl':52} {'fetches':>7} {'avoided':>7} {'skips':>5} {'lossy':>5} "
                f"{'per 1k':>6} {'oracle':>6} {'changing':>8}"
            )
            for name, result in results.items():
                if "error" in result:
                    print(f"{name:52} could not run: {result['error']}")
                    continue
                fetched = result["fetched"]
                skipped = [p for p in off if p not in set(fetched)]
                shown = {site.content(p) for p in fetched}
                oracle = [p for p in skipped if site.content(p) not in shown]
                lossy = judge(fetched, skipped)
                changing = [p for p in skipped if kind_of(p) in CHANGING]
                saved = 1 - avoidable(site, fetched) / base if base else 0.0
                per_k = 1000 * len(lossy) / len(skipped) if skipped else 0.0
                result.update(skipped=skipped, lossy=lossy, oracle=oracle, changing=changing, saved=saved)
                print(
                    f"{name:52} {len(fetched):7d} {saved:7.1%} {len(skipped):5d} {len(lossy):5d} "
                    f"{per_k:6.1f} {len(oracle):6d} {len(changing):8d}"
                )
                if result["learned"]:
                    print(f"{'':52} rules learned: {', '.join(result['learned'])}")
    finally:
        site.stop()
    if args.json:
        args.json.write_text(json.dumps({k: {**v, "stats": None} for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
