"""One real Scrapy crawl (``CrawlerProcess``) of a site on 127.0.0.1 with scrapy-simhash's add-on, run as a child process;
several, one after the other, each in a fresh child forked from one that imported Scrapy once (:class:`CrawlServer`).

``python rules_crawl.py CONFIG_JSON``: ``start_url``, ``settings``, ``stats_path`` (the final stats,
JSON), ``page_log`` (one JSON line per response), ``log_path`` (Scrapy's log) and ``must_fetch`` (a
regular expression: the URLs the spider's ``simhash_must_fetch`` marks). The spider follows every
link; a link's ``data-dont-filter="1"`` makes its request ``dont_filter``, its ``data-meta`` (JSON)
is the request's meta (over ``request_meta``, the meta of every request).
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import scrapy
from typing_extensions import Self

ROOT = Path(__file__).resolve().parents[2]


class RulesSpider(scrapy.Spider):
    """Follows every link from ``start_url``; logs each response with its verdict."""

    name = "rules"

    def __init__(
        self,
        start_url: str = "",
        page_log: str = "",
        must_fetch: str | None = None,
        request_meta: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.request_meta = request_meta or {}
        self.start_url = start_url
        self.must_fetch = re.compile(must_fetch) if must_fetch else None
        self._log_file = open(page_log, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[Any]:
        yield scrapy.Request(self.start_url, dont_filter=True)

    def simhash_must_fetch(self, request: scrapy.Request) -> bool:
        return bool(self.must_fetch is not None and self.must_fetch.search(request.url))

    def parse(self, response: Any, **kwargs: Any) -> Iterator[Any]:
        meta = response.meta
        line = {
            "url": response.url,
            "verdict": meta.get("simhash_verdict"),
            "duplicate_of": meta.get("simhash_duplicate_of"),
            "redirected": bool(meta.get("redirect_urls")),
            "explored": meta.get("simhash_url_rule"),
            "learned": self.crawler.stats.get_value("simhash/url_rules/learned", 0),
            "skipped": self.crawler.stats.get_value("simhash/url_rules/skipped", 0),
        }
        self._log_file.write(json.dumps(line) + "\n")
        for link in response.css("a[href]"):
            yield response.follow(
                link.attrib["href"],
                callback=self.parse,
                dont_filter=link.attrib.get("data-dont-filter") == "1",
                meta={**self.request_meta, **json.loads(link.attrib.get("data-meta", "{}"))},
            )

    def closed(self, reason: str) -> None:
        self._log_file.close()


def _crawl(config: dict[str, Any]) -> None:
    from scrapy.crawler import CrawlerProcess

    settings = {
        "ADDONS": {"scrapy_simhash.Addon": 0},
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "LOG_FILE": config["log_path"],
        **config["settings"],
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(RulesSpider)
    process.crawl(
        crawler,
        start_url=config["start_url"],
        page_log=config["page_log"],
        must_fetch=config.get("must_fetch"),
        request_meta=config.get("request_meta"),
    )
    process.start()
    stats = {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in crawler.stats.get_stats().items()}
    Path(config["stats_path"]).write_text(json.dumps(stats, indent=1, sort_keys=True), encoding="utf-8")


def run(config: Mapping[str, Any], timeout: float = 120) -> dict[str, Any]:
    """Run one crawl in a child process (this checkout first on its path); its final stats."""
    for name in ("stats_path", "page_log", "log_path"):
        Path(config[name]).unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, __file__, json.dumps(dict(config))],
        check=False,
        env=env,
        timeout=timeout,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not Path(config["stats_path"]).exists():
        raise _failed(config, proc.returncode, proc.stderr)
    return json.loads(Path(config["stats_path"]).read_text(encoding="utf-8"))


def _failed(config: Mapping[str, Any], code: int | None, stderr: str) -> RuntimeError:
    log = Path(config["log_path"]).read_text(encoding="utf-8") if Path(config["log_path"]).exists() else ""
    return RuntimeError(f"the crawl failed (exit code {code}):\n{stderr[-3000:]}\n{log[-3000:]}")


#: What every crawl imports (and nothing that runs: no reactor is installed before a crawl's fork).
_PRELOAD = (
    "scrapy.crawler",
    "scrapy_simhash.scrapy.addon",
    "scrapy_simhash.scrapy.middleware",
    "scrapy_simhash.scrapy.pipeline",
    "scrapy_simhash.scrapy.recrawl",
    "scrapy_simhash.scrapy.urlrules",
)


def _serve() -> None:
    """Import what a crawl imports, then for each config line on stdin fork a child that crawls
    (a fresh process but for the imports) and answer ``done <exit code>``."""
    import importlib

    for name in _PRELOAD:
        importlib.import_module(name)
    assert "twisted.internet.reactor" not in sys.modules  # each crawl installs its own
    print("ready", flush=True)
    for line in sys.stdin:
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _crawl(json.loads(line))
            except BaseException:  # noqa: BLE001 - told by the exit code, the traceback on stderr
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        print("done", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)


class CrawlServer:
    """Crawls one after the other (:meth:`run`, as :func:`run`), each in a fresh child process
    forked from one that has imported Scrapy and the package: a crawl's start without the imports
    (without ``os.fork``: :func:`run`'s child each)."""

    _proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Self:
        if not hasattr(os, "fork"):
            return self
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self._proc = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            start_new_session=True,  # a crawl past its time is killed with the server (its group)
        )
        if self._line(120) != "ready":
            self.__exit__()
            raise RuntimeError(f"the crawl server did not start:\n{self._errors()}")
        return self

    def _line(self, timeout: float) -> str | None:
        assert self._proc is not None and self._proc.stdout is not None
        if not select.select([self._proc.stdout], [], [], timeout)[0]:
            return None
        return self._proc.stdout.readline().strip()

    def _errors(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def run(self, config: Mapping[str, Any], timeout: float = 120) -> dict[str, Any]:
        """One crawl in a fresh child; its final stats."""
        if self._proc is None:
            return run(config, timeout)
        for name in ("stats_path", "page_log", "log_path"):
            Path(config[name]).unlink(missing_ok=True)
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(dict(config)) + "\n")
        self._proc.stdin.flush()
        answer = self._line(timeout)
        code = int(answer.split()[1]) if answer and answer.startswith("done ") else None
        if code is None:
            os.killpg(self._proc.pid, signal.SIGKILL)  # a crawl past its time: the server and its child
        if code != 0 or not Path(config["stats_path"]).exists():
            raise _failed(config, code, self._errors())
        return json.loads(Path(config["stats_path"]).read_text(encoding="utf-8"))

    def __exit__(self, *exc: object) -> None:
        if self._proc is None:
            return
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        _serve()
    else:
        _crawl(json.loads(sys.argv[1]))
