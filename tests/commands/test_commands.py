"""The subcommands, through the ``scrapy simhash`` door called in-process (``Command.run``)."""

from __future__ import annotations

import argparse
import http.server
import json
import random
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.pages import EN_ARTICLES, article_html, html_page, make_response, run
from scrapy.settings import Settings

from scrapy_simhash import Fingerprinter, SimhashIndex, hamming
from scrapy_simhash.commands import reports
from scrapy_simhash.commands.simhash import Command
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.schedule import FreshnessPolicy
from scrapy_simhash.store.record import PageRecord

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

A = "https://news.example.com/a"
MIRROR = "https://mirror.example.org/a"
B = "https://news.example.com/b"


def invoke(settings: dict, *args: str) -> int:
    """Run ``scrapy simhash ARGS`` as Scrapy's command line would; return the exit status."""
    command = Command()
    command.settings = Settings(settings)
    parser = argparse.ArgumentParser(conflict_handler="resolve")  # as Scrapy builds it
    command.add_options(parser)
    opts, rest = parser.parse_known_args(list(args))
    try:
        command.run(rest, opts)
    except SystemExit as exc:  # argparse: bad arguments
        return int(exc.code or 0)
    return command.exitcode


def out_of(capsys, settings: dict, *args: str) -> str:
    assert invoke(settings, *args) == 0
    return capsys.readouterr().out


@pytest.fixture
def crawled(make_mw, base_settings):
    mw = make_mw()
    run(mw, make_response(A, article_html("harbour")))
    run(mw, make_response(MIRROR, article_html("harbour", site="Mirror")))
    run(mw, make_response(B, article_html("orchard")))
    run(mw, make_response(B, article_html("telescope")))
    mw.spider_closed(mw.crawler.spider, "finished")
    return base_settings


def pages_dir(settings: dict) -> Path:
    return Path(settings["SIMHASH_DIR"]) / "test" / "pages"


def test_info_counts_verdicts_and_buckets(crawled, capsys):
    info = json.loads(out_of(capsys, crawled, "test", "info", "--json"))
    assert info["keys"] == 2 and info["bits"] == 64 and info["max_distance"] == 3
    assert info["last_verdicts"] == {"new": 1, "near_duplicate": 1, "unchanged": 0, "changed": 1, "gone": 0, "moved": 0}
    # every distinct fingerprint is filed once per table
    assert sum(info["bucket_sizes"].values()) >= info["tables"] and info["bucket_sizes"]["1"] >= 1
    assert info["file_size"] > 0 and info["fingerprint_settings"]["bits"] == 64
    text = out_of(capsys, crawled, "test", "info")
    assert "last_verdicts:\n  new: 1\n" in text


def test_show_a_changed_url_with_readable_times(crawled, capsys):
    shown = json.loads(out_of(capsys, crawled, "test", "show", B + "#comments", "--json"))
    assert shown["key"] == B and shown["fetch_count"] == 2 and shown["change_count"] == 1
    assert shown["last_verdict"] == "changed" and shown["first_seen"].endswith("Z")
    assert shown["history"][0]["fp"] == shown["indexed_fp"] and shown["history"][0]["change_distance"] > 3


def test_show_a_duplicate_gives_the_distance_to_its_original(crawled, capsys):
    shown = json.loads(out_of(capsys, crawled, "test", "show", MIRROR, "--json"))
    assert shown["duplicate_of"] == A and shown["indexed_fp"] is None
    fp = Fingerprinter()
    expected = hamming(
        fp.fingerprint_html(article_html("harbour")), fp.fingerprint_html(article_html("harbour", site="Mirror"))
    )
    assert shown["duplicate_distance"] == expected


def test_dropped_lists_copies_with_distance(crawled, capsys):
    rows = [json.loads(line) for line in out_of(capsys, crawled, "test", "dropped", "--json").splitlines()]
    assert [(r["key"], r["duplicate_of"]) for r in rows] == [(MIRROR, A)] and 0 <= rows[0]["distance"] <= 3
    assert out_of(capsys, crawled, "test", "dropped", "--of", A).startswith(f"{MIRROR}\t{A}\t")
    assert out_of(capsys, crawled, "test", "dropped", "--of", B) == ""


