"""Tests of the seed-002 experiment protocol on small hand-made tables (no real data needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fusionlib.data
from fusionlib.errors import DataUnavailableError, InvalidInputError
from fusionlib.fairtest.discretise import VALUES
from fusionlib.fairtest.fairness import FAIRNESS_METRICS
from fusionlib.fairtest.protocol import (
    ProtocolConfig,
    dcc_matrices,
    fairness_bootstraps,
    prepare,
    run_dataset,
    run_protocol,
    synthesize,
    train_audited_tree,
)
from fusionlib.fairtest.separation import dataset_spec, separate

FAST = ProtocolConfig(n_boot=5, dm_seeds=1, dm_n_estimators=5, latent_restarts=1,
                      ctgan_epochs=1, baselines=("Indep",))


def _compas_like(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """A random all-categorical table with COMPAS's discretised columns, label tied to score."""
    rng = np.random.default_rng(seed)
    cols = {}
    for col, values in VALUES["compas"].items():
        values = values or ("0", "1", "2")  # count columns: a few small counts suffice
        cols[col] = rng.choice(values, size=n)
    df = pd.DataFrame(cols)
    high = df["score"].eq("High").to_numpy()
    df["two-year recidivism"] = np.where(rng.random(n) < 0.3 + 0.4 * high, "1", "0")
    return df.astype(object)


@pytest.fixture(scope="module")
def compas_result():
    return run_dataset("compas", FAST, seed=0, table=_compas_like())


def test_prepare_holds_out_thirty_percent_deterministically():
    table = _compas_like(200)
    a = prepare("compas", seed=1, table=table)
    b = prepare("compas", seed=1, table=table)
    c = prepare("compas", seed=2, table=table)
    assert (len(a.test), len(a.train)) == (60, 140)
    pd.testing.assert_frame_equal(a.test, b.test)
    assert not a.test.equals(c.test)


def test_audited_tree_never_sees_protected_attributes():
    spec = dataset_spec("compas")
    internal, _ = separate(_compas_like(), "compas", spec.overlaps[0])
    tree = train_audited_tree(internal, spec.label, spec.favourable, spec.protected, seed=0)
    assert not set(tree.features) & set(spec.protected)
    assert spec.label not in tree.features
    assert set(tree.features) == set(internal.columns) - {spec.label}


def test_audited_tree_refuses_a_table_with_protected_attributes():
    spec = dataset_spec("compas")
    with pytest.raises(InvalidInputError, match="protected"):
        train_audited_tree(_compas_like(), spec.label, spec.favourable, spec.protected, seed=0)


def test_audited_tree_encodes_synthetic_rows_with_its_own_encoder():
    spec = dataset_spec("compas")
    internal, _ = separate(_compas_like(), "compas", spec.overlaps[0])
    tree = train_audited_tree(internal, spec.label, spec.favourable, spec.protected, seed=0)
    other = _compas_like(30, seed=5)
    other.loc[0, "priors count"] = "37"  # a category the encoder never saw is ignored
    pred = tree.predict_favourable(other)
    assert pred.shape == (30,) and pred.dtype == bool


def test_synthetic_sets_match_test_size_columns_and_dtypes():
    prep = prepare("compas", seed=0, table=_compas_like())
    sets = synthesize(prep, FAST, seed=0)
    assert [s.label for s in sets] == [
        "Indep-Overlap (score)", "Marginal (score)", "Latent (score)",
        "Indep-Overlap (violent score)", "Marginal (violent score)", "Latent (violent score)",
        "Indep"]
    for s in sets:
        assert s.data.shape == prep.test.shape
        assert list(s.data.columns) == list(prep.test.columns)
        assert (s.data.dtypes == prep.test.dtypes).all()


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
    assert (r.table9["abs_diff"].dropna() >= 0).all()


def test_bootstraps_are_deterministic_per_seed(compas_result):
    prep, sets = compas_result.prepared, compas_result.synthetic
    again = fairness_bootstraps(prep, sets, FAST, seed=0)
    other = fairness_bootstraps(prep, sets, FAST, seed=1)
    pd.testing.assert_frame_equal(compas_result.boots, again)
    assert not compas_result.boots["value"].equals(other["value"])


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
        prepare("mnist", table=_compas_like())
    with pytest.raises(InvalidInputError, match="test_size"):
        prepare("compas", test_size=1.5, table=_compas_like())


