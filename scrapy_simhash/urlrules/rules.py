"""URL rules: rewrites of a URL into another URL of the same page (a query parameter dropped, a path rewritten).

Pure functions on canonical URLs (:func:`scrapy_simhash.scrapy.component.canonical_key`); no Scrapy.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

__all__ = ["INDEX_NAMES", "KINDS", "Rule", "explored", "host_of", "hypotheses", "rewrite", "wilson_lower"]

#: The kinds of rule, in the order :func:`rewrite` applies them (path rules before query rules).
KINDS: tuple[str, ...] = ("prefix", "index", "slash", "param", "value")

#: Last path segments that name a directory's own page (``x/index.html`` is ``x/``).
INDEX_NAMES: tuple[str, ...] = ("index.html", "index.htm", "index.php")

_SLASH = ("add", "strip")


@dataclass(frozen=True, order=True)
class Rule:
    """One rewrite: ``param`` NAME (drop the query parameter NAME, whatever its value), ``value``
    NAME=VALUE (drop that pair only), ``index`` NAME (``x/NAME`` -> ``x/``), ``slash`` add|strip
    (add or strip the path's trailing slash), ``prefix`` SEGMENT (``/SEGMENT/x`` -> ``/x``)."""

    kind: str
    name: str
    value: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"URL rule kind ({self.kind!r}) is invalid: it must be one of {', '.join(KINDS)}")
        if self.kind == "slash" and self.name not in _SLASH:
            raise ValueError(f"slash rule ({self.name!r}) is invalid: it must be 'add' or 'strip'")
        if not self.name:
            raise ValueError(f"{self.kind} rule needs a name")

    @property
    def id(self) -> str:
        """The rule as stored: ``param:NAME``, ``value:NAME=VALUE``, ``index:NAME``, ``slash:add``, ``prefix:SEG``."""
        return f"{self.kind}:{self.name}={self.value}" if self.kind == "value" else f"{self.kind}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> Rule:
        """The rule of an :attr:`id`; ``ValueError`` for anything else."""
        kind, sep, rest = text.partition(":")
        if not sep:
            raise ValueError(f"URL rule ({text!r}) is invalid: expected KIND:NAME, e.g. 'param:utm_source'")
        if kind == "value":
            name, eq, value = rest.partition("=")
            if not eq:
                raise ValueError(f"URL rule ({text!r}) is invalid: expected value:NAME=VALUE")
            return cls(kind, name, value)
        return cls(kind, rest)

    def describe(self) -> str:
        """The rule in words, for log lines."""
        if self.kind == "param":
            return f"the query parameter {self.name!r} does not change the page"
        if self.kind == "value":
            return f"the query pair {self.name}={self.value} does not change the page"
        if self.kind == "index":
            return f"x/{self.name} is x/"
        if self.kind == "prefix":
            return f"/{self.name}/x is /x"
        return "x/ is x" if self.name == "strip" else "x is x/"

    def apply(self, url: str) -> str | None:
        """``url`` rewritten by this rule, canonical; ``None`` when the rule does not change it."""
        parts = urlsplit(url)
        path, query = parts.path, parts.query
        if self.kind in ("param", "value"):
            pairs = parse_qsl(query, keep_blank_values=True)
            if self.kind == "param":
                kept = [(n, v) for n, v in pairs if n != self.name]
            else:
                kept = [(n, v) for n, v in pairs if (n, v) != (self.name, self.value)]
            if len(kept) == len(pairs):
                return None
            query = urlencode(kept)
        else:
            rewritten = _rewrite_path(self, path)
            if rewritten is None:
                return None
            path = rewritten
        return canonicalize_url(urlunsplit((parts.scheme, parts.netloc, path, query, "")))


def _rewrite_path(rule: Rule, path: str) -> str | None:
    if rule.kind == "index":
        head, _, last = path.rpartition("/")
        return head + "/" if last == rule.name and path.startswith("/") else None
    if rule.kind == "slash":
        if rule.name == "strip":
            return path[:-1] if len(path) > 1 and path.endswith("/") else None
        return path + "/" if path and not path.endswith("/") else None
    segments = path.split("/")  # prefix: "/SEG/rest" -> "/rest", with something after SEG
    if len(segments) >= 3 and segments[0] == "" and segments[1] == rule.name and "/".join(segments[2:]):
        return "/" + "/".join(segments[2:])
    return None


def hypotheses(url: str) -> list[tuple[Rule, str]]:
    """Every rule of the rule language that changes ``url``, each with its rewrite of it: one
    ``param`` rule per parameter name and one ``value`` rule per pair of the query; the ``index``
    rule of a last segment in :data:`INDEX_NAMES`; the ``slash`` rule that adds or strips the
    trailing slash; the ``prefix`` rule of the first of two or more path segments."""
    parts = urlsplit(url)
    rules: list[Rule] = []
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    rules.extend(Rule("param", name) for name in dict.fromkeys(n for n, _ in pairs) if name)
    rules.extend(Rule("value", n, v) for n, v in dict.fromkeys(pairs) if n)
    last = parts.path.rpartition("/")[2]
    if last in INDEX_NAMES:
        rules.append(Rule("index", last))
    if parts.path:
        rules.append(Rule("slash", "strip" if parts.path.endswith("/") else "add"))
    segments = parts.path.split("/")
    if len(segments) >= 3 and segments[1]:
        rules.append(Rule("prefix", segments[1]))
    found = []
    for rule in rules:
        target = rule.apply(url)
        if target is not None and target != url:
            found.append((rule, target))
    return found


def rewrite(url: str, rules: list[Rule]) -> tuple[list[Rule], str] | None:
    """``url`` rewritten by each of ``rules`` that changes it, in :data:`KINDS` order (path rules
    first; one slash rule at most, and with both, only ``strip``: every URL of a page then has one
    form): the rules that applied and the result; ``None`` when the URL stays as it is."""
    applied: list[Rule] = []
    current = url
    if Rule("slash", "strip") in rules:
        rules = [rule for rule in rules if rule != Rule("slash", "add")]
    for rule in sorted(rules, key=lambda r: (KINDS.index(r.kind), r)):
        if rule.kind == "slash" and any(r.kind == "slash" for r in applied):
            continue  # "add" then "strip" would undo it
        target = rule.apply(current)
        if target is not None and target != current:
            applied.append(rule)
            current = target
    return (applied, current) if applied and current != url else None


def host_of(url: str) -> str:
    """The host of ``url`` with its port, lower case (what rules are learned per)."""
    return urlsplit(url).netloc.rpartition("@")[2].lower()


def explored(key: str, share: float) -> bool:
    """Whether the request of ``key`` is in the explore share: a fixed function of the key's
    blake2b hash (the same in every process and run), true for about ``share`` of all keys."""
    if share <= 0:
        return False
    value = int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")
    return value < share * 2**64


def wilson_lower(successes: int, trials: int, z: float = 1.96) -> float:
    """The Wilson score interval's lower bound of a success rate (``z`` 1.96: 95% two-sided);
    0.0 without trials."""
    if trials <= 0:
        return 0.0
    p = successes / trials
    z2 = z * z
    centre = p + z2 / (2 * trials)
    margin = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return (centre - margin) / (1 + z2 / trials)
