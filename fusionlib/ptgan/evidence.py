"""Estimates and combined verdicts for the claims of the PTGAN chapters (seed 001).

The verdicts themselves are decided by :mod:`fusionlib.compendium.verdicts`; this module turns
the chapters' per-seed summaries into the :class:`~fusionlib.compendium.verdicts.Estimate`
objects those rules need, and combines the decisions of several instances of one statement
(a theory identity checked at several r, a direction at two mode distances).

- :func:`paired_difference`: the mean of per-seed differences between two arms that share
  their seeds (same initial weights and data stream), with its standard error over seeds;
- :func:`relative_estimate`: a Monte Carlo value relative to an exact one, so that a relative
  equivalence margin applies;
- :func:`log_ratio_estimate`: the log of a ratio of two Monte Carlo estimates (delta method);
- :func:`all_instances`: one verdict for "the statement holds at every instance".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from fusionlib.compendium.verdicts import Decision, Estimate
from fusionlib.errors import InvalidInputError

__all__ = ["THEORY_MARGIN", "all_instances", "log_ratio_estimate", "paired_difference",
           "relative_estimate"]

#: equivalence margin of a closed form against its simulation, relative to the closed form:
#: a moment within 1 % of the closed form counts as the same (the printed and derived sigma* of
#: Proposition 3 differ by 5 % at mu = +-1, sigma = 1; the factor (2 + r)/3 of Proposition 5
#: moves by 3 % between r = 0.9 and r = 1)
THEORY_MARGIN = 0.01


def paired_difference(a: pd.Series, b: pd.Series) -> Estimate:
    """Mean over seeds of ``a - b`` (Series indexed by seed) with its standard error.

    Both arms must hold the same seeds (the differences are paired); one seed gives an unknown
    spread (``se=None``), as
    :meth:`~fusionlib.compendium.verdicts.Estimate.from_sample` does.
    """
    if set(a.index) != set(b.index) or a.index.has_duplicates or b.index.has_duplicates:
        raise InvalidInputError(
            f"paired_difference needs the same seeds on both sides, once each; got "
            f"{sorted(a.index)} and {sorted(b.index)}")
    diff = (a - b.reindex(a.index)).astype(float)
    return Estimate.from_sample(diff.to_numpy())


def relative_estimate(value: float, se: float, exact: float) -> Estimate:
    """``value / exact`` with standard error ``se / |exact|`` (compare with 1 under a relative
    margin)."""
    if not (math.isfinite(exact) and exact != 0):
        raise InvalidInputError(f"the exact value must be finite and non-zero, got {exact!r}")
    return Estimate(value / exact, abs(se / exact))


def log_ratio_estimate(num: float, num_se: float, den: float, den_se: float) -> Estimate:
    """``log(num / den)`` with the delta-method standard error
    ``sqrt((num_se / num)^2 + (den_se / den)^2)``.

    The two estimates are treated as independent; when they are positively correlated (computed
    from shared draws) the true standard error is smaller, so this one is conservative."""
    if not (num > 0 and den > 0):
        raise InvalidInputError(f"a log ratio needs positive values, got {num!r} and {den!r}")
    return Estimate(math.log(num / den), math.hypot(num_se / num, den_se / den))


def all_instances(decisions: Sequence[Decision], labels: Sequence[str]) -> Decision:
    """One verdict for a statement checked at several instances (each with its own decision).

    Differs if any instance differs; reproduced if every instance is reproduced; not comparable
    or not run if every instance is; else inconclusive. The reason gives the reasons of the
    instances that differ and names those that were not decided."""
    if len(decisions) != len(labels) or not decisions:
        raise InvalidInputError("all_instances needs one label per decision, at least one")
    verdicts = [d.verdict for d in decisions]
    tests = "; ".join(sorted({d.test for d in decisions}))
    if all(v == "reproduced" for v in verdicts):
        return Decision("reproduced", "", f"every instance: {tests}")
    for v in ("not run", "not comparable"):
        if all(x == v for x in verdicts):
            return Decision(v, decisions[0].reason, decisions[0].test)
    worst = "differs" if "differs" in verdicts else "inconclusive"
    parts = [f"{lab}: differs ({d.reason})" for lab, d in zip(labels, decisions, strict=True)
             if d.verdict == "differs"]
    others = [lab for lab, d in zip(labels, decisions, strict=True)
              if d.verdict not in ("reproduced", "differs")]
    if others:
        parts.append(f"not decided at {len(others)} of {len(labels)} instances "
                     f"({', '.join(others)})")
    return Decision(worst, "; ".join(parts), f"every instance: {tests}")
