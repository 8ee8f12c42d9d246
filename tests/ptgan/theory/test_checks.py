"""The decision rules of the theory claims (fusionlib.ptgan.theory.checks)."""

import numpy as np
import pytest

from fusionlib.compendium.verdicts import Decision, Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.theory import checks


def test_bracket_certifies_refutes_or_cannot_decide():
    assert checks.bracket_decision([0.5, 0.9], [0.1, 0.2], "b").verdict == "reproduced"
    d = checks.bracket_decision([0.5, 1.4], [0.1, 1.1], "b")
    assert d.verdict == "differs" and "counterexample" in d.reason
    d = checks.bracket_decision([0.5, 1.4], [0.1, 0.2], "b")
    assert d.verdict == "inconclusive" and "cannot decide" in d.reason
    assert checks.bracket_decision([[0.5, np.nan]], [[0.1, np.nan]], "b").verdict == "reproduced"
    with pytest.raises(InvalidInputError):
        checks.bracket_decision([np.nan], [np.nan], "b")


def test_held_all_is_a_counterexample_search():
    assert checks.held_all([0.3, 1.0], "x").verdict == "reproduced"
    d = checks.held_all([0.3, 1.01], "x")
    assert d.verdict == "differs" and "1 of 2" in d.reason


def test_rate_of_an_upper_bound_is_one_sided():
    fast = Estimate(-0.9, 0.02, 10, 8.0)  # faster than n^-1/2: consistent with the bound
    assert checks.rate_upper_decision(fast, -0.5, 0.1, "r").verdict == "reproduced"
    slow = Estimate(-0.1, 0.02, 10, 8.0)
    d = checks.rate_upper_decision(slow, -0.5, 0.1, "r")
    assert d.verdict == "differs" and "more slowly" in d.reason
    assert checks.rate_upper_decision(Estimate(-0.45, 0.2, 10, 8.0), -0.5, 0.1,
                                      "r").verdict == "inconclusive"


def test_rate_bracket_uses_the_upper_slope_to_certify_and_the_lower_to_refute():
    good, bad = Estimate(-0.55, 0.01, 20, 18.0), Estimate(0.0, 0.01, 20, 18.0)
    assert checks.rate_bracket_decision(good, bad, -0.5, 0.1, "r").verdict == "reproduced"
    assert checks.rate_bracket_decision(bad, bad, -0.5, 0.1, "r").verdict == "differs"
    assert checks.rate_bracket_decision(bad, good, -0.5, 0.1, "r").verdict == "inconclusive"


def test_a_slow_construction_is_never_a_difference():
    d = checks.construction_rate_decision(Estimate(-1.0, 0.01, 5, 3.0), -2.0, 0.2, "P4")
    assert d.verdict == "inconclusive" and "from above" in d.reason
    assert checks.construction_rate_decision(Estimate(-2.5, 0.05, 5, 3.0), -2.0, 0.2,
                                             "P4").verdict == "reproduced"


def test_lower_bound_decision_per_instance():
    d = checks.lower_bound_decision([2.0, 1.5], [0.1, 0.1], [1.0, 1.0], ["a", "b"], "P2")
    assert d.verdict == "reproduced"
    d = checks.lower_bound_decision([2.0, 0.7], [0.1, 0.05], [1.0, 1.0], ["a", "b"], "P2")
    assert d.verdict == "differs" and "P2" in d.reason and "b" in d.reason
    with pytest.raises(InvalidInputError):
        checks.lower_bound_decision([1.0], [0.1], [1.0, 2.0], ["a"], "P2")


def test_witness_against_exact_w1():
    assert checks.witness_decision(3.0, 0.001, 3.0).verdict == "reproduced"
    assert checks.witness_decision(3.0, 0.001, 3.57).verdict == "differs"
    with pytest.raises(InvalidInputError):
        checks.witness_decision(1.0, 0.1, 0.0)


def test_signs_and_context():
    assert checks.signs_decision([1.0, 2.0], [0.1, 0.1], ["a", "b"], ">0", "s").verdict == \
        "reproduced"
    d = checks.signs_decision([1.0, 0.0], [0.1, 1.0], ["a", "b"], ">0", "s")
    assert d.verdict == "inconclusive" and d.reason.startswith("s: ")
    d = checks.with_context(Decision("reproduced", "", "t"), "hypothesis: H")
    assert d.reason == "hypothesis: H" and d.test == "t"


