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

from scrapy_simhash import defaults
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import NEAR_DUPLICATE, NEW
from scrapy_simhash.fingerprint import PageFingerprint, novelty
from scrapy_simhash.fingerprint.novelty import DENSE_WEIGHT, GRAM, NOVELTY_ANCHORS, WINDOW, OwnText, gram_text
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.record import PageRecord, evidence_text, frame_evidence
from scrapy_simhash.text.extract import extract
from scrapy_simhash.text.region import ROW_CHARS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_VOCAB_RNG = random.Random(2026)
#: Pseudo-words: texts made of them share no gram by chance, as different real texts rarely do.
WORDS = [
    "".join(_VOCAB_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_VOCAB_RNG.randint(3, 9)))
    for _ in range(5000)
]


def own_of(page: PageFingerprint) -> OwnText:
    """The page's own text, which these pages have (one of their words or more)."""
    assert page.own is not None
    return page.own


def sentence(rng: random.Random, words: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


#: Han, kana, hangul and CJK punctuation: each weighs ``DENSE_WEIGHT`` units, any other character 1.
_DENSE = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]"
)


def units(text: str) -> int:
    return sum(DENSE_WEIGHT if _DENSE.match(c) else 1 for c in text)


def run_units(run: str, line: str) -> int:
    """A run's count: its ``units`` when it holds a sentence's end (。 ! ? ;), or a clause's (, 、)
    and its ``line`` a sentence's end, else its characters."""
    ends = any(c in "\u3002!?;" for c in run) or (any(c in ",\u3001" for c in run) and any(c in "\u3002!?;" for c in line))
    return units(run) if ends or run.isascii() else len(run)


