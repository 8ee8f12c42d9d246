from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.encoding import TabularEncoder
from fusionlib.errors import InvalidInputError, NotFittedError
from tests.conftest import require_data


@pytest.fixture()
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "age": rng.integers(17, 90, 200),
        "score": rng.normal(size=200),
        "sex": rng.choice(["F", "M"], 200),
        "job": rng.choice(["a", "b", "c"], 200),
    })


def test_continuous_columns_span_minus_one_to_one_and_one_hot_rows_sum_to_one(frame):
    enc = TabularEncoder(["sex", "job"]).fit(frame)
    x = enc.transform(frame)
    assert x.shape == (200, 2 + 2 + 3)
    assert x[:, 0].min() == -1.0 and x[:, 0].max() == 1.0
    for span in enc.spans_:
        if span.kind == "discrete":
            np.testing.assert_array_equal(x[:, span.start:span.stop].sum(axis=1), 1.0)


def test_inverse_is_exact_for_integer_and_categorical_columns(frame):
    enc = TabularEncoder(["sex", "job"]).fit(frame)
    back = enc.inverse_transform(enc.transform(frame))
    pd.testing.assert_frame_equal(back[["age", "sex", "job"]], frame[["age", "sex", "job"]])
    np.testing.assert_allclose(back["score"], frame["score"], rtol=0, atol=1e-5)


def test_hand_worked_scaling():
    # age 20 -> -1, 30 -> 0, 40 -> +1 ; 2 * (x - 20) / (40 - 20) - 1
    df = pd.DataFrame({"age": [20, 30, 40], "c": ["x", "y", "x"]})
    x = TabularEncoder(["c"]).fit_transform(df)
    np.testing.assert_array_equal(x, [[-1, 1, 0], [0, 0, 1], [1, 1, 0]])


def test_soft_generator_output_decodes_by_argmax_and_clips(frame):
    enc = TabularEncoder(["sex", "job"]).fit(frame)
    soft = np.array([[1.7, 0.0, 0.2, 0.8, 0.1, 0.6, 0.3]])
    out = enc.inverse_transform(soft)
    assert out.loc[0, "age"] == frame["age"].max()
    assert out.loc[0, "sex"] == "M" and out.loc[0, "job"] == "b"


def test_adult_round_trip_is_exact():
    df = require_data("adult")
    disc = [c for c in df.columns if df[c].dtype == object]
    enc = TabularEncoder(disc).fit(df)
    pd.testing.assert_frame_equal(enc.inverse_transform(enc.transform(df)), df)


def test_errors_name_the_problem(frame):
    with pytest.raises(NotFittedError, match="fit"):
        TabularEncoder().transform(frame)
    with pytest.raises(InvalidInputError, match="not in the table"):
        TabularEncoder(["nope"]).fit(frame)
    with pytest.raises(InvalidInputError, match="discrete_columns"):
        TabularEncoder(["sex"]).fit(frame)  # 'job' is text but not declared discrete
    enc = TabularEncoder(["sex", "job"]).fit(frame)
    with pytest.raises(InvalidInputError, match="unseen"):
        enc.transform(frame.assign(job="z"))
    with pytest.raises(InvalidInputError, match="missing values"):
        TabularEncoder(["sex", "job"]).fit(frame.assign(score=np.nan))


@pytest.mark.parametrize("value", [2.5, 7])
def test_a_constant_column_decodes_to_its_value_whatever_the_generator_says(value):
    df = pd.DataFrame({"c": [value] * 4, "x": [0.0, 1.0, 2.0, 3.0]})
    enc = TabularEncoder().fit(df)
    out = enc.inverse_transform(np.array([[-1.0, 0.0], [0.3, 0.0], [1.0, 0.0], [5.0, 0.0]]))
    assert (out["c"] == value).all() and out["c"].dtype == df["c"].dtype  # fitted range [v, v]
    np.testing.assert_array_equal(out["x"], [1.5] * 4)


def test_discrete_columns_given_as_one_string_are_refused():
    """'sex' would be read letter by letter: a column 'e' would count as discrete."""
    df = pd.DataFrame({"sex": ["F", "M"], "s": ["a", "b"], "e": [1.0, 2.0], "x": [0.0, 1.0]})
    with pytest.raises(InvalidInputError, match=r"list of column names.*\['sex'\]"):
        TabularEncoder("sex").fit(df)
