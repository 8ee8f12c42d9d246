"""FusionGAN (seed 000): one generator over the union of K >= 2 overlapping sources.

:class:`FusionGAN` is the scikit-learn-style front end: it checks and splits the sources, puts
every column on a unit scale, computes the sample weights of Appendix D, and trains
:class:`~fusionlib.fusion.step.FusionStep` (Algorithm B) with the shared
:class:`~fusionlib.gan.trainer.Trainer` (checkpoints, bitwise resume on CPU, divergence stop).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fusionlib.checks import check_nonneg_int, check_positive_int, is_int
from fusionlib.data.sources import SourceSet, as_source_set
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fusion.config import DEFAULT_CONFIG, FusionConfig
from fusionlib.fusion.scaling import pooled_scaler
from fusionlib.fusion.step import fusion_step
from fusionlib.gan.trainer import Trainer
from fusionlib.rng import child, numpy_rng

__all__ = ["FusionGAN", "DEFAULT_CONFIG"]

#: Appendix C hyperparameters


class FusionGAN(BaseEstimator):
    """Learn one joint distribution from K >= 2 sources that share some columns.

    Parameters
    ----------
    epochs:
        Training epochs T. Appendix C gives no value; 100 is this package's default. An epoch is
        ``iterations_per_epoch`` trainer iterations, each of which runs Algorithm B's inner loop
        once over all K sources (one batch per source).
    config:
        A :class:`~fusionlib.fusion.step.FusionConfig` (default: Appendix C).
    device, n_threads, checkpoint_path, checkpoint_every, progress, log_every:
        Passed to the :class:`~fusionlib.gan.trainer.Trainer`. With ``checkpoint_path``, ``fit``
        resumes from an existing checkpoint made with the same settings and data (bitwise on
        CPU), e.g. to continue a 1-epoch run to 2 epochs with a new object.
    weighting_options:
        Options of the weighting strategy ``config.weighting`` (e.g. ``{"k": 20}``).
    standardize:
        Standardise each schema column with the mean and sd of all training rows that observe it,
        pooled over the sources that have it (a constant column gets sd 1), so that the linear
        generator output is on a unit scale; samples are mapped back.
    iterations_per_epoch:
        None: ``ceil(max_k n_k / batch_size)`` with n_k the training rows of source k, so an
        epoch passes over the largest source once in expectation. Algorithm B, read literally,
        samples one batch per source per epoch; Appendix H's per-epoch cost counts n/B batches
        per source, and we follow H's reading.
    seed:
        Root of every random stream: the holdout split ``(seed, "holdout", name)``, the weights
        ``(seed, "weights", name)``, the networks ``(seed, "networks")``, training
        ``(seed, "train")``.

    Attributes
    ----------
    sources_, schema_:
        Source names and the union of their columns (first-seen order).
    train_, holdout_:
        Dicts name -> DataFrame: the training rows and the held-out rows (fraction
        ``config.holdout``) of every source, in their original order.
    weights_:
        Dict name -> float64 array (n_k_train,), summing to n_k_train.
    scaler_:
        The :class:`~fusionlib.fusion.scaling.PooledScaler` of the schema.
    trainer_, history_, n_iter_, iterations_per_epoch_:
        The fitted trainer, its loss log, and the iteration counts.

    Notes
    -----
    Every column is modelled as continuous (Appendix I, limitation 1): samples are float64.
    """

    def __init__(self, epochs: int = 100, config: FusionConfig = DEFAULT_CONFIG, *,
                 device: str = "cpu", n_threads: int | None = 1,
                 checkpoint_path: str | os.PathLike[str] | None = None,
                 checkpoint_every: int = 0, progress: bool = False,
                 weighting_options: Mapping[str, object] | None = None,
                 standardize: bool = True, iterations_per_epoch: int | None = None,
                 log_every: int = 10, seed: object = 0) -> None:
        self.epochs, self.config, self.device, self.n_threads = epochs, config, device, n_threads
        self.checkpoint_path, self.checkpoint_every = checkpoint_path, checkpoint_every
        self.progress, self.weighting_options = progress, weighting_options
        self.standardize, self.iterations_per_epoch = standardize, iterations_per_epoch
        self.log_every, self.seed = log_every, seed

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        check_positive_int("epochs", self.epochs)
        if not isinstance(self.config, FusionConfig):
            raise InvalidInputError(
                f"config must be a FusionConfig, got {type(self.config).__name__}; e.g. "
                "FusionConfig(batch_size=32)")
        if self.iterations_per_epoch is not None:
            check_positive_int("iterations_per_epoch", self.iterations_per_epoch)
        check_nonneg_int("checkpoint_every", self.checkpoint_every)
        check_nonneg_int("log_every", self.log_every)
        if self.n_threads is not None:
            check_positive_int("n_threads", self.n_threads)
        if self.weighting_options is not None and not isinstance(self.weighting_options, Mapping):
            raise InvalidInputError(
                f"weighting_options must be a dict of options or None, got "
                f"{type(self.weighting_options).__name__}")
        for name in ("standardize", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInputError(f"{name} must be True or False, got "
                                        f"{getattr(self, name)!r}")
        child(self.seed)  # validates the seed

    @staticmethod
    def _check_sources(sources: object) -> SourceSet:
        src = as_source_set(sources).require(min_k=2)
        src.check_linked()
        for name in src.names:
            df = src[name]
            for col in df.columns:
                dtype = df[col].dtype
                numeric = pd.api.types.is_bool_dtype(dtype) or (
                    pd.api.types.is_numeric_dtype(dtype)
                    and not pd.api.types.is_complex_dtype(dtype))
                if not numeric:
                    raise InvalidInputError(
                        f"column {col!r} of source {name!r} is not numeric (dtype {dtype}); "
                        "FusionGAN models continuous columns only: encode it as numbers "
                        "(e.g. with fusionlib.encoding) or drop it")
            finite = np.isfinite(df.to_numpy(dtype=np.float64, na_value=np.nan)).all(axis=0)
            bad = [c for c, ok in zip(df.columns, finite, strict=True) if not ok]
            if bad:
                raise InvalidInputError(
                    f"source {name!r} has NaN or infinite values in column(s) {bad}; drop or "
                    "impute those rows first")
        return src

    # ------------------------------------------------------------------ fit
    def fit(self, sources: object) -> FusionGAN:
        """Train on the sources.

        Parameters
        ----------
        sources : SourceSet or mapping name -> DataFrame
            K >= 2 tables with numeric, finite columns; each must share a column with another.

        Returns
        -------
        self
        """
        self._check_params()
        for attr in ("trainer_", "weights_", "train_", "holdout_", "scaler_", "sources_",
                     "schema_", "n_iter_", "iterations_per_epoch_"):
            self.__dict__.pop(attr, None)  # a failed refit leaves the object unfitted
        cfg, src = self.config, self._check_sources(sources)
        train, holdout = self._split(src)
        scaler = pooled_scaler(train, src.columns, standardize=self.standardize)
        xs = {name: scaler.transform(df) for name, df in train.items()}
        weights = self._weights(xs)
        where = {c: j for j, c in enumerate(src.columns)}
        indices = [[where[c] for c in src.columns_of(name)] for name in src.names]
        step = fusion_step(cfg, len(src.columns), indices, names=src.names,
                           seed=child(self.seed, "networks"))
        trainer = Trainer(step, seed=child(self.seed, "train"), device=self.device,
                          n_threads=self.n_threads, checkpoint_path=self.checkpoint_path,
                          checkpoint_every=self.checkpoint_every, log_every=self.log_every,
                          progress=self.progress)
        largest = max(len(df) for df in train.values())
        ipe = self.iterations_per_epoch or math.ceil(largest / cfg.batch_size)
        data = tuple(v for name in src.names for v in (xs[name], weights[name]))
        trainer.fit(data, self.epochs * ipe)
        self.sources_, self.schema_ = src.names, src.columns
        self.train_, self.holdout_, self.scaler_, self.weights_ = train, holdout, scaler, weights
        self.iterations_per_epoch_, self.n_iter_ = ipe, self.epochs * ipe
        self.trainer_ = trainer
        return self

    def _split(self, src: SourceSet) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
        """Seeded train/holdout split of every source (rows kept in their original order)."""
        cfg, train, holdout = self.config, {}, {}
        for name in src.names:
            df = src[name]
            perm = numpy_rng(child(self.seed, "holdout", name)).permutation(len(df))
            n_hold = int(math.floor(cfg.holdout * len(df) + 0.5))
            holdout[name] = df.iloc[np.sort(perm[:n_hold])]
            train[name] = df.iloc[np.sort(perm[n_hold:])]
            if len(train[name]) < cfg.batch_size:
                raise InvalidInputError(
                    f"source {name!r} has {len(train[name])} training rows ({len(df)} rows, "
                    f"holdout={cfg.holdout}), fewer than one batch (batch_size="
                    f"{cfg.batch_size}); lower batch_size to at most {len(train[name])}, lower "
                    "holdout, or give it more rows")
        return train, holdout

    def _weights(self, xs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Appendix D weights of each source's standardised training rows (its own columns)."""
        from fusionlib.fusion.weighting import compute_weights

        options = dict(self.weighting_options or {})
        return {name: np.asarray(compute_weights(x.astype(np.float64), self.config.weighting,
                                                 seed=child(self.seed, "weights", name),
                                                 **options), dtype=np.float64)
                for name, x in xs.items()}

    # ------------------------------------------------------------------ sample
    def _check_fitted(self) -> None:
        if "trainer_" not in self.__dict__:
            raise NotFittedError(
                "this FusionGAN is not fitted yet; call fit(sources) before sample()")

    @property
    def history_(self) -> list[dict]:
        """The trainer's loss log: one dict per ``log_every`` iterations."""
        self._check_fitted()
        return self.trainer_.history_

    def sample(self, n: int, seed: object = 0) -> pd.DataFrame:
        """Draw ``n`` synthetic records over the schema.

        Parameters
        ----------
        n : int
            Number of rows, > 0.
        seed : int or seed tuple
            Seed of the sampling stream ``(seed, "sample")``; the same seed gives the same rows.

        Returns
        -------
        DataFrame, shape (n, len(schema_)), float64 columns in schema order
        """
        self._check_fitted()
        if not is_int(n) or n <= 0:
            raise InvalidInputError(f"n must be a positive int number of rows, got {n!r}")
        child(seed)
        z = self.trainer_.sample(int(n), seed=seed).double().numpy()
        return self.scaler_.inverse(z)