def brute_windows(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each window of ``text``: the fewest characters from a position, within
    a line, that weigh ``WINDOW`` units or more."""
    out = []
    for i in range(len(text)):
        for e in range(i + 1, len(text) + 1):
            if text[e - 1] == "\n":
                break
            if units(text[i:e]) >= WINDOW:
                out.append((i, e))
                break
    return out


def brute_added(kept: str, new: str) -> float:
    """``OwnText.added``'s quantity (exact comparison) by brute force: the weight (``run_units``) of the
    characters of ``new``'s normalised text in runs of ``WINDOW`` characters or more that no window
    of ``WINDOW`` units within its line (16 Latin characters, 6 Han characters) shares with
    ``kept``'s normalised text (lines joined: spaces, none next to a Han character), each distinct
    line of ``new`` once."""
    a, b = gram_text(kept), "\n".join(dict.fromkeys(gram_text(new).split("\n")))
    a = re.sub(r" (?=[\u2e80-\u9fff])|(?<=[\u2e80-\u9fff]) ", "", a.replace("\n", " "))
    have = {a[i:e] for i, e in brute_windows(a)}
    covered = [False] * len(b)
    for i, e in brute_windows(b):
        if b[i:e] in have:
            covered[i:e] = [True] * (e - i)
    flags = "".join(" " if c or ch == "\n" else "x" for c, ch in zip(covered, b))
    runs = [(m.start(), m.end()) for m in re.finditer("x+", flags) if m.end() - m.start() >= WINDOW]
    line_of = [line for line in b.split("\n") for _ in range(len(line) + 1)]  # each character's line
    return float(sum(run_units(b[i:e], line_of[i]) for i, e in runs))


def brute_seams(kept: str, new: str) -> float:
    """What a sampled sketch estimates, by brute force over every position of ``new``'s normalised
    text: ``new - 11/12 (new2 - new)`` (the gram and the double gram that start there, ``new``'s
    end padded as OwnText pads it) against every gram and double gram of ``kept``'s."""
    a, b = gram_text(kept), gram_text(new)
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
    sketch = OwnText(kept).novelty_text()
    assert sketch[0] == 5  # the text itself: the comparison is exact
    assert own.added(sketch) == brute_added("\n".join(kept), "\n".join(new))


@pytest.mark.parametrize("seed", range(5))
def test_a_text_sketch_gives_the_same_count_whichever_side_is_normalised(seed: int) -> None:
    """A record keeps the text as the page has it (normalised when compared); an own text made of
    a normalised text (``dedup``'s) keeps that: a page measured against either adds the same,
    Chinese lines (no space next to a Han character) and numbers included."""
    rng = random.Random(seed)
    zh = [
        "数据库在检查点期间 写入日志",
        "两个写入者同时提交时 可能造成索引损坏",
        "命令行工具 拒绝打开新版本创建的数据库",
    ]
    kept = [sentence(rng) + f" Build {rng.randrange(10**6)}." for _ in range(4)] + zh[:2]
    new = [*kept[:2], sentence(rng, 18), *kept[2:], zh[2]]
    raw = OwnText(kept).novelty_text()
    assert raw[0] == 5 and OwnText(kept).has_text and not OwnText([" ", "\t "]).has_text
    normalised = OwnText.normalised(gram_text("\n".join(kept))).novelty_text()
    assert normalised[0] == 5
    counts = {OwnText(new).added(sketch) for sketch in (raw, normalised)}
    assert counts == {brute_added("\n".join(kept), "\n".join(new))}
    assert counts != {0.0}
    assert OwnText(kept).added(raw) == OwnText(kept[1:]).added(raw) == 0  # a copy, a part
    assert OwnText.normalised(gram_text("\n".join(new))).added(raw) == counts.pop()


@pytest.mark.parametrize("kind", [3, 4])
def test_a_text_sketch_of_an_earlier_kind_is_no_sketch(kind: int) -> None:
    import zlib

    earlier = bytes((kind,)) + zlib.compress(b"an earlier kind of text sketch")
    with pytest.raises(ValueError, match="not a novelty text"):
        OwnText(["a line of its own"]).added(earlier)


def test_a_damaged_text_sketch_is_refused_not_misread() -> None:
    """A text sketch cut short or with bytes flipped (a damaged record) raises ``ValueError``, which
    the tracker takes as no sketch (resemblance decides), whichever side is normalised."""
    rng = random.Random(3)
    kept = [sentence(rng) for _ in range(6)]
    raw = OwnText(kept).novelty_text()
    for damaged in (raw[:-3], raw[:1] + bytes(b ^ 0x5A for b in raw[1:]), b"\x05", b"\x05not zlib"):
        for own in (OwnText(kept[:3]), OwnText.normalised(gram_text("\n".join(kept[:3])))):
            with pytest.raises(ValueError, match=r"not a novelty text|cut short"):
                own.added(damaged)
    assert OwnText(kept[:3]).added(raw) == 0  # the sketch undamaged: read


def test_added_counts_an_insertion_by_its_length_and_a_deletion_as_nothing() -> None:
    rng = random.Random(1)
    kept = [sentence(rng) for _ in range(6)]
    extra = "Fixed an index corruption that two writers could cause when both committed at once."
    sketch = OwnText(kept).novelty_text()
    assert OwnText([*kept[:3], extra, *kept[3:]]).added(sketch) == pytest.approx(len(gram_text(extra)) + 1, abs=2)
    assert OwnText(kept[:2] + kept[3:]).added(sketch) == 0
    assert OwnText(kept).added(sketch) == 0


def test_digits_of_names_are_text() -> None:
    """``u64`` and ``u32`` name two types (a Latin letter before the digits): two generated API
    pages that differ in them only differ in every short line that names the type, and such a line
    is new whole (no window of it is on the other page); a long line with the name changed inside
    is not (the windows on either side of the name are)."""
    u64 = [f"assert_eq!(u64::{const}, 0);" for const in ("MAX", "MIN", "BITS", "ONE", "ZERO", "EPS")]
    u32 = [line.replace("u64", "u32") for line in u64]
    assert OwnText(u32).added(OwnText(u64).novelty_text()) >= 6 * 11  # "32::max, 0);" and the like
    long64 = [f"This method of u64 returns the {w} value of the checked operation on two operands." for w in WORDS[:6]]
    long32 = [line.replace("u64", "u32") for line in long64]
    assert OwnText(long32).added(OwnText(long64).novelty_text()) == 0
    assert (
        gram_text("Version 3.1.2 of u64 in x86_64, h1 and 2024-05-01") == "version 0.0.0 of u64 in x86_64, h1 and 0-0-0"
    )


def _normalize_by_the_rules(text: str) -> str:
    """``normalize`` as its docstring states it, one regular expression a rule (the sketches of
    stored records were made by these: its faster form must give the same text)."""
    import unicodedata

    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    url = r"(?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://|(?<![a-z0-9.-])www\.)[!#-;=?-~]*[0-9a-z#$%&*+/=@_~-]"
    mail = r"(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"
    text = re.sub(f"{url}|{mail}", "0", text)  # a URL (not its last punctuation) or an e-mail address
    text = re.sub(r"(?<![0-9a-z])(?=[a-f]*[0-9])[0-9a-f]{7,}(?![0-9a-z])", "#", text)
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
    alphabet += ["http://", "www.", "@", ":", "/", ")", "+", "Ｗ"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(20000)]
    texts += ["deadbeef1 cafe1234567 abcdefa 1234567x x1234567 0x7f3a9c2 ab12cd34ef \n \n\t a\u00a0b ٣٤ 12中 文 x"]
    texts += ["See (https://a.example/x?y=1), www.b.example. Mail Ann.Lee+x@c.example.cn; 见https://d.example/路径。"]
    from helpers.data import DATA, load_pages

    if DATA.exists():
        from scrapy_simhash.text.extract import extract

        for bodies in load_pages().values():
            texts += [extract(body).visible for body in bodies[:60]]
    for text in texts:
        assert gram_text(text) == _normalize_by_the_rules(text), text[:200]


def test_numbers_dates_and_hashes_add_nothing() -> None:
    kept = ["Build 2024-05-01 of commit 3fa9c2d1e0 passed 1,204 tests in 35 minutes; see the log for details."]
    new = ["Build 2026-11-27 of commit 77bfaba4c2 passed 1,399 tests in 41 minutes; see the log for details."]
    assert OwnText(new).added(OwnText(kept).novelty_text()) == 0


@pytest.mark.slow
def test_sampled_estimate_is_unbiased_on_long_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text too long to keep is sampled (about 1 position in 25 here): each estimate is off by
    up to half, their mean is close, and scattered one-word edits stay well under 100."""
    monkeypatch.setattr(novelty, "TEXT_BYTES", 4096)  # texts of 40,000 characters, not 800,000
    ratios = []
    for seed in range(8):
        rng = random.Random(seed)
        kept = [sentence(rng, 20) for _ in range(300)]  # ~40,000 characters
        sketch = OwnText(kept).novelty_text()
        assert sketch[0] == 2 and len(sketch) <= 5 + 3 * NOVELTY_ANCHORS
        added = [sentence(rng, 30) for _ in range(4)]  # ~800 new characters in four runs
        new = kept[:100] + added[:2] + kept[100:200] + added[2:] + kept[200:]
        truth = brute_added("\n".join(kept), "\n".join(new))
        assert truth > 500
        ratios.append(OwnText(new).added(sketch) / truth)
        edited = list(kept)
        for i in rng.sample(range(300), 5):  # five one-word edits: little added
            edited[i] = edited[i].replace(" ", " q ", 1)
        assert OwnText(edited).added(sketch) < 100
    assert min(ratios) > 0.4 and max(ratios) < 1.6
    assert sum(ratios) / len(ratios) == pytest.approx(1.0, abs=0.2)


def test_sketch_is_the_same_in_another_process() -> None:
    text = "Première ligne: 価格は1,200円です。\nSecond line with a hash deadbeef42 and more words to fill it up."
    code = (
        "import sys; from scrapy_simhash.fingerprint.novelty import OwnText; "
        f"sys.stdout.write(OwnText({text.splitlines()!r}).novelty_text().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout == OwnText(text.splitlines()).novelty_text().hex()


def test_the_record_says_it_has_evidence_and_keeps_that_for_its_own_content_only() -> None:
    record = PageRecord(first_seen=1.0, last_fetched=2.0, last_changed=1.0, history=((5, None),), evidence=True)
    raw = record.to_bytes()
    assert PageRecord.from_bytes(raw) == record
    plain = PageRecord(first_seen=1.0, last_fetched=2.0, last_changed=1.0, history=((5, None),))
    assert len(raw) == len(plain.to_bytes()) and raw != plain.to_bytes()  # a flag: no bytes of it here
    assert PageRecord.from_bytes(record.updated(5, 0, False, now=3.0).to_bytes()).evidence
    assert not record.updated(6, 9, True, now=3.0).evidence  # never another content's


def test_framed_evidence_is_read_only_for_the_content_it_was_made_of() -> None:
    sketch = OwnText(["A kept page with enough words to make a sketch of its own text."]).novelty_text()
    framed = frame_evidence(0xABC, sketch)
    assert evidence_text(framed, 0xABC) == sketch
    assert evidence_text(framed, 0xABD) is None  # another content's (a write left by a record not written)
    assert evidence_text(None, 0xABC) is None and evidence_text(framed[:16], 0xABC) is None


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
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], SimhashIndex]]:
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
    examples = [
        (sentence(rng, 20), f"export function step{i}(room) {{ return connect(room, {i}); }}") for i in range(10)
    ]

    def page(caption: str, extra: str = "") -> str:
        body = "".join(f"<p>{text}</p><p>{caption}<br>{code}</p>" for text, code in examples)
        return (
            f"<html><head><title>Effects</title></head><body><main><h1>Effects</h1>{body}{extra}</main></body></html>"
        )

    kept, new = page("```js chat.js"), page("```js src/chat.js")
    runs = own_of(FP.fingerprint_page(new)).added_runs(own_of(FP.fingerprint_page(kept)).novelty_text())
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


def test_the_evidence_lives_apart_from_the_record(make_index: Callable[[], SimhashIndex]) -> None:
    """A kept page's record says it has evidence; the evidence (its novelty text, framed with
    its fingerprint) is the store's, apart: the record stays small."""
    index = make_index()
    tracker = ChangeTracker(index)
    kept = observe(tracker, "http://db.example/3.1.2", release_page(2))
    raw = index.get_record("http://db.example/3.1.2")
    assert kept.record.evidence and raw is not None and len(raw) < 400
    page = FP.fingerprint_page(release_page(2), url="http://db.example/3.1.2")
    assert index.get_evidence("http://db.example/3.1.2") == frame_evidence(page.fp, own_of(page).novelty_text(), own_of(page).heading)
    dropped = observe(tracker, "http://db.example/3.1.0", release_page(0))
    assert dropped.verdict == NEAR_DUPLICATE and not dropped.evidence_missing
    assert index.get_evidence("http://db.example/3.1.0") is None  # a dropped page keeps none
    assert not PageRecord.from_bytes(index.get_record("http://db.example/3.1.0") or b"").evidence
    index.delete_record("http://db.example/3.1.2")
    assert index.get_evidence("http://db.example/3.1.2") is None  # gone with its record


