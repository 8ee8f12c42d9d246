"""Tests of the notebook helpers of seed 002 (fusionlib.fairtest.protocol.report)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.fairtest.kl_floor import kl_noise_floors
from fusionlib.fairtest.protocol.report import (
    audited_accuracy,
    beats_baselines,
    dm_gap_to_baselines,
    figure4_inputs,
    latent_sensitivity,
    table9_wide,
)


def test_dm_gap_is_mean_accuracy_difference_to_each_baseline():
    fid = pd.DataFrame({"dataset": ["d"] * 4, "method": ["IGO", "Latent", "Indep", "CTGAN"],
                        "DM": [0.6, 0.7, 0.8, 0.65]})
    gaps = dm_gap_to_baselines(fid)
    # Indep: mean(0.8 - 0.6, 0.8 - 0.7) = 0.15 ; CTGAN: mean(0.05, -0.05) = 0
    assert gaps["Indep"] == pytest.approx(0.15) and gaps["CTGAN"] == pytest.approx(0.0, abs=1e-12)
    rel = dm_gap_to_baselines(fid, relative=True)
    # Indep: mean(0.2 / 0.8, 0.1 / 0.8) = 0.1875 ; CTGAN: mean(0.05 / 0.65, -0.05 / 0.65) = 0
    assert rel["Indep"] == pytest.approx(0.1875) and rel["CTGAN"] == pytest.approx(0.0, abs=1e-12)


def test_beats_baselines_compares_best_of_each_kind():
    t9 = pd.DataFrame({"dataset": "d", "attribute": "race", "metric": "DI",
                       "kind": ["ours", "ours", "baseline"], "abs_diff": [0.2, 0.05, 0.1]})
    out = beats_baselines(t9)
    assert bool(out["ours better"].iloc[0]) and out["best ours"].iloc[0] == pytest.approx(0.05)


def test_table9_wide_has_one_row_per_source_and_attribute(compas_result):
    wide = table9_wide(compas_result.table9)
    assert len(wide) == 7 * 2 and {"AOD", "DI", "EOD", "status"} <= set(wide.columns)


def test_figure4_inputs_order_real_ours_baselines(compas_result):
    dists, kinds, panels = figure4_inputs(compas_result)
    names = list(dists)
    assert names[0] == "Real test (tree: score)" and kinds[names[0]] == "real"
    assert names[-1] == "Indep (tree: score)" and kinds[names[-1]] == "baseline"
    assert panels == [("race", "DI"), ("race", "AOD"), ("sex", "DI"), ("sex", "AOD")]


def test_latent_sensitivity_one_row_per_em_seed(compas_result):
    out = latent_sensitivity(compas_result.prepared, "score", [0, 1], seed=0)
    assert len(out) == 3 and out["source"].iloc[0] == "Real test"
    assert np.isfinite(out["log-likelihood"].iloc[1:]).all()


def test_latent_sensitivity_same_em_seeds_same_rows_other_em_seeds_other_rows(compas_result):
    prep = compas_result.prepared
    a = latent_sensitivity(prep, "score", [0, 1], seed=0)
    b = latent_sensitivity(prep, "score", [0, 1], seed=0)
    c = latent_sensitivity(prep, "score", [2, 3], seed=0)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a.iloc[:1], c.iloc[:1])  # the real test set row
    assert not np.allclose(a["log-likelihood"].iloc[1:], c["log-likelihood"].iloc[1:])


def test_audited_accuracy_rows_and_training_rows_scored(compas_result):
    acc = audited_accuracy(compas_result, seed=0)
    assert list(acc.columns) == ["score", "violent score"]
    assert acc.index[:2].tolist() == ["Internal (training) table", "Real test"]
    assert acc.notna().sum().sum() == 2 * 6  # per tree: training, test, 3 ours, 1 baseline
    assert ((acc >= 0) & (acc <= 1)).where(acc.notna(), True).all().all()


# ---------------------------------------------------------------- KL noise floor
def test_em_optima_groups_starts_by_log_likelihood_and_counts_them():
    from fusionlib.fairtest.protocol.report import em_optima

    sens = pd.DataFrame({"source": ["Real test", "s0", "s1", "s2", "s3"],
                         "log-likelihood": [np.nan, -100.2, -100.1, -250.0, -100.3],
                         "DI (race)": [0.6, 0.5, 0.7, 1.4, 0.6]})
    out = em_optima(sens)
    # -100.2, -100.1, -100.3 round to -100 (3 starts, mean DI 0.6); -250 alone (DI 1.4)
    assert list(out["starts"]) == [3, 1] and list(out["optimum"]) == ["#1", "#2"]
    assert out["share"].tolist() == pytest.approx([0.75, 0.25])
    assert out["DI (race)"].tolist() == pytest.approx([0.6, 1.4])


def test_summarize_keeps_the_tables_and_what_the_chapter_derives_from_the_data(compas_result):
    from fusionlib.fairtest.protocol.report import summarize
    from fusionlib.fairtest.protocol.runs import ProtocolConfig, not_run_result
    from fusionlib.fairtest.separation import separate
    from fusionlib.metrics.association import dcc_matrix, mutual_information

    res = compas_result
    prep = res.prepared
    s = summarize(res, seed=0)
    assert (s.dataset, s.status, s.train_rows, s.test_rows) == (
        "compas", "run", len(prep.train), len(prep.test))
    assert s.fidelity is res.fidelity and s.boots is res.boots and s.table9 is res.table9
    pd.testing.assert_frame_equal(s.accuracy, audited_accuracy(res, seed=0))
    pd.testing.assert_frame_equal(s.kl_floors, kl_noise_floors(res))
    rows = pd.concat([prep.train, prep.test], ignore_index=True)
    assert list(s.mutual_information) == list(prep.spec.protected)
    for a, v in s.mutual_information.items():
        assert v == pytest.approx(mutual_information(rows, a, prep.spec.label), abs=0)
    internal, _ = separate(prep.train, "compas", prep.spec.overlaps[0])
    assert s.unique_internal == (~internal.duplicated(keep=False)).mean()
    assert list(s.dcc) == [x.label for x in res.synthetic]
    first = res.synthetic[0]
    pd.testing.assert_frame_equal(s.dcc[first.label], dcc_matrix(prep.test, first.data))
    score = s.dcc_matrices("score")
    assert set(score) == {x.label for x in res.synthetic if x.overlap in ("", "score")}
    empty = summarize(not_run_result("adult", ProtocolConfig(), "not here"))
    assert empty.status == "not run" and empty.reason == "not here"
    assert empty.accuracy is None and empty.train_rows is None and empty.dcc == {}
