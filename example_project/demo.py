"""The scrapy-simhash demo: serve the bundled site on 127.0.0.1 and crawl it twice (the second crawl exports only what changed).

Usage (from the repository root; ``./dev demo`` does this)::

    .venv/bin/python example_project/demo.py [--reset] [--runs N] [--port P] [--verbose] [--incremental [--days D]]
    .venv/bin/python example_project/demo.py --serve [--port P]   # only serve the site

Each run is a real Scrapy crawl (``CrawlerProcess`` in a child process, with the project settings of
``example_project/demo_site_crawler``). The index lives in ``example_project/.scrapy/simhash/site`` and the
items of run N go to ``example_project/output/items-run<N>.jsonl``. From the second run on, the site is
served in its "edition 2", in which one page (the weekly roundup) was rewritten: it shows up as
``changed`` and its item is exported again, while every other page is ``unchanged`` and exports nothing.
Each run fetches every page again; with ``--incremental`` the runs are incremental crawls
(``SIMHASH_INCREMENTAL``) ``--days`` apart, which fetch only the known URLs that are due.

The functions ``SiteServer`` and ``crawl_process`` are also used by ``tests/glue/test_e2e.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from typing_extensions import Self

PROJECT_DIR = Path(__file__).resolve().parent
SITE_DIR = PROJECT_DIR / "site"
OUTPUT_DIR = PROJECT_DIR / "output"
DATA_DIR = PROJECT_DIR / ".scrapy"
PORT_FILE = DATA_DIR / "demo-port"
SPIDER = "site"


def load_manifest(site_dir: Path = SITE_DIR) -> dict[str, Any]:
    """The site's ``groups.json``: expected near-duplicate groups and how each page is served."""
    return json.loads((site_dir / "groups.json").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------- the HTTP server
class SiteServer:
    """Serves ``site_dir`` on 127.0.0.1 in a background thread.

    - Content-Type per page from the manifest's ``serve`` table: some pages (the GBK ones in
      particular) are served as plain ``text/html`` without a charset, on purpose.
    - The query string is ignored (``?utm_source=...`` URLs serve the same file).
    - ``edition``: files under ``site/_editions/<n>/`` replace the normal ones when ``edition >= n``.
    - ``delay``: seconds to wait before each response (to kill a crawl halfway in tests).
    - ``validators``: send an ``ETag`` (a hash of the body) and a ``Last-Modified`` (the day of
      the page's edition) with every page, and answer ``304 Not Modified`` to a request that
      sends them back unchanged (``If-None-Match``, else ``If-Modified-Since``).
    - ``served``: number of pages served so far.
    """

    def __init__(
        self,
        site_dir: Path = SITE_DIR,
        *,
        port: int = 0,
        edition: int = 1,
        delay: float = 0.0,
        validators: bool = False,
    ) -> None:
        self.validators = validators
        self.site_dir = site_dir.resolve()
        self.serve_table: Mapping[str, Mapping[str, str]] = load_manifest(site_dir).get("serve", {})
        self.edition = edition
        self.delay = delay
        self.served = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="demo-site-server", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> SiteServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _resolve(self, path: str) -> tuple[Path, str, int] | None:
        """The file that ``path`` serves, its content type and its edition."""
        if path in ("", "/"):
            path = "/index.html"
        rel = path.lstrip("/")
        if rel.startswith("_editions/") or not (rel.endswith(".html") or path in self.serve_table):
            return None
        content_type = self.serve_table.get(path, {}).get("content_type", "text/html; charset=utf-8")
        for n in range(self.edition, 1, -1):
            candidate = (self.site_dir / "_editions" / str(n) / rel).resolve()
            if candidate.is_file() and candidate.is_relative_to(self.site_dir):
                return candidate, content_type, n
        candidate = (self.site_dir / rel).resolve()
        if candidate.is_file() and candidate.is_relative_to(self.site_dir):
            return candidate, content_type, 1
        return None

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        if self.delay:
            time.sleep(self.delay)
        found = self._resolve(unquote(urlsplit(req.path).path))
        headers: dict[str, str] = {}
        if found is None:
            body, status, content_type = b"<html><body><h1>Not found</h1></body></html>", 404, "text/html"
        else:
            body, status, content_type = found[0].read_bytes(), 200, found[1]
            if self.validators:
                headers = {
                    "ETag": f'"{hashlib.blake2b(body, digest_size=8).hexdigest()}"',
                    "Last-Modified": formatdate(EDITION_TIME + found[2] * 86400, usegmt=True),
                }
                if _not_modified(req, headers):
                    status, body = 304, b""
        req.send_response(status)
        req.send_header("Content-Type", content_type)
        for name, value in headers.items():
            req.send_header(name, value)
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        req.wfile.write(body)
        with self._lock:
            self.served += 1


#: Last-Modified of the site's edition n: this time plus n days.
EDITION_TIME = 1_700_000_000


def _not_modified(req: BaseHTTPRequestHandler, validators: Mapping[str, str]) -> bool:
    """Whether the request's ``If-None-Match`` (else ``If-Modified-Since``) names the page as served."""
    etag = req.headers.get("If-None-Match")
    if etag is not None:
        return validators["ETag"] in (tag.strip() for tag in etag.split(","))
    return req.headers.get("If-Modified-Since") == validators["Last-Modified"]


# ----------------------------------------------------------------------------------- one crawl
def crawl_process(
    start_url: str,
    *,
    items_path: Path,
    stats_path: Path,
    page_log: Path | None = None,
    settings: Mapping[str, Any] | None = None,
    quiet: bool = True,
    stdout: Any = None,
    stderr: Any = None,
    spider: str = SPIDER,
) -> subprocess.Popen[bytes]:
    """Start one crawl of the demo spider (or of the project's spider ``spider``) in a child
    process (a real ``CrawlerProcess``).

    ``settings`` override the project settings (e.g. ``SIMHASH_DIR`` to an absolute path). The child
    writes the items to ``items_path`` (JSON lines), the final stats to ``stats_path`` (JSON) and, if
    given, one JSON line per response to ``page_log``.
    """
    config = {
        "start_url": start_url,
        "items_path": str(items_path),
        "stats_path": str(stats_path),
        "page_log": str(page_log) if page_log else None,
        "settings": dict(settings or {}),
        "quiet": quiet,
        "spider": spider,
    }
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--crawl-config", json.dumps(config)],
        cwd=PROJECT_DIR,
        stdout=stdout,
        stderr=stderr,
    )


