"""No near-duplicate drop may lose content (``SIMHASH_KEEP_ADDS``, ``scrapy_simhash.fingerprint.novelty``).

The novelty estimate is checked against brute force on the normalised texts; the decision on
pages that resemble each other (a page and its superset in both orders, a release-notes series in
random orders, two API pages of sibling classes, a copy with a counter and a date changed) on the
memory, LMDB and Redis stores and through the middleware. Every decision test also runs with the
rule off (``keep_adds=0``) and asserts that resemblance alone then loses content, so that each
fails with the rule removed.
"""

from __future__ import annotations

import html
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from helpers.pages import make_response, run

from scrapy_simhash.decision.record import PageRecord
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW
from scrapy_simhash.fingerprint import PageFingerprint, novelty
from scrapy_simhash.fingerprint.novelty import GRAM, SKETCH_ANCHORS, WINDOW, OwnText, normalize
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.text.extract import extract

if TYPE_CHECKING:
    from collections.abc import Callable

_VOCAB_RNG = random.Random(2026)
#: Pseudo-words: texts made of them share no gram by chance, as different real texts rarely do.
WORDS = [
    "".join(_VOCAB_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_VOCAB_RNG.randint(3, 9)))
    for _ in range(5000)
]


def sentence(rng: random.Random, words: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def brute_added(kept: str, new: str) -> float:
    """``OwnText.added``'s quantity (exact comparison) by brute force: the characters of ``new``'s
    normalised text in runs of ``WINDOW`` or more that no ``WINDOW``-character window within its
    line shares with ``kept``'s normalised text (lines joined: spaces, none next to a Han character),
    each distinct line of ``new`` once."""
    a, b = normalize(kept), "\n".join(dict.fromkeys(normalize(new).split("\n")))
    a = re.sub(r" (?=[\u2e80-\u9fff])|(?<=[\u2e80-\u9fff]) ", "", a.replace("\n", " "))
    have = {a[i : i + WINDOW] for i in range(len(a) - WINDOW + 1)}
    covered = [False] * len(b)
    for i in range(len(b) - WINDOW + 1):
        window = b[i : i + WINDOW]
        if "\n" not in window and window in have:
            covered[i : i + WINDOW] = [True] * WINDOW
    runs = "".join(" " if c or ch == "\n" else "x" for c, ch in zip(covered, b)).split()
    return float(sum(len(run) for run in runs if len(run) >= WINDOW))


def brute_seams(kept: str, new: str) -> float:
    """What a sampled sketch estimates, by brute force over every position of ``new``'s normalised
    text: ``new - 11/12 (new2 - new)`` (the gram and the double gram that start there, ``new``'s
    end padded as OwnText pads it) against every gram and double gram of ``kept``'s."""
    a, b = normalize(kept), normalize(new)
    pad = "\0" * (2 * GRAM)
    a8 = {a[i : i + GRAM].ljust(GRAM, "\0") for i in range(max(len(a) - GRAM + 1, 1))}
    a16 = {(a + pad)[i : i + 2 * GRAM] for i in range(max(len(a) - GRAM + 1, 1))}
    new8 = new16 = 0
    for i in range(max(len(b) - GRAM + 1, 1)):
        new8 += b[i : i + GRAM].ljust(GRAM, "\0") not in a8
        new16 += (b + pad)[i : i + 2 * GRAM] not in a16
    return max(0.0, new8 - (GRAM - 1) / GRAM * (new16 - new8))


# -- the estimate ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_added_is_exact_on_small_texts(seed: int) -> None:
    rng = random.Random(seed)
    kept = [sentence(rng) for _ in range(5)]
    new = list(kept)
    new.insert(rng.randrange(len(new) + 1), sentence(rng, rng.randint(3, 20)))  # an insertion
    del new[rng.randrange(len(new))]  # a deletion
    i = rng.randrange(len(new))
    new[i] = new[i].replace(" ", " x", 1)  # a one-character edit
    own = OwnText(new)
    sketch = OwnText(kept).sketch()
    assert sketch[0] == 5  # the text itself: the comparison is exact
    assert own.added(sketch) == brute_added("\n".join(kept), "\n".join(new))


@pytest.mark.parametrize("seed", range(5))
def test_every_kind_of_text_sketch_gives_the_same_count(seed: int) -> None:
    """A record keeps the text as the page has it (kind 5, normalised when compared); records of
    earlier versions keep it normalised (kind 4) or normalised in one line (kind 3): a page
    measured against any of them adds the same, Chinese lines (no space next to a Han character)
    and numbers included."""
    import zlib

    rng = random.Random(seed)
    zh = ["数据库在检查点期间 写入日志", "两个写入者同时提交时 可能造成索引损坏", "命令行工具 拒绝打开新版本创建的数据库"]
    kept = [sentence(rng) + f" Build {rng.randrange(10**6)}." for _ in range(4)] + zh[:2]
    new = [*kept[:2], sentence(rng, 18), *kept[2:], zh[2]]
    raw = OwnText(kept).sketch()
    assert raw[0] == 5 and OwnText(kept).has_text and not OwnText([" ", "\t "]).has_text
    normalised = OwnText.normalised(normalize("\n".join(kept))).sketch()
    assert normalised[0] == 4
    one_line = b"\x03" + zlib.compress(normalize("\n".join(kept)).replace("\n", " ").encode())
    counts = {OwnText(new).added(sketch) for sketch in (raw, normalised, one_line)}
    assert counts == {brute_added("\n".join(kept), "\n".join(new))}
    assert counts != {0.0}
    assert OwnText(kept).added(raw) == OwnText(kept[1:]).added(raw) == 0  # a copy, a part
    assert OwnText.normalised(normalize("\n".join(new))).added(raw) == counts.pop()


def test_a_damaged_text_sketch_is_refused_not_misread() -> None:
    """A text sketch cut short or with bytes flipped (a damaged record) raises ``ValueError``, which
    the tracker takes as no sketch (resemblance decides), whichever side is normalised."""
    rng = random.Random(3)
    kept = [sentence(rng) for _ in range(6)]
    raw = OwnText(kept).sketch()
    for damaged in (raw[:-3], raw[:1] + bytes(b ^ 0x5A for b in raw[1:]), b"\x05", b"\x05not zlib"):
        for own in (OwnText(kept[:3]), OwnText.normalised(normalize("\n".join(kept[:3])))):
            with pytest.raises(ValueError, match="not a novelty sketch|cut short"):
                own.added(damaged)
    assert OwnText(kept[:3]).added(raw) == 0  # the sketch undamaged: read


def test_added_counts_an_insertion_by_its_length_and_a_deletion_as_nothing() -> None:
    rng = random.Random(1)
    kept = [sentence(rng) for _ in range(6)]
    extra = "Fixed an index corruption that two writers could cause when both committed at once."
    sketch = OwnText(kept).sketch()
    assert OwnText([*kept[:3], extra, *kept[3:]]).added(sketch) == pytest.approx(len(normalize(extra)) + 1, abs=2)
    assert OwnText(kept[:2] + kept[3:]).added(sketch) == 0
    assert OwnText(kept).added(sketch) == 0


def test_digits_of_names_are_text() -> None:
    """``u64`` and ``u32`` name two types (a Latin letter before the digits): two generated API
    pages that differ in them only differ in every short line that names the type, and such a line
    is new whole (no window of it is on the other page); a long line with the name changed inside
    is not (the windows on either side of the name are)."""
    u64 = [f"assert_eq!(u64::{const}, 0);" for const in ("MAX", "MIN", "BITS", "ONE", "ZERO", "EPS")]
    u32 = [line.replace("u64", "u32") for line in u64]
    assert OwnText(u32).added(OwnText(u64).sketch()) >= 6 * 11  # "32::max, 0);" and the like
    long64 = [f"This method of u64 returns the {w} value of the checked operation on two operands." for w in WORDS[:6]]
    long32 = [line.replace("u64", "u32") for line in long64]
    assert OwnText(long32).added(OwnText(long64).sketch()) == 0
    assert (
        normalize("Version 3.1.2 of u64 in x86_64, h1 and 2024-05-01") == "version 0.0.0 of u64 in x86_64, h1 and 0-0-0"
    )

def _normalize_by_the_rules(text: str) -> str:
    """``normalize`` as its docstring states it, one regular expression a rule (the sketches of
    stored records were made by these: its faster form must give the same text)."""
    import unicodedata

    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(?<![0-9a-z])(?=[a-f]*[0-9])[0-9a-f]{7,}(?![0-9a-z])", "#", text.lower())
    text = re.sub(r"(?<![a-z_0-9])\d+", "0", text)
    text = re.sub(r" ?\n\s*", "\n", re.sub(r"[^\S\n]+", " ", text)).strip()
    return (
        text
        if text.isascii()
        else re.sub(r" (?:(?<=[\u2e80-\u9fff\uf900-\ufaff] )|(?=[\u2e80-\u9fff\uf900-\ufaff]))", "", text)
    )


def test_normalize_follows_its_rules_on_random_and_real_text() -> None:
    """Hexadecimal runs (a digit among them, 7 or more, not inside a word), numbers (not after a
    Latin letter or "_"), every kind of Unicode white space and empty lines, Han next to spaces:
    random strings of those characters, and the visible text of the real pages where present."""
    rng = random.Random(25)
    alphabet = list("abcdefgxyz_0123456789#.- \n\t\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u2028\u2029\u3000中文٣４Ａ")
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(20000)]
    texts += ["deadbeef1 cafe1234567 abcdefa 1234567x x1234567 0x7f3a9c2 ab12cd34ef \n \n\t a\u00a0b ٣٤ 12中 文 x"]
    from helpers.data import DATA, load_pages

    if DATA.exists():
        from scrapy_simhash.text.extract import extract

        for bodies in load_pages().values():
            texts += [extract(body).visible for body in bodies[:60]]
    for text in texts:
        assert normalize(text) == _normalize_by_the_rules(text), text[:200]


