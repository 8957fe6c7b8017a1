"""What a page adds: the containment check that every near-duplicate drop passes first.

Resemblance finds the candidate (the SimHash index, the change sketches); containment decides (Broder,
"On the resemblance and containment of documents", 1997). A page that resembles a kept page is
dropped only when its own text says next to nothing that the kept page's does not: a patch
release's page that repeats the base release's notes and adds its own, an API page of another
class, an article with one paragraph more are kept.

**Own text.** A page's content-like text (its title, the fingerprinted text, every other
content-like block: what the change sketch covers, and the other lines inside its content:
``Document.inner``, an API page's member signatures; chrome, and link lists and bylines outside
the content, are not in it; ``fingerprint.own_text`` leaves out the other blocks' lines that its
site's learned template holds), normalised (:func:`gram_text`): NFKC, lower case, runs of spaces
as one (none next to a Han character or kana: Chinese and Japanese put none between words), one
line break between lines, every URL and e-mail address as ``0``, every hexadecimal run of 7 or
more characters with a digit in it (a commit, a build id) as ``#`` and every number as ``0`` (digits
right after a Latin letter are part of a name: ``u64``, ``h1``).
So a changed date, counter, hash or link (a print view's "Printed from https://...") adds nothing.

**What it is measured against**: all that the kept page shows (``OwnText(shown=...)``: its own
text first, then the rest of its visible text: a table, an embedded post, a caption that the
content region left out), its lines taken as one text, so that two pages that break their lines or
table cells differently still match.

**What a page adds**, in characters by weight (:func:`weight`: a Han, kana or hangul character
counts :data:`DENSE_WEIGHT`, about what a short Latin word does, any other character 1, so that
``SIMHASH_KEEP_ADDS`` is one short sentence in any script): the characters of its own text that no
window of :data:`WINDOW` units within their line (16 Latin characters, 6 Han characters) shares with
the kept page, counted in runs of :data:`WINDOW` characters or more, each distinct line once. A
sentence or a line added counts its length; a deletion nothing; a word or a
name changed inside a long line nothing (the windows on either side of it are on the kept page: a
typo fixed in ten places adds nothing); a short line that differs in a name
(``assert_eq!(u64::MAX, ..)`` on one type's page, ``u32`` on its sibling's) counts whole, as a
reader would: sibling API pages are both kept; the same new line ten times (a code block's caption
renamed in every example) counts once; a table's row of short cells counts as one line
(``Document.rows``: a cell alone is shorter than a window). Windows of 16 characters in Latin text, as the benchmarks'
content-loss judges count (with 12, a patch note whose phrases recur in the earlier notes counted
under 100 characters where the judge counts over 100). In Chinese the windows are 6 Han characters
and the runs still 16 characters: of the real Chinese revisions at Jaccard >= 0.95 that add under
100 characters, 0.96 count under 100 so; with windows of 16 Han characters (the pieces between
scattered small edits are then the kept page's no more) 0.90; with runs of 16 units too (each small
edit counts) 0.93 (``benchmarks/quality/count_windows.py``).

**A page about another named thing** (:meth:`OwnText.names_other`): a page whose own heading (its
cleaned title, numbers and versions out: :func:`heading_name`) has another key than the kept
page's, and which the kept page shows nowhere, is no copy of it however little it adds: a sibling
method's page. The key (32 bits) is stored in the page's evidence, beside its novelty text. So is a page
whose own text names in code (:func:`code_names`: ``std::unordered_map``, ``QHash::begin``,
``const_iterator``, ``getValue``) what the kept page names otherwise (:func:`renames`: each has a
name the other lacks): sibling API pages of one template under one heading, about two containers.

**The novelty text** kept in each record (:meth:`OwnText.novelty_text`): the text the page shows, as the page
has it (normalised when a later page is compared with it: most pages never are), compressed,
when that takes at most :data:`TEXT_BYTES` (texts up to about 800,000 characters of English), and
the comparison is exact; else a sample (``5 + 3 *`` :data:`NOVELTY_ANCHORS` bytes at
most): the positions whose gram hash (character 12-grams, :data:`GRAM`) is among the page's
smallest (the anchors, at most :data:`NOVELTY_ANCHORS` distinct ones), each as 16 bits of its gram's
hash and one byte of the double gram's (the 24 characters that start there). A new page is then
compared at its positions whose gram hash falls in the same range: ``new - 11/12 (new2 - new)``
(an inserted run of ``n`` characters has ``n + 11`` new grams and ``n + 23`` new double grams, a
deletion 11 and 23), scaled by the share of the hash space that the range covers: an estimate
whose error grows with the number of edits and the length of the page (on 40,000-character texts,
within about half of the truth); each position counts its first character's weight.

Deterministic across processes, machines and Python versions: code points and fixed 64-bit
arithmetic (numpy, wrapping), no ``hash()``.
"""

