"""The URL rule learner: per host, evidence for and against each rule from the crawl's own verdicts, kept in the index.

A rule ``r`` that rewrites a URL ``u`` into ``t``, both fetched, is tested when the second of them
is fetched, in either order: the second a near-duplicate of the first's content is a copy (support),
the second kept as new (it differs or adds) vetoes ``r`` for the host at once, a near-duplicate of
another page is a miss. A rule is applied once its support reaches the minimum and the Wilson lower bound of
``support / (support + misses)`` the confidence. Pure: the store and the records are callables.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_simhash.urlrules.rules import Rule, host_of, hypotheses, rewrite, wilson_lower

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Mapping, Sequence

    from scrapy_simhash.store.index import SimhashIndex

__all__ = ["DISABLED", "PINNED", "Event", "IndexRuleStore", "Plan", "RuleBook", "index_known"]

#: Per rule, the counts kept: supporting copies, misses, requests skipped, requests explored.
SUPPORT, MISSES, SKIPPED, EXPLORED = range(4)
_FIELDS = 4


class Plan(NamedTuple):
    """A request a rule would skip: the rules that join its URL to a URL fetched before (``target``:
    they rewrite the request's URL into it, it into the request's, or both into one URL) and the
    kept page whose content that is."""

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


#: A rule's override: never applied, or applied whatever the evidence.
DISABLED, PINNED = "disabled", "pinned"


def index_known(index: SimhashIndex) -> Callable[[Sequence[str]], dict[str, str | None]]:
    """The ``known`` of a :class:`RuleBook` over ``index``'s records: of the keys given, those with
    a record, each with the key of its kept content (``None``: no fetched page: gone, moved)."""
    from scrapy_simhash.store.record import PageRecord

    def known(keys: Sequence[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for key, raw in zip(keys, index.get_records(keys)):
            if raw is None:
                continue
            record = PageRecord.parse(raw)
            usable = record is not None and record.last_fp is not None and not record.gone and not record.moved_to
            found[key] = (record.duplicate_of or key) if usable and record is not None else None
        return found

    return known


def override_name(host: str) -> str:
    """The aux name of a host's overrides (the rules disabled or pinned by hand)."""
    return f"override:{host}"


def _overrides(raw: bytes | None) -> dict[str, str]:
    if raw is None:
        return {}
    try:
        loaded = json.loads(raw)
        return {str(k): str(v) for k, v in loaded.items() if v in (DISABLED, PINNED)}
    except (ValueError, AttributeError):
        return {}


def veto_name(host: str, rule_id: str) -> str:
    """The aux name of a rule's veto (a digest: rule ids can be long)."""
    return f"veto:{host}:{hashlib.blake2b(rule_id.encode('utf-8'), digest_size=10).hexdigest()}"


@dataclass
class _Host:
    """One host's rules: stored counts merged with this process's (``delta``, not yet written)."""

    counts: dict[str, list[int]] = field(default_factory=dict)
    delta: dict[str, list[int]] = field(default_factory=dict)
    vetoed: set[str] = field(default_factory=set)
    overrides: dict[str, str] = field(default_factory=dict)  # rule id -> "disabled" or "pinned"
    announced: set[str] = field(default_factory=set)  # active rules already reported
    touches: int = 0


