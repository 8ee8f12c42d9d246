"""Simulated sources with a known truth for the FusionGAN chapter.

:func:`mixture_sources` draws a complete table from a Gaussian mixture and hands each source
only its own columns (and disjoint rows), so every quantity a generator should recover is known:
the joint law, its modes (one of them rare), and the cross-source correlations that no single
source observes.

The design (defaults): columns ``x1, x2`` are observed by both sources, ``y1, y2`` only by
source ``A``, ``z`` only by source ``B``. Three components in five dimensions with weights
(0.60, 0.35, 0.05): the last one is the *rare mode* the weighting strategies of section D aim
at. Within a component the columns are correlated (``rho`` = 0.5 between every pair), and the
component means move ``y`` and ``z`` together, so ``corr(y1, z)`` is far from what conditional
independence given ``x`` implies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.checks import check_positive_int
from fusionlib.data.sources import SourceSet
from fusionlib.rng import numpy_rng

__all__ = ["MixtureDesign", "DEFAULT_DESIGN", "GROUPS", "mixture_sources", "grouped_sources",
           "sample_mixture", "rare_mask", "rare_share"]

COLUMNS = ("x1", "x2", "y1", "y2", "z")
#: names of the mixture components as the group column ``g`` of :func:`grouped_sources`
GROUPS = ("common", "middle", "rare")


@dataclass(frozen=True)
class MixtureDesign:
    """Gaussian mixture over ``x1, x2, y1, y2, z`` and how it is split into sources."""

    weights: tuple[float, ...] = (0.60, 0.35, 0.05)
    means: tuple[tuple[float, ...], ...] = (
        (0.0, 0.0, 0.0, 0.0, 0.0),
        (2.5, 1.0, 2.0, -1.5, 2.0),
        (-3.0, 3.0, -2.5, 3.0, -3.0),
    )
    sd: float = 0.6
    rho: float = 0.5
    sources: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("A", ("x1", "x2", "y1", "y2")),
        ("B", ("x1", "x2", "z")),
    )

    def covariance(self) -> np.ndarray:
        d = len(COLUMNS)
        corr = np.full((d, d), self.rho) + (1 - self.rho) * np.eye(d)
        return self.sd**2 * corr


DEFAULT_DESIGN = MixtureDesign()


def sample_mixture(n: int, seed: object, design: MixtureDesign = DEFAULT_DESIGN
                   ) -> tuple[pd.DataFrame, np.ndarray]:
    """``n`` complete rows of the mixture and the component of each row."""
    check_positive_int("n", n)
    rng = numpy_rng(seed, "mixture")
    comp = rng.choice(len(design.weights), size=n, p=np.asarray(design.weights))
    chol = np.linalg.cholesky(design.covariance())
    x = np.asarray(design.means)[comp] + rng.standard_normal((n, len(COLUMNS))) @ chol.T
    return pd.DataFrame(x, columns=list(COLUMNS)), comp


def mixture_sources(n_per_source: int, seed: object, design: MixtureDesign = DEFAULT_DESIGN
                    ) -> tuple[SourceSet, pd.DataFrame]:
    """The sources (disjoint rows, each with its own columns) and a complete reference sample.

    Returns ``(sources, truth)`` where ``truth`` holds ``n_per_source`` complete rows drawn
    independently of the sources (the known joint, for evaluation only).
    """
    k = len(design.sources)
    full, _ = sample_mixture(n_per_source * (k + 1), seed, design)
    tables = {name: full.iloc[i * n_per_source:(i + 1) * n_per_source][list(cols)]
              .reset_index(drop=True) for i, (name, cols) in enumerate(design.sources)}
    truth = full.iloc[k * n_per_source:].reset_index(drop=True)
    return SourceSet(tables), truth


def grouped_sources(n_per_source: int, seed: object, design: MixtureDesign = DEFAULT_DESIGN,
                    *, observed_by: tuple[str, ...] = ("A",)) -> tuple[SourceSet, pd.DataFrame]:
    """:func:`mixture_sources` with a categorical column ``g``: each row's component (named as
    in :data:`GROUPS`), first column of the sources in ``observed_by`` and of the truth.

    The same seed gives the same rows as :func:`mixture_sources`, ``g`` added.
    """
    k = len(design.sources)
    full, comp = sample_mixture(n_per_source * (k + 1), seed, design)
    full.insert(0, "g", np.asarray(GROUPS, dtype=object)[comp])
    tables = {}
    for i, (name, cols) in enumerate(design.sources):
        keep = (["g"] if name in observed_by else []) + list(cols)
        tables[name] = full.iloc[i * n_per_source:(i + 1) * n_per_source][keep] \
            .reset_index(drop=True)
    return SourceSet(tables), full.iloc[k * n_per_source:].reset_index(drop=True)


def rare_mask(x: pd.DataFrame, design: MixtureDesign = DEFAULT_DESIGN, *,
              columns: tuple[str, ...] = ("x1", "x2")) -> np.ndarray:
    """Rows nearer (in ``columns``, shared by every source) to the rare component's mean than
    to any other component's."""
    idx = [COLUMNS.index(c) for c in columns]
    means = np.asarray(design.means)[:, idx]
    pts = x[list(columns)].to_numpy(dtype=float)
    d2 = ((pts[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    return d2.argmin(axis=1) == len(design.weights) - 1


def rare_share(x: pd.DataFrame, design: MixtureDesign = DEFAULT_DESIGN, *,
               columns: tuple[str, ...] = ("x1", "x2")) -> float:
    """Share of :func:`rare_mask` rows."""
    return float(rare_mask(x, design, columns=columns).mean())