def test_numbers_dates_and_hashes_add_nothing() -> None:
    kept = ["Build 2024-05-01 of commit 3fa9c2d1e0 passed 1,204 tests in 35 minutes; see the log for details."]
    new = ["Build 2026-11-27 of commit 77bfaba4c2 passed 1,399 tests in 41 minutes; see the log for details."]
    assert OwnText(new).added(OwnText(kept).sketch()) == 0


def test_sampled_estimate_is_unbiased_on_long_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text too long to keep is sampled (about 1 position in 25 here): each estimate is off by
    up to half, their mean is close, and scattered one-word edits stay well under 100."""
    monkeypatch.setattr(novelty, "TEXT_BYTES", 4096)  # texts of 40,000 characters, not 150,000
    ratios = []
    for seed in range(8):
        rng = random.Random(seed)
        kept = [sentence(rng, 20) for _ in range(300)]  # ~40,000 characters
        sketch = OwnText(kept).sketch()
        assert sketch[0] == 2 and len(sketch) <= 5 + 3 * SKETCH_ANCHORS
        added = [sentence(rng, 30) for _ in range(4)]  # ~800 new characters in four runs
        new = kept[:100] + added[:2] + kept[100:200] + added[2:] + kept[200:]
        truth = brute_added("\n".join(kept), "\n".join(new))
        assert truth > 500
        ratios.append(OwnText(new).added(sketch) / truth)
        edited = list(kept)
        for i in rng.sample(range(300), 5):  # five one-word edits: little added
            edited[i] = edited[i].replace(" ", " q ", 1)
        assert OwnText(edited).added(sketch) < 100
    assert 0.4 < min(ratios) and max(ratios) < 1.6
    assert sum(ratios) / len(ratios) == pytest.approx(1.0, abs=0.2)


def test_sketch_is_the_same_in_another_process() -> None:
    text = "Première ligne: 価格は1,200円です。\nSecond line with a hash deadbeef42 and more words to fill it up."
    code = (
        "import sys; from scrapy_simhash.fingerprint.novelty import OwnText; "
        f"sys.stdout.write(OwnText({text.splitlines()!r}).sketch().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout == OwnText(text.splitlines()).sketch().hex()


def test_record_keeps_the_novelty_sketch() -> None:
    own = OwnText(["A kept page with enough words to make a sketch of its own text."])
    record = PageRecord(first_seen=1.0, last_fetched=2.0, last_changed=1.0, history=((5, None),), novelty=own.sketch())
    raw = record.to_bytes()
    assert raw[0] == 4
    assert PageRecord.from_bytes(raw) == record
    plain = PageRecord(first_seen=1.0, last_fetched=2.0, last_changed=1.0, history=((5, None),))
    assert raw[1 : len(plain.to_bytes()) + 1] == plain.to_bytes()  # the record without it, framed
    assert PageRecord.parse(raw[:-2]) is None  # cut short: unreadable, never misread
    assert PageRecord.from_bytes(record.updated(5, 0, False, now=3.0).to_bytes()).novelty == record.novelty
    assert record.updated(6, 9, True, now=3.0).novelty is None  # never another content's


# -- the decision ---------------------------------------------------------------------------------

FP = Fingerprinter()
BASE_NOTES = [
    "Release 3.1 brings a new query planner that estimates the cost of virtual tables before it picks an index.",
    "The journal is now written in pages of four kilobytes, which halves the number of system calls per commit.",
    "Cursors over wide tables stream their rows instead of buffering them, so memory stays flat for long scans.",
    "Timeouts of the network layer are configurable per connection and default to thirty seconds for clients.",
    "The command line shell gained completion for table and column names and a history that survives restarts.",
    "Deprecated functions of the old parser were removed; the migration guide lists a replacement for each one.",
]
MORE_NOTES = [sentence(random.Random(100 + i), 18) for i in range(14)]
PATCH_NOTES = [
    "Fixed an index corruption that two writers could cause when both committed during a checkpoint of the journal.",
    "The command line tool now refuses to open a database created by a newer release instead of silently truncating it.",
    "Memory use of long running queries over wide tables dropped by half thanks to a streaming sort of intermediate rows.",
    "The tutorial on virtual tables gained a chapter about cost estimates and the planner's choice among several indexes.",
]


def release_page(n: int) -> str:
    notes = [f"<p>{note}</p>" for note in BASE_NOTES + MORE_NOTES]
    notes += [f"<p>Patch 3.1.{j + 1}: {note}</p>" for j, note in enumerate(PATCH_NOTES[:n])]
    return (
        f"<html><head><title>Release notes 3.1.{n}</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<main><h1>Release notes 3.1.{n}</h1>{''.join(notes)}</main><footer>Example DB</footer></body></html>"
    )


def observe(tracker: ChangeTracker, url: str, html: str) -> Any:
    page = FP.fingerprint_page(html, url=url)
    return tracker.observe(url, page, now=1.0)


def own_text(html: str) -> str:
    """The page's whole visible text (its navigation and footer are the same on every page)."""
    return FP.fingerprint_page(html).visible


