"""The README's settings table against scrapy_simhash.defaults (and the components' own defaults),
its distributed-crawl example, and what pyproject.toml says about the build and ./dev."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from scrapy_simhash import Fingerprinter, SimhashIndex, defaults
from scrapy_simhash.scrapy.settings import FINGERPRINTER_SETTINGS, SETTING_NAMES

README = Path(__file__).resolve().parents[2] / "README.md"
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


def _python_block_under(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n", text.index(f"\n{heading}\n")) + len("```python\n")
    return text[start : text.index("\n```", start)]


def test_the_distributed_crawl_example_keeps_scrapy_redis_state_while_crawlers_run() -> None:
    # scrapy-redis's default SCHEDULER_PERSIST = False: the first crawler whose spider closes deletes
    # the shared queue and seen requests, and the others fetch everything again.
    settings: dict[str, object] = {}
    exec(_python_block_under("## Distributed crawls"), {}, settings)  # noqa: S102 - the README's own example
    assert settings["SCHEDULER"] == "scrapy_redis.scheduler.Scheduler"
    assert settings["SCHEDULER_PERSIST"] is True
    assert settings["SIMHASH_STORE"] == "scrapy_simhash.store.RedisStore"


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    return tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))


def test_an_editable_install_takes_the_quiet_pth_path() -> None:
    # setuptools' editable_wheel installs with a .pth file, quietly, only when the package
    # directories are {"": <a folder holding every package>}; otherwise it installs an import hook and
    # warns "BuildBackendWarning: Editable installation" on every pip install -e . (./dev demo).
    setuptools = _pyproject()["tool"]["setuptools"]
    root = README.parent / setuptools["package-dir"][""]
    assert set(setuptools["package-dir"]) == {""}
    assert setuptools["packages"]["find"]["include"] == ["scrapy_simhash*"]
    assert (root / "scrapy_simhash" / "__init__.py").is_file() and (root / "scrapy_simhash" / "store").is_dir()


def test_pyproject_names_only_commands_that_exist() -> None:
    text = (README.parent / "pyproject.toml").read_text(encoding="utf-8")
    usage = (README.parent / "dev").read_text(encoding="utf-8")
    for path in re.findall(r"\b((?:scripts/)?dev)\b(?= [a-z-]+)", text):
        assert (README.parent / path).is_file(), f"pyproject.toml names {path}, which does not exist"
    for command in re.findall(r"\./dev ([a-z-]+)", text):
        assert f"#   ./dev {command} " in usage, f"pyproject.toml names ./dev {command}, which ./dev does not have"
