"""Tests of the group fairness metrics and bootstrap of seed 002 (fusionlib.metrics.fairness)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.fairness import (
    bootstrap_fairness,
    bootstrap_mean_difference,
    confusion_counts,
    fairness_metrics,
    group_confusion,
    metrics_from_counts,
    plot_fairness_boxes,
)

# Tiny hand-made case: 10 rows, privileged g = 1.
#   unprivileged (g=0): y    = 1 1 1 0 0      privileged (g=1): y    = 1 1 0 0 0
#                       yhat = 1 0 0 1 0                        yhat = 1 1 1 0 0
G = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
Y = np.array([1, 1, 1, 0, 0, 1, 1, 0, 0, 0])
YHAT = np.array([1, 0, 0, 1, 0, 1, 1, 1, 0, 0])


def test_hand_computed_tiny_case():
    # unprivileged: selection 2/5, TPR 1/3 (1 of 3 positives predicted +), FPR 1/2
    # privileged:   selection 3/5, TPR 2/2 = 1,                           FPR 1/3
    # DI  = (2/5) / (3/5)                         = 2/3
    # EOD = 1/3 - 1                               = -2/3
    # AOD = 0.5 * [(1/2 - 1/3) + (1/3 - 1)] = 0.5 * (1/6 - 2/3) = -1/4
    m = fairness_metrics(Y, YHAT, G)
    assert m["DI"] == pytest.approx(2 / 3)
    assert m["EOD"] == pytest.approx(-2 / 3)
    assert m["AOD"] == pytest.approx(-0.25)


def test_confusion_counts_and_group_table():
    c = confusion_counts(Y, YHAT, G)
    assert c.shape == (2, 2, 2) and c.sum() == 10
    table = group_confusion(Y, YHAT, G)
    assert_array_equal(table[["n", "TP", "FP", "TN", "FN"]].to_numpy(),
                       [[5, 1, 1, 1, 2], [5, 2, 1, 2, 0]])
    assert_allclose(table["TPR"].to_numpy(), [1 / 3, 1.0])


def test_bool_inputs_equal_int_inputs():
    a = fairness_metrics(Y.astype(bool), YHAT.astype(bool), G.astype(bool))
    assert a == pytest.approx(fairness_metrics(Y, YHAT, G))


def test_group_with_no_rows_gives_nan_for_every_metric():
    m = fairness_metrics(Y, YHAT, np.ones_like(G))  # nobody unprivileged
    assert all(np.isnan(v) for v in m.values())


def test_group_with_no_positives_gives_nan_eod_and_aod_but_defined_di():
    y = Y.copy()
    y[G == 0] = 0  # unprivileged group has no true positives -> TPR_u undefined
    m = fairness_metrics(y, YHAT, G)
    assert np.isnan(m["EOD"]) and np.isnan(m["AOD"])
    assert m["DI"] == pytest.approx(2 / 3)  # selection rates do not depend on y


def test_zero_privileged_selection_rate_gives_nan_di():
    yhat = YHAT.copy()
    yhat[G == 1] = 0
    assert np.isnan(fairness_metrics(Y, yhat, G)["DI"])


def test_non_binary_or_mismatched_inputs_raise():
    with pytest.raises(InvalidInputError, match="binary"):
        fairness_metrics(Y * 2, YHAT, G)
    with pytest.raises(InvalidInputError, match="equal lengths"):
        fairness_metrics(Y[:-1], YHAT, G)
    with pytest.raises(InvalidInputError, match="unknown fairness metrics"):
        metrics_from_counts(confusion_counts(Y, YHAT, G), ["SPD?"])


def test_metrics_vectorise_over_leading_axes():
    c = confusion_counts(Y, YHAT, G)
    stacked = np.stack([c, c, c])
    out = metrics_from_counts(stacked)
    assert out["DI"].shape == (3,)
    assert_allclose(out["AOD"], -0.25)


def test_bootstrap_is_deterministic_per_seed():
    a = bootstrap_fairness(Y, YHAT, G, n_boot=50, seed=1)
    b = bootstrap_fairness(Y, YHAT, G, n_boot=50, seed=1)
    c = bootstrap_fairness(Y, YHAT, G, n_boot=50, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert a.shape == (50, 3)


def test_bootstrap_centres_on_point_estimate_and_matches_row_resampling():
    rng = np.random.default_rng(0)
    n = 2000
    g = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.2 * g).astype(int)
    yhat = np.where(rng.random(n) < 0.8, y, 1 - y)
    point = fairness_metrics(y, yhat, g)
    boot = bootstrap_fairness(y, yhat, g, n_boot=400, seed=3)
    # explicit row resampling, the textbook bootstrap, as an independent implementation
    idx = np.random.default_rng(4).integers(0, n, size=(400, n))
    rows = pd.DataFrame([fairness_metrics(y[i], yhat[i], g[i]) for i in idx])
    for m in ("DI", "AOD", "EOD"):
        assert boot[m].mean() == pytest.approx(point[m], abs=0.01)
        assert boot[m].std() == pytest.approx(rows[m].std(), rel=0.2)


def test_bootstrap_mean_difference_is_table9_quantity_and_counts_nan():
    real = pd.DataFrame({"DI": [0.8, 1.0], "AOD": [0.1, np.nan]})
    syn = pd.DataFrame({"DI": [0.5, 0.7], "AOD": [0.0, 0.2]})
    out = bootstrap_mean_difference(syn, real)
    # DI: |0.6 - 0.9| = 0.3 ; AOD: |0.1 - 0.1| = 0 (nan draw dropped from the real mean)
    assert_allclose(out.loc[["DI", "AOD"], "abs_diff"].to_numpy(), [0.3, 0.0], atol=1e-12)
    assert out.loc["AOD", "nan_real"] == 1
    # bootstrap standard deviations (ddof=1), nan draws dropped: sd of [0.5, 0.7] and [0.8, 1]
    assert_allclose(out.loc["DI", ["sd_synthetic", "sd_real"]].to_numpy(float),
                    [np.sqrt(0.02), np.sqrt(0.02)], atol=1e-12)
    assert np.isnan(out.loc["AOD", "sd_real"])  # one defined draw: no spread


def test_bootstrap_rejects_bad_n_boot():
    with pytest.raises(InvalidInputError, match="n_boot"):
        bootstrap_fairness(Y, YHAT, G, n_boot=0, seed=0)


def test_plot_fairness_boxes_one_panel_per_attribute_metric():
    boot = bootstrap_fairness(Y, YHAT, G, n_boot=20, seed=0)
    long = boot.melt(var_name="metric", value_name="value").assign(attribute="sex")
    fig = plot_fairness_boxes({"Real test": long, "Indep": long},
                              [("sex", "DI"), ("sex", "AOD")],
                              kinds={"Real test": "real", "Indep": "baseline"})
    assert len(fig.axes) == 2


@pytest.mark.parametrize("which", [0, 1, 2])
def test_missing_values_in_any_input_raise_with_the_fix(which):
    arrays = [Y.astype(float), YHAT.astype(float), G.astype(float)]
    arrays[which][3] = np.nan
    name = ("y_true", "y_pred", "privileged")[which]
    with pytest.raises(InvalidInputError, match=f"{name} has 1 missing values.*drop"):
        fairness_metrics(*arrays)
    with pytest.raises(InvalidInputError, match="missing values"):
        bootstrap_fairness(*arrays, n_boot=5, seed=0)


def test_object_inputs_with_none_raise_missing_values():
    y = Y.astype(object)
    y[0] = None
    with pytest.raises(InvalidInputError, match="y_true has 1 missing values"):
        fairness_metrics(y, YHAT, G)


@pytest.mark.parametrize("seed", [None, 1.5, True, "0"])
def test_bootstrap_requires_an_int_seed(seed):
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        bootstrap_fairness(Y, YHAT, G, n_boot=5, seed=seed)


def test_bootstrap_accepts_numpy_integer_seed():
    pd.testing.assert_frame_equal(bootstrap_fairness(Y, YHAT, G, n_boot=5, seed=np.int64(3)),
                                  bootstrap_fairness(Y, YHAT, G, n_boot=5, seed=3))


def test_bootstrap_mean_difference_rejects_frames_with_different_metrics():
    real = pd.DataFrame({"DI": [0.8, 1.0], "AOD": [0.1, 0.0]})
    with pytest.raises(InvalidInputError, match="only in synthetic: \\['EOD'\\].*only in real: "
                                                "\\['AOD'\\]"):
        bootstrap_mean_difference(pd.DataFrame({"DI": [0.5], "EOD": [0.1]}), real)
    with pytest.raises(InvalidInputError, match="same metric columns"):
        bootstrap_mean_difference(pd.DataFrame({"x": [1.0]}), real)


def test_bootstrap_mean_difference_reports_a_metric_undefined_in_every_draw():
    real = pd.DataFrame({"DI": [np.nan, np.nan]})
    out = bootstrap_mean_difference(pd.DataFrame({"DI": [0.5, 0.7]}), real)
    assert np.isnan(out.loc["DI", "abs_diff"]) and out.loc["DI", "nan_real"] == 2


@pytest.mark.parametrize("call", [fairness_metrics, group_confusion, confusion_counts])
def test_empty_arrays_are_refused_not_reported_as_nan(call):
    with pytest.raises(InvalidInputError, match="empty.*at least one row"):
        call([], [], [])
