"""The README: the door to the docs (its set-up commands, its links), and what pyproject.toml says
about the build and ./dev. The reference pages themselves are checked in test_docs_reference.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
ROOT = README.parent
#: The two set-up commands a fresh clone starts with, verbatim.
SETUP_COMMANDS = ("./dev demo", "./dev test")


def test_the_readme_shows_the_two_set_up_commands_verbatim() -> None:
    text = README.read_text(encoding="utf-8")
    block = text[text.index("```bash\n", text.index("## Set-up commands")) :]
    block = block[: block.index("\n```", 8)]
    assert [line.split("#")[0].strip() for line in block.splitlines()[1:]] == list(SETUP_COMMANDS)
    usage = (ROOT / "dev").read_text(encoding="utf-8")
    for command in (*SETUP_COMMANDS, "./dev docs"):
        assert f"#   {command} " in usage, f"./dev --help does not list {command}"


def test_every_relative_link_of_the_readme_exists() -> None:
    links = re.findall(r"\]\(([^)#:]+)\)", README.read_text(encoding="utf-8"))
    assert "docs/index.rst" in links and "benchmarks/README.md" in links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_readme_stays_a_door() -> None:
    # The reference lives in docs/, the figures in benchmarks/README.md: the README stays short and
    # names no commit.
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert not re.search(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_an_editable_install_takes_the_quiet_pth_path() -> None:
    # setuptools' editable_wheel installs with a .pth file, quietly, only when the package
    # directories are {"": <a folder holding every package>}; otherwise it installs an import hook and
    # warns "BuildBackendWarning: Editable installation" on every pip install -e . (./dev demo).
    setuptools = _pyproject()["tool"]["setuptools"]
    root = README.parent / setuptools["package-dir"][""]
    assert set(setuptools["package-dir"]) == {""}
    assert setuptools["packages"]["find"]["include"] == ["scrapy_simhash*"]
    assert (root / "scrapy_simhash" / "__init__.py").is_file() and (root / "scrapy_simhash" / "store").is_dir()


def test_pyproject_names_only_commands_that_exist() -> None:
    text = (README.parent / "pyproject.toml").read_text(encoding="utf-8")
    usage = (README.parent / "dev").read_text(encoding="utf-8")
    for path in re.findall(r"\b((?:scripts/)?dev)\b(?= [a-z-]+)", text):
        assert (README.parent / path).is_file(), f"pyproject.toml names {path}, which does not exist"
    for command in re.findall(r"\./dev ([a-z-]+)", text):
        assert f"#   ./dev {command} " in usage, f"pyproject.toml names ./dev {command}, which ./dev does not have"


def test_dev_docs_builds_with_warnings_as_errors_from_a_pinned_sphinx() -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    assert [re.split(r"[=<>!~]", spec)[0].lower() for spec in extras["docs"]] == ["sphinx"]
    assert "==" in extras["docs"][0], "pin sphinx, so that every build sees the same warnings"
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    assert "ensure_venv docs" in dev and "sphinx -W --keep-going -b html docs docs/_build/html" in dev
    assert "./dev docs" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "docs/_build/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_what_the_readme_and_dev_say_of_the_demo_is_what_it_does() -> None:
    # The README and ./dev's help called the demo's second run incremental: by default it fetches
    # every page again (SIMHASH_INCREMENTAL is set only by --incremental) and exports what changed.
    demo = (ROOT / "example_project" / "demo.py").read_text(encoding="utf-8")
    assert 'settings = {"SIMHASH_INCREMENTAL": True}' in demo and "if args.incremental:" in demo
    assert re.search(r'"--incremental",\s+action="store_true"', demo)  # off by default
    readme = README.read_text(encoding="utf-8")
    usage = (ROOT / "dev").read_text(encoding="utf-8")
    for name, text in [("README.md", readme), ("dev", usage), ("demo.py", demo)]:
        said = re.sub(r"\s+#?\s*", " ", text)
        assert not re.search(r"second( run is| run| crawl is)? incremental", said), name
        assert "--incremental" in said and "exports only what changed" in said, name