@pytest.fixture(params=["memory", "lmdb", "redis"])
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], SimhashIndex]:
    made: list[SimhashIndex] = []

    def factory() -> SimhashIndex:
        n = len(made)
        if request.param == "memory":
            index = SimhashIndex()
        elif request.param == "lmdb":
            index = SimhashIndex(LmdbStore(tmp_path / f"lmdb{n}", map_size=1 << 24))
        else:
            from scrapy_simhash.store.redisstore import RedisStore

            server = request.getfixturevalue("redis_server")
            index = SimhashIndex(RedisStore(server.url, prefix=f"{tmp_path}-{n}"))
        made.append(index)
        return index

    yield factory
    for index in made:
        index.close()


def test_a_new_line_repeated_counts_once(make_index: Callable[[], SimhashIndex]) -> None:
    """A revision that renames the caption of every code example (``js chat.js`` to
    ``js src/chat.js``, ten times) adds one short line, not ten: the page is still dropped (counted
    ten times it would pass ``SIMHASH_KEEP_ADDS``), while a line new only once counts whole."""
    rng = random.Random(7)
    examples = [(sentence(rng, 20), f"export function step{i}(room) {{ return connect(room, {i}); }}") for i in range(10)]

    def page(caption: str, extra: str = "") -> str:
        body = "".join(f"<p>{text}</p><p>{caption}<br>{code}</p>" for text, code in examples)
        return f"<html><head><title>Effects</title></head><body><main><h1>Effects</h1>{body}{extra}</main></body></html>"

    kept, new = page("```js chat.js"), page("```js src/chat.js")
    runs = FP.fingerprint_page(new).own.added_runs(FP.fingerprint_page(kept).own.sketch())
    assert runs == ["```js src/chat.js"]
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://a.example/effects", kept).verdict == NEW
    assert observe(tracker, "http://b.example/effects", new).verdict == NEAR_DUPLICATE
    once = observe(tracker, "http://c.example/effects", page("```js chat.js", f"<p>{sentence(rng, 20)}</p>"))
    assert (once.verdict, once.adds_to) == (NEW, "http://a.example/effects")