@pytest.mark.parametrize("how", ["deleted", "other content", "over the bound"])
def test_a_page_whose_look_alike_lost_its_evidence_is_kept_and_counted(
    make_index: Callable[[], SimhashIndex], how: str
) -> None:
    """No drop without evidence: the subset of a kept page (it adds nothing, and is dropped while
    the evidence is there) is kept when that page's evidence is gone, and says so."""
    index = make_index()
    tracker = ChangeTracker(index, evidence_max_bytes=64 if how == "over the bound" else 65536)
    first = observe(tracker, "http://db.example/3.1.2", release_page(2))
    assert first.record.evidence
    key = "http://db.example/3.1.2"
    if how == "over the bound":
        assert index.get_evidence(key) is None
    elif how == "deleted":
        index.put_record(key, index.get_record(key) or b"", evidence=b"")
    else:
        framed = index.get_evidence(key) or b""
        index.put_record(key, index.get_record(key) or b"", evidence=frame_evidence(first.fp ^ 1, framed[16:]))
    kept = observe(tracker, "http://db.example/3.1.0", release_page(0))
    assert (kept.verdict, kept.adds_to, kept.adds, kept.evidence_missing) == (NEW, key, None, True)
    # with the evidence in place, the same page is dropped
    whole = ChangeTracker(make_index())
    observe(whole, key, release_page(2))
    assert observe(whole, "http://db.example/3.1.0", release_page(0)).verdict == NEAR_DUPLICATE


