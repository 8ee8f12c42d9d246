"""Identification study: what two sources can tell about variables never observed together.

Source A observes (x, y), source B observes (x, z), on disjoint rows of one population; (y, z)
are never observed together. The designs are trivariate standard Gaussians given by their
correlations (:data:`DESIGNS`):

``a_cia_holds``
    ``rho_yz = rho_xy rho_xz`` (y and z independent given x): the CIA is true.
``b_cia_fails``
    the same ``rho_xy``, ``rho_xz`` as (a), but ``rho_yz`` far from their product.
``c_no_information``
    x independent of y and of z, ``rho_yz`` strong: the overlap says nothing.
``d_strong_overlap``
    x strongly correlated with y and z: the CIA fails, but the identified set is narrow.

Designs (a) and (b) have the *same* laws of (x, y) and of (x, z), and :func:`make_sources`
draws each source from its own two-variable law with a stream that does not depend on
``rho_yz``: their sources are identical, value for value. Any method fitted on them returns
the same answer in (a) and (b), so it cannot be right in both; what the sources identify is
the interval of :func:`population_values`, not the point.

Two cross-source quantities are scored: ``corr(y, z)`` (continuous data) and the cell
probability ``P(y > 0, z > 0)`` of the discretised data (x in its four quartile bins, y and z
by sign; the categorical form seed 002's estimators need). Their population values, bounds
and CIA values are exact (bivariate normal orthant and rectangle probabilities).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import multivariate_normal, norm

from fusionlib.checks import check_positive_int
from fusionlib.data.sources import SourceSet
from fusionlib.errors import InvalidInputError
from fusionlib.matching import correlation_bounds, frechet_cell_bounds
from fusionlib.rng import numpy_rng

__all__ = ["Design", "DESIGNS", "X_EDGES", "make_sources", "truth_sample", "discretise",
           "population_values", "p11"]

#: quartiles of the standard normal: the bins of the discretised overlap x
X_EDGES = tuple(float(q) for q in norm.ppf([0.25, 0.5, 0.75]))


@dataclass(frozen=True)
class Design:
    """A trivariate standard Gaussian over (x, y, z) given by its three correlations."""

    rho_xy: float
    rho_xz: float
    rho_yz: float
    label: str = ""

    def corr(self) -> np.ndarray:
        c = np.array([[1.0, self.rho_xy, self.rho_xz], [self.rho_xy, 1.0, self.rho_yz],
                      [self.rho_xz, self.rho_yz, 1.0]])
        if np.linalg.eigvalsh(c).min() <= 0:
            raise InvalidInputError(
                f"design {self.label!r}: correlations {self.rho_xy}, {self.rho_xz}, "
                f"{self.rho_yz} are not a positive definite matrix; pick rho_yz inside "
                f"{correlation_bounds(self.rho_xy, self.rho_xz)[::2]}")
        return c


DESIGNS: dict[str, Design] = {
    "a_cia_holds": Design(0.6, 0.6, 0.36, "(a) CIA holds"),
    "b_cia_fails": Design(0.6, 0.6, -0.1, "(b) CIA fails"),
    "c_no_information": Design(0.0, 0.0, 0.7, "(c) overlap uninformative"),
    "d_strong_overlap": Design(0.95, 0.95, 0.85, "(d) strong overlap"),
}


def _bivariate(n: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    e = rng.standard_normal((n, 2))
    return np.c_[e[:, 0], rho * e[:, 0] + np.sqrt(1 - rho * rho) * e[:, 1]]


def make_sources(design: Design, n: int, seed: object) -> SourceSet:
    """Source A: ``n`` rows of (x, y); source B: ``n`` other rows of (x, z).

    Each source is drawn from its own two-variable law with a stream named by the source only,
    so designs that share ``rho_xy`` and ``rho_xz`` get identical sources.
    """
    check_positive_int("n", n)
    a = _bivariate(n, design.rho_xy, numpy_rng(seed, "identification", "source", "A"))
    b = _bivariate(n, design.rho_xz, numpy_rng(seed, "identification", "source", "B"))
    return SourceSet({"A": pd.DataFrame(a, columns=["x", "y"]),
                      "B": pd.DataFrame(b, columns=["x", "z"])})


def truth_sample(design: Design, n: int, seed: object) -> pd.DataFrame:
    """``n`` complete rows (x, y, z) of the design: the held-out truth (never used to fit)."""
    check_positive_int("n", n)
    rng = numpy_rng(seed, "identification", "truth")
    chol = np.linalg.cholesky(design.corr())
    return pd.DataFrame(rng.standard_normal((n, 3)) @ chol.T, columns=["x", "y", "z"])


def discretise(df: pd.DataFrame) -> pd.DataFrame:
    """x -> quartile bin ``"q0"``..``"q3"``; y, z -> ``"1"`` if > 0 else ``"0"`` (strings)."""
    out = {}
    for col in df.columns:
        v = df[col].to_numpy(dtype=float)
        if col == "x":
            out[col] = np.char.add("q", np.searchsorted(X_EDGES, v).astype(str))
        else:
            out[col] = np.where(v > 0, "1", "0")
    return pd.DataFrame(out).astype(object)


def p11(table: pd.DataFrame) -> float:
    """Share of rows with y > 0 and z > 0 (numeric) or y == z == "1" (discretised)."""
    if pd.api.types.is_numeric_dtype(table["y"]):
        return float(((table["y"] > 0) & (table["z"] > 0)).mean())
    return float(((table["y"] == "1") & (table["z"] == "1")).mean())


def _p_positive_given_bins(rho: float) -> np.ndarray:
    """P(v > 0 | x in bin b) for (x, v) standard bivariate normal with correlation rho."""
    edges = np.r_[-np.inf, X_EDGES, np.inf]
    mvn = multivariate_normal(mean=[0.0, 0.0], cov=[[1.0, rho], [rho, 1.0]])
    # P(x <= e, v > 0) = Phi(e) - P(x <= e, v <= 0)
    joint = [0.0 if e == -np.inf else (0.5 if e == np.inf else
             float(norm.cdf(e) - mvn.cdf([e, 0.0]))) for e in edges]
    return np.diff(joint) / 0.25


def population_values(design: Design) -> dict[str, float]:
    """Exact truth, CIA value and sharp bounds of ``corr(y, z)`` and ``P(y > 0, z > 0)``.

    The cell bounds are Fréchet bounds given the four x bins (what the discretised sources
    identify); the CIA value of the cell is that of matching within the bins.
    """
    lo, cia, hi = correlation_bounds(design.rho_xy, design.rho_xz)
    py, pz = _p_positive_given_bins(design.rho_xy), _p_positive_given_bins(design.rho_xz)
    c_lo, c_cia, c_hi = frechet_cell_bounds(np.full(4, 0.25), np.c_[1 - py, py],
                                            np.c_[1 - pz, pz])
    return {"rho_truth": design.rho_yz, "rho_cia": cia, "rho_lower": lo, "rho_upper": hi,
            "p11_truth": 0.25 + float(np.arcsin(design.rho_yz)) / (2 * np.pi),
            "p11_cia": float(c_cia[1, 1]), "p11_lower": float(c_lo[1, 1]),
            "p11_upper": float(c_hi[1, 1])}
