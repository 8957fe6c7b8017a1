"""Near-duplicate removal over a JSON lines corpus (the ``dedup`` subcommand).

(Just over 600 lines: one command, its decision loop over kept lines and the process pool that
feeds it in input order.)

Lines are fingerprinted in a process pool (chunks of lines, at most a few chunks in flight, so
memory stays bounded whatever the file size) and decided in input order (:class:`KeptLines`). A
line's text is built as the item pipeline builds an item's (``SIMHASH_ITEM_FIELDS``: a ``title``
field is the title, the others are joined) and fingerprinted with the crawl's
:class:`~scrapy_simhash.fingerprint.simhash.Fingerprinter`: the fingerprints of a crawl with the same
settings.

**Which lines resemble a kept line.** One within ``max_distance`` of its fingerprint; and, for a
short line (at most :data:`SHORT_CHARS` characters, where one edit moves more of the 64 bits than
``max_distance`` allows), one that shares a band of a MinHash LSH over the lines' character
5-grams (letters and digits only, so that changed punctuation is no change; 8 bands of 4 rows:
a pair whose 5-gram sets have a Jaccard similarity of 0.7 shares a band with probability 0.89,
of 0.8 with 0.99) and at least half its signature (:data:`_MIN_ALIKE`), and whose own texts
share at least :data:`RESEMBLANCE` of their characters (``1 - (a + b) / (chars + kept chars)``,
``a`` and ``b`` what each adds to the other: :meth:`~scrapy_simhash.fingerprint.novelty.OwnText.added`, both
ways; without hashing where the kept text is whole, :meth:`_Text.added_at_most`).

**Which are dropped** (``keep_adds``, `SIMHASH_KEEP_ADDS`, the rule of the crawl's decision): a
line that resembles a kept line is dropped only when its own text (title and text, numbers and
hashes masked: :class:`~scrapy_simhash.fingerprint.novelty.OwnText`) adds fewer than ``keep_adds`` characters
to that line's, the nearest such first; else it is kept (``kept_adds``). 0: resemblance alone
decides.

Lines that cannot be fingerprinted (blank, not JSON, not an object, none of the fields, no text,
an error) are kept and counted: a drop deletes data, so only a line with a near-duplicate before
it is dropped.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import unicodedata
from array import array
from collections import Counter, OrderedDict, deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

import numpy as np

from scrapy_simhash import defaults
from scrapy_simhash.fingerprint import novelty
from scrapy_simhash.fingerprint.novelty import WINDOW, OwnText, normalize, one_line
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.scrapy.pipeline import fields_text
from scrapy_simhash.store.base import TableLayout

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from typing_extensions import Self

#: Lines per task sent to a worker process.
CHUNK_LINES = 500
#: Lines whose text (title and fields) has at most this many characters are short: also filed
#: by the LSH of their character 5-grams.
SHORT_CHARS = 1000
#: The share of both lines' own characters that must lie in common runs for a line found by the
#: LSH to resemble a kept line (copies in ``benchmarks/speed/bench_dedup.py``'s corpus: 0.913 or more
#: for 99%; lines of different documents that share a sentence: 0.75 or less for 99%).
RESEMBLANCE = 0.8

#: Characters of the kept lines' measured texts remembered (their OwnText: about 20 bytes a
#: character), so that a cluster's copies are measured against one kept line once.
MEASURED_CHARS = 1 << 18

_GRAM, _BANDS, _ROWS = 5, 8, 4
#: An LSH candidate is measured only when at least this many of the 32 signature values agree (an
#: estimated Jaccard similarity of 0.5: a pair at 0.7 falls short with a probability of 0.005,
#: one at 0.8 of 3e-5; copies in ``benchmarks/speed/bench_dedup.py``'s corpus are at 0.71 or more for
#: 99%): lines of other documents that share a band by one sentence are not measured.
_MIN_ALIKE = 16

# Why a line was not fingerprinted (it is kept).
_BLANK = "blank"
_NOT_JSON = "not_json"
_NOT_OBJECT = "not_an_object"
_NO_FIELDS = "no_fields"
_EMPTY = "empty"
_ERROR = "error"

_worker_fingerprinter: Fingerprinter | None = None


@dataclass
class DedupResult:
    """Counts of one run: ``lines`` read, ``kept``, ``dropped``, ``kept_adds`` (kept although they
    resemble a kept line: their own text adds at least ``keep_adds`` characters to it; counted in
    ``kept``), ``unfingerprinted`` by reason."""

    lines: int = 0
    kept: int = 0
    dropped: int = 0
    kept_adds: int = 0
    unfingerprinted: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "kept": self.kept,
            "dropped": self.dropped,
            "kept_adds": self.kept_adds,
            "not_fingerprinted": dict(self.unfingerprinted),
        }


class Line(NamedTuple):
    """What a worker gives for one fingerprinted line: its fingerprint, its own text (title and
    text, newline-joined) and, for a short line, its MinHash signature (:func:`lsh_signature`)."""

    fp: int
    text: str
    sig: bytes | None = None


class _Kept(NamedTuple):
    """A kept line as the containment check reads it back: fingerprint, signature, own text."""

    fp: int
    sig: bytes | None
    text: _Text


class Copy(NamedTuple):
    """A dropped line's match: the kept ``line``, the ``distance`` of their fingerprints, and the
    characters of the dropped line's own text that the kept line's lacks (``adds``; ``None``: not
    measured)."""

    line: int
    distance: int
    adds: float | None = None


# -- the LSH of short lines ------------------------------------------------------------------------

#: Code points (below U+10000) that are no letter, mark or digit: left out of the 5-grams.
_SEPARATOR = np.array([unicodedata.category(chr(c))[0] in "PSZC" for c in range(1 << 16)], dtype=bool)
_rng = np.random.default_rng(0x5EED)  # fixed: the same permutations in every worker
_MUL = (_rng.integers(0, 1 << 32, _BANDS * _ROWS, dtype=np.uint64) | np.uint64(1)).astype(np.uint32)[:, None]
_ADD = _rng.integers(0, 1 << 32, _BANDS * _ROWS, dtype=np.uint64).astype(np.uint32)[:, None]
_BAND_SALT = _rng.integers(0, 1 << 63, _BANDS, dtype=np.uint64)
_C1 = np.uint64(0x9E3779B97F4A7C15)
_S31, _S32 = np.uint64(31), np.uint64(32)


def lsh_signature(text: str) -> bytes | None:
    """The MinHash signature of a short text: the least of ``_BANDS * _ROWS`` universal hashes
    of its lower-cased character 5-grams, letters and digits only (32 bits each). ``None``: the
    text is longer than :data:`SHORT_CHARS`, or has fewer than 5 such characters."""
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
    return (_MUL * grams + _ADD).min(axis=1).tobytes()


def lsh_bands(sig: bytes) -> list[int]:
    """The LSH band keys of a signature: its values, ``_ROWS`` to a band (two to a 64-bit word)."""
    words = np.frombuffer(sig, dtype=np.uint64).reshape(_BANDS, _ROWS // 2)
    return (words[:, 0] * _C1 ^ words[:, 1] ^ _BAND_SALT).tolist()  # type: ignore[no-any-return]


def _alike(sig: bytes, other: bytes) -> int:
    """How many of two signatures' values are equal (their 5-gram sets' Jaccard similarity,
    estimated, times ``_BANDS * _ROWS``)."""
    return int(np.count_nonzero(np.frombuffer(sig, dtype=np.uint32) == np.frombuffer(other, dtype=np.uint32)))


# -- the kept lines --------------------------------------------------------------------------------


class TempSpaceError(OSError):
    """The kept lines' texts could not be written to their temporary file (a full disk)."""


