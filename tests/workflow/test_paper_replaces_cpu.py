"""At scale cpu the workflow does not compute the cpu cells of an experiment in
``paper_replaces_cpu`` (workflow/config.yaml) once its paper grid is complete: its chapter reads
the paper grid instead (tests/test_paper_branches_committed.py runs those chapters with
computing forbidden). Dry runs of the ``notebooks`` target on an empty shard folder and on one
holding stand-in paper shards of ``fairness_bounds`` (with the real code key).

Marked ``workflow`` (Snakemake dry runs): ``make test-workflow`` and ``.ci/run`` run it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

import fusionlib.io as fio
from fusionlib.compendium import cells as C
from fusionlib.compendium.cells import shardfile as cells_shardfile

from .test_paper_scale_workflow import PYTHON, REPO, _env, snakemake  # noqa: F401 (fixture)

pytestmark = pytest.mark.workflow

EXPERIMENT = "fairness_bounds"


def _scheduled(smk: Path, root: Path) -> dict[str, int]:
    done = subprocess.run([str(smk), "-s", "workflow/Snakefile", "--profile",
                           "workflow/profiles/local", "-n", "notebooks", "--config", "scale=cpu",
                           f"python={PYTHON}", "executed=results/workflow/test-executed"],
                          cwd=REPO, env=_env(root), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return pd.Series(re.findall(r"wildcards: experiment=(\w+)", done.stdout),
                     dtype=str).value_counts().to_dict()


def test_a_complete_paper_grid_spares_its_cpu_cells(snakemake, tmp_path, monkeypatch):  # noqa: F811
    config = yaml.safe_load((REPO / "workflow" / "config.yaml").read_text())
    assert EXPERIMENT in config["paper_replaces_cpu"]
    empty = tmp_path / "empty"
    n_cpu = len(C.get_experiment(EXPERIMENT).cells("cpu", 0))
    assert _scheduled(snakemake, empty).get(EXPERIMENT) == n_cpu

    root = tmp_path / "cells"
    for name in ("git_commit", "package_versions"):
        monkeypatch.setattr(cells_shardfile, name, lambda: "stand-in")
    monkeypatch.setattr(fio, "_fsync", lambda *a, **k: None)
    exp = C.get_experiment(EXPERIMENT)
    key = C.code_key(exp)
    paper = exp.cells("paper", 0)
    for cell in paper[:-1]:  # all but one: the cpu cells are still needed
        C.write_shard(C.shard_path(root, EXPERIMENT, "paper", cell.cell_id), cell,
                      C.Shard(pd.DataFrame({"stand_in": [1]})), key, scale="paper")
    assert _scheduled(snakemake, root).get(EXPERIMENT) == n_cpu
    last = paper[-1]
    C.write_shard(C.shard_path(root, EXPERIMENT, "paper", last.cell_id), last,
                  C.Shard(pd.DataFrame({"stand_in": [1]})), key, scale="paper")
    assert EXPERIMENT not in _scheduled(snakemake, root)
