"""``scrapy simhash``: inspect a spider's simhash index (layout, one URL's history, its near-duplicates)."""

from __future__ import annotations

import argparse
import json
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from scrapy_simhash._component import canonical_key
from scrapy_simhash._settings import load_config
from scrapy_simhash.recrawl import PageRecord

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_simhash._settings import SimhashConfig
    from scrapy_simhash.index import SimhashIndex

_ACTIONS = ("info", "show", "near", "export")


class Command(ScrapyCommand):
    """``scrapy simhash SPIDER info|show URL|near URL|export [--items]``.

    Reads `SIMHASH_DIR`, `SIMHASH_BITS` and `SIMHASH_MAX_DISTANCE` from the project settings (or
    ``-s``); opens the index read-only, so it can run while a crawl is writing.
    """

    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "<spider> info | show <url> | near <url> | export [--items]"

    def short_desc(self) -> str:
        return "Inspect a spider's simhash index: layout, a URL's history, its near-duplicates"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--items", action="store_true", help="use the pipeline's item index, not the page index")
        parser.add_argument("--dir", metavar="PATH", help="index directory (default: SIMHASH_DIR through data_path)")
        parser.add_argument("-k", "--max-distance", type=int, default=None, help="near: largest distance")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) < 2 or args[1] not in _ACTIONS:
            raise UsageError(f"expected <spider> and one of {', '.join(_ACTIONS)}")
        spider_name, action, rest = args[0], args[1], args[2:]
        if action in ("show", "near") and len(rest) != 1:
            raise UsageError(f"{action} takes one URL (or simhash_key)")
        assert self.settings is not None
        try:
            config = load_config(self.settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        path = _index_path(config, spider_name, opts)
        index = _open(config, path)
        try:
            if action == "info":
                print(json.dumps(index.info(), indent=2, default=str))
            elif action == "show":
                print(json.dumps(_describe(index, rest[0], config), indent=2, ensure_ascii=False))
            elif action == "near":
                key = canonical_key(rest[0])
                fp = index.get(key)
                if fp is None:
                    record = PageRecord.parse(index.get_record(key))
                    fp = record.last_fp if record is not None else None
                if fp is None:
                    raise UsageError(f"{key} is not in the index at {path}")
                for match in index.near(fp, max_distance=opts.max_distance, exclude=key):
                    print(f"{match.distance}\t{match.key}")
            else:
                for row in _export(index, config):
                    print(json.dumps(row, ensure_ascii=False))
        finally:
            index.close()


def _pages(rows: Iterator[tuple[str, Any]], size: int = 1000) -> Iterator[list[tuple[str, Any]]]:
    while page := list(islice(rows, size)):
        yield page


def _export(index: SimhashIndex, config: SimhashConfig) -> Iterator[dict[str, Any]]:
    """Every key with a record (near-duplicates included: ``"fp": null``), then every key with
    a fingerprint and no record (the item index)."""
    width = config.bits // 4
    for page in _pages(index.iter_records()):
        fps = index.get_many([key for key, _ in page])
        for (key, raw), fp in zip(page, fps):
            row: dict[str, Any] = {"key": key, "fp": None if fp is None else format(fp, f"0{width}x")}
            record = PageRecord.parse(raw)
            if record is not None:
                row.update(_record_dict(record, config))
            yield row
    for page in _pages(index.iter_items()):
        records = index.get_records([key for key, _ in page])
        for (key, fp), raw in zip(page, records):
            if raw is None:
                yield {"key": key, "fp": format(fp, f"0{width}x")}


def _index_path(config: SimhashConfig, spider_name: str, opts: argparse.Namespace) -> Path:
    from scrapy.utils.project import data_path

    base = Path(opts.dir) if opts.dir else Path(data_path(config.dir)) / spider_name
    return base / ("items" if opts.items else "pages")


def _open(config: SimhashConfig, path: Path) -> SimhashIndex:
    from scrapy_simhash.index import SimhashIndex, SimhashIndexError

    if not path.is_dir():
        raise UsageError(f"no simhash index at {path} (check the spider name, SIMHASH_DIR or --dir)")
    try:
        return SimhashIndex.open(path, readonly=True, bits=config.bits, max_distance=config.max_distance)
    except (SimhashIndexError, ValueError) as exc:
        raise UsageError(str(exc)) from exc


def _record_dict(record: PageRecord, config: SimhashConfig) -> dict[str, Any]:
    width = config.bits // 4
    return {
        "first_seen": record.first_seen,
        "last_fetched": record.last_fetched,
        "last_changed": record.last_changed,
        "fetch_count": record.fetch_count,
        "change_count": record.change_count,
        "duplicate_of": record.duplicate_of,
        "next_due": record.next_due,
        "history": [{"fp": format(fp, f"0{width}x"), "distance": d} for fp, d in record.history],
    }


def _describe(index: SimhashIndex, value: str, config: SimhashConfig) -> dict[str, Any]:
    key = canonical_key(value)
    fp = index.get(key)
    record = PageRecord.parse(index.get_record(key))
    if fp is None and record is None:
        raise UsageError(f"{key} is not in the index")
    out: dict[str, Any] = {"key": key, "indexed_fp": None if fp is None else format(fp, f"0{config.bits // 4}x")}
    if record is not None:
        out.update(_record_dict(record, config))
    return out
