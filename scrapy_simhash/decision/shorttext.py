"""Near copies of short texts that their fingerprints put beyond ``max_distance``: the candidates
of a MinHash LSH over their character 5-grams, and the resemblance rule that decides on them.

On a short text (at most :data:`SHORT_CHARS` characters: an item of a few sentences) one edit moves
more of the 64 bits than ``max_distance`` allows. So a short text is also filed by the LSH bands
of its character 5-grams (letters and digits only, so that changed punctuation is no change; 8
bands of 4 rows: a pair whose 5-gram sets have a Jaccard similarity of 0.7 shares a band with
probability 0.89, of 0.8 with 0.99). A kept short text that shares a band is a candidate when at
least half their signatures agree (:data:`MIN_ALIKE`), and it resembles the new text when their
texts share at least :data:`RESEMBLANCE` of their characters (``1 - (a + b) / (chars + kept
chars)``, ``a`` and ``b`` what each adds to the other: :func:`~scrapy_simhash.fingerprint.novelty.added_to`,
both ways). Used by :meth:`~scrapy_simhash.decision.tracker.ChangeTracker.deduplicate` (the item
pipeline and the ``dedup`` command).

What is stored, in the index's aux blobs, for each kept short text: ``lsh-band:<band key, hex>``,
the keys of the kept short texts in that band (newline-separated, the :data:`MAX_KEYS` latest), and
``lsh-text:<blake2b of the key, hex>``, its fingerprint, signature and text. A candidate counts
only while the index holds the fingerprint it was stored with.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from scrapy_simhash.fingerprint.novelty import added_to, gram_text

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_simhash.store.index import SimhashIndex

#: Texts (title and fields, newline-joined) of at most this many characters are short: also filed
#: by the LSH of their character 5-grams.
SHORT_CHARS = 1000
#: The share of both texts' own characters that must lie in common runs for an LSH candidate to
#: resemble the new text (copies in ``benchmarks/speed/bench_dedup.py``'s corpus: 0.913 or more for
#: 99%; texts of different documents that share a sentence: 0.75 or less for 99%).
RESEMBLANCE = 0.8
#: An LSH candidate is measured only when at least this many of the 32 signature values agree (an
#: estimated Jaccard similarity of 0.5: a pair at 0.7 falls short with a probability of 0.005,
#: one at 0.8 of 3e-5): texts that share a band by one sentence are not measured.
MIN_ALIKE = 16
#: Keys kept per band (the latest).
MAX_KEYS = 64

_GRAM, _BANDS, _ROWS = 5, 8, 4
_BAND_PREFIX = "lsh-band:"
_TEXT_PREFIX = "lsh-text:"
_FP_BYTES = 16  # 64- and 128-bit fingerprints
_SIG_BYTES = 4 * _BANDS * _ROWS

#: Code points (below U+10000) that are no letter, mark or digit: left out of the 5-grams.
_SEPARATOR = np.array([unicodedata.category(chr(c))[0] in "PSZC" for c in range(1 << 16)], dtype=bool)
_rng = np.random.default_rng(0x5EED)  # fixed: the same permutations in every process
_MUL = (_rng.integers(0, 1 << 32, _BANDS * _ROWS, dtype=np.uint64) | np.uint64(1)).astype(np.uint32)[:, None]
_ADD = _rng.integers(0, 1 << 32, _BANDS * _ROWS, dtype=np.uint64).astype(np.uint32)[:, None]
_BAND_SALT = _rng.integers(0, 1 << 63, _BANDS, dtype=np.uint64)
_C1 = np.uint64(0x9E3779B97F4A7C15)
_S31, _S32 = np.uint64(31), np.uint64(32)


class ShortText(NamedTuple):
    """A short text and its MinHash signature (:func:`short_text`)."""

    text: str
    sig: bytes


class Resembled(NamedTuple):
    """A kept short text that a new one resembles: its ``key``, its fingerprint ``fp`` and what the
    new text adds to it (``adds``, characters by weight)."""

    key: str
    fp: int
    adds: float


def signature(text: str) -> bytes | None:
    """The MinHash signature of a short text: the least of 32 universal hashes of its lower-cased
    character 5-grams, letters and digits only (32 bits each). ``None``: the text is longer than
    :data:`SHORT_CHARS`, or has fewer than 5 such characters."""
    if len(text) > SHORT_CHARS:
        return None
    cps = np.frombuffer(text.lower().encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    cps = cps[~_SEPARATOR[np.minimum(cps, 0xFFFF)]].astype(np.uint64)
    n = len(cps) - _GRAM + 1
    if n < 1:
        return None
    h = cps[:n] * _C1
    for j in range(1, _GRAM):
        h = (h + cps[j : j + n]) * _C1  # wrapping uint64 arithmetic
    grams = ((h ^ (h >> _S31)) >> _S32).astype(np.uint32)
    return cast("bytes | None", (_MUL * grams + _ADD).min(axis=1).tobytes())


def short_text(text: str) -> ShortText | None:
    """``text`` with its signature, ``None`` when it is no short text (:func:`signature`)."""
    sig = signature(text)
    return None if sig is None else ShortText(text, sig)


def bands(sig: bytes) -> list[int]:
    """The LSH band keys of a signature: its values, 4 to a band (two to a 64-bit word)."""
    words = np.frombuffer(sig, dtype=np.uint64).reshape(_BANDS, _ROWS // 2)
    return (words[:, 0] * _C1 ^ words[:, 1] ^ _BAND_SALT).tolist()  # type: ignore[no-any-return]


def alike(sig: bytes, other: bytes) -> int:
    """How many of two signatures' values are equal (their 5-gram sets' Jaccard similarity,
    estimated, times 32)."""
    return int(np.count_nonzero(np.frombuffer(sig, dtype=np.uint32) == np.frombuffer(other, dtype=np.uint32)))


def resembles(text: str, kept: str) -> float | None:
    """What ``text`` adds to ``kept`` (characters by weight) when the two share at least
    :data:`RESEMBLANCE` of their characters, else ``None``."""
    mine, theirs = gram_text(text), gram_text(kept)
    differ = (1 - RESEMBLANCE) * (len(mine) + len(theirs))  # at most, to resemble
    adds = _added(mine, theirs)
    if adds > differ or adds + _added(theirs, mine) > differ:
        return None
    return adds


def added(text: str, kept: str) -> float:
    """What ``text`` adds to ``kept`` (characters by weight, each distinct line once): what
    :meth:`~scrapy_simhash.fingerprint.novelty.OwnText.added` counts against ``kept``'s exact sketch."""
    return _added(gram_text(text), gram_text(kept))