def test_dropped_with_nothing_to_list_says_why(crawled, make_crawler, base_settings, capsys):
    from scrapy_simhash.scrapy.pipeline import SimhashDedupPipeline

    assert invoke(crawled, "test", "dropped", "--of", B) == 0
    result = capsys.readouterr()
    assert result.out == "" and f"no URL was held back as a near-duplicate of {B}" in result.err
    crawler = make_crawler(SIMHASH_ITEM_FIELDS=["title", "body"])
    pipeline = SimhashDedupPipeline.from_crawler(crawler)
    pipeline.process_item({"url": "https://news.example.com/x", "title": "Harbour", "body": article_html("harbour")})
    pipeline.close_spider()
    settings = {**base_settings, "SIMHASH_ITEM_FIELDS": ["title", "body"]}
    assert invoke(settings, "test", "dropped", "--items") == 0
    result = capsys.readouterr()
    assert result.out == "" and "an item index keeps no record of the items it dropped" in result.err


def test_near_by_url_lists_the_dropped_copies_of_the_original(crawled, capsys):
    rows = [json.loads(x) for x in out_of(capsys, crawled, "test", "near", "--url", A, "--json").splitlines()]
    assert [(r["key"], r["copy_of"]) for r in rows] == [(MIRROR, A)]
    rows = [json.loads(x) for x in out_of(capsys, crawled, "test", "near", "--url", MIRROR, "--json").splitlines()]
    assert rows[0]["key"] == A and rows[0]["similarity"] == round(100 * (1 - rows[0]["distance"] / 64), 1)
    # a URL where show, dropped --of and explain take one is a URL here too (it was fingerprinted as text)
    assert out_of(capsys, crawled, "test", "near", A) == out_of(capsys, crawled, "test", "near", "--url", A) != ""
    assert invoke(crawled, "test", "near", A, "--url", B) == 2 and "one of" in capsys.readouterr().err


