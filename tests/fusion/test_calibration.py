"""Tests of calibration to external aggregate targets (seed 000, Appendix I, validation)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.calibration import achieved_totals, calibrate
from fusionlib.rng import numpy_rng

TWO_BY_TWO = pd.DataFrame({"sex": ["F", "F", "M", "M"], "region": ["N", "S", "N", "S"]})
TWO_BY_TWO_TARGETS = {"counts": {"sex": {"F": 4, "M": 6}, "region": {"N": 5, "S": 5}}}
TWO_BY_TWO_D = [1.0, 2.0, 3.0, 4.0]  # the initial table [[1, 2], [3, 4]]


def survey(n: int = 600, seed: int = 0) -> pd.DataFrame:
    r = numpy_rng(seed, "calibration-test")
    return pd.DataFrame({
        "filing": r.choice(["single", "joint", "head"], n, p=[0.5, 0.3, 0.2]),
        "bracket": r.integers(1, 5, n).astype(float),
        "income": r.lognormal(10.5, 0.8, n),
        "gain": r.normal(0.0, 5000.0, n),  # both signs, like capital gains and losses
    })


TARGETS = {
    "counts": {"filing": {"single": 9.0e5, "joint": 7.0e5, "head": 4.0e5},
               "bracket": {1: 5.0e5, 2: 6.0e5, 3: 5.0e5, 4: 4.0e5}},
    "totals": {"income": {"filing=joint": 4.0e10, "bracket=4&filing=single": 1.2e10,
                          "all": 9.0e10},
               "gain": {"all": 2.0e8}},
}


# ------------------------------------------------------------------ raking: hand-worked 2 x 2
def test_raking_one_sweep_by_hand():
    # rows (sex) first: [1, 2] * 4/3 = [4/3, 8/3]; [3, 4] * 6/7 = [18/7, 24/7];
    # then columns: N sums 82/21 -> * 105/82, S sums 128/21 -> * 105/128, giving
    # [[70/41, 35/16], [135/41, 45/16]]; the row F now sums 2555/656 != 4, so not converged.
    r = calibrate(TWO_BY_TWO, TWO_BY_TWO_TARGETS, weights=TWO_BY_TWO_D, max_iter=1)
    np.testing.assert_allclose(r.weights, [70 / 41, 35 / 16, 135 / 41, 45 / 16], rtol=1e-15)
    assert (r.n_iter, r.converged) == (1, False)
    assert r.residuals.loc[0, "achieved"] == pytest.approx(2555 / 656, rel=1e-15)


def test_raking_converges_to_the_closed_form():
    # raking keeps the cross-product ratio w11 w22 / (w12 w21) = 1*4 / (2*3) = 2/3; with
    # w11 = x, w12 = 4 - x, w21 = 5 - x, w22 = 1 + x: 3x(1 + x) = 2(4 - x)(5 - x), i.e.
    # x^2 + 21x - 40 = 0, x = (-21 + sqrt(601)) / 2.
    r = calibrate(TWO_BY_TWO, TWO_BY_TWO_TARGETS, weights=TWO_BY_TWO_D, tol=1e-13)
    x = (-21 + math.sqrt(601)) / 2
    np.testing.assert_allclose(r.weights, [x, 4 - x, 5 - x, 1 + x], rtol=1e-12)
    w = r.weights
    assert w[0] * w[3] / (w[1] * w[2]) == pytest.approx(2 / 3, rel=1e-12)
    assert r.converged and r.max_rel_error <= 1e-13


# ------------------------------------------------------------------ raking: general targets
@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_raking_meets_counts_and_totals_within_tol(tol):
    df = survey()
    r = calibrate(df, TARGETS, tol=tol)
    assert r.converged and r.n_iter > 1
    assert (r.residuals["rel_error"].abs() <= tol).all()
    assert (r.weights > 0).all()
    assert list(r.residuals["group"][:3]) == ["filing=single", "filing=joint", "filing=head"]


def test_raking_is_the_minimum_kl_solution():
    # the I-projection has the form w = d exp(X lambda): log(w / d) lies in the span of X
    df = survey()
    r = calibrate(df, TARGETS)
    d = np.full(len(df), 2.0e6 / len(df))
    cols = [(df["filing"] == c) * 1.0 for c in ("single", "joint", "head")]
    cols += [(df["bracket"] == b) * 1.0 for b in (1, 2, 3, 4)]
    cols += [df["income"] * (df["filing"] == "joint"),
             df["income"] * ((df["bracket"] == 4) & (df["filing"] == "single")),
             df["income"], df["gain"]]
    x = np.column_stack(cols) / np.abs(np.column_stack(cols)).max(axis=0)
    coef = np.linalg.lstsq(x, np.log(r.weights / d), rcond=None)[0]
    assert np.abs(x @ coef - np.log(r.weights / d)).max() < 1e-8


def test_raking_agrees_with_ipfn():
    pytest.importorskip("ipfn")
    df = survey()
    counts = {"counts": TARGETS["counts"]}
    ours = calibrate(df, counts, tol=1e-12)
    theirs = calibrate(df, counts, tol=1e-12, backend="ipfn")
    assert ours.converged and theirs.converged
    np.testing.assert_allclose(theirs.weights, ours.weights, rtol=1e-10)


def test_same_input_same_output():
    df = survey()
    for method in ("raking", "linear"):
        a, b = calibrate(df, TARGETS, method=method), calibrate(df, TARGETS, method=method)
        assert np.array_equal(a.weights, b.weights) and a.n_iter == b.n_iter
        pd.testing.assert_frame_equal(a.residuals, b.residuals)


def test_jointly_infeasible_targets_do_not_converge():
    # 10 units in group A but an income total over A above 10 x the largest income in A:
    # impossible with positive weights (raking reports it); linear reaches it with
    # negative weights
    df = pd.DataFrame({"g": ["A", "A", "B", "B"], "income": [1.0, 2.0, 1.0, 1.0]})
    targets = {"counts": {"g": {"A": 10, "B": 10}}, "totals": {"income": {"g=A": 50.0}}}
    r = calibrate(df, targets, max_iter=200)
    assert not r.converged and r.n_iter == 200 and (r.weights > 0).all()
    lin = calibrate(df, targets, method="linear")
    assert lin.converged and lin.n_negative == 1


# ------------------------------------------------------------------ linear (GREG)
def test_linear_single_total_is_the_closed_form():
    # one total: w_i = d (1 + y_i lambda), lambda = (T - sum d y) / (sum d y^2)
    y = np.array([1.0, 2.0, 3.0, 4.0])
    df = pd.DataFrame({"y": y})
    r = calibrate(df, {"totals": {"y": {"all": 12.0}}}, method="linear")
    lam = (12.0 - y.sum()) / (y**2).sum()
    np.testing.assert_allclose(r.weights, 1 + y * lam, rtol=1e-14)
    assert r.residuals.loc[0, "achieved"] == pytest.approx(12.0, rel=1e-14)


def test_linear_hits_the_targets_exactly():
    df = survey()
    r = calibrate(df, TARGETS, method="linear")
    assert r.converged and r.n_iter == 1
    assert r.max_rel_error < 1e-12
    # and it is the chi-square closed form d (1 + X lambda) on a full-rank target set
    targets = {"counts": {"filing": TARGETS["counts"]["filing"]}, "totals": TARGETS["totals"]}
    r = calibrate(df, targets, method="linear")
    d = np.full(len(df), 2.0e6 / len(df))
    x = np.column_stack([(df["filing"] == c) * 1.0 for c in ("single", "joint", "head")]
                        + [df["income"] * (df["filing"] == "joint"),
                           df["income"] * ((df["bracket"] == 4) & (df["filing"] == "single")),
                           df["income"], df["gain"]])
    t = np.array([9.0e5, 7.0e5, 4.0e5, 4.0e10, 1.2e10, 9.0e10, 2.0e8])
    lam = np.linalg.solve(x.T @ (d[:, None] * x), t - x.T @ d)
    np.testing.assert_allclose(r.weights, d * (1 + x @ lam), rtol=1e-8)


def test_achieved_totals_before_calibration():
    table = achieved_totals(TWO_BY_TWO, TWO_BY_TWO_TARGETS, weights=TWO_BY_TWO_D)
    assert list(table["achieved"]) == [3.0, 7.0, 4.0, 6.0]
    assert list(table["rel_error"]) == pytest.approx([-0.25, 7 / 6 - 1, -0.2, 0.2])
    # default weights: uniform, N / n = 10 / 4 each
    assert list(achieved_totals(TWO_BY_TWO, TWO_BY_TWO_TARGETS)["achieved"]) == [5.0] * 4


def test_numeric_categories_match_by_value():
    df = pd.DataFrame({"bracket": [1.0, 1.0, 2.0], "y": [1.0, 2.0, 3.0]})
    r = calibrate(df, {"counts": {"bracket": {1: 4, "2": 2}},
                       "totals": {"y": {"bracket=1": 5.0}}})
    assert r.converged
    assert r.residuals["achieved"].tolist() == pytest.approx([4.0, 2.0, 5.0])


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("targets, match", [
    ({"counts": {"nope": {"A": 1}}}, "'nope' is not a column"),
    ({"totals": {"nope": {"all": 1}}}, "'nope' is not a column"),
    ({"totals": {"y": {"nope=1": 1}}}, "'nope' is not a column"),
    ({"totals": {"g": {"all": 1}}}, "totals need a numeric column"),
    ({"counts": {"g": {"Z": 5}}}, "no record has g='Z'"),
    ({"totals": {"y": {"g=Z": 5}}}, "no record is in group 'g=Z'"),
    ({"counts": {"g": {"A": -1}}}, "counts must be > 0"),
    ({"counts": {"g": {"A": 0}}}, "counts must be > 0"),
    ({"counts": {"g": {"A": float("nan")}}}, "must be finite"),
    ({"counts": {"g": {"A": "many"}}}, "must be a number"),
    ({"totals": {"y": {"all": -5.0}}}, "positive weights cannot reach it"),
    ({"totals": {"y": {"g": 5.0}}}, "is not 'column=value'"),
    ({"counts": {"g": {"A": 2, "B": 2}}, "totals": {}, "weird": 1}, "keys 'counts'"),
    ({"counts": {"g": {"A": 2, "B": 2}, "h": {"x": 1, "y": 1}}}, "different population"),
    ({"counts": {"y": {1: 2, "1": 2}}}, "given twice"),
    ({}, "keys 'counts'"),
    ([("g", 1)], "keys 'counts'"),
])
def test_bad_targets_are_refused(targets, match):
    df = pd.DataFrame({"g": ["A", "B", "A"], "h": ["x", "y", "y"], "y": [1.0, 2.0, 3.0]})
    with pytest.raises(InvalidInputError, match=match):
        calibrate(df, targets)


def test_bad_records_and_options_are_refused():
    df = pd.DataFrame({"g": ["A", None, "B"], "y": [1.0, np.nan, 3.0]})
    with pytest.raises(InvalidInputError, match="column 'g' has 1 missing"):
        calibrate(df, {"counts": {"g": {"A": 1}}})
    with pytest.raises(InvalidInputError, match="column 'y' has 1 missing"):
        calibrate(df, {"totals": {"y": {"all": 1}}})
    ok = pd.DataFrame({"g": ["A", "B"]})
    counts = {"counts": {"g": {"A": 1, "B": 1}}}
    with pytest.raises(InvalidInputError, match="unknown method"):
        calibrate(ok, counts, method="entropy")
    with pytest.raises(InvalidInputError, match="weights must be 2 finite"):
        calibrate(ok, counts, weights=[1.0, -1.0])
    with pytest.raises(InvalidInputError, match="weights must be 2 finite"):
        calibrate(ok, counts, weights=[1.0])
    with pytest.raises(InvalidInputError, match="tol"):
        calibrate(ok, counts, tol=0)
    with pytest.raises(InvalidInputError, match="max_iter"):
        calibrate(ok, counts, max_iter=0)
    with pytest.raises(InvalidInputError, match="DataFrame"):
        calibrate(ok.to_numpy(), counts)
    with pytest.raises(InvalidInputError, match="supports method='raking' only"):
        calibrate(ok, counts, method="linear", backend="ipfn")


@pytest.mark.parametrize("weights", [["a", "b", "c", "d"], {"a": 1}, "1111", [[1, 2], [3, 4]]])
def test_non_numeric_initial_weights_are_an_input_error(weights):
    for call in (lambda: calibrate(TWO_BY_TWO, TWO_BY_TWO_TARGETS, weights=weights),
                 lambda: achieved_totals(TWO_BY_TWO, TWO_BY_TWO_TARGETS, weights=weights)):
        with pytest.raises(InvalidInputError, match="weights must be"):
            call()
