"""The URL rule language and learner against brute force: every rule that changes a URL is a
hypothesis, the Wilson bound against a numeric solution, the learner's counts, vetoes and active
rules against a reference that recomputes them from the whole history, and rules kept in a store."""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
from collections.abc import Mapping, Sequence

import pytest
from w3lib.url import canonicalize_url

from scrapy_simhash.urlrules import IndexRuleStore, Rule, RuleBook, explored, hypotheses, rewrite, wilson_lower
from scrapy_simhash.urlrules.learner import veto_name
from scrapy_simhash.urlrules.rules import INDEX_NAMES, host_of

HOST = "http://shop.test"


class DictStore:
    """The blobs of :class:`IndexRuleStore`, in a dict (shared by the books of one test)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def get(self, names: Sequence[str]) -> list[bytes | None]:
        return [self.blobs.get(name) for name in names]

    def put(self, items: Mapping[str, bytes | None]) -> None:
        for name, value in items.items():
            if value is None:
                self.blobs.pop(name, None)
            else:
                self.blobs[name] = value


# -- the rule language ------------------------------------------------------------------------------

PARAMS = ["utm_source", "ref", "id", "page", "sort"]
VALUES = ["1", "2", "a", ""]
SEGMENTS = ["print", "docs", "a", "m"]


def _random_url(rng: random.Random) -> str:
    segments = [rng.choice(SEGMENTS) for _ in range(rng.randint(0, 3))]
    last = rng.choice(["", "x.html", *INDEX_NAMES])
    path = "/" + "/".join([*segments, last]) if segments or last else rng.choice(["", "/"])
    pairs = [(rng.choice(PARAMS), rng.choice(VALUES)) for _ in range(rng.randint(0, 3))]
    query = "&".join(f"{n}={v}" for n, v in pairs)
    return canonicalize_url(HOST + path + ("?" + query if query else ""))


def _every_rule() -> list[Rule]:
    """Every rule over this test's vocabulary."""
    rules = [Rule("param", p) for p in PARAMS]
    rules += [Rule("value", p, v) for p in PARAMS for v in VALUES]
    rules += [Rule("index", name) for name in INDEX_NAMES]
    rules += [Rule("slash", "add"), Rule("slash", "strip")]
    rules += [Rule("prefix", s) for s in SEGMENTS]
    return rules


def test_hypotheses_are_exactly_the_rules_that_change_the_url() -> None:
    rng = random.Random(35)
    every = _every_rule()
    for _ in range(400):
        url = _random_url(rng)
        brute = {(rule, target) for rule in every if (target := rule.apply(url)) is not None and target != url}
        assert set(hypotheses(url)) == brute, url


@pytest.mark.parametrize(
    ("rule", "url", "target"),
    [
        (Rule("param", "utm_source"), "http://h/a?id=3&utm_source=x", "http://h/a?id=3"),
        (Rule("value", "sort", "asc"), "http://h/a?sort=asc", "http://h/a"),
        (Rule("value", "sort", "asc"), "http://h/a?sort=price", None),
        (Rule("index", "index.html"), "http://h/x/index.html", "http://h/x/"),
        (Rule("slash", "strip"), "http://h/x/", "http://h/x"),
        (Rule("slash", "strip"), "http://h/", None),
        (Rule("slash", "add"), "http://h/x", "http://h/x/"),
        (Rule("prefix", "print"), "http://h/print/x", "http://h/x"),
        (Rule("prefix", "print"), "http://h/print/", None),
        (Rule("prefix", "print"), "http://h/print", None),
    ],
)
def test_each_kind_rewrites_as_documented(rule: Rule, url: str, target: str | None) -> None:
    assert rule.apply(canonicalize_url(url)) == (None if target is None else canonicalize_url(target))
    assert Rule.parse(rule.id) == rule


