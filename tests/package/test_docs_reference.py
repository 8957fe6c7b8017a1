"""The docs' reference pages against the code: settings (docs/reference/settings.rst), stats
(stats.rst) and meta keys (meta.rst), both ways; and the docs' distributed-crawl example.

The code is read by scanning every module of the package (recursively, whatever folder it lies in)
for the names it uses, so that a name added to the code, or a row removed from a page, fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import scrapy_simhash
from scrapy_simhash import Fingerprinter, SimhashIndex, defaults

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGE = Path(scrapy_simhash.__file__).resolve().parent
#: A stats key, or its template: ``{}`` where the code formats a value in.
STAT_KEY = re.compile(r"simhash/(?:[a-z0-9_]+|\{\})(?:/(?:[a-z0-9_]+|\{\}))*")
META_KEY = re.compile(r"dont_simhash|simhash_[a-z_]+")
#: Settings whose None means "the SimhashIndex default" rather than a Fingerprinter default.
INDEX_SETTINGS = {"SIMHASH_MAX_CANDIDATES": "max_candidates"}


# -- the pages --------------------------------------------------------------------------------------


def table_rows(page: str) -> list[list[str]]:
    """The rows of the ``list-table`` directives of ``docs/<page>``, each a list of cell texts
    (a cell's continuation lines joined by spaces); header rows included."""
    rows: list[list[str]] = []
    inside = False
    for line in (DOCS / page).read_text(encoding="utf-8").splitlines():
        if line.startswith(".. list-table::"):
            inside = True
        elif inside and line.startswith("   * -"):
            rows.append([line[6:].strip()])
        elif inside and rows and line.startswith("     -"):
            rows[-1].append(line[6:].strip())
        elif inside and rows and line.startswith("       ") and line.strip():
            rows[-1][-1] += " " + line.strip()
        elif line.strip() and not line.startswith(" "):
            inside = False
    return rows


def _literal(cell: str) -> str | None:
    """The text of a cell that starts with an inline literal (````x````), else None."""
    match = re.match(r"``([^`]+)``", cell)
    return match.group(1) if match else None


def settings_table() -> dict[str, tuple[object, str | None]]:
    """Setting -> (its default, the component default named in parentheses after it, if any)."""
    table: dict[str, tuple[object, str | None]] = {}
    for row in table_rows("reference/settings.rst"):
        name = _literal(row[0])
        if name is None or not name.startswith("SIMHASH_"):
            continue
        assert name not in table, f"settings.rst has two rows for {name}"
        match = re.fullmatch(r"``([^`]+)``(?: \(([^)]*)\))?", row[1])
        assert match, f"settings.rst: the default of {name} is not a literal: {row[1]!r}"
        table[name] = (ast.literal_eval(match.group(1)), match.group(2))
    return table


def stats_table() -> dict[str, str]:
    """Documented stats key -> its meaning; placeholders (``{reason}``) written as ``{}``."""
    table: dict[str, str] = {}
    for row in table_rows("reference/stats.rst"):
        key = _literal(row[0])
        if key is None:
            continue
        key = re.sub(r"\{[a-z_]+\}", "{}", key)
        assert key not in table, f"stats.rst has two rows for {key}"
        table[key] = row[1]
    return table


def meta_table() -> dict[str, str]:
    """Documented meta key or spider attribute -> where (its second column)."""
    table: dict[str, str] = {}
    for row in table_rows("reference/meta.rst"):
        name = _literal(row[0])
        if name is None:
            continue
        name = name.split(" ")[0]  # "simhash_reset = True"
        assert name not in table, f"meta.rst has two rows for {name}"
        table[name] = row[1]
    return table


# -- the code ---------------------------------------------------------------------------------------


@cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    """(dotted module name, syntax tree) of every module of the package, recursively."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append((name, ast.parse(path.read_text(encoding="utf-8"), str(path))))
    return tuple(found)


def _template(node: ast.AST) -> str | None:
    """A string literal's text, or an f-string's with ``{}`` for each formatted value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(part.value) if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return None


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _defined_in(name: str) -> list[str]:
    """The modules of the package that assign ``name`` at their top level."""
    return [
        module
        for module, tree in _modules()
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(_is_name(t, name) for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
    ]


def _module_constant(module: str, name: str) -> tuple[str, ...]:
    """The string values of ``module.name`` (a string or a collection of strings)."""
    value = getattr(importlib.import_module(module), name)
    values = (value,) if isinstance(value, str) else tuple(value)
    assert all(isinstance(v, str) for v in values), f"{module}.{name} is not made of strings"
    return values


def _stats_prefixes() -> set[str]:
    """Values given to a ``*stats_prefix`` name or attribute (the components' key prefixes)."""
    prefixes = set()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in targets]
                value = _template(node.value)
                if value is not None and any("stats_prefix" in n for n in names):
                    prefixes.add(value)
    return prefixes


class _Resolver:
    """The values a name formatted into a stats key can take, read from the code around it.

    Where a key is ``f"simhash/{x}"`` with nothing else, ``x`` must be resolved: a parameter of a
    function that only prefixes it (the values of its call sites' arguments); a loop variable over a
    module constant, or over a method's result (the keys that methods of that name build); a name
    tested with ``in`` against a module constant, or assigned a literal; an attribute ``verdict``
    (the module constant ``VERDICTS``). Anything else fails the test with what to do.
    """

    def __init__(self) -> None:
        self.unresolved: list[str] = []

    def values(self, module: str, func: ast.AST | None, expr: ast.expr) -> set[str]:
        found = self._values(module, func, expr)
        if not found:
            self.unresolved.append(f'f"simhash/{{{ast.unparse(expr)}}}" in {module}')
        return found

    def _values(self, module: str, func: ast.AST | None, expr: ast.expr) -> set[str]:
        if isinstance(expr, ast.Attribute):
            constant = expr.attr.upper() + "S"
            return {v for mod in _defined_in(constant) for v in self._constant(mod, constant)}
        if not isinstance(expr, ast.Name) or func is None:
            return set()
        name = expr.id
        assert isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
        if name in {a.arg for a in func.args.args}:
            return self._call_site_values(module, func.name)
        found: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.comprehension | ast.For) and _is_name(node.target, name):
                found |= self._iterated(module, node.iter)
            elif isinstance(node, ast.Assign) and any(_is_name(t, name) for t in node.targets):
                value = _template(node.value)
                if value is not None:
                    found.add(value)
            elif (
                isinstance(node, ast.Compare)
                and _is_name(node.left, name)
                and isinstance(node.ops[0], ast.In)
                and isinstance(node.comparators[0], ast.Name)
            ):
                found |= set(self._constant(module, node.comparators[0].id))
        return found

    def _iterated(self, module: str, iterable: ast.expr) -> set[str]:
        if isinstance(iterable, ast.Name):
            return set(self._constant(module, iterable.id))
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute):
            method = iterable.func.attr  # the keys that every method of this name builds
            return {
                value
                for _, tree in _modules()
                for func in _functions(tree)
                if func.name == method
                for node in ast.walk(func)
                if (value := _template(node)) is not None and re.fullmatch(r"[a-z_]+/(?:[a-z_]+|\{\})", value)
            }
        return set()

    def _call_site_values(self, module: str, function: str) -> set[str]:
        """The arguments of the calls to the method ``function`` in ``module`` (its own class's)."""
        found: set[str] = set()
        for name, tree in _modules():
            if name != module:
                continue
            for func in _functions(tree):
                for node in ast.walk(func):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr == function
                        and len(node.args) == 1
                    ):
                        value = _template(node.args[0])
                        found |= {value} if value is not None else self._values(module, func, node.args[0])
        return found

    @staticmethod
    def _constant(module: str, name: str) -> tuple[str, ...]:
        try:
            return _module_constant(module, name)
        except AttributeError:
            return ()


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def code_stats_keys() -> tuple[set[str], list[str]]:
    """Every stats key (or key template) that the package's code names, and the f-strings whose
    values could not be resolved."""
    prefixes = _stats_prefixes()
    resolver = _Resolver()
    keys: set[str] = set()
    for module, tree in _modules():
        parts_of_fstrings = {
            id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values
        }
        owner = {id(n): f for f in _functions(tree) for n in ast.walk(f)}  # innermost wins: walked last
        for node in ast.walk(tree):
            text = _template(node)
            if text is None or id(node) in parts_of_fstrings:
                continue
            if isinstance(node, ast.JoinedStr) and isinstance(node.values[0], ast.FormattedValue):
                if "prefix" in ast.unparse(node.values[0].value):
                    keys |= {prefix + text[2:] for prefix in prefixes if STAT_KEY.fullmatch(prefix + text[2:])}
                continue
            if not STAT_KEY.fullmatch(text):
                continue
            if text == "simhash/{}":  # the whole key formatted in: resolve what it can be
                assert isinstance(node, ast.JoinedStr)
                formatted = node.values[1]
                assert isinstance(formatted, ast.FormattedValue)
                values = resolver.values(module, owner.get(id(node)), formatted.value)
                keys |= {f"simhash/{value}" for value in values if STAT_KEY.fullmatch(f"simhash/{value}")}
            else:
                keys.add(text)
    return keys, resolver.unresolved


