"""What the command-line subcommands report, as data (dicts and lists; no printing).

Shared by ``scrapy simhash`` (``commands/simhash.py``) and the ``scrapy-simhash`` console script
(``commands/cli.py``): they open the index, call these functions and print the result.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import CHANGED, NEAR_DUPLICATE, NEW, UNCHANGED, VERDICTS, Reason
from scrapy_simhash.fingerprint.simhash import Fallback, hamming
from scrapy_simhash.fingerprint.sketch import sketch_similarity
from scrapy_simhash.schedule import FreshnessPolicy, iso
from scrapy_simhash.scrapy.component import canonical_key
from scrapy_simhash.store.record import PageRecord

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_simhash.fingerprint.simhash import Fingerprinter, PageFingerprint
    from scrapy_simhash.fingerprint.templates import SiteTemplates
    from scrapy_simhash.schedule import SchedulePolicy
    from scrapy_simhash.scrapy.settings import SimhashConfig
    from scrapy_simhash.store.index import SimhashIndex

__all__ = [
    "LAST_VERDICTS",
    "CommandError",
    "dropped",
    "due",
    "explain",
    "export",
    "fingerprint_page",
    "index_info",
    "iso",
    "iter_page_records",
    "last_verdict",
    "near",
    "near_url",
    "parse_duration",
    "prune",
    "remove",
    "show",
    "stored_fp",
]

#: Exit status of a user error that is not a bad argument (not an index, a URL not in it, a
#: file that cannot be read); bad arguments exit with 2 (argparse), success with 0.
EXIT_ERROR = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A user error: printed as one line (no traceback), exit status ``code``."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


def _hex(fp: int | None, bits: int) -> str | None:
    return None if fp is None else format(fp, f"0{bits // 4}x")


def _pages(rows: Iterator[tuple[str, Any]], size: int = 1000) -> Iterator[list[tuple[str, Any]]]:
    while page := list(islice(rows, size)):
        yield page


def iter_page_records(index: SimhashIndex) -> Iterator[tuple[str, PageRecord]]:
    """Every ``(key, record)`` whose record is readable (unreadable ones are left out)."""
    for key, raw in index.iter_records():
        record = PageRecord.parse(raw)
        if record is not None:
            yield key, record


#: What :func:`last_verdict` says: a verdict, or what the recrawl middleware found instead of a
#: page (``gone``: a 404 or 410; ``moved``: a redirect, the record an alias of its target).
LAST_VERDICTS = (*VERDICTS, "gone", "moved")


def last_verdict(record: PageRecord, change_threshold: int) -> str:
    """The verdict of the record's last fetch, as far as the record tells it (one of
    :data:`LAST_VERDICTS`)."""
    if record.gone:
        return "gone"
    if record.moved_to is not None:
        return "moved"
    if record.duplicate_of is not None:
        return NEAR_DUPLICATE
    if record.fetch_count <= 1 or len(record.history) < 1 or record.history[0][1] is None:
        return NEW
    # A change seen by the change sketch alone has a distance within the threshold; its record
    # says it by its last change time.
    by_sketch = record.last_changed == record.last_fetched > record.first_seen
    return CHANGED if record.history[0][1] > change_threshold or by_sketch else UNCHANGED


def _bucket_histogram(index: SimhashIndex) -> dict[str, int]:
    """Bucket sizes over all tables: ``{"1": n, "2-3": n, "4-7": n, ...}`` (distinct fingerprints
    per table key), computed from the stored fingerprints, so for any store."""
    if index.bits != 64:
        return {}
    fps = np.unique(np.fromiter((fp for _, fp in index.iter_items()), dtype=np.uint64))
    bins: Counter[int] = Counter()
    for table in range(index.tables):
        _, sizes = np.unique(index.layout.tkeys_np(fps, table), return_counts=True)
        bins.update(Counter(np.log2(sizes).astype(int).tolist()))
    return {(str(1 << b) if b == 0 else f"{1 << b}-{(2 << b) - 1}"): bins[b] for b in sorted(bins)}


def index_info(index: SimhashIndex, change_threshold: int) -> dict[str, Any]:
    """Layout, settings, counts by verdict of the last fetch, size, bucket-size histogram."""
    out = index.info()
    out["fingerprint_settings"] = index.fingerprint_settings
    verdicts = Counter(last_verdict(record, change_threshold) for _, record in iter_page_records(index))
    out["records"] = sum(verdicts.values())
    out["last_verdicts"] = {verdict: verdicts[verdict] for verdict in LAST_VERDICTS}
    out["bucket_sizes"] = _bucket_histogram(index)
    return out


def _find(index: SimhashIndex, value: str) -> tuple[str, int | None, PageRecord | None]:
    key = canonical_key(value)
    fp = index.get(key)
    record = PageRecord.parse(index.get_record(key))
    if fp is None and record is None:
        raise CommandError(f"{key} is not in the index at {index.path}")
    return key, fp, record


def _duplicate_distance(index: SimhashIndex, record: PageRecord) -> int | None:
    """Distance from the record's last fingerprint to the current fingerprint of the page it duplicates."""
    if record.duplicate_of is None or record.last_fp is None:
        return None
    original = index.get(record.duplicate_of)
    return None if original is None else hamming(record.last_fp, original)


