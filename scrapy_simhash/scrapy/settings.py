"""Read and validate the ``SIMHASH_*`` settings once, at start-up."""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from scrapy_simhash import defaults
from scrapy_simhash.errors import InvalidSettingError, SimhashIndexError
from scrapy_simhash.setting_values import get_bool, get_int, invalid, read_bool

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.settings import BaseSettings

    from scrapy_simhash.fingerprint.simhash import Fingerprinter
    from scrapy_simhash.schedule import SchedulePolicy
    from scrapy_simhash.store.base import FingerprintStore

# The logger keeps the module's former name: it is in every log line users filter on.
logger = logging.getLogger("scrapy_simhash._settings")

#: Every known setting name (the public names of :mod:`scrapy_simhash.defaults`).
SETTING_NAMES: tuple[str, ...] = tuple(sorted(name for name in vars(defaults) if name.startswith("SIMHASH_")))

#: Settings that map to :class:`~scrapy_simhash.fingerprint.simhash.Fingerprinter` keyword arguments.
FINGERPRINTER_SETTINGS: dict[str, str] = {
    "SIMHASH_FEATURES": "features",
    "SIMHASH_WEIGHTING": "weighting",
    "SIMHASH_TOKENIZER": "tokenizer",
    "SIMHASH_MIN_FEATURES": "min_features",
    "SIMHASH_SHINGLE_SIZE": "shingle_size",
    "SIMHASH_HMM": "hmm",
    "SIMHASH_MAIN_CONTENT": "main_content",
    "SIMHASH_NATIVE": "native",
}
_INT_ARGS = frozenset({"min_features", "shingle_size"})
_BOOL_ARGS = frozenset({"hmm", "main_content", "native"})


@dataclass(frozen=True)
class SimhashConfig:
    """The validated ``SIMHASH_*`` settings of one crawler."""

    enabled: bool
    dir: str
    reset: bool
    bits: int
    max_distance: int
    blocks: int | None
    change_threshold: int
    fingerprinter_kwargs: dict[str, Any]
    drop_unchanged: bool
    follow_duplicates: bool
    item_field: str | None
    item_fields: tuple[str, ...]
    item_key_field: str
    max_body_size: int
    debug: bool
    stats_verbose: bool
    store_cls: type[FingerprintStore]
    max_candidates: int | None
    history_size: int
    incremental: bool = False
    policy: SchedulePolicy | None = None
    change_similarity: float = defaults.SIMHASH_CHANGE_SIMILARITY
    wide_distance: int = defaults.SIMHASH_WIDE_DISTANCE
    wide_similarity: float = defaults.SIMHASH_WIDE_SIMILARITY
    near_similarity: float = defaults.SIMHASH_NEAR_SIMILARITY
    keep_adds: int = defaults.SIMHASH_KEEP_ADDS
    evidence_max_bytes: int = defaults.SIMHASH_EVIDENCE_MAX_BYTES
    new_priority: int = defaults.SIMHASH_NEW_PRIORITY
    recrawl_budget: int = defaults.SIMHASH_RECRAWL_BUDGET
    conditional_requests: bool = defaults.SIMHASH_CONDITIONAL_REQUESTS
    gc_freeze: bool = defaults.SIMHASH_GC_FREEZE
    remove_gone: bool = False
    clock: Callable[[], float] = time.time
    url_rules: bool = defaults.SIMHASH_URL_RULES
    url_rules_min_support: int = defaults.SIMHASH_URL_RULES_MIN_SUPPORT
    url_rules_confidence: float = defaults.SIMHASH_URL_RULES_CONFIDENCE
    url_rules_explore: float = defaults.SIMHASH_URL_RULES_EXPLORE

    def index_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`SimhashIndex` (``None`` values left out)."""
        kwargs: dict[str, Any] = {"bits": self.bits, "max_distance": self.max_distance}
        if self.blocks is not None:
            kwargs["blocks"] = self.blocks
        if self.max_candidates is not None:
            kwargs["max_candidates"] = self.max_candidates
        return kwargs

    def tracker_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~scrapy_simhash.decision.tracker.ChangeTracker`."""
        return {
            "change_threshold": self.change_threshold,
            "change_similarity": self.change_similarity,
            "wide_distance": self.wide_distance,
            "wide_similarity": self.wide_similarity,
            "near_similarity": self.near_similarity,
            "keep_adds": self.keep_adds,
            "evidence_max_bytes": self.evidence_max_bytes,
            "history_size": self.history_size,
            "policy": self.policy,
            "clock": self.clock,
        }

    def spider_dir(self, spider: Spider) -> Path:
        """The spider's index directory: ``data_path(SIMHASH_DIR) / spider.name``."""
        from scrapy.utils.project import data_path

        return Path(data_path(self.dir)) / spider.name


@overload
def _get_field_name(settings: BaseSettings, name: str, *, optional: Literal[False]) -> str: ...


@overload
def _get_field_name(settings: BaseSettings, name: str, *, optional: Literal[True]) -> str | None: ...


def _get_field_name(settings: BaseSettings, name: str, *, optional: bool) -> str | None:
    value = settings.get(name, getattr(defaults, name))
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise invalid(name, value, "it must be a non-empty field name" + (" or None" if optional else ""))
    return value.strip()


def _get_field_list(settings: BaseSettings, name: str) -> tuple[str, ...]:
    value = settings.get(name, getattr(defaults, name))
    if value is None:
        return ()
    if isinstance(value, str) and value.strip().startswith("["):  # -s 'NAME=["title", "body"]'
        try:
            fields = json.loads(value)
        except ValueError:
            raise invalid(name, value, 'a list in a string must be JSON, e.g. ["title", "body"]') from None
        if not isinstance(fields, list):
            raise invalid(name, value, 'it must be a list of field names, e.g. ["title", "body"]')
    elif isinstance(value, str):
        fields = [part.strip() for part in value.split(",")]
    elif isinstance(value, (list, tuple)):
        fields = list(value)
    else:
        raise invalid(name, value, 'it must be a list of field names, e.g. ["title", "body"]')
    if not all(isinstance(field, str) and field.strip() for field in fields):
        raise invalid(name, value, 'it must be a list of non-empty field names, e.g. ["title", "body"]')
    return tuple(field.strip() for field in fields)


def _get_dir(settings: BaseSettings) -> str:
    value = settings.get("SIMHASH_DIR", defaults.SIMHASH_DIR)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise invalid("SIMHASH_DIR", value, "it must be a non-empty directory path")
    return value


def load_config(settings: BaseSettings) -> SimhashConfig:
    """Read and validate every ``SIMHASH_*`` setting.

    Raises :class:`ValueError` naming the setting, its value and the valid range. Fingerprinter
    options (``SIMHASH_FEATURES``, ``SIMHASH_WEIGHTING``, ``SIMHASH_TOKENIZER``,
    ``SIMHASH_MIN_FEATURES``) are checked by :func:`build_fingerprinter`.
    """
    raw_bits = settings.get("SIMHASH_BITS", defaults.SIMHASH_BITS)
    bits = 64 if str(raw_bits).strip() == "64" else 128 if str(raw_bits).strip() == "128" else None
    if bits is None or isinstance(raw_bits, bool):
        raise invalid("SIMHASH_BITS", raw_bits, "it must be 64 or 128")
    max_distance = get_int(settings, "SIMHASH_MAX_DISTANCE", 0, bits - 1, high_text=f"SIMHASH_BITS - 1 ({bits - 1})")
    blocks = get_int(
        settings,
        "SIMHASH_BLOCKS",
        max_distance + 1,
        bits,
        optional=True,
        high_text=f"SIMHASH_BITS ({bits}); at least SIMHASH_MAX_DISTANCE + 1 ({max_distance + 1})",
    )
    fingerprinter_kwargs: dict[str, Any] = {}
    for name, arg in FINGERPRINTER_SETTINGS.items():
        value = settings.get(name, getattr(defaults, name))
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
            continue  # the default; -s SIMHASH_NATIVE=None
        if isinstance(value, str) and arg in _INT_ARGS and value.strip().lstrip("-").isdigit():
            value = int(value)  # from the command line: -s SIMHASH_MIN_FEATURES=5
        elif arg in _BOOL_ARGS and not isinstance(value, bool):
            value = get_bool(settings, name)
        fingerprinter_kwargs[arg] = value
    return SimhashConfig(
        enabled=get_bool(settings, "SIMHASH_ENABLED"),
        dir=_get_dir(settings),
        reset=get_bool(settings, "SIMHASH_RESET"),
        bits=bits,
        max_distance=max_distance,
        blocks=blocks,
        change_threshold=get_int(settings, "SIMHASH_CHANGE_THRESHOLD", 0, bits),
        fingerprinter_kwargs=fingerprinter_kwargs,
        drop_unchanged=get_bool(settings, "SIMHASH_DROP_UNCHANGED"),
        follow_duplicates=get_bool(settings, "SIMHASH_FOLLOW_DUPLICATES"),
        item_field=_get_field_name(settings, "SIMHASH_ITEM_FIELD", optional=True),
        item_fields=_get_field_list(settings, "SIMHASH_ITEM_FIELDS"),
        item_key_field=_get_field_name(settings, "SIMHASH_ITEM_KEY_FIELD", optional=False),
        max_body_size=get_int(settings, "SIMHASH_MAX_BODY_SIZE", 0),
        debug=get_bool(settings, "SIMHASH_DEBUG"),
        stats_verbose=get_bool(settings, "SIMHASH_STATS_VERBOSE"),
        gc_freeze=get_bool(settings, "SIMHASH_GC_FREEZE"),
        store_cls=load_store_class(settings.get("SIMHASH_STORE", defaults.SIMHASH_STORE)),
        max_candidates=get_int(settings, "SIMHASH_MAX_CANDIDATES", 1, optional=True),
        history_size=get_int(settings, "SIMHASH_HISTORY_SIZE", 1, 1000),
        incremental=get_bool(settings, "SIMHASH_INCREMENTAL"),
        policy=load_policy(settings),
        new_priority=get_int(settings, "SIMHASH_NEW_PRIORITY", -(10**9), 10**9),
        recrawl_budget=get_int(settings, "SIMHASH_RECRAWL_BUDGET", 0),
        conditional_requests=get_bool(settings, "SIMHASH_CONDITIONAL_REQUESTS"),
        remove_gone=_get_choice(settings, "SIMHASH_GONE", ("keep", "remove")) == "remove",
        clock=load_clock(settings),
        change_similarity=_get_share(settings, "SIMHASH_CHANGE_SIMILARITY"),
        wide_distance=get_int(settings, "SIMHASH_WIDE_DISTANCE", 0, bits),
        wide_similarity=_get_float(
            settings, "SIMHASH_WIDE_SIMILARITY", lambda x: 0 < x <= 1, "it must be a number above 0 and at most 1"
        ),
        near_similarity=_get_share(settings, "SIMHASH_NEAR_SIMILARITY"),
        keep_adds=get_int(settings, "SIMHASH_KEEP_ADDS", 0),
        evidence_max_bytes=get_int(settings, "SIMHASH_EVIDENCE_MAX_BYTES", 0),
        url_rules=get_bool(settings, "SIMHASH_URL_RULES"),
        url_rules_min_support=get_int(settings, "SIMHASH_URL_RULES_MIN_SUPPORT", 6),
        url_rules_confidence=_get_float(
            settings, "SIMHASH_URL_RULES_CONFIDENCE", lambda x: 0 < x < 1, "it must be a number above 0 and below 1"
        ),
        url_rules_explore=_get_share(settings, "SIMHASH_URL_RULES_EXPLORE"),
    )


def _get_float(settings: BaseSettings, name: str, valid: Callable[[float], bool], expected: str) -> float:
    value = settings.get(name, getattr(defaults, name))
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or not valid(number):
        raise invalid(name, value, expected)
    return number


def _get_seconds(settings: BaseSettings, name: str) -> float:
    return _get_float(settings, name, lambda x: x > 0, "it must be a number of seconds > 0")


def _get_share(settings: BaseSettings, name: str) -> float:
    return _get_float(settings, name, lambda x: 0 <= x <= 1, "it must be a number between 0 and 1 (0 turns it off)")


def _get_choice(settings: BaseSettings, name: str, choices: tuple[str, ...]) -> str:
    value = settings.get(name, getattr(defaults, name))
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise invalid(name, value, "it must be " + " or ".join(repr(c) for c in choices))
    return value.strip().lower()