def _pattern(key: str) -> re.Pattern[str]:
    return re.compile(re.escape(key).replace(r"\{\}", "([a-z0-9_]+)"))


def code_meta_names() -> tuple[set[str], set[str]]:
    """(meta keys, spider attributes): every ``simhash_*`` / ``dont_simhash`` string the package's
    code uses, but for the public names of its modules (``__all__``); a spider attribute is one
    read from ``spider`` (``getattr(spider, NAME)``, ``spider_flag(spider, NAME, ...)``)."""
    exported: set[str] = set()
    names: set[str] = set()
    attributes: set[str] = set()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(_is_name(t, "__all__") for t in node.targets):
                exported |= {v for e in ast.walk(node.value) if (v := _template(e)) is not None}
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and META_KEY.fullmatch(node.value):
                names.add(node.value)
            elif isinstance(node, ast.Call) and len(node.args) >= 2 and _is_name(node.args[0], "spider"):
                value = _template(node.args[1])
                if value is not None and META_KEY.fullmatch(value):
                    attributes.add(value)
    return names - exported - attributes, attributes


# -- settings ---------------------------------------------------------------------------------------


def _package_constant(name: str) -> object:
    """The value of the top-level name ``name`` of the module that defines it, wherever it lies."""
    modules = _defined_in(name)
    assert len(modules) == 1, f"the package should define {name} once, found it in {modules}"
    return getattr(importlib.import_module(modules[0]), name)


