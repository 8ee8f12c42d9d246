"""`pip install .` (not editable) gives a working package: the wheel is built from a copy of
the sources, installed into a fresh virtual environment, and used from outside the checkout:
a paper table (package data) is loaded, the inventory read, and one smoke cell computed through
the ``fusionlib`` console entry point.

The fresh environment gets the wheel's own files only; its dependencies (numpy, torch, ...) are
taken from the environment running the tests through a path entry placed after its own
site-packages (downloading torch again would cost minutes and gigabytes), and ``pip check`` in
the fresh environment proves that they satisfy every requirement the wheel declares.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CELL = ("identification", 0)  # experiment and index of the smoke cell computed from the wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "fusionlib", src / "fusionlib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "-w", str(dist), str(src)], check=True,
                   capture_output=True, timeout=300)
    (whl,) = dist.glob("fusionlib-*.whl")
    return whl


def test_the_wheel_carries_the_package_data_extras_and_entry_point(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    tables = sorted((REPO / "fusionlib/compendium/paper_tables").rglob("*.csv"))
    for path in [*tables, *(REPO / "fusionlib/compendium").glob("*.csv")]:
        assert str(path.relative_to(REPO)) in names, path
    assert "fusionlib = fusionlib.compendium.cli:main" in entry
    extras = {line.split(": ")[1] for line in meta.splitlines()
              if line.startswith("Provides-Extra")}
    assert extras == {"test", "gpu"}
    test_extra = [line for line in meta.splitlines()
                  if line.startswith("Requires-Dist:") and 'extra == "test"' in line]
    for lib in ("opacus", "ipfn", "prdc", "fairlearn"):
        assert any(line.startswith(f"Requires-Dist: {lib}") for line in test_extra), lib
    assert not any(n.startswith(("tests/", "notebooks/", "workflow/")) for n in names)


def _fresh_venv(path: Path, wheel: Path) -> tuple[Path, dict[str, str]]:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    python = path / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", str(wheel)], check=True, capture_output=True, timeout=300)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True)
    # the dependencies of the environment running the tests, after the fresh one's own files
    deps = sysconfig.get_paths()["purelib"]
    Path(purelib.stdout.strip(), "zz-test-dependencies.pth").write_text(deps + "\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "FUSIONLIB_CELLS", "FUSIONLIB_CELL_MODULES")}
    env["PATH"] = f"{path / 'bin'}:{env.get('PATH', '')}"
    return python, env


def test_an_installed_wheel_loads_its_data_and_runs_a_smoke_cell(wheel, tmp_path):
    python, env = _fresh_venv(tmp_path / "venv", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*cmd: str) -> str:
        done = subprocess.run(list(cmd), cwd=work, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    # every requirement the wheel declares is met (pip's own check, in the fresh environment)
    assert "fusionlib" in run(str(python), "-m", "pip", "list", "--format=freeze")
    run(str(python), "-m", "pip", "check")
    code = ("import json, fusionlib, fusionlib.compendium.paper as P, "
            "fusionlib.compendium.scorecard as S\n"
            "t = P.paper_table('001', 'Table 3')\n"
            "print(json.dumps({'file': fusionlib.__file__, 'rows': len(t), "
            "'inventory': len(S.load_inventory())}))")
    info = json.loads(run(str(python), "-c", code))
    assert info["file"].startswith(str(tmp_path / "venv")), info["file"]  # the wheel's copy
    assert info["rows"] > 0 and info["inventory"] > 0
    assert "cells" in run(str(tmp_path / "venv" / "bin" / "fusionlib"), "--help")
    listed = json.loads(run("fusionlib", "cells", "list", "--scale", "smoke", "--experiment",
                            CELL[0], "--format", "json"))
    cell = listed[CELL[1]]["cell_id"]
    shard = Path(run("fusionlib", "cells", "run", CELL[0], cell, "--scale", "smoke").strip())
    # results go to ./results/cells of the current folder, never into site-packages
    assert shard == work / "results" / "cells" / CELL[0] / "smoke" / f"{cell}.shard.json"
    assert json.loads(shard.read_text())["result"]["cell"]["cell_id"] == cell
    status = run("fusionlib", "cells", "list", "--scale", "smoke", "--experiment", CELL[0],
                 "--status")
    assert f"{cell}\t{shard}\tdone" in status


def test_the_installed_console_script_shows_a_claim_of_the_book_in_the_current_folder(
        wheel, tmp_path):
    """`fusionlib claims show` of an installed wheel reads the executed chapters of the folder
    it is run from (./book/executed, as cells go to ./results/cells), never a folder beside
    site-packages: it looked for <venv>/lib/book/executed, found no chapter there and said
    "build the book once"."""
    python, env = _fresh_venv(tmp_path / "venv", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*cmd: str) -> subprocess.CompletedProcess:
        done = subprocess.run(list(cmd), cwd=work, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        return done

    assert "claim_id" in run("fusionlib", "claims", "show", "--help").stdout
    # a chapter's claims.csv, written by the package's own Run into ./book/executed/demo
    run(str(python), "-c", "from fusionlib.compendium.run import Run\n"
        "run = Run('demo', scale='smoke', results_dir='book/executed/demo')\n"
        "run.claim('001-F1-x', '001', 'Figure 1', 'modes', 8, 8, tolerance=0, kind='setting')\n"
        "run.finish()")
    assert (work / "book" / "executed" / "demo" / "claims.csv").is_file()
    assert run("fusionlib", "claims", "locate", "001-F1-x").stdout.strip() == "demo"
    shown = run("fusionlib", "claims", "show", "001-F1-x").stdout
    assert "claim_id: 001-F1-x" in shown and "verdict:" in shown
    # a folder without a book: the error names that folder, not site-packages
    empty = work / "no-book"
    empty.mkdir()
    done = subprocess.run(["fusionlib", "claims", "show", "001-F1-x"], cwd=empty, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and f"no executed chapters under {empty}" in done.stderr, \
        done.stderr
