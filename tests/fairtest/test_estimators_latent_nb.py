"""Latent naive Bayes fitted by EM on two tables (seed 002, Section 3.1.3, Appendix A.2-A.3)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest import IndependentModel, LatentNaiveBayes

INTERNAL = pd.DataFrame({"o": ["a", "a", "a", "b"], "y": ["1", "1", "0", "1"]})
EXTERNAL = pd.DataFrame({"o": ["a", "b", "b", "b"], "s": ["m", "m", "f", "f"]})

# A known latent model: pi and p(x_i | z) (rows: categories, columns: z = 0, 1)
TRUE_PI = np.array([0.6, 0.4])
TRUE_THETA = {
    "x1": np.array([[0.8, 0.15, 0.05], [0.1, 0.2, 0.7]]).T,
    "x2": np.array([[0.9, 0.1], [0.2, 0.8]]).T,
    "x3": np.array([[0.85, 0.15], [0.1, 0.9]]).T,
    "x4": np.array([[0.7, 0.3], [0.15, 0.85]]).T,
}


def _draw(rng: np.random.Generator, n: int, columns) -> pd.DataFrame:
    z = rng.choice(2, size=n, p=TRUE_PI)
    out = {}
    for c in columns:
        cum = np.cumsum(TRUE_THETA[c], axis=0).T[z]  # (n, M)
        codes = (rng.random(n)[:, None] >= cum).sum(axis=1)
        out[c] = np.array([f"{c}{v}" for v in range(TRUE_THETA[c].shape[0])])[codes]
    return pd.DataFrame(out)


def test_one_latent_state_is_the_product_of_marginals_by_hand():
    model = LatentNaiveBayes(n_latent=1, n_restarts=1).fit(INTERNAL, EXTERNAL)
    # K = 1: p(o) pools counts, (3 + 1) / 8 = 1/2; p(y = 1) = 3/4; p(s = m) = 2/4
    rows = pd.DataFrame({"o": ["a", "b"], "y": ["1", "0"], "s": ["m", "f"]})
    expected = [0.5 * 0.75 * 0.5, 0.5 * 0.25 * 0.5]  # 3/16, 1/16
    assert_allclose(model.joint_proba(rows), expected, rtol=1e-10)


def test_one_latent_state_equals_independent_model_for_equal_sizes():
    lnb = LatentNaiveBayes(n_latent=1, n_restarts=1).fit(INTERNAL, EXTERNAL)
    ind = IndependentModel().fit(INTERNAL, EXTERNAL)
    grid = ind.proba_table(ind.columns_)
    assert_allclose(lnb.joint_proba(grid), grid["proba"], rtol=1e-10)


def test_one_latent_state_pools_overlap_counts_for_unequal_sizes():
    external = EXTERNAL.iloc[:2]  # o = a, b
    model = LatentNaiveBayes(n_latent=1, n_restarts=1).fit(INTERNAL, external)
    # pooled soft counts (Appendix A.3.5): p(o = a) = (3 + 1) / (4 + 2) = 2/3
    table = model.proba_table(["o"])
    assert_allclose(table["proba"], [2 / 3, 1 / 3], rtol=1e-10)


def test_joint_proba_matches_the_fitted_tables():
    rng = np.random.default_rng(0)
    internal, external = _draw(rng, 300, ["x1", "x2", "x3"]), _draw(rng, 200, ["x3", "x4"])
    model = LatentNaiveBayes(n_latent=3, n_restarts=2, seed=1).fit(internal, external)
    cols = model.columns_
    cells = list(itertools.product(*[model.categories_[c] for c in cols]))
    # independent implementation: sum_k pi_k prod_i p(x_i | k), looped in Python
    expected = [
        sum(model.weights_[k] * np.prod([model.conditionals_[c].loc[v, k]
                                         for c, v in zip(cols, cell, strict=True)])
            for k in range(3))
        for cell in cells
    ]
    got = model.joint_proba(pd.DataFrame(cells, columns=cols))
    assert_allclose(got, expected, rtol=1e-10)
    assert_allclose(sum(expected), 1.0, rtol=1e-10)
    assert_allclose(model.proba_table(cols)["proba"], got, rtol=1e-10)


def test_em_log_likelihood_never_decreases():
    rng = np.random.default_rng(1)
    internal, external = _draw(rng, 2000, ["x1", "x2", "x3"]), _draw(rng, 1500, ["x3", "x4"])
    model = LatentNaiveBayes(n_latent=4, n_restarts=1, tol=0.0, max_iter=200).fit(
        internal, external
    )
    history = model.log_likelihood_history_
    assert len(history) == model.n_iter_ + 1
    assert 10 < model.n_iter_ <= 200
    # EM is monotone; allow only floating-point noise relative to the total
    assert np.all(np.diff(history) >= -1e-9 * abs(history[-1]))
    assert model.log_likelihood_ == history[-1]


def test_more_restarts_never_lower_the_kept_log_likelihood():
    rng = np.random.default_rng(2)
    internal, external = _draw(rng, 1000, ["x1", "x2", "x3"]), _draw(rng, 1000, ["x3", "x4"])
    one = LatentNaiveBayes(n_restarts=1, seed=5).fit(internal, external)
    five = LatentNaiveBayes(n_restarts=5, seed=5).fit(internal, external)
    # the first restart of both draws the same initial tables from the same seed
    assert five.log_likelihood_ >= one.log_likelihood_


def test_recovers_marginals_and_cross_table_pair_of_a_known_latent_model():
    rng = np.random.default_rng(3)
    internal = _draw(rng, 20_000, ["x1", "x2", "x3"])
    external = _draw(rng, 20_000, ["x3", "x4"])  # other individuals
    model = LatentNaiveBayes(n_latent=2, seed=0).fit(internal, external)
    for col in ("x1", "x3", "x4"):
        true = TRUE_THETA[col] @ TRUE_PI
        assert_allclose(model.proba_table([col])["proba"], true, atol=0.01)
    # x1 and x4 are never observed together; the model links them through Z
    true_pair = np.einsum("k,ik,jk->ij", TRUE_PI, TRUE_THETA["x1"], TRUE_THETA["x4"])
    assert_allclose(model.proba_table(["x1", "x4"])["proba"], true_pair.ravel(), atol=0.02)


def test_sample_frequencies_converge_to_joint_proba():
    rng = np.random.default_rng(4)
    internal, external = _draw(rng, 500, ["x1", "x2", "x3"]), _draw(rng, 500, ["x3", "x4"])
    model = LatentNaiveBayes(n_latent=2, seed=0).fit(internal, external)
    n = 200_000
    freq = model.sample(n, seed=1).value_counts(normalize=True).rename("freq").reset_index()
    grid = model.proba_table(model.columns_)
    merged = grid.merge(freq, on=model.columns_, how="left").fillna(0.0)
    # binomial sd of a cell frequency <= sqrt(0.25 / n) = 0.0011; 0.006 is > 5 sd
    assert_allclose(merged["freq"], merged["proba"], atol=0.006)


def test_two_column_overlap_pools_both_columns():
    rng = np.random.default_rng(5)
    internal, external = _draw(rng, 800, ["x1", "x2", "x3"]), _draw(rng, 800, ["x2", "x3", "x4"])
    model = LatentNaiveBayes(n_latent=2, seed=0).fit(internal, external)
    assert model.overlap_ == ["x2", "x3"]
    assert model.columns_ == ["x1", "x2", "x3", "x4"]
    grid = model.proba_table(model.columns_)
    assert_allclose(grid["proba"].sum(), 1.0, rtol=1e-10)
    sample = model.sample(1000, seed=0)
    assert list(sample.columns) == model.columns_


def test_fit_and_sample_are_deterministic_per_seed():
    rng = np.random.default_rng(6)
    internal, external = _draw(rng, 500, ["x1", "x2", "x3"]), _draw(rng, 500, ["x3", "x4"])
    options = dict(n_restarts=2, max_iter=50)  # identical for all three fits: only seed varies
    a = LatentNaiveBayes(seed=1, **options).fit(internal, external)
    b = LatentNaiveBayes(seed=1, **options).fit(internal, external)
    c = LatentNaiveBayes(seed=2, **options).fit(internal, external)
    assert_allclose(a.weights_, b.weights_, rtol=0)
    assert_allclose(a.log_likelihood_history_, b.log_likelihood_history_, rtol=0)
    assert not np.allclose(np.sort(a.weights_), np.sort(c.weights_), atol=1e-6)
    pd.testing.assert_frame_equal(a.sample(300, seed=4), b.sample(300, seed=4))
    assert not a.sample(300, seed=4).equals(a.sample(300, seed=5))


def test_total_tolerance_runs_at_least_as_long_as_mean_tolerance():
    rng = np.random.default_rng(7)
    internal, external = _draw(rng, 1500, ["x1", "x2", "x3"]), _draw(rng, 1500, ["x3", "x4"])
    total = LatentNaiveBayes(n_restarts=1, seed=0, tol=1e-3).fit(internal, external)
    mean = LatentNaiveBayes(n_restarts=1, seed=0, tol=1e-3, tol_on="mean").fit(internal, external)
    assert total.tol_on == "total"  # the companion code's rule is the default
    # same start; "total" stops at the first change < 1e-3 nats, "mean" at < 1e-3 * 3000 nats
    steps_total = np.diff(total.log_likelihood_history_)
    steps_mean = np.diff(mean.log_likelihood_history_)
    assert total.n_iter_ > mean.n_iter_
    assert_allclose(total.log_likelihood_history_[: mean.n_iter_ + 1],
                    mean.log_likelihood_history_, rtol=1e-12)
    assert total.n_iter_ < 500  # converged, not stopped by max_iter
    assert steps_total[-1] < 1e-3 <= steps_total[:-1].min()
    assert steps_mean[-1] < 1e-3 * 3000 <= steps_mean[:-1].min()


def test_unknown_tolerance_rule_is_rejected():
    with pytest.raises(InvalidInputError, match="tol_on must be 'total'.*'mean'"):
        LatentNaiveBayes(tol_on="relative").fit(INTERNAL, EXTERNAL)


def test_unseen_values_get_zero_probability():
    model = LatentNaiveBayes(n_latent=2, seed=0).fit(INTERNAL, EXTERNAL)
    rows = pd.DataFrame({"o": ["a", "z"], "y": ["1", "1"], "s": ["m", "m"]})
    p = model.joint_proba(rows)
    assert p[0] > 0
    assert p[1] == 0.0
