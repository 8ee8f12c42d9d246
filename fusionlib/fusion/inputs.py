"""Checks of the data a FusionGAN training step receives: rows and weights of one source.

Each check raises :class:`~fusionlib.errors.InvalidInputError` naming the source, the problem and
the fix, before anything is trained.
"""

from __future__ import annotations

import numpy as np
import torch

from fusionlib.errors import InvalidInputError

__all__ = ["float_tensor", "check_rows", "check_weights"]


def float_tensor(what: str, x: object) -> torch.Tensor:
    """``x`` as a float32 tensor (``what`` names it in the error)."""
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bool or x.is_complex():
            raise InvalidInputError(f"{what} must be real numbers, got a {x.dtype} tensor")
        return x.detach().to(torch.float32)
    try:
        return torch.as_tensor(np.asarray(x, dtype=np.float32))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} must be numeric ({exc}); encode text columns as numbers "
                                "first") from None


def check_rows(name: str, k: int, x: object, width: int, batch: int) -> torch.Tensor:
    """The rows (n, width) of source ``name`` (discriminator ``k``): finite, at least a batch."""
    x = float_tensor(f"the rows of source {name!r}", x)
    if x.ndim != 2 or x.shape[1] != width:
        raise InvalidInputError(
            f"the rows of source {name!r} have shape {tuple(x.shape)} but discriminator_{k} "
            f"takes {width} columns; pass (n, {width}) rows in the order of its columns")
    if not bool(torch.isfinite(x).all()):
        raise InvalidInputError(f"the rows of source {name!r} contain NaN or infinite "
                                "values; drop or impute them first")
    if x.shape[0] < batch:
        raise InvalidInputError(
            f"source {name!r} has {x.shape[0]} rows, fewer than one batch (batch_size="
            f"{batch}); lower batch_size to at most {x.shape[0]} or give it more rows")
    return x


def check_weights(name: str, w: object, n: int) -> torch.Tensor:
    """The weights (n,) of source ``name``: finite, >= 0, not all zero (None: all 1)."""
    if w is None:
        return torch.ones(n)
    w = float_tensor(f"the weights of source {name!r}", w)
    if tuple(w.shape) != (n,):
        raise InvalidInputError(f"the weights of source {name!r} have shape "
                                f"{tuple(w.shape)}; give one weight per row, shape ({n},)")
    if not bool(torch.isfinite(w).all()):
        raise InvalidInputError(f"the weights of source {name!r} contain NaN or infinite "
                                "values; give finite weights >= 0")
    if bool((w < 0).any()):
        raise InvalidInputError(f"the weights of source {name!r} include negative values "
                                f"(min {float(w.min()):g}); weights must be >= 0")
    if not bool((w > 0).any()):
        raise InvalidInputError(f"the weights of source {name!r} are all zero; give at "
                                "least one row a positive weight")
    return w
