"""Error types of :mod:`fusionlib`.

Every error raised for bad input or missing data is one of these, and its message says what is
wrong *and* what to do about it.

:class:`NotFittedError` is also scikit-learn's ``sklearn.exceptions.NotFittedError`` (so
``except sklearn.exceptions.NotFittedError`` catches it, as it catches an unfitted scikit-learn
estimator). It is made on first use (PEP 562), so that importing this module does not import
scikit-learn.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "FusionlibError",
    "DataUnavailableError",
    "DataIntegrityError",
    "InvalidInputError",
    "NotFittedError",  # noqa: F822 - made on first use (module __getattr__)
    "TrainingDivergedError",
]


class FusionlibError(Exception):
    """Base class of every error raised on purpose by fusionlib."""


class DataUnavailableError(FusionlibError, FileNotFoundError):
    """A dataset's files are not on this machine and cannot be fetched from here."""


class DataIntegrityError(FusionlibError):
    """A dataset file exists but its SHA256 differs from the registry (altered or truncated)."""


class InvalidInputError(FusionlibError, ValueError):
    """User input that cannot be processed (wrong columns, missing values, bad options)."""


def _not_fitted_error() -> type:
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    class NotFittedError(FusionlibError, SklearnNotFittedError):
        """A model was used before ``fit`` was called.

        Also ``sklearn.exceptions.NotFittedError`` (hence a ``ValueError`` and an
        ``AttributeError``), so code written for scikit-learn estimators catches it.
        """

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"
    return NotFittedError


def __getattr__(name: str) -> Any:
    if name == "NotFittedError":
        cls = globals()["NotFittedError"] = _not_fitted_error()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TrainingDivergedError(FusionlibError, FloatingPointError):
    """Training produced a non-finite loss; the message names the iteration and what was kept."""
