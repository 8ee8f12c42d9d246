"""The three tables of PTGAN's Section 5.1 / Appendix D.2.3, prepared as the seed describes.

* **Adult** (income > 50K): ``education`` and ``fnlwgt`` are dropped (the seed, after Cho et al.
  2020). The package's Adult loader returns adult.data + adult.test without the rows that have a
  missing value (45,222 rows); the seed quotes adult.data's 32,561 rows. Only the number of rows
  differs; the 90/10 split and the iteration counts follow the seed.
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

__all__ = ["DATASETS", "TabularData", "availability", "load_tabular"]

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


def load_tabular(name: str) -> TabularData:
    """Load and prepare one of :data:`DATASETS` (see the module docstring)."""
    from fusionlib.data.loaders import load  # lazy: the loaders read files

    check_choice("dataset", name, DATASETS)
    target, positive, discrete = _SPECS[name]
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