def test_near_by_text_and_by_file(crawled, capsys, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(article_html("telescope"))
    assert out_of(capsys, crawled, "test", "near", "--file", str(page)).split("\t")[0] == "0"
    title, paragraphs = ("", list[str]())
    from helpers.pages import EN_ARTICLES

    title, paragraphs = EN_ARTICLES["telescope"]
    assert out_of(capsys, crawled, "test", "near", "\n".join(paragraphs) + "\n" + title).strip().endswith(f"\t{B}\t-")


def test_near_errors_are_one_line(crawled, capsys):
    assert invoke(crawled, "test", "near", "--url", A, "-k", "6") == 2
    assert (
        capsys.readouterr().err
        == "error: -k 6 is out of range: this index finds distances 0 to 3 (its SIMHASH_MAX_DISTANCE)\n"
    )
    assert invoke(crawled, "test", "near", "words", "--url", A) == 2
    assert invoke(crawled, "test", "show", "https://news.example.com/never") == 1
    assert capsys.readouterr().err.count("\n") == 2


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = article_html("orchard" if self.path == "/orchard" else "harbour").encode()
        self.send_response(200 if self.path != "/missing" else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_explain_a_url_and_a_file(base_settings, capsys, tmp_path, site):
    page = tmp_path / "mirror.html"
    page.write_text(article_html("harbour", site="Mirror"))
    out = json.loads(out_of(capsys, base_settings, "explain", f"{site}/harbour", str(page), "--json"))
    first, second = out["pages"]
    fp = Fingerprinter()
    assert int(first["fp"], 16) == fp.fingerprint_html(article_html("harbour"))
    assert first["title"] == "Harbour cranes return after a decade of repairs" and "north quay" in first["text"]
    assert "Home" not in first["text"] and len(first["top_features"]) == 15
    assert out["distance"] == hamming(int(first["fp"], 16), int(second["fp"], 16))
    weights = dict(first["top_features"])
    assert all(w > 0 for w in weights.values())
    # the same article under another template: what a crawl would drop, and why (the count of what
    # it adds that let the drop through: it once printed "adds: None")
    assert out["verdict"] == "near_duplicate" and isinstance(out["adds_characters"], int)
    assert out["why"] == (
        f"within SIMHASH_MAX_DISTANCE (3) of the first page; its own text adds about {out['adds_characters']} "
        "characters to the first page's, under SIMHASH_KEEP_ADDS (100)"
    )
    assert out["adds_characters"] < 100 and "adds" not in out
    assert out["site_template"].startswith("not used: explain was given no index")  # it says so
    assert out["sketch_similarity"] >= 0.9 and first["fallback"] is None
    out = json.loads(out_of(capsys, base_settings, "explain", f"{site}/harbour", f"{site}/orchard", "--json"))
    assert out["distance"] > 3 and out["only_in_first"] and out["only_in_second"]
    assert {f for f, _ in out["only_in_first"]}.isdisjoint(f for f, _ in out["only_in_second"])
    assert (out["verdict"], out["why"]) == ("new", "not a near-duplicate of the first page")
    assert out["sketch_similarity"] < 0.1
    assert invoke(base_settings, "explain", str(tmp_path / "none.html")) == 1
    assert "could not read" in capsys.readouterr().err


def test_explain_decides_as_the_crawl_does(base_settings, capsys, tmp_path):
    """explain's fingerprint is the crawl's (a short page's exact hash covers its whole visible
    text), and its verdict follows the crawl's settings: two pages whose fingerprinted part is
    one article but whose other content differs are kept by SIMHASH_NEAR_SIMILARITY, dropped
    with it off."""
    from helpers.pages import OPTIONS_A, OPTIONS_B, options_page

    short = tmp_path / "short.html"
    short.write_text("<html><head><title>Hours</title></head><body><nav>Home News</nav><p>Open at nine.</p></body></html>")
    out = json.loads(out_of(capsys, base_settings, "explain", str(short), "--json"))
    assert out["pages"][0]["fallback"] == "short"
    assert int(out["pages"][0]["fp"], 16) == Fingerprinter().fingerprint_page(short.read_bytes()).fp
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    a.write_text(options_page(OPTIONS_A))
    b.write_text(options_page(OPTIONS_B))
    out = json.loads(out_of(capsys, base_settings, "explain", str(a), str(b), "--json"))
    assert out["distance"] == 0 and out["sketch_similarity"] < 0.6
    assert out["verdict"] == "new" and "SIMHASH_NEAR_SIMILARITY (0.6)" in out["why"]
    off = {**base_settings, "SIMHASH_NEAR_SIMILARITY": 0}
    printed = out_of(capsys, off, "explain", str(a), str(b), "--json")
    assert printed.count("\n") == 1  # one JSON document, on one line
    out = json.loads(printed)
    assert out["verdict"] == "new" and "adds about" in out["why"]  # the other command's options are its own
    assert out["adds_characters"] >= 100 and f"about {out['adds_characters']} characters" in out["why"]
    off["SIMHASH_KEEP_ADDS"] = 0  # resemblance alone
    out = json.loads(out_of(capsys, off, "explain", str(a), str(b), "--json"))
    assert (out["verdict"], out["distance"]) == ("near_duplicate", 0)


def _tracked_index(path: Path, now: float) -> SimhashIndex:
    index = SimhashIndex.open(path)
    tracker = ChangeTracker(index)
    fp = Fingerprinter()
    for i, name in enumerate(("harbour", "orchard", "telescope")):
        tracker.observe(f"https://x.example/{name}", PageFingerprint.of(fp.fingerprint_html(article_html(name))), now=now - i * 86400 * 10)
    for i, key in enumerate(("https://x.example/harbour", "https://x.example/orchard")):
        record = PageRecord.parse(index.get_record(key))
        assert record is not None
        index.put_record(key, record.to_bytes(), due=now - 3600 * (i + 1))
    return index


def test_due_lists_overdue_records_earliest_first(base_settings, capsys):
    now = time.time()
    _tracked_index(pages_dir(base_settings), now).close()
    rows = [json.loads(x) for x in out_of(capsys, base_settings, "test", "due", "--json").splitlines()]
    assert [r["key"] for r in rows] == ["https://x.example/orchard", "https://x.example/harbour"]
    assert rows[0]["overdue_s"] > rows[1]["overdue_s"] >= 3600
    assert rows[0]["priority"] >= rows[1]["priority"] >= 1.0  # the order an incremental crawl fetches in


def test_due_ranks_by_the_recrawl_policy_not_by_due_time(base_settings, capsys):
    """A URL that changes at every fetch outranks a static one that is more overdue."""
    now = time.time()
    index = SimhashIndex.open(pages_dir(base_settings))
    tracker = ChangeTracker(index, policy=FreshnessPolicy())
    fp = Fingerprinter()
    static, busy = "https://x.example/static", "https://x.example/busy"
    for day in range(6):
        t = now - (6 - day) * 86400
        tracker.observe(static, PageFingerprint.of(fp.fingerprint_html(article_html("harbour"))), now=t)
        tracker.observe(busy, PageFingerprint.of(fp.fingerprint_html(article_html(("orchard", "telescope")[day % 2]))), now=t)
    for key, due in ((static, now - 7200), (busy, now - 60)):
        record = PageRecord.parse(index.get_record(key))
        assert record is not None
        index.put_record(key, record.to_bytes(), due=due)
    expected = [row.key for row in tracker.due(now)]
    index.close()
    rows = [json.loads(x) for x in out_of(capsys, base_settings, "test", "due", "--json").splitlines()]
    assert [r["key"] for r in rows] == expected == [busy, static]
    assert rows[0]["priority"] > rows[1]["priority"]


def test_due_with_nothing_due_says_so_with_the_next_due_time(base_settings, capsys):
    SimhashIndex.open(pages_dir(base_settings)).close()
    assert out_of(capsys, base_settings, "test", "due") == (
        "nothing is due: no URL in this index has a due time yet (crawl it first)\n"
    )
    now = time.time()
    index = SimhashIndex.open(pages_dir(base_settings))
    tracker = ChangeTracker(index, policy=FreshnessPolicy())
    fp = Fingerprinter()
    for i, name in enumerate(("harbour", "orchard")):
        tracker.observe(f"https://x.example/{name}", PageFingerprint.of(fp.fingerprint_html(article_html(name))), now=now - 3600 + i)
    first = min(when for _, when in index.records_due(now + 365 * 86400, limit=10))
    index.close()
    assert first > now
    text = out_of(capsys, base_settings, "test", "due")
    assert text.startswith("nothing is due at ") and text.count("\n") == 1
    assert f"the next URL is due at {reports.iso(first)} (https://x.example/harbour); " in text
    assert "a crawl with SIMHASH_RECRAWL_BUDGET fetches that many known URLs at every run, due or not" in text
    assert out_of(capsys, base_settings, "test", "due", "--json") == ""  # JSON: an empty list of rows
    # with a budget (pages per run) the crawl's selection is listed, due or not
    rows = out_of(capsys, {**base_settings, "SIMHASH_RECRAWL_BUDGET": 1}, "test", "due", "--json").splitlines()
    assert len(rows) == 1 and json.loads(rows[0])["overdue_s"] < 0


def test_prune_forgets_old_urls(base_settings, capsys):
    _tracked_index(pages_dir(base_settings), time.time()).close()
    out = json.loads(out_of(capsys, base_settings, "test", "prune", "--older-than", "15d", "--json"))
    assert out["removed"] == 1
    keys = [json.loads(x)["key"] for x in out_of(capsys, base_settings, "test", "export").splitlines()]
    assert sorted(keys) == ["https://x.example/harbour", "https://x.example/orchard"]
    assert invoke(base_settings, "test", "prune", "--older-than", "soon") == 2


def test_remove_forgets_fingerprint_and_record(crawled, capsys):
    out = json.loads(out_of(capsys, crawled, "test", "remove", A + "#x", "--json"))
    assert out == {"key": A, "fingerprint_removed": True, "record_removed": True}
    with SimhashIndex.open(pages_dir(crawled), readonly=True) as index:
        assert index.get(A) is None and index.get_record(A) is None and index.get(B) is not None


def test_reset_asks_unless_yes(crawled, capsys):
    assert invoke(crawled, "test", "reset") == 2  # stdin is not a terminal
    assert "add --yes" in capsys.readouterr().err and pages_dir(crawled).is_dir()
    assert "deleted the index" in out_of(capsys, crawled, "test", "reset", "--yes")
    assert not (pages_dir(crawled) / "data.mdb").exists()
    assert invoke(crawled, "test", "info") == 1


def test_export_lists_every_url_near_duplicates_included(crawled, capsys):
    rows = {row["key"]: row for row in map(json.loads, out_of(capsys, crawled, "test", "export").splitlines())}
    assert sorted(rows) == [MIRROR, A, B]
    assert all(row["fetch_count"] >= 1 for row in rows.values())
    assert rows[MIRROR]["fp"] is None and rows[MIRROR]["duplicate_of"] == A
    assert len(rows[A]["fp"]) == 16


def test_export_of_the_item_index_lists_keys_without_records(make_crawler, base_settings, capsys):
    from scrapy_simhash.scrapy.pipeline import SimhashDedupPipeline

    crawler = make_crawler(SIMHASH_ITEM_FIELDS=["title", "body"])
    pipeline = SimhashDedupPipeline.from_crawler(crawler)
    pipeline.process_item({"url": "https://news.example.com/x", "title": "Harbour", "body": article_html("harbour")})
    pipeline.close_spider()
    settings = {**base_settings, "SIMHASH_ITEM_FIELDS": ["title", "body"]}
    rows = [json.loads(line) for line in out_of(capsys, settings, "test", "export", "--items").splitlines()]
    assert [row["key"] for row in rows] == ["https://news.example.com/x"] and len(rows[0]["fp"]) == 16


def test_report_writes_one_html_file_with_plots(crawled, capsys, tmp_path):
    target = tmp_path / "r.html"
    assert out_of(capsys, crawled, "test", "report", "-o", str(target)) == f"wrote {target}\n"
    page = target.read_text()
    assert page.count("<svg") == 3 and "<script" not in page and "<link" not in page
    assert not re.search(r"""(src|href)=["'](https?:)?//""", page)  # no network resource
    assert f"<td>{A}</td><td>{MIRROR}</td>" in page.replace("<td>2</td><td>", "<td>")


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("test",), None, "expected <spider>"),
        (("test", "frobnicate"), 2, ""),
        (("test", "show"), 2, ""),
        (("nospider", "info"), 1, "no simhash index at"),
        (("info",), None, "needs a spider"),
    ],
)
def test_usage_errors(crawled, capsys, args, status, message):
    from scrapy.exceptions import UsageError

    if status is None:
        with pytest.raises(UsageError, match=message):
            invoke(crawled, *args)
        return
    assert invoke(crawled, *args) == status
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_help_of_a_subcommand_in_both_doors(crawled, capsys):
    from scrapy_simhash.commands.cli import main

    assert invoke(crawled, "test", "near", "-h") == 0
    assert capsys.readouterr().out.startswith("usage: scrapy simhash test near [-h] [--json]")
    assert main(["-h"]) == 0 and "TARGET" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["dedup", "-h"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("usage: scrapy-simhash dedup [-h] --field")


def test_scrapy_help_keeps_the_options_help_whole_at_every_width(monkeypatch):
    # Scrapy's help formatter takes a help line ending with ":" for a heading: at some widths the
    # --dir help came out as "The Spider'S Index Directory (Default" underlined with "=".
    from scrapy.commands import ScrapyHelpFormatter

    mangled = []
    for width in range(40, 161, 3):
        monkeypatch.setenv("COLUMNS", str(width))
        parser = argparse.ArgumentParser(formatter_class=ScrapyHelpFormatter, conflict_handler="resolve")
        command = Command()
        command.settings = Settings()
        command.add_options(parser)
        printed = parser.format_help()
        ours = printed[printed.index("Options\n=======\n") + 16 : printed.index("Global Options")].splitlines()
        mangled += [width] * any(line and set(line) <= {"="} for line in ours)  # a heading made of them
        text = "".join("".join(ours).split())  # argparse may wrap after the "/"
        assert "--dirPATHthespider'sindexdirectory(bydefaultSIMHASH_DIR/<spider>)" in text, width
        assert "thishelp(COMMAND-hgivesasubcommand's)" in text, width
    assert mangled == []


_WORDS = sorted({w.strip(".,;:").lower() for _, ps in EN_ARTICLES.values() for p in ps for w in p.split()})
#: Lines on every page of one site, inside the article: its learned template.
_BOILER = [
    "Every story here is written by volunteers of the harbour society and checked by its editors.",
    "Subscribe to the weekly letter of the society to hear about new stories first.",
    "Send us your photographs of the harbour for the gallery.",
]


def _story(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(70)).capitalize() + "." for _ in range(6)]


