"""Simulated sources with a known truth, and the chapter's scoring helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.evaluation import cross_correlations, score, standardise_like
from fusionlib.fusion.mixture.data import (
    DEFAULT_DESIGN,
    mixture_sources,
    rare_mask,
    rare_share,
    sample_mixture,
)


def test_sources_hold_their_own_columns_on_disjoint_rows():
    src, truth = mixture_sources(300, 0)
    assert src.columns_of("A") == ("x1", "x2", "y1", "y2")
    assert src.columns_of("B") == ("x1", "x2", "z") and src.overlap() == ("x1", "x2")
    assert len(truth) == 300 and list(truth.columns) == ["x1", "x2", "y1", "y2", "z"]
    # disjoint rows: no x1 value of A occurs in B or in the truth (continuous draws)
    assert not set(src["A"]["x1"]) & set(src["B"]["x1"])
    assert not set(src["A"]["x1"]) & set(truth["x1"])


def test_same_seed_same_sources_other_seed_other():
    a, _ = mixture_sources(50, 1)
    b, _ = mixture_sources(50, 1)
    c, _ = mixture_sources(50, 2)
    pd.testing.assert_frame_equal(a["A"], b["A"])
    assert not a["A"].equals(c["A"])


def test_component_shares_and_rare_mode_detection():
    x, comp = sample_mixture(20_000, 3)
    shares = np.bincount(comp, minlength=3) / len(comp)
    np.testing.assert_allclose(shares, DEFAULT_DESIGN.weights, atol=0.01)
    # the rare component sits far from the others in (x1, x2): the mask finds its rows
    assert (rare_mask(x) == (comp == 2)).mean() > 0.995
    assert rare_share(x) == pytest.approx(0.05, abs=0.01)


def test_score_is_near_ideal_for_a_second_sample_of_the_truth_and_worse_when_shifted():
    _, truth = mixture_sources(1_500, 4)
    other, _ = sample_mixture(1_500, 5)
    good = score(truth, other, seed=0)
    bad = score(truth, other + 1.5, seed=0)
    assert good["precision"] > 0.85 and good["recall"] > 0.85
    assert bad["mmd"] > good["mmd"] and bad["coverage"] > good["coverage"]
    assert bad["precision"] < good["precision"]


def test_standardise_like_uses_the_reference_statistics():
    ref = pd.DataFrame({"a": [0.0, 2.0], "b": [1.0, 1.0]})
    (out,) = standardise_like(ref, pd.DataFrame({"a": [1.0], "b": [3.0]}))
    # a: (1 - 1) / 1 = 0 ; b is constant in ref (sd 0 -> 1): (3 - 1) / 1 = 2
    assert out.tolist() == [[0.0, 2.0]]
    with pytest.raises(InvalidInputError, match="missing"):
        standardise_like(ref, pd.DataFrame({"a": [1.0]}))


def test_cross_correlations_keys_and_values():
    t = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [2.0, 4.0, 6.0], "c": [3.0, 2.0, 1.0]})
    assert cross_correlations(t, [("a", "b"), ("a", "c")]) == pytest.approx(
        {"a~b": 1.0, "a~c": -1.0})


def test_grouped_sources_add_the_component_as_g():
    from fusionlib.fusion.mixture.data import GROUPS, grouped_sources

    src, truth = grouped_sources(400, 0)
    plain, plain_truth = mixture_sources(400, 0)
    assert src.columns_of("A") == ("g", "x1", "x2", "y1", "y2")
    assert src.columns_of("B") == ("x1", "x2", "z")
    pd.testing.assert_frame_equal(truth.drop(columns="g"), plain_truth)
    pd.testing.assert_frame_equal(src["A"].drop(columns="g"), plain["A"])
    assert set(truth["g"]) <= set(GROUPS)
    # g is the component: its rows sit nearest to that component's mean in (x1, x2)
    assert (truth["g"].eq("rare").to_numpy() == rare_mask(truth)).mean() > 0.99
    both, _ = grouped_sources(50, 0, observed_by=("A", "B"))
    assert both.columns_of("B")[0] == "g"


def test_correlation_ratio_against_closed_forms():
    from fusionlib.fusion.evaluation import correlation_ratio

    t = pd.DataFrame({"g": ["a", "a", "b", "b"], "y": [0.0, 2.0, 4.0, 6.0]})
    # group means 1 and 5, grand mean 3: between SS 4 * 4 = 16, total SS 9 + 1 + 1 + 9 = 20
    assert correlation_ratio(t, "g", "y") == pytest.approx(0.8)
    assert correlation_ratio(t.assign(y=[1.0, 2.0, 1.0, 2.0]), "g", "y") == 0.0
    assert correlation_ratio(t.assign(y=[1.0, 1.0, 3.0, 3.0]), "g", "y") == pytest.approx(1.0)
    assert correlation_ratio(t.assign(y=1.0), "g", "y") == 0.0


def test_group_mmd_uses_the_reference_scale_and_needs_rows():
    from fusionlib.fusion.evaluation import group_mmd
    from fusionlib.metrics.mmd import mmd

    r = np.random.default_rng(0)
    a = pd.DataFrame(r.normal(size=(60, 2)), columns=["u", "v"])
    b = pd.DataFrame(r.normal(size=(50, 2)) + 0.5, columns=["u", "v"])
    ref = pd.DataFrame(r.normal(size=(80, 2)) * 3, columns=["u", "v"])
    ra, rb = standardise_like(ref, a, b)
    assert group_mmd(a, b, ["u", "v"], reference=ref) == pytest.approx(mmd(ra, rb).mmd)
    assert np.isnan(group_mmd(a.iloc[:5], b, ["u", "v"]))
