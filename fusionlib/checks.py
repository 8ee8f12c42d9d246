"""Tiny predicates shared by every module's input validation."""

from __future__ import annotations

import numbers

__all__ = ["is_int"]


def is_int(value: object) -> bool:
    """True for Python and NumPy integers; False for ``bool`` (an ``int`` subclass) and the rest."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
