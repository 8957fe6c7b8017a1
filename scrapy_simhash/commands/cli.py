"""The subcommands' arguments, dispatch and printing, shared by both doors.

``scrapy-simhash TARGET COMMAND ...`` (console script: :func:`main`; TARGET is an index directory)
and ``scrapy simhash SPIDER COMMAND ...`` (``commands/simhash.py``: the spider's index, the
project's settings). ``dedup`` takes no TARGET; ``explain`` takes one for its learned site
templates. The report functions are in ``reports.py``, ``dedup.py`` and ``htmlreport.py``; this
module only opens, calls and prints.

Exit status: 0 success; 1 an error of the input (not an index, a URL not in it, a file or URL
that cannot be read, a store error); 2 bad arguments; 130 interrupted. A closed pipe
(``| head``) ends the command quietly with status 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from scrapy_simhash.commands import reports
from scrapy_simhash.commands.reports import EXIT_ERROR, EXIT_USAGE, CommandError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from scrapy_simhash.fingerprint.simhash import Fingerprinter
    from scrapy_simhash.scrapy.settings import SimhashConfig
    from scrapy_simhash.store.base import FingerprintStore
    from scrapy_simhash.store.index import SimhashIndex

#: Subcommands that read or change an index (they need a TARGET: an index or a spider).
INDEX_COMMANDS = ("info", "show", "dropped", "near", "due", "export", "prune", "remove", "reset", "report", "rules")
#: Subcommands that need no index.
FREE_COMMANDS = ("dedup", "explain")
COMMANDS = INDEX_COMMANDS + FREE_COMMANDS


class Target:
    """What a door gives the subcommands: its settings and a way to open its index."""

    def __init__(self, config: SimhashConfig, path: Path | None = None, items: bool = False) -> None:
        self.config = config
        self.path = path
        self.items = items

    def open(self, write: bool = False) -> SimhashIndex:
        """The index, read-only unless ``write``; :class:`CommandError` if there is none."""
        raise NotImplementedError

    def fingerprinter(self) -> Fingerprinter:
        from scrapy_simhash.scrapy.settings import build_fingerprinter

        try:
            return build_fingerprinter(self.config)
        except (TypeError, ValueError) as exc:
            raise CommandError(str(exc), EXIT_USAGE) from None


def open_lmdb(path: Path, write: bool, index_kwargs: dict[str, Any] | None) -> SimhashIndex:
    """Open the LMDB index at ``path``; ``index_kwargs`` ``None``: with the stored layout."""
    from scrapy_simhash.errors import SimhashIndexError
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.store.lmdbstore import LmdbStore

    if not path.is_dir():
        raise CommandError(f"{path} is not a scrapy-simhash index: no such directory")
    try:
        if index_kwargs is None:
            store = LmdbStore(path, readonly=True)
            try:
                raw = store.open()
            finally:
                store.close()
            meta = json.loads(raw or b"{}")
            index_kwargs = {"bits": meta.get("bits"), "max_distance": meta.get("max_distance")}
        return SimhashIndex.open(path, readonly=not write, **index_kwargs)
    except (SimhashIndexError, ValueError, TypeError) as exc:
        raise CommandError(_not_usable(str(path), exc)) from None


def _not_usable(where: str, exc: Exception) -> str:
    """The error line for an index that cannot be opened: the store's message where it names the
    location (it says what is wrong and the fix), else the location and the message."""
    message = str(exc)
    return message if where in message else f"{where} is not a usable scrapy-simhash index: {message}"


class PathTarget(Target):
    """The console script's target: an index directory, or a spider directory holding ``pages``
    (``items`` with ``--items``)."""

    def __init__(self, config: SimhashConfig, path: Path, items: bool = False) -> None:
        sub = path / ("items" if items else "pages")
        where = sub if sub.is_dir() else path
        super().__init__(config, where, items or where.name == "items")

    def open(self, write: bool = False) -> SimhashIndex:
        assert self.path is not None
        return open_lmdb(self.path, write, None)


class RedisTarget(Target):
    """The console script's target on a Redis store: ``redis://host:port/db#PREFIX``, ``PREFIX``
    being the spider's key prefix (`SIMHASH_REDIS_PREFIX`, ``simhash:<spider>`` by default) or an
    index's whole prefix (ending in ``:pages`` or ``:items``)."""

    def __init__(self, config: SimhashConfig, target: str, items: bool = False) -> None:
        super().__init__(config)
        self.url, _, prefix = target.partition("#")
        if not prefix:
            raise CommandError(
                f"{target}: name the index after '#', e.g. {target}#simhash:SPIDER (SIMHASH_REDIS_PREFIX)", EXIT_USAGE
            )
        if not prefix.endswith((":pages", ":items")):
            prefix += ":items" if items else ":pages"
        self.prefix = prefix
        self.items = prefix.endswith(":items")

    def open(self, write: bool = False) -> SimhashIndex:
        try:
            from scrapy_simhash.store.redisstore import RedisStore
        except ImportError:
            raise CommandError("the Redis store needs redis-py: pip install 'scrapy-simhash[redis]'") from None
        return open_store(lambda: RedisStore(self.url, self.prefix), f"{self.prefix} at {self.url}")


