"""Baselines of seed 002 (Section 4.3): the Independent model and CTGAN.

- :class:`IndependentModel` multiplies one-variable marginals (every pair independent). It is
  fitted on the two separate tables like the paper's own methods.
- :class:`CTGANBaseline` wraps ``ctgan.CTGAN`` (PyPI package ``ctgan``) with CTGAN's published
  hyperparameters (the package's defaults), as the paper did ("default hyperparameters"). It
  is trained on the *complete* training table, not on the separated ones: the paper notes that
  this gives CTGAN an advantage. Its ``fit`` therefore takes one table, unlike the other
  estimators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fusionlib.checks import is_int
from fusionlib.data.sources import as_source_set
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fairtest.estimators.base import JointEstimator
from fusionlib.fairtest.estimators.validation import EncodedPair, check_n_and_seed, check_table
from fusionlib.rng import child, seed_int

__all__ = ["CTGANBaseline", "CTGANDefaults", "CTGAN_DEFAULTS", "CTGAN_HYPERPARAMETERS",
           "IndependentModel"]


class IndependentModel(JointEstimator):
    """Product of one-variable marginals: p(x) = prod_i p_hat(x_i).

    Each column's marginal comes from the table that holds it; an overlap column's marginal
    is the average of the two tables' proportions (as p(o) in Independence Given Overlap).
    Several overlap columns are made independent of each other too.

    Fitted attributes
    -----------------
    marginals_ : dict of str -> Series
        p_hat(x_i) per column, indexed by category.
    """

    def _fit(self, pair: EncodedPair) -> None:
        k = len(pair.overlap)
        source = {}
        for j, col in enumerate(pair.overlap):
            source[col] = [pair.internal_codes[:, j], pair.external_codes[:, j]]
        for j, col in enumerate(pair.internal_only):
            source[col] = [pair.internal_codes[:, k + j]]
        for j, col in enumerate(pair.external_only):
            source[col] = [pair.external_codes[:, k + j]]
        self._marginals = []
        for col in self.columns_:
            m = len(self.categories_[col])
            props = [np.bincount(codes, minlength=m) / len(codes) for codes in source[col]]
            self._marginals.append(np.mean(props, axis=0))
        self.marginals_ = {
            c: pd.Series(p, index=pd.Index(self.categories_[c], name=c), name="proba")
            for c, p in zip(self.columns_, self._marginals, strict=True)
        }

    def _sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.column_stack([rng.choice(len(p), size=n, p=p) for p in self._marginals])

    def _joint_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        out = np.ones(len(codes))
        for j, p in enumerate(self._marginals):
            ok = codes[:, j] >= 0
            out[ok] *= p[codes[ok, j]]
            out[~ok] = 0.0
        return out

    def _proba_table(self, columns: list[str]) -> pd.DataFrame:
        variables = [self.columns_.index(c) for c in columns]
        grids = np.meshgrid(*[np.arange(len(self._marginals[v])) for v in variables],
                            indexing="ij")
        codes = np.column_stack([g.ravel() for g in grids])
        proba = np.ones(len(codes))
        for j, v in enumerate(variables):
            proba *= self._marginals[v][codes[:, j]]
        table = self._decode(codes, columns)
        table["proba"] = proba
        return table


@dataclass(frozen=True)
class CTGANDefaults:
    """Defaults of :class:`CTGANBaseline`: CTGAN's published settings (Xu et al. 2019, and the
    ``ctgan`` package's defaults, which are the same), as the paper used "default
    hyperparameters" (Section 4.3): 300 epochs, batch size 500 (a multiple of pac = 10), Adam
    with learning rate 2e-4 and weight decay 1e-6 for both networks, two hidden layers of 256
    in each network, a 128-dimensional noise, one discriminator step per generator step and
    training-by-sampling with log frequencies. They are passed to ``ctgan.CTGAN`` explicitly,
    so that a package release with other defaults cannot change the baseline silently."""

    epochs: int = 300
    batch_size: int = 500
    pac: int = 10
    embedding_dim: int = 128
    generator_dim: tuple[int, ...] = (256, 256)
    discriminator_dim: tuple[int, ...] = (256, 256)
    generator_lr: float = 2e-4
    generator_decay: float = 1e-6
    discriminator_lr: float = 2e-4
    discriminator_decay: float = 1e-6
    discriminator_steps: int = 1
    log_frequency: bool = True
    enable_gpu: bool = True
    verbose: bool = False
    seed: int = 0


#: the hyperparameters of :class:`CTGANDefaults` that ``ctgan.CTGAN`` takes (not the wrapper's)
CTGAN_HYPERPARAMETERS: tuple[str, ...] = (
    "epochs", "batch_size", "pac", "embedding_dim", "generator_dim", "discriminator_dim",
    "generator_lr", "generator_decay", "discriminator_lr", "discriminator_decay",
    "discriminator_steps", "log_frequency")


CTGAN_DEFAULTS = CTGANDefaults()


class CTGANBaseline(BaseEstimator):
    """CTGAN trained on the complete (not separated) training table; all columns discrete.

    Unlike the separate-data estimators, ``fit`` takes ONE table: the complete training data,
    which the paper gave CTGAN (Section 4.3).

    Parameters
    ----------
    epochs : int, default 300
        Training epochs (CTGAN's published setting).
    batch_size : int, default 500
        Rows per step; a positive multiple of ``pac``.
    settings : dict, optional
        Other hyperparameters of :data:`CTGAN_HYPERPARAMETERS` to change from
        :class:`CTGANDefaults` (e.g. ``{"generator_lr": 1e-4}``); None: the published ones.
    enable_gpu : bool, default True
        Let ``ctgan`` use CUDA when available (as the package does by default).
    verbose : bool, default False
        Print ``ctgan``'s per-epoch losses.
    seed : int, default 0
        Seed for training (network initialisation, noise, conditional sampling).

    Fitted attributes
    -----------------
    settings_ : dict
        The hyperparameters the trained model holds (read back from it), by the names of
        :data:`CTGAN_HYPERPARAMETERS`.
    steps_ : int
        Optimiser steps of the generator: ``epochs * max(rows // batch_size, 1)``.
    losses_ : DataFrame
        ``ctgan``'s loss of the generator and the discriminator after every epoch.

    Notes
    -----
    Determinism: ``ctgan`` draws from NumPy's and torch's *global* generators. Its own
    ``set_random_state`` swaps seeded generators in for the duration of ``fit`` / ``sample``
    and restores the caller's global state afterwards; this wrapper uses that mechanism and
    never seeds global state itself. On CPU the same seed gives the same model and samples.
    On CUDA it is not reproducible: ``ctgan`` swaps only NumPy's and torch's *CPU*
    generators, while the generator noise and gradient-penalty weights of training
    (``torch.normal`` / ``torch.rand`` on CUDA tensors), the discriminator's dropout and the
    Gumbel-softmax draws of both ``fit`` and ``sample`` run on the GPU and draw from torch's
    *global CUDA generator*, which is neither seeded nor saved and restored by ``ctgan`` or by
    this wrapper. GPU runs therefore differ between runs with the same seed (and advance the
    caller's CUDA generator); on top of that, some CUDA kernels are non-deterministic. Use
    ``enable_gpu=False`` where reproducibility matters.
    """

    def __init__(
        self,
        *,
        epochs: int = CTGAN_DEFAULTS.epochs,
        batch_size: int = CTGAN_DEFAULTS.batch_size,
        settings: dict | None = None,
        enable_gpu: bool = CTGAN_DEFAULTS.enable_gpu,
        verbose: bool = CTGAN_DEFAULTS.verbose,
        seed: int = CTGAN_DEFAULTS.seed,
    ) -> None:
        self.epochs = epochs
        self.batch_size = batch_size
        self.settings = settings
        self.enable_gpu = enable_gpu
        self.verbose = verbose
        self.seed = seed

    def _check_params(self) -> None:
        child(self.seed)
        for name in ("epochs", "batch_size"):
            value = getattr(self, name)
            if not is_int(value):
                raise InvalidInputError(f"{name} must be an int, got {value!r}")
        if self.epochs < 1:
            raise InvalidInputError(f"epochs must be >= 1, got {self.epochs}")
        unknown = sorted(set(self.settings or {}) - set(CTGAN_HYPERPARAMETERS[2:]))
        if unknown:
            raise InvalidInputError(
                f"unknown CTGAN settings {unknown}; choose from {list(CTGAN_HYPERPARAMETERS[2:])}"
                " (epochs and batch_size are parameters of their own)")
        pac = self._hyperparameters()["pac"]
        if self.batch_size < pac or self.batch_size % pac:
            raise InvalidInputError(
                f"batch_size must be a positive multiple of pac = {pac} (CTGAN packs pac rows "
                f"per discriminator input), got {self.batch_size}"
            )

    def _hyperparameters(self) -> dict:
        """CTGAN_HYPERPARAMETERS: the published defaults with this instance's changes."""
        out = {k: getattr(CTGAN_DEFAULTS, k) for k in CTGAN_HYPERPARAMETERS}
        out.update(self.settings or {}, epochs=self.epochs, batch_size=self.batch_size)
        return out

    #: the paper gave CTGAN the complete training table (Section 4.3)
    trains_on_complete = True

    def fit(self, sources: object) -> CTGANBaseline:
        """Train CTGAN on the complete training table (every column treated as discrete).

        Parameters
        ----------
        sources : SourceSet with one table, or DataFrame, shape (n, d)
            The complete training data (internal and external columns together).
        """
        from ctgan import CTGAN  # imported here: torch is heavy and only this class needs it

        self._check_params()
        src = as_source_set(sources)
        if not src.is_complete:
            raise InvalidInputError(
                f"CTGANBaseline trains on ONE complete table, got {len(src)} sources; pass "
                "SourceSet.single(complete_table)")
        table = check_table(src[src.names[0]], "training")
        model = CTGAN(**self._hyperparameters(), verbose=self.verbose,
                      enable_gpu=self.enable_gpu)
        model.set_random_state(seed_int(self.seed, "ctgan-fit"))
        model.fit(table, discrete_columns=list(table.columns))
        self.model_ = model
        self.columns_ = list(table.columns)
        self.settings_ = {k: getattr(model, "pac" if k == "pac" else f"_{k}")
                          for k in CTGAN_HYPERPARAMETERS}
        self.steps_ = self.epochs * max(len(table) // self.batch_size, 1)
        self.losses_ = model.loss_values
        return self

    def sample(self, n: int, seed: int = 0) -> pd.DataFrame:
        """Draw ``n`` rows (values as ``str``); the same seed gives the same rows (default 0: a
        fixed, documented stream, so ``sample(n)`` needs no seed, as SDV's does)."""
        if not hasattr(self, "model_"):
            raise NotFittedError(
                "this CTGANBaseline is not fitted yet; call fit(complete_training_table) "
                "before sample()"
            )
        check_n_and_seed(n, seed)
        self.model_.set_random_state(seed_int(seed, "ctgan-sample"))
        out = self.model_.sample(int(n))
        return out[self.columns_].astype(str).reset_index(drop=True)