def test_subset_then_superset_and_the_reverse(make_index: Callable[[], SimhashIndex]) -> None:
    tracker = ChangeTracker(make_index())
    small, big = release_page(0), release_page(2)  # the superset adds two patch notes
    assert observe(tracker, "http://db.example/3.1.0", small).verdict == NEW
    kept = observe(tracker, "http://db.example/3.1.2", big)
    assert (kept.verdict, kept.adds_to) == (NEW, "http://db.example/3.1.0")
    assert kept.adds >= 150
    # the superset first: the subset says nothing new, and goes
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://db.example/3.1.2", big).verdict == NEW
    dropped = observe(tracker, "http://db.example/3.1.0", small)
    assert (dropped.verdict, dropped.duplicate_of) == (NEAR_DUPLICATE, "http://db.example/3.1.2")
    # the rule off: resemblance alone drops the superset, and its notes are lost
    tracker = ChangeTracker(make_index(), keep_adds=0)
    observe(tracker, "http://db.example/3.1.0", small)
    assert observe(tracker, "http://db.example/3.1.2", big).verdict == NEAR_DUPLICATE


def test_release_series_in_random_orders_loses_nothing() -> None:
    urls = {f"http://db.example/3.1.{n}": release_page(n) for n in range(len(PATCH_NOTES) + 1)}

    def crawl(order: list[str], keep_adds: int) -> list[str]:
        """The dropped pages whose text no kept page holds (by brute force)."""
        tracker = ChangeTracker(SimhashIndex(), keep_adds=keep_adds)
        kept: list[str] = []
        dropped = []
        for url in order:
            verdict = observe(tracker, url, urls[url])
            if verdict.verdict == NEAR_DUPLICATE:
                assert verdict.duplicate_of in kept
                dropped.append(url)
            else:
                kept.append(url)
        return [u for u in dropped if min(brute_added(own_text(urls[k]), own_text(urls[u])) for k in kept) >= 100]

    lost_without = 0
    for seed in range(8):
        order = list(urls)
        random.Random(seed).shuffle(order)
        assert crawl(order, 100) == [], order
        lost_without += len(crawl(order, 0))
    assert lost_without  # resemblance alone loses patch notes in some of these orders


