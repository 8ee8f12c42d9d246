"""The three tables of PTGAN's Section 5.1 / Appendix D.2.3, prepared as the seed describes.

* **Adult** (income > 50K): ``education`` and ``fnlwgt`` are dropped (the seed, after Cho et al.
  2020). Two variants (:data:`ADULT_VARIANTS`): ``"paper"`` (the default) is the data as the seed
  counts it, the 32,561 individuals of ``adult.data``, a missing value ``?`` kept as a category of
  its own (it occurs only in the discrete columns workclass, occupation and native-country); 57,000
  iterations of batch 100 are then 195 epochs of the 29,305 training rows, the seed's "200 epochs
  ... approximately 57k". ``"uci-complete"`` is the package loader's table, ``adult.data`` and
  ``adult.test`` without the rows that have a missing value (45,222 rows; 57,000 iterations are
  140 epochs), which the compendium used before.
* **Law School** (admission): LSAT, GPA, Gender, Race, resident and the label ``admit``.
* **Credit Card Default** (default next month): every column but ``ID``.

Law School and Credit Card Default cannot be downloaded here; :func:`load_tabular` raises
:class:`~fusionlib.errors.DataUnavailableError` saying which file to put where, and
:func:`availability` reports it without raising (the chapter turns it into "not run" claims).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionlib.checks import check_choice
from fusionlib.errors import DataIntegrityError, DataUnavailableError, InvalidInputError

__all__ = ["ADULT_VARIANTS", "DATASETS", "TabularData", "availability", "load_tabular"]

#: the Adult tables (see the module docstring); the first is the default
ADULT_VARIANTS: tuple[str, ...] = ("paper", "uci-complete")

#: dataset name -> (target column, positive label, discrete feature columns)
_SPECS: dict[str, tuple[str, object, tuple[str, ...]]] = {
    "adult": ("income", ">50K", ("workclass", "marital-status", "occupation", "relationship",
                                 "race", "sex", "native-country")),
    "law_school": ("admit", 1, ("Gender", "Race", "resident")),
    "credit_default": ("default payment next month", 1,
                       ("SEX", "EDUCATION", "MARRIAGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4",
                        "PAY_5", "PAY_6")),
}
#: the datasets of Table 3, in table order
DATASETS: tuple[str, ...] = ("adult", "law_school", "credit_default")
_LAW_COLUMNS = ("LSAT", "GPA", "Gender", "Race", "resident", "admit")


@dataclass(frozen=True)
class TabularData:
    """A prepared table: ``frame`` with a binary 0/1 ``target`` column and its discrete columns.

    ``discrete_columns`` includes the target (the generator synthesises it as a one-hot column).
    """

    name: str
    frame: pd.DataFrame
    target: str
    discrete_columns: tuple[str, ...]

    @property
    def features(self) -> list[str]:
        """Every column but the target."""
        return [c for c in self.frame.columns if c != self.target]


def _adult_data_file() -> pd.DataFrame:
    """``adult.data`` alone, every row (32,561), values stripped, ``?`` kept as a category."""
    from fusionlib.data.loaders import ADULT_COLUMNS
    from fusionlib.data.store import dataset_paths

    df = pd.read_csv(dataset_paths("adult")["adult.data"], header=None, names=list(ADULT_COLUMNS),
                     skipinitialspace=True, dtype=str, keep_default_na=False)
    df = df[df["age"].str.len() > 0].apply(lambda s: s.str.strip()).reset_index(drop=True)
    for col in ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                "hours-per-week"):
        df[col] = df[col].astype("int64")
    return df


def load_tabular(name: str, variant: str | None = None) -> TabularData:
    """Load and prepare one of :data:`DATASETS` (see the module docstring).

    ``variant``: only for Adult, one of :data:`ADULT_VARIANTS` (None: ``"paper"``).
    """
    from fusionlib.data.loaders import load  # lazy: the loaders read files

    check_choice("dataset", name, DATASETS)
    if variant is not None and name != "adult":
        raise InvalidInputError(f"{name} has one table; variant={variant!r} is only for adult")
    if name == "adult":
        check_choice("variant", variant or ADULT_VARIANTS[0], ADULT_VARIANTS)
    target, positive, discrete = _SPECS[name]
    if name == "adult" and (variant or ADULT_VARIANTS[0]) == "paper":
        frame = _adult_data_file()
    else:
        frame = load(name)
    if name == "adult":
        frame = frame.drop(columns=["education", "fnlwgt"])
    elif name == "law_school":
        frame = frame[list(_LAW_COLUMNS)].dropna()
    if target not in frame.columns:
        raise InvalidInputError(f"{name}: the label column {target!r} is missing; columns: "
                                f"{list(frame.columns)}")
    frame = frame.copy()
    frame[target] = (frame[target] == positive).astype("int64")
    for col in discrete:
        frame[col] = frame[col].astype(str)
    return TabularData(name, frame.reset_index(drop=True), target, (*discrete, target))


def availability(name: str) -> str | None:
    """None when ``name`` loads; otherwise the reason and what to provide (never raises)."""
    try:
        load_tabular(name)
    except (DataUnavailableError, DataIntegrityError) as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None
