"""Seed 002's data tables as printed, checked against data (fusionlib.fairtest.paper_data):
the checks pass on data built from the tables and fail on data that differs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.discretise import VALUES
from fusionlib.fairtest.paper_data import (
    APPENDIX_B,
    COLUMN_NAMES,
    TABLE1,
    attribute_check,
    column_check,
    half_last_digit,
    table2_check,
)


def _like(dataset: str, n: int = 400) -> pd.DataFrame:
    """Every printed value of every attribute at least once (cycled), our column names."""
    cols = {}
    for attr, values in APPENDIX_B[dataset].items():
        values = [v.replace("–", "-") for v in values]
        cols[COLUMN_NAMES[dataset][attr]] = np.resize(values, n)
    return pd.DataFrame(cols)


@pytest.mark.parametrize("dataset", ["adult", "compas", "german"])
def test_the_transcription_agrees_with_table1_and_the_discretiser(dataset):
    """Table 1's attribute counts, and our column names of Tables 4-6 (discretise.VALUES)."""
    assert len(APPENDIX_B[dataset]) == TABLE1[dataset]["attributes"]
    assert set(COLUMN_NAMES[dataset].values()) == set(VALUES[dataset])


@pytest.mark.parametrize("dataset", ["adult", "compas", "german"])
def test_checks_pass_on_the_printed_values(dataset):
    table = _like(dataset)
    assert attribute_check(dataset, table)["same"].all()
    assert column_check(dataset, table)["same"]
    assert table2_check(dataset, table)["same"].all()


def test_checks_see_a_missing_value_a_wrong_column_and_a_wrong_separation(monkeypatch):
    table = _like("adult")
    table.loc[table["age"] == ">60", "age"] = "<25"  # a printed value never occurs
    out = attribute_check("adult", table).set_index("attribute")
    assert not out.loc["Age", "same"] and out.loc["Age", "only printed"] == [">60"]
    assert out.drop(index="Age")["same"].all()
    cols = column_check("adult", table.drop(columns="workclass").assign(extra="x"))
    assert not cols["same"] and cols["only in data"] == ["extra"]
    from fusionlib.fairtest import paper_data

    wrong = {**paper_data.TABLE2, "adult": [["relationship", "age", "sex", "race"],
                                            *paper_data.TABLE2["adult"][1:]]}
    monkeypatch.setattr(paper_data, "TABLE2", wrong)
    rows = paper_data.table2_check("adult", _like("adult"))
    assert list(rows["same"]) == [False, True] and "external" in rows["problems"].iloc[0]
    assert list(rows["repeated"]) == [False, True]  # the second row prints marital-status twice


def test_unknown_dataset():
    with pytest.raises(InvalidInputError, match="unknown dataset"):
        attribute_check("law", pd.DataFrame())


def test_half_last_digit_by_hand():
    assert half_last_digit("67.5") == pytest.approx(0.0005)
    assert half_last_digit("86") == pytest.approx(0.005)
    assert half_last_digit("60.25") == pytest.approx(0.00005)
    with pytest.raises(InvalidInputError, match="not a printed percentage"):
        half_last_digit("86 %")