def test_keep_adds_off_makes_and_stores_no_evidence(make_index: Callable[[], SimhashIndex]) -> None:
    index = make_index()
    tracker = ChangeTracker(index, keep_adds=0)
    assert not observe(tracker, "http://db.example/3.1.0", release_page(0)).record.evidence
    assert index.get_evidence("http://db.example/3.1.0") is None
    assert observe(tracker, "http://db.example/3.1.2", release_page(2)).verdict == NEAR_DUPLICATE


def test_middleware_counts_a_look_alike_kept_for_want_of_evidence(make_mw: Callable[..., Any]) -> None:
    mw = make_mw(SIMHASH_EVIDENCE_MAX_BYTES=64)
    run(mw, make_response("http://db.example/3.1.3", release_page(3)))
    assert run(mw, make_response("http://db.example/3.1.1", release_page(1)), [{"t": 1}]) == [{"t": 1}]
    assert mw.stats.get_value("simhash/evidence_missing") == 1
    assert mw.stats.get_value("simhash/kept/adds") == 1


@pytest.mark.slow
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
    # They resemble: within twice SIMHASH_MAX_DISTANCE (their headings and signatures, fingerprinted
    # since, tell them apart more than the descriptions alone did: distance 1 before).
    assert (FP.fingerprint_page(swipe).fp ^ FP.fingerprint_page(pinch).fp).bit_count() <= 6


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
    the page's entries (fingerprinted: ``text.entries.with_entries``) and count: the second class's
    page is kept. Counted without them, it would add only its heading and go."""
    kept = javadoc_page(
        "StampedLockVisitor", "StampedLock", ["acceptReadLocked", "acceptWriteLocked", "applyReadLocked"]
    )
    new = javadoc_page(
        "ReadWriteLockVisitor", "ReadWriteLock", ["lockInterruptibly", "acquireSharedNanos", "downgradeToRead"]
    )
    first, second = FP.fingerprint_page(kept), FP.fingerprint_page(new)
    off = ChangeTracker(make_index(), keep_adds=0)  # resemblance alone drops it
    observe(off, "http://lang.example/StampedLockVisitor", kept)
    assert observe(off, "http://lang.example/ReadWriteLockVisitor", new).verdict == NEAR_DUPLICATE
    doc = extract(new)
    lines = [doc.title, *doc.text.split("\n"), *doc.rest.split("\n"), *doc.inner.split("\n")]
    assert "lockInterruptibly(FailableConsumer consumer)" in doc.text.split("\n")  # an entry: fingerprinted
    without = OwnText([line for line in lines if "(" not in line])  # the member signatures left out
    assert without.added(own_of(first).novelty_text()) < 100 <= own_of(second).added(own_of(first).novelty_text())
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://lang.example/StampedLockVisitor", kept).verdict == NEW
    found = observe(tracker, "http://lang.example/ReadWriteLockVisitor", new)
    assert (found.verdict, found.adds_to) == (NEW, "http://lang.example/StampedLockVisitor")


ARTICLE_URL = "https://www.example.test/2024/05/some-article-slug.html"


def test_links_and_addresses_add_nothing() -> None:
    """A URL or an e-mail address counts as a number does (``0``): a print view's footer naming
    the article's URL, its footnoted links and a contact address add nothing; words around them do."""
    assert gram_text(f"Printed from {ARTICLE_URL}.") == "printed from 0."
    assert gram_text("Write to news.desk+tips@example.test (www.example.test/contact).") == "write to 0 (0)."
    assert gram_text("见https://example.test/a?b=1获取。") == "见0获取。"
    rng = random.Random(11)
    kept = [sentence(rng, 16) for _ in range(6)]
    links = [f"[{i}] https://www.example.test/2024/0{i}/the-story-that-came-before-number-{i}.html" for i in range(1, 4)]
    new = [*kept, f"Printed from {ARTICLE_URL}", *links, "Contact: the-editors@example.test"]
    assert OwnText(new).added(OwnText(kept).novelty_text()) == 0
    assert OwnText([*new, sentence(rng, 16)]).added(OwnText(kept).novelty_text()) >= 100


