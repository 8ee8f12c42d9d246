"""Independent-model baseline (seed 002, Section 4.3)."""

from __future__ import annotations

import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest import IndependentModel

INTERNAL = pd.DataFrame({"o": ["a", "a", "a", "b"], "y": ["1", "1", "0", "1"]})
EXTERNAL = pd.DataFrame({"o": ["a", "b"], "s": ["m", "f"]})


def test_independent_model_exact_joint_by_hand():
    model = IndependentModel().fit(INTERNAL, EXTERNAL)
    # p(o = a) = average of proportions = (3/4 + 1/2) / 2 = 5/8; p(y = 1) = 3/4; p(s = m) = 1/2
    rows = pd.DataFrame({"o": ["a", "b", "a"], "y": ["1", "0", "0"], "s": ["m", "f", "f"]})
    expected = [5 / 8 * 3 / 4 * 1 / 2, 3 / 8 * 1 / 4 * 1 / 2, 5 / 8 * 1 / 4 * 1 / 2]
    assert_allclose(model.joint_proba(rows), expected, rtol=1e-12)
    assert_allclose(model.marginals_["o"].to_numpy(), [5 / 8, 3 / 8])


def test_independent_model_table_is_outer_product_and_sums_to_one():
    model = IndependentModel().fit(INTERNAL, EXTERNAL)
    table = model.proba_table(["y", "s"])
    # y in {0, 1} x s in {f, m}: p = (1/4 * 1/2, 1/4 * 1/2, 3/4 * 1/2, 3/4 * 1/2)
    assert_allclose(table["proba"], [1 / 8, 1 / 8, 3 / 8, 3 / 8], rtol=1e-12)
    assert table[["y", "s"]].values.tolist() == [["0", "f"], ["0", "m"], ["1", "f"], ["1", "m"]]


def test_independent_model_sampling_converges_and_is_seeded():
    model = IndependentModel().fit(INTERNAL, EXTERNAL)
    n = 200_000
    sample = model.sample(n, seed=0)
    for col, marginal in model.marginals_.items():
        freq = sample[col].value_counts(normalize=True).reindex(marginal.index, fill_value=0)
        # binomial sd <= sqrt(0.25 / n) = 0.0011; 0.006 is > 5 sd
        assert_allclose(freq.to_numpy(), marginal.to_numpy(), atol=0.006)
    pd.testing.assert_frame_equal(model.sample(100, seed=1), model.sample(100, seed=1))
    assert not model.sample(100, seed=1).equals(model.sample(100, seed=2))


def test_independent_model_multi_column_overlap():
    internal = pd.DataFrame({"o1": ["p", "q"], "o2": ["u", "u"], "y": ["0", "1"]})
    external = pd.DataFrame({"o1": ["p", "p", "q"], "o2": ["u", "u", "u"], "s": ["m", "f", "f"]})
    model = IndependentModel().fit(internal, external)
    # p(o1 = p) = (1/2 + 2/3) / 2 = 7/12
    assert_allclose(model.marginals_["o1"].to_numpy(), [7 / 12, 5 / 12])
    assert_allclose(model.proba_table(model.columns_)["proba"].sum(), 1.0, rtol=1e-12)
    with pytest.raises(InvalidInputError, match="columns must be"):
        model.proba_table(["nope"])