#: The times in a record's ``schedule`` (Unix seconds), shown as ISO 8601 like the record's own.
_SCHEDULE_TIMES = ("last_fetch", "last_change")


def show(index: SimhashIndex, value: str, change_threshold: int) -> dict[str, Any]:
    """One URL: times as ISO 8601 UTC (the recrawl schedule's too), fingerprint history with
    change distances, ``duplicate_of`` with its distance, next due, the stored validators."""
    key, fp, record = _find(index, value)
    out: dict[str, Any] = {"key": key, "indexed_fp": _hex(fp, index.bits)}
    if record is None:
        return out
    out.update(
        last_verdict=last_verdict(record, change_threshold),
        first_seen=iso(record.first_seen),
        last_fetched=iso(record.last_fetched),
        last_changed=iso(record.last_changed),
        fetch_count=record.fetch_count,
        change_count=record.change_count,
        duplicate_of=record.duplicate_of,
        duplicate_distance=_duplicate_distance(index, record),
        next_due=iso(record.next_due),
        etag=record.etag,
        last_modified=record.last_modified,
        history=[{"fp": _hex(h, index.bits), "change_distance": d} for h, d in record.history],
    )
    if record.schedule is not None:
        # Its own next_due is the policy's, as of the last page fetched: the record's (above) is
        # the one crawls use, which a 404 or a budget may have moved since.
        schedule = {name: value for name, value in record.schedule.items() if name != "next_due"}
        for name in _SCHEDULE_TIMES:
            if isinstance(schedule.get(name), (int, float)):
                schedule[name] = iso(schedule[name])
        out["schedule"] = schedule
    return out


def dropped(index: SimhashIndex, of: str | None = None) -> Iterator[dict[str, Any]]:
    """Every URL whose last fetch was held back as a near-duplicate: the URL it duplicates and the
    distance to that page's current fingerprint; ``of``: only the copies of that page."""
    target = None if of is None else canonical_key(of)
    for page in _pages(iter_page_records(index)):
        rows = [(key, rec) for key, rec in page if rec.duplicate_of is not None]
        if target is not None:
            rows = [(key, rec) for key, rec in rows if rec.duplicate_of == target]
        originals = index.get_many([rec.duplicate_of for _, rec in rows if rec.duplicate_of is not None])
        for (key, rec), original in zip(rows, originals):
            distance = None if original is None or rec.last_fp is None else hamming(rec.last_fp, original)
            yield {
                "key": key,
                "duplicate_of": rec.duplicate_of,
                "distance": distance,
                "last_fetched": iso(rec.last_fetched),
            }


