"""The demo project (``example_project/demo.py``: the bundled site served on 127.0.0.1 and real
crawls of it in child processes), loaded once, and its near-duplicate groups."""

from __future__ import annotations

import importlib.util
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_PATH = ROOT / "example_project" / "demo.py"


def _load_demo() -> Any:
    spec = importlib.util.spec_from_file_location("scrapy_simhash_demo", DEMO_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


demo = _load_demo()


MANIFEST = demo.load_manifest()


GROUPS: dict[str, list[str]] = {g["id"]: [p["path"] for p in g["pages"]] for g in MANIFEST["groups"]}


def wait_for_lines(path: Path, n: int, proc: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text(encoding="utf-8").splitlines()) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"the crawl ended (exit code {proc.returncode}) before {n} pages")
        time.sleep(0.02)
    pytest.fail(f"no {n} pages after {timeout} s")


class Pages(demo.SiteServer):  # type: ignore[name-defined]  # demo: example_project/demo.py, loaded at run time
    """Serves a fixed set of pages (``/index.html`` links to all of them)."""

    def __init__(self, pages: dict[str, str]) -> None:
        super().__init__()
        links = "".join(f'<li><a href="/{name}">{name}</a></li>' for name in pages)
        self.pages = {"index.html": f"<html><body><h1>Pages</h1><ul>{links}</ul></body></html>", **pages}
        self.start()

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        body = self.pages.get(req.path.lstrip("/"))
        data = (body or "<html><body>Not found</body></html>").encode()
        req.send_response(200 if body else 404)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)
