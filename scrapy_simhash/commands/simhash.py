"""``scrapy simhash``: the subcommands of ``commands/cli.py`` on a spider's index, with the
project's settings (``SIMHASH_DIR``, ``SIMHASH_BITS``, the fingerprinter's settings, ``-s``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from scrapy_simhash.commands.cli import (
    COMMANDS,
    FREE_COMMANDS,
    INDEX_COMMANDS,
    Target,
    add_subcommands,
    dispatch,
    open_lmdb,
    open_store,
    run_quietly,
    split_target,
)

if TYPE_CHECKING:
    from scrapy_simhash.scrapy.settings import SimhashConfig
    from scrapy_simhash.store.index import SimhashIndex


class SpiderTarget(Target):
    """A spider's index: ``--dir`` or ``data_path(SIMHASH_DIR) / <spider>``, ``pages`` (``items``
    with ``--items``), opened with the project's settings."""

    def __init__(
        self, config: SimhashConfig, spider: str | None, opts: argparse.Namespace, settings: Any = None
    ) -> None:
        self.settings = settings
        path = None
        if spider is not None:
            from scrapy.utils.project import data_path

            base = Path(opts.dir) if opts.dir else Path(data_path(config.dir)) / spider
            path = base / ("items" if opts.items else "pages")
        super().__init__(config, path, bool(opts.items))

    def open(self, write: bool = False) -> SimhashIndex:
        from scrapy_simhash.commands.reports import CommandError
        from scrapy_simhash.store.lmdbstore import LmdbStore

        path = self.path
        assert path is not None
        store_cls = self.config.store_cls
        if not issubclass(store_cls, LmdbStore):  # SIMHASH_STORE: the store the crawl writes to
            crawler: Any = SimpleNamespace(settings=self.settings)  # what from_crawler reads
            return open_store(lambda: store_cls.from_crawler(crawler, path), f"{store_cls.__name__} of {path}")
        if not path.is_dir():
            raise CommandError(f"no simhash index at {path} (check the spider name, SIMHASH_DIR or --dir)")
        return open_lmdb(path, write, self.config.index_kwargs())


class Command(ScrapyCommand):
    """``scrapy simhash <spider> COMMAND ...`` and ``scrapy simhash dedup|explain ...``.

    Opens the index read-only for the reading subcommands, so they run while a crawl writes.
    """

    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return f"<spider> {{{','.join(INDEX_COMMANDS)}}} ... | {{{','.join(FREE_COMMANDS)}}} ..."

    def short_desc(self) -> str:
        return "Inspect a spider's simhash index, explain fingerprints, deduplicate JSON lines"

    def long_desc(self) -> str:
        return (
            "Subcommands: " + ", ".join(COMMANDS) + ". Run 'scrapy simhash <spider> COMMAND -h' for one's "
            "arguments. Exit status: 0 ok, 1 error, 2 bad arguments."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        # No colon in these: Scrapy's help formatter takes a help line that ends with one for a heading.
        parser.add_argument("--items", action="store_true", help="use the pipeline's item index, not the page index")
        parser.add_argument(
            "--dir", metavar="PATH", help="the spider's index directory (by default SIMHASH_DIR/<spider>)"
        )
        parser.add_argument("-h", "--help", action="store_true", help="this help (COMMAND -h gives a subcommand's)")
        self._help = parser.format_help

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from scrapy_simhash.commands.reports import CommandError
        from scrapy_simhash.scrapy.settings import load_config

        spider, rest = split_target(args)
        if getattr(opts, "help", False):
            if not rest:
                print(self._help())
                return
            rest.append("-h")
        if not rest:
            raise UsageError("expected <spider> and a subcommand: " + ", ".join(COMMANDS))
        parser = argparse.ArgumentParser(prog="scrapy simhash" + (f" {spider}" if spider else ""))
        add_subcommands(parser)
        ns = parser.parse_args(rest)
        ns.index_given = spider is not None  # explain: with the spider's learned site templates
        if ns.command in INDEX_COMMANDS and spider is None:
            raise UsageError(f"{ns.command} needs a spider: scrapy simhash <spider> {ns.command} ...")
        assert self.settings is not None

        def go() -> None:
            try:
                config = load_config(self.settings)  # type: ignore[arg-type]
            except ValueError as exc:
                raise CommandError(str(exc), 2) from None
            dispatch(SpiderTarget(config, spider, opts, self.settings), ns, sys.stdout)

        self.exitcode = run_quietly(go, sys.stderr)