def test_rewrite_applies_path_rules_before_query_rules_and_names_those_that_applied() -> None:
    rules = [Rule("param", "utm_source"), Rule("index", "index.html"), Rule("prefix", "print"), Rule("param", "ref")]
    applied, target = rewrite(canonicalize_url("http://h/print/a/index.html?utm_source=x&id=3"), rules) or ([], "")
    assert [r.id for r in applied] == ["prefix:print", "index:index.html", "param:utm_source"]
    assert target == canonicalize_url("http://h/a/?id=3")
    assert rewrite("http://h/a", rules) is None


def test_with_both_slash_rules_every_url_of_a_page_has_one_form() -> None:
    rules = [Rule("slash", "add"), Rule("slash", "strip"), Rule("index", "index.html"), Rule("prefix", "print")]
    forms = {
        (rewrite(url, rules) or ([], url))[1]
        for url in ("http://h/a/b", "http://h/a/b/", "http://h/a/b/index.html", "http://h/print/a/b")
    }
    assert forms == {"http://h/a/b"}


def test_bad_rule_ids_are_refused_naming_the_form() -> None:
    with pytest.raises(ValueError, match="KIND:NAME"):
        Rule.parse("utm_source")
    with pytest.raises(ValueError, match="one of"):
        Rule.parse("query:utm_source")


def _wilson_numeric(successes: int, trials: int, z: float) -> float:
    """The least p whose score test accepts ``successes / trials`` (bisection)."""
    phat = successes / trials
    lo, hi = 0.0, phat
    for _ in range(200):
        mid = (lo + hi) / 2
        if abs(phat - mid) <= z * math.sqrt(mid * (1 - mid) / trials):
            hi = mid
        else:
            lo = mid
    return hi


def test_wilson_lower_bound_against_the_score_test_solved_numerically() -> None:
    for trials, successes in itertools.product((1, 5, 20, 381, 1000), range(0, 1001, 37)):
        if successes <= trials:
            assert wilson_lower(successes, trials) == pytest.approx(_wilson_numeric(successes, trials, 1.96), abs=1e-9)
    # 0.99 with no miss takes 381 copies (z = 1.96), which is what the setting's docs say
    assert wilson_lower(380, 380) < 0.99 <= wilson_lower(381, 381)


def test_explore_share_is_a_fixed_function_of_the_url() -> None:
    keys = [f"{HOST}/item?id={i}&utm_source=x" for i in range(20_000)]
    chosen = [k for k in keys if explored(k, 0.05)]
    assert 0.045 < len(chosen) / len(keys) < 0.055
    assert chosen == [k for k in keys if explored(k, 0.05)]
    assert not any(explored(k, 0.0) for k in keys) and all(explored(k, 1.0) for k in keys)


# -- the learner against a reference ---------------------------------------------------------------


def _content(url: str) -> str:
    """The site of the simulation: what a URL shows. ``utm_source``, ``ref``, ``print/``, index.html
    and trailing slashes never change it; ``id`` and ``page`` do; ``sort=price`` does, other sorts not."""
    rule_free = url
    for rule in (Rule("param", "utm_source"), Rule("param", "ref"), Rule("prefix", "print")):
        rule_free = rule.apply(rule_free) or rule_free
    rule_free = Rule("index", "index.html").apply(rule_free) or rule_free
    rule_free = Rule("slash", "strip").apply(rule_free) or rule_free
    rule_free = Rule("value", "sort", "name").apply(rule_free) or rule_free
    return rule_free


class Site:
    """Fetches URLs in order and gives each its verdict, as the product would: a near-duplicate of
    the first kept page with the same content, else new."""

    def __init__(self) -> None:
        self.records: dict[str, str] = {}  # key -> kept key of its content
        self.kept: dict[str, str] = {}  # content -> kept key

    def known(self, keys: Sequence[str]) -> dict[str, str | None]:
        return {k: self.records[k] for k in keys if k in self.records}

    def fetch(self, url: str) -> tuple[str, str | None]:
        content = _content(url)
        kept = self.kept.get(content)
        if kept is None:
            self.kept[content] = url
            self.records[url] = url
            return "new", None
        self.records[url] = kept
        return "near_duplicate", kept


