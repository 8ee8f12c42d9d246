"""PTGAN on tables (seed 001, Section 5.1, Appendix D.2.3): the :class:`TabularPTGAN` synthesizer.

A table is encoded by :class:`~fusionlib.encoding.tabular.TabularEncoder` (continuous columns
min-max scaled to [-1, 1], discrete columns one-hot), the Table 9 networks
(:func:`~fusionlib.gan.networks.tabular_networks`: critic 7 x 64 ReLU; generator latent 16,
7 x 64 with batch norm and ReLU, a linear head per continuous column and a Gumbel-softmax head per
one-hot column; ``t(alpha)`` as an extra input of both for tempered methods) are trained by the
shared :class:`~fusionlib.gan.trainer.Trainer` running
:class:`~fusionlib.ptgan.tabular.step.TabularPTGANStep`, and samples are decoded back to the
table by the encoder's exact inverse. The same class trains the paper's baselines (MP with any
lambda, WGAN-GP, ...) by ``method``, under the three discrepancies ND, JSD and PD.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator

from fusionlib.checks import (
    check_choice,
    check_frame,
    check_positive_int,
    check_probability,
    memory_error_as_input_error,
)
from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.networks import tabular_networks
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.config import METHODS, TABULAR_R, GANConfig, default_config
from fusionlib.ptgan.tabular.step import TabularPTGANStep
from fusionlib.rng import child, torch_generator

__all__ = ["DISCREPANCIES", "TabularPTGAN", "tabular_config"]

#: the discrepancies of Tables 3 and 10 and the loss each names (fusionlib.gan.losses); PD is the
#: critic objective the paper prints (labels 0 and 1, "pearson01"), "pd-mao" Mao et al.'s
#: Pearson chi-square labels (-1, 1, 0)
DISCREPANCIES: dict[str, str] = {"nd": "wasserstein", "jsd": "js", "pd": "pearson01",
                                 "pd-mao": "pearson"}

Builder = Callable[..., object]


def tabular_config(method: str, discrepancy: str = "nd",
                   overrides: Mapping[str, object] | None = None) -> GANConfig:
    """The configuration of ``method`` on tables: Table 9's latent 16, r = 0.5 for tempered
    methods (Section 5.1), the loss of ``discrepancy``, then ``overrides``."""
    check_choice("method", method, METHODS)
    check_choice("discrepancy", discrepancy, tuple(DISCREPANCIES))
    base = default_config(method)
    fields: dict[str, object] = {"latent_dim": 16, "loss": DISCREPANCIES[discrepancy]}
    if base.tempered:
        fields["r"] = TABULAR_R
    fields.update(dict(overrides or {}))
    return default_config(method, **fields)


class TabularPTGAN(BaseEstimator):
    """Fit a GAN to a table and sample synthetic rows (``fit`` / ``sample(n, seed)``).

    Parameters
    ----------
    method:
        One of :data:`fusionlib.ptgan.config.METHODS` ("pt+cp" is PTGAN, "mp" the Lipschitz GAN).
    discrepancy:
        "nd" (neural distance, the Wasserstein loss), "jsd" or "pd" (:data:`DISCREPANCIES`).
    discrete_columns:
        Names of the discrete columns; all others must be numeric.
    n_iter:
        Trainer iterations of :meth:`fit` (one critic and one generator step each for T' = 1).
    overrides:
        GANConfig fields to change (e.g. ``{"penalty_weight": 10.0}``, ``{"r": 0.2}``).
    tau, hard:
        Gumbel-softmax temperature and straight-through flag of the [discrete] heads.
    minibatch:
        Builder ``minibatch(encoder, x) -> fn`` called once in :meth:`fit` with the fitted encoder
        and the encoded training matrix; ``fn(x, batch_size, r, generator) -> TemperedBatch``
        replaces Algorithm 1 (FairPTGAN's Algorithm 2).
    generator_term:
        Builder ``generator_term(encoder) -> term``; ``term(fake, inputs)`` is added to the
        generator loss every iteration (FairWGANGP's fairness penalty).
    seed:
        Root seed: networks ``(seed, "networks")``, training ``(seed, "train")``. Named
        ``seed``, not ``random_state``: streams are derived from it by key
        (:mod:`fusionlib.rng`), never from a shared ``RandomState``.
    device, progress, log_every:
        Passed to the :class:`~fusionlib.gan.trainer.Trainer`.

    Attributes
    ----------
    encoder_, config_, step_, trainer_:
        The fitted encoder, the resolved configuration, the training step and the trainer.
    """

    def __init__(self, method: str = "pt+cp", discrepancy: str = "nd", *,
                 discrete_columns: Sequence[str] = (), n_iter: int = 1_000,
                 overrides: Mapping[str, object] | None = None, tau: float = 0.2,
                 hard: bool = False, minibatch: Builder | None = None,
                 generator_term: Builder | None = None, seed: object = 0,
                 device: str = "cpu", progress: bool = False, log_every: int = 100) -> None:
        self.method, self.discrepancy = method, discrepancy
        self.discrete_columns, self.n_iter, self.overrides = discrete_columns, n_iter, overrides
        self.tau, self.hard, self.minibatch, self.generator_term = tau, hard, minibatch, \
            generator_term
        self.seed, self.device, self.progress, self.log_every = seed, device, progress, log_every

    # ------------------------------------------------------------------ fit
    def fit(self, data: pd.DataFrame, *, callback: Callable | None = None,
            callback_at: Sequence[int] = ()) -> TabularPTGAN:
        """Encode ``data`` and train for ``n_iter`` iterations.

        ``callback(model, iteration)`` runs after each 1-based iteration in ``callback_at``
        (sample inside it with :meth:`sample`; it does not disturb training).
        """
        check_positive_int("n_iter", self.n_iter)
        self.config_ = tabular_config(self.method, self.discrepancy, self.overrides)
        frame = _check_table(data, self.discrete_columns)
        self.encoder_ = TabularEncoder(tuple(self.discrete_columns)).fit(frame)
        x = self.encoder_.transform(frame)
        fn = None if self.minibatch is None else self.minibatch(self.encoder_, x)
        term = None if self.generator_term is None else self.generator_term(self.encoder_)
        head = TabularHead(64, self.encoder_.spans_, tau=self.tau, hard=self.hard,
                           seed=child(self.seed, "networks", "head"))
        gen, critic = tabular_networks(x.shape[1], conditional=self.config_.conditional,
                                       seed=child(self.seed, "networks"),
                                       latent_dim=self.config_.latent_dim, head=head)
        self.step_ = TabularPTGANStep(self.config_, gen, critic, minibatch=fn,
                                      generator_term=term)
        self.trainer_ = Trainer(self.step_, seed=child(self.seed, "train"), device=self.device,
                                progress=self.progress, log_every=self.log_every)
        self._x = torch.as_tensor(x)
        return self._train(self.n_iter, callback, callback_at)

    def fit_more(self, n_iter: int, *, generator_term: Builder | None = None,
                 callback: Callable | None = None,
                 callback_at: Sequence[int] = ()) -> TabularPTGAN:
        """Continue the same run until ``n_iter`` iterations in total.

        ``generator_term`` (a builder, as in the constructor) replaces the generator term from
        now on (FairWGANGP's second phase); None keeps the current one.
        """
        self._check_fitted()
        check_positive_int("n_iter", n_iter)
        if n_iter < self.trainer_.iteration_:
            raise InvalidInputError(
                f"the run is at iteration {self.trainer_.iteration_}; fit_more(n_iter) trains "
                f"until n_iter iterations in total, so ask for at least that many")
        if generator_term is not None:
            self.step_.generator_term = generator_term(self.encoder_)
        return self._train(n_iter, callback, callback_at)

    def _train(self, n_iter: int, callback, callback_at) -> TabularPTGAN:
        hook = None
        if callback is not None:
            def hook(_trainer, iteration):
                callback(self, iteration)
        self.trainer_.fit(self._x, n_iter, callback=hook, callback_at=callback_at)
        return self

    # ------------------------------------------------------------------ sample
    def _check_fitted(self) -> None:
        if not hasattr(self, "trainer_"):
            raise NotFittedError("this TabularPTGAN is not fitted; call fit(data) first")

    def sample_encoded(self, n: int, seed: object = 0, *, alpha: float = 1.0) -> np.ndarray:
        """``n`` rows (n, d) in the encoded space at level ``alpha`` (1 = the data)."""
        self._check_fitted()
        check_positive_int("n", n)
        check_probability("alpha", alpha)
        g = torch_generator(seed, "sample", device=self.device)
        with torch.no_grad(), memory_error_as_input_error(f"sampling n={n:,} rows"):
            out = self.step_.sample(n, g, alpha=float(alpha))
        return out.detach().cpu().numpy().astype(np.float64)

    def sample(self, n: int, seed: object = 0, *, alpha: float = 1.0) -> pd.DataFrame:
        """``n`` synthetic rows with the training table's columns and dtypes (``seed`` default 0:
        a fixed, documented stream, so ``sample(n)`` needs no seed, as SDV's does).

        Continuous columns are clipped to their training range, discrete ones take the argmax
        of their Gumbel-softmax block (:meth:`TabularEncoder.inverse_transform`).
        """
        x = self.sample_encoded(n, seed, alpha=alpha)  # checks that the model is fitted
        return self.encoder_.inverse_transform(x)


def _check_table(data: object, discrete: Sequence[str]) -> pd.DataFrame:
    if isinstance(discrete, str):
        raise InvalidInputError(
            f"discrete_columns must be a list of column names, got the string {discrete!r}")
    frame = check_frame("data", data, min_rows=2)
    unknown = [c for c in discrete if c not in frame.columns]
    if unknown:
        raise InvalidInputError(
            f"discrete columns {unknown} are not in the table (columns: {list(frame.columns)})")
    nan = frame.columns[frame.isna().any()].tolist()
    if nan:
        raise InvalidInputError(f"columns {nan} have missing values; drop or impute them first")
    return frame
