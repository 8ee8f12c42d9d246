"""Paper tables as data, side by side with ours, registered as claims in one way."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.claims import make_claim
from fusionlib.compendium.paper import (
    PAPER_TABLES,
    paper_table,
    paper_table_info,
    register_table,
    side_by_side,
    tally,
)
from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError


class _FakeRun:
    """The member of Run that register_table uses (no torch import)."""

    scale = "cpu"

    def __init__(self):
        self.made = []

    def claim(self, claim_id, seed_file, where, quantity, paper, ours, **kw):
        c = make_claim(claim_id, seed_file, where, quantity, paper, ours, scale=self.scale,
                       experiment="t", **kw)
        self.made.append(c)
        return c


def test_every_paper_table_file_loads_with_its_header():
    files = sorted(PAPER_TABLES.glob("*/*.csv"))
    assert files, "no paper tables found"
    for f in files:
        kind = "Table" if f.stem.startswith("table") else "Section"
        name = f"{kind} {f.stem.removeprefix(kind.lower()).upper()}"
        info = paper_table_info(f.parent.name, name)
        assert info["seed"] == f.parent.name and info["table"] == name
        assert len(paper_table(f.parent.name, name)) > 0


def test_paper_table_keeps_empty_keys_and_reads_empty_values_as_nan():
    t7 = paper_table("002", "Table 7")
    assert set(t7.loc[t7["method"] == "CTGAN", "overlap"]) == {""}
    assert t7["DM"].dtype == float
    # hand-checked against the seed: Table 7, adult, IGO, relationship: 0.993 0.983 0.588
    row = t7[(t7.dataset == "adult") & (t7.method == "IGO") & (t7.overlap == "relationship")]
    assert row[["1-TVD", "CS", "DM"]].to_numpy().tolist() == [[0.993, 0.983, 0.588]]
    t8 = paper_table("002", "Table 8")
    assert t8["KL (age)"].isna().any() and t8["KL (race)"].dtype == float


def test_unknown_table_names_what_exists():
    with pytest.raises(InvalidInputError, match="available"):
        paper_table("002", "Table 99")
    with pytest.raises(InvalidInputError, match="Table 7"):
        paper_table("002", "T7")


def test_side_by_side_keeps_paper_rows_and_marks_missing_as_not_run():
    paper = pd.DataFrame({"dataset": ["a", "b"], "method": ["IGO", "IGO"], "DM": [0.6, 0.7]})
    ours = pd.DataFrame({"dataset": ["a"], "method": ["IGO"], "DM": [0.55], "status": ["run"],
                         "reason": [""]})
    out = side_by_side(paper, ours, ["dataset", "method"], ["DM"])
    assert list(out.columns) == ["dataset", "method", "DM paper", "DM ours", "status", "reason"]
    assert out["DM ours"].iloc[0] == pytest.approx(0.55) and np.isnan(out["DM ours"].iloc[1])
    assert list(out["status"]) == ["run", "not run"]


def test_register_table_one_claim_per_cell_with_verdicts_and_tally():
    table = pd.DataFrame({"dataset": ["a", "a", "b"], "method": ["IGO", "Latent", "IGO"],
                          "overlap": ["x", "x", "y"], "DM paper": [0.6, 0.6, np.nan],
                          "DM ours": [0.61, 0.7, 0.5], "status": ["run", "run", "run"],
                          "reason": ["", "", ""]})
    run = _FakeRun()
    # our cells are bare numbers: a result table must say why they are exact, or give estimates
    with pytest.raises(InvalidInputError, match="exact="):
        register_table(run, table, seed_file="002", tag="T7", where="Table 7", metrics=["DM"],
                       tolerance={"DM": 0.05})
    run = _FakeRun()
    v = register_table(run, table, seed_file="002", tag="T7", where="Table 7", metrics=["DM"],
                       tolerance={"DM": 0.05}, why=lambda r, m: f"because {r['method']}",
                       exact="computed once from every row")
    assert "every row" in run.made[0].test
    assert len(run.made) == 2  # the empty paper cell is skipped
    assert list(v["verdict"]) == ["reproduced", "differs"]
    assert "because Latent" in run.made[1].reason
    assert run.made[0].claim_id == "002-T7-a-IGO-x-DM"
    assert tally(v) == "1 of 2" and tally(v, method="Latent") == "0 of 1"


def test_register_table_rows_not_run_become_not_run_claims():
    table = pd.DataFrame({"dataset": ["a"], "method": ["IGO"], "overlap": ["x"],
                          "DM paper": [0.6], "DM ours": [np.nan], "status": ["not run"],
                          "reason": ["data unavailable: put law.csv in data/"]})
    run = _FakeRun()
    v = register_table(run, table, seed_file="002", tag="T", where="Table 7", metrics=["DM"],
                       tolerance={"DM": 0.05})
    assert list(v["verdict"]) == ["not run"] and "law.csv" in run.made[0].reason


def test_a_cell_biased_by_this_scale_is_not_compared():
    table = pd.DataFrame({"dataset": ["a"], "method": ["IGO"], "overlap": ["x"],
                          "DM paper": [0.6], "DM ours": [0.6], "status": ["run"], "reason": [""]})
    run = _FakeRun()
    v = register_table(run, table, seed_file="002", tag="T", where="Table 7", metrics=["DM"],
                       tolerance={"DM": 0.05},
                       not_comparable=lambda r, m: "row cap" if m == "DM" else None)
    assert list(v["verdict"]) == ["not comparable"] and "row cap" in run.made[0].reason


def test_register_table_uses_the_estimates_and_kind():
    table = pd.DataFrame({"dataset": ["a"], "method": ["IGO"], "overlap": ["x"],
                          "DM paper": [0.6], "DM ours": [0.7], "status": ["run"], "reason": [""]})
    run = _FakeRun()
    # gap 0.1 with se 0.2: far too uncertain for a tolerance of 0.05 -> inconclusive
    v = register_table(run, table, seed_file="002", tag="T", where="Table 7", metrics=["DM"],
                       tolerance={"DM": 0.05}, kind="extension",
                       estimates=lambda r, m: (Estimate(0.6), Estimate(0.7, 0.2, n=3)))
    assert list(v["verdict"]) == ["inconclusive"]
    assert run.made[0].kind == "extension" and run.made[0].ours_se == "0.2"