def print_view(body: str, footer: str) -> str:
    return (
        "<html><head><title>Harbour works begin - print</title></head><body><main><h1>Harbour works begin</h1>"
        f"{body}<p>{footer}</p></main></body></html>"
    )


def test_a_print_view_whose_footer_names_its_url_is_dropped(make_index: Callable[[], SimhashIndex]) -> None:
    """A print view is the article with a footer that names the article's URL (and its links as
    footnotes): a copy, dropped as the article's; counted by code points, the URLs alone added
    over ``SIMHASH_KEEP_ADDS`` and every print view was kept, its article exported twice."""
    rng = random.Random(12)
    body = "".join(f"<p>{sentence(rng, 18)}</p>" for _ in range(8))
    article = (
        "<html><head><title>Harbour works begin</title></head><body><nav><a href='/'>Home</a></nav><main>"
        f"<h1>Harbour works begin</h1>{body}</main><footer>Example News</footer></body></html>"
    )
    footer = (
        f"Printed from {ARTICLE_URL} [1] https://www.example.test/2024/04/harbour-plans-approved-by-council.html "
        "[2] https://www.example.test/topics/harbour-and-port-development/index.html"
    )
    printed = print_view(body, footer)
    pages = [FP.fingerprint_page(html, url=u) for html, u in ((article, ARTICLE_URL), (printed, f"{ARTICLE_URL}?print=1"))]
    assert own_of(pages[1]).added(own_of(pages[0]).novelty_text()) < 100
    tracker = ChangeTracker(make_index())
    assert observe(tracker, ARTICLE_URL, article).verdict == NEW
    copy = observe(tracker, f"{ARTICLE_URL}?print=1", printed)
    assert (copy.verdict, copy.duplicate_of) == (NEAR_DUPLICATE, ARTICLE_URL)
    # A print view with a sentence of its own (an editor's note) adds it.
    noted = FP.fingerprint_page(print_view(body, f"{sentence(rng, 18)} {footer}"), url=f"{ARTICLE_URL}?print=2")
    assert own_of(noted).added(own_of(pages[0]).novelty_text()) >= 100