def near(
    index: SimhashIndex, fp: int, max_distance: int | None = None, exclude: str | None = None
) -> list[dict[str, Any]]:
    """Stored entries within ``max_distance`` of ``fp``, nearest first, with similarity in %."""
    if max_distance is not None and not 0 <= max_distance <= index.max_distance:
        raise CommandError(
            f"-k {max_distance} is out of range: this index finds distances 0 to {index.max_distance} "
            "(its SIMHASH_MAX_DISTANCE)",
            EXIT_USAGE,
        )
    return [
        {"distance": m.distance, "similarity": _similarity(m.distance, index.bits), "key": m.key}
        for m in index.near(fp, max_distance=max_distance, exclude=exclude)
    ]


def near_url(index: SimhashIndex, value: str, max_distance: int | None = None) -> list[dict[str, Any]]:
    """``near --url``: the entries near the URL's fingerprint (its indexed one, else its last),
    nearest first, with the page it is a dropped copy of also when that page is farther (a copy
    the wide tier dropped, beyond `SIMHASH_MAX_DISTANCE`); then the copies dropped as the URL's
    duplicates (``copy_of``: the URL), nearest first."""
    key, fp = stored_fp(index, value)
    rows = [dict(m, copy_of=None) for m in near(index, fp, max_distance, exclude=key)]
    record = PageRecord.parse(index.get_record(key))
    original = None if record is None else record.duplicate_of
    original_fp = None if original is None or any(r["key"] == original for r in rows) else index.get(original)
    if original is not None and original_fp is not None:
        distance = hamming(fp, original_fp)
        similar = _similarity(distance, index.bits)
        rows.append({"distance": distance, "similarity": similar, "key": original, "copy_of": None})
        rows.sort(key=lambda row: row["distance"])
    copies = sorted(dropped(index, of=key), key=lambda c: (c["distance"] is None, c["distance"] or 0))
    rows += [
        {"distance": c["distance"], "similarity": None, "key": c["key"], "copy_of": c["duplicate_of"]} for c in copies
    ]
    return rows


def _similarity(distance: int, bits: int) -> float:
    """Similarity in % of two fingerprints ``distance`` bits apart: ``1 - distance / bits``."""
    return round(100 * (1 - distance / bits), 1)


def stored_fp(index: SimhashIndex, value: str) -> tuple[str, int]:
    """The key of URL ``value`` and its fingerprint: the indexed one, else its record's last."""
    key, fp, record = _find(index, value)
    if fp is None and record is not None:
        fp = record.last_fp
    if fp is None:
        raise CommandError(f"{key} has no fingerprint in the index at {index.path}")
    return key, fp


def due(
    index: SimhashIndex,
    now: float | None = None,
    limit: int = 100,
    policy: SchedulePolicy | None = None,
    budget: int = 0,
) -> list[dict[str, Any]]:
    """The known URLs an incremental crawl at ``now`` fetches, in its order (the crawl's own
    selection, :meth:`ChangeTracker.selection`: the due ones by the recrawl ``policy``'s priority,
    or with ``budget`` the most valuable ones up to it, due or not; default: the default policy):
    due time, seconds overdue (negative: not due yet), priority, fetches, changes."""
    from scrapy_simhash.decision.selection import run_period

    now = time.time() if now is None else now
    tracker = ChangeTracker(index, policy=policy or FreshnessPolicy())
    rows = tracker.selection(now, budget, run_period(index, now))[: max(limit, 0)]
    records = index.get_records([row.key for row in rows])
    out = []
    for row, raw in zip(rows, records):
        record = PageRecord.parse(raw)
        out.append(
            {
                "key": row.key,
                "due": iso(row.due),
                "overdue_s": round(now - row.due, 1),
                "priority": round(row.priority, 3),
                "fetch_count": None if record is None else record.fetch_count,
                "change_count": None if record is None else record.change_count,
            }
        )
    return out


