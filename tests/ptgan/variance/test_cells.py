"""The variance chapter's training runs as cells: one cell per run, the chapter's seeds and
settings, and the same traces as calling the functions directly (smoke scale)."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.compendium import cells as C
from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.variance import cells as V
from fusionlib.ptgan.variance.collapse import CollapseSetup, collapse_trace
from fusionlib.ptgan.variance.present import present_traces
from fusionlib.ptgan.variance.runs import noisy_training_run, variance_training_run
from fusionlib.rng import seed_int


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_one_cell_per_run(scale):
    cfg = V.VARIANCE_CONFIG[scale]
    assert len(V.COLLAPSE.cells(scale)) == 4 * cfg["c_seeds"]
    assert len(V.TRAINING.cells(scale)) == 2 * cfg["t_seeds"]
    assert len(V.NOISE.cells(scale)) == len(cfg["n_sigmas"]) * cfg["n_seeds"]
    assert {"ptgan_var_collapse", "ptgan_var_training", "ptgan_var_noise"} <= set(
        C.experiment_names())
    seeds = {c.config["run_seed"] for c in V.TRAINING.cells(scale, seed=5)}
    assert seeds == {seed_int(5, "training", "rep", s) for s in range(cfg["t_seeds"])}
    devices = {c.config["device"] for c in V.NOISE.cells(scale)}
    assert devices == ({"auto"} if scale == "paper" else {"cpu"})


def _direct(seed: int) -> dict[str, pd.DataFrame]:
    cfg = V.VARIANCE_CONFIG["smoke"]
    base = dict(hidden=tuple(cfg["c_hidden"]), n_iter=cfg["c_iter"], measure_every=cfg["c_every"])
    collapse = pd.concat([collapse_trace(CollapseSetup(**base, mu2=mu2, r=r), seed=s)
                          for mu2, r, s in V.collapse_jobs("smoke", seed)], ignore_index=True)
    measure = list(range(cfg["t_every"], cfg["t_iter"] + 1, cfg["t_every"]))
    training = pd.concat([
        variance_training_run(default_config("pt+cp", r=r, lr_d=cfg["t_lr"], lr_g=cfg["t_lr"]),
                              seed_int(seed, "training", "rep", s), n_iter=cfg["t_iter"],
                              measure_at=measure, size=cfg["t_size"])
        for r in (1.0, 0.99) for s in range(cfg["t_seeds"])], ignore_index=True)
    lgan = default_config("mp", lr_d=cfg["n_lr"], lr_g=cfg["n_lr"])
    evals = list(range(cfg["n_every"], cfg["n_iter"] + 1, cfg["n_every"]))
    noise = pd.concat([
        noisy_training_run(lgan, sig, seed_int(seed, "noise", "rep", s), n_iter=cfg["n_iter"],
                           eval_at=evals, size=cfg["n_size"], n_eval=cfg["n_eval"])
        for sig in cfg["n_sigmas"] for s in range(cfg["n_seeds"])], ignore_index=True)
    return {"collapse": collapse, "training": training, "noise": noise}


def test_cells_give_the_traces_of_direct_calls(tmp_path):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the chapter's setting, which the cells apply themselves
    try:
        want = _direct(0)
    finally:
        torch.set_num_threads(threads)
    first = V.variance_traces("smoke", 0, root=tmp_path, progress=False)
    again = V.variance_traces("smoke", 0, root=tmp_path, progress=False)  # read back
    assert torch.get_num_threads() == threads  # restored after each cell
    for got in (first, again):
        for key, frame in want.items():
            pd.testing.assert_frame_equal(got[key], frame, check_exact=True, obj=key)


def test_other_seed_other_traces(tmp_path):
    a = V.variance_traces("smoke", 0, root=tmp_path, progress=False)
    b = V.variance_traces("smoke", 1, root=tmp_path, progress=False)
    for key in a:
        assert not a[key]["seed"].equals(b[key]["seed"])
    assert not a["noise"]["w1"].equals(b["noise"]["w1"])


def test_present_traces_read_without_computing(tmp_path):
    """None while any collapse cell lacks a shard (nothing is computed: the folder stays
    empty); the computed traces once every cell is present; None again when one shard goes."""
    from fusionlib.errors import InvalidInputError

    assert present_traces("collapse", "smoke", 0, root=tmp_path) is None
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # nothing computed
    want = V.variance_traces("smoke", 0, root=tmp_path, progress=False)["collapse"]
    got = present_traces("collapse", "smoke", 0, root=tmp_path)
    pd.testing.assert_frame_equal(got, want)
    shard = C.shard_path(tmp_path, "ptgan_var_collapse", "smoke",
                         V.COLLAPSE.cells("smoke", 0)[-1].cell_id)
    shard.unlink()
    assert present_traces("collapse", "smoke", 0, root=tmp_path) is None
    with pytest.raises(InvalidInputError, match="kind"):
        present_traces("collapsed", "smoke", 0, root=tmp_path)


def test_present_traces_say_stale_shards_are_not_read(tmp_path, monkeypatch):
    """Stale shards (here: every one, under a planted other code key) give None and one warning
    that says they are not read, not the cells' "recomputed" warning per shard."""
    import warnings

    from fusionlib.compendium.cells import StaleShardWarning
    from fusionlib.compendium.cells import exec as cells_exec

    V.variance_traces("smoke", 0, root=tmp_path, progress=False)
    monkeypatch.setattr(cells_exec, "code_key", lambda exp: "0" * 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert present_traces("collapse", "smoke", 0, root=tmp_path) is None
    stale = [w for w in caught if issubclass(w.category, StaleShardWarning)]
    assert len(stale) == 1, [str(w.message) for w in caught]
    assert "4 shard(s) of ptgan_var_collapse" in str(stale[0].message)
    assert "not read" in str(stale[0].message) and "recomputed" not in str(stale[0].message)