#: A Chinese article (ten sentences), and one more sentence of 44 characters.
ZH_SENTENCES = [
    "今年春天，市图书馆在老城区开设了第一家二十四小时自助分馆，市民刷身份证就可以借书还书。",
    "分馆面积不大，但藏书超过一万册，还设有儿童阅读区、自习区和一间可以预约的小型会议室。",
    "开馆一个月以来，每天的借阅量都在三百册以上，夜间十点以后仍有不少附近的上班族前来看书。",
    "图书馆负责人介绍，自助分馆采用无线射频识别技术，每一本书都贴有电子标签，出入口能自动登记。",
    "为了保证安全，馆内安装了十二个摄像头，并与派出所联网，遇到紧急情况可以一键报警求助。",
    "不少老人一开始不会使用自助借书机，志愿者每天下午都会在馆内值守，手把手地教他们操作。",
    "市民王女士说，以前带孩子去总馆要坐四十分钟的公交车，现在走路五分钟就能到，周末常来。",
    "根据计划，明年全市还将新建八家自助分馆，优先安排在学校、社区服务中心和地铁站的附近。",
    "专家认为，公共文化设施应当离群众更近一些，让读书成为像买菜散步一样自然的日常生活。",
    "图书馆也提醒读者爱护图书，按时归还，逾期未还的图书将暂停借阅权限，直到归还为止。",
]
ZH_ADDED = "分馆每月还会举办两场亲子阅读会和一场作者见面会，报名方式会提前一周在图书馆的公众号上公布。"


def zh_page(sentences: list[str]) -> str:
    body = "".join(f"<p>{a}{b}</p>" for a, b in zip(sentences[::2], sentences[1::2]))
    if len(sentences) % 2:
        body += f"<p>{sentences[-1]}</p>"
    return (
        "<html lang='zh'><head><meta charset='utf-8'><title>二十四小时自助图书馆开馆</title></head><body>"
        "<nav><a href='/'>首页</a> <a href='/news'>新闻</a></nav><main><h1>二十四小时自助图书馆开馆</h1>"
        f"{body}</main><footer>本站版权所有</footer></body></html>"
    )


def test_a_han_character_weighs_three_and_a_window_is_sixteen_units() -> None:
    """What a page adds is counted by weight: a Han, kana or hangul character 3 (a short Latin
    word's worth), any other 1; a window is 16 units (16 Latin characters, 6 Han characters)."""
    assert novelty.weight("abc, d") == 6 and novelty.weight("图书馆。") == 12 and novelty.weight("カナ한글") == 12
    assert novelty.weight("分馆 open") == 11
    sentence_zh = gram_text(ZH_ADDED)
    kept = OwnText(ZH_SENTENCES).novelty_text()
    assert OwnText([*ZH_SENTENCES[:5], ZH_ADDED, *ZH_SENTENCES[5:]]).added(kept) == units(sentence_zh)
    # A line of the kept page with two clauses rewritten: the pieces it keeps (6 to 13 Han characters)
    # are windows of the kept page, the new pieces are under 16 characters: it adds nothing (with
    # windows of 16 characters nothing of it would be the kept page's, and it would add 29 characters).
    assert OwnText(["专家认为，公共文化设施应当更加贴近群众，让读书成为日常生活。"]).added(kept) == 0


def test_a_chinese_page_that_adds_one_sentence_is_kept(make_index: Callable[[], SimhashIndex]) -> None:
    """One Chinese sentence of 44 characters is as much as an English sentence of about 130: the
    page that adds it is kept (counted by code points it added 44, under ``SIMHASH_KEEP_ADDS``,
    and was dropped); the page without it, fetched after it, adds nothing and is dropped."""
    small, big = zh_page(ZH_SENTENCES), zh_page([*ZH_SENTENCES[:5], ZH_ADDED, *ZH_SENTENCES[5:]])
    off = ChangeTracker(make_index(), keep_adds=0)
    observe(off, "http://lib.example/a", small)
    assert observe(off, "http://lib.example/b", big).verdict == NEAR_DUPLICATE  # resemblance alone drops it
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://lib.example/a", small).verdict == NEW
    kept = observe(tracker, "http://lib.example/b", big)
    assert (kept.verdict, kept.adds_to) == (NEW, "http://lib.example/a")
    assert kept.adds == units(gram_text(ZH_ADDED)) == 133  # 44 Han characters and a comma
    again = observe(tracker, "http://mirror.example/a", small)
    assert again.verdict == NEAR_DUPLICATE


