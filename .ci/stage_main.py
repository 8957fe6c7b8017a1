"""Stage the main package for a release build: copy what its sdist and wheel are built from into a
folder, with a pyproject.toml that requires the native core (``scrapy-simhash-native``, the same
version) on the platforms that have its wheels.

Usage: ``python .ci/stage_main.py DIR`` (``./dev wheel`` and the release workflow run it, then build
DIR). The checkout's own pyproject.toml does not require the core: a checkout installs, and
``./dev demo`` runs, with nothing but Python, and a development version has no core on PyPI.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the sdist and the wheel are built from (setuptools reads setup.cfg too).
INPUTS = ("pyproject.toml", "setup.cfg", "README.md", "LICENSE", "scrapy_simhash")
#: Where the release workflow builds native wheels (CPython: they are abi3 wheels; Linux: manylinux
#: and musllinux). Elsewhere the package installs without the core and the Python path runs.
NATIVE_PLATFORMS = (
    "platform_python_implementation == 'CPython' and ("
    "(sys_platform == 'linux' and (platform_machine == 'x86_64' or platform_machine == 'aarch64')) or "
    "(sys_platform == 'darwin' and (platform_machine == 'x86_64' or platform_machine == 'arm64')) or "
    "(sys_platform == 'win32' and platform_machine == 'AMD64'))"
)


def version() -> str:
    """The package's version (``scrapy_simhash/_version.py``), which the core's must equal."""
    text = (ROOT / "scrapy_simhash" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if match is None:
        raise SystemExit("scrapy_simhash/_version.py has no __version__ line")
    return match.group(1)


def requirement() -> str:
    """The dependency on the native core that a release adds."""
    return f"scrapy-simhash-native=={version()}; {NATIVE_PLATFORMS}"


def with_native(pyproject: str) -> str:
    """``pyproject`` (the text of pyproject.toml) with :func:`requirement` first in its dependencies."""
    head = "dependencies = [\n"
    if pyproject.count(head) != 1:
        raise SystemExit("pyproject.toml: expected one 'dependencies = [' line")
    line = f'    "{requirement()}",\n'
    return pyproject.replace(head, head + line)


def stage(dest: Path) -> None:
    """Copy :data:`INPUTS` into ``dest`` (emptied first), pyproject.toml with :func:`with_native`."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in INPUTS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest / name)
    pyproject = dest / "pyproject.toml"
    pyproject.write_text(with_native(pyproject.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    stage(Path(sys.argv[1]))
    print(f"staged scrapy-simhash {version()} in {sys.argv[1]} (requires {requirement()})")