def test_explain_with_an_index_uses_its_learned_site_template_and_agrees_with_the_crawl(make_mw, base_settings, capsys):
    # A story, and the same story with the site's template lines: a copy to the crawl, which learned
    # those lines; explain once judged without them (the copy "adds about 148 characters": kept).
    from helpers.demo import Pages

    pages = {f"p{i}.html": html_page(f"Story number {i}", _story(i) + _BOILER) for i in range(10)}
    pages["kept.html"] = html_page("Story number 3", _story(3))
    pages["copy.html"] = html_page("Story number 3", _story(3) + _BOILER)
    site = Pages(pages)
    try:
        mw = make_mw()
        verdicts = {}
        for name in [*(f"p{i}.html" for i in range(10)), "kept.html", "copy.html"]:
            response = make_response(site.url(f"/{name}"), pages[name])
            run(mw, response)
            verdicts[name] = response.meta["simhash_verdict"]
        mw.spider_closed(mw.crawler.spider, "finished")
        kept, copy = site.url("/kept.html"), site.url("/copy.html")
        without = json.loads(out_of(capsys, base_settings, "explain", kept, copy, "--json"))
        with_index = json.loads(out_of(capsys, base_settings, "test", "explain", kept, copy, "--json"))
    finally:
        site.stop()
    assert verdicts["copy.html"] == "near_duplicate"  # the crawl's verdict
    assert with_index["verdict"] == "near_duplicate" and with_index["adds_characters"] < 100
    assert with_index["site_template"].startswith("the index's")
    assert without["verdict"] == "new" and without["adds_characters"] >= 100  # what it said before
    assert without["site_template"].startswith("not used: explain was given no index")
