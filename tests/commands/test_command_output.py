"""What the subcommands print for a user to read: ``show``'s times and validators, ``near --url``
on a copy the wide tier dropped, and the HTML report's distance and interval plots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.pages import article_html

from scrapy_simhash import Fingerprinter, SimhashIndex
from scrapy_simhash.commands.cli import main
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.schedule import FreshnessPolicy, iso

URL = "https://a.example/harbour"
ETAG, LAST_MODIFIED = '"v2-harbour"', "Wed, 21 Oct 2026 07:28:00 GMT"
ORIGINAL, WIDE_COPY, CLOSE_COPY = "https://a.example/orig", "https://b.example/wide-copy", "https://c.example/copy"
FP = 0x0123_4567_89AB_CDEF
SKETCH = np.arange(1, 65, dtype="<u2").tobytes()  # 64 filled slots: the wide tier may decide


@pytest.fixture
def scheduled(tmp_path: Path) -> Path:
    """An index whose one URL was fetched three times with validators, under the recrawl schedule."""
    path = tmp_path / "spider" / "pages"
    fingerprinter = Fingerprinter()
    with SimhashIndex.open(path) as index:
        tracker = ChangeTracker(index, policy=FreshnessPolicy())
        for n, article in enumerate(("harbour", "harbour", "orchard")):
            page = fingerprinter.fingerprint_html(article_html(article))
            tracker.observe(URL, PageFingerprint.of(page), now=1_795_800_000.0 + n * 100_000, validators=(ETAG, LAST_MODIFIED))
    return path


def test_show_prints_every_time_as_iso_and_the_validators(scheduled, capsys):
    assert main([str(scheduled), "show", URL]) == 0
    text = capsys.readouterr().out
    assert not re.search(r"\de\+\d", text), text  # no time as 1.7958e+09
    assert f"etag: {ETAG}\n" in text and f"last_modified: {LAST_MODIFIED}\n" in text
    schedule = text[text.index("schedule:\n") :]
    for name, when in [("last_fetch", "2026-11-30T00:53:20Z"), ("last_change", "2026-11-30T00:53:20Z")]:
        assert f"  {name}: {when}\n" in schedule
    assert re.search(r"\nnext_due: 2026-\d\d-\d\dT\d\d:\d\d:\d\dZ\n", text), text
    assert text.count("next_due: ") == 1  # one due time: the record's, which the crawls use
    assert main([str(scheduled), "show", URL, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["etag"], shown["last_modified"]) == (ETAG, LAST_MODIFIED)
    assert "next_due" not in shown["schedule"] and shown["next_due"].startswith("2026-")
    assert isinstance(shown["schedule"]["interval"], float)  # durations stay seconds


def test_a_gone_url_is_gone_in_show_export_info_and_the_report(scheduled, capsys, tmp_path):
    # A 404 (counted simhash/gone by the crawl) once left the commands saying "new" or "unchanged",
    # and show printed the record's new due time beside the schedule's old one.
    with SimhashIndex.open(scheduled) as index:
        assert ChangeTracker(index, policy=FreshnessPolicy()).gone(URL, now=1_796_200_000.0)
    assert main([str(scheduled), "show", URL, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["last_verdict"] == "gone" and "next_due" not in shown["schedule"]
    assert shown["next_due"] == iso(1_796_200_000.0 + FreshnessPolicy().max_interval)  # its longest, after the 404
    assert main([str(scheduled), "export"]) == 0
    (row,) = map(json.loads, capsys.readouterr().out.splitlines())
    assert row["last_verdict"] == "gone" and row["fp"] is None
    assert main([str(scheduled), "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["last_verdicts"]["gone"] == 1 and sum(info["last_verdicts"].values()) == 1
    report = tmp_path / "report.html"
    assert main([str(scheduled), "report", "-o", str(report)]) == 0
    page = report.read_text()
    assert "<tr><td>gone</td><td>1</td></tr>" in page and "<tr><td>unchanged</td><td>0</td></tr>" in page


@pytest.fixture
def copies(tmp_path: Path) -> Path:
    """An original, a copy the wide tier dropped (6 bits away: beyond k = 3) and one within k."""
    path = tmp_path / "spider" / "pages"
    with SimhashIndex.open(path) as index:
        tracker = ChangeTracker(index)
        assert tracker.observe(ORIGINAL, PageFingerprint.of(FP, sketch=SKETCH), now=1e9).verdict == "new"
        wide = tracker.observe(WIDE_COPY, PageFingerprint.of(FP ^ 0b11_1111, sketch=SKETCH), now=1e9)
        assert (wide.verdict, wide.distance, wide.duplicate_of) == ("near_duplicate", 6, ORIGINAL)
        close = tracker.observe(CLOSE_COPY, PageFingerprint.of(FP ^ 0b1, sketch=SKETCH), now=1e9)
        assert (close.verdict, close.duplicate_of) == ("near_duplicate", ORIGINAL)
    return path


def _near(path: Path, url: str, capsys: pytest.CaptureFixture[str], *args: str) -> list[list]:
    assert main([str(path), "near", "--url", url, "--json", *args]) == 0
    return [list(json.loads(line).values()) for line in capsys.readouterr().out.splitlines()]


def test_near_url_of_a_wide_tier_copy_lists_its_original(copies, capsys):
    assert _near(copies, WIDE_COPY, capsys) == [[6, 90.6, ORIGINAL, None]]
    assert _near(copies, WIDE_COPY, capsys, "-k", "0") == [[6, 90.6, ORIGINAL, None]]
    # A copy within k finds its original by the index: listed once.
    assert _near(copies, CLOSE_COPY, capsys) == [[1, 98.4, ORIGINAL, None]]
    assert _near(copies, ORIGINAL, capsys) == [[1, None, CLOSE_COPY, ORIGINAL], [6, None, WIDE_COPY, ORIGINAL]]


# -- the HTML report's plots -------------------------------------------------------------------


def test_the_distance_plot_keeps_the_drops_visible():
    pytest.importorskip("matplotlib")
    from scrapy_simhash.commands.htmlreport import distance_figure

    data = {"duplicate_distances": [0, 0, 1, 3], "change_distances": [0] * 500 + [5, 7], "max_distance": 3, "bits": 64}
    ax = distance_figure(data).axes[0]
    assert ax.get_yscale() == "log"
    copies, changes = ([bar.get_height() for bar in bars] for bars in ax.containers)
    assert copies[:4] == [2, 1, 0, 1] and changes[0] == 0 and changes[5] == 1 and changes[7] == 1
    assert "500 at distance 0 left out" in " ".join(t.get_text() for t in ax.get_legend().get_texts())


@pytest.mark.parametrize(
    ("seconds", "labels"),
    [
        ([130, 140, 200], ["1 min", "10 min"]),  # was "3.6x10^-2 hours"
        ([5 * 3600, 3 * 86400], ["1 h", "6 h", "1 d", "1 w"]),
        ([0.5, 2], ["1 s", "10 s"]),
    ],
)
def test_the_interval_axis_reads_in_durations(seconds, labels):
    pytest.importorskip("matplotlib")
    from scrapy_simhash.commands.htmlreport import interval_figure

    figure = interval_figure({"intervals": seconds})
    figure.canvas.draw()
    ax = figure.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == labels
    assert not any(t.get_text() for t in ax.get_xticklabels(minor=True))
    low, high = ax.get_xlim()
    assert low <= min(seconds) and max(seconds) <= high
