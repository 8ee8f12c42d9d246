"""FusionGAN (seed 000): one generator over the union of K >= 2 overlapping sources.

:class:`FusionGAN` is the scikit-learn-style front end: it checks and splits the sources, puts
every continuous column on a unit scale and one-hot encodes the categorical ones
(:mod:`fusionlib.fusion.encoding`), computes the sample weights of Appendix D, and trains
:class:`~fusionlib.fusion.step.FusionStep` (Algorithm B) with the shared
:class:`~fusionlib.gan.trainer.Trainer` (checkpoints, bitwise resume on CPU, divergence stop).
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fusionlib.checks import is_int
from fusionlib.data.sources import SourceSet, as_source_set
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fusion.conditional import conditional_fusion_step, group_codes
from fusionlib.fusion.config import DEFAULT_CONFIG, FusionConfig
from fusionlib.fusion.encoding import (
    SchemaEncoding,
    check_condition_column,
    check_source_columns,
    schema_encoding,
)
from fusionlib.fusion.params import check_params, discrete_columns
from fusionlib.fusion.step import fusion_step
from fusionlib.gan.trainer import Trainer
from fusionlib.rng import child, numpy_rng

__all__ = ["FusionGAN", "DEFAULT_CONFIG"]


class FusionGAN(BaseEstimator):
    """Learn one joint distribution from K >= 2 sources that share some columns.

    Parameters
    ----------
    epochs:
        Training epochs T (with ``convergence``: the budget). Appendix C gives no value; 100 is
        this package's default, and ``convergence`` decides from held-out data. An epoch is
        ``iterations_per_epoch`` trainer iterations, each of which runs Algorithm B's inner loop
        once over all K sources (one batch per source).
    config:
        A :class:`~fusionlib.fusion.config.FusionConfig` (default: Appendix C).
    device, n_threads, checkpoint_path, checkpoint_every, progress, log_every:
        Passed to the :class:`~fusionlib.gan.trainer.Trainer`. With ``checkpoint_path``, ``fit``
        resumes from an existing checkpoint made with the same settings and data (bitwise on
        CPU), e.g. to continue a 1-epoch run to 2 epochs with a new object.
    weighting_options:
        Options of the weighting strategy ``config.weighting`` (e.g. ``{"k": 20}``).
    standardize:
        False (default): train on the raw values, as the appendix describes it (section D
        standardises features for the density weights only; the appendix names no other
        transformation). True: standardise each continuous column with the mean and sd of all
        training rows that observe it, pooled over the sources that have it (a constant column
        gets sd 1), so that the linear generator output is on a unit scale; samples are mapped
        back. On the FusionGAN chapter's mixture (columns of sd 1.5-2), standardised inputs
        train markedly slower at the appendix's learning rate (the chapter shows both).
    discrete_columns:
        Names of the categorical columns (values of any hashable type: strings, ints, ...). Each
        is one-hot encoded over the union of the categories seen in the sources that have it
        (a category seen in one source only is kept; a single-level column is allowed and is
        sampled as its one level); the generator gets a Gumbel-softmax head over the encoded
        layout (Appendix I, planned extension 2), discriminator k sees the one-hot blocks of its
        own columns, and samples decode each block to its argmax category, in the column's
        original dtype. Without discrete columns the networks are exactly Appendix A's.
    condition:
        None, or the name of a categorical column of one or more sources (added to
        ``discrete_columns``) to condition on (Appendix I, planned extension 3; see
        :mod:`fusionlib.fusion.conditional`): the generator gets the group as input and
        ``sample(n, group=...)`` / ``sample(n, shares=...)`` produce a chosen group or shares.
    dp:
        None, or a :class:`~fusionlib.fusion.dp.DPConfig`: DP-SGD discriminators (Appendix I,
        extension 4; continuous columns only); ``trainer_.step.epsilon(delta)`` is the epsilon
        spent. The pooled standardisation and section D weights read all rows and are not
        covered: pass ``standardize=False`` on public scales and uniform weights for a proof.
    tau, hard:
        Gumbel-softmax temperature (> 0) and straight-through flag of the head (used only with
        discrete columns). ``hard=True`` (default): the generated blocks are exactly one-hot
        (soft gradients). With soft blocks the BCE discriminators can tell them from the
        one-hot real rows: on the data of ``tests/fusion/test_categorical.py`` (seeds 0-7,
        1000 iterations) the generator then drifted to the majority category (largest category
        share error: median 0.28, vs 0.05 with ``hard=True``; both 0.04 at 300). A
        discriminator's first linear layer on a one-hot block is an embedding of the category
        (Appendix I's "embedding layers"), so no separate ``nn.Embedding`` is needed.
    iterations_per_epoch:
        None: ``ceil(max_k n_k / batch_size)`` with n_k the training rows of source k, so an
        epoch passes over the largest source once in expectation. Algorithm B, read literally,
        samples one batch per source per epoch; Appendix H's per-epoch cost counts n/B batches
        per source, and we follow H's reading.
    convergence:
        None (train ``epochs`` epochs), or a
        :class:`~fusionlib.fusion.convergence.ConvergenceRule`: ``epochs`` is then the budget,
        and training stops at the first check (every ``convergence.every`` epochs) where every
        source's held-out MMD and coverage are within the rule's multiples of their noise
        floors (:mod:`fusionlib.fusion.convergence`). ``learned_epoch_`` is that epoch, or None
        when the budget ran out first (the run has not learned: its numbers are not comparable).
    seed:
        Root of every random stream: the holdout split ``(seed, "holdout", name)``, the weights
        ``(seed, "weights", name)``, the networks ``(seed, "networks")``, training
        ``(seed, "train")``, the convergence checks ``(seed, "convergence", ...)``.

    Attributes
    ----------
    sources_, schema_:
        Source names and the union of their columns (first-seen order).
    train_, holdout_:
        Dicts name -> DataFrame: the training rows and the held-out rows (fraction
        ``config.holdout``) of every source, in their original order.
    weights_:
        Dict name -> float64 array (n_k_train,), summing to n_k_train. The strategies of
        Appendix D need numbers: they see each source's *encoded* rows (standardised continuous
        columns and the 0/1 one-hot blocks of its categorical columns).
    group_shares_:
        With ``condition``: group -> its share among the training rows of the sources that
        observe it (the law of unconditional samples).
    encoder_:
        The :class:`~fusionlib.fusion.encoding.SchemaEncoding` (spans, scaler, categories).
    scaler_:
        The :class:`~fusionlib.fusion.scaling.PooledScaler` of the continuous columns.
    trainer_, history_, n_iter_, iterations_per_epoch_, epochs_:
        The fitted trainer, its loss log, the iteration counts and the epochs trained.
    convergence_, learned_epoch_:
        With ``convergence``: the checks (one row per source and check epoch) and the epoch at
        which the run learned (None: not within ``epochs``). Without: None and None.

    Notes
    -----
    Columns not listed in ``discrete_columns`` are modelled as continuous (Appendix I,
    limitation 1): they must be numeric and are sampled as float64.
    """

    def __init__(self, epochs: int = 100, config: FusionConfig = DEFAULT_CONFIG, *,
                 device: str = "cpu", n_threads: int | None = 1,
                 checkpoint_path: str | os.PathLike[str] | None = None,
                 checkpoint_every: int = 0, progress: bool = False,
                 weighting_options: Mapping[str, object] | None = None,
                 standardize: bool = False, iterations_per_epoch: int | None = None,
                 log_every: int = 10, discrete_columns: Collection[str] = (), tau: float = 0.2,
                 hard: bool = True, condition: str | None = None, dp: object = None,
                 convergence: object = None, seed: object = 0) -> None:
        self.epochs, self.config, self.device, self.n_threads = epochs, config, device, n_threads
        self.checkpoint_path, self.checkpoint_every = checkpoint_path, checkpoint_every
        self.progress, self.weighting_options = progress, weighting_options
        self.standardize, self.iterations_per_epoch = standardize, iterations_per_epoch
        self.log_every, self.seed = log_every, seed
        self.discrete_columns, self.tau, self.hard = discrete_columns, tau, hard
        self.condition, self.dp, self.convergence = condition, dp, convergence

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        check_params(self)

    def _discrete(self) -> tuple[str, ...]:
        """``discrete_columns`` checked and deduplicated (order kept), the condition added."""
        return discrete_columns(self.discrete_columns, self.condition)

    def _check_sources(self, sources: object) -> SourceSet:
        src = as_source_set(sources).require(min_k=2)
        src.check_linked()
        if self.condition is not None and self.condition not in src.columns:
            raise InvalidInputError(
                f"the condition column {self.condition!r} is in no source (columns: "
                f"{list(src.columns)}); name a categorical column that a source has")
        if self.condition is not None:
            check_condition_column(src, self.condition)
        check_source_columns(src, self._discrete())
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
        for attr in ("trainer_", "weights_", "train_", "holdout_", "scaler_", "encoder_",
                     "sources_", "schema_", "n_iter_", "iterations_per_epoch_",
                     "group_shares_", "epochs_", "convergence_", "learned_epoch_"):
            self.__dict__.pop(attr, None)  # a failed refit leaves the object unfitted
        src, train, holdout, enc, xs, weights = self._prepare(sources)
        step = self._step(enc, [enc.positions(src.columns_of(name)) for name in src.names],
                          src.names, xs)
        trainer = Trainer(step, seed=child(self.seed, "train"), device=self.device,
                          n_threads=self.n_threads, checkpoint_path=self.checkpoint_path,
                          checkpoint_every=self.checkpoint_every, log_every=self.log_every,
                          progress=self.progress)
        ipe = self._iterations_per_epoch(train)
        data = tuple(v for name in src.names for v in (xs[name], weights[name]))
        self._set_prepared(src, train, holdout, enc, weights)
        epochs = self._train(trainer, data, ipe, xs)
        self.trainer_ = trainer
        self.iterations_per_epoch_, self.n_iter_, self.epochs_ = ipe, epochs * ipe, epochs
        if self.condition is not None:
            self.group_shares_ = dict(zip(enc.categories[self.condition].tolist(),
                                          step.shares.double().tolist(), strict=True))
        return self

    def _train(self, trainer: Trainer, data: tuple, ipe: int, xs: dict) -> int:
        """Train ``epochs`` epochs, or with ``convergence`` until the held-out check passes
        (checked every ``convergence.every`` epochs, ``epochs`` at most); returns the epochs
        trained. Checks sample on their own streams, so the training is the same run as
        without them, stopped earlier."""
        self.convergence_, self.learned_epoch_ = None, None
        if self.convergence is None:
            trainer.fit(data, self.epochs * ipe)
            return self.epochs
        from fusionlib.fusion.convergence import HeldoutCriterion

        names, enc = self.sources_, self.encoder_
        check = HeldoutCriterion(
            [xs[n] for n in names],
            [enc.transform(self.holdout_[n], unknown="zeros") for n in names],
            [enc.positions(self.train_[n].columns) for n in names], self.convergence,
            seed=child(self.seed, "convergence"), names=names, weights=self._target_weights(xs))
        rows, epoch = [], 0
        while epoch < self.epochs:
            epoch = min(epoch + self.convergence.every, self.epochs)
            trainer.fit(data, epoch * ipe)
            x = trainer.sample(check.rows, seed=child(self.seed, "convergence", epoch))
            rows.append(check.evaluate(x.double().numpy(), seed=child(self.seed, "check"))
                        .assign(epoch=epoch))
            if rows[-1]["learned"].all():
                self.learned_epoch_ = epoch
                break
        self.convergence_ = pd.concat(rows, ignore_index=True)
        return epoch

    def _prepare(self, sources: object) -> tuple:
        """Checked sources, the train/holdout split, the encoding, the encoded training rows
        and their Appendix D weights: everything ``fit`` computes before training (also used
        by :class:`~fusionlib.fusion.replicas.StackedFusionGAN`, one replica at a time)."""
        src = self._check_sources(sources)
        train, holdout = self._split(src)
        enc = schema_encoding(train, src.columns, self._discrete(), standardize=self.standardize)
        xs = {name: enc.transform(df) for name, df in train.items()}
        return src, train, holdout, enc, xs, self._weights(xs)

    def _set_prepared(self, src: SourceSet, train: dict, holdout: dict, enc: SchemaEncoding,
                      weights: dict) -> None:
        self.sources_, self.schema_ = src.names, src.columns
        self.train_, self.holdout_, self.weights_ = train, holdout, weights
        self.encoder_, self.scaler_ = enc, enc.scaler

    def _iterations_per_epoch(self, train: dict[str, pd.DataFrame]) -> int:
        largest = max(len(df) for df in train.values())
        return self.iterations_per_epoch or math.ceil(largest / self.config.batch_size)

    def _step(self, enc: SchemaEncoding, indices: list[list[int]], names: tuple[str, ...],
              xs: dict[str, np.ndarray]):
        """Algorithm B's step over the encoded schema (a Gumbel-softmax head if categorical,
        a conditional generator with ``condition``, DP-SGD discriminators with ``dp``)."""
        spans, seed = (enc.spans if enc.discrete else None), child(self.seed, "networks")
        if self.dp is not None:
            from fusionlib.fusion.dp import dp_fusion_step

            return dp_fusion_step(self.config, enc.width, indices, dp=self.dp, names=names,
                                  seed=seed)
        if self.condition is None:
            return fusion_step(self.config, enc.width, indices, names=names, spans=spans,
                               tau=self.tau, hard=self.hard, seed=seed)
        cond = enc.span(self.condition)
        counts = sum(x[:, [i for i, j in enumerate(idx) if cond.start <= j < cond.stop]]
                     .sum(axis=0, dtype=np.float64)
                     for x, idx in zip(xs.values(), indices, strict=True)
                     if cond.start in idx)
        return conditional_fusion_step(self.config, enc.width, indices, cond, counts,
                                       names=names, spans=spans, tau=self.tau, hard=self.hard,
                                       seed=seed)

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
        """Appendix D weights of each source's encoded training rows (its own columns:
        standardised continuous values and 0/1 one-hot blocks)."""
        from fusionlib.fusion.weighting import compute_weights

        options = dict(self.weighting_options or {})
        return {name: np.asarray(compute_weights(x.astype(np.float64), self.config.weighting,
                                                 seed=child(self.seed, "weights", name),
                                                 **options), dtype=np.float64)
                for name, x in xs.items()}

    def _target_weights(self, xs: dict[str, np.ndarray]) -> list | None:
        """Per source, the weights of its training and held-out rows under the law this run
        aims at (``None`` for uniform weights): the Appendix D weighting function fitted on
        the training rows (:func:`~fusionlib.fusion.weighting.weights_at`), squared with
        ``weight_sampling`` (rows drawn in proportion to w *and* weighted in the loss). The
        held-out check of a weighted run draws its rows with them."""
        if self.config.weighting == "uniform":
            return None
        from fusionlib.fusion.weighting import weights_at

        power, options = 1 + int(self.config.weight_sampling), dict(self.weighting_options or {})
        out = []
        for name in self.sources_:
            hold = self.encoder_.transform(self.holdout_[name], unknown="zeros")
            w_hold = weights_at(xs[name].astype(np.float64), hold.astype(np.float64),
                                self.config.weighting, seed=child(self.seed, "weights", name),
                                **options)
            out.append((self.weights_[name] ** power, w_hold ** power))
        return out

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

    def sample(self, n: int, seed: object = 0, *, group: object = None,
               shares: Mapping[object, float] | None = None) -> pd.DataFrame:
        """Draw ``n`` synthetic records over the schema.

        Parameters
        ----------
        n : int
            Number of rows, > 0.
        seed : int or seed tuple
            Seed of the sampling stream ``(seed, "sample")`` (noise z and, with categorical
            columns, the Gumbel noise whose argmax draws each category); the same seed gives
            the same rows.
        group, shares :
            Only with ``condition``: every record of group ``group``, or group shares
            ``{group: share}`` met exactly (largest-remainder rounding of ``n * share``; rows in
            an order shuffled on ``(seed, "groups")``). Neither: groups drawn from
            ``group_shares_``.

        Returns
        -------
        DataFrame, shape (n, len(schema_)), in schema order: continuous columns float64,
        categorical columns in their original dtype (only categories seen in training)
        """
        self._check_fitted()
        if not is_int(n) or n <= 0:
            raise InvalidInputError(f"n must be a positive int number of rows, got {n!r}")
        child(seed)
        options = {}
        if self.condition is None and (group is not None or shares is not None):
            raise InvalidInputError("group= and shares= need a conditional model; fit "
                                    "FusionGAN(condition=<column>) first")
        if self.condition is not None:
            codes = group_codes(self.encoder_.categories[self.condition].tolist(), int(n),
                                group=group, shares=shares, seed=seed)
            options = {} if codes is None else {"codes": codes}
        x = self.trainer_.sample(int(n), seed=seed, **options).double().numpy()
        return self.encoder_.inverse(x)

