"""The native record codec and schedule numbers (``native/src/decision.rs``) against the Python
code: the same bytes, records, numbers (to the bit, with their types) and decisions, or no answer
(``None``: the Python code runs). Skipped with a message when the native core is not built; never
in CI (``CI`` set: a missing native core fails)."""

from __future__ import annotations

import hashlib
import math
import os
import random
import struct
from dataclasses import replace

import pytest
from helpers.states import _random_states  # states as policies leave them, and as read back

from scrapy_simhash import _native, recrawl
from scrapy_simhash.recrawl import ChangeTracker, PageRecord, _Schedule, _schedule_of
from scrapy_simhash.schedule import DAY, FreshnessPolicy, ScheduleState
from scrapy_simhash.schedule import state as schedule_state
from scrapy_simhash.store.index import SimhashIndex

NATIVE = _native.module()
if NATIVE is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI runs the native tests: the native core must be built with decision.rs")
    pytest.skip(
        "the native core is not built, or built before decision.rs (./dev test builds it where cargo exists)",
        allow_module_level=True,
    )


def _bits(values):
    """Values with floats as their bits, so that 0.0 and -0.0 (and types) differ."""
    return [(type(v), struct.pack("<d", v)) if type(v) is float else (type(v), v) for v in values]


def _numbers_fields(x: float) -> tuple:
    """The fields of ScheduleState.numbers with ``x`` in every float slot and recent."""
    return (x, x, x, x, x, x, 1, 0, x, x, x, x, ((x, x),))


def _hard_floats(rng: random.Random) -> list[float]:
    values = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 0.0005, 0.0015, 0.0625, 2.675, 1.0005]
    values += [k / 2**s for k in range(-40, 41) for s in (1, 3, 4, 5, 7, 9, 11, 13)]  # ties at 3 and 4 decimals
    values += [m / 2000 for m in range(-200, 200, 7)] + [m / 20000 for m in range(-200, 200, 7)]
    values += [k * 2.0**-s for s in range(1, 45) for k in (1, 3, 5, 7, 9, 125, 625, 3125)]  # ties at 6 digits
    values += [float(v) for v in range(1_234_505, 1_234_705, 10)] + [12_345_650.0, 0.5e-6, 1.5e-7]
    values += [3.99e12, 4e11, 3.9999e11, 4.0001e11, 4e12, 1e13, 9e15, 2.0**53, -(2.0**52) - 0.5]
    for _ in range(10_000):
        x = rng.choice(
            (
                rng.uniform(0, 2e9),
                rng.uniform(-100, 100),
                rng.uniform(0, 1e13),
                rng.expovariate(1e-5),
                math.ldexp(rng.random(), rng.randrange(-1080, 60)),
            )
        )
        values += [x, -x, round(x, 3), round(x, 4), round(x, 3) + 1e-7, math.nextafter(round(x, 3), math.inf)]
        values.append(math.ldexp(rng.getrandbits(53) | 1, rng.randrange(-60, -1)))  # exact binary fractions
    return values


def test_rounding_is_cpythons_round():
    rng = random.Random(1)
    answered = 0
    for x in _hard_floats(rng) + [math.inf, -math.inf, math.nan]:
        numbers = NATIVE.schedule_numbers(_numbers_fields(x))
        if numbers is None:
            assert not math.isfinite(x) or abs(x) * 10_000 >= 4e15  # only where exact arithmetic ends
            continue
        answered += 1
        three, four = round(x, 3), round(x, 4)
        assert _bits(numbers[:6]) == _bits([three] * 4 + [float(f"{x:.6g}"), three]), x
        assert _bits(numbers[8:12]) == _bits([four, three, three, three]), x
        assert _bits(numbers[12]) == _bits([three, three]), x
    assert answered > 50_000


def test_schedule_numbers_are_pythons():
    states = _random_states(600, 2)
    for state in states:
        numbers = state.native_numbers()
        assert numbers is not None
        assert _bits(numbers[:12]) == _bits(state._numbers()[:12])
        assert _bits(numbers[12]) == _bits(state._numbers()[12])
    # Not format 2's types: no answer (the Python code keeps each number's type).
    for odd in ({"last_fetch": 1_700_000_000}, {"fetches": 2.0}, {"changes": True}, {"recent": ((1.0, 2.0, 3.0),)}):
        state = replace(states[0], **odd)
        assert state.native_numbers() is None
        assert state.numbers() == state._numbers()