def _site_urls(rng: random.Random, n: int) -> list[str]:
    urls = []
    for _ in range(n):
        base = f"/{rng.choice(['print/', ''])}item{rng.randint(0, 6)}{rng.choice(['/', '/index.html', ''])}"
        pairs = [
            (rng.choice(["utm_source", "ref", "id", "page", "sort"]), rng.choice(["1", "2", "name", "price"]))
            for _ in range(rng.randint(0, 2))
        ]
        query = "&".join(f"{k}={v}" for k, v in pairs)
        urls.append(canonicalize_url(HOST + base + ("?" + query if query else "")))
    return urls


def _reference(
    history: list[tuple[str, str, str | None, dict[str, str]]], min_support: int, confidence: float
) -> tuple[dict[str, list[int]], set[str]]:
    """Counts and vetoes recomputed from the whole history: for each fetch, its verdict and the
    records known before it."""
    counts: dict[str, list[int]] = {}
    vetoed: set[str] = set()
    hypotheses_of = functools.cache(hypotheses)  # a URL's, asked again at every later fetch

    def active() -> list[Rule]:
        return [
            Rule.parse(rid)
            for rid, (support, misses) in sorted(counts.items())
            if rid not in vetoed and support >= min_support and wilson_lower(support, support + misses) >= confidence
        ]

    for i, (url, verdict, duplicate_of, known) in enumerate(history):
        tests: list[tuple[tuple[str, ...], str]] = [((rule.id,), target) for rule, target in hypotheses_of(url)]
        composite = rewrite(url, active())
        if composite is not None and len(composite[0]) > 1:
            tests.append((tuple(r.id for r in composite[0]), composite[1]))
        # the other order: an earlier fetch that a rule rewrote into this URL, not fetched then
        tests += [
            ((rule.id,), earlier)
            for earlier, _, _, known_then in history[:i]
            for rule, target in hypotheses_of(earlier)
            if target == url and target not in known_then
        ]
        if verdict == "near_duplicate" and duplicate_of:  # both rewrite into one URL, by an applied rule
            forms = {rule.apply(duplicate_of) for rule in active()} | {
                (rewrite(duplicate_of, active()) or ([], None))[1]
            }
            tests += [((rule.id,), duplicate_of) for rule, target in hypotheses_of(url) if target in forms]
            own = {rule.apply(url) for rule in active()} | {(rewrite(url, active()) or ([], None))[1]}
            tests += [((rule.id,), duplicate_of) for rule, target in hypotheses_of(duplicate_of) if target in own]
        tests = list(dict.fromkeys(tests))
        new_vetoes = set()
        for ids, target in tests:
            kept = known.get(target)
            if kept is None:
                continue
            if verdict == "new":
                new_vetoes |= {rid for rid in ids if rid in counts or not rid.startswith("value:")}
            elif len(ids) == 1 and ids[0] not in vetoed:
                copy = duplicate_of in (target, kept)
                if copy or ids[0] in counts:
                    counts.setdefault(ids[0], [0, 0])[0 if copy else 1] += 1
        for rid in new_vetoes:
            counts.setdefault(rid, [0, 0])
        vetoed |= new_vetoes
    return counts, vetoed