def _frame(values, instances=1):
    import pandas as pd

    return pd.DataFrame([{"rep": r, "it": i, "v": v} for i in range(instances)
                         for r, v in enumerate(values)])


def test_runs_decision_decides_each_instance_across_runs():
    assert checks.runs_decision(_frame([1.0, 1.2, 0.9, 1.1], 3), "v", "it", "rep", ">0",
                                "s").verdict == "reproduced"
    d = checks.runs_decision(_frame([1.0, -1.2, 0.9, -1.1]), "v", "it", "rep", ">0", "s")
    assert d.verdict == "inconclusive" and d.reason.startswith("s:")
    assert checks.runs_decision(_frame([-1.0, -1.2, -0.9, -1.1]), "v", "it", "rep", ">0",
                                "s").verdict == "differs"
    # one run: no spread across runs, never decided
    assert checks.runs_decision(_frame([5.0]), "v", "it", "rep", ">0", "s").verdict == \
        "inconclusive"


def test_runs_decision_needs_bonferroni_to_call_one_instance_of_many_differs():
    import pandas as pd

    good = _frame([1.0, 1.2, 0.9, 1.1], 30)
    # one instance of 30 leans the other way at 95 % (t, df 3) but not at 1 - 0.05 / 30
    bad = pd.DataFrame({"rep": range(4), "it": 99, "v": [-0.2, -0.5, -0.1, -0.4]})
    d = checks.runs_decision(pd.concat([good, bad]), "v", "it", "rep", ">0", "s")
    assert d.verdict == "inconclusive" and "Bonferroni" in d.reason
    # alone it is a family of one: differs
    assert checks.runs_decision(bad, "v", "it", "rep", ">0", "s").verdict == "differs"
    far = pd.DataFrame({"rep": range(4), "it": 99, "v": [-10.0, -10.1, -9.9, -10.05]})
    assert checks.runs_decision(pd.concat([good, far]), "v", "it", "rep", ">0",
                                "s").verdict == "differs"


def test_runs_decision_refuses_a_run_twice_and_missing_columns():
    import pandas as pd

    twice = pd.DataFrame({"rep": [0, 0, 1], "it": 0, "v": [1.0, 1.0, 1.0]})
    with pytest.raises(InvalidInputError, match="appears twice"):
        checks.runs_decision(twice, "v", "it", "rep", ">0", "s")
    with pytest.raises(InvalidInputError, match="missing"):
        checks.runs_decision(twice, "w", "it", "rep", ">0", "s")
    with pytest.raises(InvalidInputError, match="missing values"):
        checks.runs_decision(twice.assign(it=np.nan), "v", "it", "rep", ">0", "s")


def test_runs_decision_says_what_it_dropped():
    import pandas as pd

    f = pd.DataFrame({"rep": range(5), "it": 0, "v": [1.0, 1.1, 0.9, 1.05, np.nan]})
    d = checks.runs_decision(f, "v", "it", "rep", "<0", "s")
    assert "1 of 5 runs" in d.reason


def test_the_jackknife_of_a_near_zero_u_statistic_resolves_it_negative_and_runs_do_not():
    """The planted fault behind Remark 3's bias rule: with no bias at all (mean-zero draws in one
    direction), the per-check jackknife standard error "resolves" the unbiased estimate of a
    non-negative number below 0 at many checks (a degenerate U-statistic); across runs, the
    same estimates never read "differs" as a family."""
    import pandas as pd

    from fusionlib.ptgan.theory.variance import _jackknife_se, unbiased_sq_norm

    rng = np.random.default_rng(11)
    rows, wrong = [], 0
    for check in range(40):
        for run in range(5):
            u, loo = unbiased_sq_norm(rng.normal(size=(300, 1)))
            rows.append({"rep": run, "it": check, "v": u})
            wrong += checks.signs_decision([u], [_jackknife_se(loo)], ["x"], ">0",
                                           "s").verdict == "differs"
    assert wrong >= 20  # of 200 checks (simulated rate about 19 %)
    frame = pd.DataFrame(rows)
    d = checks.runs_decision(frame, "v", "it", "rep", ">0", "s", nonnegative=True)
    assert d.verdict == "inconclusive"
    # a t interval across runs is no guide at the edge either: without nonnegative, skewed
    # estimates bounded below by -var/K still read "differs" somewhere in the family
    assert checks.runs_decision(frame, "v", "it", "rep", ">0", "s").verdict == "differs"
    with pytest.raises(InvalidInputError, match="nonnegative"):
        checks.runs_decision(frame, "v", "it", "rep", "<0", "s", nonnegative=True)
    # a real bias is still found
    shifted = frame.assign(v=frame.v + 0.05)
    assert checks.runs_decision(shifted, "v", "it", "rep", ">0", "s",
                                nonnegative=True).verdict == "reproduced"


