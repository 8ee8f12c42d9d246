"""The separations of seed 002's Table 2 as data, and :func:`separate` to apply them.

Each complete (discretised, Appendix B) dataset is split by column into an *external* table
(census-like attributes including every protected attribute) and an *internal* table (every
other attribute, including the label); the two share exactly one *overlap* attribute.

Table 2 lists the external attributes only; the internal table is "the remaining attributes"
plus the overlap. Its rows keep the same pattern within a dataset: the overlap changes, the
other external attributes stay. Our reading of each row:

=======  ===============  ===============================================================
dataset  overlap          external table (overlap first)
=======  ===============  ===============================================================
adult    relationship     relationship, age, sex, race, marital-status, native-country
adult    marital-status   marital-status, age, sex, race, native-country
compas   score            score, sex, age, race
compas   violent score    violent score, sex, age, race
german   property         property, sex, marital-status, age, foreign-worker
german   housing          housing, sex, marital-status, age, foreign-worker
=======  ===============  ===============================================================

The second Adult row of Table 2 reads "marital-status, age, sex, race, marital-status,
native-country": marital-status twice. We read it as the first row with the overlap
replaced, the repeated name being the same attribute: the external table has five
attributes and ``relationship`` moves to the internal table, exactly as the other overlap
candidate does in the COMPAS and German rows (``violent score`` is internal when ``score``
is the overlap, ``housing`` when ``property`` is). The alternative reading (a typo for
``relationship``, which would then sit in the external table only) is not used.

Protected attributes and labels follow Table 1. The privileged groups and favourable labels
follow AIF360's conventions for these datasets (the seed does not state them): Adult male,
white, ">50K"; COMPAS Female (AIF360 treats women as privileged for recidivism), White, no
two-year recidivism ("0"); German age > 25, male, good credit ("1").
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.discretise import VALUES

__all__ = ["DATASET_SPECS", "DatasetSpec", "SEPARATIONS", "Separation", "dataset_spec",
           "separate", "separation"]


@dataclass(frozen=True)
class DatasetSpec:
    """Table 1 and Table 2 facts of one dataset.

    Attributes
    ----------
    name : str
    label : str
        Outcome column (Table 1's "Label").
    favourable : str
        Label value of the favourable outcome.
    protected : tuple of str
        Protected attributes (Table 1), in the paper's order.
    privileged : dict
        Protected attribute -> its privileged value.
    census : tuple of str
        External attributes other than the overlap (Table 2, same in every row).
    overlaps : tuple of str
        The overlap attributes of Table 2, in row order.
    columns : tuple of str
        All attributes of the discretised dataset (Appendix B).
    """

    name: str
    label: str
    favourable: str
    protected: tuple[str, ...]
    privileged: dict[str, str]
    census: tuple[str, ...]
    overlaps: tuple[str, ...]
    columns: tuple[str, ...]


DATASET_SPECS: dict[str, DatasetSpec] = {
    "adult": DatasetSpec(
        name="adult", label="income", favourable=">50K", protected=("race", "sex"),
        privileged={"race": "white", "sex": "male"},
        census=("age", "sex", "race", "marital-status", "native-country"),
        overlaps=("relationship", "marital-status"), columns=tuple(VALUES["adult"]),
    ),
    "compas": DatasetSpec(
        name="compas", label="two-year recidivism", favourable="0", protected=("race", "sex"),
        privileged={"race": "White", "sex": "Female"},
        census=("sex", "age", "race"),
        overlaps=("score", "violent score"), columns=tuple(VALUES["compas"]),
    ),
    "german": DatasetSpec(
        name="german", label="class-label", favourable="1", protected=("age", "sex"),
        privileged={"age": ">25", "sex": "male"},
        census=("sex", "marital-status", "age", "foreign-worker"),
        overlaps=("property", "housing"), columns=tuple(VALUES["german"]),
    ),
}


@dataclass(frozen=True)
class Separation:
    """One row of Table 2: column lists of the internal and external tables.

    Both lists start with the overlap; the rest follow the discretised column order.
    """

    dataset: str
    overlap: str
    internal: tuple[str, ...]
    external: tuple[str, ...]


def dataset_spec(dataset: str) -> DatasetSpec:
    """The :class:`DatasetSpec` of ``dataset``; clear error for unknown names."""
    if dataset not in DATASET_SPECS:
        raise InvalidInputError(
            f"unknown dataset {dataset!r}; choose one of {sorted(DATASET_SPECS)}"
        )
    return DATASET_SPECS[dataset]


def separation(dataset: str, overlap: str) -> Separation:
    """The Table 2 separation of ``dataset`` with the given overlap attribute."""
    spec = dataset_spec(dataset)
    if overlap not in spec.overlaps:
        raise InvalidInputError(
            f"Table 2 has no {dataset} separation with overlap {overlap!r}; choose one of "
            f"{list(spec.overlaps)}"
        )
    external_set = {overlap, *spec.census}
    rest = [c for c in spec.columns if c not in external_set]
    return Separation(
        dataset=dataset,
        overlap=overlap,
        internal=(overlap, *rest),
        external=(overlap, *[c for c in spec.columns if c in spec.census and c != overlap]),
    )


SEPARATIONS: tuple[Separation, ...] = tuple(
    separation(d, o) for d, spec in DATASET_SPECS.items() for o in spec.overlaps
)


def separate(df: pd.DataFrame, dataset: str, overlap: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split a complete discretised table by column into (internal, external) tables.

    Parameters
    ----------
    df : DataFrame
        Output of ``discretise(dataset, raw)`` (or rows of it): must hold every column of
        the dataset; extra columns are dropped.
    dataset : {"adult", "compas", "german"}
    overlap : str
        One of ``dataset_spec(dataset).overlaps``.

    Returns
    -------
    internal, external : DataFrame
        Copies with the same rows as ``df``; columns as in :func:`separation`.
    """
    sep = separation(dataset, overlap)
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in (*sep.internal, *sep.external) if c not in df.columns]
    if missing:
        raise InvalidInputError(
            f"the {dataset} table lacks columns {missing}; pass the output of "
            f"discretise({dataset!r}, raw_table)"
        )
    return df[list(sep.internal)].copy(), df[list(sep.external)].copy()
