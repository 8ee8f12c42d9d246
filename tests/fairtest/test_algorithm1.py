"""Algorithm 1 of seed 002 as printed against our EM (fusionlib.fairtest.algorithm1)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.algorithm1 import (
    HAND_INSTANCE,
    compare_traces,
    em_as_printed,
    em_implementation_trace,
)

D1, D2, THETA0 = HAND_INSTANCE["D1"], HAND_INSTANCE["D2"], HAND_INSTANCE["theta0"]


def test_first_posterior_worked_by_hand():
    """Row (0, 0, 0) of D1 at t = 1: pi * p1 * p2 * p3 per state, normalised."""
    q = em_as_printed(D1, D2, THETA0, 1)[0]["q1"][0]
    num = np.array([0.6 * 0.7 * 0.6 * 0.8, 0.4 * 0.2 * 0.3 * 0.4])
    assert_allclose(q, num / num.sum(), rtol=1e-14)
    # row (1, 1) of D2: pi * p3 * p4
    q2 = em_as_printed(D1, D2, THETA0, 1)[0]["q2"][1]
    num = np.array([0.6 * 0.2 * 0.5, 0.4 * 0.6 * 0.9])
    assert_allclose(q2, num / num.sum(), rtol=1e-14)


def test_implementation_follows_the_printed_algorithm_step_by_step():
    printed = em_as_printed(D1, D2, THETA0, 4)
    implemented = em_implementation_trace(D1, D2, THETA0, 4)
    diffs = compare_traces(printed, implemented)
    assert len(diffs) == 4 * 8 and diffs["max_abs_diff"].max() < 1e-12
    loglik = [s["loglik"] for s in printed]
    assert np.all(np.diff(loglik) >= -1e-12)  # EM never lowers the likelihood


def test_the_comparison_can_fail():
    """Not vacuous: an implementation that misreads one value of D2 differs from the printed
    algorithm in q2 at t = 1 and in the parameters of the first M-step."""
    printed = em_as_printed(D1, D2, THETA0, 2)
    misread = [(0, 1), *D2[1:]]  # (0, 0) read as (0, 1)
    diffs = compare_traces(printed, em_implementation_trace(D1, misread, THETA0, 2))
    first = diffs[diffs["t"] == 1].set_index("quantity")["max_abs_diff"]
    assert first["q1"] < 1e-12 and first["q2"] > 1e-3
    assert first[["pi", "p3", "p4"]].min() > 1e-3


def test_theta_needs_every_table():
    with pytest.raises(InvalidInputError, match="pi and p1..p4"):
        em_as_printed(D1, D2, {"pi": [0.5, 0.5]}, 1)
    with pytest.raises(InvalidInputError, match="every value of x1"):
        em_implementation_trace([(0, 0, 0), (0, 1, 1)], D2, THETA0, 1)
