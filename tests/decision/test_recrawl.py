"""recrawl.PageRecord: the per-URL record, its updates and its one byte format."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from helpers.states import random_states

from scrapy_simhash.decision.verdicts import CHANGED, UNCHANGED, VERDICTS, change_verdict
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.sketch import stored
from scrapy_simhash.store.record import FORMAT, PageRecord

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

FP1 = 0x0123_4567_89AB_CDEF
FP2 = 0x0123_4567_89AB_CDEE  # one bit from FP1
FP128 = (1 << 127) | 12345


def test_first_fetch():
    record = PageRecord.first(FP1, now=100.0)
    assert record.first_seen == record.last_fetched == record.last_changed == 100.0
    assert record.fetch_count == 1 and record.change_count == 0
    assert record.last_fp == FP1
    assert record.history == ((FP1, None),)
    assert record.duplicate_of is None


def test_update_unchanged_and_changed():
    record = PageRecord.first(FP1, now=100.0)
    unchanged = record.updated(FP2, 1, False, now=200.0)
    assert unchanged.last_fetched == 200.0 and unchanged.last_changed == 100.0
    assert unchanged.fetch_count == 2 and unchanged.change_count == 0
    assert unchanged.history == ((FP2, 1), (FP1, None))
    changed = unchanged.updated(FP128, 40, True, now=300.0, duplicate_of="https://a.example.com/")
    assert changed.last_changed == 300.0 and changed.change_count == 1 and changed.fetch_count == 3
    assert changed.last_fp == FP128
    assert changed.duplicate_of == "https://a.example.com/"
    assert record.fetch_count == 1  # records are immutable


def test_history_is_bounded_newest_first():
    record = PageRecord.first(0, now=0.0)
    for i in range(1, 20):
        record = record.updated(i, 1, False, now=float(i), history_size=5)
    assert [fp for fp, _ in record.history] == [19, 18, 17, 16, 15]
    assert record.fetch_count == 20
    with pytest.raises(ValueError, match="history_size"):
        record.updated(1, 1, False, history_size=0)


def _full_record() -> PageRecord:
    from scrapy_simhash.schedule import FreshnessPolicy

    policy = FreshnessPolicy()
    state = None
    record = PageRecord.first(FP128, now=1700000000.123456)
    for i in range(20):  # more fetches than the schedule's recent observations and the history
        now = 1700000000.123456 + 3600.7 * (i + 1)
        state = policy.observe(state, now, i % 3 == 0, 7 if i % 3 == 0 else 0)
        record = record.updated(FP1 ^ i, i % 5, i % 3 == 0, now=now, duplicate_of="https://例子.example.cn/新闻")
    assert state is not None
    schedule = state.to_dict()
    return replace(
        record, schedule=schedule, next_due=schedule["next_due"], etag='W/"x"', last_modified="Mon", moved_to="m"
    )


def _full_schedule() -> Mapping[str, Any]:
    """The schedule of ``_full_record()`` (which has one)."""
    schedule = _full_record().schedule
    assert schedule is not None
    return schedule


def test_round_trip():
    record = _full_record()
    raw = record.to_bytes()
    assert raw[0] == FORMAT
    assert "例子".encode() in raw  # UTF-8 texts
    back = PageRecord.from_bytes(raw)
    assert back == replace(
        record,
        first_seen=1700000000.123,
        last_fetched=round(record.last_fetched, 3),
        last_changed=round(record.last_changed, 3),
    )  # times to the millisecond
    gone = replace(PageRecord.first(FP1, now=1.0004), gone=True, history=((FP1, None), (FP2, 1)))
    back = PageRecord.from_bytes(gone.to_bytes())
    assert back.gone and back.history == gone.history and back.first_seen == 1.0  # to the millisecond
    assert back.schedule is None and back.next_due is None and back.etag is None
    wide = PageRecord.first(FP128, now=5.0).updated(FP1, 64, True, now=6.0)  # 128-bit fingerprints
    assert wide.to_bytes()[0] == FORMAT and PageRecord.from_bytes(wide.to_bytes()) == wide


_GOLDEN_SCHEDULE = {
    "last_fetch": 1700003600.824,
    "last_change": 1700000000.123,
    "interval": 86400.0,
    "next_due": 1700090000.824,
    "rate": 1.23457e-05,
    "size": 7.0,
    "fetches": 4,
    "changes": 2,
    "recent": [[3600.701, 0.0], [3600.7, 7.0]],
    "old": [0.95, 3600.5, 0.0],
    "probe": 0.0,
}
#: The bytes of the records below, as written when the format was introduced: the encoder must
#: keep writing them byte for byte, the decoder must keep reading them.
_GOLDEN = [
    (
        PageRecord(
            first_seen=1700000000.1234,
            last_fetched=1700003600.8245,
            last_changed=1700000000.1234,
            fetch_count=4,
            change_count=2,
            history=((FP1, 0), (FP1 ^ 7, 3), (FP1 ^ 1, None)),
            duplicate_of="https://例子.example.cn/新闻",
            next_due=1700090000.824,
            schedule=_GOLDEN_SCHEDULE,
            etag='W/"x"',
            last_modified="Mon",
        ),
        (
            "075e00d887adf9e78b03f093de0d000804060123456789abcdef0123456789abcde80123456789abcdee010400f8bfcb"
            "c9022068747470733a2f2fe4be8be5ad902e6578616d706c652e636e2fe696b0e997bb05572f227822034d6f6e000002"
            "040080c0cbc902000161204f37c0b503b03ba087de0d0000e893de0d00e093de0dc0b503"
        ),
    ),
    (
        PageRecord(
            first_seen=1.0,
            last_fetched=2.0,
            last_changed=1.0,
            fetch_count=2,
            history=((FP128, 64), (FP1, None)),
            gone=True,
        ),
        "070108c03ec03e000400048000000000000000000000000000303900000000000000000123456789abcdef4100",
    ),
    (
        PageRecord(first_seen=5.0, last_fetched=5.0, last_changed=5.0, moved_to="https://b.example.com/"),
        "072000c0b80200000200001668747470733a2f2f622e6578616d706c652e636f6d2f",
    ),
]


@pytest.mark.parametrize(("record", "raw"), _GOLDEN)
def test_the_format_bytes_are_stable(record, raw):
    assert record.to_bytes().hex() == raw
    back = PageRecord.from_bytes(bytes.fromhex(raw))
    times = {name: round(getattr(record, name), 3) for name in ("first_seen", "last_fetched", "last_changed")}
    assert back == replace(record, **times)  # times to the millisecond


@pytest.mark.parametrize(
    "changes",
    [
        {"schedule": {"interval": 5}},  # a schedule of another form
        {"schedule": {**_full_schedule(), "rate": 1}},  # an int where ScheduleState writes a float
    ],
)
def test_a_schedule_of_another_form_is_kept_as_json(changes):
    record = replace(_full_record(), **changes)
    back = PageRecord.from_bytes(record.to_bytes())
    times = {name: round(getattr(record, name), 3) for name in ("first_seen", "last_fetched", "last_changed")}
    assert back == replace(record, **times)
    assert json.dumps(back.schedule) == json.dumps(record.schedule)  # the types too


@pytest.mark.parametrize(
    "changes", [{"fetch_count": 1 << 70}, {"history": ((1 << 130, None),)}, {"history": ((FP1, -1),)}]
)
def test_a_record_the_format_cannot_hold_is_a_value_error(changes):
    with pytest.raises(ValueError, match="this record cannot be stored"):
        replace(_full_record(), **changes).to_bytes()


@pytest.mark.parametrize("first", [b"\x01", b"\x02", b"\x03", b"\x04", b"\x05", b"{"])
def test_a_record_of_an_earlier_format_is_not_read(first):
    raw = first + PageRecord.first(FP1, now=1.0).to_bytes()[1:]
    with pytest.raises(ValueError, match=f"not a page record of format {FORMAT}"):
        PageRecord.from_bytes(raw)


@pytest.mark.parametrize(
    "value",
    [0.1234567, 1 / 3, float("nan"), float("inf"), -0.0, 1e300, 5e-324, 999999999999.999, 2e12, -7.25, 1.23457e-05],
)
def test_every_float_of_a_schedule_reads_back_as_it_was(value):
    """Whole milliseconds, 6 significant digits or neither: each number reads back bit for bit."""
    base = _full_schedule()
    for name in ("last_fetch", "interval", "rate", "probe"):
        schedule = {**base, name: value, "recent": [[value, 0.0]], "old": [value, 0.0, 1.0]}
        back = PageRecord.from_bytes(replace(_full_record(), schedule=schedule).to_bytes()).schedule
        assert back is not None and type(back).__name__ == "Schedule"  # packed as numbers, not JSON
        for key in (name, "recent", "old"):
            assert repr(back[key]) == repr(schedule[key]), (name, key)


def test_a_record_costs_its_sketch_and_a_few_bytes_more():
    """The record of a page fetched once with a schedule, a validator, a visible key and a change
    sketch: the sketch (64 bytes, at 8 bits a slot), the fingerprint (8) and the visible key (8), then under 50."""
    from scrapy_simhash.schedule import ScheduleState
    from scrapy_simhash.store.record import schedule_of

    state = ScheduleState(last_fetch=1.7e9 + 0.5, last_change=1.7e9 + 0.5, interval=86400.0, next_due=1.7e9 + 86400.5)
    due, schedule = schedule_of(state)
    record = replace(
        PageRecord.first(FP1, now=1.7e9 + 0.5),
        schedule=schedule,
        next_due=due,
        etag='W/"abc"',
        visible_key=1 << 63,
        sketch=bytes(range(128)),
        evidence=True,
    )
    raw = record.to_bytes()
    assert len(raw) <= 64 + 8 + 8 + 50, len(raw)
    assert PageRecord.from_bytes(raw) == replace(record, sketch=stored(bytes(range(128))))


def test_a_cut_or_padded_record_is_a_value_error():
    raw = _full_record().to_bytes()
    for end in range(len(raw)):
        with pytest.raises(ValueError, match="not a page record"):
            PageRecord.from_bytes(raw[:end] if end else b"\x05")
    with pytest.raises(ValueError, match="bytes after the record"):
        PageRecord.from_bytes(raw + b"\0")


@pytest.mark.parametrize("raw", [b"", b"\xff\xfe", b"[]", b'{"v":1}', b'{"history":[["zz",1]]}'])
def test_garbage_is_a_value_error(raw):
    with pytest.raises(ValueError, match="not a page record"):
        PageRecord.from_bytes(raw)


def test_parse_is_none_for_a_missing_or_unreadable_record():
    record = PageRecord.first(FP1, now=100.0, duplicate_of="https://a.example.com/")
    assert PageRecord.parse(record.to_bytes()) == record
    assert PageRecord.parse(None) is None
    assert PageRecord.parse(b'{"v":1}') is None
    assert PageRecord.parse(b"\xff\xfe") is None


def test_change_verdict_threshold():
    assert change_verdict(3, 3) == UNCHANGED
    assert change_verdict(4, 3) == CHANGED
    assert change_verdict(0, 0) == UNCHANGED
    assert set(VERDICTS) == {"new", "near_duplicate", "unchanged", "changed"}


def test_change_tracker_decides_and_keeps_records():
    from dataclasses import replace

    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.store.index import SimhashIndex

    index = SimhashIndex()
    tracker = ChangeTracker(index, change_threshold=3, history_size=2)
    a, far = 0xF0F0_0000_0000_0000, 0x0000_0000_F0F0_F0F0
    assert tracker.observe("a", PageFingerprint.of(a), now=10.0).verdict == "new"
    dup = tracker.observe("b", PageFingerprint.of(a ^ 0b11), now=11.0)
    assert (dup.verdict, dup.duplicate_of, dup.distance) == ("near_duplicate", "a", 2)
    assert index.get("b") is None
    b_record = PageRecord.parse(index.get_record("b"))
    assert b_record is not None and b_record.duplicate_of == "a"
    same = tracker.observe("a", PageFingerprint.of(a ^ 1), now=12.0)  # noise: unchanged, the index follows the page
    assert (same.verdict, same.distance) == ("unchanged", 1) and index.get("a") == a ^ 1
    changed = tracker.observe("a", PageFingerprint.of(far), now=13.0)
    assert changed.verdict == "changed" and changed.record is not None and changed.record.change_count == 1 and len(changed.record.history) == 2
    # c's content changes to a copy of a's new page: near-duplicate, and c keeps no fingerprint
    moved = tracker.observe("c", PageFingerprint.of(0x1234_5678_0000_0000), now=14.0)
    assert moved.verdict == "new"
    again = tracker.observe("c", PageFingerprint.of(far ^ 0b111), now=15.0)
    assert (again.verdict, again.duplicate_of) == ("near_duplicate", "a") and index.get("c") is None
    # an unreadable record is replaced and reported
    index.put_record("d", b"not json")
    fixed = tracker.observe("d", PageFingerprint.of(0xABCDEF << 20), now=16.0)
    assert fixed.replaced_unreadable and fixed.verdict == "new"
    # a record with a due time lands in the due-time index
    assert fixed.record is not None
    record = replace(fixed.record, next_due=100.0, schedule={"interval": 60.0})
    index.put_record("d", record.to_bytes(), due=record.next_due)
    assert index.records_due(100.0) == [("d", 100.0)]
    raw_d = index.get_record("d")
    assert raw_d is not None and PageRecord.from_bytes(raw_d).schedule == {"interval": 60.0}
    assert tracker.deduplicate("e", a ^ 0xFF00).verdict == "new"
    assert tracker.deduplicate("f", far).duplicate_of == "a"


def test_a_page_without_evidence_is_never_a_duplicate_nor_duplicated():
    """may_match=False (a template-only page): no near-duplicate verdict, nothing indexed, its own
    change still tracked, and content it had before is no longer matched."""
    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.store.index import SimhashIndex

    index = SimhashIndex()
    tracker = ChangeTracker(index, change_threshold=3)
    a, far = 0xF0F0_0000_0000_0000, 0x0000_0000_F0F0_F0F0
    assert tracker.observe("a", PageFingerprint.of(a), now=1.0).verdict == "new"
    shell = tracker.observe(
        "shell", PageFingerprint.of(a ^ 1, fallback="template"), now=2.0
    )  # within k of a, no evidence
    assert (shell.verdict, shell.duplicate_of) == ("new", None) and index.get("shell") is None
    assert tracker.observe("b", PageFingerprint.of(a ^ 1), now=3.0).duplicate_of == "a"  # a, not the shell, is matched
    assert tracker.observe("shell", PageFingerprint.of(a ^ 3, fallback="template"), now=4.0).verdict == "unchanged"
    assert tracker.observe("shell", PageFingerprint.of(far, fallback="template"), now=5.0).verdict == "changed"
    assert index.get("shell") is None
    # a page indexed earlier that becomes template-only leaves the index
    assert (
        tracker.observe("c", PageFingerprint.of(far ^ 0xFFFF_0000), now=6.0).verdict == "new"
        and index.get("c") is not None
    )
    assert (
        tracker.observe("c", PageFingerprint.of(far ^ 0xFFFF_0000, fallback="template"), now=7.0).verdict == "unchanged"
    )
    assert (
        index.get("c") is None and tracker.observe("d", PageFingerprint.of(far ^ 0xFFFF_0001), now=8.0).verdict == "new"
    )


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"rate": -1.0},
        {"size": -0.5},
        {"interval": 0.0},
        {"last_fetch": float("inf")},
        {"old": [0.5, float("nan"), 0.0]},
        {"old": [0.5, 1.0, -1.0]},
        {"next_due": float("inf"), "probe": -3.0},  # from_dict does not check these
        {"recent": []},
        {"fetches": 2.0},  # not of to_dict's form: from_dict itself
    ],
)
def test_schedule_state_of_a_record_is_from_dicts(changes):
    from scrapy_simhash.schedule import ScheduleState
    from scrapy_simhash.store.record import schedule_state_of

    schedule = {**_full_schedule(), **changes}
    record = replace(_full_record(), schedule=schedule)
    try:
        expected = ScheduleState.from_dict(dict(schedule))
    except ValueError:
        expected = None
    assert schedule_state_of(record) == expected
    assert schedule_state_of(PageRecord.from_bytes(record.to_bytes())) == expected  # read back, packed or JSON


def test_schedule_goes_to_the_record_and_back_as_through_to_dict():
    """ChangeTracker writes a policy's state without ``to_dict`` and reads it back without a
    mapping: the same numbers, the same bytes and the same state as through ``to_dict``."""
    from scrapy_simhash.schedule import ScheduleState
    from scrapy_simhash.store.record import Schedule, schedule_of, schedule_state_of

    record = _full_record()
    for state in random_states(400, 3):
        expected = state.to_dict()
        due, schedule = schedule_of(state)
        assert type(schedule) is Schedule and due == expected["next_due"]
        assert dict(schedule) == expected and schedule == expected and expected == schedule
        assert json.dumps(dict(schedule)) == json.dumps(expected)  # the same types, digit for digit
        with_fast = replace(record, schedule=schedule, next_due=due)
        with_dict = replace(record, schedule=expected, next_due=due)
        raw = with_fast.to_bytes()
        assert raw == with_dict.to_bytes()
        back = PageRecord.from_bytes(raw)
        assert type(back.schedule) is Schedule and back.to_bytes() == raw
        assert schedule_state_of(back) == schedule_state_of(with_dict) == ScheduleState.from_dict(expected)
    # ints where to_dict has floats: not the packed form (the record keeps it as JSON, types and all)
    odd = replace(random_states(1, 4)[0], last_fetch=1_700_000_000, fetches=2.0)
    due, schedule = schedule_of(odd)
    assert schedule == odd.to_dict() and type(schedule) is dict
    back_schedule = PageRecord.from_bytes(replace(record, schedule=schedule, next_due=due).to_bytes()).schedule
    assert back_schedule == schedule and json.dumps(back_schedule) == json.dumps(schedule)


def test_round3_is_round_to_the_millisecond():
    import math
    import random

    from scrapy_simhash.schedule import round_ms as _round3

    rng = random.Random(5)
    values = [0.0, -0.0, 1e12, -1e12, 2e12, math.inf, -math.inf, 0.0005, 0.0015, 2.675, 1e-9]
    for _ in range(50_000):
        x = rng.choice((rng.uniform(0, 2e9), rng.uniform(-100, 100), rng.uniform(0, 1e13), rng.expovariate(1e-5)))
        values += [x, round(x, 3), round(x, 3) + 1e-7, round(x, 2), float(round(x))]
    for x in values:
        assert repr(_round3(x)) == repr(round(x, 3)), x
    assert math.isnan(_round3(math.nan)) and _round3(7) == 7 and type(_round3(7)) is int
