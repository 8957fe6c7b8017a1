"""Copies of short pages (print views) and of template-only pages: a drop only where the copy holds
nothing the kept page lacks.

A short page (``PageFingerprint.fallback == "short"``) has no SimHash: its fingerprint is an exact
hash of its whole visible text, so a print view of it (the same content, without the site's
navigation, with a "printed from" line) is not found by the index. Keying short pages by their
content-like text alone would find it, but would also make two different pages one whose own text
sits in blocks that extraction takes for chrome (two acknowledgement pages whose thanks are in a
sidebar and whose content is the same licence line).

So the content key (``PageFingerprint.content_key``: an exact hash of the title and the page's
content-like text) only proposes a candidate, and the drop needs the new page's **whole** visible
text to be the kept page's: every visible line of the new page is a line of the kept page
(compared as :func:`~scrapy_simhash.fingerprint.templates.line_key` compares them: NFKC, lower case, numbers
as 0), except lines that name the kept page's URL or path ("Printed from /a/b.html"). Dropping such
a page loses nothing but its pointer to the page that is kept. The other way round (the print view
kept first, the full page later), the kept page must say that it is the new page's copy: a line of
it names the new page, and every other line of it is a line of the new page. The new page then
has the same title and content-like text, and beside them only what its print view leaves out
(navigation, header, footer): what no drop counts as a page's own. Two pages that only share their
content-like text (the acknowledgement pages above) name neither each other, and are kept.

What is stored, in the index's aux blobs (not records: the record's byte layout is unchanged; the
memory, LMDB and Redis stores keep them alike), for each short page that is kept:

- ``short-key:<content key, hex>``: the URLs of the kept short pages with that content key (JSON,
  the :data:`MAX_URLS` latest);
- ``short-page:<blake2b of the URL, hex>``: the URL, the fingerprint it was kept with and the
  sorted 64-bit keys of its visible lines (:data:`MAX_LINES` at most, else nothing is stored and
  no page is dropped as its copy);
- ``short-pointers:<blake2b of the URL, hex>``: for a page with lines that point at a page (a
  print view's "Printed from /a/b.html"), those lines (JSON, :data:`MAX_POINTERS` at most).

A candidate is proposed by the content key, and by a line of the new page that names a kept page
(a print view without its page's header line "Part I. Tutorial" has another content key); the
drop needs the whole visible text all the same. The other way round needs the content key.

A page of nothing but its site's template (``fallback == "template"``: too few words of its own
beside what the whole site repeats) is never indexed, so even its exact copy under another URL
(a mirror, a tracking parameter) is not found by the index; the same evidence, stored for each
such page that is kept, finds its copies by the same rule.

A candidate counts only while the index still holds the fingerprint its evidence was stored with
(for a template-only page, which the index does not hold: while its record's last fingerprint is
that one; a page refetched with other content, removed or dropped since is no candidate). The evidence of a
URL that is removed or pruned stays, unused (8 bytes per visible line of a short page); ``reset``
deletes it with the rest of the index.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote, urljoin, urlsplit

import numpy as np

from scrapy_simhash.fingerprint.templates import line_key, line_keys
from scrapy_simhash.text.features import normalize
from scrapy_simhash.text.region import POINTER_RE, is_pointer

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy_simhash.store.index import Match, SimhashIndex

#: URLs kept per content key (the newest); more short pages with one content key are rare (an
#: identical page under many URLs matches by its exact hash before this).
MAX_URLS = 8
#: Visible lines of a short page whose keys are stored at most (8 bytes each).
MAX_LINES = 4096
#: Lines that point at a page stored per kept short page at most (the first).
MAX_POINTERS = 8

_KEY_PREFIX = "short-key:"
_PAGE_PREFIX = "short-page:"
_POINTERS_PREFIX = "short-pointers:"
_FP_BYTES = 16  # 64- and 128-bit fingerprints
# What may not stand before or after a named path: characters that would make it part of a longer one.
_PATH_START = r"(?<![\w/.%~-])"
_PATH_END = r"(?![\w/.%~-])"


def _key_name(content_key: int) -> str:
    return f"{_KEY_PREFIX}{content_key:x}"


def _page_name(url: str, prefix: str = _PAGE_PREFIX) -> str:
    return prefix + hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _lines(visible: str) -> list[str]:
    return [line for line in visible.split("\n") if line.strip()]


def _encode(url: str, fp: int, keys: list[int]) -> bytes:
    raw = url.encode("utf-8", "surrogatepass")
    head = len(raw).to_bytes(2, "little") + raw + fp.to_bytes(_FP_BYTES, "little")
    return head + np.array(sorted(set(keys)), dtype="<u8").tobytes()


def _decode(blob: bytes) -> tuple[str, int, np.ndarray] | None:
    """``(url, fp, sorted line keys)``, ``None`` for bytes that are no evidence."""
    try:
        n = int.from_bytes(blob[:2], "little")
        url = blob[2 : 2 + n].decode("utf-8", "surrogatepass")
        at = 2 + n + _FP_BYTES
        fp = int.from_bytes(blob[2 + n : at], "little")
        if len(blob) < at or (len(blob) - at) % 8:
            return None
        return url, fp, np.frombuffer(blob, dtype="<u8", offset=at)
    except (UnicodeDecodeError, ValueError):
        return None


def names_page(line: str, url: str) -> bool:
    """Whether ``line`` names ``url``: its whole URL, or its path when that is more than "/", as a
    whole (not the start of a longer path), compared in normalised, unquoted form."""
    low = normalize(unquote(line))
    path = normalize(unquote(urlsplit(url).path))
    whole = normalize(unquote(url))
    return re.search(re.escape(whole) + _PATH_END, low) is not None or (
        len(path) > 1 and re.search(_PATH_START + re.escape(path) + _PATH_END, low) is not None
    )


def is_copy(lines: list[str], kept_url: str, kept_keys: np.ndarray) -> bool:
    """Whether every one of ``lines`` (a new page's visible lines) is a line of the kept page
    (``kept_keys``: its sorted line keys) or names the kept page."""
    if not lines:
        return False
    for line in lines:
        key = line_key(line)
        at = int(np.searchsorted(kept_keys, np.uint64(key)))
        if at < len(kept_keys) and int(kept_keys[at]) == key:
            continue
        if not names_page(line, kept_url):
            return False
    return True


def named_urls(lines: list[str], base: str) -> list[str]:
    """The URLs that ``lines`` point at (a line that names a URL or a path and at most three words
    beside it: "Printed from /a/b.html"), paths resolved against ``base``, without fragments."""
    found: list[str] = []
    for line in lines:
        if not is_pointer(line):
            continue
        for match in POINTER_RE.finditer(line):
            url = urljoin(base, match.group().rstrip(".,;:)]}>'\"")).split("#", 1)[0]
            if url.startswith(("http://", "https://")) and url not in found:
                found.append(url)
    return found[:MAX_POINTERS]


def is_print_of(lines: list[str], url: str, kept_keys: np.ndarray, pointers: list[str]) -> bool:
    """Whether the kept page (``kept_keys``: its sorted line keys; ``pointers``: its lines that
    point at a page) is a copy of the new page ``url`` (``lines``: its visible lines): one of its
    lines names ``url``, and every other line of it is one of ``lines``."""
    kept = {int(key) for key in kept_keys}
    named = {key for line, key in zip(pointers, line_keys(pointers)) if key in kept and names_page(line, url)}
    return bool(named and lines) and kept <= named.union(line_keys(lines))


class Evidence(NamedTuple):
    """What a kept short or template-only page stores so that its copies are found
    (:func:`remember`): its URL, fingerprint, content key and visible lines, and the URLs kept
    with that content key (as read)."""

    key: str
    fp: int
    content_key: int
    lines: list[str]
    urls: list[str]


def find_copy(
    index: SimhashIndex,
    key: str,
    fp: int,
    content_key: int,
    visible: str,
    current: Callable[[str], int | None] | None = None,
) -> tuple[Match | None, Evidence | None]:
    """The kept page that ``key`` (a short page with fingerprint ``fp``, not found by the index, or
    a page of nothing but its site's template, which is never indexed) is a copy of, or ``None``
    with the evidence to store if ``key`` is kept (:func:`remember`, in the same batch: the
    caller writes it with the page's record). Reads only; call inside the index's batch.
    ``current``: a kept URL's fingerprint now (default: the one the index holds; for template
    pages, their record's)."""
    from scrapy_simhash.store.index import Match

    current = current or index.get

    name = _key_name(content_key)
    raw = index.get_aux(name)
    urls = _urls(raw)
    lines = _lines(visible)
    candidates = [u for u in urls if u != key]
    candidates += [u for u in named_urls(lines, key) if u != key and u not in candidates]
    if candidates and lines:
        evidence = index.get_aux_many([_page_name(u) for u in candidates])
        valid = []  # (url, fingerprint, line keys) of the candidates still kept with their evidence
        for url, blob in zip(candidates, evidence):
            got = None if blob is None else _decode(blob)
            if got is None or got[0] != url:
                continue
            kept_fp = current(url)
            if kept_fp is None or kept_fp != got[1]:
                continue  # refetched with other content, removed or dropped since
            if is_copy(lines, url, got[2]):
                return Match(url, kept_fp, (fp ^ kept_fp).bit_count()), None
            if url in urls:  # the same content-like text: the other way round may hold
                valid.append((url, kept_fp, got[2]))
        # The other way round: a kept print view of this page (read only when no copy was found).
        blobs = index.get_aux_many([_page_name(u, _POINTERS_PREFIX) for u, _, _ in valid]) if valid else []
        for (url, kept_fp, keys), blob in zip(valid, blobs):
            if blob is not None and is_print_of(lines, key, keys, _urls(blob)):
                return Match(url, kept_fp, (fp ^ kept_fp).bit_count()), None
    return None, Evidence(key, fp, content_key, lines, urls)


def remember(index: SimhashIndex, evidence: Evidence) -> None:
    """Store a kept page's evidence and add it to its content key's URLs (``evidence.urls``, as
    read); nothing for a page of more than :data:`MAX_LINES` lines."""
    key, fp, content_key, lines, urls = evidence
    if len(lines) > MAX_LINES:
        return
    kept = [u for u in urls if u != key][-(MAX_URLS - 1) :]
    kept.append(key)
    blobs = {
        _key_name(content_key): json.dumps(kept).encode(),
        _page_name(key): _encode(key, fp, line_keys(list(lines))),
    }
    pointers = [line for line in lines if is_pointer(line)][:MAX_POINTERS]
    if pointers:
        blobs[_page_name(key, _POINTERS_PREFIX)] = json.dumps(pointers).encode()
    index.put_aux_many(blobs)


def _urls(raw: bytes | None) -> list[str]:
    if raw is None:
        return []
    try:
        urls = json.loads(raw)
    except ValueError:
        return []
    return [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else []
