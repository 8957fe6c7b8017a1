"""Spider arguments (``-a simhash_reset=0``) and bad settings as a user gives them: strings, read
the way Scrapy's ``getbool`` reads them; a bad value stops ``scrapy crawl`` with one line and exit
status 1. Unit tests go through Scrapy's own argument path (``Spider.from_crawler(crawler,
**arguments)``, which sets each argument as a spider attribute); the ``scrapy crawl`` tests run the
demo project's spider in a subprocess against the demo site on 127.0.0.1."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import scrapy
from helpers.demo import demo
from helpers.pages import SimhashTestSpider, article_html, build_from_crawler, make_response, run
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapy_simhash.schedule import FreshnessPolicy
from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware
from scrapy_simhash.scrapy.pipeline import SimhashDedupPipeline
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex

ROOT = Path(__file__).resolve().parents[2]
URL = "https://news.example.com/harbour"

#: Every spider argument docs/reference/meta.rst documents, with string values as ``-a NAME=VALUE``
#: gives them, and what each must mean.
TRUE_STRINGS = ("1", "True", "true")
FALSE_STRINGS = ("0", "False", "false")
BAD_STRINGS = ("maybe", "yes", "", "none")
DOCUMENTED_ARGUMENTS = ("simhash_enabled", "simhash_reset")


def _middleware(base_settings: dict[str, Any], component: type = SimhashSpiderMiddleware, **arguments: Any) -> Any:
    """A component of a crawler whose spider got ``arguments`` as ``scrapy crawl -a`` gives them."""
    crawler = get_crawler(SimhashTestSpider, {**base_settings, "SIMHASH_ITEM_FIELDS": ["body"]})
    crawler.spider = SimhashTestSpider.from_crawler(crawler, **arguments)
    return build_from_crawler(component, crawler)


def _indexed_once(base_settings: dict[str, Any]) -> None:
    mw = _middleware(base_settings)
    run(mw, make_response(URL, article_html("harbour")))
    mw.spider_closed(mw.crawler.spider, "finished")


def test_the_docs_document_these_spider_arguments():
    page = (ROOT / "docs" / "reference" / "meta.rst").read_text(encoding="utf-8")
    documented = set(re.findall(r"^   \* - ``(simhash_\w+)[^\n]*\n     - spider attribute", page, flags=re.MULTILINE))
    assert documented == set(DOCUMENTED_ARGUMENTS)


@pytest.mark.parametrize("value", [*FALSE_STRINGS, False, 0])
def test_simhash_reset_false_keeps_the_index(base_settings, value):
    _indexed_once(base_settings)
    mw = _middleware(base_settings, simhash_reset=value)
    response = make_response(URL, article_html("harbour"))
    run(mw, response)
    assert response.meta["simhash_verdict"] == "unchanged"
    mw.spider_closed(mw.crawler.spider, "finished")


@pytest.mark.parametrize("value", [*TRUE_STRINGS, True, 1])
def test_simhash_reset_true_empties_the_index(base_settings, value):
    _indexed_once(base_settings)
    mw = _middleware(base_settings, simhash_reset=value)
    response = make_response(URL, article_html("harbour"))
    run(mw, response)
    assert response.meta["simhash_verdict"] == "new"
    mw.spider_closed(mw.crawler.spider, "finished")


@pytest.mark.parametrize("component", [SimhashSpiderMiddleware, SimhashDedupPipeline])
@pytest.mark.parametrize("value", FALSE_STRINGS)
def test_simhash_enabled_false_switches_it_off(base_settings, value, component, caplog):
    with caplog.at_level(logging.INFO):
        built = _middleware(base_settings, component, simhash_enabled=value)
    assert built.index is None and built._disabled
    assert not (Path(base_settings["SIMHASH_DIR"]) / "test").exists()


@pytest.mark.parametrize("value", TRUE_STRINGS)
def test_simhash_enabled_true_leaves_it_on(base_settings, value):
    mw = _middleware(base_settings, simhash_enabled=value)
    response = make_response(URL, article_html("harbour"))
    run(mw, response)
    assert response.meta["simhash_verdict"] == "new"
    mw.spider_closed(mw.crawler.spider, "finished")


@pytest.mark.parametrize("name", DOCUMENTED_ARGUMENTS)
@pytest.mark.parametrize("value", BAD_STRINGS)
def test_an_unreadable_argument_stops_the_crawl_and_keeps_the_index(base_settings, name, value):
    _indexed_once(base_settings)
    with pytest.raises(ValueError, match=name) as info:
        _middleware(base_settings, **{name: value})
    message = str(info.value)
    assert message.startswith(f"The spider argument {name} ({value!r}) is invalid: it must be True or False")
    assert "'true' or 'false'" in message
    with SimhashIndex.open(Path(base_settings["SIMHASH_DIR"]) / "test" / "pages", readonly=True) as index:
        assert len(index) == 1  # nothing was deleted


# -- settings from the command line (-s NAME=VALUE: strings) -------------------------------------


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("true", True), ("0", False), ("False", False)])
def test_a_switch_from_the_command_line(value, expected):
    assert load_config(Settings({"SIMHASH_DROP_UNCHANGED": value})).drop_unchanged is expected


@pytest.mark.parametrize("value", ["maybe", "on", "2.5x"])
def test_an_unreadable_switch_names_the_setting(value):
    with pytest.raises(ValueError, match=r"^SIMHASH_DEBUG \(.*\) is invalid: it must be True or False \(also 1 or 0"):
        load_config(Settings({"SIMHASH_DEBUG": value}))


def test_a_fingerprinter_option_given_as_none_is_its_default():
    config = load_config(Settings({"SIMHASH_NATIVE": "None", "SIMHASH_HMM": "false", "SIMHASH_MIN_FEATURES": "none"}))
    assert config.fingerprinter_kwargs == {"hmm": False}


def test_policy_options_from_the_command_line_are_json():
    config = load_config(Settings({"SIMHASH_RECRAWL_POLICY_OPTIONS": '{"probes": 3}'}))
    assert isinstance(config.policy, FreshnessPolicy) and config.policy.probes == 3
    with pytest.raises(ValueError, match=r"SIMHASH_RECRAWL_POLICY_OPTIONS \('probe_ratio=4'\) is invalid: .* JSON"):
        load_config(Settings({"SIMHASH_RECRAWL_POLICY_OPTIONS": "probe_ratio=4"}))


def test_only_the_repetition_of_a_reported_error_is_left_out(base_settings, caplog):
    with pytest.raises(ValueError, match="SIMHASH_MAX_DISTANCE") as reported, caplog.at_level(logging.INFO):
        _middleware({**base_settings, "SIMHASH_MAX_DISTANCE": "99"})
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        f"scrapy-simhash cannot start: {reported.value}"
    ]
    caplog.clear()
    other = ValueError("another component's error")
    for name in ("asyncio", "twisted"):  # where Scrapy (asyncio or Twisted) repeats an error of a crawl
        for error in (reported.value, other):
            logging.getLogger(name).error("Task exception was never retrieved", exc_info=(ValueError, error, None))
    assert [(r.name, r.exc_info[1]) for r in caplog.records] == [("asyncio", other), ("twisted", other)]


# -- the Redis store: the closing summary names the server, not a directory ------------------------


def test_redis_summary_names_the_server_and_prefix(base_settings, redis_server, caplog):
    settings = {
        **base_settings,
        "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
        "SIMHASH_REDIS_URL": redis_server.url,
        "SIMHASH_REDIS_PREFIX": "args-summary:%(spider)s",
        "SIMHASH_RESET": True,
    }
    with caplog.at_level(logging.INFO):
        for _ in range(2):  # the second reset deletes the first crawl's index
            mw = _middleware(settings)
            run(mw, make_response(URL, article_html("harbour")))
            mw.spider_closed(mw.crawler.spider, "finished")
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith(("simhash: ", "Deleted"))]
    assert len(lines) == 3 and lines[1].startswith("Deleted"), lines
    for line in lines:
        assert f"127.0.0.1:{redis_server.port}/0" in line and "{args-summary:test:pages}" in line, line
        assert base_settings["SIMHASH_DIR"] not in line, line


# -- scrapy crawl, in a subprocess ---------------------------------------------------------------

OLD_SCRAPY = tuple(int(x) for x in scrapy.__version__.split(".")[:2]) < (2, 13)


def _crawl(site: Any, index_dir: Path, *args: str, items: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``scrapy crawl site`` of the demo project (its settings, SIMHASH_DIR = ``index_dir``)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={site.url('/index.html')}"]
    command += ["-s", f"SIMHASH_DIR={index_dir}", "-s", "LOG_LEVEL=INFO", *args]
    if items is not None:
        command += ["-o", f"{items}:jsonl"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # this checkout
    return subprocess.run(
        command, cwd=ROOT / "example_project", env=env, capture_output=True, text=True, timeout=180, check=False
    )


def _stats(stderr: str) -> dict[str, Any]:
    match = re.search(r"Dumping Scrapy stats:\n(\{.*?\})\n", stderr, flags=re.DOTALL)
    assert match, stderr[-3000:]
    return dict(re.findall(r"'([^']+)': (\d+)", match.group(1)))


def _fingerprints(index_dir: Path) -> int:
    with SimhashIndex.open(index_dir / "site" / "pages", readonly=True) as index:
        return len(index)


@pytest.mark.e2e
@pytest.mark.slow
def test_scrapy_crawl_with_spider_arguments_as_strings(tmp_path):
    index_dir = tmp_path / "simhash"
    with demo.SiteServer() as site:
        first = _crawl(site, index_dir, items=tmp_path / "first.jsonl")
        assert first.returncode == 0, first.stderr[-3000:]
        kept = _fingerprints(index_dir)
        exported = len(demo.read_jsonl(tmp_path / "first.jsonl"))
        assert kept > 10 and exported > 10
        for value in ("0", "False"):  # the index survives; nothing changed: nothing exported
            result = _crawl(site, index_dir, "-a", f"simhash_reset={value}", items=tmp_path / f"reset-{value}.jsonl")
            assert result.returncode == 0, result.stderr[-3000:]
            assert f"{kept} fingerprints" in result.stderr
            assert "Deleted the simhash page index" not in result.stderr
            assert _fingerprints(index_dir) == kept
            assert demo.read_jsonl(tmp_path / f"reset-{value}.jsonl") == []
        result = _crawl(site, index_dir, "-a", "simhash_reset=1", items=tmp_path / "reset-1.jsonl")
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Deleted the simhash page index" in result.stderr and "0 fingerprints" in result.stderr
        assert len(demo.read_jsonl(tmp_path / "reset-1.jsonl")) == exported
        result = _crawl(site, index_dir, "-a", "simhash_enabled=False", items=tmp_path / "off.jsonl")
        assert result.returncode == 0, result.stderr[-3000:]
        assert "scrapy-simhash is off for spider site" in result.stderr
        assert not any(name.startswith("simhash/") for name in _stats(result.stderr))
        assert len(demo.read_jsonl(tmp_path / "off.jsonl")) > exported  # near-duplicates exported too
    assert _fingerprints(index_dir) == kept


@pytest.mark.e2e
@pytest.mark.skipif(
    OLD_SCRAPY, reason="Scrapy < 2.13: Twisted prints its 'Unhandled error in Deferred' traceback itself"
)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("-s", "SIMHASH_MAX_DISTANCE=99"),
            "SIMHASH_MAX_DISTANCE ('99') is invalid: it must be an integer between 0 and SIMHASH_BITS - 1 (63)",
        ),
        (("-s", "SIMHASH_FEATURES=paragraphs"), "SIMHASH_FEATURES ('paragraphs') is invalid"),
        (("-a", "simhash_reset=maybe"), "The spider argument simhash_reset ('maybe') is invalid"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_status_1(tmp_path, args, message):
    index_dir = tmp_path / "simhash"
    with demo.SiteServer() as site:
        result = _crawl(site, index_dir, *args, "-s", "LOG_LEVEL=WARNING")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "Task exception" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line or " CRITICAL: " in line]
    assert len(errors) == 1 and f"ERROR: scrapy-simhash cannot start: {message}" in errors[0], result.stderr
    assert not (index_dir / "site").exists()  # nothing was fetched or written


@pytest.mark.e2e
@pytest.mark.skipif(
    OLD_SCRAPY, reason="Scrapy < 2.13: Twisted prints its 'Unhandled error in Deferred' traceback itself"
)
def test_an_index_with_other_settings_is_one_line_and_kept(tmp_path):
    index_dir = tmp_path / "simhash"
    with SimhashIndex.open(index_dir / "site" / "pages") as index:
        index.add("https://a.example/", 0x1234)
    with demo.SiteServer() as site:
        result = _crawl(site, index_dir, "-s", "SIMHASH_MAX_DISTANCE=2", "-s", "LOG_LEVEL=WARNING")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line or " CRITICAL: " in line]
    assert len(errors) == 1 and "cannot start: The simhash index at" in errors[0], result.stderr
    assert "was created with max_distance=3, but max_distance=2 was requested" in errors[0]
    assert _fingerprints(index_dir) == 1


@pytest.mark.e2e
@pytest.mark.skipif(
    OLD_SCRAPY, reason="Scrapy < 2.13: Twisted prints its 'Unhandled error in Deferred' traceback itself"
)
def test_a_reset_of_a_damaged_index_says_that_it_deleted_nothing_and_why(tmp_path):
    index_dir = tmp_path / "simhash"
    pages = index_dir / "site" / "pages"
    with SimhashIndex.open(pages) as index:
        index.add_many((f"https://a.example/{i}", (i * 0x9E3779B97F4A7C15) % (1 << 64)) for i in range(5000))
    data = pages / "data.mdb"
    os.truncate(data, data.stat().st_size // 2)
    before = data.read_bytes()
    with demo.SiteServer() as site:
        result = _crawl(site, index_dir, "-a", "simhash_reset=1")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "Deleted the simhash" not in result.stderr and "Deleting" not in result.stderr  # it was not
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line or " CRITICAL: " in line]
    assert len(errors) == 1, result.stderr[-3000:]
    assert f"cannot start: {pages} holds a damaged LMDB database that cannot be read" in errors[0]
    assert "(data.mdb is truncated " in errors[0] and "restore the index from a copy" in errors[0]
    assert "A reset (SIMHASH_RESET, -a simhash_reset) deletes only an index it can read." in errors[0]
    assert data.read_bytes() == before
