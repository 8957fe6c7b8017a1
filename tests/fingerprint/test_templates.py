"""Site templates' ``observe``: a page whose fingerprint the host counted lately is not counted
again, and its lines are not keyed again either."""

from __future__ import annotations

import pytest

from scrapy_simhash.fingerprint import templates
from scrapy_simhash.fingerprint.templates import SiteTemplates


def test_a_recent_fingerprint_is_neither_counted_nor_keyed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    keyed: list[list[str]] = []
    line_keys = templates.line_keys

    def counted(lines: list[str]) -> list[int]:
        keyed.append(lines)
        return line_keys(lines)

    monkeypatch.setattr(templates, "line_keys", counted)
    site = SiteTemplates(min_pages=2)
    page = ["Home | News | Sport", "", "A story of the day.", "© Example"]
    site.observe("http://example.com/a", page, fp=7)
    site.observe("http://example.com/a?utm_source=x", page, fp=7)  # the same page again
    assert keyed == [[line for line in page if line]]
    host = site._hosts["example.com"]
    assert host.pages == 1 and sorted(host.counts.values()) == [1, 1, 1]
    site.observe("http://example.com/b", ["Home | News | Sport", "Another story."], fp=8)
    assert len(keyed) == 2 and host.pages == 2
    assert site.template_lines("http://example.com/c", ["Home | News | Sport", "New."]) == {"Home | News | Sport"}
