"""Loaders: verified files -> typed pandas DataFrames with documented columns.

Tabular loaders return one row per record with these columns:

``adult`` (45,222 rows: train + test, rows with any ``?`` dropped)
    age, workclass, fnlwgt, education, education-num, marital-status, occupation,
    relationship, race, sex, capital-gain, capital-loss, hours-per-week, native-country,
    income (``'<=50K'`` / ``'>50K'``; the test file's trailing dots removed). Integer columns are
    ``int64``, the others ``str`` (whitespace stripped).
``compas`` (5,278 rows)
    every column of ``compas-scores-two-years.csv``, after ProPublica's filters
    (|days_b_screening_arrest| <= 30, is_recid != -1, c_charge_degree != 'O',
    score_text != 'N/A') and race in {African-American, Caucasian}.
``german`` (1,000 rows)
    checking_status, duration, credit_history, purpose, credit_amount, savings, employment,
    installment_rate, personal_status, other_debtors, residence_since, property, age,
    other_installment_plans, housing, existing_credits, job, num_dependents, telephone,
    foreign_worker, credit (1 = good, 2 = bad). Categorical columns keep the UCI codes
    (A11, A91, ...); see the UCI description for their meaning.
"""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd

from fusionlib.data.registry import get_spec
from fusionlib.data.store import dataset_paths
from fusionlib.errors import DataUnavailableError, InvalidInputError

__all__ = ["load", "load_images", "ADULT_COLUMNS", "GERMAN_COLUMNS", "TABULAR", "IMAGES"]

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)
_ADULT_INT = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")

GERMAN_COLUMNS = (
    "checking_status", "duration", "credit_history", "purpose", "credit_amount", "savings",
    "employment", "installment_rate", "personal_status", "other_debtors", "residence_since",
    "property", "age", "other_installment_plans", "housing", "existing_credits", "job",
    "num_dependents", "telephone", "foreign_worker", "credit",
)

TABULAR = ("adult", "compas", "german", "law_school", "credit_default")
IMAGES = ("fashion_mnist", "cifar10", "bloodmnist", "celeba_hq")


def _load_adult() -> pd.DataFrame:
    paths = dataset_paths("adult")
    kw = dict(header=None, names=list(ADULT_COLUMNS), skipinitialspace=True, dtype=str,
              keep_default_na=False)
    train = pd.read_csv(paths["adult.data"], **kw)
    test = pd.read_csv(paths["adult.test"], skiprows=1, **kw)  # first line is a comment
    df = pd.concat([train, test], ignore_index=True)
    df = df[df["age"].str.len() > 0]  # trailing blank lines
    df = df.apply(lambda s: s.str.strip())
    df["income"] = df["income"].str.rstrip(".")
    df = df[~(df == "?").any(axis=1)].reset_index(drop=True)
    for col in _ADULT_INT:
        df[col] = df[col].astype("int64")
    return df


def _load_compas() -> pd.DataFrame:
    df = pd.read_csv(dataset_paths("compas")["compas-scores-two-years.csv"])
    keep = (
        df["days_b_screening_arrest"].between(-30, 30)
        & (df["is_recid"] != -1)
        & (df["c_charge_degree"] != "O")
        & (df["score_text"].notna())
        & (df["score_text"] != "N/A")
        & df["race"].isin(["African-American", "Caucasian"])
    )
    return df[keep].reset_index(drop=True)


def _load_german() -> pd.DataFrame:
    df = pd.read_csv(dataset_paths("german")["german.data"], sep=" ", header=None,
                     names=list(GERMAN_COLUMNS))
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].astype(str)
        else:
            df[col] = df[col].astype("int64")
    return df


def _load_law_school() -> pd.DataFrame:
    path = dataset_paths("law_school")["law_school.csv"]
    df = pd.read_csv(path)
    need = {"LSAT", "GPA", "Gender", "Race", "resident", "admit"}
    if not need <= set(df.columns):
        raise InvalidInputError(
            f"{path}: expected columns {sorted(need)}, found {sorted(df.columns)}; provide the "
            "LSAC admissions table used by the PTGAN paper"
        )
    return df


def _load_credit_default() -> pd.DataFrame:
    path = dataset_paths("credit_default")["default of credit card clients.xls"]
    try:
        df = pd.read_excel(path, header=1)
    except ImportError as exc:
        raise DataUnavailableError(
            f"{path} is present, but reading a legacy .xls file needs the package xlrd "
            "(pinned in requirements.lock); run `make env` to install the locked environment "
            "and retry"
        ) from exc
    return df.drop(columns=["ID"])


_TABULAR_LOADERS = {
    "adult": _load_adult,
    "compas": _load_compas,
    "german": _load_german,
    "law_school": _load_law_school,
    "credit_default": _load_credit_default,
}


def load(name: str) -> pd.DataFrame:
    """Load a tabular dataset as a DataFrame (see the module docstring for its columns).

    Raises :class:`~fusionlib.errors.DataUnavailableError` if it is not provisioned and
    :class:`~fusionlib.errors.DataIntegrityError` if a file's checksum differs.
    """
    get_spec(name)  # unknown names get the list of known ones
    if name not in _TABULAR_LOADERS:
        raise InvalidInputError(
            f"{name!r} is an image dataset; use load_images({name!r}). Tabular datasets: "
            f"{', '.join(TABULAR)}"
        )
    return _TABULAR_LOADERS[name]()


def _read_idx(path, expected_magic: int) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    magic = int.from_bytes(raw[:4], "big")
    if magic != expected_magic:
        raise InvalidInputError(f"{path}: not an idx file (magic {magic})")
    ndim = magic & 0xFF
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_images(name: str, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Load an image dataset: ``(images uint8 (N, H, W[, C]), labels int64 (N,))``.

    Only Fashion-MNIST is provisioned offline; the others raise
    :class:`~fusionlib.errors.DataUnavailableError` with instructions unless their files exist.
    """
    if split not in ("train", "test"):
        raise InvalidInputError(f"split must be 'train' or 'test', got {split!r}")
    spec = get_spec(name)
    if name == "fashion_mnist":
        paths = dataset_paths(spec)
        prefix = "train" if split == "train" else "t10k"
        x = _read_idx(paths[f"{prefix}-images-idx3-ubyte.gz"], 2051)
        y = _read_idx(paths[f"{prefix}-labels-idx1-ubyte.gz"], 2049)
        return x.copy(), y.astype(np.int64)
    if name == "bloodmnist":
        data = np.load(dataset_paths(spec)["bloodmnist_64.npz"])
        key = "train" if split == "train" else "test"
        return data[f"{key}_images"], data[f"{key}_labels"].ravel().astype(np.int64)
    if name in IMAGES:
        dataset_paths(spec)  # raises DataUnavailableError with instructions when absent
        raise DataUnavailableError(
            f"a reader for {name!r} is not part of this release; its files were found but no "
            "experiment uses them yet"
        )
    raise InvalidInputError(f"{name!r} is tabular; use load({name!r}). Images: {', '.join(IMAGES)}")
