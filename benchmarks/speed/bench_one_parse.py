"""One parse per page: the crawler's CPU per page on real news pages, with the fingerprint read
from the spider's own lxml tree ("shared") or from a second parse of the page ("own", as before).

The 250 real news pages of ``../shared/data`` (``zh-web-cee/original``: GBK Chinese, without the
corpus's ``<text id=..>`` wrapper, which is no part of the page as its site served it;
``scrapinghub-aeb/html``: English), each also under a tracking-parameter copy
(``?utm_source=feed``), are served by a Twisted static file server in a separate process on
127.0.0.1 as ``text/html`` without a charset (the pages' ``<meta>`` declares it, or not). Each
crawl is a real ``CrawlerProcess`` in its own process: an index page, then every page and copy,
with a spider that parses with selectors (title, links, paragraphs) or one that never parses.
Configs run in turn, ``--repeats`` times; figures are medians of the crawler's CPU time (process
time from the first response to the end) per response, the ratio against the crawl without the
middleware in the same run.

    .venv/bin/python benchmarks/speed/bench_one_parse.py [--repeats 3] [--concurrency 16]
    .venv/bin/python benchmarks/speed/bench_one_parse.py --in-process [--repeats 5]

``--in-process``: no crawl, no server; on the same pages, the middleware's path to a fingerprint
(its decoding, the shared tree, ``fingerprint_page``) and a spider's selectors after it (title,
links), each page ``--repeats`` times per config in turn: the sum over pages of each page's least
CPU time (a figure that a loaded machine disturbs little), and the parses alone.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"

SERVER_CODE = r"""
import sys
from twisted.internet import reactor
from twisted.web import server, static
root = static.File(sys.argv[1])
root.contentTypes[".html"] = "text/html"
port = reactor.listenTCP(0, server.Site(root), interface="127.0.0.1")
print(port.getHost().port, flush=True)
reactor.run()
"""

_CLEANEVAL_RE = re.compile(rb"^\s*<text\s+id=[^>]*>")


def build_site(root: Path) -> int:
    """The news pages under ``root/p/`` and an index linking to each and to its copy."""
    bodies = _pages()
    (root / "p").mkdir(parents=True)
    links = []
    for i, body in enumerate(bodies):
        (root / "p" / f"{i}.html").write_bytes(body)
        links += [f'<a href="/p/{i}.html">{i}</a>', f'<a href="/p/{i}.html?utm_source=feed">{i}</a>']
    (root / "index.html").write_text(f"<html><body>{''.join(links)}</body></html>", encoding="utf-8")
    return len(bodies)


def _pages() -> list[bytes]:
    zh = sorted((DATA / "zh-web-cee" / "original").glob("*.html"))
    en = sorted((DATA / "scrapinghub-aeb" / "html").glob("*.html.gz"))
    return [_CLEANEVAL_RE.sub(b"", p.read_bytes(), count=1) for p in zh] + [gzip.decompress(p.read_bytes()) for p in en]


def in_process(repeats: int) -> None:
    """Per-page CPU ms of the middleware's fingerprint path, own parse vs shared tree (see the module docstring)."""
    from scrapy.http import HtmlResponse

    from scrapy_simhash.fingerprint.simhash import Fingerprinter
    from scrapy_simhash.scrapy.middleware import response_text
    from scrapy_simhash.scrapy.tree import shared_tree
    from scrapy_simhash.text import extract

    fingerprinter = Fingerprinter()
    bodies = _pages()

    def response(i: int, body: bytes) -> HtmlResponse:
        return HtmlResponse(url=f"http://127.0.0.1/p/{i}.html", body=body, headers={"Content-Type": "text/html"})

    def page(i: int, body: bytes, shared: bool, parses: bool) -> float:
        r = response(i, body)
        started = time.process_time()
        html = response_text(r)
        tree = shared_tree(r, html)[0] if shared else None
        fingerprinter.fingerprint_page(html, url=r.url, tree=tree)
        if parses:
            r.css("title::text").get()
            r.css("a::attr(href)").getall()
        return time.process_time() - started

    def parse_only(i: int, body: bytes) -> tuple[float, float]:
        r = response(i, body)
        html = response_text(r)
        started = time.process_time()
        extract.parse_prepared(extract.prepare(html))
        own = time.process_time() - started
        started = time.process_time()
        r.selector  # noqa: B018 - parsel's parse, as a spider's first response.css
        return own, time.process_time() - started

    configs = [(spider, mode) for spider in ("parses", "never parses") for mode in ("own", "shared")]
    totals = dict.fromkeys(configs, 0.0)
    parse_totals = [0.0, 0.0]
    for i, body in enumerate(bodies):
        best = dict.fromkeys(configs, float("inf"))
        best_parse = [float("inf"), float("inf")]
        for _ in range(repeats):
            for spider, mode in configs:
                best[(spider, mode)] = min(best[(spider, mode)], page(i, body, mode == "shared", spider == "parses"))
            best_parse = [min(a, b) for a, b in zip(best_parse, parse_only(i, body), strict=True)]
        for config in configs:
            totals[config] += best[config]
        parse_totals = [a + b for a, b in zip(parse_totals, best_parse, strict=True)]
    n = len(bodies)
    print(f"{n} pages; CPU ms per page, sum of each page's least of {repeats}")
    for spider, mode in configs:
        print(f"{spider:<14} {mode:<8} {totals[(spider, mode)] / n * 1000:8.3f}")
    print(f"parse alone: ours {parse_totals[0] / n * 1000:.3f}, parsel's selector {parse_totals[1] / n * 1000:.3f}")


