"""Estimates and combined verdicts of the PTGAN chapters (fusionlib.ptgan.evidence)."""

import math

import pandas as pd
import pytest

from fusionlib.compendium.verdicts import Decision, Estimate, compare
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.evidence import (
    THEORY_MARGIN,
    all_instances,
    log_ratio_estimate,
    paired_difference,
    relative_estimate,
)


def test_paired_difference_by_hand():
    a = pd.Series({10: 1.0, 20: 3.0, 30: 2.0})
    b = pd.Series({30: 1.0, 10: 0.5, 20: 2.0})  # other order: aligned on the seed
    est = paired_difference(a, b)
    # differences 0.5, 1.0, 1.0: mean 5/6, sd sqrt(1/12), se sqrt(1/36)
    assert est.value == pytest.approx(5 / 6)
    assert est.se == pytest.approx(math.sqrt(1 / 12) / math.sqrt(3))
    assert est.n == 3 and est.df == 2


def test_paired_difference_needs_the_same_seeds():
    with pytest.raises(InvalidInputError, match="same seeds"):
        paired_difference(pd.Series({1: 1.0, 2: 2.0}), pd.Series({1: 1.0, 3: 2.0}))


def test_one_seed_gives_an_unknown_spread():
    assert paired_difference(pd.Series({1: 2.0}), pd.Series({1: 1.0})).se is None


def test_relative_and_log_ratio_estimates():
    e = relative_estimate(1.02, 0.004, 2.0)
    assert e.value == pytest.approx(0.51) and e.se == pytest.approx(0.002)
    assert compare(1.0, relative_estimate(0.999, 0.001, 1.0), THEORY_MARGIN).verdict == \
        "reproduced"
    assert compare(1.0, relative_estimate(0.95, 0.001, 1.0), THEORY_MARGIN).verdict == "differs"
    lr = log_ratio_estimate(2.0, 0.02, 1.0, 0.01)
    assert lr.value == pytest.approx(math.log(2.0))
    assert lr.se == pytest.approx(math.hypot(0.01, 0.01))
    with pytest.raises(InvalidInputError, match="non-zero"):
        relative_estimate(1.0, 0.1, 0.0)
    with pytest.raises(InvalidInputError, match="positive"):
        log_ratio_estimate(-1.0, 0.1, 1.0, 0.1)


def test_all_instances_combines():
    ok, bad, unsure = (Decision("reproduced", "", "t"), Decision("differs", "gap", "t"),
                       Decision("inconclusive", "wide", "t"))
    assert all_instances([ok, ok], ["a", "b"]).verdict == "reproduced"
    d = all_instances([ok, unsure, bad], ["a", "b", "c"])
    assert d.verdict == "differs" and "c: differs (gap)" in d.reason
    assert "not decided at 1 of 3 instances (b)" in d.reason and "a" not in d.reason.split("(")[0]
    assert all_instances([ok, unsure], ["a", "b"]).verdict == "inconclusive"
    nc = Decision("not comparable", "proxy", "t")
    assert all_instances([nc, nc], ["a", "b"]).verdict == "not comparable"
    with pytest.raises(InvalidInputError, match="one label"):
        all_instances([ok], ["a", "b"])
    assert Estimate.from_sample([1.0, 2.0]).n == 2
