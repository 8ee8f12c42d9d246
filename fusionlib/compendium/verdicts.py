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
side, inconclusive when it straddles zero). Categorical claims (a count, a yes/no) use
:func:`categorical`. Intervals use Student's t with Welch-Satterthwaite degrees of freedom when
both sides give their repetitions, else the normal quantile.

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
    "as_estimate", "compare", "direction", "categorical", "fixed", "smoke_verdict",
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
#: confidence level of the intervals (two-sided 95 % for "differs", TOST at 5 % for equivalence)
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
        repetition of a stochastic run).
    n:
        Repetitions behind ``value`` (``None`` when not a mean of repetitions).
    df:
        Degrees of freedom of ``se`` (``n - 1`` for a sample sd; ``None``: use the normal
        quantile, e.g. for a bootstrap).
    """

    value: float
    se: float | None = 0.0
    n: int | None = None
    df: float | None = None

    def __post_init__(self) -> None:
        if self.se is not None and (not _finite(self.se) or self.se < 0):
            raise InvalidInputError(
                f"Estimate.se must be a finite number >= 0 or None (unknown), got {self.se!r}")
        if self.n is not None and (isinstance(self.n, bool) or int(self.n) != self.n
                                   or self.n < 1):
            raise InvalidInputError(f"Estimate.n must be an integer >= 1 or None, got {self.n!r}")
        if self.df is not None and (not _finite(self.df) or self.df <= 0):
            raise InvalidInputError(f"Estimate.df must be a number > 0 or None, got {self.df!r}")

    @property
    def defined(self) -> bool:
        """False when the value is missing, NaN or infinite."""
        return _finite(self.value)

    @classmethod
    def exact(cls, value: float) -> Estimate:
        """A value without sampling uncertainty."""
        return cls(float(value) if _finite(value) else float("nan"), 0.0)

    @classmethod
    def from_sample(cls, values: Sequence[float] | np.ndarray) -> Estimate:
        """Mean of repetitions with its standard error ``sd / sqrt(n)`` (``ddof=1``).

        One repetition gives an unknown spread (``se=None``); NaN repetitions are an error
        (drop them first and say so)."""
        x = np.asarray(values, dtype=float).ravel()
        if x.size == 0:
            return cls(float("nan"), None, None)
        if not np.isfinite(x).all():
            raise InvalidInputError(
                f"from_sample got non-finite repetitions {x.tolist()}; drop them and report "
                "how many were dropped")
        if x.size == 1:
            return cls(float(x[0]), None, 1)
        return cls(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), int(x.size),
                   float(x.size - 1))

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
        """A point estimate with the sd of its bootstrap replicates as standard error."""
        r = np.asarray(replicates, dtype=float).ravel()
        r = r[np.isfinite(r)]
        if r.size < 2:
            return cls(float(value), None, None)
        return cls(float(value), float(r.std(ddof=1)), None, None)

    def text(self, digits: int = 4) -> str:
        """``"0.123 ± 0.004 (n=10)"`` for display."""
        if not self.defined:
            return "–"
        out = f"{self.value:.{digits}g}"
        if self.se is None:
            out += " (spread unknown)"
        elif self.se > 0:
            out += f" ± {self.se:.2g}"
        if self.n is not None:
            out += f" (n={self.n})"
        return out


def as_estimate(value: object) -> Estimate | None:
    """An :class:`Estimate` from a number (exact), an Estimate, or ``None`` for text values."""
    if isinstance(value, Estimate):
        return value
    if value is None:
        return Estimate(float("nan"))
    if isinstance(value, (bool, str)):
        return None
    try:
        return Estimate.exact(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Decision:
    """A verdict with the reason a reader sees and the test that gave it."""

    verdict: str
    reason: str
    test: str
    gap: float | None = None
    low: float | None = None
    high: float | None = None


def _quantile(p: float, df: float | None) -> float:
    from scipy import stats

    return float(stats.norm.ppf(p) if df is None else stats.t.ppf(p, df))


def _welch_df(a: Estimate, b: Estimate) -> float | None:
    """Welch-Satterthwaite degrees of freedom of ``a - b`` (None: use the normal quantile)."""
    parts = [(e.se, e.df) for e in (a, b) if e.se]
    if not parts:
        return None
    if any(df is None for _, df in parts):
        return None
    num = sum(se**2 for se, _ in parts) ** 2
    den = sum(se**4 / df for se, df in parts)
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


def compare(paper: Estimate | float, ours: Estimate | float, tolerance: float, *,
            not_comparable: str | None = None, not_run: str | None = None, why: str = "",
            level: float = LEVEL) -> Decision:
    """Is ``ours`` consistent with ``paper`` within ``tolerance``? (See the module text.)

    ``why`` names a known cause of a difference (scale, data, an ambiguity of the paper); it is
    added to the reason of a "differs" or "inconclusive" verdict.
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
    if o.se is None or p.se is None:
        who = "ours" if o.se is None else "the paper's"
        return Decision("inconclusive", f"gap {gap:+.3g} with tolerance {tol:g}, but the spread "
                        f"of {who} is unknown (one repetition){extra}",
                        "no interval: spread unknown", gap)
    s = math.hypot(o.se, p.se)
    if s == 0:
        ok = abs(gap) <= tol
        return Decision("reproduced" if ok else "differs",
                        "" if ok else f"|ours - paper| = {abs(gap):.3g} > tolerance {tol:g}"
                        f"{extra}", "exact values: |gap| <= tolerance", gap, gap, gap)
    df = _welch_df(o, p)
    q1, q2 = _quantile(level, df), _quantile((1 + level) / 2, df)
    lo1, hi1 = gap - q1 * s, gap + q1 * s
    lo2, hi2 = gap - q2 * s, gap + q2 * s
    dft = "normal" if df is None else f"t, df {df:.1f}"
    if -tol <= lo1 and hi1 <= tol:
        return Decision("reproduced", "", f"TOST at {1 - level:.0%}: {2 * level - 1:.0%} interval "
                        f"of the gap [{lo1:.3g}, {hi1:.3g}] within ±{tol:g} ({dft})",
                        gap, lo1, hi1)
    if lo2 > tol or hi2 < -tol:
        return Decision("differs", f"gap {gap:+.3g}, {level:.0%} interval [{lo2:.3g}, "
                        f"{hi2:.3g}] outside ±{tol:g}{extra}",
                        f"{level:.0%} interval of the gap outside the tolerance ({dft})",
                        gap, lo2, hi2)
    return Decision("inconclusive", f"gap {gap:+.3g}, {level:.0%} interval [{lo2:.3g}, "
                    f"{hi2:.3g}] overlaps ±{tol:g}: too uncertain at this scale to decide{extra}",
                    f"{level:.0%} interval of the gap overlaps the tolerance ({dft})",
                    gap, lo2, hi2)


