"""Planted faults of Appendix A.1's claims (the fairness-testing chapter's theory checks).

Appendix A.1 says that the average of the two tables' marginals of the overlap attribute
minimises eq. (10) (the total KL divergence of eq. 8 as a function of ``p(x3)``), and so is the
best estimate of it. The chapter checks it twice per overlap of Table 2, on two disjoint samples
of the data: the numerical minimiser of eq. (10) equals the average (``-minimiser``), and over
random splits the average's expected error ``KL(p_true || p_hat)`` is below that of either
marginal (``-expected-error``). Each check is of kind ``theory`` only because it would fail
where the statement is false; this module builds both sides on a small categorical column of
its own (the same rules, without the data):

- ``-minimiser``: the rule (``|minimiser - combination| <= 1e-6``, exact) reads reproduced for
  the average and differs for the combination with one marginal's weight doubled
  (``2/3 p1 + 1/3 p2``);
- ``-expected-error``: the rule (a one-sided interval of the mean difference below 0) reads
  reproduced when both tables sample the same rows and differs when the second table draws the
  first category twice as often as the population (Appendix A.1's hypothesis broken: the
  average inherits half the bias and loses to the unbiased table).

``tests/fairtest/test_planted.py`` asserts both sides.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from fusionlib.compendium.power import Planted, Registry
from fusionlib.compendium.verdicts import Decision, Estimate, compare, direction
from fusionlib.fairtest.appendix_a1 import average_advantage, numerical_minimiser, split_study
from fusionlib.fairtest.separation import SEPARATIONS

__all__ = ["REGISTRY", "PLANTED", "planted", "planted_faults", "context", "theory_ids", "claim_id",
           "MINIMISER_TOLERANCE"]

#: the chapter's tolerance on |minimiser - average|
MINIMISER_TOLERANCE: float = 1e-6


def claim_id(dataset: str, overlap: str, what: str) -> str:
    """The chapter's claim id of ``what`` (``"minimiser"`` or ``"expected-error"``)."""
    return f"002-AA1-{dataset}-{overlap}-{what}".replace(" ", "_")


@functools.lru_cache(maxsize=1)
def _column() -> pd.Series:
    """20,000 rows of a four-category overlap attribute (shares 0.4, 0.3, 0.2, 0.1)."""
    rng = np.random.default_rng(0)
    return pd.Series(rng.choice(["a", "b", "c", "d"], size=20_000, p=[0.4, 0.3, 0.2, 0.1]),
                     name="overlap")


@functools.lru_cache(maxsize=4)
def _minimiser(weight: float) -> Decision:
    m = numerical_minimiser(_column(), seed=0, weight=weight)
    return compare(0.0, Estimate(m["max_abs_diff"], 0.0), MINIMISER_TOLERANCE)


@functools.lru_cache(maxsize=4)
def _expected_error(bias: float) -> Decision:
    gap, _ = average_advantage(split_study(_column(), n_splits=100, seed=0, bias=bias))
    return direction(gap, "<0")


def _entries() -> list[Planted]:
    out = []
    for d, o in dict.fromkeys((s.dataset, s.overlap) for s in SEPARATIONS):
        out += [
            Planted(claim_id(d, o, "minimiser"), "theory",
                    "eq. (10) is minimised over the simplex by the average of the two "
                    "marginals (eq. 12)",
                    f"{d}, overlap {o}: two disjoint samples of 35 % of the rows; the test's "
                    "instance a four-category column of 20,000 rows",
                    "the weight of one marginal doubled (2/3 p1 + 1/3 p2 instead of the "
                    "average): the numerical minimiser is no longer within 1e-6 of it, "
                    "differs",
                    lambda: _minimiser(0.5), lambda: _minimiser(2 / 3)),
            Planted(claim_id(d, o, "expected-error"), "theory",
                    "both tables sample the same population, so the average's expected KL "
                    "error is below either marginal's",
                    f"{d}, overlap {o}: random splits into two disjoint 35 % samples; the "
                    "test's instance a four-category column of 20,000 rows, 100 splits",
                    "the hypothesis broken: the second table draws the first category twice "
                    "as often as the population; the average inherits half the bias and loses "
                    "to the first table, differs",
                    lambda: _expected_error(1.0), lambda: _expected_error(2.0)),
        ]
    return out


_ENTRIES: tuple[Planted, ...] = tuple(_entries())

#: the chapter's registry: its entries and their lookups
REGISTRY: Registry = Registry(_ENTRIES)
#: every Appendix A.1 claim id -> its entry
PLANTED: dict[str, Planted] = REGISTRY.by_id


def planted(claim: str) -> Planted:
    """The entry of claim id ``claim`` (an error naming the known ids when absent)."""
    return REGISTRY.get(claim)


def theory_ids() -> list[str]:
    """The claim ids counted as theory (each with a planted fault)."""
    return REGISTRY.theory_ids()


def context(claim: str) -> str:
    """Hypothesis, instance and planted fault of ``claim``, for its reason."""
    return REGISTRY.context(claim)


def planted_faults() -> pd.DataFrame:
    """One row per claim: ``claim_id``, ``kind``, ``hypothesis``, ``instance``, ``fault``."""
    return REGISTRY.table()
