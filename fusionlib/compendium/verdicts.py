"""Verdicts as evidence: the one place that decides whether a claim of a paper holds here.

A claim compares the paper's value with ours. Both are :class:`Estimate` objects: a value with
its standard error (``se``; 0 for an exact value such as a setting, ``None`` when the spread is
unknown, e.g. one repetition) and the number of repetitions behind it. Five verdicts:

``reproduced``
    consistent with the paper within the tolerance: the two one-sided tests (TOST) at level
    5 % put the 90 % interval of the gap ``ours - paper`` inside ``[-tolerance, tolerance]``
    (for exact values: ``|gap| <= tolerance``).
``differs``
    the gap exceeds the tolerance *and* the uncertainties resolve it: the 95 % interval of the
    gap lies wholly outside ``[-tolerance, tolerance]``.
``inconclusive``
    neither: the uncertainty at this scale is too wide to decide (or unknown: one repetition).
``not comparable``
    the protocol at this scale changes the quantity itself (a run shorter than the metric's
    window, a selection with fewer candidates than it selects, a proxy metric, another
    normaliser); the reason names which. A reduced run never gives "differs" by being reduced.
``not run``
    nothing was computed (data absent, paper scale only); the reason says what it would take.

Directional claims ("PT+CP has the lower S_T") use :func:`direction`: a one-sided interval of
our estimate of the difference decides (reproduced on the paper's side, differs on the other
side, inconclusive when it straddles zero). Yes/no checks use :func:`categorical`; counts of
successes over repetitions ("all modes in k of n seeds") use :func:`binomial`, an exact
(Clopper-Pearson) interval of our success rate against the paper's rate, decided like
:func:`compare`.

**One level for "differs".** Every rule calls "differs" only when the two-sided ``LEVEL`` (95 %)
interval lies wholly on the other side of the tolerance (2.5 % in each tail): :func:`compare`,
:func:`direction` and :func:`binomial` alike. "Reproduced" is a one-sided test at
``1 - LEVEL`` (5 %): TOST's 90 % interval inside the tolerance, or the one-sided 95 % bound on
the paper's side of zero. A resolved difference thus needs more evidence than an agreement
within a tolerance the paper's context fixes: "differs" says the paper's number is not what
this code measures, the stronger statement.

**Degrees of freedom.** Intervals use Student's t. One side: its ``df``, else ``n - 1`` when it
gives its repetitions ``n``, else the normal quantile (a bootstrap, a published se). Two sides:
Welch-Satterthwaite when both give their df; when only one does (the other a bootstrap or a
published se without n), that side's df, which is never more than Welch's (conservative);
the normal quantile when neither does.

**No decision without evidence.** A standard error of 0 is an *exact* value only when it is
declared so (``Estimate(value, se=0.0, exact=True)``, :meth:`Estimate.exact`) or when no
repetitions are named (``n`` missing or 1: a setting, a published number, a closed form). Zero
spread from ``n >= 2`` repetitions (two identical forest accuracies) is not evidence of no
spread: it is an *unknown* spread (inconclusive, with that reason) unless the estimate gives the
``resolution`` of its measurement (e.g. ``1 / n_test`` for an accuracy); then the standard error
is taken as half the resolution, with ``n - 1`` degrees of freedom. Half the resolution is the
conservative choice: values that all round to the same number can spread by up to the
resolution (an sd of at most half of it), and identical repetitions are no evidence that the
rounding errors average out, so no ``1 / sqrt(n)`` is applied (a uniform rounding error would
give ``resolution / sqrt(12)``, less than a third of it). A bootstrap whose replicates all
agree likewise gives an unknown spread.

**Wide margins.** A tolerance at least as large as the paper's value itself (``tolerance >=
|paper|``) turns "reproduced" into "ours <= paper + tolerance" (with a non-negative quantity,
nothing below the paper can fail): :func:`compare` says so in the reason.

Claims also have a *kind*: ``result`` (a number the paper measured), ``setting`` (a
hyperparameter or architecture echoed back), ``theory`` (a statement of a proposition or theorem
checked on instances), ``implementation`` (an identity of our code on a hand instance, or an
echo of an assumption: it shows the code does what the paper writes, not that the paper's claim
holds) or ``extension`` (ours, not the paper's). Only results and theory checks count toward how
much of a paper is reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fusionlib.errors import InvalidInputError

__all__ = [
    "VERDICTS", "DECIDED", "KINDS", "COUNTED_KINDS", "LEVEL", "Estimate", "Decision",
    "as_estimate", "compare", "direction", "categorical", "binomial", "fixed", "smoke_verdict",
    "across_readings",
]

#: the five verdicts, in the order tables show them
VERDICTS: tuple[str, ...] = ("reproduced", "differs", "inconclusive", "not comparable",
                             "not run")
#: verdicts that resolve a question either way
DECIDED: tuple[str, ...] = ("reproduced", "differs")
#: what a claim checks: a result the paper measured, a setting it states, a theory check, an
#: implementation identity (our code equals a formula on a hand instance: shown and tested, never
#: counted), or an extension of ours
KINDS: tuple[str, ...] = ("result", "setting", "theory", "implementation", "extension")
#: kinds that count toward "how much of the paper is reproduced"
COUNTED_KINDS: tuple[str, ...] = ("result", "theory")
#: confidence level of the intervals: "differs" needs the two-sided 95 % interval outside the
#: tolerance (every rule: compare, direction, binomial); "reproduced" is a one-sided test at
#: 1 - LEVEL = 5 % (TOST's 90 % interval inside the tolerance, or a one-sided 95 % bound)
LEVEL: float = 0.95


def _finite(value: object) -> bool:
    if value is None or isinstance(value, (bool, str)):
        return False
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Estimate:
    """A number with its uncertainty.

    Parameters
    ----------
    value:
        The estimate (a mean over repetitions, a bootstrap point estimate, a published number).
    se:
        Standard error of ``value``: 0 for an exact value (a setting, a deterministic
        computation, a published number without spread), ``None`` when unknown (one
        repetition of a stochastic run). A 0 from ``n >= 2`` repetitions is *not* exact unless
        declared (``exact=True``): it is an unknown spread, or half the ``resolution``.
    n:
        Repetitions behind ``value`` (``None`` when not a mean of repetitions).
    df:
        Degrees of freedom of ``se`` (``None``: ``n - 1`` when ``n`` is given, else the normal
        quantile, e.g. for a bootstrap).
    resolution:
        The smallest step of one measurement (``1 / n_test`` for an accuracy on ``n_test``
        rows); used only when ``n >= 2`` repetitions give zero spread (see the module text).
    exact:
        Declares the value exact (no sampling uncertainty) even with ``n >= 2`` repetitions
        (a deterministic computation repeated); needs ``se == 0``.
        ``Estimate.exact(value)`` (on the class) still builds a declared exact value.
    """

    value: float
    se: float | None = 0.0
    n: int | None = None
    df: float | None = None
    resolution: float | None = None
    exact: bool = False

    def __post_init__(self) -> None:
        if self.se is not None and (not _finite(self.se) or self.se < 0):
            raise InvalidInputError(
                f"Estimate.se must be a finite number >= 0 or None (unknown), got {self.se!r}")
        if self.n is not None and (isinstance(self.n, bool) or int(self.n) != self.n
                                   or self.n < 1):
            raise InvalidInputError(f"Estimate.n must be an integer >= 1 or None, got {self.n!r}")
        if self.df is not None and (not _finite(self.df) or self.df <= 0):
            raise InvalidInputError(f"Estimate.df must be a number > 0 or None, got {self.df!r}")
        if self.resolution is not None and (not _finite(self.resolution)
                                            or self.resolution <= 0):
            raise InvalidInputError(
                f"Estimate.resolution must be a number > 0 or None, got {self.resolution!r}")
        if not isinstance(self.exact, (bool, np.bool_)):
            raise InvalidInputError(f"Estimate.exact must be True or False, got {self.exact!r}")
        if self.exact and self.se != 0:
            raise InvalidInputError(
                f"Estimate(exact=True) declares a value without spread: se must be 0, got "
                f"{self.se!r}")

    @property
    def defined(self) -> bool:
        """False when the value is missing, NaN or infinite."""
        return _finite(self.value)

    @property
    def zero_spread_of_repetitions(self) -> bool:
        """True when ``se == 0`` comes from ``n >= 2`` repetitions and is not declared exact."""
        return self.se == 0 and not self.exact and self.n is not None and self.n >= 2

    def spread(self) -> tuple[float | None, float | None, str]:
        """``(se, df, note)`` as the rules use them.

        ``se`` is ``None`` when the spread is unknown (``note`` says why), 0 for an exact
        value; zero spread from ``n >= 2`` repetitions is unknown, or half the ``resolution``
        when one is given. ``df`` is ``df``, else ``n - 1``, else ``None`` (normal quantile).
        """
        df = self.df if self.df is not None else (
            float(self.n - 1) if self.n is not None and self.n >= 2 else None)
        if self.se is None:
            return None, df, "one repetition"
        if self.zero_spread_of_repetitions:
            if self.resolution is None:
                return None, df, (f"zero spread from {self.n} repetitions is not an exact "
                                  "value (declare exact=True for a deterministic computation, "
                                  "or give the measurement's resolution)")
            return (self.resolution / 2, df,
                    f"zero spread from {self.n} repetitions: se = resolution / 2 = "
                    f"{self.resolution / 2:.3g}")
        return float(self.se), df, ""

    @classmethod
    def _exact(cls, value: float) -> Estimate:
        """A value without sampling uncertainty (declared exact)."""
        return cls(float(value) if _finite(value) else float("nan"), 0.0, exact=True)

    @classmethod
    def from_sample(cls, values: Sequence[float] | np.ndarray, *,
                    resolution: float | None = None) -> Estimate:
        """Mean of repetitions with its standard error ``sd / sqrt(n)`` (``ddof=1``).

        One repetition gives an unknown spread (``se=None``); NaN repetitions are an error
        (drop them first and say so). ``resolution`` (the step of one measurement) is kept for
        the case that every repetition gives the same value."""
        x = np.asarray(values, dtype=float).ravel()
        if x.size == 0:
            return cls(float("nan"), None, None, resolution=resolution)
        if not np.isfinite(x).all():
            raise InvalidInputError(
                f"from_sample got non-finite repetitions {x.tolist()}; drop them and report "
                "how many were dropped")
        if x.size == 1:
            return cls(float(x[0]), None, 1, resolution=resolution)
        return cls(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), int(x.size),
                   float(x.size - 1), resolution=resolution)

    @classmethod
    def from_mean_sd(cls, mean: float, sd: float | None, n: int | None) -> Estimate:
        """A published (or our) mean with the sd of one repetition and the number of them.

        ``sd`` missing (``None`` or NaN) gives an exact value (a paper without spread) when ``n``
        is also missing, else an unknown spread."""
        if sd is None or not _finite(sd):
            return cls(float(mean), 0.0 if n is None else None, n)
        if n is None:
            raise InvalidInputError("from_mean_sd: an sd needs the number of repetitions n")
        n = int(n)
        return cls(float(mean), float(sd) / math.sqrt(n), n, float(n - 1) if n > 1 else None)

    @classmethod
    def from_bootstrap(cls, value: float, replicates: Sequence[float] | np.ndarray) -> Estimate:
        """A point estimate with the sd of its bootstrap replicates as standard error.

        Replicates that all agree give an unknown spread (``se=None``), not an exact value: a
        resample of few repetitions that are equal cannot show their spread."""
        r = np.asarray(replicates, dtype=float).ravel()
        r = r[np.isfinite(r)]
        if r.size < 2:
            return cls(float(value), None, None)
        sd = float(r.std(ddof=1))
        return cls(float(value), sd if sd > 0 else None, None, None)

    def text(self, digits: int = 4) -> str:
        """``"0.123 ± 0.004 (n=10)"`` for display."""
        if not self.defined:
            return "–"
        out = f"{self.value:.{digits}g}"
        if self.se is None or self.zero_spread_of_repetitions:
            out += " (spread unknown)" if self.resolution is None or self.se is None else (
                f" ± {self.resolution / 2:.2g} (half the resolution)")
        elif self.se > 0:
            out += f" ± {self.se:.2g}"
        if self.n is not None:
            out += f" (n={self.n})"
        return out


class _ExactFactory:
    """``Estimate.exact``: the factory :meth:`Estimate._exact` on the class, the ``exact`` field
    on an instance (the instance's own attribute wins over this non-data descriptor)."""

    def __get__(self, obj: object, owner: type) -> object:
        if obj is None:
            return owner._exact  # type: ignore[attr-defined]
        return obj.__dict__["exact"]  # pragma: no cover - the instance attribute shadows us


Estimate.exact = _ExactFactory()  # type: ignore[assignment,method-assign]


def as_estimate(value: object) -> Estimate | None:
    """An :class:`Estimate` from a number (exact), an Estimate, or ``None`` for text values."""
    if isinstance(value, Estimate):
        return value
    if value is None:
        return Estimate(float("nan"))
    if isinstance(value, (bool, str)):
        return None
    try:
        return Estimate._exact(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Decision:
    """A verdict with the reason a reader sees and the test that gave it.

    ``stated`` is true for a verdict given by the caller (:func:`fixed`), not computed by a
    rule; the claims table flags it."""

    verdict: str
    reason: str
    test: str
    gap: float | None = None
    low: float | None = None
    high: float | None = None
    stated: bool = False


def _quantile(p: float, df: float | None) -> float:
    from scipy import stats

    return float(stats.norm.ppf(p) if df is None else stats.t.ppf(p, df))


def _welch_df(parts: Sequence[tuple[float, float | None]]) -> float | None:
    """Degrees of freedom of a difference from its sides' ``(se, df)`` (sides with se > 0).

    Welch-Satterthwaite when every side has a df; the smallest known df when only some do
    (a bootstrap or a published se without n on the other side: conservative, Welch's df is
    never below it); ``None`` (normal quantile) when none does."""
    parts = [(se, df) for se, df in parts if se]
    known = [df for _, df in parts if df is not None]
    if not known:
        return None
    if len(known) < len(parts):
        return float(min(known))
    num = sum(se**2 for se, _ in parts) ** 2
    den = sum(se**4 / df for se, df in parts)  # type: ignore[operator]
    return num / den if den > 0 else None


def _pre(not_comparable: str | None, not_run: str | None) -> Decision | None:
    if not_run is not None:
        if not str(not_run).strip():
            raise InvalidInputError("not_run needs a reason (what it would take to run it)")
        return Decision("not run", str(not_run), "not computed")
    if not_comparable is not None:
        if not str(not_comparable).strip():
            raise InvalidInputError("not_comparable needs a reason naming the reduction")
        return Decision("not comparable", str(not_comparable),
                        "protocol at this scale changes the quantity")
    return None


def _undefined(ours: Estimate, reason: str) -> Decision:
    return Decision("not run", reason or "our value is undefined (NaN) at this scale",
                    "not computed")


def _check_tolerance(tolerance: object) -> float:
    if isinstance(tolerance, (bool, str)) or not _finite(tolerance) or float(tolerance) < 0:
        raise InvalidInputError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    return float(tolerance)  # type: ignore[arg-type]


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def compare(paper: Estimate | float, ours: Estimate | float, tolerance: float, *,
            not_comparable: str | None = None, not_run: str | None = None, why: str = "",
            level: float = LEVEL) -> Decision:
    """Is ``ours`` consistent with ``paper`` within ``tolerance``? (See the module text.)

    ``why`` names a known cause of a difference (scale, data, an ambiguity of the paper); it is
    added to the reason of a "differs" or "inconclusive" verdict. When ``tolerance >= |paper|``
    the reason says that the claim is one-sided in effect.
    """
    tol = _check_tolerance(tolerance)
    early = _pre(not_comparable, not_run)
    if early is not None:
        return early
    p, o = as_estimate(paper), as_estimate(ours)
    if p is None or o is None:
        raise InvalidInputError("compare needs numbers or Estimates; use categorical() for text")
    if not o.defined:
        return _undefined(o, "")
    if not p.defined:
        raise InvalidInputError(f"the paper's value {paper!r} is not a finite number")
    gap = o.value - p.value
    extra = f"; {why}" if why else ""
    wide = (f"one-sided in effect: ours <= paper + margin, the margin exceeds the paper's value "
            f"(tolerance {tol:g} >= |{p.value:.3g}|)" if tol >= abs(p.value) else "")
    o_se, o_df, o_note = o.spread()
    p_se, p_df, p_note = p.spread()
    if o_se is None or p_se is None:
        who, note = ("ours", o_note) if o_se is None else ("the paper's", p_note)
        return Decision("inconclusive", _join(f"gap {gap:+.3g} with tolerance {tol:g}, but the "
                        f"spread of {who} is unknown ({note}){extra}", wide),
                        "no interval: spread unknown", gap)
    notes = _join(o_note, p_note)
    s = math.hypot(o_se, p_se)
    if s == 0:
        ok = abs(gap) <= tol
        return Decision("reproduced" if ok else "differs",
                        wide if ok else _join(f"|ours - paper| = {abs(gap):.3g} > tolerance "
                                              f"{tol:g}{extra}", wide),
                        "exact values: |gap| <= tolerance", gap, gap, gap)
    df = _welch_df([(o_se, o_df), (p_se, p_df)])
    q1, q2 = _quantile(level, df), _quantile((1 + level) / 2, df)
    lo1, hi1 = gap - q1 * s, gap + q1 * s
    lo2, hi2 = gap - q2 * s, gap + q2 * s
    dft = _join("normal" if df is None else f"t, df {df:.1f}", notes)
    if -tol <= lo1 and hi1 <= tol:
        return Decision("reproduced", wide, f"TOST at {1 - level:.0%}: {2 * level - 1:.0%} "
                        f"interval of the gap [{lo1:.3g}, {hi1:.3g}] within ±{tol:g} ({dft})",
                        gap, lo1, hi1)
    if lo2 > tol or hi2 < -tol:
        return Decision("differs", _join(f"gap {gap:+.3g}, {level:.0%} interval [{lo2:.3g}, "
                        f"{hi2:.3g}] outside ±{tol:g}{extra}", wide),
                        f"{level:.0%} interval of the gap outside the tolerance ({dft})",
                        gap, lo2, hi2)
    return Decision("inconclusive", _join(f"gap {gap:+.3g}, {level:.0%} interval [{lo2:.3g}, "
                    f"{hi2:.3g}] overlaps ±{tol:g}: too uncertain at this scale to decide{extra}",
                    wide), f"{level:.0%} interval of the gap overlaps the tolerance ({dft})",
                    gap, lo2, hi2)


def direction(ours: Estimate | float, expect: str, *, not_comparable: str | None = None,
              not_run: str | None = None, why: str = "", level: float = LEVEL) -> Decision:
    """Does our estimate of a difference have the sign the paper reports?

    ``expect`` is ``"<0"`` or ``">0"``. Reproduced when the one-sided ``level`` bound lies on
    the expected side of zero; differs when the two-sided ``level`` interval lies wholly on the
    other side (the level of "differs" of every rule); inconclusive otherwise (and when the
    spread is unknown). A declared exact value decides by its sign (zero differs).
    """
    if expect not in ("<0", ">0"):
        raise InvalidInputError(f"expect must be '<0' or '>0', got {expect!r}")
    early = _pre(not_comparable, not_run)
    if early is not None:
        return early
    o = as_estimate(ours)
    if o is None:
        raise InvalidInputError("direction needs a number or an Estimate")
    if not o.defined:
        return _undefined(o, "")
    sign = -1.0 if expect == "<0" else 1.0
    v = o.value
    extra = f"; {why}" if why else ""
    se, df, note = o.spread()
    if se is None:
        return Decision("inconclusive", f"estimate {v:+.3g} (expected {expect}): spread "
                        f"unknown ({note}){extra}", "no interval: spread unknown", v)
    if se == 0:
        ok = sign * v > 0
        return Decision("reproduced" if ok else "differs",
                        "" if ok else f"estimate {v:+.3g}, expected {expect}{extra}",
                        "exact value: sign", v, v, v)
    q1, q2 = _quantile(level, df), _quantile((1 + level) / 2, df)
    dft = _join("normal" if df is None else f"t, df {df:.0f}", note)
    lo, hi = v - q1 * se, v + q1 * se
    if (sign > 0 and lo > 0) or (sign < 0 and hi < 0):
        return Decision("reproduced", "", f"one-sided {level:.0%} bound ({dft}) on the "
                        f"expected side ({expect}): [{lo:.3g}, {hi:.3g}]", v, lo, hi)
    lo2, hi2 = v - q2 * se, v + q2 * se
    test = f"two-sided {level:.0%} interval ({dft})"
    if (sign > 0 and hi2 < 0) or (sign < 0 and lo2 > 0):
        return Decision("differs", f"estimate {v:+.3g}, {level:.0%} interval [{lo2:.3g}, "
                        f"{hi2:.3g}] on the other side of 0 (expected {expect}){extra}",
                        f"{test} on the other side", v, lo2, hi2)
    return Decision("inconclusive", f"estimate {v:+.3g}: the one-sided {level:.0%} bound "
                    f"({lo:.3g} to {hi:.3g}) is not on the expected side ({expect}) and the "
                    f"{level:.0%} interval [{lo2:.3g}, {hi2:.3g}] includes 0: too uncertain at "
                    f"this scale{extra}", f"{test} includes 0", v, lo2, hi2)


def categorical(ok: bool, *, reason: str = "", n: int | None = None,
                n_needed: int | None = None, not_comparable: str | None = None,
                not_run: str | None = None) -> Decision:
    """A yes/no claim decided exactly (a category, a structure, an identity on every instance):
    ``ok`` decides. ``reason`` explains a failure (required when ``ok`` is false).

    A count of successes over repetitions ("all modes in k of n seeds") is not a yes/no check:
    use :func:`binomial`, which decides a success and a failure by the same interval. Passing
    ``n``/``n_needed`` (the old, asymmetric rule: a success on fewer seeds than needed was
    reproduced, a failure inconclusive) is refused with that advice."""
    early = _pre(not_comparable, not_run)
    if early is not None:
        return early
    if n is not None or n_needed is not None:
        raise InvalidInputError(
            "categorical no longer decides counts over repetitions (n, n_needed): a success on "
            "fewer repetitions than the paper's was 'reproduced' and a failure 'inconclusive'. "
            "Use binomial(k, n, paper_rate, tolerance=...) with our number of successes k, or "
            "not_comparable='<why>' when the reduction itself produces the outcome")
    if not isinstance(ok, (bool, np.bool_)):
        raise InvalidInputError(f"categorical: ok must be a bool, got {ok!r}")
    if ok:
        return Decision("reproduced", "", "exact check")
    if not reason.strip():
        raise InvalidInputError("categorical: a failed check needs a reason")
    return Decision("differs", reason, "exact check")


def binomial(k: int, n: int, paper_rate: float, *, tolerance: float, reason: str = "",
             not_comparable: str | None = None, not_run: str | None = None,
             level: float = LEVEL) -> Decision:
    """``k`` successes in ``n`` repetitions against the paper's success rate ``paper_rate``.

    The exact (Clopper-Pearson) interval of our rate decides, as :func:`compare` does:
    reproduced when the ``2 * level - 1`` (90 %) interval lies within ``paper_rate ±
    tolerance``; differs when the ``level`` (95 %) interval lies wholly outside it; else
    inconclusive. Success and failure are decided by the same interval: on few repetitions
    both are usually inconclusive. ``not_comparable`` is for the caller to say that the
    reduction itself produces the outcome (a plain GAN covers no mode after a shortened run).
    ``reason`` names what the count is (added to a difference or an undecided verdict).
    """
    from scipy import stats

    tol = _check_tolerance(tolerance)
    early = _pre(not_comparable, not_run)
    if early is not None:
        return early
    for name, v in (("k", k), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InvalidInputError(f"binomial: {name} must be an integer, got {v!r}")
    if n < 1 or not 0 <= k <= n:
        raise InvalidInputError(f"binomial needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not _finite(paper_rate) or not 0 <= float(paper_rate) <= 1:
        raise InvalidInputError(f"binomial: paper_rate must be in [0, 1], got {paper_rate!r}")
    rate = float(paper_rate)
    res = stats.binomtest(int(k), int(n), rate)
    ci1 = res.proportion_ci(2 * level - 1, method="exact")
    ci2 = res.proportion_ci(level, method="exact")
    gap = k / n - rate
    eps = 1e-12  # the band is closed; keep a margin computed from a quantile on its edge in
    lo_band, hi_band = rate - tol - eps, rate + tol + eps
    extra = f"; {reason}" if reason else ""
    test = (f"exact binomial (Clopper-Pearson) interval of our rate, {k} of {n}, against "
            f"{rate:g} ± {tol:g}")
    if lo_band <= ci1.low and ci1.high <= hi_band:
        return Decision("reproduced", "", f"{test}: {2 * level - 1:.0%} interval "
                        f"[{ci1.low:.3g}, {ci1.high:.3g}] inside", gap, ci1.low, ci1.high)
    if ci2.low > hi_band or ci2.high < lo_band:
        return Decision("differs", f"{k} of {n}: {level:.0%} interval of our rate "
                        f"[{ci2.low:.3g}, {ci2.high:.3g}] outside {rate:g} ± {tol:g}{extra}",
                        f"{test}: {level:.0%} interval outside", gap, ci2.low, ci2.high)
    return Decision("inconclusive", f"{k} of {n}: {level:.0%} interval of our rate "
                    f"[{ci2.low:.3g}, {ci2.high:.3g}] overlaps {rate:g} ± {tol:g}: too few "
                    f"repetitions to decide{extra}", f"{test}: {level:.0%} interval overlaps",
                    gap, ci2.low, ci2.high)


def fixed(verdict: str, reason: str = "", test: str = "stated") -> Decision:
    """A verdict given by the caller (validated; flagged ``stated``): for claims decided by
    their own logic. Results and theory checks take only "not run" and "not comparable" this
    way (:func:`~fusionlib.compendium.claims.make_claim` refuses the rest)."""
    if verdict not in VERDICTS:
        raise InvalidInputError(f"verdict {verdict!r} unknown; allowed: {', '.join(VERDICTS)}")
    if verdict != "reproduced" and not reason.strip():
        raise InvalidInputError(f"a '{verdict}' verdict needs a reason (scale, data, ambiguity)")
    return Decision(verdict, reason, test, stated=True)


def across_readings(readings: Sequence[tuple[str, str]], *, wanted: int | None = None
                    ) -> Decision:
    """One verdict for a statement tested under each reading of a choice the paper leaves
    unstated (``readings``: ``(reading, verdict)`` pairs, our default first).

    The paper's number comes from one reading we cannot know, so the readings decide together
    and symmetrically: "differs" only when every reading differs, "reproduced" only when every
    one reproduces; when one reading reproduces and another differs the statement
    depends on the unstated choice ("inconclusive", naming both sides), and any other mix is
    "inconclusive" (a reading that could not decide might be the paper's). A
    reading that was not computed does not vote, but while any is missing the readings cannot
    agree: a "reproduced" or "differs" on part of them reads "not run" ("partly decided (k of
    n readings)"), since the missing one could be the paper's; ``wanted`` raises n above the
    readings given."""
    if not readings:
        raise InvalidInputError("across_readings needs at least one (reading, verdict) pair")
    bad = sorted({v for _, v in readings} - set(VERDICTS))
    if bad:
        raise InvalidInputError(f"unknown verdicts {bad}; allowed: {', '.join(VERDICTS)}")
    ran = [(r, v) for r, v in readings if v != "not run"]
    total = max(len(readings), wanted or 0)
    test = f"the verdicts under {total} readings of an unstated choice, taken together"
    if not ran:
        return Decision("not run", "no reading was computed", test)
    rep = [r for r, v in ran if v == "reproduced"]
    dif = [r for r, v in ran if v == "differs"]
    listing = "; ".join(f"{r}: {v}" for r, v in ran)
    part = (f" ({len(ran)} of {total} readings computed)" if len(ran) < total else "")
    if rep and dif:
        return Decision("inconclusive", f"depends on the unstated choice: reproduced under "
                        f"{', '.join(rep)}, differs under {', '.join(dif)}{part}", test)
    for agreed, name in ((dif, "differs"), (rep, "reproduced")):
        if agreed and len(agreed) == len(ran):
            if len(ran) < total:
                return Decision("not run", f"partly decided ({len(ran)} of {total} readings): "
                                f"{name} under every reading computed ({listing}), but "
                                f"{total - len(ran)} did not run and could be the paper's",
                                test)
            return Decision(name, f"{name} under every reading ({listing})", test)
    if all(v == "not comparable" for _, v in ran):
        return Decision("not comparable", f"no reading is comparable ({listing})", test)
    return Decision("inconclusive", f"the readings do not agree ({listing}){part}", test)


def smoke_verdict(decision: Decision, kind: str) -> Decision:
    """At smoke scale numbers carry no evidence: results, theory checks and extensions whose
    rule gave a verdict become "not comparable" (settings, exact echoes, stay as they are)."""
    if kind == "setting" or decision.verdict in ("not run", "not comparable"):
        return decision
    return Decision("not comparable", f"smoke scale: every code path runs once, numbers carry "
                    f"no evidence (the rule gave '{decision.verdict}')", decision.test,
                    decision.gap, decision.low, decision.high, decision.stated)