def test_two_api_pages_of_sibling_classes_are_both_kept(make_index: Callable[[], SimhashIndex]) -> None:
    inherited = [
        f"<dt>{name}(self, *args)</dt><dd>{sentence(random.Random(i), 22)}</dd>"
        for i, name in enumerate(
            ("connect", "disconnect", "emit", "block_signals", "event", "timer", "parent", "children")
        )
    ]

    def class_page(name: str, description: str) -> str:
        return (
            f"<html><head><title>{name} - API</title></head><body><main><h1>class {name}</h1><p>{description}</p>"
            f"<h2>Inherited methods</h2><dl>{''.join(inherited)}</dl></main></body></html>"
        )

    swipe = class_page(
        "SwipeGesture",
        "Recognises a quick movement of one or more fingers in one direction. The swipe angle is measured "
        "counter-clockwise from the positive x axis, and the velocity in points per second.",
    )
    pinch = class_page(
        "PinchGesture",
        "Recognises two fingers moving apart or together on a touch screen. Its scale factor and rotation "
        "angle are updated while the fingers move, and reset when the gesture ends.",
    )
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://api.example/swipe", swipe).verdict == NEW
    second = observe(tracker, "http://api.example/pinch", pinch)
    assert second.verdict == NEW, second
    off = ChangeTracker(make_index(), keep_adds=0)
    observe(off, "http://api.example/swipe", swipe)
    assert observe(off, "http://api.example/pinch", pinch).verdict == NEAR_DUPLICATE


