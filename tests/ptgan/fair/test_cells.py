"""The fair generation runs and their cells (tiny settings on Adult)."""

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.compendium.cells import Cell
from fusionlib.data import dataset_states
from fusionlib.data.store import VERIFIED
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.cells import FAIR, FAIR_CONFIG, FAIR_METHODS, rep_seed
from fusionlib.ptgan.fair.runs import fair_table, run_fair

ADULT = all(s == VERIFIED for s in dataset_states("adult").values())
needs_adult = pytest.mark.skipif(not ADULT, reason="Adult is not provisioned (make data)")


def test_grid_has_one_cell_per_method_dataset_and_block_of_repetitions():
    for scale, cfg in FAIR_CONFIG.items():
        cells = FAIR.grid(scale, 0)
        blocks = -(-cfg["n_seeds"] // cfg["stack"])
        assert len(cells) == len(cfg["datasets"]) * len(FAIR_METHODS) * blocks
        # every repetition once per (dataset, method); both methods of a repetition share its
        # seed (hence its split); the seeds are those of rep_seed
        by_key = {}
        for c in cells:
            assert len(c.config["reps"]) == len(c.config["rep_seeds"]) <= cfg["stack"]
            for rep, s in zip(c.config["reps"], c.config["rep_seeds"], strict=True):
                assert s == rep_seed(0, c.config["dataset"], rep)
                by_key.setdefault((c.config["dataset"], rep), []).append(s)
        assert len(by_key) == len(cfg["datasets"]) * cfg["n_seeds"]
        assert all(len(s) == len(FAIR_METHODS) and len(set(s)) == 1 for s in by_key.values())
    paper = FAIR_CONFIG["paper"]
    assert (paper["n_iter"], paper["batch_size"], paper["n_sets"], paper["n_seeds"]) == \
        (100_000, 200, 20, 10)


@needs_adult
def test_adult_race_is_binarised():
    table = fair_table("adult")
    assert set(table.frame["race"]) == {"White", "Non-white"}
    assert table.sensitive == "race" and table.privileged == "White"
    assert "education" not in table.frame and "fnlwgt" not in table.frame


@needs_adult
def test_run_fair_is_deterministic_and_scores_every_set():
    table = fair_table("adult")
    kw = dict(seeds=[3], n_iter=3, n_sets=5, n_rows=150, n_test=400)
    a, timing = run_fair("fairptgan", table, **kw)
    b, _ = run_fair("fairptgan", table, **kw)
    assert set(a["method"]) == {"FairPTGAN", "GeoRepair", "GeoRepair (train only)", "Real data"}
    # (FairPTGAN + GeoRepair + GeoRepair train-only sets + real rows) x classifiers
    assert len(a) == (3 * 5 + 1) * 3
    np.testing.assert_allclose(a["auc"], b["auc"])
    np.testing.assert_allclose(a["sp"], b["sp"])
    np.testing.assert_allclose(sorted(set(a.loc[a["method"] == "GeoRepair", "level"])),
                               [0, 0.25, 0.5, 0.75, 1])
    assert a["auc"].between(0, 1).all() and a["sp"].between(0, 1).all()
    assert timing["n_test"] == 400
    # at lambda_p = 0 both GeoRepair variants are the identity: the same scores
    geo = a[a["method"].str.startswith("GeoRepair") & (a["level"] == 0)]
    both = geo.pivot_table(index=["set", "classifier"], columns="method", values="sp")
    np.testing.assert_allclose(both["GeoRepair"], both["GeoRepair (train only)"])
    # at lambda_p = 1 the repaired test covariates differ, and so do the scores
    full = a[a["method"].str.startswith("GeoRepair") & (a["level"] == 1)]
    auc = full.pivot_table(index=["set", "classifier"], columns="method", values="auc")
    assert not np.allclose(auc["GeoRepair"], auc["GeoRepair (train only)"])
    c, _ = run_fair("fairptgan", table, **{**kw, "seeds": [4]})
    assert not np.allclose(a["sp"], c["sp"])
    # two repetitions stacked: the first is the run of its seed alone (to float rounding; the
    # scores are of classifiers fitted on the sets, so they agree closely, not bitwise)
    both, timing = run_fair("fairptgan", table, **{**kw, "seeds": [3, 4]})
    assert timing["n_reps"] == 2 and set(both["rep_index"]) == {0, 1}
    first = both[both["rep_index"] == 0].reset_index(drop=True)
    np.testing.assert_allclose(first["auc"], a["auc"], atol=0.02)
    # ... and so is the second (its own seed, split, sets and test rows)
    second = both[both["rep_index"] == 1].drop(columns="rep_index").reset_index(drop=True)
    np.testing.assert_allclose(second["auc"], c["auc"], atol=0.02)
    np.testing.assert_allclose(second["sp"], c["sp"], atol=0.05)
    assert not np.allclose(second["auc"], first["auc"])


@needs_adult
def test_fairwgangp_runs_two_phases():
    table = fair_table("adult")
    rows, _ = run_fair("fairwgangp", table, seeds=[0, 1], n_iter=2, n_sets=2, n_rows=100,
                       n_test=300)
    assert set(rows["method"]) == {"FairWGANGP"} and len(rows) == 2 * 6


@needs_adult
def test_a_cell_labels_its_repetitions_and_reports_one_that_diverged(monkeypatch):
    """The cell's rows carry each repetition's number and seed; a repetition whose loss turns
    non-finite is reported "not run" (with its iteration) while the others are scored."""
    from fusionlib.ptgan.fair.stacked import StackedFairGAN

    cfg = dict(method="fairptgan", dataset="adult", reps=[3, 7], rep_seeds=[31, 71],
               device="cpu", n_iter=2, n_sets=5, n_rows=100, n_test=300, batch_size=200)
    shard = FAIR.compute(Cell("fairptgan", cfg, 0))
    rows = shard.rows
    assert sorted(set(rows["rep"])) == [3, 7] and (rows["status"] == "run").all()
    assert dict(zip(rows["rep"], rows["seed"], strict=True)) == {3: 31, 7: 71}
    alone, _ = run_fair("fairptgan", fair_table("adult"), seeds=[71], n_iter=2, n_sets=5,
                        n_rows=100, n_test=300)
    np.testing.assert_allclose(rows.loc[rows["rep"] == 7, "auc"], alone["auc"], atol=0.02)
    assert not np.allclose(rows.loc[rows["rep"] == 3, "auc"], alone["auc"], atol=0.02)

    fit = StackedFairGAN.fit

    def poisoned(self, data, *, rows=None):  # repetition 1's generator turns NaN, then trains on
        fit(self, data, rows=rows)
        with torch.no_grad():
            next(self.step_.generator.parameters())[1].fill_(float("nan"))
        self.trainer_.fit(self._data, self.n_iter + 1)
        return self

    monkeypatch.setattr(StackedFairGAN, "fit", poisoned)
    shard = FAIR.compute(Cell("fairptgan", cfg, 0))
    ran, lost = shard.rows[shard.rows["status"] == "run"], shard.rows[
        shard.rows["status"] == "not run"]
    assert set(ran["rep"]) == {3} and list(lost["rep"]) == [7]
    assert "diverged (non-finite loss) at iteration 3" in lost["reason"].iloc[0]
    assert shard.figures["timing"]["diverged"] == {1: 3}


def test_a_cell_with_mismatched_repetitions_is_refused_before_training():
    cfg = dict(method="fairptgan", dataset="adult", reps=[0, 1, 2], rep_seeds=[5, 6],
               device="cpu", n_iter=1, n_sets=5, n_rows=10, n_test=None, batch_size=200)
    with pytest.raises(InvalidInputError, match="equal length"):
        FAIR.compute(Cell("fairptgan", cfg, 0))


@needs_adult
def test_a_run_cut_off_while_scoring_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    from fusionlib.ptgan.fair import runs

    table = fair_table("adult")
    kw = dict(seeds=[3, 4], n_iter=3, n_sets=5, n_rows=150, n_test=400)
    whole, _ = run_fair("fairptgan", table, **kw)
    path = tmp_path / "cell.pt"
    score = runs._Scorer.score

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs._Scorer, "score", killed)
    with pytest.raises(KeyboardInterrupt):
        run_fair("fairptgan", table, **kw, checkpoint=str(path), checkpoint_every=1)
    assert path.is_file()  # kept: training is not lost
    monkeypatch.setattr(runs._Scorer, "score", score)
    again, timing = run_fair("fairptgan", table, **kw, checkpoint=str(path), checkpoint_every=1)
    assert timing["resumed_at"] == 3 and not path.exists()
    pd.testing.assert_frame_equal(again, whole)


def test_bad_settings_raise():
    with pytest.raises(InvalidInputError):
        run_fair("fairgan", None, seeds=[0], n_iter=1, n_sets=5, n_rows=10)
    with pytest.raises(InvalidInputError, match="n_sets"):
        run_fair("fairptgan", None, seeds=[0], n_iter=1, n_sets=2, n_rows=10)
    with pytest.raises(InvalidInputError, match="seeds"):
        run_fair("fairptgan", None, seeds=[], n_iter=1, n_sets=5, n_rows=10)


def test_missing_law_school_gives_a_provisional_not_run_shard():
    if all(s == VERIFIED for s in dataset_states("law_school").values()):
        pytest.skip("law_school.csv is present")
    cell = Cell("fairptgan", dict(method="fairptgan", dataset="law_school", reps=[0, 1],
                                  rep_seeds=[5, 6], device="cpu", n_iter=1, n_sets=5,
                                  n_rows=10, n_test=None, batch_size=200), 0)
    shard = FAIR.compute(cell)
    assert shard.provisional and list(shard.rows["rep"]) == [0, 1]
    row = shard.rows.iloc[0]
    assert row["status"] == "not run" and "law_school.csv" in row["reason"]
