"""Seed 002's data tables as printed (Tables 1, 2, 4-6), checked against the data as loaded.

The protocol *uses* these tables (:mod:`fusionlib.fairtest.discretise` maps the raw data to
Tables 4-6's values; :mod:`fusionlib.fairtest.separation` splits by Table 2). Here they are
transcribed a second time, as the paper prints them (attribute names and value lists verbatim,
en dashes included), so that the chapters can check the *data* against the paper rather than
the code against itself:

- :func:`attribute_check`: per attribute of Table 4, 5 or 6, the values printed against the
  values present in the discretised data (all rows), after mapping the printed attribute name
  to our column (:data:`COLUMN_NAMES`) and an en dash to a hyphen;
- :func:`column_check`: the printed attribute list against the discretised table's columns;
- :func:`table2_check`: each row of Table 2 against the tables a separation of the data gives.
"""

from __future__ import annotations

import re

import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.separation import dataset_spec, separate

__all__ = ["TABLE1", "TABLE2", "APPENDIX_B", "COLUMN_NAMES", "attribute_check", "column_check",
           "half_last_digit", "table2_check"]

#: Table 1: instances and attributes per dataset
TABLE1: dict[str, dict[str, int]] = {
    "adult": {"instances": 45222, "attributes": 13},
    "compas": {"instances": 5278, "attributes": 9},
    "german": {"instances": 1000, "attributes": 22},
}

#: Table 2 as printed: the external table's attributes per row, the overlap first (italic)
TABLE2: dict[str, list[list[str]]] = {
    "adult": [["relationship", "age", "sex", "race", "marital-status", "native-country"],
              ["marital-status", "age", "sex", "race", "marital-status", "native-country"]],
    "compas": [["score", "sex", "age", "race"], ["violent score", "sex", "age", "race"]],
    "german": [["property", "sex", "marital-status", "age", "foreign-worker"],
               ["housing", "sex", "marital-status", "age", "foreign-worker"]],
}

_R = [str(v) for v in range(40)]
#: Tables 4 (Adult), 5 (COMPAS) and 6 (German): attribute -> values, verbatim
APPENDIX_B: dict[str, dict[str, list[str]]] = {
    "adult": {
        "Age": ["25–60", "<25", ">60"], "Capital Gain": ["<=5000", ">5000"],
        "Capital Loss": ["<=40", ">40"],
        "Education": ["assoc-acdm", "assoc-voc", "bachelors", "doctorate", "HS-grad", "masters",
                      "prof-school", "some-college", "high-school", "primary/middle school"],
        "Hours Per Week": ["<40", "40–60", ">60"], "Income": ["<=50K", ">50K"],
        "Marital Status": ["married", "other"], "Native Country": ["US", "non-US"],
        "Occupation": ["adm-clerical", "armed-forces", "craft-repair", "exec-managerial",
                       "farming-fishing", "handlers-cleaners", "machine-op-inspct",
                       "other-service", "priv-house-serv", "prof-specialty", "protective-serv",
                       "sales", "tech-support", "transport-moving"],
        "Race": ["non-white", "white"], "Relationship": ["non-spouse", "spouse"],
        "Sex": ["male", "female"], "Workclass": ["private", "non-private"]},
    "compas": {
        "Age Category": ["25 - 45", ">45", "<25"], "Charge Degree": ["F", "M"],
        "Juvenile Crime": [*_R[:12], "14"],
        "Priors Count": [*_R[:32], "33", "36", "37", "38"],
        "Race": ["Black", "White"], "Score Text": ["High", "Low", "Medium"],
        "Sex": ["Female", "Male"], "Two-Year Recidivism": ["0", "1"],
        "Violent Score Text": ["High", "Low", "Medium"]},
    "german": {
        "Age": ["<= 25", ">25"],
        "Checking Account": ["0 <= <200 DM", "<0 DM", ">= 200 DM", "no account"],
        "Class Label": ["0", "1"], "Credit Amount": ["<=2000", "2001-5000", ">5000"],
        "Credit History": ["all credits at this bank paid back duly", "critical account",
                           "delay in paying off", "existing credits paid back duly till now",
                           "no credits taken"],
        "Duration": ["<=6", "7-12", ">12"],
        "Employment Since": ["1 <= < 4 years", "4 <= <7 years", "<1 years", ">=7 years",
                             "unemployed"],
        "Existing Credits": ["1", "2", "3", "4"], "Foreign Worker": ["no", "yes"],
        "Housing": ["for free", "own", "rent"], "Installment Rate": ["1", "2", "3", "4"],
        "Job": ["management/ highly qualified employee", "skilled employee / official",
                "unemployed/ unskilled - non-resident", "unskilled - resident"],
        "Marital Status": ["divorced/separated", "married/widowed"],
        "Number of People Provide Maintenance For": ["1", "2"],
        "Other Debtors": ["co-applicant", "guarantor", "none"],
        "Other Installment Plans": ["bank", "none", "store"],
        "Property": ["car or other", "real estate", "savings agreement/life insurance",
                     "unknown / no property"],
        "Purpose": ["business", "car (new)", "car (used)", "domestic appliances", "education",
                    "furniture/equipment", "others", "radio/television", "repairs",
                    "retraining"],
        "Residence Since": ["1", "2", "3", "4"],
        "Savings Account": ["100 <= <500 DM", "500 <= < 1000 DM", "<100 DM", ">= 1000 DM",
                            "no savings account"],
        "Sex": ["female", "male"], "Telephone": ["none", "yes"]},
}