def _crawl_in_this_process(config: dict[str, Any]) -> None:
    # Runs in the child. The working directory is example_project/, so data_path() resolves to
    # example_project/.scrapy and scrapy.cfg names the settings module.
    import logging

    os.chdir(PROJECT_DIR)
    sys.path.insert(0, str(PROJECT_DIR))
    # scrapy-simhash itself: installed in the virtualenv (./dev installs it), else this checkout.
    sys.path.append(str(PROJECT_DIR.parent))
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "demo_site_crawler.settings")
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.setdict(config["settings"], priority="cmdline")
    settings.set(
        "FEEDS",
        {config["items_path"]: {"format": "jsonlines", "overwrite": True, "encoding": "utf-8"}},
        priority="cmdline",
    )
    if config.get("quiet") and "LOG_LEVEL" not in config["settings"]:
        # Scrapy's log at WARNING; scrapy-simhash's own INFO lines (first duplicate, summary) shown.
        settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("    [%(name)s] %(message)s"))
        simhash_logger = logging.getLogger("scrapy_simhash")
        simhash_logger.addHandler(handler)
        simhash_logger.setLevel(logging.INFO)
        simhash_logger.propagate = False
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(config.get("spider", SPIDER))
    kwargs = {"start_url": config["start_url"]}
    if config.get("page_log"):
        kwargs["page_log"] = config["page_log"]
    process.crawl(crawler, **kwargs)
    process.start()
    if "finish_reason" not in crawler.stats.get_stats():
        sys.exit("the crawl did not run (see the errors above)")
    stats = {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in crawler.stats.get_stats().items()}
    Path(config["stats_path"]).write_text(json.dumps(stats, indent=1, sort_keys=True), encoding="utf-8")


def run_crawl(
    start_url: str,
    *,
    items_path: Path,
    stats_path: Path,
    page_log: Path | None = None,
    settings: Mapping[str, Any] | None = None,
    quiet: bool = True,
    timeout: float = 300,
    spider: str = SPIDER,
) -> dict[str, Any]:
    """Run one crawl to the end; returns its stats. Raises RuntimeError if the child fails."""
    for p in (items_path, stats_path, page_log):
        if p is not None and p.exists():
            p.unlink()
    proc = crawl_process(
        start_url,
        items_path=items_path,
        stats_path=stats_path,
        page_log=page_log,
        settings=settings,
        quiet=quiet,
        spider=spider,
    )
    rc = proc.wait(timeout=timeout)
    if rc != 0 or not stats_path.exists():
        raise RuntimeError(f"the crawl failed (exit code {rc}); run with --verbose to see its log")
    return json.loads(stats_path.read_text(encoding="utf-8"))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ----------------------------------------------------------------------------------- the demo
def _pick_port(requested: int | None) -> int:
    """The port of the last demo run if it is free (index keys are URLs, port included), else a free one."""
    if requested is not None:
        return requested
    with contextlib.suppress(OSError, ValueError):
        port = int(PORT_FILE.read_text())
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
        return port
    return 0


