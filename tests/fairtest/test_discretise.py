"""Appendix B discretisation (seed 002, Tables 4-6) on small hand-made raw tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest import VALUES, discretise
from fusionlib.fairtest._discretise_maps import ADULT_MAPS, GERMAN_MAPS
from fusionlib.fairtest.discretise import COUNT_VALUES
from tests.conftest import require_data


def _adult_raw(n: int = 16) -> pd.DataFrame:
    """n rows cycling through every raw category of each categorical column."""
    def cycle(values):
        values = list(values)
        return [values[i % len(values)] for i in range(n)]

    return pd.DataFrame({
        "age": cycle([24, 25, 60, 61]), "workclass": cycle(ADULT_MAPS["workclass"]),
        "fnlwgt": 1, "education": cycle(ADULT_MAPS["education"]), "education-num": 9,
        "marital-status": cycle(ADULT_MAPS["marital-status"]),
        "occupation": cycle(ADULT_MAPS["occupation"]),
        "relationship": cycle(ADULT_MAPS["relationship"]), "race": cycle(ADULT_MAPS["race"]),
        "sex": cycle(["Male", "Female"]), "capital-gain": cycle([0, 5000, 5001]),
        "capital-loss": cycle([40, 41]), "hours-per-week": cycle([39, 40, 60, 61]),
        "native-country": cycle(["United-States", "Mexico", "Germany"]),
        "income": cycle(["<=50K", ">50K", ">50K."]),
    })


def _compas_raw() -> pd.DataFrame:
    return pd.DataFrame({
        "sex": ["Male", "Female", "Male"],
        "age_cat": ["Less than 25", "25 - 45", "Greater than 45"],
        "race": ["African-American", "Caucasian", "Caucasian"],
        "juv_fel_count": [0, 1, 2], "juv_misd_count": [0, 3, 0], "juv_other_count": [0, 0, 12],
        "priors_count": [0, 7, 38], "c_charge_degree": ["F", "M", "F"],
        "score_text": ["Low", "Medium", "High"], "v_score_text": ["High", "Low", "Medium"],
        "two_year_recid": [0, 1, 1], "decile_score": [1, 5, 9],
    })


def _german_raw(n: int = 10) -> pd.DataFrame:
    def cycle(values):
        values = list(values)
        return [values[i % len(values)] for i in range(n)]

    raw = {raw_col: cycle(m) for raw_col, m in GERMAN_MAPS.values()}
    for col in ("installment_rate", "residence_since", "existing_credits", "num_dependents"):
        raw[col] = [int(v) for v in raw[col]]
    raw |= {"duration": cycle([6, 7, 12, 13]), "credit_amount": cycle([2000, 2001, 5000, 5001]),
            "age": cycle([25, 26]), "personal_status": cycle(["A91", "A92", "A93", "A94", "A95"]),
            "credit": cycle([1, 2])}
    return pd.DataFrame(raw)


def test_attribute_counts_match_table_1():
    assert {d: len(v) for d, v in VALUES.items()} == {"adult": 13, "compas": 9, "german": 22}


def test_adult_bins_at_boundaries():
    out = discretise("adult", _adult_raw())
    assert out["age"].tolist()[:4] == ["<25", "25-60", "25-60", ">60"]
    assert out["capital-gain"].tolist()[:3] == ["<=5000", "<=5000", ">5000"]
    assert out["capital-loss"].tolist()[:2] == ["<=40", ">40"]
    assert out["hours-per-week"].tolist()[:4] == ["<40", "40-60", "40-60", ">60"]
    assert out["native-country"].tolist()[:3] == ["US", "non-US", "non-US"]
    assert out["income"].tolist()[:3] == ["<=50K", ">50K", ">50K"]  # test-file '.' stripped


def test_adult_category_maps():
    raw = _adult_raw()
    out = discretise("adult", raw)
    pairs = set(zip(raw["education"], out["education"], strict=True))
    assert {("11th", "high-school"), ("7th-8th", "primary/middle school"),
            ("Preschool", "primary/middle school"), ("HS-grad", "HS-grad")} <= pairs
    pairs = set(zip(raw["marital-status"], out["marital-status"], strict=True))
    assert ("Married-spouse-absent", "married") in pairs and ("Widowed", "other") in pairs
    assert set(zip(raw["relationship"], out["relationship"], strict=True)) >= {
        ("Wife", "spouse"), ("Own-child", "non-spouse")}
    assert set(zip(raw["workclass"], out["workclass"], strict=True)) >= {
        ("Private", "private"), ("State-gov", "non-private")}


@pytest.mark.parametrize("dataset, raw", [
    ("adult", _adult_raw(200)), ("compas", _compas_raw()), ("german", _german_raw(200)),
])
def test_output_columns_and_values_are_those_of_the_tables(dataset, raw):
    out = discretise(dataset, raw)
    assert list(out.columns) == list(VALUES[dataset])
    assert out.index.equals(raw.index)
    for col, allowed in VALUES[dataset].items():
        assert out[col].map(type).eq(str).all(), col
        if allowed is not None:
            assert set(out[col]) <= set(allowed), col
    if dataset != "compas":  # the hand-made frames cycle through every raw category
        for col, allowed in VALUES[dataset].items():
            assert set(out[col]) == set(allowed), col


def test_compas_maps_and_juvenile_sum():
    out = discretise("compas", _compas_raw())
    assert out["juvenile crime"].tolist() == ["0", "4", "14"]  # 0+0+0, 1+3+0, 2+0+12
    assert out["priors count"].tolist() == ["0", "7", "38"]
    assert out["age"].tolist() == ["<25", "25 - 45", ">45"]
    assert out["race"].tolist() == ["Black", "White", "White"]
    assert out["two-year recidivism"].tolist() == ["0", "1", "1"]
    assert out["violent score"].tolist() == ["High", "Low", "Medium"]


def test_german_bins_and_personal_status_split():
    out = discretise("german", _german_raw())
    assert out["duration"].tolist()[:4] == ["<=6", "7-12", "7-12", ">12"]
    assert out["credit-amount"].tolist()[:4] == ["<=2000", "2001-5000", "2001-5000", ">5000"]
    assert out["age"].tolist()[:2] == ["<= 25", ">25"]
    # A91..A95: male div/sep, female div/sep/married, male single, male mar/wid, female single
    assert out["sex"].tolist()[:5] == ["male", "female", "male", "male", "female"]
    assert out["marital-status"].tolist()[:5] == [
        "divorced/separated", "divorced/separated", "divorced/separated", "married/widowed",
        "divorced/separated"]
    assert out["class-label"].tolist()[:2] == ["1", "0"]  # UCI 1 = good, 2 = bad


def test_unknown_dataset_lists_the_allowed_names():
    with pytest.raises(InvalidInputError, match=r"'adult', 'compas', 'german'"):
        discretise("credit", _adult_raw())


def test_missing_column_is_named():
    with pytest.raises(InvalidInputError, match=r"lacks columns \['hours-per-week'\]"):
        discretise("adult", _adult_raw().drop(columns="hours-per-week"))


def test_unknown_raw_category_is_named():
    raw = _compas_raw().assign(race=["Hispanic", "Caucasian", "Caucasian"])
    with pytest.raises(InvalidInputError, match=r"'race'.*Hispanic"):
        discretise("compas", raw)


def test_non_numeric_number_is_named():
    raw = _adult_raw().astype({"age": object})
    raw.loc[0, "age"] = "old"
    with pytest.raises(InvalidInputError, match=r"'age' must be numeric"):
        discretise("adult", raw)


def test_not_a_dataframe_raises_type_error():
    with pytest.raises(InvalidInputError):
        discretise("adult", np.zeros((2, 2)))


@pytest.mark.needs_data
@pytest.mark.parametrize("dataset", ["adult", "compas", "german"])
def test_real_data_gives_exactly_the_tables_values(dataset):
    out = discretise(dataset, require_data(dataset))
    assert len(out) == {"adult": 45_222, "compas": 5_278, "german": 1_000}[dataset]
    for col, allowed in VALUES[dataset].items():
        assert set(out[col]) == set(allowed or COUNT_VALUES[col]), col


@pytest.mark.needs_data
def test_real_data_protected_shares_match_table_1():
    shares = {d: discretise(d, require_data(d)) for d in ("adult", "compas", "german")}
    share = {d: {c: t[c].value_counts(normalize=True) for c in t} for d, t in shares.items()}
    assert share["adult"]["sex"]["male"] == pytest.approx(0.675, abs=0.001)
    assert share["adult"]["race"]["white"] == pytest.approx(0.86, abs=0.001)
    assert share["compas"]["sex"]["Male"] == pytest.approx(0.805, abs=0.001)
    # Table 1 prints "60.2% white, 39.8% black"; the data have 60.2 % Black (3,175 of 5,278)
    assert share["compas"]["race"]["Black"] == pytest.approx(0.602, abs=0.001)
    assert share["german"]["age"][">25"] == pytest.approx(0.81, abs=0.001)
    assert share["german"]["sex"]["male"] == pytest.approx(0.69, abs=0.001)