from __future__ import annotations

import hashlib
import re
import struct
import threading
import unicodedata
from typing import TYPE_CHECKING, cast

import numpy as np
import zstandard

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "DENSE_WEIGHT",
    "GRAM",
    "NOVELTY_ANCHORS",
    "TEXT_BYTES",
    "WINDOW",
    "OwnText",
    "added_to",
    "code_names",
    "gram_text",
    "heading_key",
    "heading_name",
    "one_line",
    "renames",
    "run_weight",
    "uncovered",
    "weight",
]

#: Characters per gram of a sampled novelty text (and twice that for the seam test, the double gram).
GRAM = 12
#: Characters per window of the exact comparison: a character is in the kept page when a window of
#: this many around it, within its line, is; runs of fewer uncovered characters add nothing.
WINDOW = 16
#: What a Han, kana or hangul character (CJK punctuation included) counts in what a page adds: the
#: Chinese translation of a 100-chapter English book is as long as the original with its Han
#: characters counted 3.2 (``benchmarks/quality/char_weight.py``); the extraction weighs them 3 too.
DENSE_WEIGHT = 3
#: Distinct anchors a novelty text keeps at most (3 bytes each).
NOVELTY_ANCHORS = 1600
#: Novelty text kinds: a sample; the text as the page has it (normalised when it is compared).
_SAMPLED, _RAW_TEXT = 2, 5
_SAMPLED_BYTE, _RAW_BYTE = (bytes((k,)) for k in (_SAMPLED, _RAW_TEXT))
#: A page's own text is kept whole (compressed) when that takes at most this many bytes (and is
#: at most 4 * MAX_TEXT bytes of UTF-8): texts up to about 800,000 characters of English. With 64 KiB
#: (150,000 characters), a real release-notes page of 350,000 characters kept a sample, and a
#: refetch adding a 300-character paragraph counted 0-330 (``benchmarks/quality/big_page_adds.py``).
TEXT_BYTES = 1 << 18
#: zstd's level for a novelty text that holds the text (``benchmarks/scale/evidence_codecs.py``: on real pages up to 10%
#: smaller than zlib's level 1, mostly faster; level 19 is 10-20% smaller at 10-60 ms a page).
ZSTD_LEVEL = 3
#: The longest own text read back (characters).
MAX_TEXT = 1 << 20
_SPACE = 1 << 32

#: A hexadecimal run: 7 or more of [0-9a-f], a digit among them, not inside a word. This pattern and
#: the next open with a character class, the look-behind after it, so that the regular expression
#: engine skips ahead to a character that may start a match (1.5x and 2x as fast on a page's text).
_HEX_RE = re.compile(r"[0-9a-f](?<![0-9a-z].)(?:(?<=[0-9])|(?=[a-f]*[0-9]))[0-9a-f]{6,}(?![0-9a-z])")
#: A URL (a scheme and "://", or "www.", then printable ASCII but spaces, quotes and angle brackets,
#: not ending in punctuation) or an e-mail address: a link says nothing new, like a number.
_ADDRESS_RE = re.compile(
    r"(?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://|(?<![a-z0-9.-])www\.)[!#-;=?-~]*[0-9a-z#$%&*+/=@_~-]"
    r"|(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"
)
#: Where an address may be (:func:`_mask_addresses`): what it holds, the characters before that
#: (a scheme's, a mailbox's), those after it (printable ASCII but spaces, quotes, angle brackets).
_ADDRESS_HIT_RE = re.compile(r"://|www\.|@")
_ADDRESS_HEAD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-_%")
_ADDRESS_TAIL_RE = re.compile(r"[!#-;=?-~]*")
#: Dense scripts (see :data:`DENSE_WEIGHT`): hangul jamo, CJK radicals to unified ideographs (kana,
#: CJK punctuation, hangul compatibility jamo), hangul syllables, compatibility ideographs and forms,
#: half- and full-width forms, the supplementary ideographs.
_DENSE_RE = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]"
)
_DENSE_RANGES = [(0x1100, 0x11FF), (0x2E80, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF),
                 (0xFE30, 0xFE4F), (0xFF00, 0xFFEF), (0x20000, 0x3FFFF)]
