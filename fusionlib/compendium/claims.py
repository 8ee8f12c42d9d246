"""The reproduction scorecard: one row per claim of the papers.

Each experiment registers claims (the paper's value and ours, each with its uncertainty, the
scale, the claim's kind, the verdict and its reason); the scorecard page aggregates every
experiment's ``claims.csv``. The verdict is decided by :mod:`fusionlib.compendium.verdicts`
(the one place that decides); this module validates a claim and gives it its row.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from fusionlib.compendium.scales import validate_scale
from fusionlib.compendium.verdicts import (
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
    the rule that gave the verdict.
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
    scale: str
    experiment: str


CLAIM_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Claim))


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


def _decide(paper: object, ours: object, *, tolerance: float | None, verdict: str | None,
            reason: str, not_run: str | None, not_comparable: str | None, why: str,
            expect: str | None, claim_id: str) -> Decision:
    if not_run is not None:
        return fixed("not run", str(not_run), "not computed")
    if not_comparable is not None:
        return fixed("not comparable", str(not_comparable),
                     "protocol at this scale changes the quantity")
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
            f"claim {claim_id}: give an explicit verdict ({', '.join(VERDICTS)}), `expect` "
            "('<0'/'>0') for a direction, or finite numbers (or Estimates) for paper and ours "
            "with a tolerance")
    return compare(p, o, tolerance, why=why)


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
) -> Claim:
    """Validate one claim and decide its verdict (:mod:`fusionlib.compendium.verdicts`).

    This is the one way a claim is made (``Run.claim`` calls it). ``paper`` and ``ours`` are
    numbers (exact), :class:`~fusionlib.compendium.verdicts.Estimate` objects (a value with its
    standard error and repetitions) or text.

    - ``not_run="<reason>"``: "not run" with that reason (what it would take);
    - ``not_comparable="<reason>"``: the protocol at this scale changes the quantity (the reason
      names the reduction); nothing is compared;
    - ``expect="<0"`` / ``">0"``: ``ours`` estimates a difference whose sign the paper reports
      (:func:`~fusionlib.compendium.verdicts.direction`);
    - otherwise, with a ``tolerance``: :func:`~fusionlib.compendium.verdicts.compare` (TOST for
      "reproduced", a resolved gap for "differs", else "inconclusive"); an undefined ``ours``
      gives "not run";
    - an explicit ``verdict`` (categorical claims decided by the caller, e.g. with
      :func:`~fusionlib.compendium.verdicts.categorical`): any verdict but "reproduced" needs a
      ``reason``.

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
    if verdict not in (None, "reproduced") and not reason.strip():
        raise InvalidInputError(
            f"claim {claim_id}: a '{verdict}' verdict needs a reason (scale, data, ambiguity)")
    decision = _decide(paper, ours, tolerance=tolerance, verdict=verdict, reason=reason,
                       not_run=not_run, not_comparable=not_comparable, why=why, expect=expect,
                       claim_id=claim_id)
    if scale == "smoke":
        decision = smoke_verdict(decision, kind)
    reason_out = decision.reason
    if reason and reason not in reason_out and decision.verdict != "reproduced":
        reason_out = f"{reason}; {reason_out}" if reason_out else reason
    p, p_se, p_n = _parts(paper)
    o, o_se, o_n = _parts(ours)
    return Claim(
        claim_id=claim_id, seed_file=seed_file, kind=kind, where=where, quantity=quantity,
        paper=p, paper_se=p_se, paper_n=p_n, ours=o, ours_se=o_se, ours_n=o_n,
        tolerance=_fmt(tolerance), verdict=decision.verdict, reason=reason_out,
        test=decision.test, scale=scale, experiment=experiment,
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


def verdict_counts(frame: pd.DataFrame, by: str | list[str] = "seed_file") -> pd.DataFrame:
    """Counts per ``by`` (seed file by default) and verdict (every verdict column present)."""
    counts = pd.crosstab([frame[b] for b in ([by] if isinstance(by, str) else by)],
                         frame["verdict"])
    counts = counts.reindex(columns=list(VERDICTS), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts
