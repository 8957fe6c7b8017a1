"""The README's settings table against scrapy_simhash.defaults (and the components' own defaults)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from scrapy_simhash import Fingerprinter, SimhashIndex, defaults
from scrapy_simhash._settings import FINGERPRINTER_SETTINGS, SETTING_NAMES

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\| `(SIMHASH_[A-Z0-9_]+)` \| `([^`]+)`(?: \(([^)]*)\))? \|", re.MULTILINE)
# Settings whose None means "the SimhashIndex default" rather than a Fingerprinter default.
INDEX_SETTINGS = {"SIMHASH_MAX_CANDIDATES": "max_candidates"}


def _table() -> dict[str, tuple[object, str | None]]:
    rows = {}
    for name, literal, note in ROW.findall(README.read_text(encoding="utf-8")):
        rows[name] = (ast.literal_eval(literal), note or None)
    return rows


def _parameter_default(func: object, name: str) -> object:
    return inspect.signature(func).parameters[name].default  # type: ignore[arg-type]


def test_every_setting_has_one_row_in_the_readme_table() -> None:
    rows = _table()
    assert sorted(rows) == sorted(SETTING_NAMES)


def test_readme_defaults_match_the_defaults_module() -> None:
    for name, (value, _) in _table().items():
        assert value == getattr(defaults, name), f"README says {name} = {value!r}"


def test_readme_names_the_component_default_behind_none() -> None:
    for name, (value, note) in _table().items():
        if value is not None or note is None:
            continue
        if name in FINGERPRINTER_SETTINGS:
            actual = _parameter_default(Fingerprinter, FINGERPRINTER_SETTINGS[name])
        elif name in INDEX_SETTINGS:
            actual = _parameter_default(SimhashIndex.open, INDEX_SETTINGS[name])
        else:
            continue
        shown = ast.literal_eval(note.strip("`"))
        assert shown == actual, f"README says {name} = None ({note}), the component default is {actual!r}"