def _load(name: str, value: Any) -> Any:
    """``value`` itself, or the object its dotted path names (ValueError naming the setting)."""
    from scrapy.utils.misc import load_object

    if not isinstance(value, str):
        return value
    try:
        return load_object(value.strip())
    except (ImportError, AttributeError, NameError, ValueError) as exc:
        raise invalid(name, value, f"it cannot be imported ({exc})") from exc


def load_policy(settings: BaseSettings) -> SchedulePolicy:
    """The recrawl policy of `SIMHASH_RECRAWL_POLICY`, built with the interval settings and
    `SIMHASH_RECRAWL_POLICY_OPTIONS`; ValueError naming the setting when it is not usable."""
    from scrapy_simhash.schedule import SchedulePolicy

    name = "SIMHASH_RECRAWL_POLICY"
    value = settings.get(name, defaults.SIMHASH_RECRAWL_POLICY)
    cls = _load(name, value)
    if not isinstance(cls, type) or not issubclass(cls, SchedulePolicy):
        raise invalid(
            name,
            value,
            "it must name a SchedulePolicy class, e.g. 'scrapy_simhash.schedule.FreshnessPolicy' or "
            "'scrapy_simhash.schedule.NutchAdaptivePolicy'",
        )
    options = settings.get("SIMHASH_RECRAWL_POLICY_OPTIONS") or {}
    if isinstance(options, str):  # -s SIMHASH_RECRAWL_POLICY_OPTIONS='{"probe_ratio": 4}', as Scrapy's getdict reads it
        with suppress(ValueError):  # refused below, with the value given
            options = json.loads(options)
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise invalid(
            "SIMHASH_RECRAWL_POLICY_OPTIONS",
            settings.get("SIMHASH_RECRAWL_POLICY_OPTIONS"),
            "it must be a dict of keyword arguments (a JSON object on the command line)",
        )
    intervals = {
        "default_interval": _get_seconds(settings, "SIMHASH_RECRAWL_INTERVAL"),
        "min_interval": _get_seconds(settings, "SIMHASH_RECRAWL_MIN_INTERVAL"),
        "max_interval": _get_seconds(settings, "SIMHASH_RECRAWL_MAX_INTERVAL"),
    }
    try:
        return cls(**{**intervals, **options})
    except (TypeError, ValueError) as exc:
        raise InvalidSettingError(
            f"{name} ({value!r}) cannot be built from SIMHASH_RECRAWL_INTERVAL, SIMHASH_RECRAWL_MIN_INTERVAL, "
            f"SIMHASH_RECRAWL_MAX_INTERVAL and SIMHASH_RECRAWL_POLICY_OPTIONS ({options!r}): {exc}"
        ) from exc


def load_clock(settings: BaseSettings) -> Callable[[], float]:
    """The clock of `SIMHASH_CLOCK` (``time.time`` by default)."""
    value = settings.get("SIMHASH_CLOCK", defaults.SIMHASH_CLOCK)
    if value is None:
        return time.time
    clock = _load("SIMHASH_CLOCK", value)
    if not callable(clock):
        raise invalid("SIMHASH_CLOCK", value, "it must be a callable returning Unix seconds, or None")
    return clock  # type: ignore[no-any-return]


def load_store_class(value: Any) -> type[FingerprintStore]:
    """The store class named by `SIMHASH_STORE` (a dotted path or the class itself).

    Raises :class:`ValueError` naming the setting and the fix: for a path that does not import,
    for a class that is not a store, and for a store whose optional dependency is missing (the
    message names the package to install).
    """
    from scrapy.utils.misc import load_object

    from scrapy_simhash.store.base import FingerprintStore

    given = value
    if isinstance(value, str) and value.strip():
        path = value.strip()
        try:
            value = load_object(path)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if missing and not path.startswith(missing):
                raise InvalidSettingError(
                    f"SIMHASH_STORE ({path!r}) needs the Python package {missing!r}, which is not installed: "
                    f"install it (pip install {missing}) or choose another store"
                ) from exc
            raise invalid("SIMHASH_STORE", path, f"it cannot be imported ({exc})") from exc
        except (ImportError, AttributeError, NameError, ValueError) as exc:
            raise invalid("SIMHASH_STORE", path, f"it cannot be imported ({exc})") from exc
    if not isinstance(value, type) or not issubclass(value, FingerprintStore):
        raise invalid(
            "SIMHASH_STORE",
            given,
            "it must name a FingerprintStore class, e.g. 'scrapy_simhash.store.LmdbStore' or "
            "'scrapy_simhash.store.MemoryStore'",
        )
    return value


