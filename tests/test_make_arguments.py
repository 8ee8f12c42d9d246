"""`make` refuses bad SCALE / SEED / JOBS / TORCH values with one clear line, before any work.

``make book JOBS=0`` started every cell at once (Snakemake's -j 0), ``SEED=abc`` gave a
Snakefile traceback and ``TORCH=bogus`` a make error about a missing lock file.
"""

from __future__ import annotations

import re
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


NEEDS_SNAKEMAKE = pytest.mark.skipif(not SNAKEMAKE.is_file(),
                                     reason="needs the workflow venv (make workflow-env)")


@NEEDS_SNAKEMAKE
@pytest.mark.parametrize("seed, why", [("abc", "'abc' is not of type 'integer'"),
                                       ("-1", "-1 is less than the minimum of 0"),
                                       ("1.5", "1.5 is not of type 'integer'")])
def test_the_snakefile_names_a_bad_seed_without_a_conversion_traceback(seed, why):
    done = subprocess.run([str(SNAKEMAKE), "-s", "workflow/Snakefile", "-n", "--config",
                           f"seed={seed}"], cwd=ROOT, text=True, capture_output=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"config seed: {why} (allowed: root seed of every random stream: an integer >= 0)" \
        in out
    assert "invalid literal" not in out


@NEEDS_SNAKEMAKE
def test_a_plain_snakemake_call_uses_the_workflow_profile_and_the_config_schema():
    """`snakemake` with no -s and no --profile, as a Snakemake user types it: the workflow
    profile (the rerun triggers and scheduler of make) is read, and the config is validated
    against workflow/schemas/config.schema.yaml (an unknown key is named)."""
    done = subprocess.run([str(SNAKEMAKE), "-n", "--config", "sclae=smoke"], cwd=ROOT,
                          text=True, capture_output=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "workflow specific profile workflow/profiles/default" in out
    assert "config (top level): Additional properties are not allowed ('sclae' was " \
        "unexpected)" in out


def test_the_workflow_profile_sets_what_make_relies_on_and_every_job_has_a_log():
    import yaml

    profile = yaml.safe_load((ROOT / "workflow/profiles/default/config.yaml").read_text())
    assert profile["rerun-triggers"] == ["mtime"] and profile["scheduler"] == "greedy"
    # a cluster profile must not set what the workflow profile would override per key
    for name in ("local", "slurm", "kubernetes"):
        other = yaml.safe_load((ROOT / f"workflow/profiles/{name}/config.yaml").read_text())
        assert not set(other) & {"rerun-triggers", "scheduler"}, name
    text = (ROOT / "workflow/Snakefile").read_text()
    rules = re.split(r"^rule ", text, flags=re.M)[1:]
    with_commands = [r for r in rules if "\n    shell:" in r]
    assert len(with_commands) == 4
    for r in with_commands:
        assert "\n    log:" in r, r.split(":", 1)[0]
