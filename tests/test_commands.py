"""``scrapy simhash`` command, called directly with Command.run (no subprocess)."""

from __future__ import annotations

import argparse
import json

import pytest
from conftest import article_html, make_response, run
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

from scrapy_simhash.commands.simhash import Command


def invoke(settings: dict, *args: str) -> None:
    command = Command()
    command.settings = Settings(settings)
    parser = argparse.ArgumentParser()
    command.add_options(parser)
    parser.add_argument("args", nargs="*")
    opts = parser.parse_args(list(args))
    command.run(opts.args, opts)


@pytest.fixture
def crawled(make_mw, base_settings):
    mw = make_mw()
    run(mw, make_response("https://news.example.com/a", article_html("harbour")))
    run(mw, make_response("https://mirror.example.org/a", article_html("harbour", site="Mirror")))
    run(mw, make_response("https://news.example.com/b", article_html("orchard")))
    run(mw, make_response("https://news.example.com/b", article_html("telescope")))
    mw.spider_closed(mw.crawler.spider, "finished")
    return base_settings


def test_info(crawled, capsys):
    invoke(crawled, "test", "info")
    info = json.loads(capsys.readouterr().out)
    assert info["keys"] == 2 and info["bits"] == 64 and info["max_distance"] == 3


def test_show_a_changed_url(crawled, capsys):
    invoke(crawled, "test", "show", "https://news.example.com/b")
    shown = json.loads(capsys.readouterr().out)
    assert shown["fetch_count"] == 2 and shown["change_count"] == 1
    assert shown["history"][0]["fp"] == shown["indexed_fp"]
    assert shown["history"][0]["distance"] > 3


def test_show_and_near_canonicalise_the_url(crawled, capsys):
    invoke(crawled, "test", "show", "https://news.example.com/b#comments")
    assert json.loads(capsys.readouterr().out)["key"] == "https://news.example.com/b"
    invoke(crawled, "test", "near", "https://mirror.example.org/a#top")
    assert capsys.readouterr().out.strip().endswith("\thttps://news.example.com/a")


def test_show_and_near_a_duplicate(crawled, capsys):
    invoke(crawled, "test", "show", "https://mirror.example.org/a")
    shown = json.loads(capsys.readouterr().out)
    assert shown["duplicate_of"] == "https://news.example.com/a" and shown["indexed_fp"] is None
    invoke(crawled, "test", "near", "https://mirror.example.org/a")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].endswith("\thttps://news.example.com/a")


def test_export_lists_every_url_near_duplicates_included(crawled, capsys):
    invoke(crawled, "test", "export")
    rows = {row["key"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert sorted(rows) == ["https://mirror.example.org/a", "https://news.example.com/a", "https://news.example.com/b"]
    assert all(row["fetch_count"] >= 1 for row in rows.values())
    duplicate = rows["https://mirror.example.org/a"]
    assert duplicate["fp"] is None and duplicate["duplicate_of"] == "https://news.example.com/a"
    assert len(rows["https://news.example.com/a"]["fp"]) == 16


def test_export_of_the_item_index_lists_keys_without_records(make_crawler, base_settings, capsys):
    from scrapy_simhash.pipeline import SimhashDedupPipeline

    crawler = make_crawler(SIMHASH_ITEM_FIELDS=["title", "body"])
    pipeline = SimhashDedupPipeline.from_crawler(crawler)
    pipeline.process_item({"url": "https://news.example.com/x", "title": "Harbour", "body": article_html("harbour")})
    pipeline.close_spider()
    invoke({**base_settings, "SIMHASH_ITEM_FIELDS": ["title", "body"]}, "test", "export", "--items")
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["key"] for row in rows] == ["https://news.example.com/x"] and len(rows[0]["fp"]) == 16


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("test",), "expected <spider>"),
        (("test", "frobnicate"), "expected <spider>"),
        (("test", "show"), "show takes one URL"),
        (("nospider", "info"), "no simhash index at"),
        (("test", "show", "https://news.example.com/never"), "is not in the index"),
    ],
)
def test_usage_errors(crawled, args, message):
    with pytest.raises(UsageError, match=message):
        invoke(crawled, *args)