class _KeptTexts:
    """The kept lines' fingerprints, signatures and own texts, for the containment check: in an anonymous
    temporary file (made at the first text; gone when closed, or when the process ends), 16 bytes
    of memory per line. A write that fails raises :class:`TempSpaceError`, naming the directory."""

    def __init__(self, bits: int) -> None:
        self._fp_bytes = (bits + 7) // 8
        self._file: BinaryIO | None = None
        self._offsets = array("q")
        self._sizes = array("q")
        self._end = self._flushed = 0

    def put(self, line: int, fp: int, sig: bytes | None, text: str) -> None:
        sig = sig or b""
        data = b"".join(
            (fp.to_bytes(self._fp_bytes, "little"), bytes((len(sig),)), sig, text.encode("utf-8", "surrogatepass"))
        )
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
            self._file.write(data)
        except OSError as exc:
            raise self._error(exc) from exc
        missing = line - len(self._offsets)  # lines come in ascending order
        if missing > 0:
            self._offsets.frombytes(bytes(missing * self._offsets.itemsize))
            self._sizes.frombytes(bytes(missing * self._sizes.itemsize))
        if missing >= 0:
            self._offsets.append(self._end)
            self._sizes.append(len(data))
        else:
            self._offsets[line], self._sizes[line] = self._end, len(data)
        self._end += len(data)

    def get(self, line: int) -> tuple[int, bytes | None, str] | None:
        """``(fingerprint, signature, own text)`` of a kept line, ``None`` when none was kept for it."""
        if self._file is None or line >= len(self._sizes) or not self._sizes[line]:
            return None
        offset, size = self._offsets[line], self._sizes[line]
        if offset + size > self._flushed:
            try:
                self._file.flush()
            except OSError as exc:
                raise self._error(exc) from exc
            self._flushed = self._end
        data = os.pread(self._file.fileno(), size, offset)
        n = self._fp_bytes
        end = n + 1 + data[n]
        return (
            int.from_bytes(data[:n], "little"),
            data[n + 1 : end] or None,
            data[end:].decode("utf-8", "surrogatepass"),
        )

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # unflushed bytes of a file that is deleted now
                self._file.close()
            self._file = None

    @staticmethod
    def _error(exc: OSError) -> TempSpaceError:
        return TempSpaceError(
            exc.errno,
            f"could not write the kept lines' texts to a temporary file in {tempfile.gettempdir()} "
            f"({exc.strerror}): free space there, or point TMPDIR at a disk with room",
        )