class RuleBook:
    """Learns, keeps and applies URL rules per host.

    ``store``: get/put of named blobs (:class:`IndexRuleStore`). ``known``: for canonical URLs, a
    mapping of those that have a record to the key of their kept content (``None``: a record that
    is no fetched page, e.g. gone). ``min_support``, ``confidence`` (Wilson lower bound, ``z``),
    ``max_rules`` per host; counts are merged into the store every ``refresh_every`` uses of a host.
    ``max_pending``: how many URLs never fetched, rewrites of fetched ones, are remembered (in this
    process) to test and apply rules in the other order, and how many forms of fetched URLs (by
    the rules applied then) to join a request to; ``max_hosts``: hosts whose state is kept.
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
        max_pending: int = 200_000,
        max_hosts: int = 10_000,
    ) -> None:
        self.store = store
        self.known = known
        self.min_support = min_support
        self.confidence = confidence
        self.z = z
        self.max_rules = max_rules
        self.refresh_every = refresh_every
        self.max_pending = max_pending
        self.max_hosts = max_hosts
        self._hosts: dict[str, _Host] = {}
        #: A URL never fetched -> (rule id, fetched URL) of the fetched URLs a rule rewrites into it.
        self._pending: dict[str, list[tuple[str, str]]] = {}
        #: A fetched URL's form (rewritten by the rules applied when it was fetched) -> (those rules, the URL).
        self._forms: dict[str, tuple[tuple[str, ...], str]] = {}

    # -- state ---------------------------------------------------------------------------------

    def _host(self, host: str) -> _Host:
        state = self._hosts.get(host)
        if state is None:
            if len(self._hosts) >= self.max_hosts:  # the least recently added: its counts stored first
                old = next(iter(self._hosts))
                if self._hosts[old].delta:
                    self._sync(old, self._hosts[old])
                del self._hosts[old]
            state = self._hosts[host] = _Host()
            self._sync(host, state)
            state.announced = set(self._active_ids(state))
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
        overrides, *vetoes = self.store.get([override_name(host), *(veto_name(host, rid) for rid in ids)])
        state.vetoed |= {rid for rid, veto in zip(ids, vetoes) if veto is not None}
        state.overrides = _overrides(overrides)

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

    def _active_ids(self, state: _Host) -> list[str]:
        """The ids of the rules applied on the host now, sorted."""
        pinned = [rid for rid, how in state.overrides.items() if how == PINNED]
        return sorted(rid for rid in {*state.counts, *pinned} if self._applies(state, rid))

    def _applies(self, state: _Host, rid: str) -> bool:
        override = state.overrides.get(rid)
        if override is not None:
            return override == PINNED
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
        return [Rule.parse(rid) for rid in self._active_ids(state)]

    def overrides(self, host: str) -> dict[str, str]:
        """Rule id -> ``disabled`` or ``pinned``: the rules of ``host`` set by hand."""
        return dict(self._host(host).overrides)

    def set_override(self, host: str, rule: Rule, how: str | None) -> None:
        """Disable (``disabled``: never applied) or pin (``pinned``: applied whatever the evidence)
        ``rule`` on ``host``, or (``None``) let its evidence decide again; kept in the store."""
        if how not in (DISABLED, PINNED, None):
            raise ValueError(f"a rule's override ({how!r}) is invalid: it must be {DISABLED!r}, {PINNED!r} or None")
        state = self._host(host)
        self._sync(host, state)
        overrides = dict(state.overrides)
        if how is None:
            overrides.pop(rule.id, None)
        else:
            overrides[rule.id] = how
        blob = json.dumps(overrides, sort_keys=True).encode() if overrides else None
        self.store.put({override_name(host): blob})
        state.overrides = overrides

    def rule_confidence(self, host: str, rid: str) -> float:
        """The Wilson lower bound of the rule's share of copies on ``host``."""
        return self._confidence(self._host(host), rid)

    def applies(self, host: str, rid: str) -> bool:
        """Whether the rule is applied on ``host`` now."""
        return self._applies(self._host(host), rid)

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
        rules = [Rule.parse(rid) for rid in self._active_ids(state)]
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
        ids = {rule.id for rule in rules}
        # The other order: fetched URLs a rule rewrites into this one, or into one of its rewrites.
        joined: list[tuple[tuple[str, ...], str]] = [
            ((rid,), source) for rid, source in self._pending.get(key, ()) if rid in ids
        ]
        for rules_of, target in tried:
            joined.extend(((*rules_of, rid), source) for rid, source in self._pending.get(target, ()) if rid in ids)
        # ... or a fetched URL that the rules applied then rewrote into this one's form.
        own, form = ([], key) if composite is None else ([r.id for r in composite[0]], composite[1])
        source = self._forms.get(form)
        if source is not None and ids.issuperset(source[0]):
            joined.append((tuple(dict.fromkeys([*own, *source[0]])), source[1]))
        tried.extend(test for test in joined if test[1] != key)
        if not tried:
            return None
        known = self.known(list(dict.fromkeys([key, *(target for _, target in tried)])))
        if key in known:  # fetched before: the recrawl's to decide
            return None
        for rules_of, target in tried:
            kept = known.get(target)
            if kept:
                return Plan(rules_of, target, kept)
        return None

    def tests(self, key: str, fetching: Container[str] = ()) -> bool:
        """Whether a fetch of ``key`` (a canonical URL) would test a rule of its host not yet
        decided (neither applied, vetoed nor set by hand): a rule rewrites it into a URL fetched
        before or being fetched (in ``fetching``: its verdict is to come), or a URL fetched before
        into it."""
        host = host_of(key)
        state = self._host(host)
        open_ = [(rule.id, target) for rule, target in hypotheses(key) if self._undecided(state, rule.id)]
        if any(self._undecided(state, rid) for rid, _ in self._pending.get(key, ())):
            return True
        if not open_:
            return False
        if any(target in fetching for _, target in open_):
            return True
        known = self.known(list(dict.fromkeys(target for _, target in open_)))
        return any(known.get(target) for _, target in open_)

    def _undecided(self, state: _Host, rid: str) -> bool:
        return rid not in state.vetoed and rid not in state.overrides and not self._applies(state, rid)

    def form(self, key: str) -> str:
        """``key`` rewritten by every rule applied on its host (``key`` when none changes it): the
        URLs a fetch of one of them would join share it."""
        state = self._host(host_of(key))
        composite = rewrite(key, [Rule.parse(rid) for rid in self._active_ids(state)])
        return key if composite is None else composite[1]

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
        rewrites = [(rule.id, target) for rule, target in hypotheses(key)]
        tests: list[tuple[tuple[str, ...], str]] = [((rid,), target) for rid, target in rewrites]
        composite = rewrite(key, [Rule.parse(rid) for rid in self._active_ids(state)])
        if composite is not None and len(composite[0]) > 1:
            tests.append((tuple(r.id for r in composite[0]), composite[1]))
        if composite is not None:
            self._forms.setdefault(composite[1], (tuple(r.id for r in composite[0]), key))
        if tried is not None:
            tests.append((tuple(tried.rules), tried.target))
        # The other order: fetched URLs that a rule rewrites into this one (remembered, or the
        # page this one duplicates: that one is in the store, for every process).
        tests.extend(((rid,), source) for rid, source in self._pending.pop(key, ()))
        if verdict == "near_duplicate" and duplicate_of:
            tests.extend(((rule.id,), duplicate_of) for rule, target in hypotheses(duplicate_of) if target == key)
            # ... or a rule that rewrites this one into what the applied rules make of that page
            # (its original was never fetched: a copy of it was, and the rules joined the rest to it).
            applied = [Rule.parse(rid) for rid in self._active_ids(state)]
            forms = {rule.apply(duplicate_of) for rule in applied} | {(rewrite(duplicate_of, applied) or ([], None))[1]}
            tests.extend(((rid,), duplicate_of) for rid, target in rewrites if target in forms)
            # ... and a rule that rewrites that page into what the applied rules make of this one.
            own = {rule.apply(key) for rule in applied} | {None if composite is None else composite[1]}
            tests.extend(((rule.id,), duplicate_of) for rule, target in hypotheses(duplicate_of) if target in own)
        # An explored plan of one rule is one of the tests; the URL itself is no test of a rule.
        tests = [test for test in dict.fromkeys(tests) if test[1] != key]
        known = self.known(list(dict.fromkeys(target for _, target in tests)))
        self._remember(key, [(rid, target) for rid, target in rewrites if target not in known])
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

    def _remember(self, key: str, rewrites: list[tuple[str, str]]) -> None:
        """Remember that rules rewrite the fetched ``key`` into URLs never fetched (oldest forgotten first)."""
        for rid, target in rewrites:
            self._pending.setdefault(target, []).append((rid, key))
        while len(self._pending) > self.max_pending:
            del self._pending[next(iter(self._pending))]
        while len(self._forms) > self.max_pending:
            del self._forms[next(iter(self._forms))]

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
