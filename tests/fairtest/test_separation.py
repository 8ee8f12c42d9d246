"""Table 2 separations (seed 002) as data."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest import (
    DATASET_SPECS,
    SEPARATIONS,
    VALUES,
    dataset_spec,
    separate,
    separation,
)


def test_six_separations_two_per_dataset():
    assert [(s.dataset, s.overlap) for s in SEPARATIONS] == [
        ("adult", "relationship"), ("adult", "marital-status"),
        ("compas", "score"), ("compas", "violent score"),
        ("german", "property"), ("german", "housing"),
    ]


@pytest.mark.parametrize("sep", SEPARATIONS, ids=lambda s: f"{s.dataset}-{s.overlap}")
def test_separation_partitions_the_columns_around_one_overlap(sep):
    spec = dataset_spec(sep.dataset)
    internal, external = set(sep.internal), set(sep.external)
    assert internal & external == {sep.overlap}
    assert internal | external == set(VALUES[sep.dataset])
    assert len(sep.internal) == len(internal) and len(sep.external) == len(external)
    assert sep.internal[0] == sep.external[0] == sep.overlap
    assert set(spec.protected) <= external - {sep.overlap}  # protected only in external
    assert spec.label in internal - {sep.overlap}  # label only in internal
    assert set(spec.privileged) == set(spec.protected)
    for attr, value in spec.privileged.items():
        assert value in VALUES[sep.dataset][attr]
    assert spec.favourable in VALUES[sep.dataset][spec.label]


def test_external_tables_are_those_of_table_2():
    ext = {(s.dataset, s.overlap): set(s.external) for s in SEPARATIONS}
    assert ext["adult", "relationship"] == {"relationship", "age", "sex", "race",
                                            "marital-status", "native-country"}
    # Table 2 lists marital-status twice here; we read it as five attributes
    assert ext["adult", "marital-status"] == {"marital-status", "age", "sex", "race",
                                              "native-country"}
    assert ext["compas", "score"] == {"score", "sex", "age", "race"}
    assert ext["compas", "violent score"] == {"violent score", "sex", "age", "race"}
    assert ext["german", "property"] == {"property", "sex", "marital-status", "age",
                                         "foreign-worker"}
    assert ext["german", "housing"] == {"housing", "sex", "marital-status", "age",
                                        "foreign-worker"}
    assert "relationship" in separation("adult", "marital-status").internal


def test_table_1_labels_and_protected_attributes():
    got = {d: (s.label, s.protected) for d, s in DATASET_SPECS.items()}
    assert got == {"adult": ("income", ("race", "sex")),
                   "compas": ("two-year recidivism", ("race", "sex")),
                   "german": ("class-label", ("age", "sex"))}


def test_separate_splits_a_table_by_column():
    columns = list(VALUES["compas"])
    df = pd.DataFrame([[f"{c}-{i}" for c in columns] for i in range(3)], columns=columns)
    internal, external = separate(df.assign(extra="x"), "compas", "score")
    assert list(internal.columns) == list(separation("compas", "score").internal)
    assert list(external.columns) == ["score", "sex", "age", "race"]
    assert internal.index.equals(df.index) and external.index.equals(df.index)
    pd.testing.assert_series_equal(internal["score"], external["score"])


def test_unknown_combinations_raise_clear_errors():
    with pytest.raises(InvalidInputError, match="choose one of"):
        separation("credit", "housing")
    with pytest.raises(InvalidInputError, match=r"\['relationship', 'marital-status'\]"):
        separation("adult", "housing")
    with pytest.raises(InvalidInputError, match="lacks columns"):
        separate(pd.DataFrame({"score": ["Low"]}), "compas", "score")
    with pytest.raises(InvalidInputError):
        separate([[1]], "compas", "score")
