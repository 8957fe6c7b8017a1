"""The pinned set (``pins.json``, written by ``make_pins.py`` from the code before a change):
the code under test computes the same fingerprints (native and Python paths), change and novelty
sketches, verdicts and record bytes. The shared data's part is checked where ``../shared/data``
is beside the repository; the generated pages' part everywhere."""

from __future__ import annotations

import json

import pytest
from make_pins import DATA, PINS, compute

from scrapy_simhash import _native

PINNED = json.loads(PINS.read_text(encoding="utf-8"))
needs_native = pytest.mark.skipif(_native.module() is None, reason="the native core is not installed")


def _compare(pinned: dict, computed: dict) -> None:
    for name, row in pinned["pages"].items():
        assert computed["pages"][name] == row, name
    assert computed["tracker"]["steps"] == pinned["tracker"]["steps"]
    for key, raw in pinned["tracker"]["records"].items():
        assert computed["tracker"]["records"][key] == raw, key


@needs_native
def test_generated_pages_give_the_pinned_values() -> None:
    _compare(PINNED["generated"], compute(False)["generated"])


@needs_native
@pytest.mark.skipif(not DATA.is_dir(), reason="shared/data not found beside the repo")
def test_shared_data_gives_the_pinned_values() -> None:
    _compare(PINNED["shared"], compute(True)["shared"])
