"""The PTGAN ring runs (Figures 1, 9, 11 of seed 001) as cells of the compendium's grid.

Importing this module registers three experiments in
:data:`fusionlib.compendium.cells.EXPERIMENTS`:

``ptgan_ring``
    one cell per (method, repetition) for the methods of Figure 1 and the mode-coverage table
    (:data:`RING_METHODS`: plain, MP, GP, WGAN-GP, PT+GP, PT+CP); repetition ``i`` trains with seed
    ``seed_int(seed, "ring", "rep", i)``, exactly as ``notebooks/ptgan_toys.md`` does.
``ptgan_mixup``
    one cell per (Beta law, repetition) of the Mixup GAN runs of Figure 9 (same seeds).
``ptgan_fig11``
    one cell per (generator width, noise Z or Z^alpha, repetition) of Figure 11
    (seeds ``seed_int(seed, "fig11", "rep", i)``).

Each cell calls :func:`fusionlib.ptgan.toys.runs.train_ring` and stores one row (the
inputs of :func:`~fusionlib.ptgan.toys.runs.coverage_table`: modes covered, high-quality
share, seconds) and figure data (the W1 curve points, the mode metrics; for ``ptgan_ring`` the
final samples, and for its first repetition the sample snapshots). :func:`ring_runs` turns the
shards back into :class:`~fusionlib.ptgan.toys.runs.RingRun` objects, so the notebook's
summaries work on them unchanged.

:data:`TOY_CONFIG` holds the per-scale settings of the chapter (the notebook can take them
from here: ``cfg = run.pick(**TOY_CONFIG)``). Heavy imports (torch, the trainer) happen inside
the compute functions, so listing the cells is cheap.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

if TYPE_CHECKING:
    from fusionlib.ptgan.toys.runs import RingRun

__all__ = ["TOY_CONFIG", "RING_METHODS", "MIXUP_LAWS", "FIG11_WIDTHS", "RING", "MIXUP",
           "FIG11", "ring_runs"]

#: the chapter's settings per scale (notebooks/ptgan_toys.md)
TOY_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(n_iter=20, n_seeds=1, size="small", eval_every=10, n_eval=100, n_metrics=200,
                  n_data=2_000, fig11_iter=20, fig11_seeds=1, mc_n=20_000),
    "cpu": dict(n_iter=2_500, n_seeds=3, size="small", eval_every=250, n_eval=500,
                n_metrics=10_000, n_data=10_000, fig11_iter=1_500, fig11_seeds=2,
                mc_n=2_000_000),
    "paper": dict(n_iter=10_000, n_seeds=10, size="paper", eval_every=500, n_eval=1_000,
                  n_metrics=10_000, n_data=10_000, fig11_iter=10_000, fig11_seeds=10,
                  mc_n=10_000_000),
}
#: methods of Figure 1 and the mode-coverage table, in table order ("gp": WGAN-GP under the
#: paper's shared settings, one critic step; "wgan-gp": its own published five critic steps)
RING_METHODS: tuple[str, ...] = ("plain", "mp", "gp", "wgan-gp", "pt+gp", "pt+cp")
#: Beta(a, b) laws of the Mixup GAN runs of Figure 9
MIXUP_LAWS: tuple[tuple[float, float], ...] = ((0.2, 0.2), (1.0, 1.0))
#: generator widths of Figure 11
FIG11_WIDTHS: tuple[int, ...] = (4, 256)


def _device(scale: str) -> str:
    # small MLPs run fastest on one CPU thread; only the paper scale (GPU runners) may use CUDA
    return "auto" if scale == "paper" else "cpu"


def _resolve_device(name: str) -> str:
    if name != "auto":
        return name
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _common(cfg: dict[str, Any], n_iter: int) -> dict[str, Any]:
    return dict(size=cfg["size"], n_eval=cfg["n_eval"], n_data=cfg["n_data"],
                eval_at=list(range(cfg["eval_every"], n_iter + 1, cfg["eval_every"])))


def _ring_grid(scale: str, seed: int) -> list[Cell]:
    cfg = TOY_CONFIG[scale]
    train = dict(_common(cfg, cfg["n_iter"]), n_metrics=cfg["n_metrics"],
                 n_snapshot=cfg["n_eval"])
    return [Cell("ptgan_ring", dict(method=m, rep=i, n_iter=cfg["n_iter"], train=train,
                                    overrides={}, device=_device(scale),
                                    keep_snapshots=i == 0, keep_samples=True),
                 seed_int(seed, "ring", "rep", i), label=f"{m} rep {i}")
            for m in RING_METHODS for i in range(cfg["n_seeds"])]


def _mixup_grid(scale: str, seed: int) -> list[Cell]:
    cfg = TOY_CONFIG[scale]
    train = dict(_common(cfg, cfg["n_iter"]), n_metrics=cfg["n_metrics"],
                 n_snapshot=cfg["n_eval"])
    return [Cell("ptgan_mixup", dict(method="mixup", rep=i, n_iter=cfg["n_iter"], train=train,
                                     overrides=dict(mixup_a=a, mixup_b=b),
                                     device=_device(scale), keep_snapshots=False,
                                     keep_samples=False),
                 seed_int(seed, "ring", "rep", i), label=f"mixup {a:g} {b:g} rep {i}")
            for a, b in MIXUP_LAWS for i in range(cfg["n_seeds"])]


def _fig11_grid(scale: str, seed: int) -> list[Cell]:
    cfg = TOY_CONFIG[scale]
    train = dict(_common(cfg, cfg["fig11_iter"]), eval_alphas=[0.5, 0.9], n_snapshot=10)
    return [Cell("ptgan_fig11", dict(method="pt+cp", rep=i, n_iter=cfg["fig11_iter"],
                                     train=dict(train, generator_hidden=[w]),
                                     overrides=dict(latent_dim=2, noise="uniform_sign",
                                                    interpolated_noise=inter),
                                     device=_device(scale), keep_snapshots=False,
                                     keep_samples=False),
                 seed_int(seed, "fig11", "rep", i),
                 label=f"width {w} {'zalpha' if inter else 'z'} rep {i}")
            for w in FIG11_WIDTHS for inter in (True, False) for i in range(cfg["fig11_seeds"])]


def _compute(cell: Cell) -> Shard:
    """Train one ring run and summarise it (pure function of the cell on CPU)."""
    from fusionlib.ptgan.toys.runs import train_ring

    cfg = cell.config
    device = _resolve_device(cfg["device"])
    run = train_ring(cfg["method"], cell.seed, cfg["n_iter"], device=device, **cfg["train"],
                     **cfg["overrides"])
    row = {"method": run.method, "rep": cfg["rep"], "seed": run.seed, "n_iter": run.n_iter,
           "modes": run.metrics["modes_covered"], "n_modes": run.metrics["n_modes"],
           "hq": run.metrics["high_quality_share"],
           "all": run.metrics["modes_covered"] == run.metrics["n_modes"],
           "seconds": run.seconds}
    ov = cfg["overrides"]
    if "mixup_a" in ov:
        row.update(mixup_a=ov["mixup_a"], mixup_b=ov["mixup_b"])
    if "generator_hidden" in cfg["train"]:
        row.update(width=cfg["train"]["generator_hidden"][0],
                   interpolated=bool(ov.get("interpolated_noise", True)))
    figures: dict[str, Any] = {
        "w1": [[float(a), int(it), float(w)] for a, curve in run.w1.items() for it, w in curve],
        "metrics": run.metrics,
        "gan_config": run.config,
    }
    if cfg["keep_snapshots"]:
        figures["snapshots"] = {str(it): pts.tolist() for it, pts in run.snapshots.items()}
    if cfg["keep_samples"]:  # the final samples: coverage under other thresholds
        figures["samples"] = run.samples.tolist()
    return Shard(pd.DataFrame([row]), figures, meta={"device": device})


_MODULES = (__name__,)
RING = register(Experiment(
    "ptgan_ring", _ring_grid, _compute, _MODULES,
    description="PTGAN toys: one ring run per (method, repetition); Figure 1, mode coverage"))
MIXUP = register(Experiment(
    "ptgan_mixup", _mixup_grid, _compute, _MODULES,
    description="PTGAN toys: Mixup GAN ring runs per (Beta law, repetition); Figure 9"))
FIG11 = register(Experiment(
    "ptgan_fig11", _fig11_grid, _compute, _MODULES,
    description="PTGAN toys: interpolated noise per (width, Z or Z^alpha, repetition); Fig. 11"))


def _ring_run(row: pd.Series, figures: dict[str, Any]) -> RingRun:
    import numpy as np

    from fusionlib.ptgan.toys.runs import RingRun

    w1: dict[float, list[tuple[int, float]]] = {}
    for a, it, w in figures["w1"]:
        w1.setdefault(float(a), []).append((int(it), float(w)))
    snaps = {int(it): np.asarray(p, dtype=float).reshape(-1, 2)
             for it, p in figures.get("snapshots", {}).items()}
    samples = np.asarray(figures.get("samples", []), dtype=float).reshape(-1, 2)
    return RingRun(method=str(row["method"]), seed=int(row["seed"]), n_iter=int(row["n_iter"]),
                   samples=samples, metrics=dict(figures["metrics"]),
                   seconds=float(row["seconds"]), snapshots=snaps, w1=w1,
                   config=dict(figures.get("gan_config", {})))


def ring_runs(experiment: str, scale: str, seed: int = 0, *,
              root: str | os.PathLike[str] | None = None,
              progress: bool = True) -> dict[tuple, RingRun]:
    """The runs of ``experiment`` (``ptgan_ring``, ``ptgan_mixup`` or ``ptgan_fig11``) at
    ``scale`` for root seed ``seed``, computing missing cells in-process.

    Keys are those of the notebook's dictionaries: ``(method, run_seed)`` for ``ptgan_ring``,
    ``(a, b, run_seed)`` for ``ptgan_mixup`` and ``(width, interpolated, run_seed)`` for
    ``ptgan_fig11``. Only ``ptgan_ring`` runs carry their final ``samples`` (the others have an
    empty array; their mode metrics are kept), and only its first repetition its snapshots.
    """
    rows, figures = results(experiment, scale, seed=seed, root=root, progress=progress)
    out: dict[tuple, RingRun] = {}
    for _, row in rows.iterrows():
        run = _ring_run(row, figures[row["cell_id"]])
        if "mixup_a" in row and pd.notna(row["mixup_a"]):
            key: tuple = (float(row["mixup_a"]), float(row["mixup_b"]), run.seed)
        elif "width" in row and pd.notna(row["width"]):
            key = (int(row["width"]), bool(row["interpolated"]), run.seed)
        else:
            key = (run.method, run.seed)
        out[key] = run
    return out