def test_a_table_of_short_cells_counts_by_its_rows(make_index: Callable[[], SimhashIndex]) -> None:
    """A page that adds a table of short cells to a kept page (a glossary's pitch names in five
    languages): each cell is shorter than the window that counts, but each row of cells is one
    line of its own text (``Document.rows``): the page is kept. Counted cell by cell, it would add
    nothing and go."""
    rng = random.Random(11)
    prose = "".join(f"<p>{sentence(rng, 18)}</p>" for _ in range(10))
    cells = [[word[:7] for word in rng.sample(WORDS, 5)] for _ in range(12)]
    table = "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in cells) + "</table>"

    def page(extra: str = "") -> str:
        body = f"<main><h1>Pitch names</h1>{prose}{extra}</main>"
        return f"<html><head><title>Pitch names</title></head><body>{body}</body></html>"

    kept, new = page(), page(table)
    off = ChangeTracker(make_index(), keep_adds=0)  # resemblance alone drops it
    observe(off, "http://glossary.example/pitch", kept)
    assert observe(off, "http://glossary.example/pitch-names", new).verdict == NEAR_DUPLICATE
    doc = extract(new)
    assert " ".join(cells[3]) in doc.rows.split("\n") and max(map(len, cells[3])) < WINDOW == ROW_CHARS
    without = OwnText([doc.title, *doc.text.split("\n"), *doc.rest.split("\n"), *doc.inner.split("\n")])
    sketch = own_of(FP.fingerprint_page(kept)).novelty_text()
    assert without.added(sketch) < 100 <= own_of(FP.fingerprint_page(new)).added(sketch)
    tracker = ChangeTracker(make_index())
    assert observe(tracker, "http://glossary.example/pitch", kept).verdict == NEW
    found = observe(tracker, "http://glossary.example/pitch-names", new)
    assert (found.verdict, found.adds_to) == (NEW, "http://glossary.example/pitch")


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
    from scrapy_simhash.schedule import FreshnessPolicy
    from scrapy_simhash.store.record import change_size

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
    assert verdict.record is not None and verdict.record.schedule is not None
    assert verdict.record.schedule["recent"][0][1] == pytest.approx(max(size, tracker.change_threshold + 1), abs=1e-3)


@pytest.mark.skipif(not REVISIONS.is_file(), reason="../shared/data/revisions is absent")
def test_change_size_ranks_real_revisions_as_their_jaccard() -> None:
    import gzip
    import json

    from scrapy_simhash.store.record import change_size

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


@pytest.mark.parametrize("seed", range(4))
def test_dedup_counts_a_line_as_the_crawl_does(seed: int) -> None:
    """What ``scrapy-simhash dedup`` and the item pipeline count a short text as adding to a kept
    one that it resembles beyond ``max_distance`` (:func:`shorttext.added`) is
    :meth:`OwnText.added`'s count, Chinese lines, links and numbers included."""
    from scrapy_simhash.decision.shorttext import added

    rng = random.Random(seed)
    english = [sentence(rng) + f" See https://docs.example/{rng.randrange(999)}/page.html." for _ in range(5)]
    chinese = ZH_SENTENCES[seed : seed + 5]
    for lines in (english, chinese, english[:2] + chinese[:3]):
        kept = "\n".join(lines)
        new = "\n".join([*lines[:2], ZH_ADDED if seed % 2 else sentence(rng, 12), *lines[3:], lines[0]])
        counted = added(new, kept)
        assert counted == OwnText.normalised(gram_text(new)).added(OwnText.normalised(gram_text(kept)).novelty_text())
        assert counted == brute_added(kept, new)


def test_chinese_chrome_lines_count_their_characters_and_sentences_weigh_more() -> None:
    """A syndicated copy's portal menu, byline and editor's note are no sentences: each character
    counts 1 (the demo's portal copy of an article counted 233 by weight and was exported twice);
    a Chinese sentence added counts by weight."""
    article = ["社区长者食堂今天正式开张，附近六十岁以上的老人可以凭卡用餐。", "食堂每天供应午餐和晚餐，菜单每周更换一次。"]
    chrome = ["江城门户|新闻|社会|财经|房产|汽车|论坛|设为首页|加入收藏", "转载自:晨光网作者:记者林晓雨【字号大中小】", "(本文转自晨光网,如有侵权请联系删除)【责任编辑:赵磊】"]
    kept = OwnText(article).novelty_text()
    copy = OwnText([chrome[0], chrome[1], *article, chrome[2]]).added(kept)
    assert copy == sum(len(gram_text(line)) for line in chrome) < defaults.SIMHASH_KEEP_ADDS
    added = "街道还为行动不便的老人提供送餐上门服务，每份只收十元，志愿者每天中午把饭菜送到老人家中。"
    assert OwnText([*article, added]).added(kept) == units(gram_text(added)) >= defaults.SIMHASH_KEEP_ADDS