def direction(ours: Estimate | float, expect: str, *, not_comparable: str | None = None,
              not_run: str | None = None, why: str = "", level: float = LEVEL) -> Decision:
    """Does our estimate of a difference have the sign the paper reports?

    ``expect`` is ``"<0"`` or ``">0"``. Reproduced when the one-sided ``level`` interval lies on
    the expected side of zero, differs when it lies on the other side, inconclusive otherwise
    (and when the spread is unknown). An exact value decides by its sign (zero differs).
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
    if o.se is None:
        return Decision("inconclusive", f"estimate {v:+.3g} (expected {expect}) from one "
                        f"repetition: spread unknown{extra}", "no interval: spread unknown", v)
    if o.se == 0:
        ok = sign * v > 0
        return Decision("reproduced" if ok else "differs",
                        "" if ok else f"estimate {v:+.3g}, expected {expect}{extra}",
                        "exact value: sign", v, v, v)
    q = _quantile(level, o.df)
    lo, hi = v - q * o.se, v + q * o.se
    test = f"one-sided {level:.0%} bound ({'normal' if o.df is None else f't, df {o.df:.0f}'})"
    if (sign > 0 and lo > 0) or (sign < 0 and hi < 0):
        return Decision("reproduced", "", f"{test} on the expected side ({expect}): "
                        f"[{lo:.3g}, {hi:.3g}]", v, lo, hi)
    if (sign > 0 and hi < 0) or (sign < 0 and lo > 0):
        return Decision("differs", f"estimate {v:+.3g}, interval [{lo:.3g}, {hi:.3g}] on the "
                        f"other side of 0 (expected {expect}){extra}", test, v, lo, hi)
    return Decision("inconclusive", f"estimate {v:+.3g}, interval [{lo:.3g}, {hi:.3g}] "
                    f"includes 0 (expected {expect}): too uncertain at this scale{extra}",
                    test, v, lo, hi)


def categorical(ok: bool, *, reason: str = "", n: int | None = None,
                n_needed: int | None = None, not_comparable: str | None = None,
                not_run: str | None = None) -> Decision:
    """A yes/no claim (a category, a count, a structure): ``ok`` decides.

    A failed check with fewer observations ``n`` than ``n_needed`` is inconclusive, not a
    difference. ``reason`` explains a failure (required when ``ok`` is false)."""
    early = _pre(not_comparable, not_run)
    if early is not None:
        return early
    if not isinstance(ok, (bool, np.bool_)):
        raise InvalidInputError(f"categorical: ok must be a bool, got {ok!r}")
    if ok:
        return Decision("reproduced", "", "exact check")
    if not reason.strip():
        raise InvalidInputError("categorical: a failed check needs a reason")
    if n is not None and n_needed is not None and n < n_needed:
        return Decision("inconclusive", f"{reason} (only {n} of the {n_needed} observations "
                        "needed to decide)", "exact check, too few observations")
    return Decision("differs", reason, "exact check")


def fixed(verdict: str, reason: str = "", test: str = "stated") -> Decision:
    """A verdict given by the caller (validated): for claims decided by their own logic."""
    if verdict not in VERDICTS:
        raise InvalidInputError(f"verdict {verdict!r} unknown; allowed: {', '.join(VERDICTS)}")
    if verdict != "reproduced" and not reason.strip():
        raise InvalidInputError(f"a '{verdict}' verdict needs a reason (scale, data, ambiguity)")
    return Decision(verdict, reason, test)


def smoke_verdict(decision: Decision, kind: str) -> Decision:
    """At smoke scale numbers carry no evidence: results, theory checks and extensions whose
    rule gave a verdict become "not comparable" (settings, exact echoes, stay as they are)."""
    if kind == "setting" or decision.verdict in ("not run", "not comparable"):
        return decision
    return Decision("not comparable", f"smoke scale: every code path runs once, numbers carry "
                    f"no evidence (the rule gave '{decision.verdict}')", decision.test,
                    decision.gap, decision.low, decision.high)
