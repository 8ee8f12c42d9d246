from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.compendium.claims import (
    CLAIM_COLUMNS,
    claims_frame,
    make_claim,
    read_claims,
    stated_claims,
    verdict_counts,
)
from fusionlib.compendium.run import Run
from fusionlib.compendium.verdicts import Estimate, categorical, fixed
from fusionlib.errors import InvalidInputError


def _claim(**kw):
    base = dict(claim_id="002-T1-x", seed_file="002", where="Table 1", quantity="rows",
                paper=10, ours=10, scale="cpu", experiment="t", tolerance=0)
    base.update(kw)
    if isinstance(base["ours"], (int, float)) and "exact" not in kw:
        base["exact"] = "a count of rows (deterministic)"
    return make_claim(**base)


def test_claim_schema_has_the_documented_columns():
    assert CLAIM_COLUMNS == ("claim_id", "seed_file", "kind", "where", "quantity", "paper",
                             "paper_se", "paper_n", "ours", "ours_se", "ours_n", "tolerance",
                             "verdict", "reason", "test", "stated", "scale", "experiment")


def test_verdict_is_computed_from_the_tolerance():
    assert _claim(ours=10.4, tolerance=0.5).verdict == "reproduced"
    differs = _claim(ours=11, tolerance=0.5)
    assert differs.verdict == "differs"
    assert "tolerance" in differs.reason and differs.scale == "cpu"


def test_tolerance_is_two_sided():
    assert _claim(ours=9.0, tolerance=0.5).verdict == "differs"


def test_not_run_requires_a_reason():
    with pytest.raises(InvalidInputError, match="needs a reason"):
        _claim(ours=None, verdict="not run", tolerance=None)
    assert _claim(ours=None, verdict="not run", reason="no data",
                  tolerance=None).verdict == "not run"


@pytest.mark.parametrize("kw, match", [
    (dict(seed_file="003"), "000, 001, 002"),
    (dict(verdict="maybe", reason="x"), "reproduced, differs, inconclusive, not comparable"),
    (dict(kind="opinion"), "result, setting, theory, implementation, extension"),
    (dict(scale="huge"), "smoke, cpu, paper"),
    (dict(tolerance=None), "explicit verdict"),
    (dict(paper="n/a"), "explicit verdict"),
    (dict(expect="<<0"), "expect must be"),
])
def test_bad_claims_are_refused_with_the_allowed_values(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        _claim(**kw)


def test_duplicate_claim_ids_are_refused():
    with pytest.raises(InvalidInputError, match="duplicate"):
        claims_frame([_claim(), _claim()])


def test_claims_round_trip_through_csv_and_counts(tmp_path):
    frame = claims_frame([_claim(), _claim(claim_id="b", ours=3, tolerance=1),
                          _claim(claim_id="c", seed_file="001", ours=None, verdict="not run",
                                 reason="no GPU", tolerance=None)])
    frame.to_csv(tmp_path / "claims.csv", index=False)
    back = read_claims([tmp_path / "claims.csv"])
    pd.testing.assert_frame_equal(back, frame)
    counts = verdict_counts(back)
    assert counts.loc["002", "reproduced"] == 1 and counts.loc["002", "differs"] == 1
    assert counts.loc["001", "not run"] == 1 and counts.loc["001", "total"] == 1


def test_read_claims_rejects_a_wrong_schema(tmp_path):
    pd.DataFrame({"claim_id": ["a"]}).to_csv(tmp_path / "claims.csv", index=False)
    with pytest.raises(InvalidInputError, match="schema"):
        read_claims([tmp_path / "claims.csv"])


def test_run_writes_claims_and_provenance(tmp_path):
    run = Run("demo", scale="smoke", seed=3, results_dir=tmp_path)
    cfg = run.pick(smoke=dict(n=1), cpu=dict(n=10), paper=dict(n=100))
    assert cfg == {"n": 1}
    run.save_table(pd.DataFrame({"a": [1]}), "t")
    run.claim("001-F1-x", "001", "Figure 1", "modes", 8, 8, tolerance=0, kind="setting")
    record = run.finish()
    assert record["scale"] == "smoke" and record["seed"] == 3 and record["config"] == {"n": 1}
    assert {"git_commit", "versions", "device", "wall_time_s"} <= set(record)
    assert (tmp_path / "claims.csv").is_file() and (tmp_path / "provenance.json").is_file()
    assert read_claims([tmp_path / "claims.csv"])["scale"].tolist() == ["smoke"]


def test_run_pick_requires_every_scale(tmp_path):
    run = Run("demo", scale="cpu", results_dir=tmp_path)
    with pytest.raises(InvalidInputError, match="missing"):
        run.pick(smoke={}, cpu={})


def test_run_refuses_unknown_scale(tmp_path):
    with pytest.raises(InvalidInputError, match="smoke, cpu, paper"):
        Run("demo", scale="gpu", results_dir=tmp_path)


def test_one_path_for_not_run_claims_with_their_reason():
    c = make_claim("x", "002", "Table 7", "q", 0.5, None, scale="cpu", experiment="e",
                   not_run="put adult.data under data/adult")
    assert c.verdict == "not run" and "data/adult" in c.reason
    with pytest.raises(InvalidInputError, match="reason"):
        make_claim("x", "002", "T", "q", 0.5, None, scale="cpu", experiment="e", not_run=" ")


def test_nan_ours_never_reproduced():
    c = make_claim("x", "002", "T", "q", 0.5, float("nan"), scale="cpu", experiment="e",
                   tolerance=0.1)
    assert c.verdict == "not run"
    with pytest.raises(InvalidInputError, match="undefined"):
        make_claim("x", "002", "T", "q", 0.5, float("nan"), scale="cpu", experiment="e",
                   kind="setting", verdict="reproduced", reason="echoed")


@pytest.mark.parametrize("tol", [-0.1, float("nan"), float("inf"), "0.1"])
def test_bad_tolerance_refused(tol):
    with pytest.raises(InvalidInputError, match="tolerance"):
        make_claim("x", "002", "T", "q", 0.5, 0.5, scale="cpu", experiment="e", tolerance=tol)


def test_differs_reason_carries_the_known_cause():
    c = make_claim("x", "002", "T", "q", 0.5, 0.9, scale="cpu", experiment="e", tolerance=0.1,
                   why="CTGAN trained shorter", exact="a share of every row")
    assert c.verdict == "differs" and "CTGAN trained shorter" in c.reason


def test_table_shows_whole_number_columns_with_gaps_as_integers(tmp_path):
    run = Run("t", scale="smoke", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"name": ["a", "b"], "rows": [45222.0, None], "share": [0.25, None],
                       "flags": [1.0, 0.0]})
    html_text = run.table(df, "T").to_html()
    assert ">45222<" in html_text and "45222.000" not in html_text  # a count with a gap
    assert ">0.250<" in html_text  # a true fraction keeps its decimals
    assert ">1.000<" in html_text and ">0.000<" in html_text  # no gap: left as floats
    assert ">–<" in html_text
    assert df["rows"].dtype.kind == "f"  # the caller's frame is not changed



