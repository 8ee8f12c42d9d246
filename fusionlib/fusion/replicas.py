"""``StackedFusionGAN``: R FusionGAN runs (seeds) of one configuration trained as one model.

Replica r is the run ``FusionGAN(config=config, seed=seeds[r], ...)`` would make on its sources:
its own holdout split, encoding (pooled scaler), Appendix D weights, initial networks, training
stream and convergence checks, all derived from ``seeds[r]`` exactly as
:class:`~fusionlib.fusion.synthesizer.FusionGAN` derives them. Only the arithmetic is shared
(:class:`~fusionlib.fusion.stacked.StackedFusionStep`), which makes R seeds cost little more
than one on a CPU. With R = 1 the run equals ``FusionGAN``'s up to float rounding (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError, NotFittedError, TrainingDivergedError
from fusionlib.fusion.config import DEFAULT_CONFIG, FusionConfig
from fusionlib.fusion.convergence import ConvergenceRule, HeldoutCriterion
from fusionlib.fusion.stacked import StackedFusionStep
from fusionlib.fusion.step import fusion_step
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.gan.trainer import torch_threads
from fusionlib.rng import child, torch_generator

__all__ = ["StackedFusionGAN"]

#: ``callback(model, epoch)`` after every check (e.g. to score the replicas against a truth)
CheckCallback = Callable[["StackedFusionGAN", int], None]


class StackedFusionGAN:
    """R seeds of FusionGAN trained at once (parameters stacked along a replica dimension).

    Parameters
    ----------
    seeds:
        One root seed per replica (each as ``FusionGAN(seed=...)`` takes it).
    epochs:
        The budget: epochs trained at most (all replicas train together).
    config, standardize, weighting_options, iterations_per_epoch:
        As for :class:`~fusionlib.fusion.synthesizer.FusionGAN` (the same for every replica;
        BCE loss, continuous columns).
    convergence:
        A :class:`~fusionlib.fusion.convergence.ConvergenceRule` (checked every ``every``
        epochs for each replica) or None (no checks: train ``epochs``).
    stop_when_learned:
        Stop at the first check where every replica has learned (else train the whole budget).
    n_threads:
        Torch threads during training.

    Notes
    -----
    A replica that passes a check is *done*, as an unstacked ``FusionGAN(convergence=...)``
    run stops at its first passing check: the stack trains on while other replicas have not
    learned, but that replica's generator is kept as it was at its passing check and put back
    when training ends, so its samples are those of the run stopped there. (Its later checks
    are still recorded in ``checks_table_``.)
    """

    def __init__(self, seeds: Sequence[object], epochs: int = 100,
                 config: FusionConfig = DEFAULT_CONFIG, *, standardize: bool = False,
                 weighting_options: Mapping[str, object] | None = None,
                 iterations_per_epoch: int | None = None,
                 convergence: ConvergenceRule | None = None, stop_when_learned: bool = True,
                 n_threads: int | None = 1) -> None:
        self.seeds, self.epochs, self.config = list(seeds), epochs, config
        self.standardize, self.weighting_options = standardize, weighting_options
        self.iterations_per_epoch, self.convergence = iterations_per_epoch, convergence
        self.stop_when_learned, self.n_threads = stop_when_learned, n_threads

    # ------------------------------------------------------------------ fit
    def _replica_models(self) -> list[FusionGAN]:
        if not self.seeds:
            raise InvalidInputError("give at least one seed (one per replica)")
        check_positive_int("epochs", self.epochs)
        return [FusionGAN(self.epochs, self.config, standardize=self.standardize,
                          weighting_options=self.weighting_options,
                          iterations_per_epoch=self.iterations_per_epoch, seed=s)
                for s in self.seeds]

    def fit(self, sources: object, *, callback: CheckCallback | None = None
            ) -> StackedFusionGAN:
        """Train every replica on ``sources`` (one SourceSet for all, or a list of R with the
        same columns and row counts); ``callback(self, epoch)`` runs after each check."""
        models = self._replica_models()
        per = list(sources) if isinstance(sources, (list, tuple)) else [sources] * len(models)
        if len(per) != len(models):
            raise InvalidInputError(f"give one SourceSet, or one per replica ({len(models)}); "
                                    f"got {len(per)}")
        prepared = []
        for m, src in zip(models, per, strict=True):
            m._check_params()
            src, train, holdout, enc, xs, weights = m._prepare(src)
            m._set_prepared(src, train, holdout, enc, weights)
            prepared.append(xs)
        self._build(models, prepared)
        self._run(callback)
        return self

    def _build(self, models: list[FusionGAN], xs: list[dict[str, np.ndarray]]) -> None:
        names = models[0].sources_
        shapes = {tuple(x[n].shape for n in names) for x in xs}
        if len(shapes) != 1 or any(m.sources_ != names for m in models):
            raise InvalidInputError(f"the replicas' sources must have the same names, columns "
                                    f"and training rows; got shapes {sorted(shapes)}")
        enc = models[0].encoder_
        indices = [enc.positions(models[0].train_[n].columns) for n in names]
        steps = [fusion_step(self.config, enc.width, indices, names=names,
                             seed=child(m.seed, "networks")) for m in models]
        self.step_ = StackedFusionStep(self.config, [s.generator for s in steps],
                                       [s.discriminators for s in steps], indices)
        self.data_ = tuple(torch.as_tensor(np.stack([x[n] if w is None else m.weights_[n]
                                                     for x, m in zip(xs, models, strict=True)]),
                                           dtype=torch.float32)
                           for n in names for w in (None, "w"))
        self.models_, self.sources_ = models, names
        self.iterations_per_epoch_ = models[0]._iterations_per_epoch(models[0].train_)
        self.checks_ = [self._criterion(m, x, indices) for m, x in zip(models, xs, strict=True)]

    def _criterion(self, m: FusionGAN, xs: dict, indices: list) -> HeldoutCriterion | None:
        if self.convergence is None:
            return None
        names = m.sources_
        return HeldoutCriterion([xs[n] for n in names],
                                [m.encoder_.transform(m.holdout_[n], unknown="zeros")
                                 for n in names], indices,
                                self.convergence, seed=child(m.seed, "convergence"), names=names,
                                weights=m._target_weights(xs))

    def _run(self, callback: CheckCallback | None) -> None:
        rngs = [torch_generator(child(m.seed, "train"), "train") for m in self.models_]
        opts, ipe = self.step_.optimizers(), self.iterations_per_epoch_
        every = self.convergence.every if self.convergence else self.epochs
        rows, epoch = [], 0
        self.learned_epoch_ = [None] * len(self.models_)
        self._frozen: dict[int, list[torch.Tensor]] = {}
        with torch_threads(self.n_threads):
            while epoch < self.epochs:
                stop = min(epoch + every, self.epochs)
                for _ in range((stop - epoch) * ipe):
                    losses = self.step_.iteration(self.data_, rngs, opts)
                epoch = stop
                _check_finite(losses, epoch)
                if self.convergence is not None:
                    rows.append(self._check(epoch))
                    self.last_check_ = rows[-1]
                self.epochs_ = epoch
                if callback is not None:
                    callback(self, epoch)
                if self.convergence is not None and self.stop_when_learned \
                        and all(e is not None for e in self.learned_epoch_):
                    break
        self.checks_table_ = pd.concat(rows, ignore_index=True) if rows else None
        self._restore_frozen()

    def _check(self, epoch: int) -> pd.DataFrame:
        n = max(c.rows for c in self.checks_)
        x = self._generate(n, [child(m.seed, "convergence", epoch) for m in self.models_])
        out = []
        for r, (m, crit) in enumerate(zip(self.models_, self.checks_, strict=True)):
            res = crit.evaluate(x[r].double().numpy(), seed=child(m.seed, "check"))
            if self.learned_epoch_[r] is None and res["learned"].all():
                self.learned_epoch_[r] = epoch
                self._frozen[r] = [p[r].detach().clone() for p in self.step_.generator
                                   .parameters()]
            out.append(res.assign(replica=r, epoch=epoch))
        return pd.concat(out, ignore_index=True)

    @torch.no_grad()
    def _restore_frozen(self) -> None:
        """Put back each learned replica's generator as it was at its first passing check."""
        for r, saved in self._frozen.items():
            for p, v in zip(self.step_.generator.parameters(), saved, strict=True):
                p[r].copy_(v)

    # ------------------------------------------------------------------ results
    @property
    def learned_(self) -> list[bool]:
        """Per replica: did a check pass within the budget? (its numbers are comparable)"""
        self._check_fitted()
        return [e is not None for e in self.learned_epoch_]

    def _check_fitted(self) -> None:
        if not hasattr(self, "step_"):
            raise NotFittedError("call fit(sources) before using the replicas")

    def _generate(self, n: int, seeds: Sequence[object]) -> torch.Tensor:
        with torch_threads(self.n_threads):
            return self.step_.sample(n, [torch_generator(s, "sample") for s in seeds])

    def sample(self, n: int, seed: object = 0) -> list[pd.DataFrame]:
        """``n`` records of every replica: the rows ``FusionGAN.sample(n, seed)`` of each.

        ``seed`` is one seed for every replica, or a list of one seed per replica."""
        self._check_fitted()
        check_positive_int("n", n)
        seeds = list(seed) if isinstance(seed, list) else [seed] * len(self.models_)
        if len(seeds) != len(self.models_):
            raise InvalidInputError(f"give one sample seed, or a list of one per replica "
                                    f"({len(self.models_)}); got {len(seeds)}")
        x = self._generate(n, seeds).double().numpy()
        return [m.encoder_.inverse(x[r]) for r, m in enumerate(self.models_)]


def _check_finite(losses: dict[str, torch.Tensor], epoch: int) -> None:
    bad = sorted(k for k, v in losses.items() if not bool(torch.isfinite(v).all()))
    if bad:
        raise TrainingDivergedError(
            f"non-finite loss {bad} by epoch {epoch} in a stacked FusionGAN; lower the learning "
            "rate or check the data scale")