#: A number: digits not right after a Latin letter or "_" (``u64``, ``h1``, ``x86_64`` are names).
_DIGITS_RE = re.compile(r"\d(?<![a-z_0-9].)\d*")
#: White space next to a Han character or kana: Chinese and Japanese put no space between words, so
#: a break there is layout (a table's cells, one per line on a page, run together in its text).
_CJK_SPACE_RE = re.compile(r" (?:(?<=[\u2e80-\u9fff\uf900-\ufaff] )|(?=[\u2e80-\u9fff\uf900-\ufaff]))")
_C1 = np.uint64(0x9E3779B97F4A7C15)
#: _C1's inverse (mod 2 ** 64): a window's hash from prefix sums (see ``_windows``).
_C1_INV = np.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)
_C1_GRAM = np.uint64(pow(0x9E3779B97F4A7C15, 8, 1 << 64))  # _C1 ** GRAM: shifts a gram's hash by a gram
_NEWLINE = np.uint32(10)
_S30, _S27, _S31, _S32, _S8 = (np.uint64(s) for s in (30, 27, 31, 32, 8))
_BYTE = np.uint64(0xFF)
_LOW16 = np.uint64(0xFFFF)
_HEAD = struct.Struct("<BI")
#: What a heading's name leaves out: a number or a version (``3.12.0``, ``v2``, ``2026-11-30``; not the
#: digits right after a letter or "_": ``u64``, ``x86_64``, ``sqlite3`` are names) ...
_VERSION_RE = re.compile(r"(?<!\w)v?\d+")
#: ... and every character that is no letter or digit (a word's separator).
_NOT_NAME_RE = re.compile(r"[\W_]+")
#: A name in code (:func:`code_names`): words joined by "::" or "->" (``std::unordered_map``,
#: ``QHash::begin``), a word with an inner "_" (``unordered_set``, ``const_iterator``), or a word in
#: CamelCase (``QHash``, ``QSet``, ``getValue``, ``JavaScript``); not a dotted word (``e.g``, a host).
_CODE_NAME_RE = re.compile(
    r"(?<![\w:])(?:[A-Za-z_]\w*(?:(?:::|->)~?[A-Za-z_]\w*)+"
    r"|[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9](?![\w:])"
    r"|(?:[a-z]+[A-Z]|[A-Z]+[a-z]+[A-Z]|[A-Z]{2,}[a-z])\w*(?![\w:]))"
)
_NAME_DIGITS_RE = re.compile(r"\d+")
#: A URL, a path or an e-mail address, whatever its case: no name in code (a print view's
#: "Printed from https://.../c3ref/txn_state.html" names nothing its page does not).
_ADDRESS_ANY_RE = re.compile(r"(?i)\S*/\S*|www\.\S*|\S+@[a-z0-9-]+(?:\.[a-z0-9-]+)+")


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise (wrapping uint64 arithmetic)."""
    x = (x ^ (x >> _S30)) * _C2
    x = (x ^ (x >> _S27)) * _C3
    return cast("np.ndarray", x ^ (x >> _S31))


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (``np.unique``'s, by a sort: several times faster here)."""
    values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


#: What makes a run of dense text prose (see :func:`run_weight`): a sentence's end (NFKC: ！？； are !?;) ...
_SENTENCE_MARK_RE = re.compile("[\u3002!?;]")
#: ... or a clause's (NFKC: ， is ","), in a line that ends a sentence.
_CLAUSE_MARK_RE = re.compile("[,\u3001]")


def weight(text: str) -> int:
    """What ``text`` counts in what a page adds: :data:`DENSE_WEIGHT` a Han, kana or hangul
    character (CJK punctuation included), 1 any other."""
    if text.isascii():
        return len(text)
    return len(text) + (DENSE_WEIGHT - 1) * len(_DENSE_RE.findall(text))


def _weights(cps: np.ndarray) -> np.ndarray:
    """:func:`weight` of each code point of ``cps`` (``uint32``)."""
    dense = np.zeros(len(cps), dtype=bool)
    for low, high in _DENSE_RANGES:
        dense |= (cps >= low) & (cps <= high)
    return np.where(dense, DENSE_WEIGHT, 1)


