"""The native core's boundary as shipped: its type stub (``native/scrapy_simhash_native.pyi``)
names what the built module has, with the parameters it takes, and the wheel carries it with
``py.typed``; the core's version is the package's. The tests of the built module are skipped with a
message when the native core is not built; never in CI (``CI`` set: a missing native core fails)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from pathlib import Path
from typing import Any

import pytest
from helpers.ci import native_required

import scrapy_simhash

REPO = Path(__file__).resolve().parents[2]
STUB = REPO / "native" / "scrapy_simhash_native.pyi"


def _native() -> Any:
    try:
        return importlib.import_module("scrapy_simhash_native")
    except ImportError as exc:
        if native_required():
            raise RuntimeError(f"CI runs the native tests: the native core must be built ({exc})") from exc
        pytest.skip(f"the native core is not built ({exc}; ./dev test builds it where cargo exists)")


def _public(names: Any) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def _stub() -> dict[str, ast.AST]:
    """The stub's top-level definitions by name (imports and private aliases left out)."""
    out: dict[str, ast.AST] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            out.update((t.id, node) for t in node.targets if isinstance(t, ast.Name))
    return {n: node for n, node in out.items() if not n.startswith("_") or n == "__version__"}


def _stub_parameters(fn: ast.FunctionDef) -> list[tuple[str, str, bool]]:
    """``(name, kind, has a default)`` of each parameter but ``self`` / ``cls``, as
    ``inspect.Parameter`` names the kinds."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    out = [
        (arg.arg, "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD", d)
        for i, (arg, d) in enumerate(zip(positional, defaults))
    ]
    out += [(arg.arg, "KEYWORD_ONLY", d is not None) for arg, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [p for p in out if p[0] not in ("self", "cls")]


def _module_parameters(obj: Any) -> list[tuple[str, str, bool]] | None:
    """The same of ``obj``'s ``__text_signature__`` (``None``: PyO3 gives none)."""
    if not getattr(obj, "__text_signature__", None):
        return None
    signature = inspect.signature(obj)
    return [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty)
        for p in signature.parameters.values()
        if p.name not in ("self", "$self", "cls")
    ]


def test_the_stub_names_what_the_module_has() -> None:
    native = _native()
    stub = _stub()
    in_module = {n for n in _public(dir(native)) if not isinstance(getattr(native, n), types.ModuleType)}
    assert set(stub) == in_module | {"__version__"}
    assert isinstance(native.__version__, str)
    for name, node in stub.items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(native, name)
        assert isinstance(cls, type), name
        methods = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
        constants = {a.target.id for a in node.body if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)}
        assert _public(methods) | constants == _public(vars(cls)), name
        for method, fn in methods.items():
            actual = _module_parameters(cls if method == "__new__" else getattr(cls, method))
            assert actual is not None, f"{name}.{method}: PyO3 gives no __text_signature__"
            assert _stub_parameters(fn) == actual, f"{name}.{method}"


def test_the_wheel_ships_the_stub_with_py_typed() -> None:
    """maturin packages ``<module>.pyi`` from the project root: the module becomes a package with
    the stub as ``__init__.pyi`` and ``py.typed`` (PEP 561) beside it."""
    native = _native()
    package = Path(native.__file__).parent
    assert (package / "py.typed").is_file(), f"no py.typed in {package} (rebuild the native core)"
    assert (package / "__init__.pyi").read_text(encoding="utf-8") == STUB.read_text(encoding="utf-8")


def _version(path: Path, section: str) -> str:
    """The ``version = "..."`` of ``section`` of a TOML file (Python 3.10 has no tomllib)."""
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^\[{re.escape(section)}\]\n(?:(?!\[).*\n)*?version = \"([^\"]+)\"", text, re.MULTILINE)
    assert match, f"no version in [{section}] of {path}"
    return match.group(1)


def test_the_native_version_is_the_packages() -> None:
    """Bumping one without the other fails: the core's crate (``native/Cargo.toml``, which maturin
    makes the native distribution's version and the module's ``__version__``) and the package
    (``scrapy_simhash.__version__``, set in ``scrapy_simhash/_version.py``, which pyproject.toml reads)."""
    assert 'version = { attr = "scrapy_simhash._version.__version__" }' in (REPO / "pyproject.toml").read_text()
    init = (REPO / "scrapy_simhash" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', init, re.MULTILINE)
    assert match
    assert _version(REPO / "native" / "Cargo.toml", "package") == match.group(1) == scrapy_simhash.__version__
    assert 'dynamic = ["version"]' in (REPO / "native" / "pyproject.toml").read_text()  # from Cargo.toml


def test_the_built_module_is_this_version() -> None:
    assert _native().__version__ == scrapy_simhash.__version__
