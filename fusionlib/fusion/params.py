"""Checks of :class:`~fusionlib.fusion.synthesizer.FusionGAN`'s constructor parameters.

Run by ``fit`` (scikit-learn style: ``__init__`` only stores them); each raises
:class:`~fusionlib.errors.InvalidInputError` naming the parameter and a valid value.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from fusionlib.checks import check_nonneg_int, check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.rng import child

__all__ = ["check_params", "discrete_columns"]


def check_params(model: object) -> None:
    """Check every parameter of a FusionGAN ``model``."""
    check_positive_int("epochs", model.epochs)
    if not isinstance(model.config, FusionConfig):
        raise InvalidInputError(
            f"config must be a FusionConfig, got {type(model.config).__name__}; e.g. "
            "FusionConfig(batch_size=32)")
    if model.iterations_per_epoch is not None:
        check_positive_int("iterations_per_epoch", model.iterations_per_epoch)
    check_nonneg_int("checkpoint_every", model.checkpoint_every)
    check_nonneg_int("log_every", model.log_every)
    if model.n_threads is not None:
        check_positive_int("n_threads", model.n_threads)
    if model.weighting_options is not None and not isinstance(model.weighting_options, Mapping):
        raise InvalidInputError(
            f"weighting_options must be a dict of options or None, got "
            f"{type(model.weighting_options).__name__}")
    check_positive("tau", model.tau)
    from fusionlib.fusion.convergence import ConvergenceRule

    if model.convergence is not None and not isinstance(model.convergence, ConvergenceRule):
        raise InvalidInputError(f"convergence must be a ConvergenceRule or None, got "
                                f"{type(model.convergence).__name__}; e.g. ConvergenceRule()")
    _check_extensions(model)
    for name in ("standardize", "progress", "hard"):
        if not isinstance(getattr(model, name), bool):
            raise InvalidInputError(f"{name} must be True or False, got "
                                    f"{getattr(model, name)!r}")
    child(model.seed)  # validates the seed


def _check_extensions(model: object) -> None:
    """``condition`` (a column name or None) and ``dp`` (a DPConfig or None, continuous only)."""
    from fusionlib.fusion.dp import DPConfig

    if model.condition is not None and not isinstance(model.condition, str):
        raise InvalidInputError(f"condition must be a column name (str) or None, got "
                                f"{model.condition!r}")
    discrete = discrete_columns(model.discrete_columns, model.condition)
    if model.dp is not None and not isinstance(model.dp, DPConfig):
        raise InvalidInputError(f"dp must be a DPConfig or None, got "
                                f"{type(model.dp).__name__}; e.g. DPConfig(noise_multiplier=1)")
    if model.dp is not None and discrete:
        raise InvalidInputError("dp supports continuous columns only; drop condition and "
                                "discrete_columns, or dp")


def discrete_columns(cols: object, condition: str | None = None) -> tuple[str, ...]:
    """``cols`` checked and deduplicated (order kept), with ``condition`` added last."""
    if isinstance(cols, str):
        raise InvalidInputError(f"discrete_columns must be a list of column names, got the "
                                f"string {cols!r}; write discrete_columns=[{cols!r}]")
    if not isinstance(cols, Collection):
        raise InvalidInputError(f"discrete_columns must be a list of column names, got "
                                f"{type(cols).__name__}")
    cols = tuple(cols)
    bad = [c for c in cols if not isinstance(c, str)]
    if bad:
        raise InvalidInputError(f"discrete_columns must name columns with strings, got {bad}")
    return tuple(dict.fromkeys(cols + ((condition,) if condition else ())))
