"""FairPTGAN and FairWGANGP for R repetitions at once (the stacked path of ``ptgan_tabular``).

:class:`StackedFairStep` is :class:`~fusionlib.ptgan.stacked_step.StackedPTGANStep` with the two
hooks the unstacked :class:`~fusionlib.ptgan.tabular.step.TabularPTGANStep` has for this study:

* **Algorithm 2's minibatches** (``group_column``): repetition r mixes a row of group ``A = 0``
  with a row of group ``A = 1`` *of its own training rows*, drawing from its own generator in
  the order of :func:`~fusionlib.ptgan.fair.mixing.group_mixed_minibatch` (rows of group 0, rows
  of group 1, alpha1/alpha2, nu), then its reference noise and Gumbel noise;
* **a generator term** (FairWGANGP's second phase): ``lambda_f |E[Y~ | A~ = 1] -
  E[Y~ | A~ = 0]|`` per repetition (:func:`stacked_parity_gap`), added to each repetition's
  generator loss from the moment :meth:`StackedFairStep.set_generator_term` switches it on.

:class:`StackedFairGAN` trains R repetitions of FairPTGAN (``"fairptgan"``) or of FairWGANGP's
WGAN-GP (``"fairwgangp"``) on an encoded table, each on its own rows (its own 90 % split).
With R = 1 and every row it is bitwise the unstacked ``TabularPTGAN(minibatch=GroupMixing(...))``
(or ``generator_term=FairnessPenalty(...)``) on CPU (tested). With R > 1, repetition r's
batched products round differently from its separate run's: the two agree to float rounding
over the first iterations (tested) and then drift apart as two trainings that differ in
rounding do (after 1,000 iterations a sample differs by up to 0.9 on the [-1, 1] scale): a
repetition's numbers depend on the block it is stacked in, and are statistically, not
numerically, those of its separate run. Nothing couples two repetitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from fusionlib.checks import check_finite_number, check_nonneg_int, check_positive_int
from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.gan.losses import generator_loss
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.fair.baselines import FAIR_WEIGHT
from fusionlib.ptgan.fair.mixing import FAIR_R, check_groups, group_column
from fusionlib.ptgan.objectives import StepInputs
from fusionlib.ptgan.stacked_step import StackedPTGANStep
from fusionlib.ptgan.tabular.model import _check_table, tabular_config
from fusionlib.ptgan.tabular.stacked import StackedTabularPTGAN
from fusionlib.ptgan.tempering import TemperedBatch, temperature
from fusionlib.rng import child

__all__ = ["FAIR_STACK_METHODS", "ParityTerm", "StackedFairGAN", "StackedFairStep",
           "stacked_parity_gap"]

#: method -> (GANConfig method, uses Algorithm 2's minibatches)
FAIR_STACK_METHODS: dict[str, tuple[str, bool]] = {"fairptgan": ("pt+cp", True),
                                                   "fairwgangp": ("gp", False)}


def stacked_parity_gap(y: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """``|E[y | A=1] - E[y | A=0]|`` per repetition, shape (R,), for ``y``, ``a`` of shape (R, n)
    (soft memberships in [0, 1]; a group without mass has its denominator clamped at 1e-8, as
    :func:`~fusionlib.ptgan.fair.baselines.soft_parity_gap` does for one repetition)."""
    if y.shape != a.shape or y.ndim != 2:
        raise InvalidInputError(f"y and a must have equal shape (R, n), got {tuple(y.shape)} "
                                f"and {tuple(a.shape)}")
    m1 = (y * a).sum(1) / a.sum(1).clamp_min(1e-8)
    m0 = (y * (1 - a)).sum(1) / (1 - a).sum(1).clamp_min(1e-8)
    return (m1 - m0).abs()


class ParityTerm:
    """FairWGANGP's generator term on stacked output: ``weight * gap`` per repetition, (R,).

    ``y_col`` and ``a_col`` are the encoded one-hot columns of ``Y = 1`` and ``A = 1``
    (:func:`~fusionlib.ptgan.fair.mixing.group_column`)."""

    def __init__(self, y_col: int, a_col: int, weight: float = FAIR_WEIGHT) -> None:
        weight = check_finite_number("weight", weight)
        if weight < 0:
            raise InvalidInputError(f"weight (lambda_f) must be >= 0, got {weight}")
        self.y_col, self.a_col, self.weight = int(y_col), int(a_col), weight

    def __call__(self, fake: torch.Tensor, inputs: StepInputs) -> torch.Tensor:
        return self.weight * stacked_parity_gap(fake[..., self.y_col], fake[..., self.a_col])

    def __repr__(self) -> str:
        return f"ParityTerm(y_col={self.y_col}, a_col={self.a_col}, weight={self.weight})"


class StackedFairStep(StackedPTGANStep):
    """:class:`StackedPTGANStep` with Algorithm 2's minibatches and a generator term.

    Parameters
    ----------
    config, generator, critic:
        As for :class:`~fusionlib.ptgan.stacked_step.StackedPTGANStep`.
    group_column:
        Encoded column of ``A = 1`` (a one-hot column): the minibatches of a tempered method
        mix the two groups (Algorithm 2). None: Algorithm 1 (or uniform rows).
    generator_term:
        ``term(fake, inputs) -> (R,)`` added to each repetition's generator loss (None: none);
        :meth:`set_generator_term` changes it between two ``fit`` calls.
    """

    def __init__(self, config, generator, critic, *, group_column: int | None = None,
                 generator_term=None) -> None:
        super().__init__(config, generator, critic)
        if group_column is not None and not config.tempered:
            raise InvalidInputError(
                f"Algorithm 2's minibatches replace Algorithm 1, which method {config.method!r} "
                "does not use; use a tempered method (pt+cp)")
        self.group_column = group_column
        self.set_generator_term(generator_term)
        self._groups: tuple[list[torch.Tensor], list[torch.Tensor]] | None = None

    def set_generator_term(self, term) -> None:
        """Add ``term`` to the generator loss from the next iteration on (None: nothing)."""
        if term is not None and not callable(term):
            raise InvalidInputError(f"generator_term must be callable, got {type(term).__name__}")
        self.generator_term = term

    def signature(self) -> dict:
        return {**super().signature(), "group_column": self.group_column,
                "generator_term": None if self.generator_term is None else repr(
                    self.generator_term)}

    def prepare(self, data: object, device: str):
        x, rows = super().prepare(data, device)
        if self.group_column is not None:
            ones = x[:, self.group_column] > 0.5
            g0, g1 = [], []
            for r in range(self.n_reps):
                own = rows[r]
                g0.append(own[~ones[own]])
                g1.append(own[ones[own]])
                if not len(g0[-1]) or not len(g1[-1]):
                    raise InvalidInputError(
                        f"repetition {r}: the sensitive attribute has an empty group among its "
                        f"rows (A=0: {len(g0[-1])} rows, A=1: {len(g1[-1])} rows); Algorithm 2 "
                        "mixes one row of each group, so both need rows")
                try:
                    check_groups(len(g0[-1]), len(g1[-1]), self.config.batch_size)
                except InvalidInputError as exc:
                    raise InvalidInputError(f"repetition {r}: {exc}") from None
            self._groups = (g0, g1)
        return x, rows

    def draw_inputs(self, x: torch.Tensor, rows: torch.Tensor, rng) -> StepInputs:
        if self.group_column is None:
            return super().draw_inputs(x, rows, rng)
        cfg, dev = self.config, x.device
        n, half = cfg.batch_size, cfg.batch_size // 2
        i0, i1, u, nu = [], [], [], []
        for (g0, g1), g in zip(zip(*self._groups, strict=True), rng, strict=True):
            # the draws of group_mixed_minibatch, in its order, from the repetition's stream
            i0.append(g0[torch.randint(len(g0), (2 * half,), generator=g, device=dev)])
            i1.append(g1[torch.randint(len(g1), (2 * half,), generator=g, device=dev)])
            u.append(torch.rand(3, half, generator=g, device=dev))
            nu.append(torch.rand(n, generator=g, device=dev))
        i0, i1, u, nu = (torch.stack(v) for v in (i0, i1, u, nu))
        pick = torch.cat([i0, i1], dim=1)  # (R, 4 half): one index_select for every row
        rows_x = x.index_select(0, pick.reshape(-1)).view(self.n_reps, 4 * half, x.shape[1])
        a0, a0p = rows_x[:, :half], rows_x[:, half:2 * half]
        b1, b1p = rows_x[:, 2 * half:3 * half], rows_x[:, 3 * half:]
        alpha1 = torch.where(u[:, 0] < cfg.r, 1.0, u[:, 1])
        alpha2 = u[:, 2]
        w1, w2 = alpha1.unsqueeze(-1), alpha2.unsqueeze(-1)
        q1 = torch.cat([torch.lerp(b1, a0, w1), torch.lerp(a0, b1, w1)], dim=1)
        q2 = torch.cat([torch.lerp(b1p, a0p, w2), torch.lerp(a0p, b1p, w2)], dim=1)
        alpha1, alpha2 = alpha1.repeat(1, 2), alpha2.repeat(1, 2)
        tb = TemperedBatch(q1=q1, q2=q2, q_tilde=torch.lerp(q2, q1, nu.unsqueeze(-1)),
                           alpha1=alpha1, alpha2=alpha2, nu=nu,
                           alpha_tilde=torch.lerp(alpha2, alpha1, nu))
        z = self._noise(n, rng, alpha1)
        return StepInputs(real=q1, alpha=alpha1, z=z, tempered=tb,
                          t=temperature(alpha1) if cfg.conditional else None)

    def iteration(self, data, rng, optimizers):
        if self.generator_term is None:
            return super().iteration(data, rng, optimizers)
        x, rows = data
        inputs = self.draw_inputs(x, rows, rng)
        fake = self.generator(inputs.z, inputs.t, generator=rng)
        opt_d, opt_g = optimizers["critic"], optimizers["generator"]
        for _ in range(self.config.n_critic):
            d_total, parts = self.critic_objective(fake.detach(), inputs, rng)
            opt_d.zero_grad(set_to_none=True)
            d_total.backward()
            opt_d.step()
        self.critic.requires_grad_(False)
        try:
            scores = self.critic(fake) if inputs.t is None else self.critic(fake, inputs.t)
            g_loss = generator_loss(scores, self.config.loss) + self.generator_term(fake, inputs)
            opt_g.zero_grad(set_to_none=True)
            g_loss.sum().backward()
            opt_g.step()
        finally:
            self.critic.requires_grad_(True)
        return {"d_loss": parts["d_loss"], "g_loss": g_loss.detach(),
                "penalty": parts["penalty"]}


class StackedFairGAN(StackedTabularPTGAN):
    """R repetitions of FairPTGAN or FairWGANGP's WGAN-GP trained as one model.

    Parameters
    ----------
    method:
        ``"fairptgan"`` (PT+CP with Algorithm 2's minibatches, r = 0.2) or ``"fairwgangp"``
        (WGAN-GP; :meth:`fit_more` adds the fairness penalty).
    sensitive, privileged:
        The binary sensitive column and its level that is ``A = 1``.
    seeds, discrete_columns, n_iter, device:
        As for :class:`~fusionlib.ptgan.tabular.stacked.StackedTabularPTGAN`.
    batch_size:
        n_b (200 in Appendix D.3).
    checkpoint_path, checkpoint_every:
        Save the training state every ``checkpoint_every`` iterations (and at the end of each
        ``fit``/``fit_more``); an existing checkpoint of the same run is resumed.
    """

    def __init__(self, method: str, *, sensitive: str, privileged: object,
                 seeds: Sequence[object], discrete_columns: Sequence[str] = (),
                 n_iter: int = 1_000, batch_size: int = 200, device: str = "cpu",
                 progress: bool = False, checkpoint_path: str | None = None,
                 checkpoint_every: int = 0) -> None:
        if method not in FAIR_STACK_METHODS:
            raise InvalidInputError(f"method must be one of {sorted(FAIR_STACK_METHODS)}, got "
                                    f"{method!r}")
        base, self._mixing = FAIR_STACK_METHODS[method]
        overrides: Mapping[str, object] = {"batch_size": batch_size}
        if self._mixing:
            overrides = {"r": FAIR_R, "batch_size": batch_size}
        super().__init__(base, "nd", seeds=seeds, discrete_columns=discrete_columns,
                         n_iter=n_iter, overrides=overrides, device=device, progress=progress,
                         checkpoint_path=checkpoint_path)
        self.fair_method, self.sensitive, self.privileged = method, sensitive, privileged
        self.checkpoint_every = checkpoint_every

    def _build(self, data: pd.DataFrame, rows: object | None) -> None:
        """Encode ``data`` (the encoder is fitted on all of it), build the networks, the step
        and the trainer."""
        if isinstance(self.seeds, (str, bytes)) or not isinstance(self.seeds, Sequence) \
                or not self.seeds:
            raise InvalidInputError("seeds must be a non-empty list (one seed per repetition)")
        check_positive_int("n_iter", self.n_iter)
        check_nonneg_int("checkpoint_every", self.checkpoint_every)
        self.config_ = tabular_config(self.method, self.discrepancy, self.overrides)
        frame = _check_table(data, self.discrete_columns)
        self.encoder_ = TabularEncoder(tuple(self.discrete_columns)).fit(frame)
        x = torch.as_tensor(self.encoder_.transform(frame))
        a_col = group_column(self.encoder_, self.sensitive, self.privileged)
        gen, critic = self._networks(x.shape[1])
        self.step_ = StackedFairStep(self.config_, gen, critic,
                                     group_column=a_col if self._mixing else None)
        self.trainer_ = Trainer(self.step_, seed=[child(s, "train") for s in self.seeds],
                                device=self.device, progress=self.progress,
                                log_every=self.log_every, checkpoint_path=self.checkpoint_path,
                                checkpoint_every=self.checkpoint_every)
        self._data = (x, None if rows is None else torch.as_tensor(np.asarray(rows)))

    def fit(self, data: pd.DataFrame, *, rows: object | None = None) -> StackedFairGAN:
        """Encode ``data`` (the encoder is fitted on all of it) and train every repetition for
        ``n_iter`` iterations on its ``rows`` ((R, N) positions; None: every row)."""
        self._build(data, rows)
        self.trainer_.fit(self._data, self.n_iter)
        return self

    def parity_term(self, target: str, positive: object, weight: float = FAIR_WEIGHT
                    ) -> ParityTerm:
        """FairWGANGP's term on this model's encoding (``target == positive`` is ``Y = 1``)."""
        self._check_fitted()
        return ParityTerm(group_column(self.encoder_, target, positive),
                          group_column(self.encoder_, self.sensitive, self.privileged), weight)

    def fit_more(self, n_iter: int, *, generator_term=None) -> StackedFairGAN:
        """Continue until ``n_iter`` iterations in total; ``generator_term`` (e.g.
        :meth:`parity_term`) is added from now on (None keeps the current one)."""
        self._check_fitted()
        check_positive_int("n_iter", n_iter)
        if n_iter < self.trainer_.iteration_:
            raise InvalidInputError(
                f"the run is at iteration {self.trainer_.iteration_}; fit_more(n_iter) trains "
                f"until n_iter iterations in total, so ask for at least that many")
        if generator_term is not None:
            self.step_.set_generator_term(generator_term)
        self.trainer_.fit(self._data, n_iter)
        return self

    def fit_two_phases(self, data: pd.DataFrame, *, rows: object | None, total: int,
                       target: str, positive: object) -> StackedFairGAN:
        """FairWGANGP: ``n_iter`` iterations, then until ``total`` with :meth:`parity_term`.

        A checkpoint written in either phase is resumed in that phase (the second phase's
        checkpoints carry its term in their signature, so one is never resumed without it)."""
        check_positive_int("total", total)
        if total < self.n_iter:
            raise InvalidInputError(f"total ({total}) must be at least n_iter ({self.n_iter})")
        if checkpoint_iteration(self.checkpoint_path) <= self.n_iter:
            self.fit(data, rows=rows)
            return self.fit_more(total, generator_term=self.parity_term(target, positive))
        self._build(data, rows)  # the checkpoint is in the second phase: its term on first
        self.step_.set_generator_term(self.parity_term(target, positive))
        self.trainer_.fit(self._data, total)
        return self


def checkpoint_iteration(path: str | Path | None) -> int:
    """The iteration of the trainer checkpoint at ``path`` (0: none there)."""
    if path is None or not Path(path).is_file():
        return 0
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        return int(state["iteration"])
    except Exception:  # unreadable: the trainer names the problem when it tries to resume
        return 0
