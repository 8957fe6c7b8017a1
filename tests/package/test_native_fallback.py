"""Without the native core (never built, or its module blocked here): the Python path runs, the
same fingerprints come out, and ``native=True`` is refused with the fix. Runs with or without it."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import sys
sys.modules["scrapy_simhash_native"] = None  # import fails as if it were not installed
from scrapy_simhash.fingerprint.simhash import Fingerprinter
f = Fingerprinter()
assert not f.native and "native=False" in repr(f), repr(f)
print(f.fingerprint_text("Harbour cranes return after a decade of repairs 港口起重机修复后重新启用"))
print(decided())
try:
    Fingerprinter(native=True)
except ImportError as exc:
    print("refused:", exc)
"""

DECIDE = r"""
def decided():
    from scrapy_simhash import _native
    from scrapy_simhash.store.index import SimhashIndex
    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.fingerprint import PageFingerprint
    from scrapy_simhash.schedule import FreshnessPolicy

    tracker = ChangeTracker(SimhashIndex(), policy=FreshnessPolicy())
    for i, fp in enumerate((0xF0F0, 0xF0F1, 0xFFFF0000F0F1)):
        record = tracker.observe("https://example.com/a", PageFingerprint.of(fp), 1_700_000_000.123456 + i * 97_531.4567).record
    return ("native" if _native.module() else "python") + " " + record.to_bytes().hex()
"""


def test_without_the_native_core_the_python_path_runs() -> None:
    out = subprocess.run([sys.executable, "-c", DECIDE + SCRIPT], capture_output=True, text=True, check=True).stdout
    fp_line, record_line, refused = out.splitlines()[-3:]
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    text = "Harbour cranes return after a decade of repairs 港口起重机修复后重新启用"
    assert int(fp_line) == Fingerprinter().fingerprint_text(text) == Fingerprinter(native=False).fingerprint_text(text)
    assert refused.startswith("refused: the native core (scrapy_simhash_native) is not installed: pip install ./native")
    assert "SIMHASH_NATIVE = False" in refused
    # The per-page decision's records: the Python codec's bytes, the same as here (native where built).
    here = subprocess.run(
        [sys.executable, "-c", DECIDE + "print(decided())"], capture_output=True, text=True, check=True
    )
    assert record_line.startswith("python ") and record_line.split()[1] == here.stdout.split()[1]
