"""The scorecard's denominator: the inventory of the seeds' items and their computed status."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.compendium.claims import claims_frame, make_claim
from fusionlib.compendium.scorecard import (
    collect_claims,
    conclusion_table,
    coverage_summary,
    flips_per_paper,
    inventory_status,
    load_inventory,
)
from fusionlib.errors import InvalidInputError


def _claims(*wheres):
    return claims_frame(make_claim(f"c{i}", seed, w, "q", 1.0, 1.0, scale="cpu",
                                   experiment="e", tolerance=0.1, exact="a hand-made value")
                        for i, (seed, w) in enumerate(wheres))


def test_inventory_covers_every_seed_and_is_unique():
    inv = load_inventory()
    assert set(inv["seed_file"]) == {"000", "001", "002"}
    assert not inv["item_id"].duplicated().any()
    assert {f"Section {s}" for s in "ABCDEFGHI"} <= set(inv.loc[inv.seed_file == "000", "label"])


def test_an_item_is_checked_only_by_a_claim_that_names_it():
    inv = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "seed_file": ["001"] * 3 + ["002"],
                        "kind": ["figure"] * 4,
                        "label": ["Figure 1", "Figure 9", "Figure 10", "Figure 1"],
                        "title": [""] * 4, "chapter": [""] * 4,
                        "status": ["checked", "not built yet", "used, no claim", "checked"],
                        "reason": [""] * 4})
    out = inventory_status(inv, _claims(("001", "Figure 1 / Figure 9")))
    # Figure 1 and 9 of seed 001 are named; Figure 10 is not ("Figure 1" is not a prefix match);
    # seed 002's Figure 1 has no claim of its own seed, so its declared "checked" becomes not run
    assert list(out["status"]) == ["checked", "checked", "used, no claim", "not run"]
    summary = coverage_summary(out)
    assert summary.loc["all", "items"] == 4 and summary.loc["all", "checked"] == 2
    assert summary.loc["all", "checked share"] == pytest.approx(0.5)


def test_collect_claims_skips_unfinished_runs_and_the_scorecard(tmp_path):
    for name in ("exp", ".exp.partial", "scorecard"):
        (tmp_path / name).mkdir()
        _claims(("002", "Table 7")).to_csv(tmp_path / name / "claims.csv", index=False)
    claims, files = collect_claims(tmp_path)
    assert [f.parent.name for f in files] == ["exp"] and len(claims) == 1


def test_proof_only_is_a_declared_status_that_a_claim_overrides(tmp_path):
    inv = pd.DataFrame({"item_id": ["a", "b"], "seed_file": ["001", "001"],
                        "kind": ["lemma", "lemma"], "label": ["Lemma 5", "Lemma 6"],
                        "title": ["", ""], "chapter": ["", ""],
                        "status": ["proof only", "proof only"], "reason": ["", ""]})
    path = tmp_path / "inventory.csv"
    inv.to_csv(path, index=False)
    loaded = load_inventory(path)
    out = inventory_status(loaded, _claims(("001", "Lemma 6")))
    assert list(out["status"]) == ["proof only", "checked"]
    summary = coverage_summary(out)
    assert summary.loc["001", "proof only"] == 1 and summary.loc["001", "checked share"] == 0.5
    inv.loc[0, "status"] = "proof"
    inv.to_csv(path, index=False)
    with pytest.raises(InvalidInputError, match="proof only"):
        load_inventory(path)


def test_an_item_with_only_settings_or_extensions_computed_says_so():
    from fusionlib.compendium.claims import claims_frame, make_claim

    inv = pd.DataFrame({"item_id": ["a", "b", "c"], "seed_file": ["001"] * 3,
                        "kind": ["table"] * 3, "label": ["Table 9", "Table 2", "Table 4"],
                        "title": [""] * 3, "chapter": [""] * 3,
                        "status": ["checked"] * 3, "reason": [""] * 3})
    claims = claims_frame([
        make_claim("001-T9-w", "001", "Table 9", "width", 64, 64, kind="setting", scale="cpu",
                   tolerance=0, experiment="e"),
        make_claim("001-T2-x", "001", "Table 2", "ours", 0.1, 0.1, kind="extension",
                   scale="cpu", experiment="e", tolerance=0.1),
        make_claim("001-T4-w", "001", "Table 4", "width", 64, None, kind="setting",
                   scale="cpu", experiment="e", not_run="paper scale only")])
    out = inventory_status(inv, claims)
    # a not-run setting computes nothing: the item declared checked is "not run"
    assert list(out["status"]) == ["settings only", "extension only", "not run"]
    assert coverage_summary(out).loc["all", "checked"] == 0


def test_conclusion_table_marks_verdicts_and_shows_seed_stability_when_known():
    group = pd.DataFrame({"verdict": ["reproduced", "differs"], "statement": ["a", "b"],
                          "source": ["Abstract", "Section 5"], "reason": ["", "r"],
                          "ran": [2, 1], "claims": [3, 1], "to_decide": ["paper scale", ""]})
    t = conclusion_table(group)
    assert list(t.columns) == ["verdict", "conclusion", "where", "why", "claims run",
                               "to decide the rest"]
    assert t["verdict"].tolist() == ["✓ reproduced", "✗ differs"]
    assert t["claims run"].tolist() == ["2 of 3", "1 of 1"]
    stable = conclusion_table(group.assign(**{"seed-stable claims": ["2 of 2", "0 of 1"]}))
    assert list(stable.columns)[5:] == ["seed-stable", "to decide the rest"]


def test_flips_per_paper_counts_the_claims_whose_verdict_flips():
    stability = pd.DataFrame({"seed_file": ["000", "000", "001", "001"],
                              "stability": ["flips: reproduced/differs", "stable",
                                            "stable", "flips: ?"]})
    by = flips_per_paper(stability, {"000": "FusionGAN", "001": "PTGAN"})
    assert by.to_dict() == {"FusionGAN": 1, "PTGAN": 1}
    none = flips_per_paper(stability.assign(stability="stable"), {"000": "F", "001": "P"})
    assert none.sum() == 0


def test_conclusions_link_to_their_key_claims_and_to_the_chapters_that_bear_on_them():
    from fusionlib.compendium.run import Link
    from fusionlib.compendium.scorecard import conclusion_chapters

    claims = pd.DataFrame({"claim_id": ["a", "b", "c", "d"],
                           "experiment": ["fusiongan", "identification", "identification",
                                          "data"]})
    conclusions = pd.DataFrame({"conclusion_id": ["000-K1", "000-K2"],
                                "claim_ids": ["a b c", ""], "shown_ids": ["", "d"]})
    assert conclusion_chapters(conclusions, claims) == ["identification fusiongan", "data"]
    group = pd.DataFrame({"conclusion_id": ["000-K1", "000-K2"], "verdict": ["differs"] * 2,
                          "statement": ["a", "b"], "source": ["A", "B"], "reason": ["r", "s"],
                          "ran": [3, 0], "claims": [3, 0], "to_decide": ["", ""],
                          "chapters": ["identification fusiongan", ""]})
    t = conclusion_table(group)
    assert list(t.columns)[:5] == ["verdict", "conclusion", "where", "why", "evidence"]
    first = t["evidence"].iloc[0]
    assert first[0] == Link("its 3 key claims", "#conclusion-000-K1")
    assert first[1].href == "identification.html#what-we-found"
    assert first[2].text == "FusionGAN: the technical appendix: what we found"
    assert t["evidence"].iloc[1] == "–"
