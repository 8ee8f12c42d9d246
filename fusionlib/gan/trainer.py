"""Algorithm 3 training loop: it only orchestrates (draw inputs, critic steps, generator step,
logging, callbacks, checkpoints). Losses live in :mod:`fusionlib.gan.objectives`.

Determinism: every random draw comes from one :class:`torch.Generator` seeded with ``seed``;
its state is checkpointed with the networks and optimisers, so on CPU a resumed run is bitwise
identical to an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from fusionlib.checks import is_int
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.gan._validate import check_matrix, check_positive_int, check_probability
from fusionlib.gan.config import GANConfig
from fusionlib.gan.objectives import critic_objective, draw_step_inputs, generator_objective
from fusionlib.gan.tempering import reference_noise, temperature
from fusionlib.io import atomic_write

__all__ = ["GANTrainer"]

Callback = Callable[["GANTrainer", int], None]
_FORMAT = 1


@contextmanager
def _threads(n: int | None):
    """Run with ``n`` torch intra-op threads, restoring the previous number afterwards."""
    previous = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _fingerprint(data: torch.Tensor) -> str:
    return hashlib.sha256(data.detach().cpu().contiguous().numpy().tobytes()).hexdigest()


class GANTrainer:
    """Trains a generator/critic pair by Algorithm 3 with any configured loss and penalty.

    Parameters
    ----------
    config:
        The method's :class:`~fusionlib.gan.config.GANConfig`.
    generator, critic:
        Networks (see :mod:`fusionlib.gan.networks`); conditional ones iff ``config.conditional``.
    seed:
        Seed of every random draw in training (minibatches, alpha, noise, penalty points).
    device:
        Torch device string; bitwise reproducibility is guaranteed on CPU only.
    n_threads:
        Torch intra-op threads during ``fit``; 1 is fastest for these small MLPs on a CPU
        (see ``benchmarks/bench_ptgan.py``); None keeps the current setting.
    checkpoint_path, checkpoint_every:
        Save an (atomic) checkpoint every ``checkpoint_every`` iterations and at the end; ``fit``
        resumes from an existing checkpoint and refuses one made with other settings.
    log_every:
        Record losses in ``history_`` every ``log_every`` iterations.
    progress:
        Show a tqdm progress bar.
    """

    def __init__(self, config: GANConfig, generator: torch.nn.Module, critic: torch.nn.Module,
                 *, seed: int, device: str = "cpu", n_threads: int | None = 1,
                 checkpoint_path: str | os.PathLike[str] | None = None,
                 checkpoint_every: int = 0, log_every: int = 10, progress: bool = False) -> None:
        self.config, self.generator, self.critic = config, generator, critic
        self.seed, self.device, self.n_threads = seed, device, n_threads
        self.checkpoint_path, self.checkpoint_every = checkpoint_path, checkpoint_every
        self.log_every, self.progress = log_every, progress

    # ------------------------------------------------------------------ setup
    def _validate(self, data: torch.Tensor) -> None:
        if not isinstance(self.config, GANConfig):
            raise InvalidInputError("config must be a GANConfig; use default_config(method)")
        if not is_int(self.seed):
            raise InvalidInputError(f"seed must be an int, got {self.seed!r}")
        check_matrix("data", data)
        for name, net in (("generator", self.generator), ("critic", self.critic)):
            if getattr(net, "conditional", self.config.conditional) != self.config.conditional:
                raise InvalidInputError(
                    f"{name}.conditional differs from config.conditional="
                    f"{self.config.conditional}; build the networks with the same setting")
        latent = getattr(self.generator, "latent_dim", self.config.latent_dim)
        if latent != self.config.latent_dim:
            raise InvalidInputError(
                f"generator latent_dim {latent} != config latent_dim {self.config.latent_dim}")

    def _setup(self, data: torch.Tensor) -> None:
        cfg = self.config
        self.generator.to(self.device).train()
        self.critic.to(self.device).train()
        self.opt_g_ = self._adam(self.generator, cfg.lr_g)
        self.opt_d_ = self._adam(self.critic, cfg.lr_d)
        self.rng_ = torch.Generator(device=self.device).manual_seed(self.seed)
        self.iteration_, self.history_ = 0, []
        self._data_sha = _fingerprint(data)

    def _adam(self, net: torch.nn.Module, lr: float) -> torch.optim.Adam:
        # the fused kernel is about 3x faster than the per-tensor loop for these small MLPs
        # (measured in benchmarks/bench_ptgan.py) and is deterministic on CPU
        betas = (float(self.config.betas[0]), float(self.config.betas[1]))
        return torch.optim.Adam(net.parameters(), lr=lr, betas=betas, fused=True)

    def _signature(self) -> dict:
        return {"format": _FORMAT, "config": self.config.to_dict(), "seed": self.seed,
                "generator": repr(self.generator), "critic": repr(self.critic),
                "data_sha256": self._data_sha}

    # ------------------------------------------------------------------ training
    def fit(self, data: torch.Tensor | np.ndarray, n_iter: int, *,
            callback: Callback | None = None, callback_at: Iterable[int] = ()) -> GANTrainer:
        """Train until ``n_iter`` iterations in total (continuing a fitted or checkpointed run).

        ``callback(trainer, iteration)`` runs after each iteration listed in ``callback_at``
        (1-based). Callbacks must not draw from ``trainer.rng_`` (use ``sample(seed=...)``).
        A fitted trainer only continues on the data it was fitted on; other data raise
        :class:`~fusionlib.errors.InvalidInputError` (build a new trainer for them).
        """
        data = torch.as_tensor(data, dtype=torch.float32).to(self.device)
        self._validate(data)
        check_positive_int("n_iter", n_iter)
        if not hasattr(self, "iteration_"):
            self._setup(data)
            self._maybe_resume()
        elif _fingerprint(data) != self._data_sha:
            raise InvalidInputError(
                f"this trainer was fitted on other data (it is at iteration {self.iteration_}); "
                "fit continues a run on the same data only. Build a new GANTrainer (with fresh "
                "networks) to train on these data")
        at = set(callback_at)
        with _threads(self.n_threads):
            bar = tqdm(total=n_iter, initial=self.iteration_, disable=not self.progress,
                       desc=self.config.method, leave=False)
            while self.iteration_ < n_iter:
                self._iteration(data)
                self.iteration_ += 1
                bar.update(1)
                if callback is not None and self.iteration_ in at:
                    callback(self, self.iteration_)
                if self.checkpoint_every and self.iteration_ % self.checkpoint_every == 0:
                    self.save_checkpoint()
            bar.close()
        if self.checkpoint_path is not None:
            self.save_checkpoint()
        return self

    def _iteration(self, data: torch.Tensor) -> None:
        cfg = self.config
        inputs = draw_step_inputs(data, cfg, self.rng_)
        t = inputs.t
        # Algorithm 3 evaluates the critic steps and the generator step at the same G^(t) and z,
        # so one generator forward pass serves both
        fake = self.generator(inputs.z, t) if t is not None else self.generator(inputs.z)
        for _ in range(cfg.n_critic):
            d_total, parts = critic_objective(self.critic, fake.detach(), inputs, cfg, self.rng_)
            self.opt_d_.zero_grad(set_to_none=True)
            d_total.backward()
            self.opt_d_.step()
        self.critic.requires_grad_(False)  # no critic weight-gradients in the generator step
        try:
            g_loss = generator_objective(self.critic, fake, inputs, cfg)
            self.opt_g_.zero_grad(set_to_none=True)
            g_loss.backward()
            self.opt_g_.step()
        finally:
            self.critic.requires_grad_(True)
        if self.log_every and (self.iteration_ + 1) % self.log_every == 0:
            self.history_.append({"iteration": self.iteration_ + 1,
                                  "d_loss": float(parts["d_loss"]),
                                  "g_loss": float(g_loss.detach()),
                                  "penalty": float(parts["penalty"])})

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        """Write the full training state atomically to ``checkpoint_path``."""
        if self.checkpoint_path is None:
            raise InvalidInputError("no checkpoint_path was given to the trainer")
        state = {**self._signature(), "iteration": self.iteration_, "history": self.history_,
                 "generator_state": self.generator.state_dict(),
                 "critic_state": self.critic.state_dict(),
                 "opt_g": self.opt_g_.state_dict(), "opt_d": self.opt_d_.state_dict(),
                 "rng_state": self.rng_.get_state()}
        return atomic_write(self.checkpoint_path, lambda p: torch.save(state, p))

    def _maybe_resume(self) -> None:
        if self.checkpoint_path is None or not Path(self.checkpoint_path).exists():
            return
        state = torch.load(self.checkpoint_path, map_location=self.device, weights_only=True)
        mine = self._signature()
        differ = sorted(k for k in mine if state.get(k) != mine[k])
        if differ:
            raise InvalidInputError(
                f"checkpoint {self.checkpoint_path} was made with different {differ}; "
                "delete it or use another checkpoint_path to start afresh")
        self.generator.load_state_dict(state["generator_state"])
        self.critic.load_state_dict(state["critic_state"])
        self.opt_g_.load_state_dict(state["opt_g"])
        self.opt_d_.load_state_dict(state["opt_d"])
        self.rng_.set_state(state["rng_state"].cpu())  # generator states are CPU byte tensors
        self.iteration_, self.history_ = int(state["iteration"]), list(state["history"])

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def sample(self, n: int, *, alpha: float = 1.0, seed: int = 0) -> torch.Tensor:
        """Draw ``n`` points (n, d) on CPU from the generator at level ``alpha`` (1 = the data).

        Uses eval mode (batch-norm running statistics) and its own seed, so sampling never
        changes the training state.
        """
        if not hasattr(self, "iteration_"):
            raise NotFittedError("call fit(data, n_iter) before sample()")
        check_positive_int("n", n)
        check_probability("alpha", alpha)
        if alpha != 1.0 and not self.config.conditional:
            raise InvalidInputError("an unconditional generator only samples at alpha = 1")
        cfg, g = self.config, torch.Generator(device=self.device).manual_seed(seed)
        a = torch.full((n,), float(alpha), device=self.device)
        z = reference_noise(n, cfg.latent_dim, g, alpha=a, interpolated=cfg.interpolated_noise,
                            distribution=cfg.noise, device=self.device)
        was_training = self.generator.training
        self.generator.eval()
        try:
            out = self.generator(z, temperature(a)) if cfg.conditional else self.generator(z)
        finally:
            self.generator.train(was_training)
        return out.cpu()
