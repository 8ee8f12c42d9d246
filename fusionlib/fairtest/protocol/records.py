"""The records the seed-002 protocol passes between its steps, and its settings.

Kept apart from :mod:`fusionlib.fairtest.protocol.runs` (which runs the steps) and
:mod:`fusionlib.fairtest.audit` (which scores them) so that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from fusionlib.fairtest.estimators import LNB_DEFAULTS
from fusionlib.fairtest.separation import DatasetSpec

__all__ = ["ProtocolConfig", "PAPER_PROTOCOL", "OUR_METHODS", "BASELINES", "REFERENCE_LABEL",
           "PAPER_NAMES", "Prepared", "SyntheticSet", "DatasetSummary"]


@dataclass(frozen=True)
class ProtocolConfig:
    """Knobs of the protocol; the defaults are the paper's protocol (seed 002)."""

    test_size: float = 0.3  # Section 4.2: 30 % real test hold-out
    n_boot: int = 1000  # Section 5.3 / Table 9: 1,000 bootstrap samples
    dm_seeds: int = 5  # Section 5.1: DM averaged over five trials with different seeds
    dm_n_estimators: int = 100  # seed silent: scikit-learn's default forest
    dm_max_rows: int | None = None  # None: every test row (cpu scale subsamples)
    ctgan_epochs: int = 300  # Section 4.3: CTGAN "default hyperparameters" (ctgan: 300 epochs)
    ctgan_max_rows: int | None = None  # None: the whole training table (cpu scale subsamples)
    latent_restarts: int = LNB_DEFAULTS.n_restarts  # seed silent; best of several EM starts
    kl_epsilon: float = 1e-6  # our smoothing of empty (A, Y) cells; see metrics.JointKL
    max_rows: int | None = None  # None: every row of the dataset (smoke scale subsamples)
    baselines: tuple[str, ...] = ("CTGAN", "Indep")  # Section 4.3
    reference: bool = True  # ours: also score real training rows (the sampling-noise floor)
    fidelity_boot: int = 200  # ours: bootstrap replicates behind each fidelity score's se
    latent_fits: int = 5  # ours: single-start Latent fits whose spread is the Latent rows' se


PAPER_PROTOCOL = ProtocolConfig()
#: our three joint estimators (Section 3.1) and the two baselines (Section 4.3)
OUR_METHODS: tuple[str, ...] = ("IGO", "Marginal", "Latent")
BASELINES: tuple[str, ...] = ("CTGAN", "Indep")
#: row names of Tables 3, 7, 8, 9
REFERENCE_LABEL = "Real training rows (reference)"
PAPER_NAMES = {"IGO": "Indep-Overlap", "Marginal": "Marginal", "Latent": "Latent",
               "CTGAN": "CTGAN", "Indep": "Indep"}


@dataclass
class Prepared:
    """A discretised dataset split into training rows and the real test set ``D_test``."""

    dataset: str
    train: pd.DataFrame
    test: pd.DataFrame
    spec: DatasetSpec


@dataclass
class SyntheticSet:
    """One synthetic test set; ``overlap`` is ``""`` for the baselines."""

    method: str
    overlap: str
    data: pd.DataFrame

    @property
    def label(self) -> str:
        """The paper's row name, e.g. ``"Indep-Overlap (relationship)"``."""
        name = PAPER_NAMES[self.method]
        return f"{name} ({self.overlap})" if self.overlap else name


@dataclass
class DatasetSummary:
    """What the chapter reads of one dataset's protocol run: the tables of a
    ``DatasetResult`` without its data (prepared rows, synthetic sets), plus the numbers
    computed from that data (:func:`fusionlib.fairtest.protocol.report.summarize`). It is what a
    cell of the grid stores (:mod:`fusionlib.fairtest.protocol.cells`).

    ``accuracy``: the audited trees' accuracy (rows: sources, columns: separations);
    ``kl_floors``: :func:`~fusionlib.fairtest.kl_floor.kl_noise_floors`;
    ``mutual_information``: I(A; Y) in nats per protected attribute, over all rows;
    ``unique_internal``: share of unique rows of the first separation's internal table;
    ``dcc``: Figure 5's matrix ``|V_syn - V_real|`` of every synthetic set, by set label in
    table order; ``set_overlaps``: the overlap of each set (``""`` for the baselines).

    Repeated fits of the stochastic generators (:mod:`fusionlib.fairtest.repeated_fits`):
    ``latent_fit_scores`` / ``latent_fit_diffs``: every score and Table 9 difference of each
    single-start Latent fit (column ``fit``); ``ctgan_runs`` / ``ctgan_diffs``: the same for
    each CTGAN training run (column ``run``), ``ctgan_info`` each run's settings and times.
    """

    dataset: str
    status: str
    reason: str = ""
    fidelity: pd.DataFrame = field(default_factory=pd.DataFrame)
    boots: pd.DataFrame = field(default_factory=pd.DataFrame)
    table9: pd.DataFrame = field(default_factory=pd.DataFrame)
    train_rows: int | None = None
    test_rows: int | None = None
    protected: tuple[str, ...] = ()
    label: str = ""
    overlaps: tuple[str, ...] = ()
    accuracy: pd.DataFrame | None = None
    kl_floors: pd.DataFrame = field(default_factory=pd.DataFrame)
    mutual_information: dict[str, float] = field(default_factory=dict)
    unique_internal: float | None = None
    dcc: dict[str, pd.DataFrame] = field(default_factory=dict)
    set_overlaps: dict[str, str] = field(default_factory=dict)
    latent_fit_scores: pd.DataFrame = field(default_factory=pd.DataFrame)
    latent_fit_diffs: pd.DataFrame = field(default_factory=pd.DataFrame)
    ctgan_runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    ctgan_diffs: pd.DataFrame = field(default_factory=pd.DataFrame)
    ctgan_info: list[dict] = field(default_factory=list)

    def dcc_matrices(self, overlap: str) -> dict[str, pd.DataFrame]:
        """Figure 5: the matrices of the methods of ``overlap`` and of both baselines."""
        return {k: m for k, m in self.dcc.items() if self.set_overlaps.get(k) in ("", overlap)}