def test_a_sentence_whose_end_the_kept_page_shares_still_weighs_as_prose() -> None:
    """A paragraph added to an article whose last clauses a headline of the kept page's sidebar
    repeats: those clauses are covered, and the run left, the new clauses, holds no sentence end of
    its own. Its clauses in a line of prose weigh as prose (the synthetic pair that counted 99 by
    its characters, under ``SIMHASH_KEEP_ADDS``, and was dropped); a menu line, and a row of ad
    links set inside a paragraph (no clause of it: a syndicated text's), still count their characters."""
    article = ZH_SENTENCES[:6]
    headline = "自治区延续部分到期税收优惠政策预计为纳税人减负一百八十亿元"
    added = (
        "上述政策三年执行期满后，为了进一步优化我区营商环境，更好地服务六稳六保大局，支持十四五时期"
        "全区民营经济高质量发展，自治区决定延续执行除印花税所涉税收优惠政策以外的其余五项税收优惠政策。"
        "预计到年末，为纳税人减负一百八十亿元。"
    )
    kept = OwnText(article, shown=[*article, headline]).novelty_text()
    runs = OwnText([*article, added]).added_runs(kept)
    assert runs and all("\u3002" not in run for run in runs)  # the sentence ends are the kept page's
    count = OwnText([*article, added]).added(kept)
    assert count == sum(units(run) for run in runs) >= defaults.SIMHASH_KEEP_ADDS
    assert sum(len(run) for run in runs) < defaults.SIMHASH_KEEP_ADDS  # counted by characters: dropped
    assert count == brute_added("\n".join([*article, headline]), "\n".join([*article, added]))
    menu = "江城门户|新闻|社会|财经|房产|汽车|论坛|设为首页|加入收藏|联系我们"
    assert OwnText([*article, menu]).added(kept) == len(menu)
    ads = "光纤到户理想合作伙伴液态奶销售额领先分类信息无限商机"
    line = ZH_SENTENCES[2]
    inline = [*article[:2], line[:12] + ads + line[12:], *article[3:]]
    assert OwnText(inline).added(kept) == len(ads) == brute_added("\n".join(article), "\n".join(inline))


def test_a_copy_of_a_table_with_link_cells_adds_nothing() -> None:
    """A member table whose rows are a plain cell and a cell of links (Doxygen's ``virtual`` |
    ``~DOMText ()``): the plain cells are the page's own lines, the link cells come after them in
    what it shows, apart from their rows. The sketch holds the page's rows, so a copy's rows (its
    print view's) are compared with rows and add nothing; sketched without them, they would add
    over 100 characters and the copy would be kept."""
    rng = random.Random(12)
    prose = [sentence(rng, 18) for _ in range(6)]
    names = [word.capitalize() + "Node" for word in rng.sample(WORDS, 14)]
    lines = ["DOMText Class Reference", *["virtual"] * len(names), *prose]
    shown = [*lines, *(f"~{n} ()" for n in names)]
    rows = [f"virtual ~{n} ()" for n in names]
    # (the copy's print view lacks a paragraph: its lines are no part of the kept page's as they are)
    mine = [*lines[:-6], *prose[1:]]
    kept, copy = OwnText(lines, shown=shown, rows=rows), OwnText(mine, shown=[*mine, *shown[len(lines) :]], rows=rows)
    assert copy.added(kept.novelty_text()) == 0
    assert copy.added(OwnText(lines, shown=shown).novelty_text()) >= 100


def test_a_row_the_kept_page_also_has_adds_nothing_however_its_cells_are_ordered() -> None:
    """A page's own lines come by kind (its text, then its other content-like lines, then the
    lines inside its content), so a row whose cells are of two kinds (a code block's short lines:
    ``Play Movie`` in the text, ``</Button>`` inside it) is not in the page's sketch as its
    page has it; the row is in the sketch as a line, so the same row on a later page (the next
    revision of a tutorial, the untouched refetch of a table) is covered whole. Without it, the
    same row counted as added (61 characters) on every revision of the page."""
    prose = [sentence(random.Random(seed), 18) for seed in range(3)]
    code = ["<Button>", "Play Movie", "</Button>", "<Button>", "Upload Image", "</Button>"]
    row = " ".join(code)

    def own(first: str) -> OwnText:
        text = [first, *prose, "Play Movie", "Upload Image"]  # the content region's lines
        inner = ["<Button>", "</Button>"]  # the short markup lines inside the content
        return OwnText(["Buttons", *text, *inner], shown=["Buttons", first, *prose, *code], rows=[row])

    kept = own("Each button passes its own handler down to the shared component of the toolbar.")
    new = own("Each button passes its own handler down to the common component of the toolbar.")
    assert new.added_runs(kept.novelty_text()) == []
    assert new.added(kept.novelty_text()) == 0.0
