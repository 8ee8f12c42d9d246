"""Hand-worked cases of every verdict of fusionlib.compendium.verdicts, and their edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fusionlib.compendium.verdicts import (
    Estimate,
    categorical,
    compare,
    direction,
    fixed,
    smoke_verdict,
)
from fusionlib.errors import InvalidInputError

Z90 = stats.norm.ppf(0.95)   # 1.6449: TOST at 5 % uses the two-sided 90 % interval
Z95 = stats.norm.ppf(0.975)  # 1.9600


# ------------------------------------------------------------------ estimates
def test_from_sample_mean_and_standard_error():
    e = Estimate.from_sample([1.0, 2.0, 3.0])  # mean 2, sd 1, se 1/sqrt(3)
    assert e.value == 2.0 and e.n == 3 and e.df == 2
    assert e.se == pytest.approx(1 / math.sqrt(3))


def test_one_repetition_has_an_unknown_spread():
    e = Estimate.from_sample([0.7])
    assert e.value == 0.7 and e.se is None and e.n == 1


def test_from_sample_refuses_nan_repetitions():
    with pytest.raises(InvalidInputError, match="drop them"):
        Estimate.from_sample([1.0, float("nan")])


def test_paper_value_without_sd_is_exact_and_with_sd_needs_n():
    assert Estimate.from_mean_sd(0.3, None, None).se == 0.0
    assert Estimate.from_mean_sd(0.3, float("nan"), None).se == 0.0
    e = Estimate.from_mean_sd(0.3, 0.02, 10)  # se 0.02/sqrt(10) = 0.006325
    assert e.se == pytest.approx(0.006325, abs=1e-6) and e.df == 9
    with pytest.raises(InvalidInputError, match="number of repetitions"):
        Estimate.from_mean_sd(0.3, 0.02, None)


def test_bootstrap_standard_error_is_the_replicates_sd():
    e = Estimate.from_bootstrap(0.5, [0.4, 0.5, 0.6])  # sd (ddof 1) = 0.1
    assert e.se == pytest.approx(0.1) and e.df is None


@pytest.mark.parametrize("kw", [dict(se=-1.0), dict(se=float("nan")), dict(n=0),
                                dict(n=2.5), dict(df=0.0)])
def test_bad_estimates_are_refused(kw):
    with pytest.raises(InvalidInputError):
        Estimate(1.0, **kw)


# ------------------------------------------------------------------ compare
def test_exact_values_within_and_outside_the_tolerance():
    assert compare(0.50, 0.54, 0.05).verdict == "reproduced"
    d = compare(0.50, 0.56, 0.05)
    assert d.verdict == "differs" and "0.06" in d.reason
    # the edge |gap| == tolerance is reproduced (closed interval)
    assert compare(0.5, 0.75, 0.25).verdict == "reproduced"


def test_zero_spread_on_both_sides_is_the_exact_rule():
    d = compare(Estimate(1.0, 0.0), Estimate(1.2, 0.0), 0.1)
    assert d.verdict == "differs" and d.test.startswith("exact")


def test_tost_reproduced_hand_worked():
    # gap 0.02, se 0.01 (normal): 90 % interval 0.02 +- 0.016449 = [0.00355, 0.03645]
    d = compare(Estimate(0.0, 0.0), Estimate(0.02, 0.01), 0.04)
    assert d.verdict == "reproduced"
    assert d.low == pytest.approx(0.02 - Z90 * 0.01) and d.high == pytest.approx(0.02 + Z90 * 0.01)
    # tolerance 0.035 < 0.03645: the interval leaves the margin -> not shown equivalent
    assert compare(Estimate(0.0, 0.0), Estimate(0.02, 0.01), 0.035).verdict == "inconclusive"


def test_differs_needs_the_95_interval_outside_the_tolerance():
    # gap 0.10, se 0.02: 95 % interval [0.0608, 0.1392]; tolerance 0.05 -> resolved difference
    d = compare(0.0, Estimate(0.10, 0.02), 0.05)
    assert d.verdict == "differs" and d.low == pytest.approx(0.10 - Z95 * 0.02)
    # tolerance 0.07 > 0.0608: the interval overlaps the margin -> inconclusive, not differs
    assert compare(0.0, Estimate(0.10, 0.02), 0.07).verdict == "inconclusive"


def test_both_spreads_combine_and_welch_df_widens_the_interval():
    ours = Estimate.from_mean_sd(0.10, 0.03, 3)   # se 0.01732, df 2
    paper = Estimate.from_mean_sd(0.0, 0.03, 10)  # se 0.00949, df 9
    d = compare(paper, ours, 0.05)
    s = math.hypot(0.03 / math.sqrt(3), 0.03 / math.sqrt(10))
    v1, v2 = (0.03**2 / 3), (0.03**2 / 10)
    df = (v1 + v2) ** 2 / (v1**2 / 2 + v2**2 / 9)  # Welch-Satterthwaite, about 3.2
    assert d.low == pytest.approx(0.10 - stats.t.ppf(0.975, df) * s)
    assert d.verdict == "inconclusive"  # the t interval with about 3 df reaches below 0.05
    assert "df 3." in d.test


def test_one_repetition_is_inconclusive_however_close():
    d = compare(0.5, Estimate.from_sample([0.5]), 0.1)
    assert d.verdict == "inconclusive" and "unknown" in d.reason


def test_nan_ours_is_not_run_and_nan_paper_is_an_error():
    assert compare(0.5, float("nan"), 0.1).verdict == "not run"
    assert compare(0.5, None, 0.1).verdict == "not run"
    with pytest.raises(InvalidInputError, match="paper"):
        compare(float("nan"), 0.5, 0.1)


def test_not_comparable_and_not_run_come_before_any_comparison():
    d = compare(0.5, 9.9, 0.1, not_comparable="8 of 50 evaluation points")
    assert d.verdict == "not comparable" and "50" in d.reason
    assert compare(0.5, 9.9, 0.1, not_run="needs a GPU").verdict == "not run"
    with pytest.raises(InvalidInputError, match="reason"):
        compare(0.5, 0.5, 0.1, not_comparable="")


@pytest.mark.parametrize("tol", [-1, float("nan"), "0.1", True])
def test_bad_tolerance(tol):
    with pytest.raises(InvalidInputError, match="tolerance"):
        compare(0.5, 0.5, tol)


def test_why_is_added_to_a_difference():
    assert "CTGAN" in compare(0.0, 1.0, 0.1, why="CTGAN trained shorter").reason


def test_compare_is_symmetric_in_the_gap():
    a = compare(Estimate(0.0, 0.01), Estimate(0.03, 0.01), 0.05).verdict
    b = compare(Estimate(0.03, 0.01), Estimate(0.0, 0.01), 0.05).verdict
    assert a == b


def test_more_repetitions_never_turn_reproduced_into_something_else():
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 1.0, 400)
    verdicts = [compare(0.0, Estimate.from_sample(x[:n]), 0.5).verdict for n in (4, 25, 400)]
    assert verdicts[-1] == "reproduced" and "differs" not in verdicts


# ------------------------------------------------------------------ direction
def test_direction_hand_worked():
    # -0.3 with se 0.1 (df 9): one-sided 95 % upper bound -0.3 + 1.833 * 0.1 = -0.117 < 0
    d = direction(Estimate(-0.3, 0.1, n=10, df=9), "<0")
    assert d.verdict == "reproduced" and d.high == pytest.approx(-0.3 + stats.t.ppf(0.95, 9) * 0.1)
    assert direction(Estimate(0.3, 0.1, n=10, df=9), "<0").verdict == "differs"
    assert direction(Estimate(-0.1, 0.1, n=10, df=9), "<0").verdict == "inconclusive"
    assert direction(Estimate(0.3, 0.1, n=10, df=9), ">0").verdict == "reproduced"


def test_direction_exact_values_decide_by_sign_and_zero_differs():
    assert direction(-1e-9, "<0").verdict == "reproduced"
    assert direction(0.0, "<0").verdict == "differs"
    assert direction(Estimate(-5.0, None), "<0").verdict == "inconclusive"
    assert direction(float("nan"), "<0").verdict == "not run"
    with pytest.raises(InvalidInputError, match="expect"):
        direction(1.0, "<=0")


# ------------------------------------------------------------------ categorical and the rest
def test_categorical():
    assert categorical(True).verdict == "reproduced"
    assert categorical(False, reason="1 of 2 seeds missed a mode").verdict == "differs"
    d = categorical(False, reason="1 seed missed a mode", n=2, n_needed=10)
    assert d.verdict == "inconclusive" and "2 of the 10" in d.reason
    with pytest.raises(InvalidInputError, match="reason"):
        categorical(False)
    with pytest.raises(InvalidInputError, match="bool"):
        categorical("yes")  # type: ignore[arg-type]


def test_fixed_validates():
    assert fixed("reproduced").verdict == "reproduced"
    with pytest.raises(InvalidInputError, match="allowed"):
        fixed("maybe", "x")
    with pytest.raises(InvalidInputError, match="reason"):
        fixed("inconclusive")


def test_smoke_verdict_keeps_settings_and_not_run():
    differs = compare(0.0, 1.0, 0.1)
    assert smoke_verdict(differs, "result").verdict == "not comparable"
    assert smoke_verdict(differs, "setting").verdict == "differs"
    assert smoke_verdict(fixed("not run", "no data"), "result").verdict == "not run"


def test_estimate_text():
    assert Estimate(0.5, 0.01, n=10).text() == "0.5 ± 0.01 (n=10)"
    assert Estimate(0.5, None, n=1).text() == "0.5 (spread unknown) (n=1)"
    assert Estimate(float("nan")).text() == "–"
