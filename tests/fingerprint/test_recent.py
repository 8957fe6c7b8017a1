"""A page whose text is that of one of the last pages fingerprinted (the same page under a tracking
parameter, ``/`` and ``/index.html``) is not extracted again: ``Fingerprinter.fingerprint_page``
gives the same values (``parse="recent"``), its URL's template lines and own text read again."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from helpers.data import load_pages

from scrapy_simhash.fingerprint import simhash
from scrapy_simhash.fingerprint.simhash import Fingerprinter, PageFingerprint
from scrapy_simhash.fingerprint.templates import SiteTemplates
from scrapy_simhash.text import extract as ex


def _kept(fingerprinter: Fingerprinter, html: str | bytes, **kwargs: Any) -> bool:
    """Whether ``fingerprinter`` would give ``html`` a recent page's values (looked up, not added)."""
    return fingerprinter._recent.get(html, kwargs.get("encoding"), kwargs.get("content_type")) is not None


def _values(page: PageFingerprint) -> tuple[Any, ...]:
    own = page.own
    assert own is not None
    return (page, own.text, own.chars, own._rest, own.novelty_text())


def _counting_extract(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = ex.extract

    def counted(html: Any, **kwargs: Any) -> Any:
        calls.append(len(html))
        return original(html, **kwargs)

    monkeypatch.setattr(ex, "extract", counted)
    return calls


def _article(n: int) -> str:
    return (
        f"<html><head><title>Story {n}</title></head><body><nav><a href='/'>Home</a> <a href='/n'>News</a></nav>"
        f"<article><h1>Story {n}</h1><p>The harbour cranes of town {n} were moved overnight to the new quay, "
        f"the port authority said on Tuesday, after {n} months of work on the pier.</p></article></body></html>"
    )


def test_a_page_with_the_text_of_one_just_fingerprinted_is_not_extracted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_extract(monkeypatch)
    fingerprinter = Fingerprinter()
    html = _article(1)
    first = fingerprinter.fingerprint_page(html, "http://a.example/1")
    again = fingerprinter.fingerprint_page(html, "http://a.example/1?utm_source=x")
    assert len(calls) == 1 and first.parse == "own" and again.parse == "recent"
    assert not _kept(fingerprinter, _article(2))
    trees: list[int] = []
    fingerprinter.fingerprint_page(html, tree=lambda: trees.append(1))  # a tree that would be built now
    assert trees == []
    fresh = Fingerprinter().fingerprint_page(html, "http://a.example/1?utm_source=x")
    assert _values(again) == _values(fresh)
    # bytes are looked up with the encoding and content type they are decoded with
    body = html.encode("cp1252")
    fingerprinter.fingerprint_page(body, content_type="text/html; charset=cp1252")
    assert _kept(fingerprinter, body, content_type="text/html; charset=cp1252")
    assert not _kept(fingerprinter, body, content_type="text/html; charset=utf-8")
    assert not _kept(fingerprinter, body, encoding="cp1252")


def test_the_last_pages_are_kept_and_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simhash, "RECENT_PAGES", 4)
    fingerprinter = Fingerprinter()
    pages = [_article(n) for n in range(6)]
    for html in pages:
        fingerprinter.fingerprint_page(html)
    assert [_kept(fingerprinter, html) for html in pages] == [False, False, True, True, True, True]
    # two texts of one length are told apart by their text
    same_size = [html.replace("Story", "Stary") for html in pages[2:]]
    assert all(len(a) == len(b) for a, b in zip(pages[2:], same_size))
    assert not any(_kept(fingerprinter, html) for html in same_size)
    monkeypatch.setattr(simhash, "RECENT_CHARS", len(pages[0]) * 2)
    bounded = Fingerprinter()
    for html in pages:
        bounded.fingerprint_page(html)
    assert [_kept(bounded, html) for html in pages] == [False] * 4 + [True, True]
    bounded.fingerprint_page(pages[0] * 3)  # longer than it may hold: not kept, nothing dropped
    assert not _kept(bounded, pages[0] * 3) and _kept(bounded, pages[5])


def test_threads_sharing_a_fingerprinter_get_each_pages_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simhash, "RECENT_PAGES", 3)
    pages = [_article(n) for n in range(8)]
    expected = [Fingerprinter().fingerprint_page(html).fp for html in pages]
    shared = Fingerprinter()
    results: dict[int, list[int]] = {}

    def work(k: int) -> None:
        order = [(i * (k + 1)) % len(pages) for i in range(200)]
        results[k] = [expected[i] - shared.fingerprint_page(pages[i]).fp for i in order]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [0, 1, 2, 3] and all(set(r) == {0} for r in results.values())


def test_a_copy_under_another_site_reads_that_sites_templates() -> None:
    """The page's values are its text's; whether it is template-only on its site, and its own text
    without its site's template lines, are read for each URL."""
    templates = SiteTemplates(min_pages=2)
    chrome = "<div class='side'><p>Subscribe to the harbour newsletter for weekly updates on the port.</p></div>"
    for n in range(4):
        html = _article(n).replace("</article>", "</article>" + chrome)
        page = Fingerprinter().fingerprint_page(html, f"http://b.example/{n}", templates=templates)
        templates.observe(f"http://b.example/{n}", page.visible.split("\n"))
    fingerprinter = Fingerprinter()
    html = _article(9).replace("</article>", "</article>" + chrome)
    other = fingerprinter.fingerprint_page(html, "http://c.example/9", templates=templates)
    here = fingerprinter.fingerprint_page(html, "http://b.example/9", templates=templates)
    assert here.parse == "recent"
    assert _values(here) == _values(Fingerprinter().fingerprint_page(html, "http://b.example/9", templates=templates))
    assert _values(other) == _values(Fingerprinter().fingerprint_page(html, "http://c.example/9", templates=templates))
    assert here.own is not None and other.own is not None and here.own.text != other.own.text


@pytest.mark.parametrize("native", [True, False])
def test_every_real_page_twice_gives_its_values(native: bool) -> None:
    """Every news page of ../shared/data, each then again under another URL: the values of a
    fingerprinter that extracts every page."""
    reused = Fingerprinter(native=native)
    templates = {how: SiteTemplates(min_pages=3) for how in ("reused", "fresh")}
    hits = 0
    for corpus, bodies in load_pages().items():
        for i, body in enumerate(bodies):
            for url in (f"http://{corpus.split()[0]}.example/{i}", f"http://{corpus.split()[0]}.example/{i}?ref=x"):
                pages = {
                    "reused": reused.fingerprint_page(body, url, templates=templates["reused"]),
                    "fresh": Fingerprinter(native=native).fingerprint_page(body, url, templates=templates["fresh"]),
                }
                assert _values(pages["reused"]) == _values(pages["fresh"]), (corpus, i, url)
                hits += pages["reused"].parse == "recent"
                for how, page in pages.items():
                    templates[how].observe(url, page.visible.split("\n"), page.fp)
    assert hits == sum(len(bodies) for bodies in load_pages().values())
