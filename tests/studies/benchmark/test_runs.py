"""The cross-paper benchmark: scoring properties, determinism, grid and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.audit import train_audited_tree
from fusionlib.fairtest.protocol.runs import prepare
from fusionlib.fairtest.separation import dataset_spec, separate
from fusionlib.studies.benchmark.cells import BENCH_CONFIG, BENCHMARK
from fusionlib.studies.benchmark.runs import (
    GENERATORS,
    SCORE_COLUMNS,
    BenchSettings,
    make_generator,
    run_generator,
    run_task,
    score,
)

SMALL = BenchSettings(max_rows=400, n_eval=120, ctgan_epochs=1, ctgan_max_rows=200,
                      fusion_epochs=1, fusion_max_rows=200, ptgan_iter=5, ptgan_max_rows=200,
                      dm_n_estimators=5)


def _complete(n: int, seed: int) -> pd.DataFrame:
    """A synthetic COMPAS-shaped table (every column, values from the discretised domain)."""
    from fusionlib.fairtest.discretise import VALUES

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({c: rng.choice(list(v or ("0", "1", "2")), n)  # None: count columns
                       for c, v in VALUES["compas"].items()})
    high = df["score"].eq("High").to_numpy()  # a label tied to the overlap
    df["two-year recidivism"] = np.where(rng.random(n) < 0.3 + 0.4 * high, "1", "0")
    return df.astype(object)


@pytest.fixture(scope="module")
def prep():
    return prepare("compas", seed=0, table=_complete(300, 0))


def _tree(prep, overlap="score"):
    spec = prep.spec
    internal, _ = separate(prep.train, "compas", overlap)
    return train_audited_tree(internal, spec.label, spec.favourable, list(spec.protected))


def test_identical_data_scores_at_the_optimum(prep):
    s = score(prep, prep.test, prep.test.copy(), _tree(prep), seed=0, dm_n_estimators=5)
    assert s["1-TVD"] == pytest.approx(1.0)
    assert s["CS"] == pytest.approx(1.0)
    assert s["KL(A,Y)"] == pytest.approx(0.0, abs=1e-9)
    for m in ("|dDI|", "|dAOD|", "|dEOD|", "coverage"):
        assert s[m] == pytest.approx(0.0, abs=1e-12)


def test_a_shifted_table_scores_worse_than_a_resample(prep):
    tree = _tree(prep)
    resample = prep.train.sample(len(prep.test), random_state=1).reset_index(drop=True)
    shifted = resample.copy()
    spec = dataset_spec("compas")
    shifted[spec.label] = spec.favourable  # every row favourable: marginals and fairness move
    good = score(prep, prep.test, resample, tree, seed=0, dm_n_estimators=5)
    bad = score(prep, prep.test, shifted, tree, seed=0, dm_n_estimators=5)
    assert bad["1-TVD"] < good["1-TVD"]
    assert bad["KL(A,Y)"] > good["KL(A,Y)"]
    assert bad["MMD"] > good["MMD"]


@pytest.mark.parametrize("name", ["IGO", "CIA match"])
def test_run_task_is_deterministic(prep, name):
    a = run_task(name, prep, "score", SMALL, seed=0)
    b = run_task(name, prep, "score", SMALL, seed=0)
    c = run_task(name, prep, "score", SMALL, seed=1)
    cols = [k for k in SCORE_COLUMNS if k != "fit_s"]
    np.testing.assert_allclose([a[k] for k in cols], [b[k] for k in cols])
    assert any(not np.isclose(a[k], c[k]) for k in cols)
    assert a["status"] == "run"


def test_every_generator_runs_on_a_tiny_task(prep):
    for name in GENERATORS:
        row = run_task(name, prep, "score", SMALL, seed=0)
        assert set(SCORE_COLUMNS) <= set(row)
        assert 0.0 <= row["1-TVD"] <= 1.0
        assert row["fit_s"] >= 0.0


def test_unknown_generator_raises():
    with pytest.raises(InvalidInputError, match="IGO"):
        make_generator("GPT", SMALL, seed=0, columns=["a"])


def test_missing_dataset_gives_not_run_rows(monkeypatch):
    from fusionlib.errors import DataUnavailableError
    from fusionlib.studies.benchmark import runs as benchmark

    def missing(*args, **kwargs):
        raise DataUnavailableError("no files")

    monkeypatch.setattr(benchmark, "prepare", missing)
    rows = run_generator("IGO", "adult", ["relationship"], SMALL, seed=0)
    assert (rows["status"] == "not run").all()
    assert rows["reason"].str.contains("no files").all()


def test_grid_has_one_cell_per_generator_dataset_and_repetition():
    for scale, cfg in BENCH_CONFIG.items():
        cells = BENCHMARK.cells(scale, 0)
        assert len(cells) == len(GENERATORS) * len(cfg["datasets"]) * cfg["reps"]
        assert len({c.cell_id for c in cells}) == len(cells)
    assert {c.seed for c in BENCHMARK.cells("paper", 0)} != {c.seed for c in BENCHMARK.cells(
        "paper", 1)}
