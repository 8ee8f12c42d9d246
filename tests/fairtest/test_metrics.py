"""Tests of the fidelity metrics of seed 002 (fusionlib.fairtest.metrics)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.stats import entropy

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.metrics import (
    ContingencySimilarity,
    DiscriminatorMeasure,
    JointKL,
    TVComplement,
    cramers_v,
    cramers_v_matrix,
    dcc_matrix,
    plot_dcc_heatmaps,
)


def _frame(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """Three dependent categorical columns; ``shift`` moves mass towards the last categories."""
    rng = np.random.default_rng(seed)
    p = np.array([0.5, 0.3, 0.2]) + shift * np.array([-1.0, 0.0, 1.0]) * 0.4
    a = rng.choice(["a0", "a1", "a2"], size=n, p=p)
    b = np.where(rng.random(n) < 0.7 - shift * 0.5, np.char.replace(a, "a", "b"), "b9")
    c = rng.choice(["x", "y"], size=n, p=[0.6 - 0.4 * shift, 0.4 + 0.4 * shift])
    return pd.DataFrame({"a": a, "b": b, "c": c}).astype(str)


# ---------------------------------------------------------------- TVComplement / CS
@pytest.mark.parametrize("metric", [TVComplement(), ContingencySimilarity()])
def test_identical_frames_give_optimum_one(metric):
    df = _frame(300, 0)
    assert metric.compute(df, df.copy()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("metric", [TVComplement(), ContingencySimilarity()])
def test_scores_lie_in_bounds_and_are_symmetric(metric):
    real, syn = _frame(200, 1), _frame(150, 2, shift=0.8)
    score = metric.compute(real, syn)
    assert metric.min_value <= score <= metric.max_value
    assert score == pytest.approx(metric.compute(syn, real), abs=1e-12)


@pytest.mark.parametrize("metric", [TVComplement(), ContingencySimilarity()])
def test_growing_shift_scores_worse(metric):
    real = _frame(4000, 3)
    scores = [metric.compute(real, _frame(4000, 4, shift=s)) for s in (0.0, 0.4, 0.9)]
    assert scores[0] > scores[1] > scores[2]


def test_tv_complement_hand_worked_value_with_category_only_in_one_frame():
    real = pd.DataFrame({"x": ["a", "a", "b", "b"], "y": ["u", "v", "u", "v"]})
    syn = pd.DataFrame({"x": ["a", "b", "b", "b"], "y": ["u", "u", "w", "w"]})
    # x: f_real = (a .5, b .5), f_syn = (a .25, b .75): 1 - 0.5 * (.25 + .25) = 0.75
    # y: f_real = (u .5, v .5, w 0), f_syn = (u .5, v 0, w .5): 1 - 0.5 * (0 + .5 + .5) = 0.5
    breakdown = TVComplement().compute_breakdown(real, syn)
    assert_allclose(breakdown[["x", "y"]].to_numpy(), [0.75, 0.5])
    assert TVComplement().compute(real, syn) == pytest.approx((0.75 + 0.5) / 2)


def test_contingency_similarity_hand_worked_value():
    real = pd.DataFrame({"x": ["a", "a", "b", "b"], "y": ["u", "v", "u", "v"]})
    syn = pd.DataFrame({"x": ["a", "a", "a", "b"], "y": ["u", "u", "v", "v"]})
    # P_real: (a,u) .25 (a,v) .25 (b,u) .25 (b,v) .25
    # P_syn:  (a,u) .50 (a,v) .25 (b,u) 0   (b,v) .25
    # 1 - 0.5 * (.25 + 0 + .25 + 0) = 0.75
    assert ContingencySimilarity().compute(real, syn) == pytest.approx(0.75)


def test_disjoint_supports_give_zero():
    real = pd.DataFrame({"x": ["a", "b"], "y": ["u", "u"]})
    syn = pd.DataFrame({"x": ["c", "d"], "y": ["w", "w"]})
    assert TVComplement().compute(real, syn) == pytest.approx(0.0)
    assert ContingencySimilarity().compute(real, syn) == pytest.approx(0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_sdmetrics_on_random_categorical_frames(seed):
    from sdmetrics.column_pairs import ContingencySimilarity as SdCS
    from sdmetrics.single_column import TVComplement as SdTV

    rng = np.random.default_rng(seed)
    cats = {"p": list("abcd"), "q": ["0", "1"], "r": list("uvwxyz")}
    real = pd.DataFrame({c: rng.choice(v[:-1], 120) for c, v in cats.items()})  # one level unseen
    syn = pd.DataFrame({c: rng.choice(v, 90) for c, v in cats.items()})
    ours_tv = TVComplement().compute_breakdown(real, syn)
    ours_cs = ContingencySimilarity().compute_breakdown(real, syn)
    assert_allclose(ours_tv.to_numpy(), [SdTV.compute(real[c], syn[c]) for c in cats], atol=1e-12)
    expected_cs = [SdCS.compute(real[[a, b]], syn[[a, b]]) for a, b in ours_cs.index]
    assert_allclose(ours_cs.to_numpy(), expected_cs, atol=1e-12)


def test_dtype_mismatch_raises_with_fix_in_message():
    real = pd.DataFrame({"y": [0, 1, 1]})
    syn = pd.DataFrame({"y": ["0", "1", "1"]})
    with pytest.raises(InvalidInputError, match="astype"):
        TVComplement().compute(real, syn)


def test_different_columns_raise():
    with pytest.raises(InvalidInputError, match="same columns"):
        TVComplement().compute(pd.DataFrame({"a": ["x"]}), pd.DataFrame({"b": ["x"]}))


def test_categorical_and_object_columns_compare_by_value():
    real = pd.DataFrame({"x": pd.Categorical(["a", "b"], categories=["a", "b", "c"])})
    syn = pd.DataFrame({"x": pd.Categorical(["a", "c"])})
    # f_real = (a .5, b .5, c 0), f_syn = (a .5, b 0, c .5): 1 - 0.5 * 1 = 0.5
    assert TVComplement().compute(real, syn) == pytest.approx(0.5)


# ---------------------------------------------------------------- KL
def test_kl_identical_joint_is_zero_and_positive_otherwise():
    real = _frame(500, 5)
    kl = JointKL("a", "c")
    assert kl.compute(real, real.sample(frac=1.0, random_state=0)) == pytest.approx(0.0, abs=1e-12)
    assert kl.compute(real, _frame(500, 6, shift=0.7)) > 0.0


def test_kl_hand_worked_value_and_direction():
    real = pd.DataFrame({"A": ["u", "u", "p", "p"], "Y": ["0", "1", "0", "1"]})
    syn = pd.DataFrame({"A": ["u", "u", "u", "p"], "Y": ["0", "0", "1", "1"]})
    # p_real = (u0 .25, u1 .25, p0 .25, p1 .25); p_syn = (u0 .5, u1 .25, p0 0, p1 .25)
    # KL(syn || real) = .5 ln(.5/.25) + .25 ln 1 + 0 + .25 ln 1 = 0.5 ln 2 = 0.34657
    assert JointKL("A", "Y", epsilon=0.0).compute(real, syn) == pytest.approx(0.5 * np.log(2))
    # the reverse direction has a real cell missing from syn: infinite without smoothing
    assert JointKL("A", "Y", epsilon=0.0).compute(syn, real) == np.inf
    smoothed = JointKL("A", "Y", epsilon=1e-6).compute(syn, real)
    assert np.isfinite(smoothed) and smoothed > 1.0


def test_kl_matches_scipy_entropy_on_smoothed_tables():
    real, syn = _frame(300, 7), _frame(300, 8, shift=0.5)
    kl = JointKL("b", "c", epsilon=1e-3)
    p_real, p_syn = kl.joint_tables(real, syn)
    assert_allclose(kl.compute(real, syn), entropy(p_syn, p_real), rtol=1e-12)


def test_kl_rejects_negative_epsilon():
    df = _frame(20, 0)
    with pytest.raises(InvalidInputError, match="epsilon"):
        JointKL("a", "c", epsilon=-1.0).compute(df, df)


# ---------------------------------------------------------------- Cramér's V / DCC
def test_cramers_v_hand_worked_two_by_two():
    # table [[3, 1], [1, 3]]: V = phi = |ad - bc| / sqrt(r1 r2 c1 c2) = (9 - 1) / sqrt(4^4) = 0.5
    x = pd.Series(["a"] * 4 + ["b"] * 4)
    y = pd.Series(["u", "u", "u", "v", "u", "v", "v", "v"])
    assert cramers_v(x, y) == pytest.approx(0.5)


def test_cramers_v_matches_chi_square_formula():
    from scipy.stats import chi2_contingency

    df = _frame(400, 20, shift=0.3)
    table = pd.crosstab(df["a"], df["b"]).to_numpy()
    chi2 = chi2_contingency(table, correction=False)[0]
    expected = np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1)))
    assert cramers_v(df["a"], df["b"]) == pytest.approx(expected, rel=1e-12)


def test_cramers_v_extremes_and_constant_column():
    x = pd.Series(list("abcabc"))
    assert cramers_v(x, x.map({"a": "1", "b": "2", "c": "3"})) == pytest.approx(1.0)
    assert cramers_v(pd.Series(list("aabb")), pd.Series(list("uvuv"))) == pytest.approx(0.0)
    assert cramers_v(x, pd.Series(["k"] * 6)) == 0.0


def test_dcc_is_zero_for_identical_data_and_symmetric():
    real, syn = _frame(300, 9), _frame(300, 10, shift=0.6)
    assert_allclose(dcc_matrix(real, real).to_numpy(), 0.0, atol=1e-12)
    d = dcc_matrix(real, syn)
    assert_allclose(d.to_numpy(), d.to_numpy().T)
    assert (d.to_numpy() >= 0).all() and (d.to_numpy() <= 1).all()
    expected = abs(cramers_v(syn["a"], syn["b"]) - cramers_v(real["a"], real["b"]))
    assert d.loc["a", "b"] == pytest.approx(expected)
    assert_allclose(np.diag(cramers_v_matrix(real)), 1.0)


def test_plot_dcc_heatmaps_returns_one_axis_per_method():
    real = _frame(100, 0)
    fig = plot_dcc_heatmaps({"m1": dcc_matrix(real, _frame(100, 1)),
                             "m2": dcc_matrix(real, _frame(100, 2))}, ncols=2)
    assert sum(ax.get_visible() for ax in fig.axes) == 3  # two heatmaps + colour bar


# ---------------------------------------------------------------- discriminator measure
def test_discriminator_near_half_for_same_distribution_and_high_for_shifted():
    dm = DiscriminatorMeasure(n_seeds=2, n_estimators=20)
    same = dm.compute(_frame(600, 11), _frame(600, 12))
    shifted = dm.compute(_frame(600, 11), _frame(600, 13, shift=1.0))
    assert same == pytest.approx(0.5, abs=0.08)
    assert shifted > same + 0.15
    assert dm.min_value <= same <= dm.max_value


def test_discriminator_is_deterministic_per_seed():
    real, syn = _frame(300, 14), _frame(300, 15, shift=0.3)
    a = DiscriminatorMeasure(n_seeds=2, n_estimators=10, seed=3).trial_scores(real, syn)
    b = DiscriminatorMeasure(n_seeds=2, n_estimators=10, seed=3).trial_scores(real, syn)
    c = DiscriminatorMeasure(n_seeds=2, n_estimators=10, seed=4).trial_scores(real, syn)
    assert_allclose(a, b)
    assert not np.allclose(a, c)


def test_discriminator_ordinal_encoding_and_bad_options():
    real, syn = _frame(200, 16), _frame(200, 17, shift=1.0)
    assert DiscriminatorMeasure(n_seeds=1, n_estimators=10, encoding="ordinal").compute(
        real, syn) > 0.6
    with pytest.raises(InvalidInputError, match="encoding"):
        DiscriminatorMeasure(encoding="bogus").compute(real, syn)