def _print_run(
    stats: Mapping[str, Any], pages: list[dict[str, Any]], items: list[dict[str, Any]], items_path: Path, base_url: str
) -> None:
    print("Verdicts per page (scrapy-simhash puts them in response.meta):")
    for p in sorted(pages, key=lambda p: (p.get("verdict") or "~", p["url"])):
        path = p["url"].removeprefix(base_url)
        extra = ""
        if p.get("duplicate_of"):
            extra = f"  ~ {str(p['duplicate_of']).removeprefix(base_url)}"
        dist = "" if p.get("distance") is None else f"d={p['distance']}"
        print(f"  {p.get('verdict') or '-'!s:15} {dist:5} {path}{extra}")
    print("scrapy-simhash stats:")
    for key in sorted(k for k in stats if k.startswith("simhash/")):
        print(f"  {key:40} {stats[key]}")
    verdicts = sum(int(stats.get(f"simhash/{v}", 0)) for v in ("new", "near_duplicate", "unchanged", "changed"))
    print(
        f"  (fingerprinted {stats.get('simhash/fingerprinted', 0)} == new + near_duplicate + unchanged + "
        f"changed = {verdicts})"
    )
    print(f"Responses: {stats.get('response_received_count', 0)}, items exported: {len(items)} -> {items_path}")
    for item in items:
        print(f"  + {item['title']}  [{item['url'].removeprefix(base_url)}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reset", action="store_true", help="delete the index before the first run")
    parser.add_argument("--runs", type=int, default=2, help="number of crawls (default 2)")
    parser.add_argument("--port", type=int, default=None, help="port of the site server (default: a free one)")
    parser.add_argument("--verbose", action="store_true", help="show Scrapy's whole log")
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="incremental crawls (SIMHASH_INCREMENTAL): known URLs are fetched again only when due",
    )
    parser.add_argument(
        "--days",
        type=float,
        default=1.0,
        help="with --incremental: simulated days between runs (SIMHASH_CLOCK, default 1)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="only serve the site (for `scrapy crawl site -a start_url=...`)"
    )
    parser.add_argument("--crawl-config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.crawl_config:
        _crawl_in_this_process(json.loads(args.crawl_config))
        return 0
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")

    if args.serve:
        with SiteServer(port=args.port or 0, validators=True) as server:
            print(
                f"Serving {SITE_DIR} on {server.base_url}; in example_project/, run:\n"
                f"  scrapy crawl {SPIDER} -a start_url={server.url('/index.html')} -O output/items.jsonl\n"
                "Ctrl-C to stop.",
                flush=True,
            )
            with contextlib.suppress(KeyboardInterrupt):
                threading.Event().wait()
        return 0
    index_dir = DATA_DIR / "simhash" / SPIDER
    if args.reset and index_dir.exists():
        shutil.rmtree(index_dir)
        print(f"Deleted the index in {index_dir}")
    elif index_dir.exists():
        print(f"Reusing the index in {index_dir} (--reset starts from scratch)")
    OUTPUT_DIR.mkdir(exist_ok=True)
    DATA_DIR.mkdir(exist_ok=True)
    server = SiteServer(port=_pick_port(args.port), validators=args.incremental)
    PORT_FILE.write_text(str(server.port))
    settings: dict[str, Any] = {}
    if args.incremental:
        settings = {"SIMHASH_INCREMENTAL": True}
    with server:
        print(f"Serving {SITE_DIR} on {server.base_url}")
        for run in range(1, args.runs + 1):
            if args.incremental:  # the crawl's clock runs (run - 1) x --days days ahead
                os.environ["SIMHASH_DEMO_DAYS"] = str((run - 1) * args.days)
            server.edition = 1 if run == 1 else 2
            items_path = OUTPUT_DIR / f"items-run{run}.jsonl"
            page_log = OUTPUT_DIR / f"pages-run{run}.jsonl"
            stats_path = OUTPUT_DIR / f"stats-run{run}.json"
            started = time.perf_counter()
            later = f", {(run - 1) * args.days:g} days later" if args.incremental else ""
            print(f"\n=== Run {run} (site edition {server.edition}{later}) " + "=" * 50, flush=True)
            stats = run_crawl(
                server.url("/index.html"),
                items_path=items_path,
                stats_path=stats_path,
                page_log=page_log,
                settings=settings,
                quiet=not args.verbose,
            )
            _print_run(stats, read_jsonl(page_log), read_jsonl(items_path), items_path, server.base_url)
            print(f"({time.perf_counter() - started:.1f} s)")
    verdicts = Counter(p.get("verdict") or "skipped" for p in read_jsonl(OUTPUT_DIR / f"pages-run{args.runs}.jsonl"))
    print(
        f"\nLast run: {dict(verdicts)}. Run the demo again to crawl once more on the same index "
        "(--incremental: an incremental crawl), or with --reset to start from an empty index."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
