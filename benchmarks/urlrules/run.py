"""URL rules benchmark (first slice): real crawls of a site of real news pages whose URLs have the copies real sites make.

    PYTHONPATH=. .venv/bin/python benchmarks/urlrules/run.py [--articles N] [--json OUT]

The site, served on 127.0.0.1: ``--articles`` real pages of ``shared/data/scrapinghub-aeb`` at
``/a/<n>`` (60: the data has 181 pages, three per article); each page links to six copies of other articles, of seven kinds: ``?utm_source=home``,
``?sessionid=<id of the linking page>``, ``/print/a/<n>``, ``/a/<n>/index.html``, ``/a/<n>/`` (copies),
and ``?page=2``, ``?lang=de`` (each another real page, served under no other URL: no rule may
skip them). The start page links to every
article. The same spider (every link of the host) crawls it with the rules off, then into fresh
indexes with the rules on at the default confidence and at lower ones; the last one runs twice into
one index (the second run starts with the first's rules).

Reported per crawl: fetches; avoidable copy fetches (the copies the rules-off crawl fetched); the
share of them skipped; lossy skips (a skipped URL whose content, as the server serves it, no fetched
URL showed: the server is the oracle here, not yet the product's keep-adds judge); skipped
requests with a content-changing parameter; the rules learned. Not yet measured against MaybeDont
or duplicate-url-discarder.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "scrapinghub-aeb" / "html"
sys.path.insert(0, str(ROOT / "tests"))

from helpers import rules_crawl  # the tests' crawl in a child process

COPIES = ("utm", "session", "print", "index", "slash")
CHANGING = ("page", "lang")
KINDS = COPIES + CHANGING


def copy_url(m: int, kind: str, linking: int) -> str:
    return {
        "utm": f"/a/{m}?utm_source=home",
        "session": f"/a/{m}?sessionid=s{linking:04d}",
        "print": f"/print/a/{m}",
        "index": f"/a/{m}/index.html",
        "slash": f"/a/{m}/",
        "page": f"/a/{m}?page=2",
        "lang": f"/a/{m}?lang=de",
    }[kind]


class CopySite:
    """Serves the articles under their copies; ``content(path)`` is the oracle: which article a URL shows."""

    def __init__(self, pages: list[bytes]) -> None:
        self.pages = pages
        self.articles = len(pages) // 3  # the others: the pages of ?page=2 and ?lang=de
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

    def content(self, path: str) -> int | None:
        parts = urlsplit(path)
        segments = [s for s in parts.path.split("/") if s and s != "index.html"]
        if segments[:1] == ["print"]:
            segments = segments[1:]
        if len(segments) != 2 or segments[0] != "a" or not segments[1].isdigit():
            return None
        n = int(segments[1])
        if n >= self.articles:
            return None
        query = parse_qs(parts.query)
        if "page" in query:  # a page of its own, served under no other URL
            return self.articles + 2 * n
        if "lang" in query:
            return self.articles + 2 * n + 1
        return n

    def _body(self, path: str) -> bytes | None:
        if urlsplit(path).path == "/index.html":
            links = "".join(f'<li><a href="/a/{n}">article {n}</a></li>' for n in range(self.articles))
            return f"<html><body><h1>Articles</h1><ul>{links}</ul></body></html>".encode()
        n = self.content(path)
        if n is None:
            return None
        related = []  # what an article links to: six copies of other articles (a copy shows the same)
        for j in range(1, 7) if n < self.articles else ():
            kind = KINDS[(3 * n + j) % len(KINDS)]
            related.append(f'<li><a href="{copy_url((n + j) % self.articles, kind, n)}">more</a></li>')
        html = self.pages[n].replace(b"href=", b"data-href=")  # the page's own links lead off this site
        nav = ("<ul class=related>" + "".join(related) + "</ul></body>").encode()
        return html.replace(b"</body>", nav, 1) if b"</body>" in html else html + nav

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.log.append(req.path)
        body = self._body(req.path)
        status = 200 if body is not None else 404
        data = body if body is not None else b"<html><body>Not found</body></html>"
        req.send_response(status)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _kind(path: str) -> str:
    parts = urlsplit(path)
    for name, key in (("utm", "utm_source"), ("session", "sessionid"), ("page", "page"), ("lang", "lang")):
        if key in parse_qs(parts.query):
            return name
    if parts.path.startswith("/print/"):
        return "print"
    if parts.path.endswith("/index.html") and parts.path != "/index.html":
        return "index"
    if parts.path.endswith("/") and parts.path != "/":
        return "slash"
    return "canonical"


def crawl(site: CopySite, tmp: Path, name: str, settings: dict[str, Any], index: str) -> dict[str, Any]:
    start = len(site.log)
    paths = {key: str(tmp / f"{name}-{key}") for key in ("stats_path", "page_log", "log_path")}
    stats = rules_crawl.run(
        {**paths, "start_url": site.url("/index.html"), "settings": {"SIMHASH_DIR": str(tmp / index), **settings}},
        timeout=1800,
    )
    learned = [
        line.split("(", 1)[1].split(";")[0]
        for line in Path(paths["log_path"]).read_text().splitlines()
        if "Learned a URL rule" in line
    ]
    return {"fetched": list(dict.fromkeys(site.log[start:])), "stats": stats, "learned": learned}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=60)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = sorted(DATA.glob("*.html.gz"))[: 3 * args.articles]
    site = CopySite([gzip.decompress(f.read_bytes()) for f in files])
    runs = {
        "off": {},
        "on (defaults: support 20, confidence 0.99)": {"SIMHASH_URL_RULES": True},
        "on (support 10, confidence 0.9)": {
            "SIMHASH_URL_RULES": True,
            "SIMHASH_URL_RULES_MIN_SUPPORT": 10,
            "SIMHASH_URL_RULES_CONFIDENCE": 0.9,
        },
        "on (support 10, confidence 0.8)": {
            "SIMHASH_URL_RULES": True,
            "SIMHASH_URL_RULES_MIN_SUPPORT": 10,
            "SIMHASH_URL_RULES_CONFIDENCE": 0.8,
        },
    }
    # The last one again, into its index: the second run starts with the rules of the first.
    again = "the same, run 2 (rules carried over)"
    runs[again] = runs["on (support 10, confidence 0.8)"]
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, settings) in enumerate(runs.items()):
                results[name] = crawl(site, Path(tmp), f"run{i}", settings, f"run{i - 1 if name == again else i}")
    finally:
        site.stop()
    off = set(results["off"]["fetched"])
    avoidable = {p for p in off if _kind(p) in COPIES}
    print(
        f"{len(files)} real pages (scrapinghub-aeb), {site.articles} articles, {len(off)} URLs fetched without rules, {len(avoidable)} avoidable copies"
    )
    print(f"{'crawl':45} {'fetches':>7} {'skipped':>7} {'saved':>6} {'lossy':>5} {'changing':>8}  rules learned")
    for name, result in results.items():
        fetched = set(result["fetched"])
        skipped = off - fetched
        shown = {site.content(p) for p in fetched}
        lossy = [p for p in skipped if site.content(p) not in shown]
        changing = [p for p in skipped if _kind(p) in CHANGING]
        saved = len(skipped & avoidable) / len(avoidable) if avoidable else 0.0
        result.update(skipped=sorted(skipped), lossy=lossy, changing=changing, saved=saved)
        print(
            f"{name:45} {len(fetched):7d} {len(skipped):7d} {saved:6.1%} {len(lossy):5d} {len(changing):8d}  "
            + (", ".join(result["learned"]) or "-")
        )
    if args.json:
        args.json.write_text(json.dumps({k: {**v, "stats": None} for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
