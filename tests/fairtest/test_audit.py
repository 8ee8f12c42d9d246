"""Tests of the audited tree, its bootstraps and Table 9 (fusionlib.fairtest.audit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.audit import fairness_bootstraps, table9, train_audited_tree
from fusionlib.fairtest.protocol.runs import SyntheticSet
from fusionlib.fairtest.separation import dataset_spec, separate
from fusionlib.metrics.fairness import FAIRNESS_METRICS, bootstrap_mean_difference
from tests.fairtest.conftest import FAST, compas_like

SPEC = dataset_spec("compas")


def _internal(n: int = 240, seed: int = 0) -> pd.DataFrame:
    return separate(compas_like(n, seed), "compas", SPEC.overlaps[0])[0]


def _tree(internal: pd.DataFrame, seed: int = 0, **kw):
    args = dict(label=SPEC.label, positive=SPEC.favourable, protected=SPEC.protected) | kw
    return train_audited_tree(internal, args["label"], args["positive"], args["protected"],
                              seed=seed)


# ---------------------------------------------------------------- the audited tree
def test_audited_tree_never_sees_protected_attributes():
    internal = _internal()
    tree = _tree(internal)
    assert not set(tree.features) & set(SPEC.protected)
    assert SPEC.label not in tree.features
    assert set(tree.features) == set(internal.columns) - {SPEC.label}


def test_audited_tree_refuses_a_table_with_protected_attributes():
    with pytest.raises(InvalidInputError, match="protected"):
        _tree(compas_like())


def test_audited_tree_encodes_synthetic_rows_with_its_own_encoder():
    tree = _tree(_internal())
    other = compas_like(30, seed=5)
    other.loc[0, "priors count"] = "37"  # a category the encoder never saw is ignored
    pred = tree.predict_favourable(other)
    assert pred.shape == (30,) and pred.dtype == bool


def test_audited_tree_same_seed_same_tree_other_seed_other_tie_break():
    # two identical features: every split on one ties with the same split on the other, and
    # the tree's random_state decides which one it uses
    rng = np.random.default_rng(0)
    f = rng.choice(["a", "b", "c"], 200)
    internal = pd.DataFrame({"f1": f, "f2": f, "noise": rng.choice(["u", "v"], 200),
                             "y": np.where(f == "a", "1", "0")})
    roots = {}
    for seed in range(6):
        t = train_audited_tree(internal, "y", "1", [], seed=seed)
        again = train_audited_tree(internal, "y", "1", [], seed=seed)
        np.testing.assert_array_equal(t.tree.tree_.feature, again.tree.tree_.feature)
        np.testing.assert_array_equal(t.tree.tree_.threshold, again.tree.tree_.threshold)
        roots[seed] = t.encoder.get_feature_names_out()[t.tree.tree_.feature[0]]
    assert set(roots.values()) == {"f1_a", "f2_a"}  # other seeds pick the other twin


def test_audited_tree_missing_label_column_raises_with_fix():
    with pytest.raises(InvalidInputError, match="lacks columns \\['income'\\].*label column"):
        _tree(_internal(), label="income")


def test_audited_tree_favourable_value_that_never_occurs_raises():
    with pytest.raises(InvalidInputError, match="'yes' never occurs.*positive="):
        _tree(_internal(), positive="yes")


def test_audited_tree_rejects_unseeded_call():
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        _tree(_internal(), seed=None)


# ---------------------------------------------------------------- bootstraps and Table 9
def test_bootstraps_are_deterministic_per_seed(compas_result):
    prep, sets = compas_result.prepared, compas_result.synthetic
    again = fairness_bootstraps(prep, sets, FAST, seed=0)
    other = fairness_bootstraps(prep, sets, FAST, seed=1)
    pd.testing.assert_frame_equal(compas_result.boots, again)
    assert not compas_result.boots["value"].equals(other["value"])


def test_bootstraps_of_a_set_without_a_protected_attribute_raise(compas_result):
    prep = compas_result.prepared
    broken = SyntheticSet("IGO", "score", prep.test.drop(columns="race"))
    with pytest.raises(InvalidInputError, match="evaluation table lacks columns \\['race'\\]"):
        fairness_bootstraps(prep, [broken], FAST, seed=0)


def _boots(tree: str, source: str, kind: str, method: str, overlap: str, value: float):
    rows = [{"dataset": "d", "tree": tree, "attribute": "sex", "source": source, "kind": kind,
             "method": method, "overlap": overlap, "metric": m, "boot": b, "value": value + b}
            for m in FAIRNESS_METRICS for b in range(2)]
    return pd.DataFrame(rows)


def test_table9_compares_each_synthetic_set_with_the_real_test_set_under_the_same_tree():
    boots = pd.concat([
        _boots("t1", "Real test", "real", "", "", 0.1),
        _boots("t1", "A (t1)", "ours", "IGO", "t1", 0.3),
        _boots("t1", "Indep", "baseline", "Indep", "", 0.0),
        _boots("t2", "Real test", "real", "", "", 0.5),
        _boots("t2", "B (t2)", "ours", "IGO", "t2", 0.2),
        _boots("t2", "Indep", "baseline", "Indep", "", 0.9),
    ], ignore_index=True)
    out = table9(boots).set_index(["label", "metric"])
    # A under t1: |0.3 - 0.1| = 0.2 ; B under t2: |0.2 - 0.5| = 0.3 (the boot offsets cancel);
    # the baseline only under the first tree t1: |0.0 - 0.1| = 0.1
    assert out.loc[("A (t1)", "DI"), "abs_diff"] == pytest.approx(0.2)
    assert out.loc[("B (t2)", "DI"), "abs_diff"] == pytest.approx(0.3)
    assert out.loc[("Indep", "DI"), "abs_diff"] == pytest.approx(0.1)
    assert list(out.xs("Indep", level="label")["tree"].unique()) == ["t1"]
    assert len(out) == 3 * len(FAIRNESS_METRICS)


def test_table9_rows_equal_the_bootstrap_difference_under_their_own_tree(compas_result):
    boots = compas_result.boots
    for row in compas_result.table9.itertuples():
        sub = boots[(boots["tree"] == row.tree) & (boots["attribute"] == row.attribute)]
        wide = {src: sub[sub["source"] == src].pivot(index="boot", columns="metric",
                                                     values="value")
                for src in (row.label, "Real test")}
        expected = bootstrap_mean_difference(wide[row.label], wide["Real test"])
        assert row.abs_diff == pytest.approx(expected.loc[row.metric, "abs_diff"], nan_ok=True)
        assert row.tree == (row.overlap or SPEC.overlaps[0])


def test_table9_without_real_test_rows_raises():
    with pytest.raises(InvalidInputError, match="Real test"):
        table9(_boots("t1", "A (t1)", "ours", "IGO", "t1", 0.3))