@pytest.mark.parametrize("seed", range(6))
def test_learner_counts_vetoes_and_active_rules_equal_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=6, confidence=0.6, refresh_every=7)
    history = []
    for url in _site_urls(rng, 600):
        if url in site.records:
            continue
        known = dict(site.records)
        verdict, duplicate_of = site.fetch(url)
        history.append((url, verdict, duplicate_of, known))
        book.observe(url, verdict, duplicate_of)
    counts, vetoed = _reference(history, 6, 0.6)
    host = host_of(HOST + "/")
    assert {rid: c[:2] for rid, c in book.counts(host).items()} == {rid: tuple(c) for rid, c in counts.items()}
    assert book.vetoed(host) == vetoed
    active = {r.id for r in book.active(host)}
    # the simulated site: these never change the content, the others do
    assert active <= {
        "param:utm_source",
        "param:ref",
        "prefix:print",
        "index:index.html",
        "slash:strip",
        "slash:add",
    } | {
        f"value:{n}={v}"
        for n in ("utm_source", "ref", "sort")
        for v in ("1", "2", "name", "price")
        if (n, v) != ("sort", "price")
    }
    assert {"param:id", "param:page", "param:sort"} <= vetoed
    assert {"param:utm_source", "param:ref", "prefix:print", "index:index.html"} <= active
    # the next run reads the same rules back from the store
    book.flush()
    again = RuleBook(store, site.known, min_support=6, confidence=0.6)
    assert again.counts(host) == book.counts(host)
    assert {r.id for r in again.active(host)} == active


def test_a_skip_plan_needs_an_active_rule_and_a_fetched_target() -> None:
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=6, confidence=0.5)
    for i in range(6):
        for url in (f"{HOST}/p{i}", f"{HOST}/p{i}?utm_source=a"):
            book.observe(url, *site.fetch(url))
    assert [r.id for r in book.active("shop.test")] == ["param:utm_source", "value:utm_source=a"]
    plan = book.plan(f"{HOST}/p3?utm_source=b")
    assert plan is not None and plan.rules == ("param:utm_source",) and plan.target == f"{HOST}/p3"
    assert book.plan(f"{HOST}/p9?utm_source=b") is None  # its rewrite was never fetched
    assert book.plan(f"{HOST}/p3?utm_source=a") is None  # fetched itself: the recrawl's to decide
    assert book.plan(f"{HOST}/p3?id=2") is None  # no rule for id


def test_copies_fetched_before_their_originals_are_evidence_and_are_joined_in_either_order() -> None:
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=6, confidence=0.5)
    for i in range(6):  # each copy first: kept as new; its original then dropped as its duplicate
        for url in (f"{HOST}/p{i}?utm_source=a", f"{HOST}/p{i}"):
            book.observe(url, *site.fetch(url))
    assert book.counts("shop.test")["param:utm_source"][0] == 6
    assert "param:utm_source" in {r.id for r in book.active("shop.test")}
    book.observe(f"{HOST}/p7?utm_source=a", *site.fetch(f"{HOST}/p7?utm_source=a"))
    # the original of a copy fetched before: a rule rewrites the fetched copy into it
    assert book.plan(f"{HOST}/p7") == (("param:utm_source",), f"{HOST}/p7?utm_source=a", f"{HOST}/p7?utm_source=a")
    # another copy of it: both rewrite into the original, never fetched
    plan = book.plan(f"{HOST}/p7?utm_source=b")
    assert plan is not None and plan.target == f"{HOST}/p7?utm_source=a"
    assert book.plan(f"{HOST}/p8") is None  # no copy of it fetched


def test_a_request_is_joined_to_a_copy_fetched_before_whose_form_is_its_own() -> None:
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=6, confidence=0.5)
    for i in range(6):  # learns index:index.html, slash:strip and prefix:print
        for url in (f"{HOST}/p{i}", f"{HOST}/p{i}/", f"{HOST}/p{i}/index.html", f"{HOST}/print/p{i}"):
            book.observe(url, *site.fetch(url))
    assert {"index:index.html", "slash:strip", "prefix:print"} <= {r.id for r in book.active("shop.test")}
    # /q/index.html first: no one rule rewrites /print/q or /q into it, but the rules make all three /q
    book.observe(f"{HOST}/q/index.html", *site.fetch(f"{HOST}/q/index.html"))
    plan = book.plan(f"{HOST}/print/q")
    assert plan is not None and plan.target == plan.kept == f"{HOST}/q/index.html"
    assert set(plan.rules) == {"prefix:print", "index:index.html", "slash:strip"}
    assert book.plan(f"{HOST}/q").target == f"{HOST}/q/index.html"  # type: ignore[union-attr]
    assert book.plan(f"{HOST}/print/r") is None  # no URL of /r fetched