def test_estimates_are_carried_into_the_row_and_decide_the_verdict():
    # gap 0.01 with se hypot(0.004, 0.003) = 0.005 and tolerance 0.05: the 90 % interval
    # 0.01 +- 2.132 * 0.005 = [-0.0007, 0.0207] (t with n - 1 = 4 df: only ours has an n)
    # lies inside +-0.05
    c = _claim(paper=Estimate(0.50, 0.003), ours=Estimate(0.51, 0.004, n=5), tolerance=0.05)
    assert c.verdict == "reproduced" and c.paper_se == "0.003" and c.ours_n == "5"
    assert "TOST" in c.test
    # the same gap with se 0.1: inconclusive, not "differs"
    c = _claim(paper=0.5, ours=Estimate(0.6, 0.1), tolerance=0.05)
    assert c.verdict == "inconclusive" and "too uncertain" in c.reason


def test_not_comparable_claims_name_the_reduction_and_compare_nothing():
    c = _claim(ours=99, tolerance=0, not_comparable="3,000 of 57,000 iterations")
    assert c.verdict == "not comparable" and "57,000" in c.reason
    with pytest.raises(InvalidInputError, match="reason"):
        _claim(not_comparable="  ")


def test_direction_claims_through_make_claim():
    c = _claim(paper="< 0", ours=Estimate(-0.3, 0.1, n=10, df=9), tolerance=None, expect="<0")
    assert c.verdict == "reproduced"


def test_smoke_scale_results_carry_no_evidence_but_settings_do():
    c = _claim(scale="smoke", ours=11, tolerance=0.5)
    assert c.verdict == "not comparable" and "'differs'" in c.reason
    assert _claim(scale="smoke", kind="setting").verdict == "reproduced"
    assert _claim(scale="smoke", ours=None, not_run="no data").verdict == "not run"


def test_not_run_with_a_value_of_ours_is_refused():
    with pytest.raises(InvalidInputError, match="not comparable"):
        _claim(ours=0.4, not_run="paper scale only")
    assert _claim(ours=float("nan"), not_run="paper scale only").verdict == "not run"
    assert _claim(ours="n/a", not_run="no data").verdict == "not run"


def test_run_claims_table_is_the_compact_widget(tmp_path):
    run = Run("ptgan_x", scale="cpu", seed=0, results_dir=tmp_path)
    run.claim("001-F1-x", "001", "Figure 1", "modes", 8, 8, tolerance=0, kind="setting")
    html_text = run.claims_table().data
    assert 'id="claims-ptgan-x"' in html_text and "001-F1-x" in html_text
    assert "make claim ID=001-F1-x" in html_text


