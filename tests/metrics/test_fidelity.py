"""Tests of the fidelity metrics of seed 002 (fusionlib.metrics.fidelity)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.stats import entropy

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.fidelity import (
    ContingencySimilarity,
    DiscriminatorMeasure,
    JointKL,
    TVComplement,
    check_pair,
)
from tests.fairtest.conftest import frame as _frame


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


@pytest.mark.parametrize("seed", [0, 1])
def test_sdmetrics_calling_convention_gives_sdmetrics_numbers(seed):
    """TVComplement.compute(column, column) and ContingencySimilarity.compute(pair, pair), class
    methods with SDMetrics' argument names, as SDMetrics' metrics are called."""
    from sdmetrics.column_pairs import ContingencySimilarity as SdCS
    from sdmetrics.single_column import TVComplement as SdTV

    rng = np.random.default_rng(seed)
    real = pd.DataFrame({"p": rng.choice(list("abc"), 80), "q": rng.choice(list("xy"), 80)})
    syn = pd.DataFrame({"p": rng.choice(list("abcd"), 60), "q": rng.choice(list("xy"), 60)})
    # rel 1e-7: SDMetrics adds 1e-6 to the real count of a category seen only in synthetic rows
    assert TVComplement.compute(real_data=real["p"], synthetic_data=syn["p"]) == \
        pytest.approx(SdTV.compute(real_data=real["p"], synthetic_data=syn["p"]), rel=1e-7)
    assert ContingencySimilarity.compute(real_data=real, synthetic_data=syn) == \
        pytest.approx(SdCS.compute(real_data=real, synthetic_data=syn), rel=1e-7)
    assert TVComplement().compute(real, syn) == TVComplement.compute(real, syn)  # instances too


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
    # Smoothed (epsilon = 1e-6 on every cell, then renormalised by 1 + 4e-6), with the roles
    # swapped: "synthetic" = the uniform table, (.25 + 1e-6) / (1 + 4e-6) = .25 exactly per cell;
    # "real" = (.5 + e, .25 + e, e, .25 + e) / (1 + 4e-6), e = 1e-6. Then
    # KL = .25 [ln(.25 / .5) + 2 ln(.25 / .25) + ln(.25 / 1e-6)] + O(1e-6)
    #    = .25 ln(.125 / 1e-6) = .25 ln(125000) = .25 * 11.73607 = 2.93402 nats
    smoothed = JointKL("A", "Y", epsilon=1e-6).compute(syn, real)
    assert smoothed == pytest.approx(0.25 * np.log(0.125 / 1e-6), rel=1e-5)


def test_kl_matches_scipy_entropy_on_smoothed_tables():
    real, syn = _frame(300, 7), _frame(300, 8, shift=0.5)
    kl = JointKL("b", "c", epsilon=1e-3)
    p_real, p_syn = kl.joint_tables(real, syn)
    assert_allclose(kl.compute(real, syn), entropy(p_syn, p_real), rtol=1e-12)


def test_kl_rejects_negative_epsilon():
    df = _frame(20, 0)
    with pytest.raises(InvalidInputError, match="epsilon"):
        JointKL("a", "c", epsilon=-1.0).compute(df, df)


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


@pytest.mark.parametrize("options, match", [
    (dict(n_estimators=0), "n_estimators"),
    (dict(n_estimators=2.5), "n_estimators"),
    (dict(max_rows=0), "max_rows"),
    (dict(max_rows=-5), "max_rows"),
    (dict(seed=None), "seed"),
])
def test_discriminator_rejects_bad_forest_size_row_cap_and_seed(options, match):
    real, syn = _frame(50, 18), _frame(50, 19)
    with pytest.raises(InvalidInputError, match=match):
        DiscriminatorMeasure(n_seeds=1, **options).compute(real, syn)


# ---------------------------------------------------------------- input validation
def test_check_pair_rejects_missing_values_and_names_the_fix():
    real = pd.DataFrame({"a": ["x", "y", None]})
    with pytest.raises(InvalidInputError, match="1 missing values.*dropna"):
        check_pair(real, pd.DataFrame({"a": ["x", "y", "y"]}))
    with pytest.raises(InvalidInputError, match="synthetic table has 1 missing"):
        TVComplement().compute(pd.DataFrame({"a": ["x", "y"]}), pd.DataFrame({"a": [np.nan, "y"]}))


def test_check_pair_rejects_duplicate_column_names():
    dup = pd.DataFrame([["x", "y"], ["y", "x"]], columns=["a", "a"])
    with pytest.raises(InvalidInputError, match="repeats column names.*'a'"):
        check_pair(dup, dup)
    with pytest.raises(InvalidInputError, match="repeats column names"):
        ContingencySimilarity().compute(pd.DataFrame({"a": ["x", "y"]}), dup)


def test_kl_with_absent_protected_attribute_or_label_names_the_column():
    df = pd.DataFrame({"A": ["u", "p"], "Y": ["0", "1"]})
    with pytest.raises(InvalidInputError, match="protected attribute 'race'.*real"):
        JointKL("race", "Y").compute(df, df)
    with pytest.raises(InvalidInputError, match="label 'income' is not a column of the synthetic"):
        JointKL("A", "income").compute(df.assign(income="0"), df)
