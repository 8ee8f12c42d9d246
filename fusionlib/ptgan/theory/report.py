"""Summaries of the PTGAN theory checks for the chapter (``notebooks/ptgan_theory.md``).

Each function turns the rows of the theory cells (:mod:`fusionlib.ptgan.theory.cells`) into
what a claim needs: how many checked instances an inequality held at, and its largest ratio
(the slack is ``1 - ratio``); an empirical decay exponent with its standard error; the
per-instance decisions of a statistical check.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import Decision, Estimate, categorical, direction
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.evidence import all_instances

__all__ = ["ratio_check", "held_decision", "exponent_estimate", "instance_directions",
           "layer_columns"]


def layer_columns(frame: pd.DataFrame, prefix: str) -> list[str]:
    """The per-layer columns ``<prefix>1``, ``<prefix>2``, ... present in ``frame``."""
    cols = [c for c in frame.columns if c.startswith(prefix) and c[len(prefix):].isdigit()]
    return sorted(cols, key=lambda c: int(c[len(prefix):]))


def ratio_check(frame: pd.DataFrame, columns: Sequence[str], *, limit: float = 1.0,
                tol: float = 1e-9) -> dict:
    """Instances (rows x columns with a value) and how many have ``ratio <= limit``.

    Returns ``instances``, ``held``, ``max_ratio`` and ``min_slack = limit - max_ratio``."""
    values = frame[list(columns)].to_numpy(dtype=float).ravel()
    values = values[~np.isnan(values)]
    if not len(values):
        raise InvalidInputError(f"no values in columns {list(columns)}")
    held = int((values <= limit * (1 + tol)).sum())
    mx = float(values.max())
    return {"instances": int(len(values)), "held": held, "max_ratio": mx,
            "min_slack": float(limit - mx)}


def held_decision(check: dict, what: str) -> Decision:
    """Reproduced when the inequality held at every instance, else differs (a counterexample
    is a resolved difference: each instance is computed exactly on its samples)."""
    ok = check["held"] == check["instances"]
    return categorical(ok, reason=f"{what}: violated at {check['instances'] - check['held']} "
                       f"of {check['instances']} instances (largest ratio "
                       f"{check['max_ratio']:.4g})")


def exponent_estimate(x, y) -> Estimate:
    """The least-squares slope of ``log y`` on ``log x`` over every point (all repetitions),
    with its regression standard error and ``n - 2`` degrees of freedom."""
    from scipy import stats

    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if len(lx) < 3 or not (np.isfinite(lx).all() and np.isfinite(ly).all()):
        raise InvalidInputError("an exponent needs at least 3 positive finite points")
    res = stats.linregress(lx, ly)
    return Estimate(float(res.slope), float(res.stderr), int(len(lx)), float(len(lx) - 2))


def instance_directions(values: Sequence[float], ses: Sequence[float], labels: Sequence[str],
                        expect: str) -> Decision:
    """One decision for "the sign is ``expect`` at every instance" (each instance a value with
    its standard error, decided by :func:`~fusionlib.compendium.verdicts.direction`)."""
    decisions = [direction(Estimate(float(v), float(s)), expect)
                 for v, s in zip(values, ses, strict=True)]
    return all_instances(decisions, list(labels))
