"""Input checks shared by every module: one place, typed errors, messages that say the fix.

Every check raises :class:`~fusionlib.errors.InvalidInputError` (a ``ValueError``), never a
bare ``TypeError`` or ``assert``, so a caller can catch one type for all bad input.
torch is imported lazily (only :func:`check_tensor` needs it).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from fusionlib.errors import InvalidInputError

__all__ = [
    "is_int", "check_choice", "check_probability", "check_positive_int", "check_nonneg_int",
    "check_positive", "check_finite_number", "check_int", "check_frame", "check_array",
    "check_tensor", "check_matrix", "check_options", "check_seed", "check_device",
    "memory_error_as_input_error",
]


def is_int(value: object) -> bool:
    """True for Python and NumPy integers; False for ``bool`` (an ``int`` subclass) and the rest."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_choice(name: str, value: object, allowed: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise naming the allowed values."""
    if value not in allowed:
        raise InvalidInputError(
            f"unknown {name} {value!r}; choose one of: {', '.join(map(repr, allowed))}")
    return value


def check_int(name: str, value: object) -> int:
    """Return ``value`` as int if it is an integer (not a bool), else raise."""
    if not is_int(value):
        raise InvalidInputError(f"{name} must be an integer, got {value!r}")
    return int(value)


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int >= 1, else raise."""
    if not is_int(value) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_nonneg_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int >= 0, else raise."""
    if not is_int(value) or value < 0:
        raise InvalidInputError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def check_seed(name: str, value: object) -> int:
    """Return ``value`` as int if it is a seed: a Python or NumPy integer >= 0 (not a bool).

    The one rule for every root seed of the package (:mod:`fusionlib.rng`, ``Run``, cells), so
    ``np.int64(3)`` is accepted wherever ``3`` is.
    """
    if not is_int(value) or value < 0:
        raise InvalidInputError(
            f"{name} must be an integer >= 0 (a Python or NumPy int), got {value!r}; pass "
            "e.g. 0 (make book SEED=0)")
    return int(value)


def check_finite_number(name: str, value: object) -> float:
    """Return ``value`` as float if it is a finite real number, else raise."""
    if not _is_number(value) or not math.isfinite(float(value)):
        raise InvalidInputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_positive(name: str, value: object, *, allow_zero: bool = False) -> float:
    """Return ``value`` as float if it is finite and > 0 (>= 0 with ``allow_zero``)."""
    v = check_finite_number(name, value)
    if v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InvalidInputError(f"{name} must be {bound}, got {value!r}")
    return v


def check_probability(name: str, value: object) -> float:
    """Return ``value`` as float if it lies in [0, 1], else raise."""
    if not _is_number(value) or math.isnan(float(value)):
        raise InvalidInputError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInputError(f"{name} must lie in [0, 1], got {value}; pick a value in [0, 1]")
    return float(value)


def check_options(name: str, given: dict, allowed: Sequence[str]) -> dict:
    """Reject unknown option names (a misspelled option must not be silently ignored)."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise InvalidInputError(
            f"unknown {name} option(s) {unknown}; allowed: {', '.join(sorted(allowed))}")
    return given


def check_frame(name: str, df: object, *, min_rows: int = 1):
    """Return ``df`` if it is a pandas DataFrame with at least ``min_rows`` rows and a column."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(
            f"{name} must be a pandas DataFrame, got {type(df).__name__}; "
            "wrap it with pandas.DataFrame(...)")
    if df.shape[1] == 0 or len(df) < min_rows:
        raise InvalidInputError(
            f"{name} has {len(df)} rows and {df.shape[1]} columns; it needs at least "
            f"{min_rows} row(s) and one column")
    return df


def check_array(name: str, x: object, *, ndim: int = 2, min_rows: int = 1,
                finite: bool = True) -> np.ndarray:
    """Return ``x`` as a float64 array of ``ndim`` dimensions, finite, with >= ``min_rows`` rows."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name} must be numeric (convertible to float), got {type(x).__name__}: {exc}; "
            "encode text columns as numbers first") from None
    if arr.ndim != ndim or (arr.ndim >= 1 and arr.shape[0] < min_rows):
        raise InvalidInputError(
            f"{name} must have {ndim} dimension(s) and at least {min_rows} row(s), "
            f"got shape {arr.shape}")
    if finite and not np.isfinite(arr).all():
        raise InvalidInputError(f"{name} contains NaN or infinite values; clean the data first")
    return arr


def check_tensor(name: str, x: object):
    """Return ``x`` if it is a finite floating-point torch tensor, else raise."""
    import torch

    if not isinstance(x, torch.Tensor):
        raise InvalidInputError(
            f"{name} must be a torch.Tensor, got {type(x).__name__}; "
            "convert with torch.as_tensor(x, dtype=torch.float32)")
    if not torch.is_floating_point(x):
        raise InvalidInputError(f"{name} must be floating point, got {x.dtype}; use .float()")
    if not bool(torch.isfinite(x).all()):
        raise InvalidInputError(f"{name} contains NaN or infinite values; clean the data first")
    return x


def check_matrix(name: str, x: object):
    """Check that ``x`` is a finite 2-D floating torch tensor with at least one row."""
    import torch

    if isinstance(x, torch.Tensor) and (x.ndim != 2 or x.shape[0] < 1):
        raise InvalidInputError(f"{name} must have shape (n, d) with n >= 1, got {tuple(x.shape)}")
    return check_tensor(name, x)


def check_device(name: str, device: object) -> object:
    """Return ``device`` if torch can use it here: ``"cpu"``, or ``"cuda"`` / ``"cuda:i"`` when
    torch sees that GPU (a CPU-only build raises a bare ``AssertionError`` otherwise)."""
    import torch

    try:
        if not isinstance(device, str | torch.device):
            raise TypeError(f"a device is a string, got {type(device).__name__}")
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name}={device!r} is not a torch device ({exc}); use 'cpu' or 'cuda'") from None
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise InvalidInputError(
                f"{name}={str(device)!r} needs a CUDA GPU, but this torch ({torch.__version__}) "
                "sees no CUDA device (a CPU-only build, or no GPU here); use device='cpu', or "
                "on a GPU machine install the CUDA build (make env TORCH=cuda)")
        if dev.index is not None and dev.index >= count:
            raise InvalidInputError(
                f"{name}={str(device)!r}: torch sees {count} CUDA device(s); use 'cpu' or "
                f"'cuda' (or 'cuda:i' with i < {count})")
    return device


@contextmanager
def memory_error_as_input_error(what: str) -> Iterator[None]:
    """Turn an allocation failure inside the block (numpy's ``MemoryError``, torch's
    "can't allocate" / "out of memory" ``RuntimeError``) into an
    :class:`~fusionlib.errors.InvalidInputError` that names ``what`` was asked for."""
    try:
        yield
    except (MemoryError, RuntimeError) as exc:
        if not isinstance(exc, MemoryError) and "alloc" not in str(exc).lower() \
                and "out of memory" not in str(exc).lower():
            raise
        raise InvalidInputError(
            f"{what} needs more memory than this machine can give ({type(exc).__name__}: "
            f"{str(exc)[:200]}); ask for fewer rows per call (e.g. batches of 10**6, each with "
            "its own seed such as rng.child(seed, i)) and concatenate them") from None
