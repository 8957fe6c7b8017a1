"""The demo's clock (``SIMHASH_CLOCK = "demo_site_crawler.clock.now"``): lets a demo or a test
replay crawls days apart without waiting days.

``SIMHASH_DEMO_NOW`` (environment): the Unix time to report; else the real time plus
``SIMHASH_DEMO_DAYS`` days (``demo.py --days``).
"""

from __future__ import annotations

import os
import time


def now() -> float:
    fixed = os.environ.get("SIMHASH_DEMO_NOW")
    if fixed:
        return float(fixed)
    return time.time() + float(os.environ.get("SIMHASH_DEMO_DAYS", "0")) * 86400
