"""The reproduction scorecard: one row per claim of the papers.

Each experiment registers claims (paper value, our value, scale, verdict, reason); the scorecard
page aggregates every experiment's ``claims.csv``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from fusionlib.compendium.scales import validate_scale
from fusionlib.errors import InvalidInputError

__all__ = [
    "VERDICTS",
    "SEED_FILES",
    "CLAIM_COLUMNS",
    "Claim",
    "make_claim",
    "claims_frame",
    "read_claims",
    "verdict_counts",
]

VERDICTS: tuple[str, ...] = ("reproduced", "differs", "not run")
#: seed files of ../shared/seeds: FusionGAN, PTGAN, fairness testing from separate datasets
SEED_FILES: dict[str, str] = {
    "000": "FusionGAN technical appendix",
    "001": "PTGAN (parallel tempering GAN)",
    "002": "Fairness testing from separate datasets",
}


@dataclass(frozen=True)
class Claim:
    """One row of the claims table (all fields are plain strings/numbers for CSV)."""

    claim_id: str
    seed_file: str
    where: str
    quantity: str
    paper: str
    ours: str
    scale: str
    verdict: str
    reason: str
    experiment: str
    tolerance: str


CLAIM_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Claim))


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    if hasattr(value, "item"):  # numpy scalar
        return _fmt(value.item())
    return str(value)


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _is_undefined(value: object) -> bool:
    """None, or a number that is NaN or infinite."""
    if value is None:
        return True
    if isinstance(value, bool):
        return False
    try:
        return not math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


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
    tolerance: float | None = None,
    verdict: str | None = None,
    reason: str = "",
    not_run: str | None = None,
    why: str = "",
) -> Claim:
    """Validate one claim and compute its verdict when it is not given.

    This is the one way a claim is made (``Run.claim`` calls it).

    - ``not_run="<reason>"``: the verdict is "not run" with that reason (what to provide, or
      why the experiment did not run at this scale).
    - ``verdict=None``: ``paper`` must be a finite number and ``tolerance`` a finite number
      >= 0. If ``ours`` is undefined (None or NaN) the verdict is "not run" (reason: ``not_run``
      or "undefined at this scale"); otherwise "reproduced" when ``|ours - paper| <=
      tolerance``, else "differs" with a reason naming the gap, the scale and ``why``.
    - an explicit ``verdict``: "reproduced" is refused when ``ours`` is a non-finite number;
      "differs" and "not run" need a ``reason``.
    """
    if tolerance is not None and (isinstance(tolerance, str) or not (
            _is_number(tolerance) and float(tolerance) >= 0)):
        raise InvalidInputError(
            f"claim {claim_id}: tolerance must be a finite number >= 0, got {tolerance!r}")
    if not_run is not None:
        if not str(not_run).strip():
            raise InvalidInputError(f"claim {claim_id}: not_run needs a reason")
        verdict, reason = "not run", str(not_run)
    elif verdict is None and _is_undefined(ours):
        verdict, reason = "not run", reason or "our value is undefined (NaN) at this scale"
    if not claim_id or not isinstance(claim_id, str):
        raise InvalidInputError("claim_id must be a non-empty string such as '002-T3-adult-IGO'")
    if seed_file not in SEED_FILES:
        raise InvalidInputError(
            f"seed_file {seed_file!r} unknown; allowed values are {', '.join(SEED_FILES)}"
        )
    validate_scale(scale)
    if verdict is None:
        if tolerance is None or not (_is_number(paper) and _is_number(ours)):
            raise InvalidInputError(
                f"claim {claim_id}: give an explicit verdict ({', '.join(VERDICTS)}) unless both "
                "paper and ours are finite numbers and a tolerance is given"
            )
        gap = abs(float(ours) - float(paper))  # type: ignore[arg-type]
        verdict = "reproduced" if gap <= tolerance else "differs"
        if verdict == "differs" and not reason:
            reason = f"|ours - paper| = {gap:.3g} > tolerance {tolerance:g} at scale {scale}"
            reason += f"; {why}" if why else ""
    if verdict == "reproduced" and _is_undefined(ours) and ours is not None:
        raise InvalidInputError(
            f"claim {claim_id}: 'reproduced' with an undefined (NaN or infinite) value of ours; "
            "register it as not run with the reason")
    if verdict not in VERDICTS:
        raise InvalidInputError(
            f"claim {claim_id}: verdict {verdict!r} unknown; allowed values are "
            f"{', '.join(VERDICTS)}"
        )
    if verdict != "reproduced" and not reason.strip():
        raise InvalidInputError(
            f"claim {claim_id}: a '{verdict}' verdict needs a reason (scale, data, ambiguity)"
        )
    return Claim(
        claim_id=claim_id, seed_file=seed_file, where=where, quantity=quantity,
        paper=_fmt(paper), ours=_fmt(ours), scale=scale, verdict=verdict, reason=reason,
        experiment=experiment, tolerance=_fmt(tolerance),
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


def verdict_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts per seed file and verdict (all three verdict columns always present)."""
    counts = pd.crosstab(frame["seed_file"], frame["verdict"])
    counts = counts.reindex(columns=list(VERDICTS), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts
