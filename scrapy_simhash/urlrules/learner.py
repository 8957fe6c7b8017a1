"""The URL rule learner: per host, evidence for and against each rule from the crawl's own verdicts, kept in the index.

A fetched URL ``u`` and a rule ``r`` that rewrites it into a URL ``t`` that was fetched before is a
test of ``r``: ``u`` a near-duplicate of ``t``'s content is a copy (support), ``u`` kept as new
(it differs or adds) vetoes ``r`` for the host at once, ``u`` a near-duplicate of another page is a
miss. A rule is applied once its support reaches the minimum and the Wilson lower bound of
``support / (support + misses)`` the confidence. Pure: the store and the records are callables.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_simhash.urlrules.rules import Rule, host_of, hypotheses, rewrite, wilson_lower

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from scrapy_simhash.store.index import SimhashIndex

__all__ = ["Event", "IndexRuleStore", "Plan", "RuleBook"]

#: Per rule, the counts kept: supporting copies, misses, requests skipped, requests explored.
SUPPORT, MISSES, SKIPPED, EXPLORED = range(4)
_FIELDS = 4


class Plan(NamedTuple):
    """A request a rule would skip: the rules that rewrite its URL, the URL they rewrite it into
    (fetched before) and the kept page whose content that is."""

    rules: tuple[str, ...]
    target: str
    kept: str


class Event(NamedTuple):
    """What the learner did that the crawl reports: ``learned`` (a rule now applies) or ``vetoed``
    (a copy that differs or adds: ``url`` kept, ``target`` its rewrite)."""

    kind: str
    host: str
    rule: Rule
    support: int
    confidence: float
    url: str = ""
    target: str = ""


class IndexRuleStore:
    """Rules kept in a :class:`~scrapy_simhash.store.index.SimhashIndex`'s aux blobs: per host one
    JSON blob ``urlrules:<host>`` of counts, and per vetoed rule one blob
    ``urlrules:veto:<host>:<digest>`` (written once, so that no process's veto is overwritten by
    another's counts)."""

    PREFIX = "urlrules:"

    def __init__(self, index: SimhashIndex) -> None:
        self.index = index

    def get(self, names: Sequence[str]) -> list[bytes | None]:
        return self.index.get_aux_many([self.PREFIX + name for name in names])

    def put(self, items: Mapping[str, bytes | None]) -> None:
        self.index.put_aux_many({self.PREFIX + name: value for name, value in items.items()})


def veto_name(host: str, rule_id: str) -> str:
    """The aux name of a rule's veto (a digest: rule ids can be long)."""
    return f"veto:{host}:{hashlib.blake2b(rule_id.encode('utf-8'), digest_size=10).hexdigest()}"


@dataclass
class _Host:
    """One host's rules: stored counts merged with this process's (``delta``, not yet written)."""

    counts: dict[str, list[int]] = field(default_factory=dict)
    delta: dict[str, list[int]] = field(default_factory=dict)
    vetoed: set[str] = field(default_factory=set)
    announced: set[str] = field(default_factory=set)  # active rules already reported
    touches: int = 0


class RuleBook:
    """Learns, keeps and applies URL rules per host.

    ``store``: get/put of named blobs (:class:`IndexRuleStore`). ``known``: for canonical URLs, a
    mapping of those that have a record to the key of their kept content (``None``: a record that
    is no fetched page, e.g. gone). ``min_support``, ``confidence`` (Wilson lower bound, ``z``),
    ``max_rules`` per host; counts are merged into the store every ``refresh_every`` uses of a host.
    """

    def __init__(
        self,
        store: Any,
        known: Callable[[Sequence[str]], Mapping[str, str | None]],
        *,
        min_support: int,
        confidence: float,
        z: float = 1.96,
        max_rules: int = 1000,
        refresh_every: int = 50,
    ) -> None:
        self.store = store
        self.known = known
        self.min_support = min_support
        self.confidence = confidence
        self.z = z
        self.max_rules = max_rules
        self.refresh_every = refresh_every
        self._hosts: dict[str, _Host] = {}

    # -- state ---------------------------------------------------------------------------------

    def _host(self, host: str) -> _Host:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = _Host()
            self._sync(host, state)
            state.announced = {rid for rid in state.counts if self._applies(state, rid)}
        return state

    def _touch(self, host: str, state: _Host) -> None:
        state.touches += 1
        if state.touches % self.refresh_every == 0:
            self._sync(host, state)

    def _sync(self, host: str, state: _Host) -> None:
        """Read the host's stored counts and vetoes, add this process's delta, write it back."""
        raw = self.store.get([host])[0]
        stored: dict[str, list[int]] = {}
        if raw is not None:
            try:
                stored = {str(k): [int(x) for x in v][:_FIELDS] for k, v in json.loads(raw)["rules"].items()}
            except (ValueError, KeyError, TypeError, AttributeError):
                stored = {}  # unreadable: counted again from here (vetoes are kept apart)
        for rid, delta in state.delta.items():
            row = stored.setdefault(rid, [0] * _FIELDS)
            row.extend([0] * (_FIELDS - len(row)))
            for i, value in enumerate(delta):
                row[i] += value
        if state.delta:
            blob = json.dumps({"rules": stored}, sort_keys=True, separators=(",", ":")).encode()
            self.store.put({host: blob})
            state.delta = {}
        state.counts = stored
        ids = sorted(stored)
        vetoes = self.store.get([veto_name(host, rid) for rid in ids])
        state.vetoed |= {rid for rid, veto in zip(ids, vetoes) if veto is not None}

    def flush(self) -> None:
        """Write every host's counts not yet stored."""
        for host, state in self._hosts.items():
            if state.delta:
                self._sync(host, state)

    def _add(self, state: _Host, rid: str, column: int) -> bool:
        if rid not in state.counts and len(state.counts) >= self.max_rules:
            return False
        for table in (state.counts, state.delta):
            table.setdefault(rid, [0] * _FIELDS)[column] += 1
        return True

    def _applies(self, state: _Host, rid: str) -> bool:
        if rid in state.vetoed:
            return False
        row = state.counts.get(rid)
        if row is None or row[SUPPORT] < self.min_support:
            return False
        return wilson_lower(row[SUPPORT], row[SUPPORT] + row[MISSES], self.z) >= self.confidence

    def _confidence(self, state: _Host, rid: str) -> float:
        row = state.counts.get(rid, [0] * _FIELDS)
        return wilson_lower(row[SUPPORT], row[SUPPORT] + row[MISSES], self.z)

    def active(self, host: str) -> list[Rule]:
        """The rules applied on ``host`` now."""
        state = self._host(host)
        return [Rule.parse(rid) for rid in sorted(state.counts) if self._applies(state, rid)]

    def counts(self, host: str) -> dict[str, tuple[int, int, int, int]]:
        """Rule id -> (support, misses, skipped, explored), this process's included."""
        return {rid: (row[0], row[1], row[2], row[3]) for rid, row in self._host(host).counts.items()}

    def vetoed(self, host: str) -> set[str]:
        """The ids of the rules vetoed on ``host``."""
        return set(self._host(host).vetoed)

    # -- applying ------------------------------------------------------------------------------

    def plan(self, key: str) -> Plan | None:
        """The rules that would skip the request of ``key`` (a canonical URL never fetched before)
        and the fetched URL they rewrite it into; ``None`` when none applies."""
        host = host_of(key)
        state = self._host(host)
        self._touch(host, state)
        rules = [Rule.parse(rid) for rid in sorted(state.counts) if self._applies(state, rid)]
        if not rules:
            return None
        tried: list[tuple[tuple[str, ...], str]] = []
        for rule in rules:
            target = rule.apply(key)
            if target is not None and target != key:
                tried.append(((rule.id,), target))
        composite = rewrite(key, rules)
        if composite is not None and len(composite[0]) > 1:
            tried.append((tuple(r.id for r in composite[0]), composite[1]))
        if not tried:
            return None
        known = self.known([key, *(target for _, target in tried)])
        if key in known:  # fetched before: the recrawl's to decide
            return None
        for ids, target in tried:
            kept = known.get(target)
            if kept:
                return Plan(ids, target, kept)
        return None

    def count(self, plan: Plan, column: int) -> None:
        """Count ``plan``'s request as :data:`SKIPPED` or :data:`EXPLORED` for each of its rules."""
        state = self._host(host_of(plan.target))
        for rid in plan.rules:
            self._add(state, rid, column)

    # -- learning ------------------------------------------------------------------------------

    def observe(self, key: str, verdict: str, duplicate_of: str | None, tried: Plan | None = None) -> list[Event]:
        """Learn from the first fetch of ``key`` (its ``verdict``, ``new`` or ``near_duplicate``
        of ``duplicate_of``); ``tried``: the plan of an explored request. Returns what to report."""
        if verdict not in ("new", "near_duplicate"):
            return []
        host = host_of(key)
        state = self._host(host)
        self._touch(host, state)
        tests: list[tuple[tuple[str, ...], str]] = [((rule.id,), target) for rule, target in hypotheses(key)]
        composite = rewrite(key, [Rule.parse(rid) for rid in sorted(state.counts) if self._applies(state, rid)])
        if composite is not None and len(composite[0]) > 1:
            tests.append((tuple(r.id for r in composite[0]), composite[1]))
        if tried is not None:
            tests.append((tuple(tried.rules), tried.target))
        # An explored plan of one rule is one of the hypotheses; the URL itself is no test of a rule.
        tests = [test for test in dict.fromkeys(tests) if test[1] != key]
        known = self.known(list(dict.fromkeys(target for _, target in tests)))
        events: list[Event] = []
        vetoes: dict[str, str] = {}
        for ids, target in tests:
            kept = known.get(target)
            if not kept:
                continue
            if verdict == "new":
                for rid in ids:
                    new_id = rid not in state.counts
                    if new_id and (rid.startswith("value:") or len(state.counts) >= self.max_rules):
                        continue  # a pair never supported, or no room: nothing to veto
                    if rid not in state.vetoed and rid not in vetoes:
                        vetoes[rid] = target
            elif len(ids) == 1 and ids[0] not in state.vetoed:  # a composite's copy proves no one rule
                rid = ids[0]
                copy = duplicate_of in (target, kept)
                if not copy and rid not in state.counts:
                    continue  # a miss of a rule never supported: nothing to keep
                if copy and rid.startswith("value:") and len(state.counts) >= self.max_rules:
                    continue
                self._add(state, rid, SUPPORT if copy else MISSES)
                if rid not in state.announced and self._applies(state, rid):
                    state.announced.add(rid)
                    events.append(Event("learned", host, Rule.parse(rid), *self._evidence(state, rid)))
        for rid, target in vetoes.items():
            events.append(self._veto(host, state, rid, key, target))
        if any(e.kind == "learned" for e in events):
            self._sync(host, state)  # other processes apply it from their next refresh
        return events

    def _evidence(self, state: _Host, rid: str) -> tuple[int, float]:
        return state.counts.get(rid, [0])[SUPPORT], self._confidence(state, rid)

    def _veto(self, host: str, state: _Host, rid: str, url: str, target: str) -> Event:
        support, confidence = self._evidence(state, rid)
        state.vetoed.add(rid)
        state.counts.setdefault(rid, [0] * _FIELDS)
        state.delta.setdefault(rid, [0] * _FIELDS)  # listed in the host's blob, so its veto is read
        record = {"rule": rid, "url": url, "target": target, "support": support}
        self.store.put({veto_name(host, rid): json.dumps(record, sort_keys=True).encode()})
        self._sync(host, state)
        return Event("vetoed", host, Rule.parse(rid), support, confidence, url, target)