def _added(mine: str, theirs: str) -> float:
    """What the normalised ``mine`` adds to the normalised ``theirs`` (each distinct line once)."""
    if "\n" in mine:
        mine = "\n".join(dict.fromkeys(mine.split("\n")))
    return added_to(mine, theirs) if mine else 0.0


def _text_name(key: str) -> str:
    return _TEXT_PREFIX + hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _keys(raw: bytes | None) -> list[str]:
    """The keys of a band's blob (newline-separated UTF-8)."""
    if not raw:
        return []
    return raw.decode("utf-8", "surrogatepass").split("\n")


def _decode(blob: bytes | None) -> tuple[int, bytes, str] | None:
    """``(fp, signature, text)`` of a stored short text, ``None`` for bytes that are none."""
    if blob is None or len(blob) < _FP_BYTES + _SIG_BYTES:
        return None
    try:
        text = blob[_FP_BYTES + _SIG_BYTES :].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return int.from_bytes(blob[:_FP_BYTES], "little"), blob[_FP_BYTES : _FP_BYTES + _SIG_BYTES], text


class Lookup:
    """One short text's bands in an index (read once, inside the index's decision):
    :meth:`resembling` finds the kept texts it resembles, :meth:`remember` files it."""

    __slots__ = ("_index", "_key", "_names", "_raws", "_short")

    def __init__(self, index: SimhashIndex, key: str, short: ShortText) -> None:
        self._index, self._key, self._short = index, key, short
        self._names = [f"{_BAND_PREFIX}{band:x}" for band in bands(short.sig)]
        self._raws = index.get_aux_many(self._names)

    def resembling(self) -> Iterator[Resembled]:
        """The kept short texts (other keys) that this one resembles, by key."""
        key, short = self._key, self._short
        found = sorted({k for raw in self._raws if raw for k in _keys(raw)} - {key})
        if not found:
            return
        index = self._index
        sig = np.frombuffer(short.sig, dtype=np.uint32)
        for other, blob in zip(found, index.get_aux_many([_text_name(k) for k in found])):
            if blob is None or len(blob) < _FP_BYTES + _SIG_BYTES:
                continue  # no short text stored
            theirs = np.frombuffer(blob, dtype=np.uint32, count=_BANDS * _ROWS, offset=_FP_BYTES)
            if np.count_nonzero(sig == theirs) < MIN_ALIKE:
                continue  # too unlike to measure
            stored = _decode(blob)
            if stored is None:
                continue
            if index.get(other) != stored[0]:
                continue  # refetched with other content, removed or dropped since
            adds = resembles(short.text, stored[2])
            if adds is not None:
                yield Resembled(other, stored[0], adds)

    def remember(self, fp: int) -> None:
        """File the text under its key in its bands (the :data:`MAX_KEYS` latest keys of each
        stay) and store its fingerprint, signature and text; nothing for a key with a line break."""
        key = self._key
        if "\n" in key:
            return
        raw_key = key.encode("utf-8", "surrogatepass")
        blobs: dict[str, bytes | None] = {}
        for name, raw in zip(self._names, self._raws):
            if not raw:
                blobs[name] = raw_key
            elif raw.count(b"\n") < MAX_KEYS - 1 and b"\n" + raw_key + b"\n" not in b"\n" + raw + b"\n":
                blobs[name] = raw + b"\n" + raw_key  # room, and not there yet (most bands)
            else:
                keys = [k for k in _keys(raw) if k != key][-(MAX_KEYS - 1) :]
                keys.append(key)
                blobs[name] = "\n".join(keys).encode("utf-8", "surrogatepass")
        short = self._short
        text = short.text.encode("utf-8", "surrogatepass")
        blobs[_text_name(key)] = fp.to_bytes(_FP_BYTES, "little") + short.sig + text
        self._index.put_aux_many(blobs)
