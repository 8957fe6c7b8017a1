"""The benchmarks stay runnable and their results traceable: a benchmark imports only public names
of the package (a private one may change or go without notice), every file in
``benchmarks/results/`` names the benchmark script that made it, and that folder holds no script."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
PACKAGE = "scrapy_simhash"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(source: str) -> list[str]:
    """The package's private names (or modules) that ``source`` imports, as ``module.name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == PACKAGE:
            module = node.module or ""
            hidden = any(_private(part) for part in module.split("."))
            found += [f"{module}.{a.name}" for a in node.names if hidden or _private(a.name)]
        elif isinstance(node, ast.Import):
            found += [
                a.name for a in node.names if a.name.split(".")[0] == PACKAGE and any(map(_private, a.name.split(".")))
            ]
    return found


def test_the_private_import_check_sees_every_form() -> None:
    source = (
        "from scrapy_simhash.fingerprint.simhash import Fingerprinter, _own\n"
        "import scrapy_simhash._native\n"
        "from scrapy_simhash._native import core\n"
        "from scrapy_simhash import __version__\n"
        "def f():\n    from scrapy_simhash.text.extract import _Walker\n"
        "from other.module import _fine\n"
    )
    assert private_imports(source) == [
        "scrapy_simhash.fingerprint.simhash._own",
        "scrapy_simhash._native",
        "scrapy_simhash._native.core",
        "scrapy_simhash.text.extract._Walker",
    ]


def test_benchmarks_import_only_public_names() -> None:
    found = {
        str(path.relative_to(ROOT)): names
        for path in sorted(BENCHMARKS.rglob("*.py"))
        if (names := private_imports(path.read_text(encoding="utf-8")))
    }
    assert found == {}


_SCRIPT = re.compile(r"[\w./<>-]*?([\w-]+(?:/[\w-]+)*\.py)\b")


def cited_scripts(text: str) -> tuple[list[str], list[str]]:
    """The benchmark scripts ``text`` names, as ``(existing, missing)`` paths under the checkout:
    ``benchmarks/...py`` wherever it is written from (``./``, ``<checkout>/``, ``/work/main/``), or
    a bare file name that one script under ``benchmarks/`` has. Other ``.py`` names (the package's
    modules, tests) are not scripts and are left out."""
    names: dict[str, list[Path]] = {}
    for path in BENCHMARKS.rglob("*.py"):
        names.setdefault(path.name, []).append(path)
    existing: list[str] = []
    missing: list[str] = []
    for match in _SCRIPT.finditer(text):
        cited = match.group(1)
        if "benchmarks/" in cited:
            script = cited[cited.index("benchmarks/") :]
            (existing if (ROOT / script).is_file() else missing).append(script)
        elif "/" not in cited and len(names.get(cited, ())) == 1:
            existing.append(str(names[cited][0].relative_to(ROOT)))
    return existing, missing


def test_the_script_check_reads_the_forms_results_use() -> None:
    existing, missing = cited_scripts(
        "# nice .venv/bin/python benchmarks/speed/bench_index.py --sizes 1e6\n"
        "PYTHONPATH=<checkout> /work/main/benchmarks/scale/decisions.py, then bench_dedup.py's corpus;\n"
        "text/extract.py, benchmarks/speed/bench_gone.py\n"
    )
    assert existing == [
        "benchmarks/speed/bench_index.py",
        "benchmarks/scale/decisions.py",
        "benchmarks/speed/bench_dedup.py",
    ]
    assert missing == ["benchmarks/speed/bench_gone.py"]


def test_every_result_names_an_existing_script() -> None:
    unnamed, stale = [], {}
    for path in sorted(RESULTS.iterdir()):
        existing, missing = cited_scripts(path.read_text(encoding="utf-8"))
        if not existing:
            unnamed.append(path.name)
        if missing:
            stale[path.name] = missing
    assert unnamed == []
    assert stale == {}


def test_results_hold_no_script() -> None:
    scripts = [
        p.name
        for p in RESULTS.rglob("*")
        if p.suffix in (".py", ".sh") or (p.is_file() and p.read_bytes()[:2] == b"#!")
    ]
    assert scripts == []
