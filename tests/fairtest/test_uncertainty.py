"""Bootstrap standard errors of the fidelity scores (fusionlib.fairtest.uncertainty): the
count-based scores are the metric objects' scores, and the replicates are seeded."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.uncertainty import fidelity_bootstrap, fidelity_point, fidelity_se
from fusionlib.metrics.association import dcc_matrix
from fusionlib.metrics.fidelity import ContingencySimilarity, JointKL, TVComplement


def _tables(seed: int = 0, n: int = 300, shift: float = 0.0):
    rng = np.random.default_rng(seed)

    def draw(m, s):
        a = rng.choice(["a0", "a1", "a2"], size=m, p=[0.5 - s, 0.3, 0.2 + s])
        y = np.where(rng.random(m) < 0.3 + 0.4 * (a == "a0"), "1", "0")
        c = rng.choice(["x", "y"], size=m)
        return pd.DataFrame({"a": a, "y": y, "c": c})

    return draw(n, 0.0), draw(n + 17, shift)


@pytest.mark.parametrize("shift", [0.0, 0.15])
def test_point_scores_are_the_metric_objects_scores(shift):
    real, syn = _tables(shift=shift)
    got = fidelity_point(real, syn, protected=["a"], label="y")
    dcc = dcc_matrix(real, syn).to_numpy()
    want = {"1-TVD": TVComplement().compute(real, syn),
            "CS": ContingencySimilarity().compute(real, syn),
            "DCC": dcc[np.tril_indices(len(dcc), -1)].mean(),
            "KL (a)": JointKL("a", "y").compute(real, syn)}
    assert set(got) == set(want)
    for k, v in want.items():
        assert_allclose(got[k], v, rtol=1e-12, atol=1e-15, err_msg=k)


def test_a_category_only_one_table_has_is_scored_like_the_metric_objects():
    real, syn = _tables()
    syn.loc[:4, "c"] = "z"  # a category the real table lacks
    got = fidelity_point(real, syn, protected=["a"], label="y")
    assert_allclose(got["CS"], ContingencySimilarity().compute(real, syn), rtol=1e-12)
    assert_allclose(got["1-TVD"], TVComplement().compute(real, syn), rtol=1e-12)


def test_replicates_same_seed_same_other_seed_other():
    real, syn = _tables(shift=0.1)
    a = fidelity_bootstrap(real, syn, protected=["a"], label="y", n_boot=30, seed=1)
    b = fidelity_bootstrap(real, syn, protected=["a"], label="y", n_boot=30, seed=1)
    c = fidelity_bootstrap(real, syn, protected=["a"], label="y", n_boot=30, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert list(a.columns) == ["1-TVD", "CS", "DCC", "KL (a)"] and len(a) == 30


def test_se_shrinks_with_the_table_sizes_like_one_over_root_n():
    """Quadrupling both tables halves the standard error of 1-TVD (a mean of |differences| of
    two proportions) up to Monte Carlo noise: the se measures sampling, not the model."""
    small = fidelity_se(*_tables(n=400, shift=0.15), protected=["a"], label="y", n_boot=400,
                        seed=0)
    large = fidelity_se(*_tables(n=1600, shift=0.15), protected=["a"], label="y", n_boot=400,
                        seed=0)
    ratio = small["1-TVD"] / large["1-TVD"]
    assert 1.6 < ratio < 2.5


def test_bad_input_is_refused_with_the_fix():
    real, syn = _tables()
    with pytest.raises(InvalidInputError, match="n_boot"):
        fidelity_bootstrap(real, syn, protected=["a"], label="y", n_boot=1, seed=0)
    with pytest.raises(InvalidInputError, match="protected attributes and label"):
        fidelity_point(real, syn, protected=["race"], label="y")
