"""Tests of the two-table bounds chapter's helpers (fusionlib.fairtest.bounds.report)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.bounds.report import count_above, reach_of

KEY = {"dataset": "adult", "overlap": "o", "attribute": "sex"}


def test_reach_by_hand():
    real = pd.DataFrame([{**KEY, "metric": "AOD", "value": 0.1},
                         {**KEY, "metric": "DI", "value": 2.0}])
    iv = pd.DataFrame([{**KEY, "metric": "AOD", "lower": -0.3, "upper": 0.2},
                       {**KEY, "metric": "DI", "lower": 0.5, "upper": np.inf}])
    out = reach_of(real, iv).set_index("metric")
    assert out.loc["AOD", "reach"] == pytest.approx(0.4)  # max(0.1 + 0.3, 0.2 - 0.1)
    assert out.loc["DI", "reach"] == np.inf  # an unbounded side: any value is consistent


def test_reach_joins_on_the_keys_only():
    real = pd.DataFrame([{**KEY, "metric": "AOD", "value": 0.0}])
    iv = pd.DataFrame([{**KEY, "metric": "EOD", "lower": -1.0, "upper": 1.0}])
    assert reach_of(real, iv).empty
    with pytest.raises(InvalidInputError, match="value"):
        reach_of(real.drop(columns="value"), iv)
    with pytest.raises(InvalidInputError, match="upper"):
        reach_of(real, iv.drop(columns="upper"))


def test_count_above():
    s = pd.Series([0.0, 1e-6, 2e-6, np.nan, 1.0])
    assert count_above(s) == 2
    assert count_above(s, threshold=0.5) == 1
