"""What CI expects of the machine the tests run on."""

from __future__ import annotations

import os


def native_required() -> bool:
    """Whether a missing native core fails the native tests instead of skipping them: in CI
    (``CI`` set), but for the run on the oldest supported Scrapy (``./dev test-min``), which does
    not build the core (``SIMHASH_NO_NATIVE=1``)."""
    return bool(os.environ.get("CI")) and not os.environ.get("SIMHASH_NO_NATIVE")
