"""Row and column counts of the real datasets (provisioned by `make data`)."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlib.data import ADULT_COLUMNS, GERMAN_COLUMNS, load_images
from fusionlib.errors import DataUnavailableError
from tests.conftest import require_data


def test_adult_has_45222_complete_rows_and_documented_columns():
    df = require_data("adult")
    assert df.shape == (45222, 15)
    assert tuple(df.columns) == ADULT_COLUMNS
    assert set(df["income"]) == {"<=50K", ">50K"}
    assert not (df == "?").any().any()
    assert df["age"].dtype == np.int64 and df["sex"].map(type).eq(str).all()


def test_compas_has_5278_rows_after_propublica_filters():
    df = require_data("compas")
    assert len(df) == 5278
    assert set(df["race"]) == {"African-American", "Caucasian"}
    assert df["days_b_screening_arrest"].abs().max() <= 30
    assert (df["c_charge_degree"] != "O").all() and (df["is_recid"] != -1).all()


def test_german_has_1000_rows_and_uci_codes():
    df = require_data("german")
    assert df.shape == (1000, 21)
    assert tuple(df.columns) == GERMAN_COLUMNS
    assert set(df["personal_status"]) <= {"A91", "A92", "A93", "A94", "A95"}
    assert set(df["credit"]) == {1, 2}


def test_fashion_mnist_has_70000_images():
    try:
        x, y = load_images("fashion_mnist", "train")
        xt, yt = load_images("fashion_mnist", "test")
    except DataUnavailableError as exc:  # pragma: no cover
        pytest.skip(str(exc))
    assert x.shape == (60000, 28, 28) and xt.shape == (10000, 28, 28)
    assert x.dtype == np.uint8 and set(np.unique(y)) == set(range(10))
