"""R repetitions of :class:`~fusionlib.ptgan.tabular.model.TabularPTGAN` trained as one model.

:class:`StackedTabularPTGAN` takes the seeds of R repetitions (and optionally R penalty weights,
e.g. MP with ``lambda_MP`` 1, 10 and 100, or R Gumbel-softmax temperatures) and trains them with
:class:`~fusionlib.ptgan.stacked_step.StackedPTGANStep` under the one
:class:`~fusionlib.gan.trainer.Trainer`. Repetition r is ``TabularPTGAN(seed=seeds[r])``: the
same networks at the start (streams ``(seeds[r], "networks")``), the same training stream
``(seeds[r], "train")``, the same sampling stream; with R = 1 the two are bitwise equal on CPU
(tested), with R > 1 equal to float rounding.

Every repetition trains on the rows of the table given to :meth:`StackedTabularPTGAN.fit`
(``rows`` selects a different subset per repetition, e.g. one split each); the encoding is
fitted on the whole table given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from fusionlib.checks import check_positive_int, check_probability, memory_error_as_input_error
from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.networks import tabular_networks
from fusionlib.gan.stacked import GeneratorBank
from fusionlib.gan.stacked_networks import StackedCritic, StackedGenerator
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.stacked_step import StackedPTGANStep
from fusionlib.ptgan.tabular.model import _check_table, tabular_config
from fusionlib.rng import child

__all__ = ["StackedTabularPTGAN"]


def _per_rep(name: str, value: object, n_reps: int) -> list[float] | None:
    if value is None:
        return None
    values = [float(value)] * n_reps if isinstance(value, (int, float)) else \
        [float(v) for v in value]  # type: ignore[union-attr]
    if len(values) != n_reps:
        raise InvalidInputError(f"{name} needs one value or one per repetition ({n_reps}), got "
                                f"{len(values)}")
    return values


class StackedTabularPTGAN:
    """Fit R repetitions of a tabular GAN at once and sample each (``fit`` / ``sample``).

    Parameters
    ----------
    method, discrepancy, discrete_columns, n_iter, overrides:
        As for :class:`~fusionlib.ptgan.tabular.model.TabularPTGAN` (shared by every repetition).
    seeds:
        One root seed per repetition (R = ``len(seeds)``).
    penalty_weights:
        One penalty weight per repetition (None: the configuration's).
    tau:
        Gumbel-softmax temperature, one for all or one per repetition.
    device, progress, log_every, checkpoint_path:
        Passed to the :class:`~fusionlib.gan.trainer.Trainer` (an existing checkpoint of the
        same run is resumed).

    Attributes
    ----------
    encoder_, config_, step_, trainer_:
        The fitted encoder, the configuration, the stacked step and the trainer.
    """

    def __init__(self, method: str = "pt+cp", discrepancy: str = "nd", *,
                 seeds: Sequence[object], discrete_columns: Sequence[str] = (),
                 n_iter: int = 1_000, overrides: Mapping[str, object] | None = None,
                 penalty_weights: Sequence[float] | None = None,
                 tau: float | Sequence[float] = 0.2, device: str = "cpu",
                 progress: bool = False, log_every: int = 100,
                 checkpoint_path: str | None = None) -> None:
        self.method, self.discrepancy, self.seeds = method, discrepancy, seeds
        self.discrete_columns, self.n_iter, self.overrides = discrete_columns, n_iter, overrides
        self.penalty_weights, self.tau = penalty_weights, tau
        self.device, self.progress, self.log_every = device, progress, log_every
        self.checkpoint_path = checkpoint_path

    @property
    def n_reps(self) -> int:
        """Number of repetitions R."""
        return len(self.seeds)

    def _networks(self, n_cols: int) -> tuple[StackedGenerator, StackedCritic]:
        taus = _per_rep("tau", self.tau, self.n_reps)
        gens, critics = [], []
        for seed, tau in zip(self.seeds, taus, strict=True):
            head = TabularHead(64, self.encoder_.spans_, tau=tau,
                               seed=child(seed, "networks", "head"))
            g, c = tabular_networks(n_cols, conditional=self.config_.conditional,
                                    seed=child(seed, "networks"),
                                    latent_dim=self.config_.latent_dim, head=head)
            gens.append(g)
            critics.append(c)
        return StackedGenerator.from_generators(gens), StackedCritic.from_critics(critics)

    def fit(self, data: pd.DataFrame, *, rows: object | None = None,
            callback: Callable | None = None, callback_at: Sequence[int] = ()
            ) -> StackedTabularPTGAN:
        """Encode ``data`` and train every repetition for ``n_iter`` iterations.

        ``rows``: (R, N) positions of the rows of ``data`` that repetition r trains on (None:
        every row for every repetition). ``callback(model, iteration)`` runs after each 1-based
        iteration in ``callback_at``.
        """
        if isinstance(self.seeds, (str, bytes)) or not isinstance(self.seeds, Sequence) \
                or not self.seeds:
            raise InvalidInputError("seeds must be a non-empty list (one seed per repetition)")
        check_positive_int("n_iter", self.n_iter)
        self.config_ = tabular_config(self.method, self.discrepancy, self.overrides)
        weights = _per_rep("penalty_weights", self.penalty_weights, self.n_reps)
        frame = _check_table(data, self.discrete_columns)
        self.encoder_ = TabularEncoder(tuple(self.discrete_columns)).fit(frame)
        x = torch.as_tensor(self.encoder_.transform(frame))
        gen, critic = self._networks(x.shape[1])
        self.step_ = StackedPTGANStep(self.config_, gen, critic, penalty_weights=weights)
        self.trainer_ = Trainer(self.step_, seed=[child(s, "train") for s in self.seeds],
                                device=self.device, progress=self.progress,
                                log_every=self.log_every, checkpoint_path=self.checkpoint_path)
        self._data = (x, None if rows is None else torch.as_tensor(np.asarray(rows)))
        hook = None
        if callback is not None:
            def hook(_trainer, iteration):
                callback(self, iteration)
        self.trainer_.fit(self._data, self.n_iter, callback=hook, callback_at=callback_at)
        return self

    @property
    def diverged_(self) -> dict[int, int]:
        """``{repetition: iteration}`` of the repetitions whose loss turned non-finite."""
        self._check_fitted()
        return dict(self.trainer_.diverged_)

    def _check_fitted(self) -> None:
        if not hasattr(self, "trainer_"):
            raise NotFittedError("this StackedTabularPTGAN is not fitted; call fit(data) first")

    def sample_encoded(self, n: int, seeds: Sequence[object] | None = None, *,
                       alpha: float = 1.0, bn: str = "running") -> np.ndarray:
        """``n`` encoded rows per repetition, (R, n, d); repetition r on ``(seeds[r],
        "sample")``, the stream ``TabularPTGAN.sample_encoded(n, seeds[r])`` uses.

        ``seeds`` None: the documented default, repetition r on ``(r, "sample")`` (so
        ``sample(n)`` needs no seed, as ``TabularPTGAN.sample(n)`` and SDV's do). ``bn``: how
        batch norm normalises when sampling, ``"running"`` (eval mode, the default) or
        ``"batch"`` (the statistics of the sampled batch; running statistics left unchanged),
        see :meth:`~fusionlib.ptgan.stacked_step.StackedPTGANStep.sample`."""
        self._check_fitted()
        check_positive_int("n", n)
        check_probability("alpha", alpha)
        if seeds is None:
            seeds = list(range(self.n_reps))
        if len(seeds) != self.n_reps:
            raise InvalidInputError(f"sampling needs one seed per repetition ({self.n_reps}), "
                                    f"got {len(seeds)}")
        bank = GeneratorBank.from_seeds(seeds, "sample", device=self.device)
        with memory_error_as_input_error(f"sampling n={n:,} rows x {self.n_reps} repetitions"):
            out = self.step_.sample(n, bank, alpha=float(alpha), bn=bn)
            return out.detach().cpu().numpy().astype(np.float64)

    def sample(self, n: int, seeds: Sequence[object] | None = None, *, alpha: float = 1.0
               ) -> list[pd.DataFrame]:
        """``n`` synthetic rows per repetition, decoded to the training table's columns
        (``seeds`` None: the default streams of :meth:`sample_encoded`)."""
        x = self.sample_encoded(n, seeds, alpha=alpha)
        return [self.encoder_.inverse_transform(xr) for xr in x]
