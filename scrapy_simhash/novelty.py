"""What a page adds: the containment check that every near-duplicate drop passes first.

Resemblance finds the candidate (the SimHash index, the sketches); containment decides (Broder,
"On the resemblance and containment of documents", 1997). A page that resembles a kept page is
dropped only when its own text says next to nothing that the kept page's does not: a patch
release's page that repeats the base release's notes and adds its own, an API page of another
class, an article with one paragraph more are kept.

**Own text.** A page's content-like text (its title, the fingerprinted text and every other
content-like block: what the change sketch covers; chrome, link lists and bylines are not in it)
without the lines its site's learned template holds, normalised (:func:`normalize`): NFKC, lower
case, runs of spaces as one, every hexadecimal run of 7 or more characters with a digit in it (a
commit, a build id) as ``#`` and every number as ``0``. So a changed date, counter or hash adds
nothing.

**What a page adds**, in characters: the characters of its own text that lie in runs the kept
page's own text lacks (runs of character 8-grams that the kept page does not have). Counting new
8-grams alone would count about 7 for every seam of an edit (a typo fixed in ten places would
"add" 80 characters); so each position of the text is looked at twice: its 8-gram, and the
16-gram that starts there. An inserted run of ``n`` characters has ``n + 7`` new 8-grams and
``n + 15`` new 16-grams, a deletion 7 and 15: ``new8 - 7/8 (new16 - new8)`` is ``n``, or 0.

**The sketch** kept in each record (:meth:`OwnText.sketch`, at most ``5 + 3 *``
:data:`SKETCH_ANCHORS` bytes): the positions whose 8-gram hash is among the page's smallest (the
anchors, at most :data:`SKETCH_ANCHORS` distinct ones; a page with fewer keeps all of its
positions, and is then known exactly), each as 16 bits of its 8-gram's hash and one byte of the
16-gram's. A new page is
compared at its positions whose 8-gram hash falls in the same range, and the count is scaled by
the share of the hash space that the range covers (:meth:`OwnText.added`).

Deterministic across processes, machines and Python versions: code points and fixed 64-bit
arithmetic (numpy, wrapping), no ``hash()``.
"""

from __future__ import annotations

import re
import struct
import unicodedata
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["GRAM", "SKETCH_ANCHORS", "OwnText", "normalize"]

#: Characters per gram (and twice that for the seam test).
GRAM = 8
#: Distinct anchors a sketch keeps at most (3 bytes each).
SKETCH_ANCHORS = 800
_EXACT, _SAMPLED = 1, 2
_SPACE = 1 << 32

_HEX_RE = re.compile(r"(?<![0-9a-z])(?=[a-f]*[0-9])[0-9a-f]{7,}(?![0-9a-z])")
_DIGITS_RE = re.compile(r"\d+")
_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32, _S8 = (np.uint64(s) for s in (30, 27, 31, 32, 8))
_BYTE = np.uint64(0xFF)
_LOW16, _LOW24 = np.uint64(0xFFFF), np.uint64(0xFFFFFF)
_HEAD = struct.Struct("<BI")


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise (wrapping uint64 arithmetic)."""
    x = (x ^ (x >> _S30)) * _C2
    x = (x ^ (x >> _S27)) * _C3
    return x ^ (x >> _S31)


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (``np.unique``'s, by a sort: several times faster here)."""
    values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def normalize(text: str) -> str:
    """``text`` as its grams see it: NFKC, lower case, hexadecimal runs as ``#``, numbers as
    ``0``, every run of white space as one space."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    text = _DIGITS_RE.sub("0", _HEX_RE.sub("#", text))
    return " ".join(text.split())


class OwnText:
    """A page's own text, ready to be compared with kept pages' sketches and to give its own.

    ``lines``: its content-like lines; ``template``: those of them that are its site's template
    (left out)."""

    __slots__ = ("_codes", "_keys", "chars")

    def __init__(self, lines: Iterable[str], template: set[str] | frozenset[str] = frozenset()) -> None:
        norm = normalize("\n".join(line for line in lines if line and line not in template))
        #: Characters of the normalised own text.
        self.chars = len(norm)
        if not norm:
            self._keys = self._codes = np.empty(0, dtype=np.uint64)
            return
        cps = np.frombuffer(norm.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
        n = max(len(cps) - GRAM + 1, 1)
        cps = np.concatenate([cps, np.zeros(n + 2 * GRAM - 1 - len(cps), dtype=np.uint64)])
        h = np.zeros(n, dtype=np.uint64)
        for j in range(GRAM):
            h = _mix(h * _C1 + cps[j : j + n])
        h8 = h
        for j in range(GRAM, 2 * GRAM):
            h = _mix(h * _C1 + cps[j : j + n])
        keys = h8 >> _S32  # each position's 8-gram hash (32 bits)
        self._keys = keys
        self._codes = (keys << _S8) | (h & _BYTE)  # ... with one byte of its 16-gram's

    def sketch(self) -> bytes:
        """The sketch kept in the page's record (see the module's docstring): a format byte (1:
        every position, 2: the anchors), the largest 8-gram hash it covers (``uint32``), then the
        low 16 bits of each anchor's 8-gram hash (``uint16``) and its 16-gram byte, in ascending
        order of the codes."""
        codes = _distinct(self._codes)
        kind, top = _EXACT, _SPACE - 1
        if len(codes) > SKETCH_ANCHORS:
            # the anchors: every code of the smallest 8-gram hashes, whole groups only
            kind = _SAMPLED
            codes = codes[: np.searchsorted(codes, (codes[SKETCH_ANCHORS] >> _S8) << _S8)]
            top = int(codes[-1] >> _S8)
        return b"".join(
            (
                _HEAD.pack(kind, top),
                ((codes >> _S8) & _LOW16).astype("<u2").tobytes(),
                (codes & _BYTE).astype(np.uint8).tobytes(),
            )
        )

    def added(self, kept: bytes) -> float:
        """Characters of this text in runs that the page whose sketch is ``kept`` lacks: exact
        when ``kept`` holds every position of that page, else estimated from the positions in
        its anchors' range (an 8-gram is matched by 16 bits of its hash: a chance match hides at
        most about ``SKETCH_ANCHORS / 65536`` of the new positions). ``ValueError``: ``kept`` is
        no sketch."""
        n, rest = divmod(len(kept) - _HEAD.size, 3)
        if rest or n < 0 or kept[:1] not in (b"\x01", b"\x02"):
            raise ValueError(f"not a novelty sketch ({len(kept)} bytes)")
        kind, top = _HEAD.unpack_from(kept)
        keys = np.frombuffer(kept, dtype="<u2", count=n, offset=_HEAD.size).astype(np.uint64)
        codes = (keys << _S8) | np.frombuffer(kept, dtype=np.uint8, count=n, offset=_HEAD.size + 2 * n)
        mine_keys, mine_codes = self._keys, self._codes
        scale = 1.0
        if kind == _SAMPLED:
            inside = mine_keys <= top
            mine_keys, mine_codes = mine_keys[inside], mine_codes[inside]
            scale = _SPACE / (top + 1)
        mine_keys = mine_keys & _LOW16
        mine_codes = mine_codes & _LOW24
        new8 = len(mine_keys) - np.count_nonzero(np.isin(mine_keys, keys))
        new16 = len(mine_codes) - np.count_nonzero(np.isin(mine_codes, codes))
        return max(0.0, (new8 - (GRAM - 1) / GRAM * (new16 - new8)) * scale)