def _mask_addresses(text: str) -> str:
    """``text`` (lower case) with every URL and e-mail address as ``0`` (:data:`_ADDRESS_RE`, run
    only where one may be: around each "://", "www." and "@", from the run of characters a scheme
    or a mailbox may have before it to the end of the printable ASCII after it)."""
    if "://" not in text and "www." not in text and "@" not in text:
        return text
    parts: list[str] = []
    done = 0
    for hit in _ADDRESS_HIT_RE.finditer(text):
        if hit.start() < done:
            continue  # in the part just masked
        start = hit.start()
        while start > done and text[start - 1] in _ADDRESS_HEAD:
            start -= 1
        end = _ADDRESS_TAIL_RE.match(text, hit.end()).end()  # type: ignore[union-attr]
        parts += (text[done:start], _ADDRESS_RE.sub("0", text[start:end]))
        done = end
    parts.append(text[done:])
    return "".join(parts)


def gram_text(text: str) -> str:
    """``text`` as its grams see it: NFKC, lower case, URLs and e-mail addresses as ``0``,
    hexadecimal runs as ``#``, numbers as ``0``, every run of white space in a line as one space
    (none next to a Han character or kana), one line break between lines, no empty line."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = _DIGITS_RE.sub("0", _HEX_RE.sub("#", _mask_addresses(text.lower())))
    # White space but line breaks (``str.split``'s: Unicode's, the separators included) as one
    # space, none at a line's ends; no empty line: two passes of str methods, not of regexes.
    text = "\n".join(filter(None, [" ".join(line.split()) for line in text.split("\n")]))
    return text if text.isascii() else _CJK_SPACE_RE.sub("", text)


def heading_name(heading: str) -> str:
    """A page's own heading (its title as :mod:`~scrapy_simhash.text.title` cleans it: the name of
    the function, class, module or entry it documents) as its copies keep it, or a text to look
    for it in: NFKC, case folded, numbers and versions out, its words (letters and the digits of
    names) one space apart (none next to a Han character or kana)."""
    words = " ".join(_NOT_NAME_RE.sub(" ", _VERSION_RE.sub(" ", unicodedata.normalize("NFKC", heading).casefold())).split())
    return words if words.isascii() else _CJK_SPACE_RE.sub("", words)


def heading_key(heading: str) -> int | None:
    """32 bits of the BLAKE2b hash of :func:`heading_name` (never 0: a page's evidence says "none"
    so), ``None`` when it is empty (no evidence)."""
    return _name_key(heading_name(heading))


def _name_key(name: str) -> int | None:
    """:func:`heading_key` of the heading whose :func:`heading_name` is ``name``."""
    if not name:
        return None
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return int.from_bytes(digest, "little") or 1


class OwnText:
    """A page's own text, ready to be compared with kept pages' novelty texts and to give its own.

    ``lines``: its content-like lines; ``template``: lines to leave out. ``shown``: every line the
    page shows (its title and whole visible text, chrome and template included), what its novelty text
    holds: a later page is measured against all that this one shows, since dropping it loses
    nothing a reader of this one sees (a table, an embedded post, a caption that the content
    region left out); ``None``: its own text. ``rows``: more lines that count as its own text but
    are no part of what it shows (its table rows, each a line of cells that its lines hold one by
    one: ``Document.rows``). ``heading``: the page's own heading (its cleaned title), kept beside
    its novelty text in its evidence: :attr:`heading`."""

    __slots__ = ("_h8", "_h16", "_kept", "_lines", "_name", "_rest", "_rows", "_text", "heading")
    _h8: np.ndarray | None
    _h16: np.ndarray | None
    _lines: list[str] | None
    _rest: list[str] | None
    _kept: tuple[bytes, str] | None
    _rows: list[str]
    _text: str | None
    #: The key of the page's own heading (:func:`heading_key`; ``None``: none).
    heading: int | None

    def __init__(
        self,
        lines: Iterable[str],
        template: set[str] | frozenset[str] = frozenset(),
        shown: Iterable[str] | None = None,
        rows: Iterable[str] = (),
        heading: str = "",
    ) -> None:
        # Kept as they are: normalised only when compared (most pages never are), and kept raw.
        self._lines = [line for line in lines if line and line not in template]
        self._rows = [line for line in rows if line and line not in template]
        self._text = None
        self._h8 = self._h16 = None
        self._rest = None
        self._kept = None
        self._name = heading_name(heading) if heading else ""
        self.heading = _name_key(self._name)
        if shown is not None:
            mine = set(self._lines)
            self._rest = [line for line in shown if line and line not in mine]

    @classmethod
    def normalised(cls, text: str) -> OwnText:
        """The own text whose normalised form (:func:`gram_text`) is ``text``; its novelty text holds
        that text."""
        own = object.__new__(cls)
        own._lines = own._rest = None
        own._rows = []
        own._text = text
        own._h8 = own._h16 = own.heading = own._kept = None
        own._name = ""
        return own

    @property
    def text(self) -> str:
        """The normalised own text (:func:`gram_text`), made when first needed."""
        if self._text is None:
            self._text = gram_text("\n".join(self._lines or ()))
        return self._text

    @property
    def chars(self) -> int:
        """The normalised own text's length."""
        return len(self.text)

    @property
    def has_text(self) -> bool:
        """Whether there is any own text (without normalising it)."""
        if self._lines is None:
            return bool(self._text)
        return any(not line.isspace() for line in self._lines)

    def _hashes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each position's gram hash, and its double gram's (the text's end padded with zeros)."""
        h8, h16 = self._h8, self._h16
        if h8 is None or h16 is None:
            norm = self.text
            if not norm:
                h8 = h16 = np.empty(0, dtype=np.uint64)
            else:
                # Polynomial hashes of the grams (wrapping 64-bit arithmetic), one pass a character;
                # a double gram's is its two halves', combined; then splitmix64's finaliser.
                cps = np.frombuffer(norm.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
                n = max(len(cps) - GRAM + 1, 1)
                m = n + GRAM
                cps = np.concatenate([cps, np.zeros(m + GRAM - 1 - len(cps), dtype=np.uint64)])
                poly = np.zeros(m, dtype=np.uint64)
                for j in range(GRAM):
                    poly *= _C1
                    poly += cps[j : j + m]
                h16 = _mix(poly[:n] * _C1_GRAM + poly[GRAM:] + _C3)
                h8 = _mix(poly[:n])
            self._h8, self._h16 = h8, h16
        return h8, h16

    def _raw(self, kept: bytes) -> str:
        """The text the novelty text ``kept`` holds, as its page had it (``_inflate``); the last one
        read is kept, as the count and the names rule read the same one."""
        memo = self._kept
        if memo is None or memo[0] is not kept:
            memo = self._kept = (kept, _inflate(kept, normalised=False))
        return memo[1]

    def novelty_text(self, text_bytes: int | None = None) -> bytes:
        """The novelty text kept in the page's record (see the module's docstring) of what the page shows
        (``shown``, else its own text): 5 and that text as the page has it (its own lines, then
        the rest, then its table rows; the normalised text for an own text made by :meth:`normalised`), compressed
        (zstd), when that takes at most ``text_bytes`` (default :data:`TEXT_BYTES`); else 2, the largest gram hash it covers
        (``uint32``), the low 16 bits of each anchor's gram hash (``uint16``) and its double gram's
        byte, in ascending order of the codes."""
        lines = self._lines
        normalised = lines is None
        # Its table rows too: a later page's rows are compared with rows, not with cells that the
        # shown text orders its own lines first (a cell of links after the others).
        raw = self.text if lines is None else "\n".join([*lines, *(self._rest or ()), *self._rows])
        encoded = raw.encode("utf-8", "surrogatepass")
        packed = _codec().compress(encoded)
        if len(packed) <= (TEXT_BYTES if text_bytes is None else text_bytes) and len(encoded) <= 4 * MAX_TEXT:
            return _RAW_BYTE + packed  # read back whole (``_inflate``)
        shown = self if normalised else OwnText.normalised(gram_text(raw))
        h8, h16 = shown._hashes()
        keys = h8 >> _S32
        codes = _distinct((keys << _S8) | (h16 & _BYTE))
        if len(codes) > NOVELTY_ANCHORS:  # the anchors: every code of the smallest gram hashes, whole groups only
            codes = codes[: np.searchsorted(codes, (codes[NOVELTY_ANCHORS] >> _S8) << _S8)]
        return b"".join(
            (
                _HEAD.pack(_SAMPLED, int(codes[-1] >> _S8)),
                ((codes >> _S8) & _LOW16).astype("<u2").tobytes(),
                (codes & _BYTE).astype(np.uint8).tobytes(),
            )
        )

    def names_other(self, kept: bytes, heading: int | None) -> bool:
        """Whether this page is about something else than the page whose novelty text is ``kept`` and
        whose heading key is ``heading``: its own heading names something else (both have one,
        their keys differ, and that page shows nothing of this heading: :func:`heading_name` of its
        text, from a word's start: a syndicated copy under another section title shows the
        headline; a sibling's page does not name its sibling), or its own text names in code what
        that page names otherwise (:func:`renames`: ``QHash::begin`` on one container's page,
        ``QSet::begin`` on its sibling's, under one heading). ``False`` when ``kept`` is a sample
        (its text is not known)."""
        if kept[:1] != _RAW_BYTE:
            return False
        if self.heading is not None and heading is not None and heading != self.heading:
            shown = heading_name(gram_text(self._raw(kept)))
            # From a word's start: a title cut short ("... announcing wif") is still the headline.
            if (f" {self._name}" if self._name.isascii() else self._name) not in f" {shown}":
                return True
        if self._lines is None:
            return False
        return renames("\n".join(self._lines), "\n".join(self._rest or ()), self._raw(kept))

    def added(self, kept: bytes) -> float:
        """Characters (by :func:`weight`) of this text in runs that the page whose novelty text is ``kept`` lacks: exact
        when ``kept`` holds that page's text, else estimated from the positions in its anchors'
        range (a gram is matched there by 16 bits of its hash: a chance match hides about
        ``NOVELTY_ANCHORS / 65536`` of the new positions). ``ValueError``: ``kept`` is no novelty text."""
        kind = kept[:1]
        if kind == _RAW_BYTE:
            if self._lines is not None:
                raw = self._raw(kept)
                if "\n".join(self._lines) in raw:
                    return 0.0  # a copy, or a part, as the pages have it: neither text normalised
                text = gram_text(raw)
            else:
                text = gram_text(self._raw(kept))
            return added_to(self._compared(), text)  # a copy, or a part: 0 without hashing
        h8, h16 = self._hashes()
        n, rest = divmod(len(kept) - _HEAD.size, 3)
        if kind != _SAMPLED_BYTE or rest or n < 1:
            raise ValueError(f"not a novelty text ({len(kept)} bytes)")
        _, top = _HEAD.unpack_from(kept)
        keys = np.frombuffer(kept, dtype="<u2", count=n, offset=_HEAD.size).astype(np.uint64)
        codes = (keys << _S8) | np.frombuffer(kept, dtype=np.uint8, count=n, offset=_HEAD.size + 2 * n)
        mine = h8 >> _S32
        inside = mine <= top
        mine, mine16 = mine[inside], h16[inside]
        scale = _SPACE / (top + 1)
        at = self.text.encode("utf-32-le", "surrogatepass")[: 4 * len(h8)]
        weights = None if self.text.isascii() else _weights(np.frombuffer(at, dtype=np.uint32))[inside]
        return cast("float", scale * _seams_out(mine & _LOW16, keys, ((mine & _LOW16) << _S8) | (mine16 & _BYTE), codes, weights))

    def added_runs(self, kept: bytes, least: int = WINDOW) -> list[str] | None:
        """The runs of this (normalised) text, of ``least`` characters or more, that no window of
        the page whose novelty text is ``kept`` covers (each distinct line once), each run once, in the
        order of the text: what it adds, to show a person; ``None`` when ``kept`` is a sample (its
        text is not known)."""
        if kept[:1] != _RAW_BYTE:
            return None
        return list(dict.fromkeys(self._uncovered(_inflate(kept), least)))

    def _uncovered(self, kept: str, least: int) -> list[str]:
        """:func:`uncovered` runs of this text in ``kept``."""
        return uncovered(self._compared(), kept, least)

    def _compared(self) -> str:
        """This text as it is compared with a kept page's: its lines, then its table rows, each a
        line (the exact comparison only: a sampled novelty text has its cells' grams, not its rows')."""
        if not self._rows:
            return self.text
        return self.text + "\n" + gram_text("\n".join(self._rows))


def code_names(text: str) -> set[str]:
    """The names in code that ``text`` holds (:data:`_CODE_NAME_RE`: ``std::unordered_map``,
    ``QHash``, ``unordered_set``, ``getValue``), NFKC, their digits as ``0`` (a version is no
    other name: ``qt5::x`` is ``qt6::x``); not in URLs, paths and e-mail addresses."""
    text = _nfkc(text)
    # Word by word (no name, path or address spans a space), only the words that can hold a name:
    # one with "_", ":" or ">", or a capital after its first character.
    words = [word for word in text.split() if not word[1:].islower() or "_" in word or ":" in word or ">" in word]
    if _has_addresses(text):
        # A word with "/" is a path whole; only a word with "@" or "www." is looked at closer.
        words = [
            _ADDRESS_ANY_RE.sub(" ", word) if "@" in word or "www." in word.lower() else word
            for word in words
            if "/" not in word
        ]
    return {_NAME_DIGITS_RE.sub("0", name) for name in _CODE_NAME_RE.findall(" ".join(words))}


def _nfkc(text: str) -> str:
    """``text`` NFKC-normalised (as it is, where it is already)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _has_addresses(text: str) -> bool:
    """Whether :func:`code_names` takes URLs, paths and addresses out of the (NFKC) ``text``."""
    return "/" in text or "www." in text or "@" in text


def _names_within(own: str, kept: str) -> bool:
    """Whether every name in code that ``own`` holds is one ``kept`` holds, known without reading
    them: each of its lines is a line of ``kept``, and ``kept``'s URLs and addresses, where it has
    them, cannot hide a name of ``own`` (:func:`code_names` looks into a word with "www." whatever
    its case only in a text that has addresses)."""
    if not set(own.split("\n")) <= set(kept.split("\n")):
        return False
    if "/" in own or "@" in own:  # (NFKC keeps both: no character composes with them)
        return True
    own = _nfkc(own)  # as code_names reads it ("／" is "/")
    return _has_addresses(own) or "www." not in own.lower()


def renames(own: str, rest: str, kept: str) -> bool:
    """Whether a page whose own text is ``own`` (and whose other visible text is ``rest``) names
    in code what the page that shows ``kept`` names otherwise (:func:`code_names`): its own text
    has a name that ``kept`` lacks, and ``kept`` has one that the page shows nowhere (a name put
    for another: sibling API pages generated from one template, one about ``QHash``, one about
    ``QSet``). A copy names what its page names; a page that only adds a name adds text."""
    if _names_within(own, kept):
        return False  # a copy, under this template or another (the common case), without reading names
    mine = code_names(own)
    if not mine:
        return False
    theirs = code_names(kept)
    if not mine - theirs:
        return False
    return bool(theirs - mine - code_names(rest))


def added_to(text: str, kept: str) -> float:
    """What the normalised ``text`` adds to the normalised ``kept``: the weight (:func:`run_weight`,
    by the line each is in) of its :func:`uncovered` runs (:meth:`OwnText.added` against a novelty text that holds the text)."""
    if text in kept:
        return 0.0
    lines, spans = _uncovered_spans(text, kept, WINDOW)
    total = 0
    for a, b in spans:
        # The line the run is in: new clauses whose sentence's end the kept page shares (a headline
        # of its sidebar that ends the sentence) are still prose.
        end = lines.find("\n", b)
        total += run_weight(lines[a:b], lines[lines.rfind("\n", 0, a) + 1 : end if end >= 0 else len(lines)])
    return float(total)


def run_weight(run: str, line: str = "") -> int:
    """What an added run counts: its :func:`weight` when it is prose (it holds a sentence's end, or
    a clause's and the ``line`` it is part of a sentence's end), else its characters (a menu, a
    byline, an editor's note, a row of ad links set inside a paragraph is no sentence)."""
    if run.isascii() or _SENTENCE_MARK_RE.search(run):
        return weight(run)
    if _CLAUSE_MARK_RE.search(run) and _SENTENCE_MARK_RE.search(line):
        return weight(run)
    return len(run)


def uncovered(text: str, kept: str, least: int = WINDOW) -> list[str]:
    """The runs of the normalised ``text``, of ``least`` characters or more, that no window of
    :data:`WINDOW` units (:func:`weight`: 16 Latin characters, 6 Han characters) of the normalised
    ``kept`` covers (windows within lines: a line shorter than ``least`` is never a run)."""
    lines, spans = _uncovered_spans(text, kept, least)
    return [lines[a:b] for a, b in spans]


def _uncovered_spans(text: str, kept: str, least: int) -> tuple[str, list[tuple[int, int]]]:
    """:func:`uncovered`'s runs as ``(start, end)`` in the text of ``text``'s lines that it looks
    at (returned first: each distinct line once, those the kept page has as they are left out)."""
    # A line the kept page has as it is is covered whole: only the others are looked at.
    # Each line once: a line repeated (a caption renamed in every example) adds once.
    kept_lines = set(kept.split("\n"))
    lines = dict.fromkeys(line for line in text.split("\n") if len(line) >= least and line not in kept_lines)
    text = "\n".join(lines)
    if not text:
        return text, []
    mine, mine_at, mine_ends = _windows(text)
    theirs, _, _ = _windows(one_line(kept))  # however the kept page breaks its lines
    order = np.argsort(mine)  # a binary search is faster over sorted values
    matched = np.empty(len(mine), dtype=bool)
    matched[order] = _member(mine[order], theirs)
    # A character is covered when a matched window holds it: +1 where one starts, -1 where it ends.
    n = len(text)
    starts = np.bincount(mine_at[matched], minlength=n + 1)
    depth = np.cumsum(starts - np.bincount(mine_ends[matched], minlength=n + 1))
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    bare = (depth[:n] == 0) & (cps != _NEWLINE)
    edges = np.diff(bare.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    firsts, stops = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    return text, [(a, b) for a, b in zip(firsts, stops) if b - a >= least]


def one_line(text: str) -> str:
    """A normalised text's lines as one (a space between them, none next to a Han character)."""
    text = text.replace("\n", " ")
    return text if text.isascii() else _CJK_SPACE_RE.sub("", text)


_POWERS: list[np.ndarray] = []


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``_C1 ** i`` and ``_C1 ** -i`` for ``i`` up to ``n`` at least (made once, grown in powers of two)."""
    if not _POWERS or len(_POWERS[0]) < n:
        size = 1 << max(n - 1, 1023).bit_length()
        up, down = np.full(size, _C1, dtype=np.uint64), np.full(size, _C1_INV, dtype=np.uint64)
        up[0] = down[0] = 1
        _POWERS[:] = [np.cumprod(up), np.cumprod(down)]
    return _POWERS[0], _POWERS[1]


def _windows(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hash of each window of ``text`` within a line (the fewest characters from a position
    that weigh :data:`WINDOW` units or more, :func:`weight`), where each starts and where it ends."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    at = np.arange(len(cps))
    if text.isascii() or _DENSE_RE.search(text) is None:
        ends = at + WINDOW
    else:
        units = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(_weights(cps))])
        ends = np.searchsorted(units, units[:-1] + WINDOW)
    breaks = np.concatenate([[0], np.cumsum(cps == _NEWLINE)])
    whole = ends <= len(cps)
    at, ends = at[whole], ends[whole]
    inside = breaks[ends] == breaks[at]
    at, ends = at[inside], ends[inside]
    if not len(at):
        return np.empty(0, dtype=np.uint64), at, ends
    # sum of cps[i + t] * _C1 ** -t over the window at i: prefix sums of cps[j] * _C1 ** -j, and the
    # window's difference times _C1 ** i (wrapping 64-bit arithmetic; _C1 is odd, so invertible),
    # with its length (a window of another length is another window).
    up, down = _powers(len(cps))
    prefix = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(cps * down[: len(cps)])])
    poly = (prefix[ends] - prefix[at]) * up[at] + (ends - at).astype(np.uint64) * _C2
    return _mix(poly), at, ends


def _seams_out(
    new8: np.ndarray, old8: np.ndarray, new16: np.ndarray, old16: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """``n - 11/12 (n2 - n)``: of the positions ``new8`` / ``new16`` (their grams and double grams),
    ``n`` have a gram not in ``old8``, ``n2`` a double gram not in ``old16`` (at least 0), each
    position counted by its ``weights`` (1 without)."""
    if weights is None:
        n8 = len(new8) - np.count_nonzero(_member(np.sort(new8), old8))
        n16 = len(new16) - np.count_nonzero(_member(np.sort(new16), old16))
    else:
        n8 = int(weights[~_member(new8, old8)].sum())
        n16 = int(weights[~_member(new16, old16)].sum())
    return max(0.0, float(n8 - (GRAM - 1) / GRAM * (n16 - n8)))


def _member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in ``pool`` (``np.isin``'s answer, by a sort and a binary search:
    several times faster here; faster still with ``values`` sorted)."""
    if not len(pool):
        return np.zeros(len(values), dtype=bool)
    pool = np.sort(pool)
    at = np.searchsorted(pool, values)
    at[at == len(pool)] = 0
    return cast("np.ndarray", pool[at] == values)


def _inflate(sketch: bytes, normalised: bool = True) -> str:
    """The text a novelty text that holds the text has (at most :data:`MAX_TEXT` characters: a corrupt value is
    no bomb), normalised (:func:`gram_text`) unless ``normalised`` is false."""
    try:
        size = zstandard.frame_content_size(sketch[1:])
        if not 0 <= size <= 4 * MAX_TEXT:
            raise ValueError("the own text is cut short or too long")
        text = zstandard.ZstdDecompressor().decompress(sketch[1:]).decode("utf-8", "surrogatepass")
    except (zstandard.ZstdError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a novelty text ({exc})") from exc
    return gram_text(text) if normalised else text


_CODECS = threading.local()


def _codec() -> zstandard.ZstdCompressor:
    """This thread's compressor (one is not safe to share between threads); its frames carry a
    checksum, so that a damaged novelty text is refused, never misread."""
    codec: zstandard.ZstdCompressor | None = getattr(_CODECS, "codec", None)
    if codec is None:
        codec = _CODECS.codec = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
    return codec
