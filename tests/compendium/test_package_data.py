"""Every data file the package reads ships with it: pyproject's package-data patterns match each
tracked non-Python file under fusionlib/ (a file outside them is missing from the wheel, and a
command that reads it works in a checkout but fails from an installed wheel)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tracked_data_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "fusionlib"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [Path(p) for p in out.split() if not p.endswith(".py")]


def _patterns() -> dict[str, list[str]]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return cfg["tool"]["setuptools"]["package-data"]


def shipped(path: Path, patterns: dict[str, list[str]]) -> bool:
    for package, globs in patterns.items():
        base = Path(*package.split("."))
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        if any(fnmatch.fnmatchcase(rel.as_posix(), g) and rel.as_posix().count("/")
               == g.count("/") for g in globs):
            return True
    return False


def test_every_tracked_data_file_is_package_data() -> None:
    files = _tracked_data_files()
    assert files, "expected data files under fusionlib/ (paper tables, conclusions)"
    missing = [str(p) for p in files if not shipped(p, _patterns())]
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"


def test_a_file_outside_the_patterns_is_caught() -> None:
    # planted fault: the rates file under the patterns before this test existed
    old = {"fusionlib.compendium": ["*.csv", "paper_tables/*/*.csv"]}
    assert not shipped(Path("fusionlib/compendium/paper_rates.json"), old)
    assert shipped(Path("fusionlib/compendium/paper_tables/001/table3.csv"), old)
