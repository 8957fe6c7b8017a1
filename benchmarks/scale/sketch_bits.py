"""Could a record's change sketch (64 slots of 16 bits: 128 of a record's ~200 bytes) keep fewer
bits a slot at the same answers? The product's verdicts with the sketches compared at ``b`` bits a
slot (each slot's low ``b`` bits, a filled slot whose low bits are 0 read as 1: what a record of
``8 * b`` bytes would hold; 8 is what records keep: ``sketch.stored``), against 16 (whole sketches), on ``benchmarks/quality/keep_adds.py``'s pairs and
the revisions recrawled as one URL (``evidence_floor.py``'s sets), and the change sizes the
recrawl schedule weighs a change by (``record.change_size``) on the revisions.

    PYTHONPATH=. nice .venv/bin/python benchmarks/scale/sketch_bits.py [--quick] [--bits 12,10,8]

Printed for each ``b``: the record bytes it saves; the pairs dropped today and kept now and the
reverse (content lost), of them those to keep; the revisions called ``changed`` today and
``unchanged`` now (content lost) and the reverse; and the change size's mean and largest
difference to today's.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evidence_floor as ef
import numpy as np

from scrapy_simhash.fingerprint import sketch as sketch_module
from scrapy_simhash.fingerprint.sketch import SKETCH_BYTES, SLOTS
from scrapy_simhash.store import record, tracker

_ORIGINAL = sketch_module.sketch_similarity
_USERS = (sketch_module, tracker, record)


def reduced(bits: int):
    """``sketch.sketch_similarity`` of the sketches cut to their slots' low ``bits`` bits."""
    mask = np.uint16((1 << bits) - 1)

    def cut(raw: bytes) -> np.ndarray:
        x = np.frombuffer(raw, dtype="<u2")
        low = x & mask
        return np.where(x == 0, 0, np.where(low == 0, 1, low))

    def similarity(a: bytes, b: bytes) -> float:
        if len(a) != SKETCH_BYTES or len(b) != SKETCH_BYTES:
            raise ValueError(f"a sketch has {SKETCH_BYTES} bytes, got {len(a)} and {len(b)}")
        x, y = cut(a), cut(b)
        used = (x != 0) | (y != 0)
        n = int(used.sum())
        return float(((x == y) & used).sum()) / n if n else 1.0

    return similarity


@contextlib.contextmanager
def compared_at(bits: int) -> Iterator[None]:
    """Inside: records keep whole sketches (128 bytes) and every user of ``sketch.sketch_similarity``
    compares them at ``bits`` bits a slot (16: as before ``sketch.stored``)."""
    fn = reduced(bits)
    saved = [(module, dict(vars(module))) for module in _USERS]
    for module in _USERS:
        module.sketch_similarity = fn  # type: ignore[attr-defined]
    record.STORED_BYTES = SKETCH_BYTES  # type: ignore[misc]
    record.stored = tracker.stored = _whole  # type: ignore[assignment]
    try:
        yield
    finally:
        for module, names in saved:
            for name in ("similarity", "stored", "STORED_BYTES"):
                if name in names:
                    setattr(module, name, names[name])


def _whole(sketch: bytes) -> bytes:
    """A whole sketch, as it is."""
    if len(sketch) != SKETCH_BYTES:
        raise ValueError(f"a sketch has {SKETCH_BYTES} bytes, got {len(sketch)}")
    return sketch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="keep_adds' quick pair set, 300 revisions")
    parser.add_argument("--bits", default="12,10,8")
    args = parser.parse_args()
    t0 = time.perf_counter()
    decider, pairs, revisions = ef.pair_sets(args.quick)
    must = [p.group == "keep" or p.meta.get("added", 0) >= ef.bp.MUST_KEEP for p in pairs]
    must += [False for p in pairs if p.category == "adds_paragraph"]
    print(
        f"{len(pairs)} pairs (+ adds_paragraph reversed), {sum(must)} of them to keep; "
        f"{len(revisions)} revisions recrawled",
        file=sys.stderr,
    )

    def sizes() -> list[float]:
        return [record.change_size(a.sketch, b.sketch, (a.fp ^ b.fp).bit_count()) for a, b in revisions]

    with compared_at(16):
        base, base_sizes = ef.verdicts(decider, pairs, revisions), sizes()
    print(
        "| bits a slot | record bytes saved | drop->keep | keep->drop | keep->drop of those to keep "
        "| changed->unchanged | unchanged->changed | change size: mean, largest difference |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for bits in map(int, args.bits.split(",")):
        with compared_at(bits):
            got, got_sizes = ef.verdicts(decider, pairs, revisions), sizes()
        d0, d1, c0, c1 = base["dropped"], got["dropped"], base["changed"], got["changed"]
        diffs = [abs(x - y) for x, y in zip(base_sizes, got_sizes)]
        print(
            f"| {bits} | {SLOTS * (16 - bits) // 8} | {sum(a and not b for a, b in zip(d0, d1))} "
            f"| {sum(b and not a for a, b in zip(d0, d1))} | {sum(b and not a and m for a, b, m in zip(d0, d1, must))} "
            f"| {sum(a and not b for a, b in zip(c0, c1))} | {sum(b and not a for a, b in zip(c0, c1))} "
            f"| {statistics.fmean(diffs):.3f}, {max(diffs):.2f} |",
            flush=True,
        )
    print(f"\n{time.perf_counter() - t0:.0f} s in all", file=sys.stderr)


if __name__ == "__main__":
    main()
