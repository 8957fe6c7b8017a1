"""The change sketch: a 128-byte MinHash of a page's word 3-shingles, kept next to its fingerprint
(in 64 bytes: :func:`stored`).

The 64-bit SimHash of the main content is the near-duplicate key; as a change signal it is coarse
(an edit that deletes a third of a long page can move it by 0-3 bits) and it sees only the
fingerprinted part of the page. The sketch is a one-permutation MinHash (Li, Owen and Zhang,
2012) of the page's body text (its title, its fingerprinted text and ``extract.Document.rest``,
every other content-like block; chrome, link lists, bylines, dates and counters excluded; tokens
in that order) with :data:`SLOTS`
slots of 16 bits, whose slot-wise agreement estimates the Jaccard similarity of the two pages'
shingle sets. :class:`~scrapy_simhash.decision.tracker.ChangeTracker` calls a refetched page ``changed``
when its SimHash moved more than the change threshold OR the estimated similarity to the last
fetch's sketch is below ``SIMHASH_CHANGE_SIMILARITY``.

Deterministic across processes, machines and Python versions: tokens are the fingerprint's
(normalised, numbers as one placeholder, so a changed date or counter leaves the sketch as it
was), each hashed with 8 bytes of blake2b, shingles combined with fixed 64-bit arithmetic.
A native port has to reproduce :func:`sketch_tokens` bit for bit (its docstring says how).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard, cast

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "SHINGLE",
    "SKETCH_BYTES",
    "SLOTS",
    "STORED_BYTES",
    "filled",
    "is_sketch",
    "sketch_similarity",
    "sketch_tokens",
    "stored",
]

#: Words per shingle.
SHINGLE = 3
#: Slots (one-permutation bins); each holds 16 bits.
SLOTS = 64
SKETCH_BYTES = 2 * SLOTS
#: A sketch as a record keeps it (:func:`stored`): each slot's low 8 bits.
STORED_BYTES = SLOTS
_SLOT_SHIFT = np.uint64(64 - 6)  # the top 6 bits of a shingle's hash pick its slot (SLOTS = 64)
_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise (wrapping uint64 arithmetic)."""
    x = (x ^ (x >> _S30)) * _C2
    x = (x ^ (x >> _S27)) * _C3
    return cast("np.ndarray", x ^ (x >> _S31))


def sketch_tokens(digests: Sequence[bytes]) -> bytes:
    """The sketch of a token sequence given by its tokens' 8-byte digests (blake2b of the UTF-8
    token, little-endian), in text order.

    Shingle ``i`` (tokens ``i .. i+2``; one shingle of all tokens when there are fewer than 3,
    the terms of missing tokens left out): ``h = mix(mix(mix(t[i] * C1) + t[i+1]) * C1 + t[i+2])`` (``mix``: splitmix64's finaliser,
    ``C1 = 0x9E3779B97F4A7C15``, wrapping 64-bit arithmetic). Slot ``h >> 58``; a slot holds
    the low 16 bits of the smallest ``h`` that falls in it, as 1..65535 (0 is mapped to 1;
    0 = empty slot). 64 slots, little-endian uint16: 128 bytes."""
    n = len(digests)
    if n == 0:
        return bytes(SKETCH_BYTES)
    t = np.frombuffer(b"".join(digests), dtype="<u8")
    with np.errstate(over="ignore"):
        m = max(n - SHINGLE + 1, 1)
        h = _mix(t[:m] * _C1)
        if n > 1:
            h = _mix(h + t[1 : m + 1])
        if n > 2:
            h = _mix(h * _C1 + t[2 : m + 2])
    h = np.unique(h)  # sorted: each slot's smallest value comes first
    slots = (h >> _SLOT_SHIFT).astype(np.intp)
    first = np.searchsorted(slots, np.arange(SLOTS), side="left")
    present = first < slots.size
    present[present] = slots[first[present]] == np.arange(SLOTS)[present]
    out = np.zeros(SLOTS, dtype="<u2")
    low = (h[first[present]] & np.uint64(0xFFFF)).astype("<u2")
    out[present] = np.maximum(low, 1)
    return out.tobytes()


def stored(sketch: bytes) -> bytes:
    """The sketch as a record keeps it (:data:`STORED_BYTES`): each slot's low 8 bits, a filled
    slot whose low 8 bits are 0 as 1 (0 = empty); a stored sketch as it is. Sketches are compared
    at those 8 bits (:func:`sketch_similarity`): on the quality pairs and the revisions
    (``benchmarks/scale/sketch_bits.py``) no verdict differs from the 16 bits' and a change size
    by 0.06 on average. ``ValueError`` for a value that is not a sketch."""
    return _slots(sketch).tobytes()


def is_sketch(value: bytes | None) -> TypeGuard[bytes]:
    """Whether ``value`` is a change sketch, whole or stored."""
    return value is not None and len(value) in _LENGTHS


def _slots(sketch: bytes) -> np.ndarray:
    """The sketch's slots at 8 bits (:func:`stored`)."""
    if len(sketch) == STORED_BYTES:
        return np.frombuffer(sketch, dtype=np.uint8)
    if len(sketch) != SKETCH_BYTES:
        raise ValueError(f"a sketch has {SKETCH_BYTES} bytes ({STORED_BYTES} stored), got {len(sketch)}")
    x = np.frombuffer(sketch, dtype="<u2")
    low = (x & 0xFF).astype(np.uint8)
    low[(low == 0) & (x != 0)] = 1
    return low


_LENGTHS = frozenset((SKETCH_BYTES, STORED_BYTES))


def sketch_similarity(a: bytes, b: bytes) -> float:
    """The estimated Jaccard similarity of the shingle sets of two sketches (whole or
    :func:`stored`, compared at 8 bits a slot): the share of equal slots among the slots that
    either sketch fills (1.0 for two empty sketches). ``ValueError`` for a value that is not a
    sketch."""
    x, y = _slots(a), _slots(b)
    used = (x != 0) | (y != 0)
    n = int(used.sum())
    return float(((x == y) & used).sum()) / n if n else 1.0


def filled(sketch: bytes) -> int:
    """How many of the sketch's slots hold a shingle (0..64): the evidence a sketch rests on
    (``n`` distinct shingles fill about ``64 * (1 - exp(-n / 64))`` slots; 24 filled slots mean
    about 30 shingles, 32 about 44). ``ValueError`` for a value that is not a sketch."""
    if len(sketch) == STORED_BYTES:
        return STORED_BYTES - sketch.count(0)
    if len(sketch) == SKETCH_BYTES:  # a slot is filled where its stored byte is
        return int(np.count_nonzero(np.frombuffer(sketch, dtype="<u2")))
    return int(np.count_nonzero(_slots(sketch)))  # (its ValueError)