def test_table_shows_whole_number_columns_without_gaps_as_integers(tmp_path):
    run = Run("t", scale="smoke", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"lambda": [1.0, 10.0, 100.0], "flag": [0.0, 1.0, 1.0],
                       "fid": [24.8, 28.7, 45.9]})
    html_text = run.table(df, "T").to_html()
    assert ">100<" in html_text and "100.000" not in html_text
    assert ">1.000<" in html_text and ">24.800<" in html_text  # shares and metrics keep decimals


# ------------------------------------------------------------------ issue 29 item 2: no decision
# without evidence (each case first failed against the old make_claim)
def _result(**kw):
    base = dict(claim_id="002-T1-x", seed_file="002", where="Table 1", quantity="share",
                paper=0.675, scale="cpu", experiment="t", kind="result")
    base.update(kw)
    return make_claim(**base)


# case 2: a bare number as ours of a result must be declared exact, with the reason
def test_bare_float_result_without_an_exact_reason_is_refused():
    with pytest.raises(InvalidInputError, match=r"exact=.*Estimate\(value, se=None, n=1\)"):
        _result(ours=0.6752, tolerance=0.0005)
    with pytest.raises(InvalidInputError, match="exact="):
        _result(paper="< 0", ours=-0.3, expect="<0")
    c = _result(ours=0.6752, tolerance=0.0005, exact="computed from every row of the data")
    assert c.verdict == "reproduced" and "every row" in c.test and c.ours_se == "0"
    # one repetition of a stochastic run, declared as such: inconclusive
    c = _result(ours=Estimate(0.6752, se=None, n=1), tolerance=0.0005)
    assert c.verdict == "inconclusive" and "unknown" in c.reason
    # settings echo exact values; a bare number there needs no reason
    assert _result(kind="setting", paper=10, ours=10, tolerance=0).verdict == "reproduced"
    # nothing is decided for not run / not comparable, so nothing needs declaring
    assert _result(ours=0.6, not_comparable="3 of 50 points").verdict == "not comparable"
    with pytest.raises(InvalidInputError, match="exact"):
        _result(ours=Estimate(0.6752, 0.001, n=5), tolerance=0.0005, exact="deterministic")
    with pytest.raises(InvalidInputError, match="exact"):
        _result(ours=0.6752, tolerance=0.0005, exact="  ")


def test_exact_declaration_could_go_the_other_way():
    # planted fault: the same exact share one printed digit off
    assert _result(ours=0.6752, tolerance=0.0005, exact="every row").verdict == "reproduced"
    assert _result(ours=0.6770, tolerance=0.0005, exact="every row").verdict == "differs"


# case 3: a stated verdict needs a reason, no tolerance, and is not a result's verdict
def test_stated_verdict_needs_a_reason():
    with pytest.raises(InvalidInputError, match="reason"):
        _claim(kind="setting", tolerance=None, verdict="reproduced")
    c = _claim(kind="setting", tolerance=None, verdict="reproduced", reason="checked by eye")
    assert c.verdict == "reproduced" and c.stated == "True"


def test_stated_verdict_with_a_tolerance_is_refused():
    with pytest.raises(InvalidInputError, match="tolerance"):
        _claim(kind="setting", tolerance=0.5, verdict="differs", reason="by eye")


def test_stated_verdict_on_a_result_or_theory_claim_is_refused():
    for kind in ("result", "theory"):
        for verdict in ("reproduced", "differs", "inconclusive"):
            with pytest.raises(InvalidInputError, match="stated verdict.*computed"):
                _claim(kind=kind, tolerance=None, verdict=verdict, reason="drawn")
    # statements about the protocol stay allowed
    c = _claim(kind="result", tolerance=None, ours=None, verdict="not run", reason="no data")
    assert c.verdict == "not run" and c.stated == "True"
    c = _claim(kind="theory", tolerance=None, verdict="not comparable", reason="a proxy")
    assert c.verdict == "not comparable"
    # a stated decision handed over as decision= is still stated
    with pytest.raises(InvalidInputError, match="stated verdict"):
        _claim(kind="result", tolerance=None, decision=fixed("reproduced", "drawn"))


def test_computed_decisions_are_not_stated():
    d = categorical(True)
    c = _claim(kind="theory", tolerance=None, paper="holds", ours="held at 40 of 40",
               decision=d)
    assert c.verdict == "reproduced" and c.stated == "False"
    assert _claim(ours=10.4, tolerance=0.5, exact="a count").stated == "False"
    with pytest.raises(InvalidInputError, match="decision"):
        _claim(tolerance=None, verdict="reproduced", reason="x", decision=d)


def test_stated_claims_are_listed():
    frame = claims_frame([
        _claim(claim_id="a", kind="setting", tolerance=None, verdict="reproduced",
               reason="by eye"),
        _claim(claim_id="b", kind="setting")])
    assert stated_claims(frame)["claim_id"].tolist() == ["a"]


def test_claims_files_without_the_stated_column_are_still_read(tmp_path):
    frame = claims_frame([_claim(kind="setting")])
    frame.drop(columns="stated").to_csv(tmp_path / "claims.csv", index=False)
    back = read_claims([tmp_path / "claims.csv"])
    assert back["stated"].tolist() == [""]
