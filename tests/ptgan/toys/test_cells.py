"""The PTGAN ring runs as cells: the grid follows notebooks/ptgan_toys.md, a cell reproduces the
notebook's direct call of train_ring, and shards turn back into RingRun objects."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlib.compendium.cells import get_experiment, results
from fusionlib.ptgan.toys import cells as P
from fusionlib.ptgan.toys.runs import coverage_table, curve_frame, train_ring
from fusionlib.rng import seed_int


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_grids_follow_the_notebook(scale):
    cfg = P.TOY_CONFIG[scale]
    ring = P.RING.cells(scale, seed=7)
    assert len(ring) == len(P.RING_METHODS) * cfg["n_seeds"]
    assert len(P.MIXUP.cells(scale, 7)) == len(P.MIXUP_LAWS) * cfg["n_seeds"]
    fig11 = P.FIG11.cells(scale, 7)
    assert len(fig11) == len(P.FIG11_WIDTHS) * 2 * cfg["fig11_seeds"]
    seeds = [seed_int(7, "ring", "rep", i) for i in range(cfg["n_seeds"])]
    assert [c.seed for c in ring] == seeds * len(P.RING_METHODS)
    assert {c.seed for c in fig11} == {seed_int(7, "fig11", "rep", i)
                                       for i in range(cfg["fig11_seeds"])}
    first = ring[0].config
    assert first["train"]["eval_at"] == list(range(cfg["eval_every"], cfg["n_iter"] + 1,
                                                   cfg["eval_every"]))
    assert first["device"] == ("auto" if scale == "paper" else "cpu")
    assert [c.config["keep_snapshots"] for c in ring[: cfg["n_seeds"]]] == \
        [True] + [False] * (cfg["n_seeds"] - 1)
    assert get_experiment("ptgan_ring") is P.RING


def test_a_cell_reproduces_the_notebook_run_and_round_trips(tmp_path):
    runs = P.ring_runs("ptgan_ring", "smoke", seed=0, root=tmp_path, progress=False)
    cfg = P.TOY_CONFIG["smoke"]
    s = seed_int(0, "ring", "rep", 0)
    assert set(runs) == {(m, s) for m in P.RING_METHODS}
    # the notebook's call (notebooks/ptgan_toys.md, "Mode collapse on the ring")
    eval_at = list(range(cfg["eval_every"], cfg["n_iter"] + 1, cfg["eval_every"]))
    direct = train_ring("pt+cp", s, cfg["n_iter"], size=cfg["size"], eval_at=eval_at,
                        n_eval=cfg["n_eval"], n_metrics=cfg["n_metrics"],
                        n_data=cfg["n_data"], n_snapshot=cfg["n_eval"], device="cpu")
    got = runs[("pt+cp", s)]
    assert got.w1 == direct.w1
    assert got.metrics == direct.metrics
    np.testing.assert_array_equal(got.samples, direct.samples)
    assert sorted(got.snapshots) == eval_at
    np.testing.assert_array_equal(got.snapshots[eval_at[-1]], direct.snapshots[eval_at[-1]])
    table = coverage_table(runs.values())
    assert list(table.method) == list(P.RING_METHODS) and (table.n_seeds == 1).all()
    curves = curve_frame([got], "PTGAN")
    assert len(curves) == len(eval_at)
    # read back from the shards: nothing recomputed, same runs
    again = P.ring_runs("ptgan_ring", "smoke", seed=0, root=tmp_path, progress=False)
    assert again[("pt+cp", s)].w1 == got.w1
    rows, _ = results("ptgan_ring", "smoke", root=tmp_path, compute_missing=False)
    assert set(rows.columns) >= {"method", "rep", "seed", "modes", "hq", "seconds"}
