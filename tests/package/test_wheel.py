"""The release build's dependency on the native core (``.ci/stage_main.py``): the same version, on the
platforms the release workflow builds wheels for, and none in the checkout's own pyproject.toml.
Under ``.ci/check-wheel`` (``SIMHASH_CHECK_INSTALLED``): the tests import the installed wheels."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from scrapy_simhash import __version__

ROOT = Path(__file__).resolve().parents[2]


def _stage_main() -> Any:
    spec = importlib.util.spec_from_file_location("stage_main", ROOT / ".ci" / "stage_main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _env(sys_platform: str, machine: str, implementation: str = "CPython") -> dict[str, str]:
    return {"sys_platform": sys_platform, "platform_machine": machine, "platform_python_implementation": implementation}


def test_a_release_requires_the_core_of_its_own_version_where_there_are_wheels() -> None:
    req = Requirement(_stage_main().requirement())
    assert req.name == "scrapy-simhash-native" and str(req.specifier) == f"=={__version__}"
    assert req.marker is not None
    with_wheels = [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "x86_64"), ("darwin", "arm64"), ("win32", "AMD64")]
    for platform, machine in with_wheels:
        assert req.marker.evaluate(_env(platform, machine)), (platform, machine)
    # No wheel there: the package installs without the core and the Python path runs.
    without = [("linux", "ppc64le"), ("linux", "s390x"), ("linux", "armv7l"), ("win32", "ARM64"), ("freebsd14", "amd64")]
    for platform, machine in without:
        assert not req.marker.evaluate(_env(platform, machine)), (platform, machine)
    assert not req.marker.evaluate(_env("linux", "x86_64", "PyPy"))  # abi3 wheels are CPython's


def test_the_staged_pyproject_is_the_checkouts_plus_the_core(tmp_path: Path) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    stage_main = _stage_main()
    stage_main.stage(tmp_path / "stage")
    checkout = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    staged = tomllib.loads((tmp_path / "stage" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # A checkout installs (and ./dev demo runs) with nothing but Python: no core required there.
    assert not any(Requirement(d).name == "scrapy-simhash-native" for d in checkout["dependencies"])
    assert staged["dependencies"] == [stage_main.requirement(), *checkout["dependencies"]]
    assert {k: v for k, v in staged.items() if k != "dependencies"} == {
        k: v for k, v in checkout.items() if k != "dependencies"
    }
    assert (tmp_path / "stage" / "scrapy_simhash" / "_version.py").is_file()


@pytest.mark.skipif(not os.environ.get("SIMHASH_CHECK_INSTALLED"), reason="only under .ci/check-wheel")
def test_the_installed_wheels_are_what_the_tests_import() -> None:
    import scrapy_simhash_native

    import scrapy_simhash

    venv = os.path.realpath(os.environ["SIMHASH_CHECK_INSTALLED"])
    assert os.path.realpath(sys.prefix) == venv
    for mod in (scrapy_simhash, scrapy_simhash_native):
        assert mod.__file__ is not None and os.path.realpath(mod.__file__).startswith(venv + os.sep), mod.__file__
