"""Appendix A.1 of seed 002 checked on instances (fusionlib.fairtest.appendix_a1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.appendix_a1 import numerical_minimiser, objective, split_study


def _column(n: int = 2000, seed: int = 0) -> pd.Series:
    rng = np.random.default_rng(seed)
    return pd.Series(rng.choice(["a", "b", "c", "d"], size=n, p=[0.4, 0.3, 0.2, 0.1]),
                     name="overlap")


def test_objective_is_minimal_at_the_average():
    p1, p2 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    avg = (p1 + p2) / 2
    rng = np.random.default_rng(0)
    for q in rng.dirichlet(np.ones(3), size=50):
        assert objective(avg, p1, p2) <= objective(q, p1, p2) + 1e-12


def test_numerical_minimiser_finds_the_average():
    out = numerical_minimiser(_column(), seed=0)
    assert out["max_abs_diff"] < 1e-6 and out["marginal_gap"] > 0  # two different marginals
    assert out["objective_average"] <= min(out["objective_first"], out["objective_second"])
    assert_allclose(out["objective_minimiser"], out["objective_average"], atol=1e-9)


def test_split_study_average_has_the_smaller_expected_error_and_is_seeded():
    a = split_study(_column(), n_splits=100, seed=1)
    pd.testing.assert_frame_equal(a, split_study(_column(), n_splits=100, seed=1))
    assert not a.equals(split_study(_column(), n_splits=100, seed=2))
    assert a["average"].mean() < min(a["p1"].mean(), a["p2"].mean())


def test_bad_input():
    with pytest.raises(InvalidInputError, match="fraction"):
        split_study(_column(), fraction=0.6)
    with pytest.raises(InvalidInputError, match="n_splits"):
        split_study(_column(), n_splits=1)
    with pytest.raises(InvalidInputError, match="missing values"):
        numerical_minimiser(pd.Series(["a", None, "b"] * 10, name="o"))
