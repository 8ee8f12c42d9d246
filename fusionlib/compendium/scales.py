"""The three execution scales of the compendium.

See the book page "How this compendium is built" (book/design.md), "Scales".
"""

from __future__ import annotations

from fusionlib.errors import InvalidInputError

__all__ = ["SCALES", "validate_scale"]

#: smoke: every code path once, seconds; cpu: reduced but meaningful runs on a 2-core CPU;
#: paper: the papers' full protocol (GPU runners, hours).
SCALES: tuple[str, ...] = ("smoke", "cpu", "paper")


def validate_scale(scale: object) -> str:
    """Return ``scale`` if it is one of :data:`SCALES`, else raise a clear error."""
    if not isinstance(scale, str) or scale not in SCALES:
        raise InvalidInputError(
            f"unknown scale {scale!r}; allowed values are {', '.join(SCALES)} "
            "(e.g. `make book SCALE=cpu`)"
        )
    return scale