def test_every_setting_has_exactly_one_row_in_the_settings_page() -> None:
    rows = settings_table()
    names = sorted(name for name in vars(defaults) if name.startswith("SIMHASH_"))
    assert sorted(rows) == names
    assert sorted(_package_constant("SETTING_NAMES")) == names  # type: ignore[call-overload]


def test_the_settings_page_gives_the_defaults_of_the_defaults_module() -> None:
    for name, (value, _) in settings_table().items():
        assert value == getattr(defaults, name), f"settings.rst says {name} = {value!r}"


def test_the_settings_page_names_the_component_default_behind_none() -> None:
    fingerprinter = dict(_package_constant("FINGERPRINTER_SETTINGS"))  # type: ignore[call-overload]
    for name, (value, note) in settings_table().items():
        if value is not None or note is None:
            continue
        if name in fingerprinter:
            actual = inspect.signature(Fingerprinter).parameters[fingerprinter[name]].default
        elif name in INDEX_SETTINGS:
            actual = inspect.signature(SimhashIndex.open).parameters[INDEX_SETTINGS[name]].default
        else:
            continue
        shown = ast.literal_eval(note.strip("`"))
        assert shown == actual, f"settings.rst says {name} = None ({note}), the component default is {actual!r}"


# -- stats ------------------------------------------------------------------------------------------


