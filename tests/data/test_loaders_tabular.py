"""Law School and Credit Card Default loaders on stand-in files (the real ones are absent here)."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.data import loaders
from fusionlib.errors import DataUnavailableError, InvalidInputError


def _paths(monkeypatch, mapping):
    monkeypatch.setattr(loaders, "dataset_paths", lambda name: mapping)


def test_law_school_reads_the_admissions_table(tmp_path, monkeypatch):
    path = tmp_path / "law_school.csv"
    pd.DataFrame({"LSAT": [30.0, 40.0], "GPA": [3.1, 3.5], "Gender": ["f", "m"],
                  "Race": ["White", "Asian"], "resident": [1, 0], "admit": [0, 1],
                  "extra": [1, 2]}).to_csv(path, index=False)
    _paths(monkeypatch, {"law_school.csv": path})
    df = loaders.load("law_school")
    assert {"LSAT", "GPA", "Gender", "Race", "resident", "admit"} <= set(df.columns)


def test_law_school_without_the_label_says_what_to_provide(tmp_path, monkeypatch):
    path = tmp_path / "law_school.csv"
    pd.DataFrame({"LSAT": [30.0], "GPA": [3.1]}).to_csv(path, index=False)
    _paths(monkeypatch, {"law_school.csv": path})
    with pytest.raises(InvalidInputError, match="admit"):
        loaders.load("law_school")


def test_credit_default_without_xlrd_names_the_missing_package(tmp_path, monkeypatch):
    path = tmp_path / "default of credit card clients.xls"
    path.write_bytes(b"stand-in")
    _paths(monkeypatch, {"default of credit card clients.xls": path})

    def no_xlrd(*args, **kwargs):
        raise ImportError("Missing optional dependency 'xlrd'")
    monkeypatch.setattr(pd, "read_excel", no_xlrd)
    with pytest.raises(DataUnavailableError, match="xlrd"):
        loaders.load("credit_default")


def test_credit_default_drops_id(tmp_path, monkeypatch):
    path = tmp_path / "default of credit card clients.xls"
    path.write_bytes(b"stand-in")
    _paths(monkeypatch, {"default of credit card clients.xls": path})
    monkeypatch.setattr(pd, "read_excel", lambda *a, **k: pd.DataFrame(
        {"ID": [1, 2], "LIMIT_BAL": [10, 20], "default payment next month": [0, 1]}))
    assert list(loaders.load("credit_default").columns) == ["LIMIT_BAL",
                                                            "default payment next month"]