_COMPAS_NAMES = {"Age Category": "age", "Score Text": "score", "Violent Score Text":
                 "violent score"}
_GERMAN_NAMES = {"Number of People Provide Maintenance For":
                 "number-people-provide-maintenance-for"}


def _column(dataset: str, printed: str) -> str:
    if dataset == "compas":
        return _COMPAS_NAMES.get(printed, printed.lower())
    if dataset == "german" and printed in _GERMAN_NAMES:
        return _GERMAN_NAMES[printed]
    return printed.lower().replace(" ", "-")


#: printed attribute name -> our column name (our naming: fusionlib.fairtest.discretise)
COLUMN_NAMES: dict[str, dict[str, str]] = {
    d: {a: _column(d, a) for a in attrs} for d, attrs in APPENDIX_B.items()}


def _printed(values: list[str]) -> set[str]:
    return {v.replace("–", "-") for v in values}


def _check_dataset(dataset: str) -> None:
    if dataset not in APPENDIX_B:
        raise InvalidInputError(f"unknown dataset {dataset!r}; choose one of {list(APPENDIX_B)}")


def attribute_check(dataset: str, table: pd.DataFrame) -> pd.DataFrame:
    """One row per printed attribute: its column, the printed and the observed value counts,
    whether the sets are equal, and the values only printed / only observed."""
    _check_dataset(dataset)
    rows = []
    for attr, values in APPENDIX_B[dataset].items():
        col = COLUMN_NAMES[dataset][attr]
        seen = set(table[col].astype(str)) if col in table.columns else set()
        want = _printed(values)
        rows.append({"dataset": dataset, "attribute": attr, "column": col,
                     "paper values": len(values), "data values": len(seen),
                     "same": want == seen, "only printed": sorted(want - seen),
                     "only in data": sorted(seen - want)})
    return pd.DataFrame(rows)


def column_check(dataset: str, table: pd.DataFrame) -> dict[str, object]:
    """The printed attribute list (mapped to our names) against the table's columns."""
    _check_dataset(dataset)
    printed = set(COLUMN_NAMES[dataset].values())
    return {"paper": len(printed), "data": table.shape[1],
            "same": printed == set(table.columns),
            "only printed": sorted(printed - set(table.columns)),
            "only in data": sorted(set(table.columns) - printed)}


def table2_check(dataset: str, table: pd.DataFrame) -> pd.DataFrame:
    """Each row of Table 2 against the separation of ``table`` (discretised rows) by its
    overlap: the external table's columns equal the printed set (a repeated name counted once),
    the internal table holds every other column, the two share only the overlap and every
    protected attribute is external only."""
    _check_dataset(dataset)
    spec, rows = dataset_spec(dataset), []
    for printed in TABLE2[dataset]:
        overlap = printed[0]
        internal, external = separate(table, dataset, overlap)
        problems = []
        if set(external.columns) != set(printed):
            problems.append(f"external {sorted(external.columns)} vs printed "
                            f"{sorted(set(printed))}")
        if set(internal.columns) & set(external.columns) != {overlap}:
            problems.append("the tables share more than the overlap")
        if set(internal.columns) | set(external.columns) != set(table.columns):
            problems.append("a column is in neither table")
        if set(spec.protected) & set(internal.columns):
            problems.append("a protected attribute is in the internal table")
        rows.append({"dataset": dataset, "overlap": overlap, "printed": ", ".join(printed),
                     "repeated": len(printed) != len(set(printed)),
                     "external": ", ".join(external.columns),
                     "internal": ", ".join(internal.columns), "same": not problems,
                     "problems": "; ".join(problems)})
    return pd.DataFrame(rows)


def half_last_digit(text: str) -> float:
    """Half a unit of the last printed digit of a percentage such as ``"67.5"``, as a share
    (``"67.5"`` -> 0.0005, ``"86"`` -> 0.005): the equivalence margin of a share the paper
    prints rounded."""
    if not re.fullmatch(r"\d+(\.\d+)?", str(text)):
        raise InvalidInputError(f"not a printed percentage: {text!r}")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** -(decimals + 2)