def test_remark3_condition_needs_both_the_run_means_and_the_early_checks():
    import pandas as pd

    early_bad = pd.DataFrame([{"rep": r, "iteration": i,
                               "log_ratio": (0.3 if i == 0 else -0.5) + 0.01 * r}
                              for r in range(4) for i in range(8)])
    d = checks.remark3_condition_decision(early_bad)
    assert d.verdict == "differs" and "early training" in d.reason
    # smaller early and at most checks, larger at the last 3 of 8: the remark's reading holds
    late_ok = early_bad.assign(log_ratio=np.where(early_bad.iteration < 5, -0.3, 0.05)
                               + 0.01 * early_bad.rep)
    assert checks.remark3_condition_decision(late_ok).verdict == "reproduced"
    # the same numbers read at every check, late ones included: not reproduced
    assert checks.runs_decision(late_ok, "log_ratio", "iteration", "rep", "<0",
                                "s").verdict != "reproduced"
    # far smaller early but larger at most checks: "generally" fails (a mean over the run's
    # checks, -1.5 x 3 against +0.3 x 5, would still read reproduced)
    early_only = early_bad.assign(log_ratio=np.where(early_bad.iteration < 3, -1.5, 0.3)
                                  + 0.01 * early_bad.rep)
    d = checks.remark3_condition_decision(early_only)
    assert d.verdict == "differs" and "generally" in d.reason
    assert early_only.groupby("rep").log_ratio.mean().lt(0).all()
    with pytest.raises(InvalidInputError, match="non-finite"):
        checks.remark3_condition_decision(late_ok.assign(log_ratio=np.inf))
    with pytest.raises(InvalidInputError, match="early_share"):
        checks.remark3_condition_decision(late_ok, early_share=0)


def test_signs_and_lower_bounds_call_one_instance_of_many_differs_only_at_bonferroni():
    # z = -2.5: resolved the other way at 95 % (two-sided 1.96), not at 1 - 0.05 / 40 (3.23)
    vals, ses = [1.0] * 39 + [-0.25], [0.1] * 40
    labels = [f"i{i}" for i in range(40)]
    d = checks.signs_decision(vals, ses, labels, ">0", "s")
    assert d.verdict == "inconclusive" and "Bonferroni" in d.reason and "i39" in d.reason
    assert checks.signs_decision([-0.25], [0.1], ["x"], ">0", "s").verdict == "differs"
    assert checks.signs_decision(vals[:39] + [-0.5], ses, labels, ">0", "s").verdict == \
        "differs"
    # lower bounds: estimate / bound - 1 = -0.25 with se 0.1 at one of 40
    est = [2.0] * 39 + [0.75]
    assert checks.lower_bound_decision(est, [0.1] * 40, [1.0] * 40, labels, "P").verdict == \
        "inconclusive"
    assert checks.lower_bound_decision([0.75], [0.1], [1.0], ["x"], "P").verdict == "differs"


def test_a_bonferroni_level_negative_of_a_nonnegative_quantity_is_flagged_not_called_differs():
    import pandas as pd

    f = pd.DataFrame({"rep": range(5), "it": 0, "v": [-1.0, -1.01, -0.99, -1.02, -0.98]})
    d = checks.runs_decision(f, "v", "it", "rep", ">0", "s", nonnegative=True)
    assert d.verdict == "inconclusive" and "check the estimator" in d.reason
    assert "not at the Bonferroni level" not in d.reason
