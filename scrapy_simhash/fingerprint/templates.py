"""Site templates learned from the crawl: text lines that recur across many distinct pages of one host.

Pure: no Scrapy import. Main-content extraction judges each page alone; a site's template (its menus,
footers, licence lines, "please activate JavaScript" notices) is what recurs across the pages of the
site, wherever it sits in the markup. :class:`SiteTemplates` counts, per host, on how many distinct
pages each visible text line was seen (lines are compared after NFKC, lower case and with every
number written as ``0``); a line seen on at least ``min_pages`` pages is template.

What it decides, and what it never changes: a page whose fingerprinted text, without its template
lines, has too few features (``Fingerprinter.min_features``) has no evidence of its own, so it may
not be a near-duplicate (``PageFingerprint.fallback == "template"``). Its fingerprint does not
depend on what was learned: a page fetched twice unchanged gets the same fingerprint however much
was learned about its site in between, so the change verdict of a recrawl never depends on the
learning (the template only ever removes a near-duplicate verdict, never adds one).

Bounded: at most ``max_lines`` line counts per host (when full, the lines seen on the fewest pages
are forgotten: they are the ones that are not template), at most ``max_hosts`` hosts in memory
(the least recently used is saved and dropped). What is learned is kept in a
:class:`TemplateStore` (``get(host)`` / ``put(host, bytes)``), saved every ``save_every`` pages of
a host and by :meth:`SiteTemplates.flush`; a store that fails is counted (``store_errors``) and
learning goes on in memory. Thread-safe.
"""

from __future__ import annotations

import hashlib
import re
import struct
import threading
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from scrapy_simhash.text.cache import SizedCache
from scrapy_simhash.text.features import normalize
from scrapy_simhash.text.native import native_flat_text

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy_simhash.auxblobs import AuxBlobs

__all__ = [
    "DEFAULT_MIN_PAGES",
    "HostTemplate",
    "IndexTemplateStore",
    "MemoryTemplateStore",
    "SiteTemplates",
    "TemplateStore",
    "host_of",
    "line_key",
    "line_keys",
]

#: A line seen on at least this many distinct pages of a host is template.
DEFAULT_MIN_PAGES = 6
DEFAULT_MAX_LINES = 4096
DEFAULT_MAX_HOSTS = 1024
DEFAULT_SAVE_EVERY = 64

_MAGIC = b"SHT1"
_HEADER = struct.Struct("<4sII")  # magic, pages, number of lines
_ENTRY = struct.Struct("<QI")  # line key, pages it was seen on
_DIGITS_RE = re.compile(r"\d+")
_RECENT_FINGERPRINTS = 4096


class TemplateStore(Protocol):
    """Where learned templates are kept: one opaque value per host."""

    def get(self, host: str) -> bytes | None: ...

    def put(self, host: str, value: bytes) -> None: ...


