"""The server and the crawl of the real-site benchmark.

``serve(root, soft404)`` starts a Twisted web server in a child process on a free port of 127.0.0.1:
files under ``root`` (the query string is ignored, as static servers do), and for every path that
does not exist the soft-404 page with status 200. Files are read on every request, so edits of the
served copy show in the next crawl.

``crawl(config)`` runs one real Scrapy crawl (``CrawlerProcess``: engine, scheduler, downloader, the
scrapy-simhash add-on) in a child process, with a generic spider that follows every link to a page
of the served set, and returns one record per response: URL, status, ``simhash_verdict``,
``simhash_duplicate_of``, ``simhash_distance``, and the body saved to a file. With ``url_rules`` in
the config the crawl runs with ``SIMHASH_URL_RULES`` on, and each request the rules skipped is a
record too (``skipped``: the URL, and ``kept``: the kept page the rule made it a copy of), followed
by the crawl's ``simhash/url_rules/*`` stats and the rules it learned.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SERVER_CODE = r"""
import sys
from pathlib import Path
from urllib.parse import unquote
from twisted.internet import reactor
from twisted.web import resource, server

root = Path(sys.argv[1]).resolve()
soft404 = Path(sys.argv[2])

class Site(resource.Resource):
    isLeaf = True

    def render_GET(self, request):
        rel = unquote(request.path.decode("utf-8", "replace")).lstrip("/")
        if not rel or rel.endswith("/"):
            rel += "index.html"
        path = (root / rel).resolve()
        if root not in path.parents or not path.is_file():
            path = soft404
        request.setHeader(b"Content-Type", b"text/html" if path.suffix in (".html", ".htm") else b"text/plain")
        return path.read_bytes()

port = reactor.listenTCP(0, server.Site(Site()), interface="127.0.0.1")
print(port.getHost().port, flush=True)
reactor.run()
"""


@contextmanager
def serve(root: Path, soft404: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``root`` while the context is open."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_CODE, str(root), str(soft404)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def crawl(config: dict[str, Any], timeout: float = 1800) -> list[dict[str, Any]]:
    """One crawl in a child process. ``config``: ``base`` (server URL), ``start`` (URL path),
    ``allowed`` (the URL paths the spider may follow), ``index_dir``, ``bodies`` (a directory to
    save bodies in, or None)."""
    out = subprocess.run(
        [sys.executable, __file__, json.dumps(config)], capture_output=True, text=True, timeout=timeout, check=False
    )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return list(json.loads(line[7:]))
    raise RuntimeError(f"the crawl failed (exit status {out.returncode}):\n{out.stderr[-3000:]}")


def split_records(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """A crawl's records as (responses, requests the URL rules skipped, the rules' stats and
    learned rules: empty with the rules off)."""
    responses = [r for r in records if not r.get("skipped") and "url_rules" not in r]
    skipped = [r for r in records if r.get("skipped")]
    summary = next((r for r in records if "url_rules" in r), {})
    return responses, skipped, summary


def body_file(bodies: Path, url: str) -> Path:
    return bodies / (hashlib.sha1(url.encode()).hexdigest() + ".html")


#: How the rules' IgnoreRequest names the kept page: "simhash: URL is a copy of KEPT by URL rule ...".
_SKIP_MESSAGE = re.compile(r"^simhash: (?P<url>.+) is a copy of (?P<kept>\S+) by URL rule ")


def skip_record(message: str) -> dict[str, Any] | None:
    """The record of a request the URL rules skipped, from its IgnoreRequest's message (``None``:
    another IgnoreRequest)."""
    found = _SKIP_MESSAGE.match(message)
    if found is None:
        return None
    return {"url": found["url"], "status": None, "skipped": True, "kept": found["kept"]}


def _child(config: dict[str, Any]) -> None:
    import scrapy
    from prepare import link_key
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import IgnoreRequest

    base = config["base"]
    allowed = {link_key(base + "/", path): path for path in config["allowed"]}
    bodies = Path(config["bodies"]) if config.get("bodies") else None
    records: list[dict[str, Any]] = []

    class RealSiteSpider(scrapy.Spider):
        """Follows every link to a page of the served set, from the start page."""

        name = "realsite"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.start_urls = [base + config["start"]]

        def parse(self, response: Any, **kwargs: Any) -> Any:
            meta = response.meta
            record = {
                "url": response.url,
                "status": response.status,
                "content_type": (response.headers.get("Content-Type") or b"").decode("latin-1"),
                "verdict": meta.get("simhash_verdict"),
                "duplicate_of": meta.get("simhash_duplicate_of"),
                "distance": meta.get("simhash_distance"),
            }
            if bodies is not None:
                body_file(bodies, response.url).write_bytes(response.body)
            records.append(record)
            if not hasattr(response, "css"):
                return
            for href in response.css("a::attr(href)").getall():
                key = link_key(response.url, href)
                if key in allowed:
                    yield response.follow(allowed[key], errback=self.failed)

        def failed(self, failure: Any) -> None:
            if failure.check(IgnoreRequest):
                record = skip_record(str(failure.value))
                if record is not None:
                    records.append(record)

    settings = {
        "ADDONS": {"scrapy_simhash.Addon": 0},
        "SIMHASH_DIR": config["index_dir"],
        "LOG_LEVEL": "ERROR",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 8,
    }
    learned: list[str] = []
    if config.get("url_rules"):
        settings["SIMHASH_URL_RULES"] = True
    process = CrawlerProcess(settings)
    logging.getLogger("scrapy_simhash").setLevel(logging.WARNING)
    if config.get("url_rules"):
        rules_log = logging.getLogger("scrapy_simhash.scrapy.urlrules")
        rules_log.setLevel(logging.INFO)
        rules_log.addHandler(_Collect(learned))
    crawler = process.create_crawler(RealSiteSpider)
    process.crawl(crawler)
    process.start()
    if config.get("url_rules"):
        stats = crawler.stats.get_stats() if crawler.stats is not None else {}
        rules = {k: v for k, v in stats.items() if k.startswith("simhash/url_rules/")}
        records.append({"url_rules": rules, "learned": learned, "status": None, "url": None})
    print("RESULT " + json.dumps(records), flush=True)


class _Collect(logging.Handler):
    """Keeps the messages of the rules learned."""

    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.INFO)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Learned a URL rule"):
            self.into.append(message)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    _child(json.loads(sys.argv[1]))
