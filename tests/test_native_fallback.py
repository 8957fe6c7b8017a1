"""Without the native core (never built, or its module blocked here): the Python path runs, the
same fingerprints come out, and ``native=True`` is refused with the fix. Runs with or without it."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import sys
sys.modules["scrapy_simhash_native"] = None  # import fails as if it were not installed
from scrapy_simhash.fingerprint import Fingerprinter
f = Fingerprinter()
assert not f.native and "native=False" in repr(f), repr(f)
print(f.fingerprint_text("Harbour cranes return after a decade of repairs 港口起重机修复后重新启用"))
try:
    Fingerprinter(native=True)
except ImportError as exc:
    print("refused:", exc)
"""


def test_without_the_native_core_the_python_path_runs() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    fp_line, refused = out.splitlines()[-2:]
    from scrapy_simhash.fingerprint import Fingerprinter

    text = "Harbour cranes return after a decade of repairs 港口起重机修复后重新启用"
    assert int(fp_line) == Fingerprinter().fingerprint_text(text) == Fingerprinter(native=False).fingerprint_text(text)
    assert refused.startswith("refused: the native core (scrapy_simhash_native) is not installed: pip install ./native")
    assert "SIMHASH_NATIVE = False" in refused
