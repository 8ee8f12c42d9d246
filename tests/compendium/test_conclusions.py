"""Conclusions aggregate the verdicts of the claims that bear on them."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.compendium.claims import claims_frame, make_claim
from fusionlib.compendium.conclusions import aggregate, conclusion_verdicts, load_conclusions
from fusionlib.errors import InvalidInputError


@pytest.mark.parametrize("verdicts, rule, expected", [
    (["reproduced", "reproduced"], "all", "reproduced"),
    (["reproduced", "differs", "inconclusive"], "all", "differs"),
    (["reproduced", "inconclusive"], "all", "inconclusive"),
    (["not comparable", "not comparable", "not run"], "all", "not comparable"),
    (["reproduced", "not run"], "all", "reproduced"),      # on what ran; `ran` says 1 of 2
    (["not run", "not run"], "all", "not run"),
    ([], "all", "not run"),
    (["reproduced"] * 3 + ["differs"], "most", "reproduced"),   # 3 of 4 = 75 %
    (["reproduced"] * 2 + ["differs"] * 2, "most", "differs"),  # 2 of 4 differ > 25 %
    (["reproduced"] * 2 + ["inconclusive"] * 2, "most", "inconclusive"),
])
def test_aggregate_rules(verdicts, rule, expected):
    assert aggregate(verdicts, rule)[0] == expected


def test_aggregate_refuses_unknown_rule_and_verdict():
    with pytest.raises(InvalidInputError, match="rule"):
        aggregate(["reproduced"], "some")
    with pytest.raises(InvalidInputError, match="unknown verdicts"):
        aggregate(["maybe"], "all")


def _claim(cid, verdict_kw, kind="result", seed="001"):
    ours = None if "not_run" in verdict_kw else 1.0
    return make_claim(cid, seed, "Table 3", "q", 1.0, ours, scale="cpu", experiment="e",
                      kind=kind, **verdict_kw)


def test_only_results_and_theory_bear_on_a_conclusion():
    claims = claims_frame([
        _claim("001-T3-rank-adult-rf", dict(tolerance=0.1)),
        _claim("001-T3-rank-adult-lr", dict(verdict="differs", reason="MP lower")),
        _claim("001-T3-rank-adult-setting", dict(verdict="differs", reason="x"), kind="setting"),
        _claim("001-T3-rank-law-rf", dict(not_run="needs law.csv")),
    ])
    conclusions = pd.DataFrame([{
        "conclusion_id": "001-C1", "seed_file": "001", "statement": "PT+CP below MP",
        "source": "Section 5.1", "claims": r"001-T3-rank-", "rule": "all",
        "to_decide": "paper scale"}])
    out = conclusion_verdicts(conclusions, claims).iloc[0]
    assert out.verdict == "differs" and out.claims == 3 and out.ran == 2
    assert "001-T3-rank-adult-setting" not in out.claim_ids


def test_the_shipped_conclusions_load(tmp_path):
    table = load_conclusions()
    assert set(table.seed_file) == {"000", "001", "002"}
    for seed, group in table.groupby("seed_file"):
        assert 5 <= len(group) <= 12, seed
    bad = table.copy()
    bad.loc[0, "claims"] = "("
    bad.to_csv(tmp_path / "c.csv", index=False)
    with pytest.raises(InvalidInputError, match="regular expression"):
        load_conclusions(tmp_path / "c.csv")
