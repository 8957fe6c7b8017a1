"""``scrapy-simhash TARGET rules``: the rules kept in a real LMDB index listed with their evidence,
``--explain URL``, and ``--disable`` / ``--pin`` / ``--clear`` kept in the store for the next crawl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrapy_simhash import SimhashIndex
from scrapy_simhash.commands.cli import main
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.urlrules import IndexRuleStore, RuleBook
from scrapy_simhash.urlrules.learner import index_known

HOST = "http://shop.test"
LOW = ["-s", "SIMHASH_URL_RULES_MIN_SUPPORT=6", "-s", "SIMHASH_URL_RULES_CONFIDENCE=0.3"]


def _fetch(index: SimhashIndex, book: RuleBook, url: str, copy_of: str | None) -> None:
    """A first fetch as the crawl records it: a kept page, or a near-duplicate of ``copy_of``."""
    index.put_record(url, PageRecord.first(len(url), now=1.0, duplicate_of=copy_of).to_bytes())
    book.observe(url, "near_duplicate" if copy_of else "new", copy_of)


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "spider" / "pages"
    with SimhashIndex.open(path) as index:
        book = RuleBook(IndexRuleStore(index), index_known(index), min_support=6, confidence=0.3)
        for i in range(6):  # six copies by utm_source, in both orders
            first, second = (f"{HOST}/p{i}", f"{HOST}/p{i}?utm_source=x")
            if i % 2:
                first, second = second, first
            _fetch(index, book, first, None)
            _fetch(index, book, second, first)
        _fetch(index, book, f"{HOST}/p0?page=2", None)  # another page: vetoes param:page
        book.flush()
    return path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _rows(capsys, path, *args: str) -> dict[str, dict]:
    status, out, err = _run(capsys, *LOW, str(path), "rules", "--json", *args)
    assert status == 0, err
    return {row["rule"]: row for row in map(json.loads, out.splitlines())}


def test_rules_lists_each_rule_with_its_evidence_and_state(target, capsys) -> None:
    rows = _rows(capsys, target)
    assert rows["param:utm_source"] == {
        "host": "shop.test",
        "rule": "param:utm_source",
        "state": "applied",
        "copies": 6,
        "misses": 0,
        "confidence": 0.61,
        "skipped": 0,
        "explored": 0,
    }
    assert rows["param:page"]["state"] == "vetoed"
    # with the default thresholds (20 copies) the same rule is still being learned
    status, out, _ = _run(capsys, str(target), "rules")
    assert status == 0 and "shop.test\tparam:utm_source\tlearning\t6\t0\t0.61\t0\t0\n" in out


def test_rules_explain_names_the_rule_that_skips_a_url_and_why_another_is_fetched(target, capsys) -> None:
    status, out, _ = _run(capsys, *LOW, str(target), "rules", "--json", "--explain", f"{HOST}/p2?utm_source=y")
    explained = json.loads(out)
    assert status == 0 and explained["decision"].startswith(
        f"skipped: param:utm_source make it {HOST}/p2, fetched before"
    )
    assert [r["rule"] for r in explained["rules"]] == ["param:utm_source"]
    status, out, _ = _run(capsys, *LOW, str(target), "rules", "--json", "--explain", f"{HOST}/p0?page=3")
    explained = json.loads(out)
    assert explained["decision"].startswith("fetched: no applied rule")
    assert explained["vetoed_by"] == {"param:page": f"{HOST}/p0?page=2 differs from {HOST}/p0"}


def test_a_disabled_or_pinned_rule_is_kept_in_the_store_for_the_next_crawl(target, capsys) -> None:
    args = [*LOW, str(target), "rules", "--host", "shop.test"]
    assert _run(capsys, *args, "--disable", "param:utm_source")[0] == 0
    assert _run(capsys, *args, "--pin", "param:page")[0] == 0
    rows = _rows(capsys, target)
    assert rows["param:utm_source"]["state"] == "disabled" and rows["param:page"]["state"] == "pinned"
    with SimhashIndex.open(target) as index:  # the next crawl's rule book
        book = RuleBook(IndexRuleStore(index), index_known(index), min_support=6, confidence=0.3)
        assert book.plan(f"{HOST}/p2?utm_source=y") is None
        plan = book.plan(f"{HOST}/p0?page=9")
        assert plan is not None and plan.rules == ("param:page",)
    assert _run(capsys, *args, "--clear", "param:utm_source")[0] == 0
    assert _rows(capsys, target)["param:utm_source"]["state"] == "applied"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--disable", "param:utm_source"), "name the rule's host: --host HOST"),
        (("--host", "shop.test", "--pin", "nonsense"), "URL rule ('nonsense') is invalid"),
        (("--explain", "shop.test/p1"), "rules --explain takes an http(s) URL"),
    ],
)
def test_rules_refuses_bad_arguments_naming_the_fix(target, capsys, args, message) -> None:
    status, _, err = _run(capsys, str(target), "rules", *args)
    assert status == 2 and message in err and err.count("\n") == 1


def test_the_html_report_lists_the_fetches_each_rule_saved(target, tmp_path) -> None:
    from scrapy_simhash.commands.htmlreport import write_report
    from scrapy_simhash.urlrules.learner import SKIPPED

    with SimhashIndex.open(target) as index:
        book = RuleBook(IndexRuleStore(index), index_known(index), min_support=6, confidence=0.3)
        for i in range(3):  # what the crawl's middleware counts for each request it skips
            plan = book.plan(f"{HOST}/p{i}?utm_source=mail")
            assert plan is not None
            book.count(plan, SKIPPED)
        book.flush()
        page = Path(write_report(index, str(tmp_path / "report.html"), 0)).read_text(encoding="utf-8")
    table = page.split('<table id="url-rules">', 1)[1].split("</table>", 1)[0]
    assert "<tr><td>3</td><td>0</td><td>6</td><td>shop.test</td><td>param:utm_source</td></tr>" in table
