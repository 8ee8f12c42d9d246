"""Hand-worked cases of every verdict of fusionlib.compendium.verdicts, and their edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fusionlib.compendium.verdicts import (
    Estimate,
    across_readings,
    binomial,
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


# ------------------------------------------------------------------ issue 29 item 2: no decision
# without evidence. Each case first failed against the old rules.
T975_9 = stats.t.ppf(0.975, 9)  # 2.262: the two-sided 95 % quantile with 9 df
T95_9 = stats.t.ppf(0.95, 9)    # 1.833: the one-sided 95 % quantile with 9 df


# case 1: zero spread from n >= 2 repetitions is not an exact value
def test_two_identical_repetitions_are_not_an_exact_value():
    # two identical forest accuracies: se 0 from n = 2 (the old rule called this exact and
    # "reproduced" it with no interval)
    twice = Estimate.from_sample([0.8125, 0.8125])
    assert twice.se == 0.0 and twice.n == 2
    d = compare(0.81, twice, 0.01)
    assert d.verdict == "inconclusive" and "zero spread" in d.reason and "2 repetitions" in d.reason
    assert d.low is None and d.high is None  # no interval
    d = direction(Estimate.from_sample([-0.1, -0.1]), "<0")
    assert d.verdict == "inconclusive" and "zero spread" in d.reason


def test_identical_repetitions_with_a_resolution_take_half_of_it_as_standard_error():
    # accuracies on 1,000 test rows: resolution 1/1000; se taken as 0.0005 with n - 1 = 1 df
    e = Estimate.from_sample([0.8125, 0.8125], resolution=1e-3)
    assert e.resolution == 1e-3
    d = compare(0.81, e, 0.01)
    q = stats.t.ppf(0.95, 1)  # 6.31
    assert d.verdict == "reproduced"
    assert d.low == pytest.approx(0.0025 - q * 0.0005) and "resolution" in d.test
    # a coarse resolution (1/100) leaves the interval wider than the tolerance: inconclusive
    coarse = Estimate.from_sample([0.8125, 0.8125], resolution=1e-2)
    assert compare(0.81, coarse, 0.01).verdict == "inconclusive"


def test_an_exact_value_with_repetitions_must_be_declared():
    declared = Estimate(0.8125, 0.0, n=2, exact=True)
    d = compare(0.81, declared, 0.01)
    assert d.verdict == "reproduced" and d.test.startswith("exact")
    assert compare(0.81, Estimate(0.8125, 0.0, n=2, exact=True), 0.001).verdict == "differs"
    # the factory of an exact value still works, and declares it
    assert Estimate.exact(0.5).exact is True and Estimate.exact(0.5).se == 0.0
    with pytest.raises(InvalidInputError, match="exact"):
        Estimate(0.5, 0.01, exact=True)
    with pytest.raises(InvalidInputError, match="resolution"):
        Estimate(0.5, 0.0, n=2, resolution=0.0)


def test_a_bootstrap_without_spread_has_an_unknown_spread():
    assert Estimate.from_bootstrap(0.9, [0.9, 0.9, 0.9]).se is None


def test_zero_spread_rule_could_go_the_other_way():
    # planted fault: the same accuracies with a real spread are decided by their interval
    spread = Estimate.from_sample([0.8100, 0.8125, 0.8110, 0.8120, 0.8105, 0.8115])
    assert compare(0.81, spread, 0.01).verdict == "reproduced"
    assert compare(0.85, spread, 0.01).verdict == "differs"


# case 4: counts of successes are decided by a symmetric binomial rule
def test_success_on_fewer_seeds_than_the_paper_ran_is_not_reproduced():
    # the old categorical(True, n=2, n_needed=10) said "reproduced" on 2 of 10 seeds
    d = binomial(2, 2, 1.0, tolerance=0.26)
    assert d.verdict == "inconclusive" and "2 of 2" in d.reason
    # ten of ten: the 90 % Clopper-Pearson interval [0.05 ** (1/10), 1] = [0.741, 1] lies in
    # [0.74, 1]
    d = binomial(10, 10, 1.0, tolerance=0.26)
    assert d.verdict == "reproduced" and d.low == pytest.approx(0.05 ** 0.1)


def test_failure_on_fewer_seeds_than_the_paper_ran_can_differ():
    # the old rule made any failure with n < n_needed inconclusive; 0 of 3 against a rate of 1:
    # the 95 % interval [0, 1 - 0.025 ** (1/3)] = [0, 0.708] lies below 1 - 0.26
    d = binomial(0, 3, 1.0, tolerance=0.26)
    assert d.verdict == "differs" and d.high == pytest.approx(1 - 0.025 ** (1 / 3))
    assert binomial(2, 3, 1.0, tolerance=0.26).verdict == "inconclusive"


def test_categorical_counts_go_through_the_binomial_rule():
    with pytest.raises(InvalidInputError, match="binomial"):
        categorical(False, reason="1 seed missed a mode", n=2, n_needed=10)
    with pytest.raises(InvalidInputError, match="binomial"):
        categorical(True, n=2, n_needed=10)


def test_an_outcome_the_reduction_produces_is_not_comparable():
    d = binomial(0, 3, 0.0, tolerance=0.26,
                 not_comparable="a plain GAN covers no mode after 2,000 iterations anyway")
    assert d.verdict == "not comparable" and "2,000" in d.reason


def test_binomial_rule_could_go_the_other_way():
    # planted fault: the same 10 of 10 against a paper that reports 0 of 10
    assert binomial(10, 10, 1.0, tolerance=0.26).verdict == "reproduced"
    assert binomial(10, 10, 0.0, tolerance=0.26).verdict == "differs"
    with pytest.raises(InvalidInputError):
        binomial(4, 3, 1.0, tolerance=0.1)
    with pytest.raises(InvalidInputError):
        binomial(1, 3, 1.5, tolerance=0.1)


# case 5: one level for "differs"; Welch df with one bootstrap side
def test_direction_and_compare_call_differs_at_the_same_level():
    # 0.2 with se 0.1 (df 9): the one-sided 95 % bound 0.2 - 1.833 * 0.1 = 0.017 > 0, but the
    # two-sided 95 % interval [0.2 - 2.262 * 0.1, ...] = [-0.026, 0.426] reaches below 0;
    # compare calls it inconclusive against 0 with tolerance 0, so must direction
    e = Estimate(0.2, 0.1, n=10, df=9)
    assert compare(0.0, e, 0.0).verdict == "inconclusive"
    d = direction(e, "<0")
    assert d.verdict == "inconclusive" and d.low == pytest.approx(0.2 - T975_9 * 0.1)
    # 0.25: [0.024, 0.476] is resolved on the other side for both
    assert direction(Estimate(0.25, 0.1, n=10, df=9), "<0").verdict == "differs"
    assert compare(0.0, Estimate(0.25, 0.1, n=10, df=9), 0.0).verdict == "differs"
    # "reproduced" keeps its one-sided 95 % bound: -0.2 + 1.833 * 0.1 = -0.017 < 0
    d = direction(Estimate(-0.2, 0.1, n=10, df=9), "<0")
    assert d.verdict == "reproduced" and d.high == pytest.approx(-0.2 + T95_9 * 0.1)


def test_welch_df_with_a_bootstrap_side_uses_the_other_sides_repetitions():
    paper = Estimate.from_bootstrap(0.0, [-0.01, 0.0, 0.01])  # se 0.01, no n, no df
    ours = Estimate.from_sample([0.09, 0.10, 0.11])           # se 0.00577, n 3, df 2
    s = math.hypot(0.01, 0.01 / math.sqrt(3))
    d = compare(paper, ours, 0.01)
    assert d.low == pytest.approx(0.10 - stats.t.ppf(0.975, 2) * s)  # not the normal 1.96
    assert "df 2" in d.test


def test_n_without_df_gives_n_minus_1_degrees_of_freedom():
    e = Estimate(-0.3, 0.1, n=10)  # e.g. a bootstrap over 10 repetitions
    assert direction(e, "<0").high == pytest.approx(-0.3 + T95_9 * 0.1)


# case 6: a margin as wide as the paper's value only bounds ours from above
def test_a_margin_wider_than_the_paper_value_is_one_sided_in_effect():
    d = compare(0.02, Estimate(0.0, 0.001, n=10, df=9), 0.05)
    assert d.verdict == "reproduced"
    assert "one-sided in effect: ours <= paper + margin" in d.reason
    assert "one-sided" not in compare(0.5, Estimate(0.51, 0.005, n=10, df=9), 0.05).reason


def test_compare_could_go_the_other_way():
    # planted fault: the paper's value scaled by 2
    ours = Estimate(0.51, 0.005, n=10, df=9)
    assert compare(0.5, ours, 0.05).verdict == "reproduced"
    assert compare(1.0, ours, 0.05).verdict == "differs"


def test_direction_could_go_the_other_way():
    # planted fault: the same paired data with the two methods swapped
    a = np.array([0.30, 0.32, 0.29, 0.31, 0.33])
    b = np.array([0.40, 0.41, 0.38, 0.42, 0.40])
    assert direction(Estimate.from_sample(a - b), "<0").verdict == "reproduced"
    assert direction(Estimate.from_sample(b - a), "<0").verdict == "differs"


# --- across_readings: a statement under each reading of an unstated choice -----------------------


@pytest.mark.parametrize("verdicts, expected", [
    (["reproduced", "reproduced", "reproduced"], "reproduced"),
    (["differs", "differs", "differs"], "differs"),
    (["differs", "reproduced", "differs"], "inconclusive"),     # depends on the choice
    (["differs", "inconclusive", "differs"], "inconclusive"),   # a reading could not decide
    (["reproduced", "inconclusive"], "inconclusive"),
    (["not comparable", "not comparable"], "not comparable"),
    (["differs", "not run", "not run"], "not run"),             # partly decided: either way
    (["reproduced", "not run"], "not run"),
    (["differs", "reproduced", "not run"], "inconclusive"),     # already depends on the choice
    (["not run", "not run"], "not run"),
])
def test_across_readings_decides_symmetrically(verdicts, expected):
    d = across_readings([(f"r{i}", v) for i, v in enumerate(verdicts)])
    assert d.verdict == expected and d.reason and not d.stated


def test_across_readings_names_both_sides_and_missing_readings():
    d = across_readings([("tau=0.2", "differs"), ("tau=1", "reproduced"), ("bn", "not run")])
    assert "reproduced under tau=1" in d.reason and "differs under tau=0.2" in d.reason
    assert "2 of 3 readings computed" in d.reason


def test_across_readings_could_go_the_other_way():
    # planted fault: the two methods swapped in every reading flips a decided verdict
    swap = {"reproduced": "differs", "differs": "reproduced"}
    for vs in (["reproduced"] * 3, ["differs"] * 3):
        before = across_readings([(str(i), v) for i, v in enumerate(vs)]).verdict
        after = across_readings([(str(i), swap[v]) for i, v in enumerate(vs)]).verdict
        assert before != after


def test_across_readings_refuses_bad_input():
    with pytest.raises(InvalidInputError, match="at least one"):
        across_readings([])
    with pytest.raises(InvalidInputError, match="unknown verdicts"):
        across_readings([("a", "maybe")])
