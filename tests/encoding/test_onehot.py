"""The one one-hot path, and the encoder's refusal of non-finite values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.encoding import IndicatorEncoder, TabularEncoder
from fusionlib.errors import InvalidInputError, NotFittedError


def test_onehot_layout_is_sorted_and_independent_of_row_order():
    df = pd.DataFrame({"a": ["y", "x", "y"], "b": ["2", "10", "2"]})
    enc = IndicatorEncoder().fit(df)
    again = IndicatorEncoder().fit(df.iloc[::-1])
    assert list(enc.get_feature_names_out()) == ["a_x", "a_y", "b_10", "b_2"]
    assert list(again.get_feature_names_out()) == list(enc.get_feature_names_out())
    # hand-worked: row 0 (a=y, b=2) -> [0, 1, 0, 1]
    assert enc.transform(df)[0].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_unknown_categories_error_or_zero():
    enc = IndicatorEncoder().fit(pd.DataFrame({"a": ["x", "y"]}))
    with pytest.raises(InvalidInputError, match="unseen"):
        enc.transform(pd.DataFrame({"a": ["z"]}))
    ign = IndicatorEncoder(handle_unknown="ignore").fit(pd.DataFrame({"a": ["x", "y"]}))
    assert ign.transform(pd.DataFrame({"a": ["z"]})).tolist() == [[0.0, 0.0]]


def test_onehot_bad_input():
    with pytest.raises(NotFittedError):
        IndicatorEncoder().transform(pd.DataFrame({"a": ["x"]}))
    with pytest.raises(InvalidInputError, match="handle_unknown"):
        IndicatorEncoder(handle_unknown="skip").fit(pd.DataFrame({"a": ["x"]}))
    with pytest.raises(InvalidInputError, match="missing values"):
        IndicatorEncoder().fit(pd.DataFrame({"a": ["x", None]}))


def test_tabular_encoder_refuses_inf_at_fit_nan_at_transform_and_nan_to_decode():
    df = pd.DataFrame({"x": [0.0, 1.0, 2.0], "c": ["a", "b", "a"]})
    with pytest.raises(InvalidInputError, match="infinite"):
        TabularEncoder(["c"]).fit(df.assign(x=[0.0, np.inf, 1.0]))
    enc = TabularEncoder(["c"]).fit(df)
    with pytest.raises(InvalidInputError, match="missing values"):
        enc.transform(df.assign(x=[0.0, np.nan, 1.0]))
    z = enc.transform(df)
    z[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        enc.inverse_transform(z)


def test_integer_column_never_decodes_to_int64_minimum():
    df = pd.DataFrame({"n": np.array([1, 5, 9], dtype=np.int64)})
    enc = TabularEncoder().fit(df)
    z = enc.transform(df)
    z[1, 0] = np.nan
    with pytest.raises(InvalidInputError):
        enc.inverse_transform(z)
    assert enc.inverse_transform(enc.transform(df))["n"].tolist() == [1, 5, 9]
