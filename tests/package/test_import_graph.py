"""The package's import graph: no cycle among its modules, each layer imports only the layers below
it, and each module imports on its own in a fresh interpreter.

Edges are the ``import`` statements of each module, read with ``ast``: at module level, inside
functions (a lazy import is still a dependency) and under ``if TYPE_CHECKING:`` (a type-only circle
is still a circle for the reader and for the type checker). ``from scrapy_simhash.a import b`` is an
edge to ``scrapy_simhash.a.b`` when that is a module, else to ``scrapy_simhash.a``. The implicit
import of a module's parent packages is not an edge (every module would otherwise cycle through
``scrapy_simhash/__init__``, which imports the public API).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.layers import LAYERS, is_upward

PACKAGE = Path(__file__).resolve().parents[2] / "scrapy_simhash"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(tree: ast.AST, package: str) -> set[str]:
    """The package's modules that ``tree`` imports (see the module docstring)."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in out if name in MODULES}


def graph() -> dict[str, set[str]]:
    edges = {}
    for name, path in MODULES.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges[name] = _imports(ast.parse(path.read_text(encoding="utf-8")), package) - {name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_the_graph_sees_lazy_and_type_only_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from scrapy_simhash.store.index import SimhashIndex\n"
        "def f():\n    from scrapy_simhash import defaults\n    import scrapy_simhash.errors\n"
        "    from .schedule import runs\n"
    )
    assert _imports(tree, "scrapy_simhash") == {
        "scrapy_simhash.defaults",
        "scrapy_simhash.errors",
        "scrapy_simhash.store.index",
        "scrapy_simhash.schedule.runs",
    }
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def _layer(module: str) -> str | None:
    """``module``'s layer (``None``: a top-level leaf module, or the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else None


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    """The imports of ``edges`` from a module into a later layer, or from a leaf into a layer."""
    out = []
    for a, targets in sorted(edges.items()):
        if a == "scrapy_simhash":
            continue  # the package's public API
        for b in sorted(targets):
            if is_upward(_layer(a), _layer(b)):
                out.append(f"{a} -> {b}")
    return out


def test_each_layer_imports_only_the_layers_below_it() -> None:
    assert upward_imports(graph()) == []
    assert set(LAYERS) == {_layer(m) for m in MODULES} - {None}  # every folder is a layer


def test_an_upward_import_is_seen() -> None:
    edges = {
        "scrapy_simhash.store.lmdbstore": {"scrapy_simhash.decision.record", "scrapy_simhash.fingerprint.sketch"},
        "scrapy_simhash.errors": {"scrapy_simhash.text.charset"},
        "scrapy_simhash.decision.tracker": {"scrapy_simhash.store.index", "scrapy_simhash.errors"},
    }
    assert upward_imports(edges) == [
        "scrapy_simhash.errors -> scrapy_simhash.text.charset",
        "scrapy_simhash.store.lmdbstore -> scrapy_simhash.decision.record",
    ]


# Importing ``scrapy_simhash.a.b`` in a fresh interpreter imports ``scrapy_simhash`` whole, then
# ``scrapy_simhash.a``, then ``b``. So a child forked once its parent packages are imported starts as
# a fresh interpreter would: each module is imported in a fork of its package's process (a tree of
# forks, one per module), not after importing the whole package again.
ISOLATED = r"""
import importlib, os, sys, traceback
for dep in ("numpy", "lxml.etree", "scrapy", "twisted.internet.defer", "lmdb", "jieba"):
    try:
        importlib.import_module(dep)  # shared by the children: only the package's own modules are under test
    except ImportError:
        pass
assert not [m for m in sys.modules if m.startswith("scrapy_simhash")]
names = sys.argv[1:]
children = {}
for name in names:
    children.setdefault(name.rpartition(".")[0], []).append(name)

def check(name):
    # Import name in a fork of this process; then (a package) each of its modules in a fork of that one.
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            failed = [n for n in names if n == name or n.startswith(name + ".")]  # a package's modules too
            os.write(1, ("FAILED " + " ".join(failed) + "\n").encode())
            os._exit(1)
        for child in children.get(name, ()):
            check(child)
        os._exit(0)
    os.waitpid(pid, 0)

for root in children[""]:
    check(root)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a child per module")
def test_each_module_imports_on_its_own() -> None:
    # redis is optional: its store is checked where it is installed
    names = [name for name in MODULES if "redisstore" not in name or _installed("redis")]
    out = subprocess.run([sys.executable, "-c", ISOLATED, *names], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", out.stdout + out.stderr


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