def _random_record(rng: random.Random, states: list[ScheduleState]) -> PageRecord:
    def text():
        return rng.choice((None, None, "", "https://example.com/a?b=1", 'W/"etag-ü"', "日本語のページ", "x" * 300))

    def time_():
        if rng.random() < 0.02:
            return 1e13  # beyond the native rounding's exact range: Python's
        return rng.choice((1_700_000_000.0 + rng.uniform(0, 1e7), round(rng.uniform(0, 2e9), 3), 0.0, 3.0))

    n = rng.choice((0, 1, 2, 8, 8, 20))
    history = tuple(
        (
            rng.choice((rng.getrandbits(64), 0, 2**64 - 1, rng.getrandbits(20))),
            rng.choice((None, 0, 3, 40, 2**31 - 1)) if i < n - 1 else None,
        )
        for i in range(n)
    )
    state = rng.choice(states)
    due, sched = _schedule_of(state) if rng.random() < 0.7 else (None, None)
    return PageRecord(
        first_seen=time_(),
        last_fetched=time_(),
        last_changed=time_(),
        fetch_count=rng.choice((1, 7, 2**40)),
        change_count=rng.choice((0, 3)),
        history=history,
        duplicate_of=text(),
        next_due=rng.choice((due, time_())) if due is not None else rng.choice((None, time_())),
        schedule=sched,
        etag=text(),
        last_modified=text(),
        gone=rng.random() < 0.2,
        moved_to=text(),
        sketch=rng.choice((None, rng.randbytes(128), rng.randbytes(127), b"")),
        visible_key=rng.choice((None, rng.getrandbits(64), 0, 2**64 - 1)),
    )


def _odd_records(record: PageRecord) -> list[PageRecord]:
    """Records the native codec leaves to Python: format 1, 128-bit fingerprints, ints for floats."""
    return [
        replace(record, history=((2**100, None), (5, 3))),
        replace(record, history=((5, -1),)),
        replace(record, history=((5, 2**40),)),
        replace(record, history=((-5, None),)),
        replace(record, first_seen=1_700_000_000),
        replace(record, fetch_count=2**70),
        replace(record, next_due=1_700_000_000),
        replace(record, schedule={"x": 1}),
        replace(record, gone=1),
        replace(record, sketch=bytearray(128)),
        replace(record, etag="\ud800"),
        replace(record, visible_key=2**64),
        replace(record, visible_key=-1),
        replace(record, visible_key=True),
    ]


def test_record_codec_is_pythons(monkeypatch):
    rng = random.Random(3)
    states = _random_states(200, 4)
    records = [_random_record(rng, states) for _ in range(3000)]
    records += _odd_records(records[0]) + _odd_records(records[1])

    def python(fn):
        with monkeypatch.context() as m:
            m.setattr(recrawl, "_NATIVE", None)
            m.setattr(schedule_state, "_NATIVE", None)
            try:
                return fn()
            except Exception as exc:  # noqa: BLE001 - compared as they are
                return type(exc)

    packed = 0
    for record in records:
        expected = python(record.to_bytes)
        fields = recrawl._VALUES(record)
        numbers = record.schedule.numbers if type(record.schedule) is _Schedule else None
        native = NATIVE.pack_record(fields, numbers) if record.schedule is None or numbers else None
        if native is not None:
            packed += 1
            assert native == expected, record
        try:
            got = record.to_bytes()
        except Exception as exc:  # noqa: BLE001
            got = type(exc)
        assert got == expected
        if type(expected) is not bytes:
            continue
        reference = python(lambda raw=expected: PageRecord.from_bytes(raw))
        values = NATIVE.unpack_record(expected)
        if expected[:1] in (b"\x02", b"\x03") and max((fp for fp, _ in record.history), default=0) < 2**64:
            assert values is not None
        back = PageRecord.from_bytes(expected)
        assert back == reference
        assert _bits(recrawl._VALUES(back)) == _bits(recrawl._VALUES(reference))
        if type(back.schedule) is _Schedule:
            assert _bits(back.schedule.numbers[:12]) == _bits(reference.schedule.numbers[:12])
            assert _bits(back.schedule.numbers[12]) == _bits(reference.schedule.numbers[12])
    assert packed > 2500


