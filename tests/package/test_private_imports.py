"""No module imports another's private name: a name that starts with ``_`` is its own module's, in
the package, the tests and the benchmarks alike. A private module (``scrapy_simhash._native``) is
the package's own and may be imported inside it; its public names are what the others use."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ("scrapy_simhash", "tests", "benchmarks", "example_project")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(module: str, name: str, importer: Path) -> bool:
    """Whether ``name`` imported from ``module`` is a module itself (a file or a package)."""
    parts = module.split(".") if module else []
    for base in (ROOT, ROOT / "tests", importer.parent):
        folder = base.joinpath(*parts)
        if (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file():
            return True
    return False


def private_imports(source: str, path: Path) -> list[str]:
    """The private names of other modules that ``source`` (the file ``path``) imports, as
    ``module.name`` (a private module, imported as a name of its package, is left out)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: resolved against the importer's folder
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                module = ".".join([*base.relative_to(ROOT).parts, *filter(None, module.split("."))])
            found += [
                f"{module}.{a.name}"
                for a in node.names
                if _private(a.name) and not _is_module(module, a.name, path)
            ]
    return found


def test_the_check_sees_every_form(tmp_path: Path) -> None:
    source = (
        "from scrapy_simhash.fingerprint.simhash import Fingerprinter, _own\n"
        "from scrapy_simhash import _native\n"  # a private module: the package's own
        "from scrapy_simhash._native import module\n"
        "from scrapy_simhash import __version__\n"
        "def f():\n    from scrapy_simhash.text.extract import _Walker as W\n"
        "from helpers.stores import _open\n"
        "from .region import _kind\n"
    )
    path = ROOT / "scrapy_simhash" / "text" / "example.py"
    assert private_imports(source, path) == [
        "scrapy_simhash.fingerprint.simhash._own",
        "helpers.stores._open",
        "scrapy_simhash.text.region._kind",
        "scrapy_simhash.text.extract._Walker",
    ]


def test_no_module_imports_a_private_name_of_another() -> None:
    found = {
        str(path.relative_to(ROOT)): names
        for tree in TREES
        for path in sorted((ROOT / tree).rglob("*.py"))
        if (names := private_imports(path.read_text(encoding="utf-8"), path))
    }
    assert found == {}
