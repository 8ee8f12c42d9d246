"""AUC at the best cut-off, SP, Pareto frontier and the Tables 4/12 statistic."""

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.evaluation import (
    evaluate_set,
    pareto_front,
    smallest_sp,
    smallest_sp_table,
    statistical_parity,
    youden_cutoff,
)


def test_statistical_parity_hand_computed():
    # A=1: predictions 1, 1, 0 -> 2/3; A=0: 1, 0 -> 1/2; SP = 1/6
    assert statistical_parity([1, 1, 0, 1, 0], [1, 1, 1, 0, 0]) == pytest.approx(1 / 6)
    assert statistical_parity([0, 0, 0, 0], [1, 1, 0, 0]) == 0.0
    with pytest.raises(InvalidInputError, match="both groups"):
        statistical_parity([1, 0], [1, 1])
    with pytest.raises(InvalidInputError, match="binary"):
        statistical_parity([1, 2], [1, 0])


def test_youden_cutoff_maximises_balanced_accuracy_and_auc_is_threshold_free():
    y = np.array([0, 0, 0, 1, 1, 1])
    s = np.array([0.1, 0.4, 0.35, 0.8, 0.3, 0.9])
    auc, tau = youden_cutoff(y, s)
    # AUC of the scores by pairs: positives (0.8, 0.3, 0.9) beat negatives (0.1, 0.4, 0.35) in
    # 3 + 1 + 3 = 7 of 9 pairs
    assert auc == pytest.approx(7 / 9)
    # brute force over every strict cut-off: balanced accuracy of 1(s > t)
    cuts = np.r_[s, s.min() - 1]
    best = max(0.5 * ((s[y == 1] > t).mean() + (s[y == 0] <= t).mean()) for t in cuts)
    yhat = (s > tau).astype(int)
    assert 0.5 * (yhat[y == 1].mean() + 1 - yhat[y == 0].mean()) == pytest.approx(best)
    assert youden_cutoff(y, np.r_[np.zeros(3), np.ones(3)]) == (1.0, 0.5)
    with pytest.raises(InvalidInputError, match="one class"):
        youden_cutoff(np.ones(3), np.arange(3.0))


def test_pareto_front_example_of_appendix_d3():
    # (0.7, 0.7) is dominated by (0.8, 0.4) but (0.6, 0.6) is not
    mask = pareto_front([0.7, 0.8, 0.6], [0.7, 0.4, 0.6])
    assert mask.tolist() == [False, True, False]
    mask = pareto_front([0.7, 0.6], [0.7, 0.6])
    assert mask.tolist() == [True, True]
    assert pareto_front([0.5, 0.5], [0.1, 0.1]).tolist() == [True, True]


def test_smallest_sp_takes_k_smallest_above_threshold():
    auc = np.array([0.9, 0.9, 0.9, 0.7, 0.86])
    sp = np.array([0.3, 0.1, 0.2, 0.0, 0.4])
    mean, sd, n = smallest_sp(auc, sp, 0.85, k=2)
    assert (mean, n) == (pytest.approx(0.15), 2)
    assert sd == pytest.approx(np.std([0.1, 0.2], ddof=1))
    assert smallest_sp(auc, sp, 0.95)[2] == 0
    assert np.isnan(smallest_sp(auc, sp, 0.95)[0])


def test_smallest_sp_table_groups_by_method_and_classifier():
    scores = pd.DataFrame({"dataset": "adult", "method": ["A"] * 4 + ["B"] * 2,
                           "classifier": ["RF", "RF", "LR", "LR", "RF", "LR"],
                           "auc": [0.9, 0.9, 0.9, 0.6, 0.9, 0.9],
                           "sp": [0.1, 0.3, 0.2, 0.0, 0.5, 0.4]})
    t = smallest_sp_table(scores, {"adult": 0.85}, k=10).set_index("method")
    assert t.loc["A", "RF"] == pytest.approx(0.2) and t.loc["A", "LR n"] == 1
    assert t.loc["B", "LR"] == pytest.approx(0.4)
    with pytest.raises(InvalidInputError, match="threshold"):
        smallest_sp_table(scores, {"law_school": 0.65})


def _toy(n, seed, shift):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 2)) + shift * a[:, None]
    y = (x[:, 0] + 0.3 * rng.normal(size=n) > shift / 2).astype(int)
    return x, y, a


def test_evaluate_set_good_beats_bad_and_is_deterministic():
    xtr, ytr, _ = _toy(400, 0, 1.0)
    xte, yte, ate = _toy(600, 1, 1.0)
    good = evaluate_set(xtr, ytr, xte, yte, ate, seed=0)
    bad = evaluate_set(xtr, np.random.default_rng(2).permutation(ytr), xte, yte, ate, seed=0)
    for g, b in zip(good, bad, strict=True):
        assert g.auc > 0.8 and g.auc > b.auc
        assert 0 <= g.sp <= 1
    again = evaluate_set(xtr, ytr, xte, yte, ate, seed=0)
    assert [s.auc for s in again] == [s.auc for s in good]
    const = evaluate_set(xtr, np.zeros_like(ytr), xte, yte, ate, seed=0)
    assert all(s.auc == 0.5 and s.sp == 0.0 for s in const)
