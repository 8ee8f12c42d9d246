"""`make` refuses bad SCALE / SEED / JOBS / TORCH values with one clear line, before any work.

``make book JOBS=0`` started every cell at once (Snakemake's -j 0), ``SEED=abc`` gave a
Snakefile traceback and ``TORCH=bogus`` a make error about a missing lock file.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = ROOT / ".venv" / "workflow" / "bin" / "snakemake"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def _make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("arg, message", [
    ("JOBS=0", "JOBS=0 is not allowed; give a number of parallel jobs >= 1"),
    ("JOBS=-2", "JOBS=-2 is not allowed"), ("JOBS=two", "JOBS=two is not allowed"),
    ("SEED=abc", "SEED=abc is not allowed; give an integer >= 0"),
    ("SEED=-1", "SEED=-1 is not allowed"), ("SEED=1.5", "SEED=1.5 is not allowed"),
    ("SCALE=huge", "SCALE=huge is not allowed"),
])
def test_bad_workflow_arguments_are_refused_before_any_work(arg, message):
    done = _make("-s", "check-scale", arg)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.parametrize("arg", ["JOBS=1", "JOBS=16", "SEED=0", "SEED=12345", "SCALE=smoke"])
def test_good_workflow_arguments_pass(arg):
    assert _make("-s", "check-scale", arg).returncode == 0


@pytest.mark.parametrize("target", ["env", "book", "help"])
def test_an_unknown_torch_build_is_named_not_a_missing_lock_file(target):
    done = _make("-n", target, "TORCH=bogus")
    assert done.returncode == 2
    assert "TORCH=bogus is not allowed; use one of: cpu cuda" in done.stderr
    assert "No rule to make target" not in done.stderr and "cat:" not in done.stderr


@pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="needs the workflow venv (make workflow-env)")
@pytest.mark.parametrize("seed", ["abc", "-1", "1.5"])
def test_the_snakefile_names_a_bad_seed_without_a_conversion_traceback(seed):
    done = subprocess.run([str(SNAKEMAKE), "-s", "workflow/Snakefile", "-n", "--config",
                           f"seed={seed}"], cwd=ROOT, text=True, capture_output=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"config seed={seed!r} is not allowed; give an integer >= 0" in out
    assert "invalid literal" not in out
