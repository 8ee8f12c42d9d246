"""The workflow on a real, one-node Slurm cluster (``make test-workflow``; ``.ci/run`` runs it).

``tools/slurm_cluster.py`` starts ``munged``, MariaDB, ``slurmdbd``, ``slurmctld`` and ``slurmd``
on this machine (in a network namespace of their own where the kernel allows it, else on
127.0.0.1) and stops them by process id. Snakemake then runs a handful of cells through
``workflow/profiles/slurm`` exactly as shipped (no account, no partition): four cells of real
experiments and three of a fake one (``tests/workflow/slurm_cells.py``), one of which waits
until the test has cancelled its job with ``scancel``. Checked: every cell ran as a Slurm job
(``sacct``: the job id its shard records is COMPLETED), the cancelled cell left no shard and
is computed on the next run (one new job; nothing partial read), and every shard's result part
is byte-identical to a local run's (timings apart).

Skipped, with the reason, where the cluster cannot start: not root, not Linux, or the Debian
packages missing (``make test-workflow`` installs them when it can), or no Slurm executor plugin
in ``.venv/workflow``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from fusionlib.compendium import cells as C
from fusionlib.compendium.cells import shardfile as cells_shardfile

pytestmark = pytest.mark.slurm

REPO = Path(__file__).resolve().parents[2]
#: Snakemake's venv: the Makefile's WORKFLOW_VENV (make test-workflow passes it)
WORKFLOW_VENV = REPO / os.environ.get("WORKFLOW_VENV", ".venv/workflow")
WORKFLOW_PY = WORKFLOW_VENV / "bin" / "python"
SNAKEMAKE = WORKFLOW_VENV / "bin" / "snakemake"
PYTHON = REPO / ".venv" / "bin" / "python"
FAKE_MODULE = "tests.workflow.slurm_cells"
#: the real cells run (experiment, how many of its smoke grid, from the start)
REAL = (("identification", 3), ("ptgan_var_collapse", 1))
TIMEOUT = 300
#: Snakemake processes this module started (stopped by process id if a test fails)
STARTED: list[subprocess.Popen] = []


def _harness():
    spec = importlib.util.spec_from_file_location("slurm_cluster",
                                                  REPO / "tools" / "slurm_cluster.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def cluster():
    harness = _harness()
    why = harness.missing()
    if why:
        pytest.skip(f"no Slurm cluster can start here: {why}")
    if not SNAKEMAKE.is_file():
        pytest.skip("no .venv/workflow: `make workflow-env` installs Snakemake and its Slurm "
                    "executor plugin (requirements-workflow.lock)")
    probe = subprocess.run([str(WORKFLOW_PY), "-c", "import snakemake_executor_plugin_slurm"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip("the Slurm executor plugin is not in .venv/workflow: `make workflow-env` "
                    "installs requirements-workflow.lock")
    t0 = time.monotonic()
    try:
        c = harness.Cluster().start()
    except RuntimeError as err:  # a start-up that timed out (the harness cleaned up): once more
        if "timed out" not in str(err):
            raise
        print(f"\nfirst cluster start timed out, starting again: {str(err).splitlines()[0]}")
        c = harness.Cluster().start()
    print(f"\ncluster up in {time.monotonic() - t0:.1f} s "
          f"({'own network namespace' if c.isolated else 'host network, 127.0.0.1'})")
    try:
        yield c
    finally:
        for proc in STARTED:  # a failed test may leave its Snakemake waiting
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        c.stop()
        shutil.rmtree(c.base, ignore_errors=True)  # configuration, state, logs, database


def _cells() -> list[C.Cell]:
    import tests.workflow.slurm_cells  # noqa: F401 - registers fake_slurm

    out = [c for name, n in REAL for c in C.get_experiment(name).cells("smoke")[:n]]
    return out + C.get_experiment("fake_slurm").cells("smoke")


def _env(cluster, root: Path, gate: Path) -> dict[str, str]:
    return {**cluster.env, "FUSIONLIB_CELLS": str(root), C.ENV_MODULES: FAKE_MODULE,
            "FAKE_SLURM_GATE": str(gate), "PYTHONPATH": str(REPO)}


def _snakemake(cluster, root: Path, gate: Path, targets: list[Path]
               ) -> tuple[subprocess.Popen, Path]:
    experiments = ",".join(sorted({name for name, _ in REAL} | {"fake_slurm"}))
    cmd = [*cluster.prefix, str(SNAKEMAKE), "-s", "workflow/Snakefile",
           "--profile", "workflow/profiles/slurm",
           # poll sooner than the plugin's defaults (40 s, then every 10 s): a test, not a queue
           "--slurm-init-seconds-before-status-checks", "2",
           "--seconds-between-status-checks", "2",
           "--config", "scale=smoke", f"python={PYTHON}", f"experiments=[{experiments}]",
           "notebooks=", "--", *map(str, targets)]
    log = root.parent / f"snakemake-{time.monotonic_ns()}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=_env(cluster, root, gate), stdout=out,
                                stderr=subprocess.STDOUT, text=True)
    STARTED.append(proc)
    return proc, log


def _wait(proc: subprocess.Popen, log: Path) -> int:
    rc = proc.wait(timeout=TIMEOUT)
    print(f"--- {log.name} (exit {rc}), last lines:\n" + "\n".join(
        log.read_text().splitlines()[-8:]))
    return rc


def _sacct(cluster) -> dict[str, str]:
    out = cluster.run("sacct", "-X", "-n", "-P", "-o", "JobID,State", "--starttime",
                      "now-1days")
    return {line.split("|")[0]: line.split("|")[1].split()[0]
            for line in out.splitlines() if line}


def _result(path: Path) -> tuple[str, bytes]:
    obj = json.loads(path.read_text())
    return obj["result_sha256"], cells_shardfile.canonical_bytes(obj["result"])


def test_cells_run_as_slurm_jobs_survive_scancel_and_equal_a_local_run(cluster, tmp_path):
    root, local = tmp_path / "slurm" / "cells", tmp_path / "local"
    root.mkdir(parents=True)
    gate = tmp_path / "gate"
    gate.write_text("hold")
    cells = _cells()
    shard = {c.cell_id: C.shard_path(root, c.experiment, "smoke", c.cell_id) for c in cells}
    gated = next(c for c in cells if c.config.get("gated"))
    t0 = time.monotonic()

    # run 1: the gated cell's job is cancelled while it computes
    proc, log = _snakemake(cluster, root, gate, list(shard.values()))
    started = Path(f"{gate}.started")
    deadline = time.monotonic() + TIMEOUT
    while not started.exists():
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "the gated cell's job never started"
        time.sleep(0.5)
    cancelled = started.read_text().strip()
    cluster.run("scancel", cancelled)
    assert _wait(proc, log) != 0  # a job failed (cancelled); keep-going ran the rest
    t1 = time.monotonic()
    assert not shard[gated.cell_id].exists()
    assert _sacct(cluster)[cancelled] == "CANCELLED"
    others = [c for c in cells if c is not gated]
    assert all(shard[c.cell_id].is_file() for c in others)

    # run 2: only the cancelled cell runs again, as one new job; nothing partial was read
    gate.unlink()
    jobs_before = set(_sacct(cluster))
    proc, log = _snakemake(cluster, root, gate, list(shard.values()))
    assert _wait(proc, log) == 0, log.read_text()[-3000:]
    t2 = time.monotonic()
    new = set(_sacct(cluster)) - jobs_before
    assert len(new) == 1
    states = _sacct(cluster)
    for c in cells:
        got = C.load_shard(shard[c.cell_id], C.code_key(c.experiment), c)
        assert got is not None, c.cell_id  # complete, unaltered, current
        job = got.header["slurm_job_id"]
        assert job is not None and states[job] == "COMPLETED", (c.cell_id, job)
    assert C.load_shard(shard[gated.cell_id], C.code_key("fake_slurm"),
                        gated).header["slurm_job_id"] == next(iter(new))
    leftovers = [p.name for p in root.rglob("*") if p.is_file()
                 and not p.name.endswith((".shard.json", ".log"))]
    assert leftovers == []

    # the same cells computed here, one thread each as the workflow's jobs: equal results
    env = {**_env(cluster, local, gate), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for c in cells:
        subprocess.run([str(PYTHON), "-m", "fusionlib.compendium.cells", "run", c.experiment,
                        c.cell_id, "--scale", "smoke", "--root", str(local)], cwd=REPO,
                       env=env, check=True, capture_output=True, timeout=TIMEOUT)
        mine = C.shard_path(local, c.experiment, "smoke", c.cell_id)
        assert _result(mine) == _result(shard[c.cell_id]), c.cell_id
        assert mine.read_bytes() != shard[c.cell_id].read_bytes()  # timings, job id differ
    print(f"run 1 (7 cells, one cancelled): {t1 - t0:.0f} s; run 2 (the cancelled one): "
          f"{t2 - t1:.0f} s; local comparison: {time.monotonic() - t2:.0f} s")