def warn_unknown_settings(settings: BaseSettings) -> list[str]:
    """Log a warning for each ``SIMHASH_*`` name that is not a known setting; return them.

    A typo must not silently switch deduplication off, so the warning names the closest
    valid setting.
    """
    unknown = sorted(
        name for name in settings if isinstance(name, str) and name.startswith("SIMHASH_") and name not in SETTING_NAMES
    )
    for name in unknown:
        close = difflib.get_close_matches(name, SETTING_NAMES, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else f"valid settings: {', '.join(SETTING_NAMES)}"
        logger.warning("Unknown setting %(name)s is ignored: %(hint)s", {"name": name, "hint": hint})
    return unknown


def build_fingerprinter(config: SimhashConfig) -> Fingerprinter:
    """Build the :class:`Fingerprinter` for ``config``; a bad option -> ValueError naming the setting."""
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    try:
        return Fingerprinter(bits=config.bits, **config.fingerprinter_kwargs)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        culprits = [
            name
            for name, arg in FINGERPRINTER_SETTINGS.items()
            if arg in config.fingerprinter_kwargs and arg in message
        ] or [name for name, arg in FINGERPRINTER_SETTINGS.items() if arg in config.fingerprinter_kwargs]
        if not culprits:
            raise
        values = ", ".join(
            f"{name} ({config.fingerprinter_kwargs[FINGERPRINTER_SETTINGS[name]]!r})" for name in culprits
        )
        raise InvalidSettingError(f"{values} is invalid: {message}") from exc


_REPORTED = "_simhash_reported"  # set on an error that reported_at_startup() logged


@contextmanager
def reported_at_startup() -> Iterator[None]:
    """Around what a component does in ``from_crawler``: an error that stops the crawl before it
    starts (a bad setting or spider argument, an index that cannot be opened or has other
    settings) is logged as one ERROR line that names the problem and the fix, and raised as
    before, so that ``scrapy crawl`` exits with status 1.

    Scrapy logs such an error once more, with the traceback of its own start-up code that buries
    the message: asyncio's "Task exception was never retrieved" (Scrapy >= 2.13) or Twisted's
    "Unhandled error in Deferred" (older Scrapy, where Twisted also prints it to stderr itself,
    out of reach of logging). :class:`_ReportedErrorFilter` leaves out those records, and only
    those (records of an error logged here)."""
    try:
        yield
    except (InvalidSettingError, SimhashIndexError) as exc:
        if not getattr(exc, _REPORTED, False):
            setattr(exc, _REPORTED, True)
            _ReportedErrorFilter.install()
            logger.error("scrapy-simhash cannot start: %(error)s", {"error": exc})
        raise


class _ReportedErrorFilter(logging.Filter):
    """On the ``asyncio`` and ``twisted`` loggers: drops the records whose exception is one that
    :func:`reported_at_startup` logged (Scrapy's repetition of it, with its traceback)."""

    _LOGGERS = ("asyncio", "twisted")

    @classmethod
    def install(cls) -> None:
        for name in cls._LOGGERS:
            target = logging.getLogger(name)
            if not any(isinstance(f, cls) for f in target.filters):
                target.addFilter(cls())

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not getattr(error, _REPORTED, False)


def spider_flag(spider: Spider | None, name: str, default: bool) -> bool:
    """The spider attribute ``name`` (a class attribute, or a spider argument ``-a name=VALUE``,
    which Scrapy sets as a string) read by :func:`read_bool`; ``default`` when it is not set."""
    value = getattr(spider, name, None) if spider is not None else None
    if value is None:
        return default
    return read_bool(f"The spider argument {name}", value)


def spider_opted_out(spider: Spider | None) -> bool:
    """True when the spider sets ``simhash_enabled`` false (``-a simhash_enabled=False``)."""
    return not spider_flag(spider, "simhash_enabled", True)


def spider_wants_reset(config: SimhashConfig, spider: Spider | None) -> bool:
    """``SIMHASH_RESET`` or the spider attribute ``simhash_reset`` true (``-a simhash_reset=1``)."""
    return spider_flag(spider, "simhash_reset", False) or config.reset