def nothing_due(index: SimhashIndex, now: float) -> str:
    """What ``due`` (without a budget) says when no URL is due at ``now``: when the next one is,
    and that a crawl with a budget fetches known URLs all the same."""
    first = index.records_due(math.inf, limit=1)
    if not first:
        return "nothing is due: no URL in this index has a due time yet (crawl it first)\n"
    key, when = first[0]
    return (
        f"nothing is due at {iso(now)}; the next URL is due at {iso(when)} ({key}); a crawl with "
        "SIMHASH_RECRAWL_BUDGET fetches that many known URLs at every run, due or not (-s SIMHASH_RECRAWL_BUDGET=N "
        "lists them)\n"
    )


def export(index: SimhashIndex, change_threshold: int) -> Iterator[dict[str, Any]]:
    """Every key with a record (near-duplicates included: ``"fp": null``) and its last verdict,
    then every key with a fingerprint and no record (the item index); times as Unix seconds."""
    bits = index.bits
    for page in _pages(index.iter_records()):
        fps = index.get_many([key for key, _ in page])
        for (key, raw), fp in zip(page, fps):
            row: dict[str, Any] = {"key": key, "fp": _hex(fp, bits)}
            record = PageRecord.parse(raw)
            if record is not None:
                row.update(
                    last_verdict=last_verdict(record, change_threshold),
                    first_seen=record.first_seen,
                    last_fetched=record.last_fetched,
                    last_changed=record.last_changed,
                    fetch_count=record.fetch_count,
                    change_count=record.change_count,
                    duplicate_of=record.duplicate_of,
                    next_due=record.next_due,
                    history=[{"fp": _hex(h, bits), "distance": d} for h, d in record.history],
                )
            yield row
    for page in _pages(index.iter_items()):
        records = index.get_records([key for key, _ in page])
        for (key, fp), raw in zip(page, records):
            if raw is None:
                yield {"key": key, "fp": _hex(fp, bits)}


def remove(index: SimhashIndex, value: str) -> dict[str, Any]:
    """Forget one URL: its fingerprint and its record."""
    key, _, _ = _find(index, value)
    with index.batch():
        had_fp = index.remove(key)
        had_record = index.delete_record(key)
    return {"key": key, "fingerprint_removed": had_fp, "record_removed": had_record}


def prune(index: SimhashIndex, older_than: float, now: float | None = None) -> dict[str, Any]:
    """Forget every URL not fetched for ``older_than`` seconds (fingerprint and record)."""
    cutoff = (time.time() if now is None else now) - older_than
    stale = [key for key, record in iter_page_records(index) if record.last_fetched < cutoff]
    for start in range(0, len(stale), 1000):
        with index.batch():  # one transaction per 1,000 URLs
            for key in stale[start : start + 1000]:
                index.remove(key)
                index.delete_record(key)
    return {"removed": len(stale), "before": iso(cutoff)}


