"""Small input checks shared by the GAN modules (private)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from fusionlib.checks import is_int
from fusionlib.errors import InvalidInputError

__all__ = ["check_choice", "check_probability", "check_positive_int", "check_matrix"]


def check_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the allowed values."""
    if value not in allowed:
        raise InvalidInputError(
            f"unknown {name} {value!r}; choose one of: {', '.join(map(repr, allowed))}"
        )
    return str(value)


def check_probability(name: str, value: float) -> float:
    """Return ``value`` as float if it lies in [0, 1], else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInputError(f"{name} must lie in [0, 1], got {value}; pick a value in [0, 1]")
    return float(value)


def check_positive_int(name: str, value: int) -> int:
    """Return ``value`` if it is an int >= 1, else raise."""
    if not is_int(value) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_matrix(name: str, x: torch.Tensor) -> torch.Tensor:
    """Check that ``x`` is a finite 2-D floating tensor with at least one row."""
    if not isinstance(x, torch.Tensor):
        raise InvalidInputError(
            f"{name} must be a torch.Tensor, got {type(x).__name__}; "
            "convert with torch.as_tensor(x, dtype=torch.float32)"
        )
    if x.ndim != 2 or x.shape[0] < 1:
        raise InvalidInputError(f"{name} must have shape (n, d) with n >= 1, got {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise InvalidInputError(f"{name} must be floating point, got {x.dtype}; use .float()")
    if not bool(torch.isfinite(x).all()):
        raise InvalidInputError(f"{name} contains NaN or infinite values; clean the data first")
    return x