class MemoryTemplateStore:
    """A :class:`TemplateStore` in a dict (tests, one-off runs)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def get(self, host: str) -> bytes | None:
        return self.data.get(host)

    def put(self, host: str, value: bytes) -> None:
        self.data[host] = value


class IndexTemplateStore:
    """A :class:`TemplateStore` in a :class:`~scrapy_simhash.store.index.SimhashIndex`'s auxiliary blobs
    (``get_aux`` / ``put_aux``: not records, so never listed by ``export`` or the due list), one
    per host under ``"template:" + host``."""

    PREFIX = "template:"

    def __init__(self, index: AuxBlobs) -> None:
        self.index = index

    def get(self, host: str) -> bytes | None:
        return self.index.get_aux(self.PREFIX + host)

    def put(self, host: str, value: bytes) -> None:
        self.index.put_aux(self.PREFIX + host, value)


def host_of(url: str | None) -> str:
    """The host part of ``url``, lower case, with its port (``""`` when there is none)."""
    global _LAST_HOST
    if not url:
        return ""
    last = _LAST_HOST  # a page's host is asked for twice: template_lines, then observe
    if last[0] == url:
        return last[1]
    try:
        host = (urlsplit(url).netloc.rpartition("@")[2]).lower()
    except ValueError:
        host = ""
    _LAST_HOST = (url, host)
    return host


_LAST_HOST = ("", "")


def line_key(line: str) -> int:
    """The 64-bit key of a text line: blake2b of its NFKC, lower-case form with every number as 0
    and runs of spaces as one (stable across processes and machines)."""
    return _key_of(normalize(line))


def _key_of(norm: str) -> int:
    norm = " ".join(_DIGITS_RE.sub("0", norm).split())
    return int.from_bytes(hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


#: line -> key of the lines seen lately: a page's text lines are keyed by ``template_lines`` and
#: again, among its visible lines, by ``observe``; a site's template lines recur on every page.
_KEYS = SizedCache(50_000, 4 << 20)


def line_keys(lines: list[str]) -> list[int]:
    """:func:`line_key` of each line. The lines not seen lately are keyed in one pass: normalised
    together (NFKC and lower case leave a line break where it is and act on each line alone) and
    hashed natively when the core is installed (``FlatText.line_keys``: the same keys)."""
    keys = list(map(_KEYS.get, lines))  # the lines seen lately, without a Python loop
    if None not in keys:
        return keys  # type: ignore[return-value] # no None in it
    todo = list(dict.fromkeys(line for line, key in zip(lines, keys) if key is None))
    computed = dict(zip(todo, _compute_keys(todo)))
    put = _KEYS.put
    for line, key in computed.items():
        put(line, key)
    return [computed[line] if key is None else key for line, key in zip(lines, keys)]


def _remember(lines: list[str], keys: list[int]) -> None:
    """Put the keys of ``lines`` that were computed elsewhere in :data:`_KEYS`."""
    if len(keys) != len(lines):
        raise ValueError(f"{len(keys)} line keys for {len(lines)} lines")
    get, put = _KEYS.get, _KEYS.put
    for line, key in zip(lines, keys):
        if get(line) is None:
            put(line, key)


def _compute_keys(lines: list[str]) -> list[int]:
    joined = normalize("\n".join(lines))
    norm = joined.split("\n")
    if len(norm) != len(lines):  # a line with a line break of its own (or none): one by one
        return [line_key(line) for line in lines]
    flat = native_flat_text()
    if flat is not None:
        try:
            return flat.line_keys(joined)  # type: ignore[no-any-return]
        except UnicodeEncodeError:  # lone surrogates: not UTF-8, Python's path takes them
            pass
    return [_key_of(line) for line in norm]


def _most_seen(counts: dict[int, int], n: int) -> dict[int, int]:
    """The ``n`` lines of ``counts`` seen on the most pages (ties: the smallest keys): what a host
    keeps when it has too many. Sorted by count, then key, that is ``sorted(counts.items(),
    key=lambda kv: (-kv[1], kv[0]))[:n]``; found here without sorting every line by a Python key
    (most lines of a crawl are seen on one page: only the least-seen count that is kept is cut,
    by key)."""
    if len(counts) <= n:
        return dict(counts)
    tally = Counter(counts.values())
    kept = 0
    for cut in sorted(tally, reverse=True):  # the least-seen count that is kept, whole or in part
        if kept + tally[cut] >= n:
            break
        kept += tally[cut]
    out = {key: seen for key, seen in counts.items() if seen > cut}
    out.update(dict.fromkeys(sorted([key for key, seen in counts.items() if seen == cut])[: n - kept], cut))
    return out


class HostTemplate:
    """What is learned about one host: how many pages were seen, and on how many of them each line was."""

    __slots__ = ("counts", "fingerprints", "pages", "seen_since_save")

    def __init__(self, pages: int = 0, counts: dict[int, int] | None = None) -> None:
        self.pages = pages
        self.counts: dict[int, int] = counts if counts is not None else {}
        self.seen_since_save = 0
        # Fingerprints of the pages counted lately (in memory only): an exact copy is not counted.
        self.fingerprints: set[int] = set()

    def to_bytes(self) -> bytes:
        """Deterministic bytes: header, then the lines sorted by key."""
        counts = self.counts
        keys = sorted(counts)  # the keys alone: sorting them is several times faster than the items
        return b"".join(
            (_HEADER.pack(_MAGIC, self.pages, len(keys)), *map(_ENTRY.pack, keys, map(counts.__getitem__, keys)))
        )

    @classmethod
    def from_bytes(cls, raw: bytes) -> HostTemplate:
        """Parse :meth:`to_bytes` output; ValueError if ``raw`` is not one."""
        if len(raw) < _HEADER.size:
            raise ValueError("not a site template: too short")
        magic, pages, n = _HEADER.unpack_from(raw)
        if magic != _MAGIC or len(raw) != _HEADER.size + n * _ENTRY.size:
            raise ValueError(f"not a site template: {raw[:16]!r}")
        counts = dict(_ENTRY.iter_unpack(raw[_HEADER.size :]))
        return cls(pages, counts)


class SiteTemplates:
    """Per-host template lines learned from the pages of a crawl.

    ``observe(url, lines, fp)`` once per page of distinct content (the middleware calls it for every
    page but unchanged refetches, with its fingerprint, so that exact copies do not make a page's
    own text look recurrent; near-duplicate pages count, or a template whose pages get dropped
    could never be learned); ``template_lines(url, lines)`` says which lines are template.
    """

    def __init__(
        self,
        store: TemplateStore | None = None,
        *,
        min_pages: int = DEFAULT_MIN_PAGES,
        max_lines: int = DEFAULT_MAX_LINES,
        max_hosts: int = DEFAULT_MAX_HOSTS,
        save_every: int = DEFAULT_SAVE_EVERY,
    ) -> None:
        for name, value in (("min_pages", min_pages), ("max_lines", max_lines), ("max_hosts", max_hosts)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} ({value!r}) is invalid: it must be an int >= 1")
        self.store = store
        self.min_pages = min_pages
        self.max_lines = max_lines
        self.max_hosts = max_hosts
        self.save_every = save_every
        self._hosts: OrderedDict[str, HostTemplate] = OrderedDict()
        self._lock = threading.Lock()
        #: Stored values that could not be parsed (replaced by what is learned from now on).
        self.unreadable = 0
        #: Store reads and writes that failed (learning goes on in memory).
        self.store_errors = 0

    def _host(self, host: str) -> HostTemplate:
        tpl = self._hosts.get(host)
        if tpl is not None:
            self._hosts.move_to_end(host)
            return tpl
        tpl = None
        if self.store is not None:
            try:
                raw = self.store.get(host)
            except Exception:  # noqa: BLE001 - what is learned is an aid: a store failure costs it, no more
                self.store_errors += 1
                raw = None
            if raw is not None:
                try:
                    tpl = HostTemplate.from_bytes(bytes(raw))
                except ValueError:
                    self.unreadable += 1
        if tpl is None:
            tpl = HostTemplate()
        self._hosts[host] = tpl
        while len(self._hosts) > self.max_hosts:
            old_host, old = self._hosts.popitem(last=False)
            self._save(old_host, old)
        return tpl

    def _save(self, host: str, tpl: HostTemplate) -> None:
        if self.store is not None and tpl.seen_since_save:
            try:
                self.store.put(host, tpl.to_bytes())
            except Exception:  # noqa: BLE001 - kept in memory; saved again at the next occasion
                self.store_errors += 1
                return
        tpl.seen_since_save = 0

    def observe(self, url: str | None, lines: Iterable[str], fp: int | None = None) -> None:
        """Count the distinct lines of one page of ``url``'s host; with ``fp`` (the page's
        fingerprint), a page with a fingerprint counted lately is not counted again."""
        host = host_of(url)
        with self._lock:
            tpl = self._host(host)
            if fp is not None and fp in tpl.fingerprints:
                return  # (before its lines are keyed: a copy of a page costs nothing more)
            keys = set(line_keys(list(filter(str.strip, lines))))  # not the blank lines
            if fp is not None:
                if len(tpl.fingerprints) >= _RECENT_FINGERPRINTS:
                    tpl.fingerprints.clear()
                tpl.fingerprints.add(fp)
            tpl.pages += 1
            counts = tpl.counts
            for key in keys:
                counts[key] = counts.get(key, 0) + 1
            if len(counts) > self.max_lines:
                tpl.counts = _most_seen(counts, self.max_lines * 3 // 4)
            tpl.seen_since_save += 1
            if tpl.seen_since_save >= self.save_every:
                self._save(host, tpl)

    def template_lines(self, url: str | None, lines: Iterable[str], keys: list[int] | None = None) -> set[str]:
        """The lines among ``lines`` that are template on ``url``'s host; ``keys``: their
        :func:`line_key` where the caller has them (the native core makes them with the
        fingerprint), remembered for the page's :meth:`observe`."""
        lines = list(lines)
        if keys is not None:
            _remember(lines, keys)
        host = host_of(url)
        with self._lock:
            tpl = self._hosts.get(host)
            if tpl is None and self.store is None:
                return set()
            tpl = self._host(host)
            if tpl.pages < self.min_pages:
                return set()
            counts = tpl.counts
            least = self.min_pages
            if keys is None:
                keys = line_keys(lines)
            return {line for line, key in zip(lines, keys) if counts.get(key, 0) >= least}

    def flush(self) -> None:
        """Save every host learned since its last save."""
        with self._lock:
            for host, tpl in self._hosts.items():
                self._save(host, tpl)