def _child(config: dict[str, Any]) -> None:
    import logging

    import scrapy
    from scrapy.crawler import CrawlerProcess

    if config["mode"] == "own":  # as before: no tree shared, the middleware parses the page itself
        from scrapy_simhash.scrapy import middleware

        middleware.shared_tree = lambda response, text: (None, "benchmark")  # type: ignore[assignment]
    times: list[float] = []
    cpu: list[float] = []
    parses = config["parses"]

    class BenchSpider(scrapy.Spider):
        name = "bench"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.start_urls = [config["start_url"]]

        def parse(self, response: Any, **kwargs: Any) -> Any:
            times.append(time.perf_counter())
            if len(times) == 1:
                cpu.append(time.process_time())
                for href in response.css("a::attr(href)").getall():
                    yield response.follow(href)
                return
            if parses:
                yield {
                    "url": response.url,
                    "title": response.css("title::text").get(),
                    "links": len(response.css("a::attr(href)").getall()),
                    "text": len(" ".join(response.xpath("//p//text()").getall())),
                }
            else:
                yield {"url": response.url, "size": len(response.body)}

    middlewares = {"scrapy_simhash.SimhashSpiderMiddleware": 950} if config["mode"] != "off" else {}
    settings = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": config["concurrency"],
        "CONCURRENT_REQUESTS_PER_DOMAIN": config["concurrency"],
        "SPIDER_MIDDLEWARES": middlewares,
        "SIMHASH_ENABLED": True,
        "SIMHASH_DIR": config["index_dir"],
        "SIMHASH_RESET": True,
    }
    process = CrawlerProcess(settings)
    logging.getLogger("scrapy_simhash").setLevel(logging.WARNING)
    crawler = process.create_crawler(BenchSpider)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats()
    result = {
        "responses": len(times),
        "cpu_s": time.process_time() - cpu[0] if cpu else None,
        "parse": {k.split("/", 2)[2]: v for k, v in stats.items() if k.startswith("simhash/parse/")},
        "fingerprinted": stats.get("simhash/fingerprinted", 0),
    }
    print("RESULT " + json.dumps(result), flush=True)


def _run(config: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])  # type: ignore[no-any-return]
    raise RuntimeError(f"the crawl failed:\n{out.stderr[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--in-process", action="store_true", help="no crawl: the fingerprint path per page")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(json.loads(args.child))
        return 0
    if args.in_process:
        in_process(args.repeats)
        return 0
    configs = [(spider, mode) for spider in ("parses", "never parses") for mode in ("off", "own", "shared")]
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        pages = build_site(site)
        server = subprocess.Popen([sys.executable, "-c", SERVER_CODE, str(site)], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            for repeat in range(args.repeats):
                for spider, mode in configs:
                    config = {
                        "start_url": f"http://127.0.0.1:{port}/index.html",
                        "mode": mode,
                        "parses": spider == "parses",
                        "concurrency": args.concurrency,
                        "index_dir": str(Path(tmp) / f"index-{repeat}-{mode}"),
                    }
                    runs[(spider, mode)].append(_run(config))
        finally:
            server.terminate()
            server.wait()
    print(f"{pages} pages, each also under a copy; median of {args.repeats}; CPU ms per response of the crawler")
    print(f"{'spider':<14} {'config':<8} {'responses':>9} {'CPU ms/resp':>11} {'ratio':>6}  parse stats")
    for spider in ("parses", "never parses"):
        base = statistics.median(r["cpu_s"] / r["responses"] for r in runs[(spider, "off")])
        for mode in ("off", "own", "shared"):
            rs = runs[(spider, mode)]
            per = statistics.median(r["cpu_s"] / r["responses"] for r in rs)
            print(
                f"{spider:<14} {mode:<8} {rs[0]['responses']:>9} {per * 1000:>11.2f} {base / per:>6.2f}  {rs[-1]['parse']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