def test_every_stats_key_of_the_code_is_in_the_stats_page() -> None:
    keys, unresolved = code_stats_keys()
    assert not unresolved, (
        "stats keys built from values this test cannot read; name their values in a module constant "
        f"or a literal near them, or teach _Resolver: {unresolved}"
    )
    documented = stats_table()
    patterns = {key: _pattern(key) for key in documented}
    missing = []
    for key in sorted(keys):
        if key in documented:
            continue
        # A key the code spells out may be one value of a documented placeholder: the page must
        # then name that value in the row.
        rows = [doc for doc, pattern in patterns.items() if pattern.fullmatch(key)]
        if not any(re.search(rf"\b{re.escape(key.rsplit('/', 1)[1])}\b", documented[row]) for row in rows):
            missing.append(key)
    assert not missing, f"stats.rst does not document: {missing}"


def test_every_key_of_the_stats_page_is_one_the_code_counts() -> None:
    keys, _ = code_stats_keys()
    unknown = [
        key
        for key in stats_table()
        if key not in keys and not any(_pattern(key).fullmatch(code) for code in keys)
    ]
    assert not unknown, f"stats.rst documents keys that the code does not count: {unknown}"


def test_the_scan_finds_the_keys_built_in_every_way() -> None:
    # One of each way the code names a key, so that the scan above cannot go blind to one.
    keys, _ = code_stats_keys()
    assert "simhash/fingerprinted" in keys  # a literal
    assert "simhash/skipped/{}" in keys  # an f-string
    assert {"simhash/store_error/{}", "simhash/items/store_error/{}"} <= keys  # a component's prefix
    assert {"simhash/new", "simhash/near_duplicate", "simhash/unchanged", "simhash/changed"} <= keys  # verdicts
    assert {"simhash/fallback/{}", "simhash/extract/{}"} <= keys  # a page's own stats
    assert {"simhash/due", "simhash/not_due", "simhash/over_budget", "simhash/forced"} <= keys  # the gate


# -- meta keys --------------------------------------------------------------------------------------


def test_every_meta_key_of_the_code_is_in_the_meta_page_and_back() -> None:
    names, attributes = code_meta_names()
    table = meta_table()
    documented_meta = {name for name, where in table.items() if "meta" in where}
    documented_attributes = {name for name, where in table.items() if "spider attribute" in where}
    assert sorted(documented_meta) == sorted(names)
    assert sorted(documented_attributes) == sorted(attributes)
    assert set(table) == documented_meta | documented_attributes, "meta.rst: a row that is neither"


def test_the_scan_finds_the_meta_keys_read_and_written() -> None:
    names, attributes = code_meta_names()
    assert {"dont_simhash", "simhash_key", "simhash_verdict", "simhash_force", "simhash_plan"} <= names
    assert attributes == {"simhash_enabled", "simhash_reset", "simhash_must_fetch"}


# -- examples ---------------------------------------------------------------------------------------


def _python_block(page: str) -> str:
    """The first ``code-block:: python`` of ``docs/<page>``, dedented."""
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    start = lines.index(".. code-block:: python") + 2
    block = []
    for line in lines[start:]:
        if line.strip() and not line.startswith("   "):
            break
        block.append(line[3:])
    return "\n".join(block)


def test_the_distributed_crawl_example_keeps_scrapy_redis_state_while_crawlers_run() -> None:
    # scrapy-redis's default SCHEDULER_PERSIST = False: the first crawler whose spider closes deletes
    # the shared queue and seen requests, and the others fetch everything again.
    settings: dict[str, object] = {}
    exec(_python_block("usage/distributed.rst"), {}, settings)  # noqa: S102 - the docs' own example
    assert settings["SCHEDULER"] == "scrapy_redis.scheduler.Scheduler"
    assert settings["SCHEDULER_PERSIST"] is True
    assert settings["SIMHASH_STORE"] == "scrapy_simhash.store.RedisStore"
