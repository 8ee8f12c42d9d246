"""Bad input to the separate-data estimators gives clear errors that say what to do."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fairtest import (
    IndependenceGivenOverlap,
    IndependentModel,
    LatentNaiveBayes,
    MarginalPreservation,
)

ESTIMATORS = [
    IndependenceGivenOverlap,
    lambda: MarginalPreservation(keep="internal"),
    lambda: MarginalPreservation(keep="external"),
    lambda: LatentNaiveBayes(n_restarts=1),
    IndependentModel,
]
IDS = ["igo", "mp-internal", "mp-external", "lnb", "independent"]

INTERNAL = pd.DataFrame({"o": ["a", "a", "b"], "y": ["1", "0", "1"]})
EXTERNAL = pd.DataFrame({"o": ["a", "b", "b"], "s": ["m", "f", "m"]})


@pytest.fixture(params=ESTIMATORS, ids=IDS)
def make(request):
    return request.param


def test_fit_without_overlap_raises(make):
    with pytest.raises(InvalidInputError, match="share no column"):
        make().fit(INTERNAL, EXTERNAL.rename(columns={"o": "other"}))


def test_overlap_category_in_one_table_only_names_column_and_values(make):
    external = pd.DataFrame({"o": ["a", "c"], "s": ["m", "f"]})
    with pytest.raises(InvalidInputError, match=r"'o'.*\['b'\].*\['c'\].*merge"):
        make().fit(INTERNAL, external)


def test_missing_values_name_column_and_count(make):
    internal = INTERNAL.assign(y=["1", None, np.nan])
    with pytest.raises(InvalidInputError, match=r"'y': 2.*dropna"):
        make().fit(internal, EXTERNAL)


def test_sample_before_fit_raises_not_fitted(make):
    with pytest.raises(NotFittedError, match="fit"):
        make().sample(5, seed=0)
    with pytest.raises(NotFittedError):
        make().joint_proba(INTERNAL)


@pytest.mark.parametrize("n", [0, -3])
def test_non_positive_n_raises(make, n):
    model = make().fit(INTERNAL, EXTERNAL)
    with pytest.raises(InvalidInputError, match="positive"):
        model.sample(n, seed=0)


def test_non_integer_n_or_seed_raises_invalid_input(make):
    model = make().fit(INTERNAL, EXTERNAL)
    with pytest.raises(InvalidInputError, match="n must be an int"):
        model.sample(2.5, seed=0)
    with pytest.raises(InvalidInputError, match="n must be an int"):
        model.sample(True, seed=0)
    with pytest.raises(InvalidInputError, match="seed"):
        model.sample(3, seed="zero")


def test_non_dataframe_input_raises_invalid_input(make):
    with pytest.raises(InvalidInputError, match="SourceSet"):
        make().fit(INTERNAL.to_numpy(), EXTERNAL)


def test_empty_table_raises(make):
    with pytest.raises(InvalidInputError, match="no rows"):
        make().fit(INTERNAL.iloc[:0], EXTERNAL)


def test_table_without_own_columns_raises(make):
    with pytest.raises(InvalidInputError, match="no column of its own"):
        make().fit(INTERNAL, EXTERNAL[["o"]])


def test_duplicate_column_names_raise(make):
    internal = pd.concat([INTERNAL, INTERNAL[["y"]]], axis=1)
    with pytest.raises(InvalidInputError, match="repeats column names"):
        make().fit(internal, EXTERNAL)


def test_joint_proba_needs_every_column(make):
    model = make().fit(INTERNAL, EXTERNAL)
    with pytest.raises(InvalidInputError, match=r"lack columns \['s'\]"):
        model.joint_proba(INTERNAL)


def test_proba_table_rejects_unknown_or_repeated_columns(make):
    model = make().fit(INTERNAL, EXTERNAL)
    for bad in (["nope"], ["y", "y"], []):
        with pytest.raises(InvalidInputError, match="distinct names"):
            model.proba_table(bad)


def test_non_string_values_are_treated_as_categories(make):
    internal = pd.DataFrame({"o": [1, 1, 2], "y": [0, 1, 1]})
    external = pd.DataFrame({"o": ["1", "2"], "s": ["m", "f"]})
    model = make().fit(internal, external)
    assert model.categories_["o"] == ["1", "2"]
    assert model.sample(3, seed=0)["y"].map(type).eq(str).all()


def test_unknown_options_are_rejected():
    with pytest.raises(TypeError):
        LatentNaiveBayes(n_latnet=3)
    with pytest.raises(TypeError):
        IndependenceGivenOverlap(keep="internal")
    with pytest.raises(InvalidInputError, match="keep must be one of"):
        MarginalPreservation(keep="both").fit(INTERNAL, EXTERNAL)
    for bad in ({"n_latent": 0}, {"max_iter": 2.5}, {"tol": -1.0}, {"n_restarts": True}):
        with pytest.raises(InvalidInputError):
            LatentNaiveBayes(**bad).fit(INTERNAL, EXTERNAL)


def test_overlap_combination_in_one_table_only_raises_for_independence_given_overlap():
    # every overlap *column* agrees, but the combination (p, w) has no internal rows
    internal = pd.DataFrame({"o1": ["p", "q", "q"], "o2": ["u", "w", "u"], "y": ["0", "1", "1"]})
    external = pd.DataFrame({"o1": ["p", "p", "q"], "o2": ["u", "w", "w"], "s": ["m", "f", "f"]})
    with pytest.raises(InvalidInputError, match=r"'o1': 'p', 'o2': 'w'.*internal.*merge"):
        IndependenceGivenOverlap().fit(internal, external)
    with pytest.raises(InvalidInputError, match="internal"):
        MarginalPreservation(keep="external").fit(internal, external)


def test_continuous_float_column_is_refused_with_discretise_first(make):
    internal = INTERNAL.assign(y=np.linspace(0.0, 1.0, len(INTERNAL)))
    with pytest.raises(InvalidInputError, match="Discretise first"):
        make().fit(internal, EXTERNAL)