def javadoc_page(name: str, lock: str, methods: list[str]) -> str:
    """A Javadoc-like class page: its heading, a description its sibling shares, and member tables
    whose signatures (their type names links) are what tells the class from its sibling."""
    rows = "".join(
        f"<tr><td><code>void</code></td><td><code><a href='#{m}'>{m}</a>(<a href='#f'>FailableConsumer</a> consumer)"
        "</code></td><td>Provides access to the locked object with the given consumer.</td></tr>"
        for m in methods
    )
    shared = "</p><p>".join(BASE_NOTES)
    return (
        f"<html><head><title>LockingVisitors.{name} (Lang API)</title></head><body><nav><a href='/'>Overview</a> "
        f"<a href='/p'>Package</a></nav><main><h1>Class LockingVisitors.{name}&lt;O&gt;</h1><p>{shared}</p>"
        f"<h2>Constructor Summary</h2><table><tr><td><code>protected</code></td><td><code><a href='#c'>{name}</a>"
        f"(O object, <a href='#l'>{lock}</a> lock)</code></td><td>Creates a new instance with the given locked "
        f"object.</td></tr></table><h2>Method Summary</h2><table>{rows}</table><h2>Constructor Details</h2>"
        f"<div class='member-signature'>protected <a href='#c'>{name}</a>(O object, <a href='#l'>{lock}</a> lock)"
        "</div><p>Creates a new instance with the given locked object, for subclasses only.</p></main></body></html>"
    )


def test_member_signatures_count_though_their_names_are_links(make_index: Callable[[], SimhashIndex]) -> None:
    """Two sibling classes whose pages differ in their member signatures only (the descriptions
    are the same): the lines are link-heavy, so the content region leaves them out, but they are
    the page's entries (fingerprinted: ``text.region._with_entries``) and count: the second class's
    page is kept. Counted without them, it would add only its heading and go."""
    kept = javadoc_page("StampedLockVisitor", "StampedLock", ["acceptReadLocked", "acceptWriteLocked", "applyReadLocked"])
    new = javadoc_page("ReadWriteLockVisitor", "ReadWriteLock", ["lockInterruptibly", "acquireSharedNanos", "downgradeToRead"])
    first, second = FP.fingerprint_page(kept), FP.fingerprint_page(new)
    off = ChangeTracker(make_index(), keep_adds=0)  # resemblance alone drops it
    observe(off, "http://lang.example/StampedLockVisitor", kept)
    assert observe(off, "http://lang.example/ReadWriteLockVisitor", new).verdict == NEAR_DUPLICATE
    doc = extract(new)
    lines = [doc.title, *doc.text.split("\n"), *doc.rest.split("\n"), *doc.inner.split("\n")]
    assert "lockInterruptibly(FailableConsumer consumer)" in doc.text.split("\n")  # an entry: fingerprinted
    without = OwnText([line for line in lines if "(" not in line])  # the member signatures left out
    assert without.added(first.own.sketch()) < 100 <= second.own.added(first.own.sketch())
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://lang.example/StampedLockVisitor", kept).verdict == NEW
    found = observe(tracker, "http://lang.example/ReadWriteLockVisitor", new)
    assert (found.verdict, found.adds_to) == (NEW, "http://lang.example/StampedLockVisitor")


def test_a_copy_with_a_counter_and_a_date_changed_is_still_dropped(make_index: Callable[[], SimhashIndex]) -> None:
    rng = random.Random(3)
    body = "".join(f"<p>{sentence(rng, 18)}</p>" for _ in range(8))

    def page(date: str, views: int) -> str:
        return (
            f"<html><head><title>An article</title></head><body><main><h1>An article</h1>"
            f"<p>Published {date}. Read {views} times.</p>{body}</main></body></html>"
        )

    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://news.example/a", page("2026-11-01", 1204)).verdict == NEW
    copy = observe(tracker, "http://mirror.example/a?utm=x", page("2026-11-27", 98231))
    assert (copy.verdict, copy.duplicate_of) == (NEAR_DUPLICATE, "http://news.example/a")


