"""Near-duplicate removal over a JSON lines corpus (the ``dedup`` subcommand).

Lines are fingerprinted in a process pool (chunks of lines, at most a few chunks in flight, so
memory stays bounded whatever the file size) and decided in input order by the item pipeline's
decision (:meth:`~scrapy_simhash.decision.tracker.ChangeTracker.deduplicate`) over an in-memory
index. A line's text is built as the item pipeline builds an item's (``SIMHASH_ITEM_FIELDS``: a
``title`` field is the title, the others are joined) and fingerprinted with the crawl's
:class:`~scrapy_simhash.fingerprint.simhash.Fingerprinter`: the fingerprints and verdicts of a
crawl with the same settings.

Lines that cannot be fingerprinted (blank, not JSON, not an object, none of the fields, no text,
an error) are kept and counted: a drop deletes data, so only a line with a near-duplicate before
it is dropped.
"""

from __future__ import annotations

import json
import os
from collections import Counter, deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from scrapy_simhash import defaults
from scrapy_simhash.decision.shorttext import ShortText, short_text
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint.fields import fields_text
from scrapy_simhash.fingerprint.novelty import OwnText
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from typing_extensions import Self

#: Lines per task sent to a worker process.
CHUNK_LINES = 500

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
    text, newline-joined) and, for a short line, that text with its MinHash signature."""

    fp: int
    text: str
    short: ShortText | None = None


class Copy(NamedTuple):
    """A dropped line's match: the kept ``line``, the ``distance`` of their fingerprints, and the
    characters of the dropped line's own text that the kept line's lacks (``adds``; ``None``: not
    measured)."""

    line: int
    distance: int
    adds: float | None = None


def _key(line: int) -> str:
    """A line's key in the index: its number, zero-padded, so that ties go to the earliest line."""
    return f"{line:012d}"


class KeptLines:
    """The kept lines, deciding on each new line in input order: :meth:`check_and_add` gives the
    :class:`Copy` that a line is dropped as, or keeps it (``None``), by
    :meth:`~scrapy_simhash.decision.tracker.ChangeTracker.deduplicate` over an in-memory index
    (``max_distance`` ``k``, no candidate cap; novelty evidence without a size bound)."""

    def __init__(self, bits: int, k: int, keep_adds: int = defaults.SIMHASH_KEEP_ADDS) -> None:
        # No undo log: an error ends the run, and the index with it.
        store = MemoryStore(undo=False)
        self.index = SimhashIndex(store=store, bits=bits, max_distance=k, blocks=None, max_candidates=0)
        self.tracker = ChangeTracker(self.index, keep_adds=keep_adds, evidence_max_bytes=0)
        #: Lines kept although they resemble a kept line (their own text adds to it).
        self.kept_adds = 0

    def __len__(self) -> int:
        return len(self.index)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.index.close()

    def check_and_add(
        self, line: int, fp: int, text: str | None = None, short: ShortText | None = None
    ) -> Copy | None:
        """The :class:`Copy` that ``line`` (fingerprint ``fp``, own ``text``; ``short``: a short
        text's) is dropped as, else keep it (``None``)."""
        own = None if text is None else OwnText([text])
        verdict = self.tracker.deduplicate(_key(line), fp, own, short)
        if verdict.duplicate_of is None or verdict.distance is None:
            self.kept_adds += verdict.adds_to is not None
            return None
        return Copy(int(verdict.duplicate_of), verdict.distance, verdict.adds)


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
    return Line(fp, own, short_text(own) if lsh else None)


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
    adds = copy.adds if copy.adds is None or copy.adds % 1 else int(copy.adds)  # an exact count: an int
    adds = adds if adds is None or isinstance(adds, int) else round(adds, 1)
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
