"""Near-duplicate removal over a JSON lines corpus (the ``dedup`` subcommand).

Lines are fingerprinted in a process pool (chunks of lines, at most a few chunks in flight, so
memory stays bounded whatever the file size) and decided in input order (:class:`KeptLines`): a
line within ``max_distance`` of a kept line is dropped, every other line is kept. A line's text
is built as the item pipeline builds an item's (``SIMHASH_ITEM_FIELDS``: a ``title`` field is the
title, the others are joined) and fingerprinted with the crawl's
:class:`~scrapy_simhash.fingerprint.Fingerprinter`: the fingerprints of a crawl with the same
settings.

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
from typing import TYPE_CHECKING, Any, BinaryIO

from scrapy_simhash.fingerprint import EmptyTextError, Fingerprinter
from scrapy_simhash.pipeline import fields_text
from scrapy_simhash.store.base import TableLayout

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

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
    """Counts of one run: ``lines`` read, ``kept``, ``dropped``, ``unfingerprinted`` by reason."""

    lines: int = 0
    kept: int = 0
    dropped: int = 0
    unfingerprinted: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "kept": self.kept,
            "dropped": self.dropped,
            "not_fingerprinted": dict(self.unfingerprinted),
        }


class KeptLines:
    """The kept lines' fingerprints, filed as the index files them (``k + 1`` blocks, one table
    per block), in Python dicts of ints: what an in-memory
    :class:`~scrapy_simhash.index.SimhashIndex` does for this one job, about 3x faster and in a
    quarter of the memory (about 200 MB per million kept lines).

    :meth:`check_and_add` gives the nearest kept line within ``k`` (ties: the earliest) or
    keeps the line. Lines with one fingerprint are one entry (the first line).
    """

    def __init__(self, bits: int, k: int) -> None:
        self.k = k
        self._segments = TableLayout(bits, k, k + 1).segments
        self._tables: list[dict[int, list[int]]] = [{} for _ in self._segments]
        self._first: dict[int, int] = {}  # fingerprint -> the kept line that has it

    def __len__(self) -> int:
        return len(self._first)

    def check_and_add(self, line: int, fp: int) -> tuple[int, int] | None:
        """``(kept line, distance)`` of the nearest kept line within ``k``; else keep ``line``
        (``None``)."""
        first = self._first.get(fp)
        if first is not None:
            return first, 0
        k = self.k
        keys = []
        best: tuple[int, int] | None = None
        for segments, table in zip(self._segments, self._tables):
            key = 0
            for shift, mask, width in segments:
                key = (key << width) | ((fp >> shift) & mask)
            keys.append(key)
            for other in table.get(key, ()):
                distance = (fp ^ other).bit_count()
                if distance <= k:
                    found = (distance, self._first[other])
                    if best is None or found < best:
                        best = found
        if best is not None:
            return best[1], best[0]
        self._first[fp] = line
        for table, key in zip(self._tables, keys):
            bucket = table.get(key)
            if bucket is None:
                table[key] = [fp]
            else:
                bucket.append(fp)
        return None


def _init_worker(kwargs: dict[str, Any]) -> None:
    global _worker_fingerprinter
    _worker_fingerprinter = Fingerprinter(**kwargs)


def line_fingerprint(fingerprinter: Fingerprinter, line: bytes, fields: tuple[str, ...]) -> int | str:
    """The fingerprint of one JSON line, or the reason it has none."""
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
        return fingerprinter.fingerprint_text(text, title)
    except EmptyTextError:
        return _EMPTY
    except Exception:  # noqa: BLE001 - the line is kept and counted, the run goes on
        return _ERROR


def _fingerprint_chunk(lines: list[bytes], fields: tuple[str, ...]) -> list[int | str]:
    fingerprinter = _worker_fingerprinter
    assert fingerprinter is not None
    return [line_fingerprint(fingerprinter, line, fields) for line in lines]


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
) -> Iterator[tuple[list[bytes], list[int | str]]]:
    """``(chunk of lines, their fingerprints or reasons)`` in input order; ``workers`` processes
    (default: the machine's cores), at most ``2 * workers`` chunks in flight."""
    workers = workers or os.cpu_count() or 1
    executor: Executor
    if workers == 1:
        executor = _InProcess(fingerprinter_kwargs)
    else:
        executor = ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(fingerprinter_kwargs,))
    pending: deque[tuple[list[bytes], Future[list[int | str]]]] = deque()
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


def dedup(
    source: BinaryIO,
    kept_out: BinaryIO,
    report_out: BinaryIO | None,
    fields: tuple[str, ...],
    fingerprinter_kwargs: dict[str, Any],
    *,
    max_distance: int = 3,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> DedupResult:
    """Copy the lines of ``source`` that have no near-duplicate before them to ``kept_out``;
    write one JSON line per dropped line to ``report_out``: its ``line`` number (1-based), the
    ``kept_line`` it matched, the ``distance``, the ``cluster`` (the kept line's number: every line
    of a cluster was dropped as a copy of that line)."""
    kept_lines = KeptLines(int(fingerprinter_kwargs.get("bits", 64)), max_distance)
    result = DedupResult()
    for chunk, fps in fingerprint_lines(source, fields, fingerprinter_kwargs, workers):
        kept: list[bytes] = []
        report: list[bytes] = []
        for line, fp in zip(chunk, fps):
            result.lines += 1
            number = result.lines
            if isinstance(fp, str):
                result.unfingerprinted[fp] += 1
            else:
                match = kept_lines.check_and_add(number, fp)
                if match is not None:
                    result.dropped += 1
                    row = {"line": number, "kept_line": match[0], "distance": match[1], "cluster": match[0]}
                    report.append(json.dumps(row).encode() + b"\n")
                    continue
            result.kept += 1
            kept.append(line if line.endswith(b"\n") else line + b"\n")
        kept_out.write(b"".join(kept))
        if report_out is not None and report:
            report_out.write(b"".join(report))
        if progress is not None:
            progress(len(chunk))
    return result
