"""Gradient variance *during* GAN training, with the shared :class:`fusionlib.gan.trainer.Trainer`.

* :class:`VarianceCallback` measures the critic's per-pair gradient variance (SM D.1) and the
  minibatch estimate of the neural distance at chosen iterations of a training run; it draws its
  own minibatches (Algorithm 1 when the configuration tempers) from its own generator, so it
  never perturbs the trainer's random stream.
* :func:`gradient_noise` adds i.i.d. ``N(0, sigma^2)`` noise to every entry of the critic's
  parameter gradient at every critic update (SM A.1, Figure 8), through tensor hooks on the
  critic's parameters, so the unmodified trainer can be used. The trainer freezes the critic
  during the generator step, so the hooks only fire on critic updates.
* :func:`noisy_training_run` trains one GAN on the 8-Gaussian ring under injected noise and
  records the 1-Wasserstein distance between real and generated samples (Figure 8).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd
import torch

from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.gan.diagnostics.variance import critic_gradient_variances, last_layer_parameter_names
from fusionlib.gan.networks import eval_mode, toy_networks
from fusionlib.gan.trainer import Trainer
from fusionlib.metrics.distances import wasserstein1
from fusionlib.ptgan.config import GANConfig
from fusionlib.ptgan.objectives import draw_step_inputs
from fusionlib.ptgan.step import ptgan_trainer
from fusionlib.ptgan.tempering import temperature
from fusionlib.ptgan.toys.data import sample_ring
from fusionlib.rng import child, torch_generator

__all__ = [
    "VarianceCallback",
    "gradient_noise",
    "late_log_mean",
    "noisy_training_run",
    "variance_training_run",
]


class VarianceCallback:
    """A trainer callback recording the critic's gradient variance.

    Parameters
    ----------
    data:
        The training data (N, d) as given to ``fit``.
    seed:
        Seed of the callback's own minibatch generator (created on ``trainer.device`` at the
        first call).

    Notes
    -----
    Both networks are evaluated in eval mode (batch-norm running statistics, no spectral-norm
    power iteration), so a measurement changes no buffer, and their previous modes are restored
    afterwards: training with the callback gives bitwise the same result as without it.

    After training, :attr:`records_` holds one dict per call with ``iteration``, ``loss_mean``
    (mean over the minibatch of ``D(q_i, t_i) - D(G(z_i, t_i), t_i)``), ``grad_var`` (all critic
    parameters) and ``grad_var_last`` (last layer).
    """

    def __init__(self, data: torch.Tensor | np.ndarray, *, seed: int) -> None:
        self.data = torch.as_tensor(data, dtype=torch.float32)
        self.seed = seed
        self._gen: torch.Generator | None = None
        self.records_: list[dict] = []

    def _generator(self, device: str) -> torch.Generator:
        # random draws must come from a generator on the device the tensors live on
        if self._gen is None:
            self._gen = torch_generator(self.seed, "variance-callback", device=device)
        return self._gen

    def __call__(self, trainer: Trainer, iteration: int) -> None:
        step = trainer.step
        cfg: GANConfig = step.config
        inputs = draw_step_inputs(self.data.to(trainer.device), cfg,
                                  self._generator(trainer.device))
        t = temperature(inputs.alpha) if cfg.conditional else None
        with eval_mode(step.generator, step.critic):
            with torch.no_grad():
                gen = step.generator
                fake = gen(inputs.z, t) if t is not None else gen(inputs.z)
                both = torch.cat([inputs.real, fake])
                scores = (step.critic(both) if t is None
                          else step.critic(both, torch.cat([t, t])))
            groups = {"grad_var": None,
                      "grad_var_last": last_layer_parameter_names(step.critic)}
            out = critic_gradient_variances(step.critic, inputs.real, fake, groups,
                                            real_alpha=t, fake_alpha=t)
        n = inputs.real.shape[0]
        self.records_.append({"iteration": iteration,
                              "loss_mean": float((scores[:n] - scores[n:]).mean()), **out})

    def frame(self) -> pd.DataFrame:
        """The records as a DataFrame."""
        return pd.DataFrame(self.records_)


@contextmanager
def gradient_noise(module: torch.nn.Module, sigma: float, seed: int) -> Iterator[None]:
    """Add ``N(0, sigma^2)`` to every gradient entry of ``module``'s parameters (SM A.1).

    The noise is drawn from a local generator seeded with ``seed`` each time a gradient w.r.t.
    a parameter is computed (once per backward pass); the hooks are removed on exit.
    """
    if not (isinstance(sigma, (int, float)) and sigma >= 0):
        raise InvalidInputError(f"sigma must be a number >= 0, got {sigma!r}")
    if sigma == 0:
        yield
        return
    gen = torch_generator(seed, "gradient-noise")

    def add_noise(g: torch.Tensor) -> torch.Tensor:
        noise = torch.randn(g.shape, generator=gen, dtype=g.dtype)
        return g + sigma * noise.to(g.device)

    handles = [p.register_hook(add_noise) for p in module.parameters() if p.requires_grad]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _ring_data(n_data: int, seed: int) -> torch.Tensor:
    return torch.as_tensor(sample_ring(n_data, child(seed, "data")), dtype=torch.float32)


def noisy_training_run(
    config: GANConfig,
    sigma: float,
    seed: int,
    *,
    n_iter: int,
    eval_at: Sequence[int],
    size: str = "small",
    n_data: int = 10_000,
    n_eval: int = 500,
    device: str = "cpu",
) -> pd.DataFrame:
    """Train on the 8-Gaussian ring with gradient noise ``sigma`` on the critic (Figure 8).

    Parameters
    ----------
    config:
        The GAN configuration (Figure 8 uses the Lipschitz GAN: ``default_config("mp")``).
    sigma:
        Standard deviation of the noise added to each critic gradient entry (0 = none).
    seed:
        Seeds the networks, the training data, the training stream, the noise and the
        evaluation samples (all derived from it).
    n_iter, eval_at:
        Training length and the (1-based) iterations at which W1 is evaluated.
    size:
        Toy network size (``"paper"``: 4 x 256, ``"small"``: 2 x 64).
    n_data, n_eval:
        Training-set size, and the sample size of each W1 evaluation (exact OT, O(n_eval^2)).
    device:
        Torch device of training (bitwise reproducible on CPU only).

    Returns
    -------
    pandas.DataFrame with ``iteration``, ``w1``, ``sigma``, ``seed``.
    """
    check_positive_int("n_iter", n_iter)
    check_positive_int("n_eval", n_eval)
    gen_net, critic = toy_networks(size, conditional=config.conditional, seed=seed,
                                   latent_dim=config.latent_dim)
    data = _ring_data(n_data, seed)
    reference = sample_ring(n_eval, child(seed, "reference"))
    rows: list[dict] = []

    def evaluate(trainer: Trainer, iteration: int) -> None:
        fake = trainer.sample(n_eval, seed=child(seed, "eval", iteration)).numpy()
        rows.append({"iteration": iteration, "w1": wasserstein1(reference, fake)})

    trainer = ptgan_trainer(config, gen_net, critic, seed=seed, device=device)
    with gradient_noise(critic, sigma, child(seed, "noise")):
        trainer.fit(data, n_iter, callback=evaluate, callback_at=eval_at)
    frame = pd.DataFrame(rows, columns=["iteration", "w1"])
    frame["sigma"], frame["seed"] = float(sigma), int(seed)
    return frame


def variance_training_run(
    config: GANConfig,
    seed: int,
    *,
    n_iter: int,
    measure_at: Sequence[int],
    size: str = "small",
    n_data: int = 10_000,
    device: str = "cpu",
) -> pd.DataFrame:
    """Train on the 8-Gaussian ring and record the critic's gradient variance at ``measure_at``.

    ``seed`` seeds the networks, the data, the training stream and the measurements; ``device``
    is the torch device of training and measurement (bitwise reproducible on CPU only).
    Returns the :class:`VarianceCallback` records with the columns ``r`` and ``seed`` added.
    """
    check_positive_int("n_iter", n_iter)
    gen_net, critic = toy_networks(size, conditional=config.conditional, seed=seed,
                                   latent_dim=config.latent_dim)
    data = _ring_data(n_data, seed)
    callback = VarianceCallback(data, seed=child(seed, "measure"))
    trainer = ptgan_trainer(config, gen_net, critic, seed=seed, device=device)
    trainer.fit(data, n_iter, callback=callback, callback_at=measure_at)
    frame = callback.frame()
    frame["r"], frame["seed"] = float(config.r), int(seed)
    return frame


def late_log_mean(frame: pd.DataFrame, value: str, keys: Sequence[str], *,
                  start_fraction: float = 0.5) -> pd.Series:
    """Mean of ``log(value)`` over the late part of each trace, one entry per ``keys`` group.

    "Late" means ``iteration >= start_fraction * max(iteration)``. The log makes the summary
    a geometric mean, so traces that grow by orders of magnitude are not dominated by their
    last point; differences of two such means are log-ratios.
    """
    missing = [c for c in (value, "iteration", *keys) if c not in frame.columns]
    if missing:
        raise InvalidInputError(f"frame lacks columns {missing}; it has {list(frame.columns)}")
    if not 0.0 <= start_fraction <= 1.0:
        raise InvalidInputError(f"start_fraction must lie in [0, 1], got {start_fraction}")
    late = frame[frame["iteration"] >= start_fraction * frame["iteration"].max()]
    if (late[value] <= 0).any():
        raise InvalidInputError(f"{value} must be > 0 to take logs")
    return np.log(late[value]).groupby([late[k] for k in keys]).mean()