def test_damaged_records_are_left_to_python(monkeypatch):
    """Cut, padded or flipped records: the native reader answers the Python reader's record or
    nothing (and the Python reader then raises its own error)."""
    rng = random.Random(5)
    states = _random_states(50, 6)
    raws = [r.to_bytes() for r in (_random_record(rng, states) for _ in range(300))]
    raws = [raw for raw in raws if raw[:1] in (b"\x02", b"\x03")]
    for raw in raws:
        damaged = [raw[:cut] for cut in range(0, len(raw), 7)] + [raw + b"\x00", raw[:1] + b"\x80" + raw[2:]]
        for _ in range(20):
            i = rng.randrange(len(raw))
            damaged.append(raw[:i] + bytes([raw[i] ^ (1 << rng.randrange(8))]) + raw[i + 1 :])
        for bad in damaged:
            values = NATIVE.unpack_record(bad)
            with monkeypatch.context() as m:
                m.setattr(recrawl, "_NATIVE", None)
                try:
                    reference = PageRecord.from_bytes(bad)
                except ValueError:
                    reference = None
            if values is not None:
                assert reference is not None, bad
                assert PageRecord.from_bytes(bad) == reference


def _decide(native: bool, monkeypatch) -> list:
    """A crawl's decisions over one memory index: every verdict, record's bytes and due time."""
    with monkeypatch.context() as m:
        if not native:
            m.setattr(recrawl, "_NATIVE", None)
            m.setattr(schedule_state, "_NATIVE", None)
        rng = random.Random(7)
        index = SimhashIndex()
        tracker = ChangeTracker(index, policy=FreshnessPolicy())
        base = [rng.getrandbits(64) for _ in range(60)]
        out = []
        now = 1_700_000_000.0
        for step in range(1500):
            i = rng.randrange(len(base))
            key = f"https://example.com/{i}" if rng.random() < 0.8 else f"https://mirror.example.net/{step}"
            fp = base[i] ^ (
                rng.getrandbits(64) if rng.random() < 0.1 else (1 << rng.randrange(64)) * (rng.random() < 0.3)
            )
            sketch = hashlib.shake_128(f"{i}-{fp}".encode()).digest(128)
            now += rng.uniform(0, 3 * DAY)
            verdict = tracker.observe(key, fp, now, sketch=sketch, validators=(rng.choice((None, "e1")), None))
            out.append((verdict.verdict, verdict.distance, verdict.duplicate_of, index.get_record(key)))
        out.append(index.records_due(now + 365 * DAY, limit=10_000))
        return out


def test_decisions_are_the_same_with_and_without_native(monkeypatch):
    assert _decide(True, monkeypatch) == _decide(False, monkeypatch)


def _state_bits(state):
    fields = dict(vars(state))
    recent = fields.pop("recent")
    return list(fields), _bits(fields.values()), [_bits(pair) for pair in recent]


def test_schedule_state_is_pythons(monkeypatch):
    record = PageRecord(first_seen=1.0, last_fetched=2.0, last_changed=1.0, history=((5, None),))
    for state in _random_states(400, 8):
        _, numbers = _schedule_of(state)
        with_schedule = replace(record, schedule=numbers)
        native = recrawl._state(with_schedule)
        with monkeypatch.context() as m:
            m.setattr(recrawl, "_NATIVE", None)
            python = recrawl._state(with_schedule)
        assert native == python and _state_bits(native) == _state_bits(python)
    # Invalid or not of format 2's types: no answer; the Python code says None or reads it its way.
    numbers = _schedule_of(_random_states(1, 9)[0])[1].numbers
    for i, value in (
        (2, 0.0),
        (2, -1.0),
        (0, math.nan),
        (0, math.inf),
        (4, -1e-9),
        (8, -0.5),
        (10, math.inf),
        (6, 2.0),
    ):
        bad = (*numbers[:i], value, *numbers[i + 1 :])
        assert NATIVE.schedule_state(bad) is None
    assert NATIVE.schedule_state((*numbers[:12], (1.0, 2.0, 3.0))) is None
    assert NATIVE.schedule_state((*numbers[:12], (1.0, 2))) is None