def test_a_request_tests_a_rule_when_its_rewrite_was_fetched_until_the_rule_is_decided() -> None:
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=6, confidence=0.5)
    book.observe(f"{HOST}/p0", *site.fetch(f"{HOST}/p0"))
    assert book.tests(f"{HOST}/p0?utm_source=a")  # param:utm_source rewrites it into /p0, fetched
    assert not book.tests(f"{HOST}/p1?utm_source=a")  # /p1 never fetched: nothing to test
    book.observe(f"{HOST}/p1?ref=x", *site.fetch(f"{HOST}/p1?ref=x"))
    assert book.tests(f"{HOST}/p1")  # the other order: a fetched URL that param:ref rewrites into it
    for i in range(6):
        for url in (f"{HOST}/p{i}", f"{HOST}/p{i}?utm_source=a", f"{HOST}/p{i}?page=2"):
            if url not in site.records:
                book.observe(url, *site.fetch(url))
    assert "param:utm_source" in {r.id for r in book.active("shop.test")}
    assert "param:page" in book.vetoed("shop.test")
    book.observe(f"{HOST}/p7", *site.fetch(f"{HOST}/p7"))
    assert not book.tests(f"{HOST}/p7?utm_source=a")  # param:utm_source and value:utm_source=a applied: decided
    assert book.tests(f"{HOST}/p7/")  # slash:strip into /p7, or slash:add from /p7: undecided
    book.set_override("shop.test", Rule("slash", "strip"), "disabled")
    book.set_override("shop.test", Rule("slash", "add"), "pinned")
    assert not book.tests(f"{HOST}/p7/")  # set by hand: decided


def test_a_page_kept_as_new_vetoes_the_rule_that_rewrites_a_page_fetched_before_into_it() -> None:
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=2, confidence=0.1)
    for i in range(3):  # ?page=2 first (its own page), then the original: another page
        for url in (f"{HOST}/p{i}?page=2", f"{HOST}/p{i}"):
            events = book.observe(url, *site.fetch(url))
    assert "param:page" in book.vetoed("shop.test")
    assert events == [] and book.plan(f"{HOST}/p0?page=3") is None


def test_one_copy_that_adds_vetoes_a_rule_at_once_in_every_process() -> None:
    site, store = Site(), DictStore()
    first = RuleBook(store, site.known, min_support=6, confidence=0.5)
    second = RuleBook(store, site.known, min_support=6, confidence=0.5, refresh_every=1)
    for i in range(8):
        for url in (f"{HOST}/p{i}", f"{HOST}/p{i}?ref=a"):
            first.observe(url, *site.fetch(url))
    assert "param:ref" in {r.id for r in second.active("shop.test")}
    # p0?ref=b shows another page: kept as new
    site.records[f"{HOST}/p0?ref=b"] = f"{HOST}/p0?ref=b"
    events = first.observe(f"{HOST}/p0?ref=b", "new", None)
    assert [(e.kind, e.rule.id, e.support) for e in events] == [("vetoed", "param:ref", 8)]
    assert json.loads(store.blobs[veto_name("shop.test", "param:ref")])["url"] == f"{HOST}/p0?ref=b"
    assert first.plan(f"{HOST}/p1?ref=c") is None
    assert second.plan(f"{HOST}/p1?ref=c") is None  # it read the veto at its next use of the host


def test_counts_of_two_processes_add_up_in_the_store() -> None:
    site, store = Site(), DictStore()
    books = [RuleBook(store, site.known, min_support=6, confidence=0.5, refresh_every=3) for _ in range(2)]
    for i in range(10):
        for url in (f"{HOST}/p{i}", f"{HOST}/p{i}?ref=a"):
            books[i % 2].observe(url, *site.fetch(url))
    for book in books:
        book.flush()
    assert RuleBook(store, site.known, min_support=6, confidence=0.5).counts("shop.test")["param:ref"][0] == 10