def test_middleware_keeps_the_superset_and_counts_it(make_mw: Callable[..., Any]) -> None:
    mw = make_mw()
    run(mw, make_response("http://db.example/3.1.0", release_page(0)))
    out = run(mw, make_response("http://db.example/3.1.3", release_page(3)), [{"title": "3.1.3"}])
    assert out == [{"title": "3.1.3"}]
    assert mw.stats.get_value("simhash/kept/adds") == 1
    run(mw, make_response("http://db.example/3.1.1", release_page(1)), [{"title": "3.1.1"}])
    assert mw.stats.get_value("simhash/near_duplicate") == 1  # a subset of the kept 3.1.3
    off = make_mw(SIMHASH_KEEP_ADDS=0, SIMHASH_DIR=str(mw.config.dir) + "-off")
    run(off, make_response("http://db.example/3.1.0", release_page(0)))
    assert run(off, make_response("http://db.example/3.1.3", release_page(3)), [{"title": "3.1.3"}]) == []


# -- the change size the schedule weighs -----------------------------------------------------------

REVISIONS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "revisions" / "pairs.jsonl.gz"


def _as_page(text: str) -> str:
    return (
        "<html><body><main>"
        + "".join(f"<p>{html.escape(line)}</p>" for line in text.split("\n") if line)
        + "</main></body></html>"
    )


def test_change_size_is_the_sketches_and_the_schedule_records_it() -> None:
    from scrapy_simhash.decision.record import change_size
    from scrapy_simhash.schedule import FreshnessPolicy

    old = FP.fingerprint_page(release_page(0))
    new = FP.fingerprint_page(release_page(4))
    assert old.sketch is not None and new.sketch is not None
    size = change_size(old.sketch, new.sketch, 2)
    assert 0 < size < 64
    assert change_size(old.sketch, old.sketch, 5) == 0
    assert change_size(None, new.sketch, 5) == 5  # no sketch: the bits
    tracker = ChangeTracker(SimhashIndex(), policy=FreshnessPolicy())
    tracker.observe("u", PageFingerprint.of(old.fp, sketch=old.sketch), now=0.0)
    verdict = tracker.observe("u", PageFingerprint.of(new.fp ^ 0xFF, sketch=new.sketch), now=86400.0)  # changed
    assert verdict.record.schedule["recent"][0][1] == pytest.approx(max(size, tracker.change_threshold + 1), abs=1e-3)


@pytest.mark.skipif(not REVISIONS.is_file(), reason="../shared/data/revisions is absent")
def test_change_size_ranks_real_revisions_as_their_jaccard() -> None:
    import gzip
    import json

    from scrapy_simhash.decision.record import change_size

    with gzip.open(REVISIONS, "rt", encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    pairs = random.Random(0).sample(pairs, 400)
    sizes, dissimilar = [], []
    for p in pairs:
        a, b = FP.fingerprint_page(_as_page(p["text_a"])), FP.fingerprint_page(_as_page(p["text_b"]))
        sizes.append(change_size(a.sketch, b.sketch, (a.fp ^ b.fp).bit_count()))
        dissimilar.append(1 - p["jaccard5"])

    def ranks(xs: list[float]) -> list[float]:
        order = sorted(range(len(xs)), key=xs.__getitem__)
        out = [0.0] * len(xs)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rs, rj = ranks(sizes), ranks(dissimilar)
    n = len(rs)
    ms, mj = sum(rs) / n, sum(rj) / n
    cov = sum((x - ms) * (y - mj) for x, y in zip(rs, rj))
    rho = cov / (sum((x - ms) ** 2 for x in rs) * sum((y - mj) ** 2 for y in rj)) ** 0.5
    assert rho >= 0.95


def test_explain_says_what_a_kept_page_adds(tmp_path: Path) -> None:
    from scrapy_simhash.commands import reports

    a, b = tmp_path / "3.1.0.html", tmp_path / "3.1.2.html"
    a.write_text(release_page(0))
    b.write_text(release_page(2))
    out = reports.explain(Fingerprinter(), [str(a), str(b)], top=0)
    assert out["verdict"] == NEW and "adds about" in out["why"]
    assert "corruption that two writers could cause" in out["adds"]
    assert "journal is now written" not in out["adds"]  # a base note: in both pages
    assert "adds" not in reports.explain(Fingerprinter(), [str(b), str(a)], top=0)  # the subset adds nothing
