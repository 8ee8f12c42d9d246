"""The reproduction scorecard: one row per claim of the papers.

Each experiment registers claims (the paper's value and ours, each with its uncertainty, the
scale, the claim's kind, the verdict and its reason); the scorecard page aggregates every
experiment's ``claims.csv``. The verdict is decided by :mod:`fusionlib.compendium.verdicts`
(the one place that decides); this module validates a claim and gives it its row.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from fusionlib.compendium.scales import validate_scale
from fusionlib.compendium.verdicts import (
    COUNTED_KINDS,
    DECIDED,
    KINDS,
    VERDICTS,
    Decision,
    Estimate,
    as_estimate,
    compare,
    direction,
    fixed,
    smoke_verdict,
)
from fusionlib.errors import InvalidInputError

__all__ = [
    "VERDICTS",
    "KINDS",
    "SEED_FILES",
    "PAPERS",
    "PAPER_ORDER",
    "CLAIM_COLUMNS",
    "Claim",
    "make_claim",
    "claims_frame",
    "read_claims",
    "stated_claims",
    "verdict_counts",
]

#: seed files of the three source documents, in the book's one order of the papers
SEED_FILES: dict[str, str] = {
    "000": "FusionGAN technical appendix",
    "001": "PTGAN (parallel tempering GAN)",
    "002": "Fairness testing from separate datasets",
}
#: the papers' short names, used in titles, the sidebar and tables
PAPERS: dict[str, str] = {
    "000": "FusionGAN",
    "001": "PTGAN",
    "002": "Fairness testing from separate datasets",
}
PAPER_ORDER: tuple[str, ...] = ("000", "001", "002")


@dataclass(frozen=True)
class Claim:
    """One row of the claims table (all fields are plain strings for CSV).

    ``paper_se``/``ours_se`` are the standard errors used by the test (``0``: exact; empty:
    unknown or not numeric); ``paper_n``/``ours_n`` the repetitions behind each value; ``test``
    the rule that gave the verdict; ``stated`` is ``"True"`` when the verdict was given by the
    caller (``verdict=``, or a :func:`~fusionlib.compendium.verdicts.fixed` decision) rather
    than computed by a rule (``""`` in files written before the column existed).
    """

    claim_id: str
    seed_file: str
    kind: str
    where: str
    quantity: str
    paper: str
    paper_se: str
    paper_n: str
    ours: str
    ours_se: str
    ours_n: str
    tolerance: str
    verdict: str
    reason: str
    test: str
    stated: str
    scale: str
    experiment: str


CLAIM_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Claim))
#: the columns of claims files written before the ``stated`` column (still read)
LEGACY_CLAIM_COLUMNS: tuple[str, ...] = tuple(c for c in CLAIM_COLUMNS if c != "stated")
#: verdicts a result or theory claim may be given by its caller (statements about the protocol)
STATABLE_FOR_COUNTED: tuple[str, ...] = ("not run", "not comparable")


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    if hasattr(value, "item"):  # numpy scalar
        return _fmt(value.item())
    return str(value)


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _parts(value: object) -> tuple[str, str, str]:
    """(value, se, n) as text: an Estimate's parts, or a plain value with empty se/n."""
    if isinstance(value, Estimate):
        return (_fmt(value.value), "" if value.se is None else _fmt(float(value.se)),
                "" if value.n is None else str(int(value.n)))
    return _fmt(value), "", ""


