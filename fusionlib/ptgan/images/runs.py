"""One image run of PTGAN or a competitor through the shared trainer (seed 001, Section 5.1).

:func:`train_image_run` loads the data (:mod:`fusionlib.data.images`), builds the networks of
Table 5/6 (:mod:`fusionlib.gan.cnn`), trains them with
:class:`~fusionlib.ptgan.images.step.ImagePTGANStep` on :class:`~fusionlib.gan.trainer.Trainer`
(device, checkpoint and bitwise resume on CPU come from the trainer) and returns an
:class:`ImageRun`: the minibatch-loss variance over iterations (Figure 5), generated images at
alpha = 1 (Figure 6, and the scores computed from them) and, when a ``scorer`` is given, scores
at evaluation points (the paper keeps the best of 10 equally spaced points).

:class:`LossVarianceCallback` measures Figure 5's quantity. For ``n_var`` i.i.d. pairs drawn as
the training step draws them (Algorithm 1 when tempered) it computes the per-pair loss
``L_i = D(q_i, t_i) - D(G(z_i, t_i), t_i)`` (the neural distance's summand) and reports
``Var[L_b]``, the variance of the minibatch loss of ``n_b`` pairs drawn as training draws them
(:func:`minibatch_loss_variance`: ``Var_i(L_i) / n_b`` for i.i.d. pairs; with a fixed share of
untempered pairs per minibatch, the stratified variance), and the trace of the per-pair
gradient covariance of the critic's last (dense) layer, whose per-pair gradient is the
difference of the penultimate features. It uses its own random stream and eval mode, so
training with it is bitwise the same as without it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from fusionlib import rng as rng_mod
from fusionlib.checks import check_positive_int
from fusionlib.data.images import from_unit, load_image_dataset, to_unit
from fusionlib.gan.cnn import cnn_networks
from fusionlib.gan.networks import eval_mode
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.images.step import ImagePTGANStep, ImageRunConfig, gan_config
from fusionlib.ptgan.objectives import draw_step_inputs
from fusionlib.ptgan.tempering import n_tempered

__all__ = ["ImageRun", "LossVarianceCallback", "build_trainer", "minibatch_loss_variance",
           "resolve_device", "train_image_run"]

Scorer = Callable[[np.ndarray], dict]


def resolve_device(name: str) -> str:
    """``"auto"`` -> ``"cuda"`` when available, else ``"cpu"``; other names pass through."""
    if name != "auto":
        return name
    return "cuda" if torch.cuda.is_available() else "cpu"


def minibatch_loss_variance(loss: torch.Tensor, untempered: torch.Tensor, batch_size: int,
                            r: float, share: str) -> float:
    """Variance of the minibatch loss ``L_b = mean of n_b pair losses`` from pair losses ``loss``.

    ``untempered`` marks the pairs at alpha = 1. With i.i.d. pairs (``share="per_row"``, or no
    tempering) it is ``Var_i(L_i) / n_b``. With a fixed share (``share="fixed"``: ``n_b - k``
    untempered and ``k`` tempered pairs, ``k`` or ``k + 1`` with probability ``f``, see
    :func:`~fusionlib.ptgan.tempering.n_tempered`) the minibatch is stratified and
    ``Var[L_b] = (sum_s n_s var_s) / n_b^2 + f (1 - f) (mu_1 - mu_0)^2 / n_b^2`` with the
    strata's expected sizes ``n_s``, variances ``var_s`` and means ``mu_s``; the pooled formula
    would add the between-strata spread that a fixed share removes. A stratum with fewer than
    two pairs in ``loss`` falls back to the pooled formula.
    """
    pooled = float(loss.var() / batch_size)
    k, frac = n_tempered(batch_size, r)
    if share != "fixed" or (k == 0 and frac == 0):
        return pooled
    x1, x0 = loss[untempered], loss[~untempered]
    if x1.numel() < 2 or x0.numel() < 2:
        return pooled
    m0 = k + frac  # expected tempered pairs per minibatch
    within = (batch_size - m0) * x1.var() + m0 * x0.var()
    between = frac * (1 - frac) * (x1.mean() - x0.mean()) ** 2
    return float((within + between) / batch_size**2)


class LossVarianceCallback:
    """Trainer callback recording ``Var[L_b]`` and the last-layer gradient variance."""

    def __init__(self, data: torch.Tensor, *, seed: object, n_var: int = 500) -> None:
        self.data, self.seed, self.n_var = data, seed, check_positive_int("n_var", n_var)
        self._gen: torch.Generator | None = None
        self._on_device: torch.Tensor | None = None  # ``data`` on the trainer's device, once
        self.records_: list[dict] = []

    @torch.no_grad()
    def __call__(self, trainer: Trainer, iteration: int) -> None:
        step: ImagePTGANStep = trainer.step
        cfg = step.config
        if self._gen is None:
            self._gen = rng_mod.torch_generator(self.seed, "loss-variance", device=trainer.device)
        if self._on_device is None or self._on_device.device != torch.device(trainer.device):
            self._on_device = self.data.to(trainer.device)
        data = self._on_device
        losses, diffs, ones = [], [], []
        with eval_mode(step.generator, step.critic):
            while sum(len(x) for x in losses) < self.n_var:
                inp = draw_step_inputs(data, cfg, self._gen)
                ones.append(inp.alpha == 1.0)
                fake = step.generate(inp).float()
                hr = step.critic.features(inp.real, inp.t)
                hf = step.critic.features(fake, inp.t)
                d = step.critic.dense
                losses.append((d(hr) - d(hf)).squeeze(1))
                diffs.append(hr - hf)
        loss = torch.cat(losses)[: self.n_var].double()
        diff = torch.cat(diffs)[: self.n_var].double()
        untempered = torch.cat(ones)[: self.n_var]
        self.records_.append({
            "iteration": iteration, "loss_mean": float(loss.mean()),
            "var_loss": minibatch_loss_variance(loss, untempered, cfg.batch_size, cfg.r,
                                                cfg.alpha_share if cfg.tempered else "per_row"),
            "grad_var_last": float(diff.var(dim=0).sum())})

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.records_)


@dataclass
class ImageRun:
    """The outcome of one image run (see the module docstring)."""

    config: dict
    seed: int
    variance: pd.DataFrame
    samples: np.ndarray
    seconds: float
    iterations_per_second: float
    cpu_seconds: float = float("nan")
    scores: list[dict] = field(default_factory=list)
    device: str = "cpu"


def build_trainer(run: ImageRunConfig, seed: int, *, device: str = "cpu",
                  checkpoint_path: str | None = None, checkpoint_every: int = 0,
                  progress: bool = False) -> Trainer:
    """The trainer (fresh networks of Table 5/6) for ``run`` with root ``seed``."""
    cfg = gan_config(run)
    gen, critic = cnn_networks(run.image_size, run.channels, conditional=cfg.conditional,
                               spectral_norm=run.method == "sn", width=run.width,
                               latent_dim=run.latent, seed=rng_mod.seed_int(seed, "networks"))
    step = ImagePTGANStep(cfg, gen, critic, amp=run.amp)
    return Trainer(step, seed=rng_mod.child(seed, "train"), device=resolve_device(device),
                   n_threads=1 if resolve_device(device) == "cpu" else None,
                   checkpoint_path=checkpoint_path, checkpoint_every=checkpoint_every,
                   log_every=0, progress=progress)


def train_image_run(run: ImageRunConfig, seed: int, *, var_at: Sequence[int] = (),
                    n_var: int = 500, n_samples: int = 64, eval_at: Sequence[int] = (),
                    scorer: Scorer | None = None, device: str = "cpu",
                    checkpoint_path: str | None = None, checkpoint_every: int = 0,
                    progress: bool = False) -> ImageRun:
    """Train one image run and measure it (pure function of its arguments on CPU).

    ``var_at``: iterations of the loss-variance measurements; ``n_samples`` images at alpha = 1
    are drawn from the final generator (uint8); ``scorer(images_uint8) -> dict`` is called on
    ``n_samples`` images at each iteration of ``eval_at``.
    """
    x, _ = load_image_dataset(run.dataset, "train", limit=run.n_train)
    data = torch.as_tensor(to_unit(x))
    trainer = build_trainer(run, seed, device=device, checkpoint_path=checkpoint_path,
                            checkpoint_every=checkpoint_every, progress=progress)
    var_cb = LossVarianceCallback(data.reshape(len(data), -1), seed=rng_mod.child(seed, "var"),
                                  n_var=n_var)
    scores: list[dict] = []

    def evaluate(tr: Trainer, it: int) -> None:
        if it in set(var_at):
            var_cb(tr, it)
        if scorer is not None and it in set(eval_at):
            g = rng_mod.torch_generator(rng_mod.child(seed, "eval", it), "sample",
                                        device=tr.device)
            imgs = tr.step.sample_images(n_samples, g).cpu().numpy()
            scores.append({"iteration": it, **scorer(from_unit(imgs))})

    t0, c0 = time.perf_counter(), time.process_time()
    trainer.fit(data, run.n_iter, callback=evaluate, callback_at=[*var_at, *eval_at])
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    g = rng_mod.torch_generator(rng_mod.child(seed, "final"), "sample", device=trainer.device)
    samples = from_unit(trainer.step.sample_images(n_samples, g).cpu().numpy())
    return ImageRun(config=run.to_dict(), seed=seed, variance=var_cb.frame(), samples=samples,
                    seconds=seconds, iterations_per_second=run.n_iter / max(seconds, 1e-9),
                    cpu_seconds=cpu_seconds,
                    scores=scores, device=trainer.device)