def test_rules_live_in_the_index_aux_blobs_and_a_reset_deletes_them(tmp_path) -> None:
    from scrapy_simhash import SimhashIndex

    site = Site()
    path = tmp_path / "pages"
    with SimhashIndex.open(path) as index:
        book = RuleBook(IndexRuleStore(index), site.known, min_support=6, confidence=0.5)
        for i in range(6):
            for url in (f"{HOST}/p{i}/", f"{HOST}/p{i}"):
                book.observe(url, *site.fetch(url))
        book.flush()
        assert [r.id for r in book.active("shop.test")] == ["slash:add", "slash:strip"]
    with SimhashIndex.open(path) as index:
        assert [
            r.id for r in RuleBook(IndexRuleStore(index), site.known, min_support=6, confidence=0.5).active("shop.test")
        ] == ["slash:add", "slash:strip"]
    assert SimhashIndex.destroy(path)
    with SimhashIndex.open(path) as index:
        assert RuleBook(IndexRuleStore(index), site.known, min_support=6, confidence=0.5).active("shop.test") == []


@pytest.mark.parametrize("seed", range(4))
def test_a_crawl_that_skips_by_the_learned_rules_loses_no_page(seed: int) -> None:
    rng = random.Random(100 + seed)
    site, store = Site(), DictStore()
    book = RuleBook(store, site.known, min_support=8, confidence=0.7)
    skipped = lossy = fetched = 0
    for url in _site_urls(rng, 1500):
        if url in site.records:
            continue
        plan = book.plan(url)
        if plan is not None and not explored(url, 0.05):
            skipped += 1
            lossy += _content(url) != _content(plan.kept)
            continue
        fetched += 1
        book.observe(url, *site.fetch(url), plan)
    assert lossy == 0
    assert skipped > fetched / 4  # the copies this site makes are mostly skipped


def test_every_store_keeps_the_rules_for_the_next_run_shares_vetoes_and_a_reset_deletes_them(kind, tmp_path) -> None:
    from scrapy_simhash import SimhashIndex

    if kind.worker_make is None:
        pytest.skip("a memory store lives in one process only")
    site = Site()
    path = tmp_path / "pages"

    def book(index: SimhashIndex) -> RuleBook:
        return RuleBook(IndexRuleStore(index), site.known, min_support=6, confidence=0.5, refresh_every=1)

    first_index = SimhashIndex(kind.make(path))
    first = book(first_index)
    for i in range(6):
        for url in (f"{HOST}/p{i}", f"{HOST}/p{i}?utm_source=a{i}"):
            first.observe(url, *site.fetch(url))
    first.flush()
    assert [r.id for r in first.active("shop.test")] == ["param:utm_source"]
    shared = "redis" in str(type(first_index.store)).lower()
    if not shared:  # one LMDB environment per path and process: the next run opens it after this one
        first_index.close()
    second_index = SimhashIndex(kind.make(path))
    second = book(second_index)
    assert [r.id for r in second.active("shop.test")] == ["param:utm_source"]
    site.records[f"{HOST}/p0?utm_source=zz"] = f"{HOST}/p0?utm_source=zz"
    assert [e.kind for e in second.observe(f"{HOST}/p0?utm_source=zz", "new", None)] == ["vetoed"]
    if shared:  # another process of the crawl sees the veto at its next use of the host
        assert first.plan(f"{HOST}/p1?utm_source=new") is None
        first_index.close()
    second_index.close()
    assert kind.make(path).destroy()  # what SIMHASH_RESET does before the index opens
    third_index = SimhashIndex(kind.make(path))
    assert book(third_index).active("shop.test") == [] and book(third_index).counts("shop.test") == {}
    third_index.close()