class _Text:
    """A line's own text as the containment check measures it: its :class:`OwnText` and sketch,
    each made when first needed (most lines are never measured), and :meth:`added_at_most`."""

    __slots__ = ("_grams", "_norm", "_own", "_sketch", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._own: OwnText | None = None
        self._sketch: bytes | None = None
        self._norm: str | None = None
        self._grams: set[str] | None = None

    @property
    def own(self) -> OwnText:
        if self._own is None:
            self._own = OwnText.normalised(self.norm)
        return self._own

    @property
    def sketch(self) -> bytes:
        if self._sketch is None:
            self._sketch = self.own.sketch()
        return self._sketch

    @property
    def measured(self) -> bool:
        return self._own is not None

    @property
    def norm(self) -> str:
        if self._norm is None:
            self._norm = normalize(self.text)
        return self._norm

    def added_at_most(self, kept: _Text) -> int | None:
        """``self.own.added(kept.sketch)`` without compressing, when ``kept``'s sketch is surely its
        text (the characters of this text in runs of :data:`WINDOW` or more that no window of
        ``kept``'s covers, each distinct line once; for ASCII texts, without hashing); ``None``:
        ``kept`` may be too long for that (its sketch may be sampled)."""
        mine, theirs = self.norm, kept.norm
        if "\n" in mine:  # each distinct line once
            mine = "\n".join(dict.fromkeys(mine.split("\n")))
        if not mine:
            return 0  # no own text: nothing added
        if 4 * len(theirs) + 64 > novelty.TEXT_BYTES:  # UTF-8, compressed or not, fits below that
            return None
        if not (mine.isascii() and theirs.isascii()):  # windows and characters by weight
            return int(novelty.added_to(mine, theirs))
        if kept._grams is None:
            flat = one_line(theirs)
            kept._grams = {flat[i : i + WINDOW] for i in range(len(flat) - WINDOW + 1)}
        have = kept._grams  # windows of one line: none holds a line break
        n = len(mine)
        if n < WINDOW:
            return 0
        # Bit i: the window at i is the kept text's; a character is covered by the windows that
        # start up to WINDOW - 1 before it: the bits shifted by 0..WINDOW-1, OR-ed (by doubling).
        flags = "".join(["1" if mine[i : i + WINDOW] in have else "0" for i in range(n - WINDOW + 1)])
        covered = int(flags[::-1], 2)
        width = 1
        while width < WINDOW:
            step = min(width, WINDOW - width)
            covered |= covered << step
            width += step
        bare = ~covered & ((1 << n) - 1)
        at = mine.find("\n")
        while at >= 0:  # a line break is no character of a run
            bare &= ~(1 << at)
            at = mine.find("\n", at + 1)
        return sum(len(run) for run in bin(bare)[2:].split("0") if len(run) >= WINDOW)


class KeptLines:
    """The kept lines, to decide on each new line in input order (see the module's docstring).

    Fingerprints are filed as the index files them (``k + 1`` blocks, one table per block), in
    Python dicts of ints: what an in-memory :class:`~scrapy_simhash.store.index.SimhashIndex` does for
    this one job, about 3x faster and in a quarter of the memory (about 200 MB per million kept
    lines). Lines with one fingerprint are one entry (the first line). Short lines are also filed
    by their LSH band keys (a few hundred bytes each); with ``keep_adds`` (or an LSH band), a
    kept line's own text and signature go to a temporary file (:class:`_KeptTexts`). Close it
    (a context manager) to delete that file.

    :meth:`check_and_add` gives the :class:`Copy` that a line is dropped as, or keeps the line.
    """

    def __init__(self, bits: int, k: int, keep_adds: int = defaults.SIMHASH_KEEP_ADDS) -> None:
        if isinstance(keep_adds, bool) or not isinstance(keep_adds, int) or keep_adds < 0:
            raise ValueError(f"keep_adds ({keep_adds!r}) is invalid: it must be an int >= 0 (0: off)")
        self.k = k
        self.keep_adds = keep_adds
        #: Lines kept although they resemble a kept line (their own text adds to it).
        self.kept_adds = 0
        self._segments = TableLayout(bits, k, k + 1).segments
        self._tables: list[dict[int, list[int]]] = [{} for _ in self._segments]
        self._first: dict[int, int] = {}  # fingerprint -> the kept line that has it
        self._bands: dict[int, int | list[int]] = {}  # LSH band key -> the kept short lines
        self._texts = _KeptTexts(bits)
        self._measured: OrderedDict[int, _Kept] = OrderedDict()  # see _kept
        self._measured_chars = 0

    def __len__(self) -> int:
        return len(self._first)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._texts.close()

    def check_and_add(self, line: int, fp: int, text: str | None = None, sig: bytes | None = None) -> Copy | None:
        """The :class:`Copy` that ``line`` (fingerprint ``fp``, own ``text``, MinHash ``sig``) is
        dropped as, else keep it (``None``). Without ``text``, or against a kept line whose text
        was not kept, what the line adds cannot be measured: resemblance decides."""
        first = self._first.get(fp)
        if first is not None and (not self.keep_adds or text is None):
            return Copy(first, 0)
        keys, near = self._near(fp)
        bands = None if sig is None else lsh_bands(sig)
        found = self._found(bands, near)
        new = None if text is None else _Text(text)
        if near or found:
            copy = self._copy(fp, near, found, new, sig)
            if copy is not None:
                return copy
        self._add(line, fp, keys, new, sig, bands)
        return None

    def _near(self, fp: int) -> tuple[list[int], list[tuple[int, int]]]:
        """``fp``'s table keys, and ``(distance, kept line)`` of every kept line within ``k``,
        nearest first (ties: the earliest)."""
        k = self.k
        keys = []
        near: dict[int, int] = {}
        for segments, table in zip(self._segments, self._tables):
            key = 0
            for shift, mask, width in segments:
                key = (key << width) | ((fp >> shift) & mask)
            keys.append(key)
            for other in table.get(key, ()):
                distance = (fp ^ other).bit_count()
                if distance <= k:
                    near[other] = distance
        return keys, sorted((distance, self._first[other]) for other, distance in near.items())

    def _found(self, bands: list[int] | None, near: list[tuple[int, int]]) -> list[int]:
        """The kept short lines that share an LSH band with ``bands``, earliest first, those
        within ``k`` left out."""
        if not bands:
            return []
        found: set[int] = set()
        for band in bands:
            lines = self._bands.get(band)
            if isinstance(lines, list):
                found.update(lines)
            elif lines is not None:
                found.add(lines)
        found.difference_update(line for _, line in near)
        return sorted(found)

    def _copy(
        self, fp: int, near: list[tuple[int, int]], found: list[int], new: _Text | None, sig: bytes | None
    ) -> Copy | None:
        """The first candidate (``near``, then ``found``) that the line (own text ``new``,
        signature ``sig``) resembles and adds fewer than ``keep_adds`` characters to; ``None``:
        it is kept."""
        threshold = self.keep_adds
        resembled = False
        for distance, kept in near:
            stored = None if new is None or not threshold else self._kept(kept)
            if new is None or stored is None:
                return Copy(kept, distance)  # nothing to measure: resemblance decides
            other = stored.text
            at_most = new.added_at_most(other)
            adds = at_most if at_most is not None else new.own.added(other.sketch)
            if adds < threshold:
                return Copy(kept, distance, adds)
            resembled = True
        for kept in found:
            stored = None if new is None else self._kept(kept)
            if new is None or stored is None or sig is None or stored.sig is None:
                continue  # an LSH candidate is no evidence without its text
            if _alike(sig, stored.sig) < _MIN_ALIKE:
                continue  # too unlike to measure
            other = stored.text
            distance = (fp ^ stored.fp).bit_count()
            differ = (1 - RESEMBLANCE) * (len(new.norm) + len(other.norm))  # at most, to resemble
            at_most = new.added_at_most(other)
            adds = at_most if at_most is not None else new.own.added(other.sketch)
            if adds > differ:
                continue  # they share too little to resemble
            lacks = other.added_at_most(new)
            if adds + (lacks if lacks is not None else other.own.added(new.sketch)) > differ:
                continue
            if adds < threshold or not threshold:
                return Copy(kept, distance, adds)
            resembled = True
        if resembled:
            self.kept_adds += 1
        return None

    def _kept(self, line: int) -> _Kept | None:
        """A kept line's fingerprint and own text (``None``: its text was not kept); the last
        ones measured are remembered (:data:`MEASURED_CHARS`): a cluster's copies are measured
        against one kept line."""
        found = self._measured.get(line)
        if found is not None:
            self._measured.move_to_end(line)
            return found
        stored = self._texts.get(line)
        if stored is None:
            return None
        found = _Kept(stored[0], stored[1], _Text(stored[2]))
        self._remember(line, found)
        return found

    def _remember(self, line: int, kept: _Kept) -> None:
        self._measured[line] = kept
        self._measured_chars += len(kept.text.text)
        while self._measured_chars > MEASURED_CHARS and len(self._measured) > 1:
            _, old = self._measured.popitem(last=False)
            self._measured_chars -= len(old.text.text)

    def _add(
        self, line: int, fp: int, keys: list[int], new: _Text | None, sig: bytes | None, bands: list[int] | None
    ) -> None:
        if fp not in self._first:
            self._first[fp] = line
            for table, key in zip(self._tables, keys):
                bucket = table.get(key)
                if bucket is None:
                    table[key] = [fp]
                else:
                    bucket.append(fp)
        if new is not None and (self.keep_adds or bands):
            self._texts.put(line, fp, sig, new.text)
            if new.measured:
                self._remember(line, _Kept(fp, sig, new))
        for band in bands or ():
            lines = self._bands.get(band)
            if lines is None:
                self._bands[band] = line
            elif isinstance(lines, list):
                lines.append(line)
            else:
                self._bands[band] = [lines, line]


def _init_worker(kwargs: dict[str, Any]) -> None:
    global _worker_fingerprinter
    _worker_fingerprinter = Fingerprinter(**kwargs)


def line_fingerprint(fingerprinter: Fingerprinter, line: bytes, fields: tuple[str, ...]) -> int | str:
    """The fingerprint of one JSON line, or the reason it has none."""
    found = line_features(fingerprinter, line, fields, lsh=False)
    return found if isinstance(found, str) else found.fp


def line_features(
    fingerprinter: Fingerprinter, line: bytes, fields: tuple[str, ...], *, lsh: bool = True
) -> Line | str:
    """The :class:`Line` of one JSON line (``lsh``: with its MinHash signature when it is
    short), or the reason it has none."""
    if not line.strip():
        return _BLANK
    try:
        obj = json.loads(line)
    except ValueError:
        return _NOT_JSON
    if not isinstance(obj, dict):
        return _NOT_OBJECT
    title, text = fields_text(obj, fields)
    if not title and not text:
        return _NO_FIELDS
    try:
        fp = fingerprinter.fingerprint_text(text, title)
    except EmptyTextError:
        return _EMPTY
    except Exception:  # noqa: BLE001 - the line is kept and counted, the run goes on
        return _ERROR
    own = f"{title}\n{text}" if title and text else title or text
    return Line(fp, own, lsh_signature(own) if lsh else None)


def _fingerprint_chunk(lines: list[bytes], fields: tuple[str, ...]) -> list[Line | str]:
    fingerprinter = _worker_fingerprinter
    assert fingerprinter is not None
    return [line_features(fingerprinter, line, fields) for line in lines]


class _InProcess(Executor):
    """Runs the chunks in this process (``workers=1``): no pool to start."""

    def __init__(self, kwargs: dict[str, Any]) -> None:
        _init_worker(kwargs)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def _chunks(lines: Iterable[bytes]) -> Iterator[list[bytes]]:
    chunk: list[bytes] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) >= CHUNK_LINES:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def fingerprint_lines(
    lines: Iterable[bytes],
    fields: tuple[str, ...],
    fingerprinter_kwargs: dict[str, Any],
    workers: int | None = None,
) -> Iterator[tuple[list[bytes], list[Line | str]]]:
    """``(chunk of lines, their :class:`Line` or reasons)`` in input order; ``workers`` processes
    (default: the machine's cores), at most ``2 * workers`` chunks in flight."""
    workers = workers or os.cpu_count() or 1
    executor: Executor
    if workers == 1:
        executor = _InProcess(fingerprinter_kwargs)
    else:
        executor = ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(fingerprinter_kwargs,))
    pending: deque[tuple[list[bytes], Future[list[Line | str]]]] = deque()
    try:
        for chunk in _chunks(lines):
            pending.append((chunk, executor.submit(_fingerprint_chunk, chunk, fields)))
            if len(pending) >= 2 * workers:
                chunk, future = pending.popleft()
                yield chunk, future.result()
        while pending:
            chunk, future = pending.popleft()
            yield chunk, future.result()
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _report_row(line: int, copy: Copy) -> bytes:
    adds = None if copy.adds is None else round(copy.adds, 1)
    row = {"line": line, "kept_line": copy.line, "distance": copy.distance, "cluster": copy.line, "adds": adds}
    return json.dumps(row).encode() + b"\n"