def open_store(make_store: Callable[[], FingerprintStore], where: str) -> SimhashIndex:
    """The index in the store that ``make_store`` builds (any store but LMDB's directories), with
    its stored layout; :class:`CommandError` when there is none: a command never creates one."""
    from scrapy_simhash.errors import SimhashIndexError
    from scrapy_simhash.store.index import SimhashIndex

    try:
        probe = make_store()
        try:
            raw = probe.open()
        finally:
            probe.close()
        if raw is None:
            raise CommandError(f"there is no scrapy-simhash index under {where}")
        meta = json.loads(raw)
        return SimhashIndex(make_store(), bits=meta["bits"], max_distance=meta["max_distance"])
    except (SimhashIndexError, ValueError, KeyError) as exc:
        raise CommandError(_not_usable(where, exc)) from None


# -- arguments --------------------------------------------------------------------------------


def add_subcommands(parser: argparse.ArgumentParser) -> None:
    """The subcommands and their arguments (the same in both doors)."""
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def cmd(name: str, help: str, json_flag: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print JSON (one object per line for lists)")
        return p

    cmd("info", "layout, settings, counts by last verdict, size on disk, bucket-size histogram")
    cmd("show", "one URL: times, fingerprint history with change distances, duplicate_of, next due").add_argument("url")
    cmd("dropped", "every URL held back as a near-duplicate, the URL it duplicates, the distance").add_argument(
        "--of", metavar="URL", help="only the copies of this page"
    )
    p = cmd("explain", "the title and text fingerprinted, heaviest features, fingerprint (two pages: distance, diff)")
    p.add_argument("sources", nargs="+", metavar="URL|FILE", help="one or two pages: http(s) URLs or HTML files")
    p.add_argument("--top", type=int, default=15, help="features to list (default 15)")
    p = cmd("near", "entries near a text, a file or a URL, with distance and similarity")
    p.add_argument("text", nargs="?", help="a text to fingerprint, or an http(s) URL (as --url)")
    p.add_argument("--file", help="an HTML file to fingerprint")
    p.add_argument("--url", help="a URL: its fingerprint in the index (with the copies dropped as its duplicates)")
    p.add_argument("-k", "--max-distance", type=int, default=None, help="largest distance (default: the index's)")
    cmd("due", "the known URLs an incremental crawl now fetches again, in its order (due, or the budget)").add_argument(
        "--limit", type=int, default=100, help="at most this many (default 100)"
    )
    cmd("export", "JSON lines: every URL with a fingerprint or a record", json_flag=False)
    cmd("prune", "forget the URLs not fetched for a while").add_argument(
        "--older-than", required=True, metavar="DURATION", help="e.g. 30d, 12h, 2w"
    )
    cmd("remove", "forget one URL (fingerprint and record)").add_argument("url")
    cmd("reset", "delete the index", json_flag=False).add_argument(
        "--yes", action="store_true", help="do not ask for confirmation"
    )
    p = cmd(
        "rules", "the URL rules learned (SIMHASH_URL_RULES): evidence, requests saved; explain a URL; disable or pin"
    )
    p.add_argument("--host", help="only this host's rules (host[:port]); needed with --disable, --pin, --clear")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--explain", metavar="URL", help="which rule would skip this URL, and why")
    how.add_argument("--disable", metavar="RULE", help="never apply RULE (e.g. param:sort) on --host")
    how.add_argument("--pin", metavar="RULE", help="apply RULE on --host whatever the evidence")
    how.add_argument("--clear", metavar="RULE", help="let the evidence decide RULE again on --host")
    p = cmd("report", "write a self-contained HTML report of the index", json_flag=False)
    p.add_argument("-o", "--output", default="simhash-report.html", help="file to write (default simhash-report.html)")
    p = cmd("dedup", "near-duplicate removal over a JSON lines file: kept lines to stdout", json_flag=False)
    p.add_argument("input", metavar="FILE.jsonl|-", help="JSON lines file, or - for stdin")
    p.add_argument("--field", action="append", required=True, help="field to fingerprint (repeat: --field title)")
    p.add_argument("-o", "--output", help="write the kept lines here (default: stdout)")
    p.add_argument(
        "--report", help="write a JSON line per dropped line here (line, kept_line, distance, cluster, adds)"
    )
    p.add_argument(
        "-k", "--max-distance", type=int, default=None, help="largest distance (default SIMHASH_MAX_DISTANCE)"
    )
    p.add_argument(
        "--keep-adds",
        type=int,
        default=None,
        metavar="N",
        help="keep a line that adds N or more characters to the kept line it resembles "
        "(default SIMHASH_KEEP_ADDS; 0: resemblance alone decides)",
    )
    p.add_argument("--workers", type=int, default=None, help="processes (default: the machine's cores)")


def split_target(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """``(TARGET, the rest)``: no target when the first argument is a subcommand (and the second is not)."""
    args = list(args)
    if not args or args[0].startswith("-") or (args[0] in COMMANDS and (len(args) == 1 or args[1] not in COMMANDS)):
        return None, args
    return args[0], args[1:]


# -- printing ---------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return " ".join(_text(v) for v in value)
    return "-" if value is None else str(value)


def print_mapping(data: dict[str, Any], out: TextIO, indent: str = "") -> None:
    """``name: value`` lines; nested mappings indented, lists of mappings one per line."""
    for name, value in data.items():
        if isinstance(value, dict):
            out.write(f"{indent}{name}:\n")
            print_mapping(value, out, indent + "  ")
        elif (
            isinstance(value, list) and value and isinstance(value[0], dict) and isinstance(value[0].get("source"), str)
        ):
            for row in value:  # explain's pages: one block each
                out.write(f"{indent}{name[:-1]}: {row['source']}\n")
                print_mapping({k: v for k, v in row.items() if k != "source"}, out, indent + "  ")
        elif isinstance(value, list) and value and isinstance(value[0], (dict, list)):
            out.write(f"{indent}{name}:\n")
            for row in value:
                cells = row.values() if isinstance(row, dict) else row
                out.write(f"{indent}  " + "  ".join(_text(c) for c in cells) + "\n")
        elif isinstance(value, str) and "\n" in value:
            out.write(f"{indent}{name}:\n")
            out.writelines(f"{indent}  | {line}\n" for line in value.splitlines())
        else:
            out.write(f"{indent}{name}: {_text(value)}\n")


def print_rows(rows: Iterable[dict[str, Any]], out: TextIO, as_json: bool) -> None:
    """One line per row: JSON, or the values tab-separated."""
    for row in rows:
        if as_json:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            out.write("\t".join(_text(v) for v in row.values()) + "\n")


def print_data(data: dict[str, Any], out: TextIO, as_json: bool) -> None:
    """``data`` as one line of JSON (one document per line, as ``export`` and the lists print), or
    as indented ``name: value`` lines."""
    if as_json:
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        print_mapping(data, out)


# -- dispatch ---------------------------------------------------------------------------------


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise CommandError("reset asks for confirmation, and stdin is not a terminal: add --yes", EXIT_USAGE)
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _reset(target: Target, yes: bool, out: TextIO) -> None:
    from scrapy_simhash.store.index import SimhashIndex

    with target.open() as index:  # refuses anything that is not an index
        keys, records = len(index), sum(1 for _ in index.iter_records())
        where = index.path
    from scrapy_simhash.store.lmdbstore import open_elsewhere

    if where and open_elsewhere(where):
        raise CommandError(
            f"the index at {where} is open in another process (a crawl?): stop it, then reset; nothing was deleted"
        )
    if not yes and not _confirm(f"Delete the index at {where} ({keys} fingerprints, {records} records)?"):
        out.write("nothing deleted\n")
        return
    SimhashIndex.destroy(where or "")
    out.write(f"deleted the index at {where}\n")


def _near(target: Target, ns: argparse.Namespace, index: SimhashIndex, out: TextIO) -> None:
    if ns.text is not None and ns.text.startswith(("http://", "https://")):  # a URL, as show takes it
        ns.url, ns.text = (ns.text, None) if ns.url is None else (ns.url, ns.text)
    given = [name for name in ("text", "file", "url") if getattr(ns, name) is not None]
    if len(given) != 1:
        raise CommandError("near takes one of: a TEXT, --file FILE or --url URL", EXIT_USAGE)
    if ns.url is not None:
        print_rows(reports.near_url(index, ns.url, ns.max_distance), out, ns.json)
        return
    fingerprinter = target.fingerprinter()
    if ns.file is not None:
        fp = int(reports.explain(fingerprinter, [ns.file], top=0)["pages"][0]["fp"], 16)
    else:
        from scrapy_simhash.fingerprint.simhash import EmptyTextError

        try:
            fp = fingerprinter.fingerprint_text(ns.text)
        except EmptyTextError:
            raise CommandError("the text has no words to fingerprint", EXIT_USAGE) from None
    rows = [dict(m, copy_of=None) for m in reports.near(index, fp, ns.max_distance)]
    print_rows(rows, out, ns.json)


def _dedup(target: Target, ns: argparse.Namespace, out: TextIO) -> None:
    from scrapy_simhash.commands.dedup import dedup

    config = target.config
    k = config.max_distance if ns.max_distance is None else ns.max_distance
    if not 0 <= k < config.bits:
        raise CommandError(f"-k {k} is out of range: it must be between 0 and {config.bits - 1}", EXIT_USAGE)
    keep_adds = config.keep_adds if ns.keep_adds is None else ns.keep_adds
    if keep_adds < 0:
        raise CommandError(
            f"--keep-adds {keep_adds} is invalid: it must be >= 0 (0: resemblance alone decides)", EXIT_USAGE
        )
    if ns.workers is not None and ns.workers < 1:
        raise CommandError("--workers must be at least 1", EXIT_USAGE)
    target.fingerprinter()  # bad settings fail here, not in a worker
    kwargs = {"bits": config.bits, **config.fingerprinter_kwargs}
    if ns.output and ns.input != "-" and os.path.exists(ns.output) and os.path.samefile(ns.input, ns.output):
        raise CommandError(f"-o {ns.output} is the input file: write the kept lines to another file", EXIT_USAGE)
    with contextlib.ExitStack() as files:
        try:
            source = sys.stdin.buffer if ns.input == "-" else files.enter_context(open(ns.input, "rb"))
            kept = files.enter_context(open(ns.output, "wb")) if ns.output else out.buffer
            report = files.enter_context(open(ns.report, "wb")) if ns.report else None
        except OSError as exc:
            raise CommandError(f"{exc.filename}: {exc.strerror}") from None
        with _progress_bar() as bar:
            result = dedup(
                source,
                kept,
                report,
                tuple(ns.field),
                kwargs,
                max_distance=k,
                keep_adds=keep_adds,
                workers=ns.workers,
                progress=bar.update,
            )
        kept.flush()
    sys.stderr.write("dedup: " + ", ".join(f"{name}={value}" for name, value in result.as_dict().items()) + "\n")


def _progress_bar() -> Any:
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(unit=" lines", unit_scale=True, file=sys.stderr, disable=not sys.stderr.isatty(), mininterval=0.5)


def _report(target: Target, ns: argparse.Namespace, index: SimhashIndex, out: TextIO) -> None:
    from scrapy_simhash.commands.htmlreport import write_report

    path = write_report(index, ns.output, target.config.change_threshold)
    out.write(f"wrote {path}\n")


def _due(target: Target, ns: argparse.Namespace, index: SimhashIndex, out: TextIO) -> None:
    """The crawl's selection (with `SIMHASH_RECRAWL_BUDGET`), or, when it is empty, one line
    saying so with the next due time (text output only: JSON lists nothing)."""
    config = target.config
    now = config.clock()
    rows = reports.due(index, now, ns.limit, config.policy, config.recrawl_budget)
    print_rows(rows, out, ns.json)
    if not rows and not ns.json:
        out.write(reports.nothing_due(index, now))


def _rules(target: Target, ns: argparse.Namespace, index: SimhashIndex, out: TextIO) -> None:
    from scrapy_simhash.commands import rules
    from scrapy_simhash.urlrules.learner import DISABLED, PINNED

    if ns.explain is not None:
        print_data(rules.explain(index, target.config, ns.explain), out, ns.json)
        return
    for how, rule in ((DISABLED, ns.disable), (PINNED, ns.pin), (None, ns.clear)):
        if rule is not None:
            print_data(rules.override(index, target.config, ns.host, rule, how), out, ns.json)
            return
    print_rows(rules.list_rules(index, target.config, ns.host), out, ns.json)


def _dropped(target: Target, ns: argparse.Namespace, index: SimhashIndex, out: TextIO) -> None:
    """``dropped``: the rows, or a line on stderr saying why there are none."""
    rows = list(reports.dropped(index, ns.of))
    print_rows(rows, out, ns.json)
    if rows:
        return
    if target.items:
        why = (
            "an item index keeps no record of the items it dropped: the crawl's log names each "
            "(NearDuplicateItem) and the stat simhash/items/near_duplicate counts them"
        )
    elif ns.of is not None:
        why = f"no URL was held back as a near-duplicate of {ns.of} at its last fetch"
    else:
        why = "no URL of this index was held back as a near-duplicate at its last fetch"
    sys.stderr.write(f"dropped: none listed: {why}\n")


def dispatch(target: Target, ns: argparse.Namespace, out: TextIO) -> None:
    """Run the parsed subcommand ``ns`` on ``target``, printing to ``out``."""
    command = ns.command
    if command == "explain":
        if len(ns.sources) > 2:
            raise CommandError("explain takes one or two pages", EXIT_USAGE)
        if not getattr(ns, "index_given", False):
            print_data(reports.explain(target.fingerprinter(), ns.sources, ns.top, target.config), out, ns.json)
            return
        with target.open() as index:  # its learned site templates, as the crawl uses them
            explained = reports.explain(target.fingerprinter(), ns.sources, ns.top, target.config, index)
        print_data(explained, out, ns.json)
        return
    if command == "dedup":
        _dedup(target, ns, out)
        return
    if command == "reset":
        _reset(target, ns.yes, out)
        return
    threshold = target.config.change_threshold
    handlers: dict[str, Callable[[SimhashIndex], None]] = {
        "info": lambda index: print_data(reports.index_info(index, threshold), out, ns.json),
        "show": lambda index: print_data(reports.show(index, ns.url, threshold), out, ns.json),
        "dropped": lambda index: _dropped(target, ns, index, out),
        "near": lambda index: _near(target, ns, index, out),
        "due": lambda index: _due(target, ns, index, out),
        "export": lambda index: print_rows(reports.export(index, threshold), out, True),
        "prune": lambda index: print_data(reports.prune(index, reports.parse_duration(ns.older_than)), out, ns.json),
        "remove": lambda index: print_data(reports.remove(index, ns.url), out, ns.json),
        "report": lambda index: _report(target, ns, index, out),
        "rules": lambda index: _rules(target, ns, index, out),
    }
    writes = command in ("prune", "remove") or (command == "rules" and (ns.disable or ns.pin or ns.clear))
    with target.open(write=bool(writes)) as index:
        handlers[command](index)


def run_quietly(fn: Callable[[], None], err: TextIO) -> int:
    """Run ``fn``: a user error -> one line on ``err`` and its exit status, a closed pipe -> 0,
    Ctrl-C -> 130; never a traceback for those."""
    from scrapy_simhash.errors import StoreError

    try:
        fn()
        sys.stdout.flush()
    except CommandError as exc:
        err.write(f"error: {exc}\n")
        return exc.code
    except StoreError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (| head): send the rest of our output nowhere, quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return 130
    return 0


def _console_config(pairs: list[str]) -> SimhashConfig:
    from scrapy.settings import Settings

    from scrapy_simhash.scrapy.settings import load_config

    settings = Settings()
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CommandError(f"-s {pair!r}: write -s NAME=VALUE", EXIT_USAGE)
        settings.set(name, value, priority="cmdline")
    try:
        return load_config(settings)
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


def main(argv: Sequence[str] | None = None) -> int:
    """The ``scrapy-simhash`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="scrapy-simhash",
        add_help=False,
        description="Inspect a scrapy-simhash index, explain fingerprints, deduplicate JSON lines.",
        epilog="TARGET: an index directory (.scrapy/simhash/<spider>/pages), a spider's directory, or a "
        "Redis store as redis://host:port/db#simhash:<spider> (SIMHASH_REDIS_PREFIX). "
        "dedup takes no TARGET; explain takes one for its learned site templates. "
        "Exit status: 0 ok, 1 error, 2 bad arguments.",
        usage=f"scrapy-simhash [-s NAME=VALUE] [--items] TARGET {{{','.join(INDEX_COMMANDS)}}} ...\n"
        "       scrapy-simhash [-s NAME=VALUE] [TARGET] explain ...\n"
        "       scrapy-simhash [-s NAME=VALUE] dedup ...",
    )
    parser.add_argument("-h", "--help", action="store_true", help="this help; COMMAND -h: a subcommand's")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE", help="a SIMHASH_* setting")
    parser.add_argument("--items", action="store_true", help="the item index of a spider directory")
    options, rest = parser.parse_known_args(argv)
    target_arg, rest = split_target(rest)
    if options.help:
        if not rest:
            parser.print_help()
            return 0
        rest.append("-h")
    sub = argparse.ArgumentParser(prog="scrapy-simhash" + (f" {target_arg}" if target_arg else ""))
    add_subcommands(sub)
    ns = sub.parse_args(rest)
    if ns.command in INDEX_COMMANDS and target_arg is None:
        parser.error(f"{ns.command} needs a TARGET: scrapy-simhash TARGET {ns.command} ...")
    if ns.command == "dedup" and target_arg is not None:
        parser.error(f"{ns.command} takes no TARGET: scrapy-simhash {ns.command} ...")
    ns.index_given = target_arg is not None  # explain: with the index's learned site templates

    def go() -> None:
        config = _console_config(options.set)
        target: Target
        if target_arg and target_arg.startswith(("redis://", "rediss://", "unix://")):
            target = RedisTarget(config, target_arg, items=options.items)
        elif target_arg and "://" in target_arg:
            raise CommandError(
                f"{target_arg}: unknown store URL; give an index directory or redis://...#PREFIX", EXIT_USAGE
            )
        else:
            target = PathTarget(config, Path(target_arg or "."), items=options.items)
        dispatch(target, ns, sys.stdout)

    return run_quietly(go, sys.stderr)


def console_script() -> None:
    sys.exit(main())