def parse_duration(text: str) -> float:
    """``"90s"``, ``"30m"``, ``"12h"``, ``"7d"``, ``"2w"`` (or plain seconds) -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    value = text.strip().lower()
    scale = units.get(value[-1:])
    number = value[:-1] if scale is not None else value
    try:
        seconds = float(number) * (scale or 1)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise CommandError(f"{text!r} is not a duration: write e.g. 90s, 30m, 12h, 7d or 2w", EXIT_USAGE)
    return seconds


# -- explain ---------------------------------------------------------------------------------


def fingerprint_page(
    fingerprinter: Fingerprinter,
    html: str | bytes,
    content_type: str | None,
    url: str | None = None,
    templates: SiteTemplates | None = None,
) -> dict[str, Any]:
    """What the crawl fingerprints on a page: the title and text (``extract.extract``), the
    weighted features, and the fingerprint with its evidence (``Fingerprinter.fingerprint_page``,
    as the middleware calls it: a short page's exact hash covers its whole visible text, and
    ``templates``, an index's learned site templates, leave out the lines they hold). The one place
    that calls the fingerprinting API for ``explain``."""
    from scrapy_simhash.text.extract import extract

    page = fingerprinter.fingerprint_page(html, url, content_type=content_type, templates=templates)
    doc = extract(html, content_type=content_type, main_content=fingerprinter.main_content)
    text = doc.text[: fingerprinter.max_chars] if fingerprinter.max_chars else doc.text
    weights = fingerprinter._extractor.extract(text, doc.title).weights
    return {"title": doc.title, "text": doc.text, "fp": page.fp, "weights": weights, "page": page}


def _load(source: str, timeout: float = 30.0) -> tuple[bytes, str | None]:
    """The bytes and Content-Type of a URL (fetched) or a file (read; ``-``: stdin)."""
    import sys
    import urllib.error
    import urllib.request

    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"User-Agent": "scrapy-simhash explain"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.read(), response.headers.get("Content-Type")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise CommandError(f"could not fetch {source}: {exc}") from None
    if source == "-":
        return sys.stdin.buffer.read(), None
    try:
        with open(source, "rb") as f:
            return f.read(), None
    except OSError as exc:
        raise CommandError(f"could not read {source}: {exc.strerror or exc}") from None


def _top(weights: dict[str, float], keys: Any, n: int) -> list[list[Any]]:
    return [[f, round(weights[f], 3)] for f in sorted(keys, key=lambda f: (-weights[f], f))[:n]]


def explain(
    fingerprinter: Fingerprinter,
    sources: list[str],
    top: int = 20,
    config: SimhashConfig | None = None,
    index: SimhashIndex | None = None,
) -> dict[str, Any]:
    """For each page: the title and text fingerprinted, the heaviest features, the fingerprint and
    its fallback; for two pages also their distance, their change sketches' similarity, the
    heaviest features only one of them has, and ``verdict``/``why``: what a crawl with ``config``'s
    settings decides on the second page after the first (:func:`pair_verdict`), and ``adds``, the
    runs of its own text that the first page lacks, when it is kept for them (``adds_characters``:
    their count, also when it let a drop through). With ``index``, a URL's fingerprint leaves out
    the lines of its site's template learned in that index, as the crawl does; ``site_template``
    says whether one was used (:data:`NO_TEMPLATE`: none)."""
    from scrapy_simhash.fingerprint.simhash import EmptyTextError
    from scrapy_simhash.fingerprint.templates import IndexTemplateStore, SiteTemplates

    templates = None if index is None else SiteTemplates(IndexTemplateStore(index))
    pages, evidence = [], []
    for source in sources:
        body, content_type = _load(source)
        try:
            page = fingerprint_page(fingerprinter, body, content_type, _url_of(source), templates)
        except EmptyTextError:
            raise CommandError(f"{source} has no text to fingerprint") from None
        weights = page["weights"]
        evidence.append(page["page"])
        pages.append(
            {
                "source": source,
                "fp": _hex(page["fp"], fingerprinter.bits),
                "fallback": page["page"].fallback,
                "features": len(weights),
                "top_features": _top(weights, weights, top),
                "title": page["title"],
                "text": page["text"],
                "_weights": weights,
            }
        )
    out: dict[str, Any] = {"pages": pages, "site_template": NO_TEMPLATE if index is None else INDEX_TEMPLATE}
    if len(pages) == 2:
        a, b = (p.pop("_weights") for p in pages)
        distance = hamming(evidence[0].fp, evidence[1].fp)
        first, second = evidence
        out.update(
            distance=distance,
            similarity=round(100 * (1 - distance / fingerprinter.bits), 1),
            sketch_similarity=(
                None
                if first.sketch is None or second.sketch is None
                else round(sketch_similarity(first.sketch, second.sketch), 3)
            ),
        )
        out.update(pair_verdict(sources, evidence, fingerprinter.bits, config))
        out.update(only_in_first=_top(a, a.keys() - b.keys(), top), only_in_second=_top(b, b.keys() - a.keys(), top))
    for page in pages:
        page.pop("_weights", None)
    return out


#: What ``explain`` says of the site template a crawl learns (``fingerprint/templates.py``) without an index.
NO_TEMPLATE = (
    "not used: explain was given no index (TARGET), so it knows no learned site template; a crawl leaves out "
    "of a page's text the lines its index learned to be its site's template, and may decide otherwise"
)
#: ... and with one.
INDEX_TEMPLATE = (
    "the index's: a URL's fingerprint leaves out the lines its index learned to be its site's template, as "
    "the crawl's does (not the text and features shown)"
)


def _url_of(source: str) -> str | None:
    return source if source.startswith(("http://", "https://")) else None


def pair_verdict(
    sources: list[str], pages: list[PageFingerprint], bits: int, config: SimhashConfig | None = None
) -> dict[str, Any]:
    """``{"verdict", "why"}``: the verdict a crawl gives the second page after the first, by the
    product's own decision (a :class:`ChangeTracker` with ``config``'s settings over an index in
    memory): within ``SIMHASH_MAX_DISTANCE``, the change sketches' agreement, the wide tier, a
    short page's copy; with ``adds_characters``, what the second page's own text adds to the
    first's where it was counted (``SIMHASH_KEEP_ADDS``), and ``adds``, its runs, when kept for them."""
    from scrapy_simhash import defaults
    from scrapy_simhash.store.index import SimhashIndex

    k = defaults.SIMHASH_MAX_DISTANCE if config is None else config.max_distance
    tracker = ChangeTracker(
        SimhashIndex(**({"bits": bits, "max_distance": k} if config is None else config.index_kwargs())),
        **({} if config is None else config.tracker_kwargs()),
    )
    keys = [canonical_key(s) if _url_of(s) else f"file:{s}" for s in sources]
    verdicts = [tracker.observe(key, page, now=1.0) for key, page in zip(keys, pages)]
    verdict, near = verdicts[1], tracker.near_similarity
    if verdict.verdict == NEAR_DUPLICATE:
        if verdict.distance is not None and verdict.distance <= k:
            why = f"within SIMHASH_MAX_DISTANCE ({k}) of the first page"
        elif pages[1].fallback == Fallback.SHORT:
            why = "a short page whose visible lines are all the first page's (a copy of a short page)"
        else:
            why = (
                f"the wide tier: distance <= SIMHASH_WIDE_DISTANCE ({tracker.wide_distance}), change sketches "
                f">= SIMHASH_WIDE_SIMILARITY ({tracker.wide_similarity}) alike"
            )
        if verdict.adds is not None:  # the count that let the drop through
            why += (
                f"; its own text adds about {verdict.adds:.0f} characters to the first page's, under "
                f"SIMHASH_KEEP_ADDS ({tracker.keep_adds})"
            )
            return {"verdict": verdict.verdict, "why": why, "adds_characters": round(verdict.adds)}
    elif verdict.adds_to is not None:
        why = (
            "it resembles the first page, but its own heading names something else"
            if verdict.kept is Reason.KEPT_HEADING
            else f"it resembles the first page, but its own text adds about {verdict.adds:.0f} characters to it "
            f"(SIMHASH_KEEP_ADDS: {tracker.keep_adds})"
        )
        out: dict[str, Any] = {"verdict": verdict.verdict, "why": why, "adds_characters": round(verdict.adds or 0)}
        first, second = pages
        if first.own is not None and second.own is not None:
            runs = second.own.added_runs(first.own.novelty_text())
            if runs is not None:
                out["adds"] = "\n".join(runs)
        return out
    elif verdict.unlike is not None:
        why = f"within SIMHASH_MAX_DISTANCE ({k}), but the change sketches are under SIMHASH_NEAR_SIMILARITY ({near}) alike"
    elif keys[0] == keys[1]:
        why = "one URL fetched twice: its change decides"
    else:
        why = "not a near-duplicate of the first page"
    return {"verdict": verdict.verdict, "why": why}
