"""The training runs of the PTGAN variance chapter as cells of the compendium's grid.

Importing this module registers three experiments in
:data:`fusionlib.compendium.cells.EXPERIMENTS`, one cell per independent training run, with the
settings of ``notebooks/ptgan_variance.md`` per scale (:data:`VARIANCE_CONFIG`):

- ``ptgan_var_collapse`` (Figures 2 and 4): the critic trained against the frozen collapsed
  generator, :func:`~fusionlib.ptgan.variance.collapse.collapse_trace`, per
  (mu2, r, repetition);
- ``ptgan_var_training`` (Figure 4 during full training):
  :func:`~fusionlib.ptgan.variance.runs.variance_training_run` per (r, repetition);
- ``ptgan_var_noise`` (Figure 8): :func:`~fusionlib.ptgan.variance.runs.noisy_training_run`
  per (sigma, repetition).

Each shard's rows are the run's trace, as the function returns it. A repetition's seed is
``seed_int(root seed, <stream>, "rep", k)``, the chapter's, so the numbers are those of running
the functions in the notebook. At paper scale the training runs use a GPU when there is one
(``device="auto"``; the collapse runs stay on the CPU). The runs use one torch thread on a
CPU (the chapter's setting; small networks are fastest so, and the thread count is part of what
makes CPU runs bitwise reproducible). :func:`variance_traces` is what the chapter calls.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

__all__ = ["VARIANCE_CONFIG", "COLLAPSE", "TRAINING", "NOISE", "variance_traces",
           "collapse_jobs"]

#: the chapter's settings per scale (notebooks/ptgan_variance.md reads them from here)
VARIANCE_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(p5_batches=500, c_hidden=[16, 16], c_iter=20, c_every=10, c_seeds=1,
                  t_size="small", t_iter=20, t_every=10, t_seeds=1, t_lr=1e-4,
                  n_sigmas=[0.0, 0.1], n_size="small", n_iter=20, n_every=10, n_seeds=1,
                  n_lr=1e-3, n_eval=50),
    "cpu": dict(p5_batches=500_000, c_hidden=[256] * 4, c_iter=300, c_every=10, c_seeds=3,
                t_size="small", t_iter=1000, t_every=100, t_seeds=3, t_lr=1e-4,
                n_sigmas=[0.0, 0.01, 0.1], n_size="small", n_iter=1000, n_every=100, n_seeds=3,
                n_lr=1e-3, n_eval=500),
    "paper": dict(p5_batches=2_000_000, c_hidden=[256] * 4, c_iter=2000, c_every=10, c_seeds=10,
                  t_size="paper", t_iter=20_000, t_every=500, t_seeds=10, t_lr=1e-4,
                  n_sigmas=[0.0, 0.001, 0.01, 0.1], n_size="paper", n_iter=20_000,
                  n_every=500, n_seeds=10, n_lr=1e-4, n_eval=1000),
}
_MODULES = (__name__, "fusionlib.ptgan.variance.collapse", "fusionlib.ptgan.variance.runs")


def _one_thread() -> contextlib.AbstractContextManager[None]:
    """One torch thread for the duration (the chapter's setting), restored afterwards."""
    from fusionlib.gan.trainer import torch_threads

    return torch_threads(1)


def _device(scale: str, name: str | None = None) -> str:
    """``"auto"`` at paper scale (GPU runners), else ``"cpu"``; with ``name``, resolve it."""
    if name is None:
        return "auto" if scale == "paper" else "cpu"
    import torch

    return "cuda" if name == "auto" and torch.cuda.is_available() else "cpu"


def collapse_jobs(scale: str, seed: int) -> list[tuple[float, float, int]]:
    """``(mu2, r, run seed)`` of every collapse run, in the chapter's order."""
    cfg = VARIANCE_CONFIG[scale]
    seeds = [seed_int(seed, "collapse", "rep", s) for s in range(cfg["c_seeds"])]
    return [(mu2, r, s) for mu2 in (1.5, 3.0) for r in (1.0, 0.99) for s in seeds]


def _collapse_grid(scale: str, seed: int) -> list[Cell]:
    cfg = VARIANCE_CONFIG[scale]
    base = {"hidden": cfg["c_hidden"], "n_iter": cfg["c_iter"], "measure_every": cfg["c_every"]}
    return [Cell("ptgan_var_collapse", {**base, "mu2": mu2, "r": r, "run_seed": s}, seed,
                 label=f"mu2 {mu2} r {r} seed {s}") for mu2, r, s in collapse_jobs(scale, seed)]


def _collapse(cell: Cell) -> Shard:
    from fusionlib.ptgan.variance.collapse import CollapseSetup, collapse_trace

    c = cell.config
    setup = CollapseSetup(hidden=tuple(c["hidden"]), n_iter=c["n_iter"],
                          measure_every=c["measure_every"], mu2=c["mu2"], r=c["r"])
    with _one_thread():
        return Shard(collapse_trace(setup, seed=c["run_seed"]))


def _training_grid(scale: str, seed: int) -> list[Cell]:
    cfg = VARIANCE_CONFIG[scale]
    seeds = [seed_int(seed, "training", "rep", s) for s in range(cfg["t_seeds"])]
    return [Cell("ptgan_var_training", {"r": r, "run_seed": s, "lr": cfg["t_lr"],
                                        "n_iter": cfg["t_iter"], "every": cfg["t_every"],
                                        "size": cfg["t_size"], "device": _device(scale)},
                 seed, label=f"r {r} seed {s}")
            for r in (1.0, 0.99) for s in seeds]


def _training(cell: Cell) -> Shard:
    from fusionlib.ptgan.config import default_config
    from fusionlib.ptgan.variance.runs import variance_training_run

    c = cell.config
    config = default_config("pt+cp", r=c["r"], lr_d=c["lr"], lr_g=c["lr"])
    with _one_thread():
        return Shard(variance_training_run(
            config, c["run_seed"], n_iter=c["n_iter"],
            measure_at=list(range(c["every"], c["n_iter"] + 1, c["every"])), size=c["size"],
            device=_device("", c["device"])))


def _noise_grid(scale: str, seed: int) -> list[Cell]:
    cfg = VARIANCE_CONFIG[scale]
    seeds = [seed_int(seed, "noise", "rep", s) for s in range(cfg["n_seeds"])]
    return [Cell("ptgan_var_noise", {"sigma": sig, "run_seed": s, "lr": cfg["n_lr"],
                                     "n_iter": cfg["n_iter"], "every": cfg["n_every"],
                                     "size": cfg["n_size"], "n_eval": cfg["n_eval"],
                                     "device": _device(scale)}, seed,
                 label=f"sigma {sig} seed {s}") for sig in cfg["n_sigmas"] for s in seeds]


def _noise(cell: Cell) -> Shard:
    from fusionlib.ptgan.config import default_config
    from fusionlib.ptgan.variance.runs import noisy_training_run

    c = cell.config
    lgan = default_config("mp", lr_d=c["lr"], lr_g=c["lr"])
    with _one_thread():
        return Shard(noisy_training_run(
            lgan, c["sigma"], c["run_seed"], n_iter=c["n_iter"],
            eval_at=list(range(c["every"], c["n_iter"] + 1, c["every"])), size=c["size"],
            n_eval=c["n_eval"], device=_device("", c["device"])))


COLLAPSE = register(Experiment(
    "ptgan_var_collapse", _collapse_grid, _collapse, _MODULES,
    description="PTGAN variance: critic vs the collapsed generator per (mu2, r, seed); Fig. 2, 4"))
TRAINING = register(Experiment(
    "ptgan_var_training", _training_grid, _training, _MODULES,
    description="PTGAN variance: gradient variance during PTGAN training per (r, seed)"))
NOISE = register(Experiment(
    "ptgan_var_noise", _noise_grid, _noise, _MODULES,
    description="PTGAN variance: Lipschitz GAN under gradient noise per (sigma, seed); Fig. 8"))


def variance_traces(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                    progress: bool = True) -> dict[str, pd.DataFrame]:
    """``collapse``, ``training`` and ``noise``: the traces of every run at ``scale``, in the
    chapter's order (missing cells computed in-process)."""
    out = {}
    for key, exp in (("collapse", COLLAPSE), ("training", TRAINING), ("noise", NOISE)):
        rows, _ = results(exp, scale, seed=seed, root=root, progress=progress)
        out[key] = rows.drop(columns="cell_id").reset_index(drop=True)
    return out
