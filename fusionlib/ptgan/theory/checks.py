"""The decision rules of the PTGAN theory claims, one place for the chapter and the planted
faults (:mod:`fusionlib.ptgan.theory.planted`).

Each rule turns computed numbers into a :class:`~fusionlib.compendium.verdicts.Decision` with
the verdict module's conventions, and says which way its estimates lean:

* :func:`bracket_decision` -- an upper bound whose left side (or an unknown on its right, such
  as ``d_D``) is only known between a lower and an upper value: *certified* (reproduced) when
  the upper value stays below the bound at every instance, *refuted* (differs) when a lower
  value exceeds it, inconclusive in between (an optimiser's value alone never certifies an
  upper bound).
* :func:`rate_upper_decision` -- a rate that an upper bound states (``error = O(n^s)``): one
  sided, reproduced when the slope is below ``s + margin`` (decays at least that fast), differs
  when it is resolved above (a slower decay), via :func:`~fusionlib.compendium.verdicts.direction`.
* :func:`rate_bracket_decision` -- the same with the error bracketed: the upper value's slope
  certifies, the lower value's slope refutes.
* :func:`construction_rate_decision` -- a rate for an infimum shown by a construction
  (Proposition 4): the construction bounds the infimum from above, so a fast enough decay
  certifies and a slow one is inconclusive, never "differs".
* :func:`lower_bound_decision` -- a lower bound with a *lower* estimate of its left side
  (Proposition 2): every instance decided by the one-sided interval of ``estimate / bound - 1``.
* :func:`witness_decision` -- Proposition 1's lower bound attained: the witness's value over the
  exact W1 of the two laws, against 1.
* :func:`runs_decision` -- a sign at every instance (an iteration, a setting), each decided
  across independent runs (mean and its standard error over the runs, t), not from a
  within-run standard error; an instance counts as resolved the other way only at the
  Bonferroni level over the instances (a family of many instances otherwise turns one chance
  resolution into "differs").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from fusionlib.compendium.verdicts import LEVEL, Decision, Estimate, categorical, compare, direction
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.evidence import all_instances

__all__ = ["bracket_decision", "rate_upper_decision", "rate_bracket_decision",
           "construction_rate_decision", "lower_bound_decision", "witness_decision",
           "held_all", "signs_decision", "runs_decision", "remark3_condition_decision",
           "EARLY_SHARE", "with_context"]

#: Remark 3's "early training course": the checks in the first quarter of a run's iterations
#: (a share, so that it means the same at every scale; a parameter of
#: :func:`remark3_condition_decision`).
EARLY_SHARE = 0.25


def _arr(values) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64).ravel()
    a = a[~np.isnan(a)]
    if not len(a):
        raise InvalidInputError("no values to decide on")
    return a


def bracket_decision(ratio_upper, ratio_lower, what: str, *, tol: float = 1e-9) -> Decision:
    """An upper bound ``LHS <= bound`` checked with ``LHS`` known only between two values.

    ``ratio_upper``: the upper value of ``LHS`` over the bound at every instance (a certified
    value); ``ratio_lower``: the lower value over the bound (a network of the class, an
    optimiser's best). Reproduced when every ``ratio_upper <= 1`` (certified), differs when some
    ``ratio_lower > 1`` (a counterexample), else inconclusive."""
    hi, lo = _arr(ratio_upper), _arr(ratio_lower)
    test = ("bracket: certified when the upper value is below the bound at every instance, "
            "refuted when a lower value is above it")
    if (hi <= 1 + tol).all():
        return Decision("reproduced", "", f"{test} (largest upper ratio {hi.max():.3g})")
    if (lo > 1 + tol).any():
        return Decision("differs", f"{what}: a lower value exceeds the bound at "
                        f"{int((lo > 1 + tol).sum())} of {len(lo)} instances (largest ratio "
                        f"{lo.max():.3g}): a counterexample", test)
    return Decision("inconclusive", f"{what}: the certified upper value exceeds the bound at "
                    f"{int((hi > 1 + tol).sum())} of {len(hi)} instances (largest ratio "
                    f"{hi.max():.3g}) while every lower value stays below it (largest "
                    f"{lo.max():.3g}): the quantity lies in between, so the check cannot decide",
                    test)


def held_all(ratios, what: str, *, tol: float = 1e-9) -> Decision:
    """An inequality evaluated exactly at every instance (``ratio = LHS / bound``): reproduced
    when it holds everywhere, differs at a counterexample."""
    r = _arr(ratios)
    bad = int((r > 1 + tol).sum())
    return categorical(bad == 0, reason=f"{what}: violated at {bad} of {len(r)} instances "
                       f"(largest ratio {r.max():.4g})")


def _shifted(slope: Estimate, threshold: float) -> Estimate:
    return Estimate(slope.value - threshold, slope.se, slope.n, slope.df)


def rate_upper_decision(slope: Estimate, stated: float, margin: float, what: str) -> Decision:
    """``error = O(n^stated)`` (an upper bound): one-sided, is the slope below
    ``stated + margin``? (:func:`~fusionlib.compendium.verdicts.direction` on
    ``slope - stated - margin``, expected ``< 0``.)"""
    d = direction(_shifted(slope, stated + margin), "<0")
    test = f"one-sided: slope <= {stated:g} + {margin:g} ({d.test})"
    if d.verdict == "differs":
        return Decision("differs", f"{what}: slope {slope.value:.3g} ± {slope.se or 0:.2g} "
                        f"decays more slowly than n^({stated:g}) (above {stated + margin:g})",
                        test, d.gap, d.low, d.high)
    if d.verdict == "inconclusive":
        return Decision("inconclusive", f"{what}: slope {slope.value:.3g}: {d.reason}", test,
                        d.gap, d.low, d.high)
    return replace(d, test=test)


def rate_bracket_decision(slope_upper: Estimate, slope_lower: Estimate, stated: float,
                          margin: float, what: str) -> Decision:
    """An ``O(n^stated)`` rate with the error bracketed: the certified upper value's slope
    decides "reproduced" (the upper envelope decays fast enough), the lower value's slope decides
    "differs" (even the lower envelope decays too slowly); else inconclusive."""
    up = rate_upper_decision(slope_upper, stated, margin, f"{what} (upper value)")
    low = rate_upper_decision(slope_lower, stated, margin, f"{what} (lower value)")
    test = "rate of a bracketed error: the upper value's slope certifies, the lower's refutes"
    if up.verdict == "reproduced":
        return Decision("reproduced", "", f"{test}; {up.test}")
    if low.verdict == "differs":
        return Decision("differs", low.reason, f"{test}; {low.test}")
    return Decision("inconclusive", f"{what}: the certified upper value's slope "
                    f"{slope_upper.value:.3g} does not show the rate ({up.reason or up.verdict}); "
                    f"the lower value's slope is {slope_lower.value:.3g}", test)


def construction_rate_decision(slope: Estimate, stated: float, margin: float,
                               what: str) -> Decision:
    """A rate of an infimum shown by one construction (an upper value of the infimum):
    reproduced when the construction decays at least as fast as ``n^stated`` (one-sided);
    otherwise inconclusive (a better network may exist), never "differs"."""
    d = rate_upper_decision(slope, stated, margin, what)
    if d.verdict == "differs":
        return Decision("inconclusive", f"{d.reason}; this construction only bounds the "
                        "infimum from above, so a slower construction does not refute the rate",
                        d.test, d.gap, d.low, d.high)
    return d


def _family(estimates: Sequence[Estimate], expect: str, labels: Sequence[str], what: str,
            level: float = LEVEL, *, nonnegative: bool = False,
            notes: Sequence[str] = ()) -> Decision:
    """Every instance's sign by :func:`direction` at ``level``; an instance resolved the other
    way counts as "differs" only at the Bonferroni level ``1 - (1 - level) / n`` over the ``n``
    instances (else inconclusive, said in the reason). ``nonnegative``: resolved below 0 is
    never "differs" (see :func:`runs_decision`). ``notes`` are added to the reason."""
    strict = 1 - (1 - level) / len(estimates)
    decisions, downgraded, negative = [], [], []
    for est, lab in zip(estimates, labels, strict=True):
        d = direction(est, expect, level=level)
        if d.verdict == "differs":
            strong = direction(est, expect, level=strict).verdict == "differs"
            if nonnegative:
                d = replace(d, verdict="inconclusive", reason=f"{d.reason}; the quantity cannot "
                            "be below 0: noise, not evidence")
                if strong:
                    negative.append(lab)
            elif not strong:
                d = replace(d, verdict="inconclusive", reason=f"{d.reason}; not at the "
                            f"Bonferroni level {strict:.4g} over {len(estimates)} instances")
                downgraded.append(lab)
        decisions.append(d)
    d = all_instances(decisions, list(labels))
    extra = list(notes)
    if downgraded:
        extra.append(f"resolved the other way at {level:.0%} but not at the Bonferroni level "
                     f"{strict:.4g} over {len(estimates)} instances: {', '.join(downgraded)}")
    if negative:
        extra.append("below 0 even at the Bonferroni level (a non-negative quantity: check the "
                     f"estimator): {', '.join(negative)}")
    if extra:
        d = replace(d, reason="; ".join(p for p in (d.reason, *extra) if p))
    if d.verdict != "reproduced":
        return replace(d, reason=f"{what}: {d.reason}")
    return d


def lower_bound_decision(estimates, ses, bounds, labels: Sequence[str], what: str) -> Decision:
    """``LHS >= bound`` at every instance with a *lower* estimate of ``LHS`` (so a pass is
    conservative): each instance decided by the one-sided interval of ``estimate / bound - 1``
    (:func:`~fusionlib.compendium.verdicts.direction`, expected ``> 0``; "differs" only at the
    Bonferroni level over the instances)."""
    e, s, b = (np.asarray(v, dtype=np.float64) for v in (estimates, ses, bounds))
    if not (len(e) == len(s) == len(b) == len(labels)) or not len(e):
        raise InvalidInputError("lower_bound_decision needs one estimate, se, bound and label "
                                "per instance")
    return _family([Estimate(float(v / bb - 1), float(se / bb))
                    for v, se, bb in zip(e, s, b, strict=True)], ">0", labels, what)


def witness_decision(value: float, se: float, w1: float, tolerance: float = 0.01) -> Decision:
    """Proposition 1's lower bound attained: ``(E D(X) - E D(Y)) / W1 = 1`` within
    ``tolerance`` (:func:`~fusionlib.compendium.verdicts.compare`, TOST), ``W1`` exact."""
    if not w1 > 0:
        raise InvalidInputError(f"W1 must be > 0, got {w1}")
    return compare(1.0, Estimate(value / w1, se / w1), tolerance)


def signs_decision(values, ses, labels: Sequence[str], expect: str, what: str) -> Decision:
    """Every instance has the sign ``expect`` (each decided by
    :func:`~fusionlib.compendium.verdicts.direction` with its standard error; "differs" only at
    the Bonferroni level over the instances)."""
    return _family([Estimate(float(v), float(s)) for v, s in zip(values, ses, strict=True)],
                   expect, labels, what)


def runs_decision(frame, value: str, instance: Sequence[str] | str, run: str, expect: str,
                  what: str, *, level: float = LEVEL, nonnegative: bool = False) -> Decision:
    """Every instance of ``frame`` (rows grouped by the ``instance`` columns) has the sign
    ``expect``, decided across its independent runs (one row per run, the ``run`` column).

    Each instance: :meth:`Estimate.from_sample` of its runs' ``value`` (mean, standard error over
    the runs, t with n - 1 degrees of freedom), then :func:`direction` at ``level``. A single
    run gives no spread (inconclusive). Resolved on the expected side at ``level`` counts as
    reproduced (every instance must be: an intersection-union test needs no correction);
    resolved on the *other* side counts as differs only when it is so at the Bonferroni level
    ``1 - (1 - level) / n_instances`` too, else inconclusive with the reason. ``nonnegative``
    (with ``expect=">0"``): the estimand cannot be below 0 (a squared norm), so an estimate
    resolved below 0 is noise, never "differs" (inconclusive); a t interval is no guide at the
    edge of the range either (unbiased estimates of 0 are skewed, bounded below).

    Why not a within-run standard error: an estimator's own standard error can fail where the
    estimand sits at the edge of its range (the jackknife of an unbiased ``||E d||^2`` near 0,
    see :func:`fusionlib.ptgan.theory.variance.unbiased_sq_norm`), while independent runs give an
    honest spread of whatever each run estimates.
    """
    if nonnegative and expect != ">0":
        raise InvalidInputError("nonnegative needs expect='>0'")
    cols = [instance] if isinstance(instance, str) else list(instance)
    missing = [c for c in [*cols, run, value] if c not in frame.columns]
    if missing:
        raise InvalidInputError(f"{what}: columns {missing} missing; have {list(frame.columns)}")
    if frame[cols].isna().any().any():
        raise InvalidInputError(f"{what}: missing values in the instance columns {cols}")
    groups = list(frame.groupby(cols, sort=True))
    if not groups:
        raise InvalidInputError(f"{what}: no rows to decide on")
    estimates, labels, dropped = [], [], []
    for key, part in groups:
        if part[run].duplicated().any():
            raise InvalidInputError(f"{what}: run {part[run][part[run].duplicated()].iloc[0]} "
                                    f"appears twice at {key}; one row per run and instance")
        vals = part[value].to_numpy(dtype=float)
        finite = np.isfinite(vals)
        if not finite.all():
            dropped.append(f"{int((~finite).sum())} of {len(vals)} runs at {key}")
        estimates.append(Estimate.from_sample(vals[finite]))
        key = key if isinstance(key, tuple) else (key,)
        labels.append(", ".join(f"{c} {k}" for c, k in zip(cols, key, strict=True)))
    notes = ["non-finite values dropped: " + ", ".join(dropped)] if dropped else []
    return _family(estimates, expect, labels, what, level, nonnegative=nonnegative, notes=notes)


def remark3_condition_decision(frame, *, early_share: float = EARLY_SHARE) -> Decision:
    """Remark 3: "the divergences at alpha = 1 are *generally* larger than the ones defined on
    alpha* ~ p_alpha*, e.g., during early training course or mode collapse".

    ``frame``: one row per (``rep``, ``iteration``) check with ``log_ratio`` = log of the tempered
    distance over the one at alpha = 1. Two parts, both across the independent runs
    (:func:`runs_decision`), both needed:

    * *generally*: each run's median ``log_ratio`` over all its checks is below 0 (the tempered
      distance the smaller at more than half of the run's checks; a mean would let large early
      ratios outvote most of the run);
    * *during early training*: at every check in the first ``early_share`` of the iterations
      (``iteration <= early_share * last iteration``) the mean over the runs is below 0.

    A reading "at every check of the run, late ones included" is stricter than the remark (late
    in a run that has converged the two distances meet, and a ratio near 1 is decided by noise);
    the chapter prints it beside this rule.
    """
    if not 0 < early_share <= 1:
        raise InvalidInputError(f"early_share must be in (0, 1], got {early_share}")
    need = {"rep", "iteration", "log_ratio"}
    if not need <= set(frame.columns):
        raise InvalidInputError(f"Remark 3 condition: columns {sorted(need)} needed, have "
                                f"{list(frame.columns)}")
    if not np.isfinite(frame["log_ratio"].to_numpy(dtype=float)).all():
        raise InvalidInputError("Remark 3 condition: non-finite log ratios (a distance of 0 or "
                                "a failed check); drop them and say how many")
    per_run = frame.groupby("rep", as_index=False)["log_ratio"].median()
    per_run["span"] = "whole run"
    general = runs_decision(per_run, "log_ratio", "span", "rep", "<0", "generally")
    last = frame["iteration"].max()
    early = runs_decision(frame[frame["iteration"] <= early_share * last], "log_ratio",
                          "iteration", "rep", "<0", f"early training (first {early_share:.0%})")
    return all_instances([general, early], ["generally", "early training"])


def with_context(decision: Decision, context: str) -> Decision:
    """The decision with ``context`` (hypothesis, instance, planted fault) added to its reason
    (the claims table keeps a computed decision's own reason)."""
    return replace(decision, reason="; ".join(p for p in (decision.reason, context) if p))
