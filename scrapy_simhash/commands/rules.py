"""The ``rules`` subcommand: the URL rules kept in an index (list, explain a URL, disable or pin a rule)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy_simhash import defaults
from scrapy_simhash.commands.reports import EXIT_USAGE, CommandError
from scrapy_simhash.scrapy.component import canonical_key
from scrapy_simhash.urlrules.learner import (
    EXPLORED,
    MISSES,
    SKIPPED,
    SUPPORT,
    IndexRuleStore,
    RuleBook,
    index_known,
    veto_name,
)
from scrapy_simhash.urlrules.rules import Rule, host_of, hypotheses

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from scrapy_simhash.scrapy.settings import SimhashConfig
    from scrapy_simhash.store.index import SimhashIndex


def rule_book(index: SimhashIndex, config: SimhashConfig | None = None) -> RuleBook:
    """The crawl's rule book over ``index``, with ``config``'s evidence thresholds (``None``: the defaults)."""
    return RuleBook(
        IndexRuleStore(index),
        index_known(index),
        min_support=defaults.SIMHASH_URL_RULES_MIN_SUPPORT if config is None else config.url_rules_min_support,
        confidence=defaults.SIMHASH_URL_RULES_CONFIDENCE if config is None else config.url_rules_confidence,
    )


def hosts_of(keys: Iterable[str]) -> list[str]:
    """The hosts of the URLs among ``keys`` (those that may have rules), sorted."""
    return sorted({host_of(key) for key in keys if key.startswith(("http://", "https://"))})


def fetches_saved(index: SimhashIndex, hosts: Iterable[str]) -> list[dict[str, Any]]:
    """Per rule that skipped requests: host, rule, requests skipped and explored, copies; most skips first."""
    book = rule_book(index)
    rows = [
        {"host": host, "rule": rid, "skipped": row[SKIPPED], "explored": row[EXPLORED], "copies": row[SUPPORT]}
        for host in hosts
        for rid, row in book.counts(host).items()
        if row[SKIPPED] or row[EXPLORED]
    ]
    return sorted(rows, key=lambda r: (-r["skipped"], r["host"], r["rule"]))


def _state(book: RuleBook, host: str, rid: str) -> str:
    override = book.overrides(host).get(rid)
    if override is not None:
        return override
    if rid in book.vetoed(host):
        return "vetoed"
    return "applied" if book.applies(host, rid) else "learning"


def list_rules(index: SimhashIndex, config: SimhashConfig, host: str | None = None) -> Iterator[dict[str, Any]]:
    """One row per rule with two tests or more, a skip, a veto or set by hand: host, rule, state (``applied``,
    ``learning``, ``vetoed``, ``disabled``, ``pinned``), copies, misses, confidence, requests
    skipped and explored; applied rules first, then by copies."""
    book = rule_book(index, config)
    for name in [host.lower()] if host else hosts_of(key for key, _ in index.iter_records()):
        counts = book.counts(name)
        ids = {rid for rid, row in counts.items() if row[SUPPORT] + row[MISSES] > 1 or row[SKIPPED]}
        ids |= book.vetoed(name)
        ids |= set(book.overrides(name))
        rows: list[dict[str, Any]] = []
        for rid in ids:
            row = counts.get(rid, (0, 0, 0, 0))
            rows.append(
                {
                    "host": name,
                    "rule": rid,
                    "state": _state(book, name, rid),
                    "copies": row[SUPPORT],
                    "misses": row[MISSES],
                    "confidence": round(book.rule_confidence(name, rid), 3),
                    "skipped": row[SKIPPED],
                    "explored": row[EXPLORED],
                }
            )
        order = {"pinned": 0, "applied": 1, "learning": 2, "vetoed": 3, "disabled": 4}
        yield from sorted(rows, key=lambda r: (order[r["state"]], -r["copies"], r["rule"]))


def explain(index: SimhashIndex, config: SimhashConfig, url: str) -> dict[str, Any]:
    """Which rule would skip ``url`` and why: every rule of its host that rewrites it, with its
    state and evidence, the URL it rewrites it into and whether that was fetched; and the verdict."""
    if not url.startswith(("http://", "https://")):
        raise CommandError(f"rules --explain takes an http(s) URL, not {url!r}", EXIT_USAGE)
    key = canonical_key(url)
    host = host_of(key)
    book = rule_book(index, config)
    known = index_known(index)
    candidates = {rule.id: target for rule, target in hypotheses(key)}
    for rid in book.overrides(host):  # a pinned rule may be one no URL of the host tested yet
        target = Rule.parse(rid).apply(key)
        if target is not None:
            candidates.setdefault(rid, target)
    found = known([key, *candidates.values()])
    counts = book.counts(host)
    rules = []
    for rid, target in sorted(candidates.items()):
        row = counts.get(rid, (0, 0, 0, 0))
        state = _state(book, host, rid)
        if not (row[SUPPORT] or row[MISSES] or state != "learning"):
            continue  # a rule with no evidence at all
        rules.append(
            {
                "rule": rid,
                "means": Rule.parse(rid).describe(),
                "state": state,
                "copies": row[SUPPORT],
                "misses": row[MISSES],
                "confidence": round(book.rule_confidence(host, rid), 3),
                "rewrites_to": target,
                "fetched": bool(found.get(target)),
            }
        )
    plan = book.plan(key)
    if key in found:
        verdict = "fetched: a URL fetched before is never skipped (the recrawl decides)"
    elif plan is None:
        verdict = "fetched: no applied rule rewrites it into a URL fetched before"
    else:
        verdict = f"skipped: {', '.join(plan.rules)} make it {plan.target}, fetched before (a copy of {plan.kept})"
    out: dict[str, Any] = {"url": key, "host": host, "decision": verdict, "rules": rules}
    vetoes = [r["rule"] for r in rules if r["rule"] in book.vetoed(host)]
    if vetoes:
        out["vetoed_by"] = {rid: _veto_record(index, host, rid) for rid in vetoes}
    out["thresholds"] = f"copies >= {book.min_support}, confidence >= {book.confidence} (Wilson lower bound, 95%)"
    return out


def _veto_record(index: SimhashIndex, host: str, rid: str) -> str:
    raw = index.get_aux(IndexRuleStore.PREFIX + veto_name(host, rid))
    try:
        record = json.loads(raw or b"{}")
        return f"{record['url']} differs from {record['target']}"
    except (ValueError, KeyError, TypeError):
        return "(unreadable)"


def override(
    index: SimhashIndex, config: SimhashConfig, host: str | None, rule: str, how: str | None
) -> dict[str, Any]:
    """Disable, pin or clear (``how`` ``None``) ``rule`` on ``host``; what is now kept."""
    if not host:
        raise CommandError("name the rule's host: --host HOST (as `rules` lists it, e.g. www.example.com)", EXIT_USAGE)
    name = host.lower()
    if "/" in name or urlsplit(f"//{name}").netloc != name:
        raise CommandError(f"--host {host!r} is invalid: give a host[:port], e.g. www.example.com", EXIT_USAGE)
    try:
        parsed = Rule.parse(rule)
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    book = rule_book(index, config)
    book.set_override(name, parsed, how)
    return {"host": name, "rule": parsed.id, "state": _state(book, name, parsed.id)}
