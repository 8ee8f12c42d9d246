"""Tests of the seed-002 experiment protocol on small hand-made tables (no real data needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fusionlib.data
from fusionlib.errors import DataUnavailableError, InvalidInputError
from fusionlib.fairtest.protocol.runs import (
    ProtocolConfig,
    dcc_matrices,
    fidelity_table,
    prepare,
    run_protocol,
    synthesize,
)
from fusionlib.metrics.fairness import FAIRNESS_METRICS
from fusionlib.rng import seed_int
from tests.fairtest.conftest import FAST, compas_like


def test_prepare_holds_out_thirty_percent_deterministically():
    table = compas_like(200)
    a = prepare("compas", seed=1, table=table)
    b = prepare("compas", seed=1, table=table)
    c = prepare("compas", seed=2, table=table)
    assert (len(a.test), len(a.train)) == (60, 140)
    pd.testing.assert_frame_equal(a.test, b.test)
    assert not a.test.equals(c.test)


def test_synthetic_sets_match_test_size_columns_and_dtypes():
    prep = prepare("compas", seed=0, table=compas_like())
    sets = synthesize(prep, FAST, seed=0)
    assert [s.label for s in sets] == [
        "Indep-Overlap (score)", "Marginal (score)", "Latent (score)",
        "Indep-Overlap (violent score)", "Marginal (violent score)", "Latent (violent score)",
        "Indep"]
    for s in sets:
        assert s.data.shape == prep.test.shape
        assert list(s.data.columns) == list(prep.test.columns)
        assert (s.data.dtypes == prep.test.dtypes).all()


def test_synthesize_same_seed_same_sets_other_seed_other_sets(compas_result):
    prep = compas_result.prepared
    again = synthesize(prep, FAST, seed=0)
    other = synthesize(prep, FAST, seed=1)
    for first, same, diff in zip(compas_result.synthetic, again, other, strict=True):
        assert (first.label, same.label) == (diff.label, diff.label)
        pd.testing.assert_frame_equal(first.data, same.data)
        assert not first.data.equals(diff.data), first.label


def test_fidelity_table_same_seed_same_scores_other_seed_other_scores(compas_result):
    prep, sets = compas_result.prepared, compas_result.synthetic
    again = fidelity_table(prep, sets, FAST, seed=0)
    other = fidelity_table(prep, sets, FAST, seed=1)
    pd.testing.assert_frame_equal(compas_result.fidelity, again)
    # the seed drives the DM forests and the reference sample, not 1-TVD/CS of given sets
    assert not np.allclose(compas_result.fidelity["DM"], other["DM"])
    assert not compas_result.fidelity.iloc[-1].equals(other.iloc[-1])
    pd.testing.assert_series_equal(compas_result.fidelity["1-TVD"].iloc[:-1],
                                   other["1-TVD"].iloc[:-1])


def test_run_dataset_output_shapes(compas_result):
    r = compas_result
    assert r.status == "run"
    assert len(r.fidelity) == 8  # 2 separations x 3 methods + 1 baseline + the reference
    assert r.fidelity["method"].iloc[-1] == "Reference"
    assert {"1-TVD", "CS", "DM", "KL (race)", "KL (sex)"} <= set(r.fidelity.columns)
    assert r.fidelity[["1-TVD", "CS", "DM"]].apply(lambda c: c.between(0, 1)).all().all()
    # per tree: (real + 3 ours + 1 baseline) sources x 2 attributes x 3 metrics x n_boot
    assert len(r.boots) == 2 * 5 * 2 * 3 * FAST.n_boot
    # Table 9: 6 of ours + 1 baseline (first tree only), x 2 attributes x 3 metrics
    assert len(r.table9) == 7 * 2 * len(FAIRNESS_METRICS)
    # every group has true positives and negatives in 72 rows: no entry is undefined
    assert r.table9["abs_diff"].notna().sum() == len(r.table9)
    assert (r.table9["abs_diff"] >= 0).all()


def test_dcc_matrices_cover_overlap_methods_and_baselines(compas_result):
    mats = dcc_matrices(compas_result, "score")
    assert list(mats) == ["Indep-Overlap (score)", "Marginal (score)", "Latent (score)", "Indep"]
    assert all(m.shape == (9, 9) for m in mats.values())


def test_missing_dataset_is_marked_not_run(monkeypatch):
    def unavailable(name):
        raise DataUnavailableError(f"{name} files missing; run `make data`")

    monkeypatch.setattr(fusionlib.data, "load", unavailable)
    out = run_protocol(["german"], FAST, seed=0)
    assert out["german"].status == "not run"
    assert "make data" in out["german"].reason
    fid, t9 = out["german"].fidelity, out["german"].table9
    assert len(fid) == 7 and (fid["status"] == "not run").all()  # 6 of ours + 1 baseline
    assert fid[["1-TVD", "CS", "DM", "KL (age)", "KL (sex)"]].isna().all().all()
    assert len(t9) == 7 * 2 * 3 and t9["abs_diff"].isna().all()


def test_unknown_dataset_and_bad_test_size_raise():
    with pytest.raises(InvalidInputError, match="unknown dataset"):
        prepare("mnist", table=compas_like())
    with pytest.raises(InvalidInputError, match="test_size"):
        prepare("compas", test_size=1.5, table=compas_like())


class _RecordingCTGAN:
    """Stands in for CTGANBaseline (seconds of torch import): records what it was fitted on."""

    fitted_on: list[pd.DataFrame] = []

    def __init__(self, *, epochs: int, seed: int) -> None:
        self.epochs = epochs

    trains_on_complete = True

    def fit(self, sources) -> _RecordingCTGAN:
        (data,) = sources.values()  # one complete table
        self.fitted_on.append(data)
        self.data_ = data
        return self

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        return self.data_.sample(n, replace=True, random_state=seed_int(seed)).reset_index(
            drop=True)


def test_ctgan_baseline_is_trained_on_the_complete_training_table(monkeypatch):
    import fusionlib.fairtest.protocol.runs as protocol

    monkeypatch.setattr(protocol, "CTGANBaseline", _RecordingCTGAN)
    prep = prepare("compas", seed=0, table=compas_like(120))
    cfg = ProtocolConfig(ctgan_epochs=1, ctgan_max_rows=60, baselines=("CTGAN",))
    sets = [s for s in synthesize(prep, cfg, seed=0) if s.method == "CTGAN"]
    seen = _RecordingCTGAN.fitted_on[-1]
    assert list(seen.columns) == list(prep.train.columns)  # protected attributes included
    assert len(seen) == 60  # ctgan_max_rows subsample of the 84 training rows
    assert len(sets) == 1 and sets[0].data.shape == prep.test.shape


def test_disjoint_rows_variant_trains_the_tree_on_rows_the_estimators_never_saw():
    from fusionlib.fairtest.protocol.runs import disjoint_rows_table9

    prep = prepare("compas", seed=0, table=compas_like(240))
    t9 = disjoint_rows_table9(prep, FAST, seed=0)
    assert set(t9["method"]) <= {"IGO", "Marginal", "Latent", "Indep"}  # CTGAN left out
    assert t9["abs_diff"].notna().all() and (t9["abs_diff"] >= 0).all()
    again = disjoint_rows_table9(prep, FAST, seed=0)
    pd.testing.assert_frame_equal(t9, again)
    other = disjoint_rows_table9(prep, FAST, seed=1)  # another split and other draws
    assert not np.allclose(t9["abs_diff"], other["abs_diff"])
