"""The plain ``CrawlSpider`` of docs/usage/incremental.rst (no ``parse_start_url``), run as written: two real crawls (``scrapy
runspider``) of a site served on 127.0.0.1, one page rewritten between them. The first crawl exports
every page, its start page included; the incremental second one exports the rewritten page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers.pages import EN_ARTICLES, html_page

pytestmark = pytest.mark.e2e

DOC = Path(__file__).resolve().parents[2] / "docs" / "usage" / "incremental.rst"
SCRAPY = str(Path(sys.executable).parent / "scrapy")
ADDED = (
    "A paragraph written after the first crawl: the harbour office now publishes the cranes' working "
    "hours every Monday, with the berths they serve and the ships expected in the coming week."
)


def _documented_spider() -> str:
    """The code block of the section on a ``CrawlSpider`` whose items come from a rule's callback."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(".. _crawlspider-items:") :]
    match = re.search(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", section)
    assert match, "the section has no python code block"
    return textwrap.dedent(match.group(1))


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _crawl(tmp_path: Path, run: int) -> list[str]:
    out = tmp_path / f"run{run}.jsonl"
    settings = {
        "ADDONS": json.dumps({"scrapy_simhash.Addon": 0}),
        "SIMHASH_DIR": str(tmp_path / "simhash"),
        "SIMHASH_INCREMENTAL": "True",
        "SIMHASH_RECRAWL_BUDGET": "10",
        "DOWNLOAD_DELAY": "0",
        "ROBOTSTXT_OBEY": "False",
        "TELNETCONSOLE_ENABLED": "False",
    }
    args = [SCRAPY, "runspider", str(tmp_path / "spider.py"), "-O", str(out), "-L", "INFO"]
    for name, value in settings.items():
        args += ["-s", f"{name}={value}"]
    proc = subprocess.run(args, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines()]


def test_the_documented_crawl_spider_exports_its_start_page_and_a_changed_page(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    names = list(EN_ARTICLES)[:2]
    links = "".join(f'<li><a href="{n}.html">{n}</a></li>' for n in names)
    index_title, index_paragraphs = EN_ARTICLES[list(EN_ARTICLES)[2]]
    (site / "index.html").write_text(
        html_page("Index: " + index_title, index_paragraphs, sidebar=f"<ul>{links}</ul>"), encoding="utf-8"
    )
    for name in names:
        title, paragraphs = EN_ARTICLES[name]
        back = '<a href="index.html">Home</a>'
        (site / f"{name}.html").write_text(html_page(title, paragraphs, sidebar=back), encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    start = f"\n\nDocsSpider.start_urls = [{url + 'index.html'!r}]\n"
    (tmp_path / "spider.py").write_text(_documented_spider() + start, encoding="utf-8")
    try:
        first = _crawl(tmp_path, 1)
        assert sorted(first) == sorted([url + "index.html", *(f"{url}{n}.html" for n in names)])

        changed = site / f"{names[0]}.html"
        title, paragraphs = EN_ARTICLES[names[0]]
        changed.write_text(html_page(title, [*paragraphs, ADDED], sidebar='<a href="index.html">Home</a>'), "utf-8")
        stat = changed.stat()
        os.utime(changed, (stat.st_atime + 3600, stat.st_mtime + 3600))  # a Last-Modified after the first crawl's

        second = _crawl(tmp_path, 2)
        assert second == [f"{url}{names[0]}.html"]  # the rewritten page, and nothing else
    finally:
        server.shutdown()
        server.server_close()
