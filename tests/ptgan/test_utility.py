"""S_T protocol: the seed's formula by hand, evaluation points, splits, downstream AUCs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.utility import (
    CLASSIFIERS,
    DownstreamEvaluator,
    evaluation_points,
    make_classifier,
    s_t_normaliser,
    s_t_score,
    split_train_test,
)


def test_s_t_by_hand_even_k():
    # K = 4: second half = points 3, 4; |0.9-0.8| + |0.9-0.7| = 0.3; denominator 4 - 2 + 2 = 4
    assert s_t_score(0.9, [0.5, 0.6, 0.8, 0.7]) == pytest.approx(0.075)


def test_s_t_by_hand_odd_k():
    # K = 5: ceil(5/2) = 3, second half = points 4, 5: 0.1 + 0.3 = 0.4; denominator 5 - 3 + 2 = 4
    assert s_t_score(0.9, [0.0, 0.0, 0.0, 1.0, 0.6]) == pytest.approx(0.1)


def test_normaliser_of_the_paper_and_identity():
    assert s_t_normaliser(50) == 27  # 25 terms, denominator 27
    assert s_t_score(0.8, [0.8] * 50) == 0.0
    with pytest.raises(InvalidInputError):
        s_t_score(0.8, [])
    with pytest.raises(InvalidInputError):
        s_t_score(0.8, [0.5, np.nan])


def test_evaluation_points_equally_spaced_and_end_at_t():
    pts = evaluation_points(57_000, 50)
    assert len(pts) == 50 and pts[0] == 1_140 and pts[-1] == 57_000
    assert len(set(np.diff(pts))) == 1
    assert evaluation_points(7, 7) == list(range(1, 8))
    with pytest.raises(InvalidInputError):
        evaluation_points(3, 5)


def test_split_is_ninety_ten_disjoint_and_seeded():
    df = pd.DataFrame({"i": range(1_000)})
    tr, te = split_train_test(df, 0)
    assert (len(tr), len(te)) == (900, 100)
    assert set(tr.i).isdisjoint(te.i) and len(set(tr.i) | set(te.i)) == 1_000
    assert split_train_test(df, 0)[1].i.tolist() == te.i.tolist()
    assert split_train_test(df, 1)[1].i.tolist() != te.i.tolist()
    with pytest.raises(InvalidInputError):
        split_train_test(df, 0, test_size=1.5)


def _separable(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    x = g.normal(size=n)
    c = g.choice(["a", "b"], n)
    y = ((x + (c == "a") * 1.0 + 0.3 * g.normal(size=n)) > 0.5).astype(int)
    return pd.DataFrame({"x": x, "c": c, "y": y})


def test_downstream_auc_good_beats_bad_and_single_class_is_half():
    train, test = _separable(600, 0), _separable(300, 1)
    ev = DownstreamEvaluator(train, test, "y", ("c", "y"))
    good = ev.auc(train, 0)
    assert set(good) == set(CLASSIFIERS) and min(good.values()) > 0.85
    shuffled = train.assign(y=np.random.default_rng(2).permutation(train.y.to_numpy()))
    bad = ev.auc(shuffled, 0)
    assert max(bad.values()) < min(good.values())
    assert ev.auc(train.assign(y=1), 0) == {c: 0.5 for c in CLASSIFIERS}
    assert ev.auc(train, 0) == good  # seeded classifiers: same table, same AUC


def test_evaluator_rejects_bad_labels_and_classifiers():
    train, test = _separable(100, 0), _separable(50, 1)
    with pytest.raises(InvalidInputError):
        DownstreamEvaluator(train, test.assign(y=0), "y", ("c",))
    with pytest.raises(InvalidInputError):
        DownstreamEvaluator(train, test, "label", ("c",))
    with pytest.raises(InvalidInputError):
        make_classifier("xgb", 0)


def test_s_t_from_the_counted_points_only_equals_the_full_curve():
    curve = [0.5, 0.6, 0.7, 0.8, 0.85]
    # K = 5: the points 4 and 5 enter; with only them given the normaliser still comes from K
    assert s_t_score(0.9, curve[3:], k=5) == s_t_score(0.9, curve)
    with pytest.raises(InvalidInputError, match="last 2"):
        s_t_score(0.9, curve[2:], k=5)


def test_svc_decision_by_blas_equals_libsvm():
    from sklearn.svm import SVC

    from fusionlib.ptgan.utility import svc_decision

    g = np.random.default_rng(3)
    x = g.normal(size=(300, 6))
    y = (x[:, 0] + 0.5 * x[:, 1] ** 2 + 0.3 * g.normal(size=300) > 0.4).astype(int)
    model = SVC(random_state=0).fit(x, y)
    test = g.normal(size=(200, 6))
    np.testing.assert_allclose(svc_decision(model, test), model.decision_function(test),
                               rtol=1e-10, atol=1e-10)
    linear = SVC(kernel="linear").fit(x, y)  # other kernels fall back to libsvm
    np.testing.assert_array_equal(svc_decision(linear, test), linear.decision_function(test))