class _RecordingCTGAN:
    """Stands in for CTGANBaseline (seconds of torch import): records what it was fitted on."""

    fitted_on: list[pd.DataFrame] = []

    def __init__(self, *, epochs: int, seed: int) -> None:
        self.epochs = epochs

    def fit(self, data: pd.DataFrame) -> "_RecordingCTGAN":
        self.fitted_on.append(data)
        self.data_ = data
        return self

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        return self.data_.sample(n, replace=True, random_state=seed).reset_index(drop=True)


def test_ctgan_baseline_is_trained_on_the_complete_training_table(monkeypatch):
    import fusionlib.fairtest.protocol as protocol

    monkeypatch.setattr(protocol, "CTGANBaseline", _RecordingCTGAN)
    prep = prepare("compas", seed=0, table=_compas_like(120))
    cfg = ProtocolConfig(ctgan_epochs=1, ctgan_max_rows=60, baselines=("CTGAN",))
    sets = [s for s in synthesize(prep, cfg, seed=0) if s.method == "CTGAN"]
    seen = _RecordingCTGAN.fitted_on[-1]
    assert list(seen.columns) == list(prep.train.columns)  # protected attributes included
    assert len(seen) == 60  # ctgan_max_rows subsample of the 84 training rows
    assert len(sets) == 1 and sets[0].data.shape == prep.test.shape


# ---------------------------------------------------------------- reporting helpers
from fusionlib.fairtest.reporting import (  # noqa: E402
    audited_accuracy,
    beats_baselines,
    dm_gap_to_baselines,
    figure4_inputs,
    latent_sensitivity,
    register_claim,
    side_by_side,
    table9_wide,
)


def test_side_by_side_keeps_paper_rows_and_marks_missing_as_not_run():
    paper = pd.DataFrame({"dataset": ["a", "b"], "method": ["IGO", "IGO"], "DM": [0.6, 0.7]})
    ours = pd.DataFrame({"dataset": ["a"], "method": ["IGO"], "DM": [0.55], "status": ["run"],
                         "reason": [""]})
    out = side_by_side(paper, ours, ["dataset", "method"], ["DM"])
    assert list(out.columns) == ["dataset", "method", "DM paper", "DM ours", "status", "reason"]
    assert out["DM ours"].iloc[0] == pytest.approx(0.55) and np.isnan(out["DM ours"].iloc[1])
    assert list(out["status"]) == ["run", "not run"]


def test_dm_gap_is_mean_accuracy_difference_to_each_baseline():
    fid = pd.DataFrame({"dataset": ["d"] * 4, "method": ["IGO", "Latent", "Indep", "CTGAN"],
                        "DM": [0.6, 0.7, 0.8, 0.65]})
    gaps = dm_gap_to_baselines(fid)
    # Indep: mean(0.8 - 0.6, 0.8 - 0.7) = 0.15 ; CTGAN: mean(0.05, -0.05) = 0
    assert gaps["Indep"] == pytest.approx(0.15) and gaps["CTGAN"] == pytest.approx(0.0, abs=1e-12)


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


class _FakeRun:
    """The two members of fusionlib.experiment.Run that register_claim uses (no torch import)."""

    scale = "smoke"

    def claim(self, claim_id, seed_file, where, quantity, paper, ours, **kw):
        from fusionlib.claims import make_claim

        return make_claim(claim_id, seed_file, where, quantity, paper, ours, scale=self.scale,
                          experiment="t", **kw)


def test_register_claim_verdicts():
    run = _FakeRun()
    assert register_claim(run, "c1", "T", "q", 0.5, 0.51, tolerance=0.02).verdict == "reproduced"
    c2 = register_claim(run, "c2", "T", "q", 0.5, 0.6, tolerance=0.02, why="CTGAN shorter")
    assert c2.verdict == "differs" and "CTGAN shorter" in c2.reason
    c3 = register_claim(run, "c3", "T", "q", 0.5, np.nan, tolerance=0.02, status="not run",
                        not_run_reason="data unavailable")
    assert c3.verdict == "not run" and c3.reason == "data unavailable"


def test_audited_accuracy_rows_and_training_rows_scored(compas_result):
    acc = audited_accuracy(compas_result, seed=0)
    assert list(acc.columns) == ["score", "violent score"]
    assert acc.index[:2].tolist() == ["Internal (training) table", "Real test"]
    assert acc.notna().sum().sum() == 2 * 6  # per tree: training, test, 3 ours, 1 baseline
    assert ((acc >= 0) & (acc <= 1)).where(acc.notna(), True).all().all()
