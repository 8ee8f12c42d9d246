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