def _is_number(value: object) -> bool:
    """A bare number (not a bool, not an Estimate, not text)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _decide(paper: object, ours: object, *, tolerance: float | None, verdict: str | None,
            decision: Decision | None, reason: str, not_run: str | None,
            not_comparable: str | None, why: str, expect: str | None, claim_id: str) -> Decision:
    if not_run is not None:
        return fixed("not run", str(not_run), "not computed")
    if not_comparable is not None:
        return fixed("not comparable", str(not_comparable),
                     "protocol at this scale changes the quantity")
    if decision is not None:
        return decision
    if verdict is not None:
        if verdict == "reproduced":
            o = as_estimate(ours)
            if o is not None and not o.defined and ours is not None:
                raise InvalidInputError(
                    f"claim {claim_id}: 'reproduced' with an undefined (NaN or infinite) value "
                    "of ours; register it as not run with the reason")
        return fixed(verdict, reason)
    if expect is not None:
        return direction(ours, expect, why=why)  # type: ignore[arg-type]
    o, p = as_estimate(ours), as_estimate(paper)
    if o is not None and not o.defined:
        return Decision("not run", reason or "our value is undefined (NaN) at this scale",
                        "not computed")
    if tolerance is None or o is None or p is None or not p.defined:
        raise InvalidInputError(
            f"claim {claim_id}: give a computed decision= (categorical(), binomial()), an "
            f"explicit verdict ({', '.join(VERDICTS)}; results and theory: only 'not run' and "
            "'not comparable'), `expect` ('<0'/'>0') for a direction, or finite numbers (or "
            "Estimates) for paper and ours with a tolerance")
    return compare(p, o, tolerance, why=why)


def _stated_refused(claim_id: str, kind: str, verdict: str) -> InvalidInputError:
    return InvalidInputError(
        f"claim {claim_id}: a stated verdict '{verdict}' on a {kind} claim is refused: the "
        f"verdict of a {kind} must be computed from evidence. Give ours as an Estimate with a "
        "tolerance (compare), expect='<0'/'>0' (direction), or decision=categorical(...)/"
        "binomial(...) (a check computed here); or, if the claim shows our code or a drawing "
        "rather than a measured number, kind='implementation' (or 'extension') with the reason; "
        f"a {kind} may state only {' or '.join(repr(v) for v in STATABLE_FOR_COUNTED)} (with "
        "the reason)")


def make_claim(
    claim_id: str,
    seed_file: str,
    where: str,
    quantity: str,
    paper: object,
    ours: object,
    *,
    scale: str,
    experiment: str,
    kind: str = "result",
    tolerance: float | None = None,
    verdict: str | None = None,
    reason: str = "",
    not_run: str | None = None,
    not_comparable: str | None = None,
    why: str = "",
    expect: str | None = None,
    exact: str | None = None,
    decision: Decision | None = None,
) -> Claim:
    """Validate one claim and decide its verdict (:mod:`fusionlib.compendium.verdicts`).

    This is the one way a claim is made (``Run.claim`` calls it). ``paper`` and ``ours`` are
    numbers, :class:`~fusionlib.compendium.verdicts.Estimate` objects (a value with its
    standard error and repetitions) or text. A bare number of the paper is exact (a published
    value); a bare number of ours decided by a rule of a *result* claim must be declared:
    ``exact="<why it has no sampling error>"`` (a count, a share of every row, a deterministic
    computation), else give an Estimate (``Estimate(value, se=None, n=1)`` for one repetition of
    a stochastic run: inconclusive).

    - ``not_run="<reason>"``: "not run" with that reason (what it would take);
    - ``not_comparable="<reason>"``: the protocol at this scale changes the quantity (the reason
      names the reduction); nothing is compared;
    - ``decision=``: a :class:`~fusionlib.compendium.verdicts.Decision` computed by a rule
      (:func:`~fusionlib.compendium.verdicts.categorical`,
      :func:`~fusionlib.compendium.verdicts.binomial`, a combination of instances); a
      ``tolerance`` may be recorded with it (the one its rule used);
    - ``expect="<0"`` / ``">0"``: ``ours`` estimates a difference whose sign the paper reports
      (:func:`~fusionlib.compendium.verdicts.direction`);
    - otherwise, with a ``tolerance``: :func:`~fusionlib.compendium.verdicts.compare` (TOST for
      "reproduced", a resolved gap for "differs", else "inconclusive"); an undefined ``ours``
      gives "not run";
    - an explicit ``verdict`` (*stated*: flagged in the row's ``stated`` column) needs a
      ``reason`` and no ``tolerance``; a result or theory claim may state only "not run" or
      "not comparable" (statements about the protocol), any other kind any verdict.

    ``kind`` is one of :data:`~fusionlib.compendium.verdicts.KINDS`. At ``smoke`` scale a
    result, theory or extension claim is "not comparable" whatever the rule gave (its reason
    keeps what the rule gave).
    """
    if not claim_id or not isinstance(claim_id, str):
        raise InvalidInputError("claim_id must be a non-empty string such as '002-T3-adult-IGO'")
    if seed_file not in SEED_FILES:
        raise InvalidInputError(
            f"seed_file {seed_file!r} unknown; allowed values are {', '.join(SEED_FILES)}")
    if kind not in KINDS:
        raise InvalidInputError(
            f"claim {claim_id}: kind {kind!r} unknown; allowed values are {', '.join(KINDS)}")
    validate_scale(scale)
    if tolerance is not None and (isinstance(tolerance, (str, bool)) or not _finite(tolerance)
                                  or float(tolerance) < 0):  # type: ignore[arg-type]
        raise InvalidInputError(
            f"claim {claim_id}: tolerance must be a finite number >= 0, got {tolerance!r}")
    if verdict is not None and verdict not in VERDICTS:
        raise InvalidInputError(
            f"claim {claim_id}: verdict {verdict!r} unknown; allowed values are "
            f"{', '.join(VERDICTS)}")
    if not_run is not None and not str(not_run).strip():
        raise InvalidInputError(f"claim {claim_id}: not_run needs a reason")
    if not_run is not None and isinstance(ours, (int, float, Estimate)) \
            and not isinstance(ours, bool) and as_estimate(ours).defined:
        raise InvalidInputError(
            f"claim {claim_id}: 'not run' with a value of ours ({ours!r}); a claim that computed "
            "something is 'not comparable' (name the reduction) or decided by its rule")
    if not_comparable is not None and not str(not_comparable).strip():
        raise InvalidInputError(f"claim {claim_id}: not_comparable needs a reason")
    # a computed decision handed over, or a stated verdict
    if decision is not None:
        if not isinstance(decision, Decision):
            raise InvalidInputError(
                f"claim {claim_id}: decision must be a Decision (from categorical(), "
                f"binomial(), compare(), direction()), got {decision!r}")
        if verdict is not None:
            raise InvalidInputError(
                f"claim {claim_id}: give a decision or a verdict, not both")
    stated_verdict = verdict if verdict is not None else (
        decision.verdict if decision is not None and decision.stated else None)
    protocol = not_run is not None or not_comparable is not None
    if stated_verdict is not None and not protocol:
        if not (reason.strip() or (decision is not None and decision.reason.strip())):
            raise InvalidInputError(
                f"claim {claim_id}: a stated '{stated_verdict}' verdict needs a reason (what "
                "was checked, or the scale, data or ambiguity behind it)")
        if tolerance is not None:
            raise InvalidInputError(
                f"claim {claim_id}: a stated verdict ('{stated_verdict}') takes no tolerance: "
                "nothing would compare with it. Drop the tolerance, or let compare() decide "
                "(no verdict)")
        if expect is not None:
            raise InvalidInputError(
                f"claim {claim_id}: a stated verdict ('{stated_verdict}') takes no expect: "
                "drop the verdict to let direction() decide")
        if kind in COUNTED_KINDS and stated_verdict not in STATABLE_FOR_COUNTED:
            raise _stated_refused(claim_id, kind, stated_verdict)
    # an exact value must be declared
    if exact is not None:
        if not isinstance(exact, str) or not exact.strip():
            raise InvalidInputError(
                f"claim {claim_id}: exact= needs a reason why ours has no sampling error "
                f"(a count, a share of every row, a deterministic computation), got {exact!r}")
        if isinstance(ours, Estimate) and (ours.se is None or ours.se > 0):
            raise InvalidInputError(
                f"claim {claim_id}: exact= declares ours exact, but ours is an Estimate with a "
                f"spread ({ours!r}); drop exact=")
    computed = (not protocol and decision is None and verdict is None)
    if computed and kind == "result" and exact is None and _is_number(ours) \
            and _finite(ours):
        raise InvalidInputError(
            f"claim {claim_id}: ours is a bare number ({ours!r}) for a result, which would be "
            "decided as an exact value with no interval. Declare it: exact=\"<why it has no "
            "sampling error>\" (a count, a share of every row, a deterministic computation), "
            "or pass an Estimate: Estimate.from_sample(repetitions), or "
            "Estimate(value, se=None, n=1) for one repetition of a stochastic run "
            "(inconclusive)")
    ours_decided = ours
    if exact is not None and computed:
        if _is_number(ours):
            ours_decided = Estimate(float(ours), 0.0, exact=True)  # type: ignore[arg-type]
        elif isinstance(ours, Estimate) and ours.defined:
            ours_decided = Estimate(ours.value, 0.0, ours.n, ours.df, ours.resolution,
                                    exact=True)
    decision_out = _decide(paper, ours_decided, tolerance=tolerance, verdict=verdict,
                           decision=decision, reason=reason, not_run=not_run,
                           not_comparable=not_comparable, why=why, expect=expect,
                           claim_id=claim_id)
    test = decision_out.test
    if exact is not None and computed and decision_out.verdict in DECIDED:
        test = f"{test} (exact: {exact.strip()})"
    if scale == "smoke":
        decision_out = smoke_verdict(decision_out, kind)
    reason_out = decision_out.reason
    if reason and reason not in reason_out and decision_out.verdict != "reproduced":
        reason_out = f"{reason}; {reason_out}" if reason_out else reason
    if stated_verdict == "reproduced" and reason and reason not in reason_out:
        reason_out = f"{reason}; {reason_out}" if reason_out else reason
    p, p_se, p_n = _parts(paper)
    o, o_se, o_n = _parts(ours_decided if exact is not None and computed else ours)
    return Claim(
        claim_id=claim_id, seed_file=seed_file, kind=kind, where=where, quantity=quantity,
        paper=p, paper_se=p_se, paper_n=p_n, ours=o, ours_se=o_se, ours_n=o_n,
        tolerance=_fmt(tolerance), verdict=decision_out.verdict, reason=reason_out,
        test=test, stated=str(stated_verdict is not None and not protocol),
        scale=scale, experiment=experiment,
    )


def claims_frame(claims: Iterable[Claim]) -> pd.DataFrame:
    """A DataFrame with exactly :data:`CLAIM_COLUMNS`; duplicate ids are an error."""
    rows = [asdict(c) for c in claims]
    frame = pd.DataFrame(rows, columns=list(CLAIM_COLUMNS)).astype(str)
    dup = frame["claim_id"][frame["claim_id"].duplicated()]
    if len(dup):
        raise InvalidInputError(f"duplicate claim ids: {sorted(set(dup))}; make each id unique")
    return frame


def read_claims(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate ``claims.csv`` files, checking their schema."""
    frames = []
    for path in paths:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        if tuple(frame.columns) == LEGACY_CLAIM_COLUMNS:  # written before the stated column
            frame.insert(CLAIM_COLUMNS.index("stated"), "stated", "")
        if tuple(frame.columns) != CLAIM_COLUMNS:
            raise InvalidInputError(
                f"{path}: columns {list(frame.columns)} differ from the claims schema "
                f"{list(CLAIM_COLUMNS)}; re-run the notebook that wrote it"
            )
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(CLAIM_COLUMNS))
    return claims_frame(
        Claim(**row) for row in pd.concat(frames, ignore_index=True).to_dict("records")
    )


def stated_claims(frame: pd.DataFrame) -> pd.DataFrame:
    """The claims whose verdict was stated by the caller, not computed by a rule."""
    return frame[frame["stated"] == "True"]


def verdict_counts(frame: pd.DataFrame, by: str | list[str] = "seed_file") -> pd.DataFrame:
    """Counts per ``by`` (seed file by default) and verdict (every verdict column present)."""
    counts = pd.crosstab([frame[b] for b in ([by] if isinstance(by, str) else by)],
                         frame["verdict"])
    counts = counts.reindex(columns=list(VERDICTS), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts
