"""The twins' cross-references name existing code: a comment of the native core (``native/src/*.rs``)
that cites the Python reference (``text/blocks.py``, ``extract.Walker.walk``), and a Python
comment or docstring that cites the core (``native/src/html.rs``, ``HtmlWalker.walk``) or a test
file (``tests/text/test_native_html.py``), names a file that exists and, where it names a function,
class or constant, one defined there."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "scrapy_simhash"
NATIVE = ROOT / "native" / "src"


@functools.cache
def _modules() -> dict[str, list[Path]]:
    """Each dotted suffix of the package's module names (``extract``, ``text.extract``,
    ``scrapy_simhash.text.extract``; a package by its folder) -> the files it may name."""
    out: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for i in range(len(parts)):
            out.setdefault(".".join(parts[i:]), []).append(path)
    return out


def _names(body: list[ast.stmt]) -> set[str]:
    """The names the statements ``body`` define: functions, classes, assignments, imports."""
    out = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(target.id for target in targets if isinstance(target, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return out


@functools.cache
def _defined(path: Path) -> dict[str, set[str]]:
    """The names ``path`` defines at module level -> for a class, the names its body defines."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    classes = {node.name: _names(node.body) for node in body if isinstance(node, ast.ClassDef)}
    return {name: classes.get(name, set()) for name in _names(body)}


def _package_files(module: str) -> list[Path]:
    """The files whose names ``module`` may be defined in: the module's, or for a package, its
    ``__init__`` and each of its modules."""
    files = []
    for path in _modules().get(module, []):
        files += sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    return files


def python_reference_exists(ref: str) -> bool:
    """Whether ``module.name`` or ``module.Class.member`` (``extract.Walker.walk``) names a
    definition of the package."""
    parts = ref.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module, names = ".".join(parts[:cut]), parts[cut:]
        if module not in _modules() or len(names) > 2:
            continue
        for path in _package_files(module):
            members = _defined(path).get(names[0])
            if members is not None and (len(names) == 1 or names[1] in members):
                return True
    return False


def python_path_exists(cited: str) -> bool:
    """Whether a cited ``.py`` path is a file of the checkout (from its root, the package's root,
    the native folder's, or a file name of the package)."""
    if any((base / cited).is_file() for base in (ROOT, PACKAGE, ROOT / "native")):
        return True
    return "/" not in cited and any(PACKAGE.rglob(cited))


_RS_COMMENT = re.compile(r"^\s*//[/!]?(.*)$")
_PY_PATH = re.compile(r"(?<![\w/.])((?:\w+/)*\w+\.pyi?)\b")
_TICKED = re.compile(r"`([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)`")


def rust_comments() -> list[tuple[str, str]]:
    """``(where, text)`` of every comment line of the native sources."""
    out = []
    for path in sorted(NATIVE.glob("*.rs")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _RS_COMMENT.match(line)
            if match:
                out.append((f"{path.relative_to(ROOT)}:{n}", match.group(1)))
    return out


def stale_in_rust(comments: list[tuple[str, str]]) -> list[str]:
    """The cross-references to Python in ``comments`` that name nothing that exists."""
    stale = []
    for where, text in comments:
        for cited in _PY_PATH.findall(text):
            if not python_path_exists(cited):
                stale.append(f"{where}: {cited}")
        for ref in _TICKED.findall(text):
            first, last = ref.split(".")[0], ref.rsplit(".", 1)[1]
            if last in ("py", "pyi") or first not in _modules() or first in _NOT_MODULES:
                continue  # a file (checked above), or no module of the package
            if not python_reference_exists(ref):
                stale.append(f"{where}: {ref}")
    return stale


#: Module names that the native comments also use as plain words for a Rust value (``text.len()``).
_NOT_MODULES = {"text", "html", "re"}


# -- Python -> the core and the tests ------------------------------------------------------------

_RS_FILE = re.compile(r"(?<![\w/.])((?:[\w]+/)*\w+\.rs)\b(?!\.)")
_NATIVE_MEMBER = re.compile(r"``(\w+)\.(\w+)``")
_TEST_FILE = re.compile(r"(?<![\w/.])(tests/(?:\w+/)*\w+\.py)(?:::(\w+))?")


@functools.cache
def _native_classes() -> dict[str, str]:
    """The Python name of each class of the core -> the source that defines it and its methods."""
    out = {}
    for path in NATIVE.glob("*.rs"):
        source = path.read_text(encoding="utf-8")
        for match in re.finditer(
            r"#\[pyclass([^\]]*)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))? )?struct (\w+)", source
        ):
            name = re.search(r'name\s*=\s*"(\w+)"', match.group(1))
            out[name.group(1) if name else match.group(2)] = source
    return out


def python_sources() -> list[Path]:
    """The package's, the tests' and the benchmarks' Python files (but this one: its examples are stale)."""
    here = Path(__file__).resolve()
    dirs = ("scrapy_simhash", "tests", "benchmarks")
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.py") if p.resolve() != here)


def stale_in_python(paths: list[Path]) -> list[str]:
    """The cross-references to the core (``native/src/html.rs``, ``HtmlWalker.walk``) and to test
    files (``tests/<layer>/<file>.py``, with ``::`` and a test's name) in ``paths`` that name nothing that exists."""
    stale = []
    classes = _native_classes()
    for path in paths:
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for cited in _RS_FILE.findall(line):
                if not (NATIVE / Path(cited).name).is_file():
                    stale.append(f"{where}:{n}: {cited}")
            for cls, member in _NATIVE_MEMBER.findall(line):
                if cls in classes and not re.search(rf"\bfn {member}\b", classes[cls]):
                    stale.append(f"{where}:{n}: {cls}.{member}")
            for cited, name in _TEST_FILE.findall(line):
                test = ROOT / cited
                if not test.is_file() or (name and name not in _defined(test)):
                    stale.append(f"{where}:{n}: {cited}" + (f"::{name}" if name else ""))
    return stale




def test_the_checks_tell_stale_references_from_live_ones(tmp_path: Path) -> None:
    comments = [
        ("a.rs:1", " The walk of `blocks.Walker.walk` (`text/blocks.py`), as `region._classify_base`."),
        ("a.rs:2", " `text.len()` bytes of `extract.Walker.walk` (`extract._gone`, `tests/test_gone.py`)."),
    ]
    assert stale_in_rust(comments) == [
        "a.rs:2: tests/test_gone.py",
        "a.rs:2: extract.Walker.walk",
        "a.rs:2: extract._gone",
    ]
    assert python_reference_exists("text.blocks.Walker.walk")
    assert not python_reference_exists("blocks.Walker.nothing")
    source = tmp_path / "a.py"
    source.write_text(
        '"""``HtmlWalker.walk`` (native/src/html.rs) and ``Core.page`` in tests/text/test_native_html.py;\n'
        '``HtmlWalker.gone`` in native/src/gone.rs, tests/text/test_native_html.py::test_gone."""\n'
    )
    found = [s.split(": ", 1)[1] for s in stale_in_python([source])]
    assert found == ["native/src/gone.rs", "HtmlWalker.gone", "tests/text/test_native_html.py::test_gone"]


def test_the_native_sources_cite_existing_python() -> None:
    assert stale_in_rust(rust_comments()) == []


def test_python_cites_existing_native_code_and_tests() -> None:
    assert _native_classes().keys() >= {"Core", "HtmlWalker", "FlatText"}
    assert stale_in_python(python_sources()) == []
