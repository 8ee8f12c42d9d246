"""Error types of :mod:`fusionlib`.

Every error raised for bad input or missing data is one of these, and its message says what is
wrong *and* what to do about it.
"""

from __future__ import annotations

__all__ = [
    "FusionlibError",
    "DataUnavailableError",
    "DataIntegrityError",
    "InvalidInputError",
    "NotFittedError",
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


class NotFittedError(FusionlibError, AttributeError):
    """A model was used before ``fit`` was called."""


class TrainingDivergedError(FusionlibError, FloatingPointError):
    """Training produced a non-finite loss; the message names the iteration and what was kept."""