def dedup(
    source: BinaryIO,
    kept_out: BinaryIO,
    report_out: BinaryIO | None,
    fields: tuple[str, ...],
    fingerprinter_kwargs: dict[str, Any],
    *,
    max_distance: int = 3,
    keep_adds: int = defaults.SIMHASH_KEEP_ADDS,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> DedupResult:
    """Copy the lines of ``source`` that no line before them makes redundant to ``kept_out`` (see
    the module's docstring; ``keep_adds``: `SIMHASH_KEEP_ADDS`, 0: resemblance alone decides);
    write one JSON line per dropped line to ``report_out``: its ``line`` number (1-based), the
    ``kept_line`` it matched, the ``distance`` of their fingerprints, the ``cluster`` (the kept
    line's number: every line of a cluster was dropped as a copy of that line) and ``adds``, the
    characters of its own text that the kept line lacks (``null``: not measured)."""
    result = DedupResult()
    bits = int(fingerprinter_kwargs.get("bits", 64))
    with KeptLines(bits, max_distance, keep_adds) as kept_lines:
        for chunk, found in fingerprint_lines(source, fields, fingerprinter_kwargs, workers):
            kept: list[bytes] = []
            report: list[bytes] = []
            for line, features in zip(chunk, found):
                result.lines += 1
                number = result.lines
                if isinstance(features, str):
                    result.unfingerprinted[features] += 1
                else:
                    copy = kept_lines.check_and_add(number, *features)
                    if copy is not None:
                        result.dropped += 1
                        report.append(_report_row(number, copy))
                        continue
                result.kept += 1
                kept.append(line if line.endswith(b"\n") else line + b"\n")
            kept_out.write(b"".join(kept))
            if report_out is not None and report:
                report_out.write(b"".join(report))
            if progress is not None:
                progress(len(chunk))
        result.kept_adds = kept_lines.kept_adds
    return result
