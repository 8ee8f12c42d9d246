"""Training runs on the 8-Gaussian ring (Figures 1, 9, 11) and their summaries.

A notebook calls :func:`train_ring` once per (method, seed) and :func:`coverage_table` /
:func:`curve_frame` to summarise; no training logic lives in the notebook.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fusionlib.gan.networks import Generator, toy_networks
from fusionlib.gan.trainer import Trainer
from fusionlib.metrics.distances import wasserstein1
from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.step import ptgan_trainer
from fusionlib.ptgan.toys.data import (
    RING_VARIANCE,
    mode_metrics,
    ring_centers,
    sample_ring,
    tempered_sample,
)
from fusionlib.rng import child

__all__ = ["RingRun", "coverage_table", "curve_frame", "train_ring"]



@dataclass
class RingRun:
    """Outcome of one training run on the ring.

    Attributes
    ----------
    samples: (n_metrics, 2) final samples at alpha = 1.
    snapshots: iteration -> (n_snapshot, 2) samples at alpha = 1 at the ``eval_at`` iterations.
    w1: alpha -> list of (iteration, W1 between G(., alpha) and Q^alpha) at ``eval_at``.
    metrics: :func:`fusionlib.ptgan.toys.data.mode_metrics` of ``samples``.
    """

    method: str
    seed: int
    n_iter: int
    samples: np.ndarray
    metrics: dict
    seconds: float
    snapshots: dict = field(default_factory=dict)
    w1: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)


def train_ring(method: str, seed: int, n_iter: int, *, size: str = "small",
               eval_at: Iterable[int] = (), eval_alphas: Sequence[float] = (1.0,),
               n_eval: int = 1000, n_metrics: int = 2000, n_data: int = 10_000,
               n_snapshot: int = 500,
               generator_hidden: Sequence[int] | None = None, device: str = "cpu",
               progress: bool = False, **overrides: object) -> RingRun:
    """Train ``method`` on ``n_data`` ring points and evaluate it.

    Parameters
    ----------
    method:
        One of :data:`fusionlib.ptgan.config.METHODS`; ``overrides`` change its config fields
        (e.g. ``latent_dim=2, noise="uniform_sign", interpolated_noise=False``).
    size:
        Network size for :func:`fusionlib.gan.networks.toy_networks` ("small" or "paper").
    eval_at:
        Iterations at which W1 (for each alpha in ``eval_alphas``, between ``n_eval`` generated
        and ``n_eval`` target points) and sample snapshots are taken.
    n_metrics:
        Generated points for the final mode metrics (cheap, so larger than ``n_eval``).
    generator_hidden:
        Replace the generator's hidden widths (Figure 11 uses one hidden layer of 4 or 256).
    device:
        Torch device for training (results are bitwise reproducible on CPU only).
    """
    cfg = default_config(method, **overrides)
    gen, critic = toy_networks(size, conditional=cfg.conditional, seed=seed,
                               latent_dim=cfg.latent_dim)
    if generator_hidden is not None:
        gen = Generator(cfg.latent_dim, 2, generator_hidden, conditional=cfg.conditional,
                        seed=child(seed, "generator"))
    data = sample_ring(n_data, child(seed, "data"))
    target = sample_ring(n_eval, child(seed, "target"))
    trainer = ptgan_trainer(cfg, gen, critic, seed=seed, device=device, progress=progress)
    # an unconditional generator only has the level alpha = 1
    alphas = [a for a in eval_alphas if cfg.conditional or a == 1.0]
    run = RingRun(method=method, seed=seed, n_iter=n_iter, samples=np.empty((0, 2)),
                  metrics={}, seconds=0.0, w1={a: [] for a in alphas},
                  config=cfg.to_dict())

    def evaluate(tr: Trainer, it: int) -> None:
        for a in alphas:
            ref = target if a == 1.0 else tempered_sample(
                target, n_eval, child(seed, "eval", it, "ref"), alpha=a)
            fake = tr.sample(n_eval, alpha=a, seed=child(seed, "eval", it)).numpy()
            run.w1[a].append((it, wasserstein1(fake, ref)))
        run.snapshots[it] = tr.sample(n_snapshot, seed=child(seed, "snapshot", it)).numpy()

    start = time.perf_counter()
    trainer.fit(data, n_iter, callback=evaluate, callback_at=eval_at)
    run.seconds = time.perf_counter() - start
    run.samples = trainer.sample(n_metrics, seed=child(seed, "final")).numpy()
    run.metrics = mode_metrics(run.samples, ring_centers(), np.sqrt(RING_VARIANCE))
    return run


def coverage_table(runs: Iterable[RingRun]) -> pd.DataFrame:
    """Per method: modes covered (of 8) and high-quality share, mean and sd across seeds,
    plus the number of seeds that covered all modes."""
    rows = [{"method": r.method, "seed": r.seed, "modes": r.metrics["modes_covered"],
             "hq": r.metrics["high_quality_share"],
             "all": r.metrics["modes_covered"] == r.metrics["n_modes"]} for r in runs]
    df = pd.DataFrame(rows)
    out = df.groupby("method", sort=False).agg(
        n_seeds=("seed", "size"), modes_mean=("modes", "mean"), modes_sd=("modes", "std"),
        hq_mean=("hq", "mean"), hq_sd=("hq", "std"), seeds_all_modes=("all", "sum"))
    return out.reset_index()


def curve_frame(runs: Iterable[RingRun], label: str | None = None) -> pd.DataFrame:
    """Long table of W1 curves: columns label, seed, alpha, iteration, w1."""
    rows = [{"label": label or r.method, "seed": r.seed, "alpha": a, "iteration": it, "w1": w}
            for r in runs for a, curve in r.w1.items() for it, w in curve]
    return pd.DataFrame(rows, columns=["label", "seed", "alpha", "iteration", "w1"])
