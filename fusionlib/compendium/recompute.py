"""One claim, recomputed: ``make claim ID=<claim id>``.

The Makefile asks this module which chapter registers the claim (``locate``), runs that
chapter's cells and notebook through the workflow (nothing else), then asks it for the new row
(``show``)::

    python -m fusionlib.compendium.recompute locate 001-T3-adult-nd-pt_cp-RF
    python -m fusionlib.compendium.recompute show 001-T3-adult-nd-pt_cp-RF

A claim is found in the ``claims.csv`` of the executed chapters (``--out``, default
``book/executed``); an unknown id is an error that lists the nearest known ids.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

import pandas as pd

from fusionlib.compendium.scorecard import collect_claims
from fusionlib.errors import InvalidInputError

__all__ = ["locate", "row_text", "main"]

REPO = Path(__file__).resolve().parents[2]


def default_executed() -> Path:
    """``book/executed`` of the checkout when fusionlib is used from one, else of the current
    folder (an installed wheel: never a folder beside site-packages)."""
    if (REPO / "pyproject.toml").is_file() and (REPO / "fusionlib").is_dir():
        return REPO / "book" / "executed"
    return Path.cwd() / "book" / "executed"


def _claims(out: Path) -> pd.DataFrame:
    claims, files = collect_claims(out)
    if not files:
        raise InvalidInputError(
            f"no executed chapters under {out}: build the book once (make book), then the "
            "chapter of each claim is known")
    return claims


def locate(claim_id: str, out: Path) -> str:
    """The chapter (notebook name) that registers ``claim_id``."""
    claims = _claims(out)
    hit = claims[claims["claim_id"] == claim_id]
    if len(hit):
        return str(hit["experiment"].iloc[0])
    near = difflib.get_close_matches(claim_id, claims["claim_id"].tolist(), n=5, cutoff=0.5)
    prefix = [c for c in claims["claim_id"] if c.startswith(claim_id)][:5]
    hints = list(dict.fromkeys(prefix + near))
    raise InvalidInputError(
        f"unknown claim id {claim_id!r}"
        + (f"; nearest: {', '.join(hints)}" if hints else "")
        + " (every id: the scorecard page, or book/executed/scorecard/all_claims.csv)")


def row_text(claim_id: str, out: Path) -> str:
    """The claim's row as ``field: value`` lines."""
    claims = _claims(out)
    hit = claims[claims["claim_id"] == claim_id]
    if not len(hit):
        raise InvalidInputError(f"claim {claim_id!r} is not registered any more by its chapter")
    row = hit.iloc[0]
    return "\n".join(f"{k:>10}: {v}" for k, v in row.items() if v != "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusionlib.compendium.recompute")
    parser.add_argument("action", choices=("locate", "show"))
    parser.add_argument("claim_id")
    parser.add_argument("--out", type=Path, default=None,
                        help="the executed chapters (default: book/executed of the checkout, "
                        "or of the current folder for an installed package)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = default_executed()
    try:
        if args.action == "locate":
            print(locate(args.claim_id.strip(), args.out))
        else:
            print(row_text(args.claim_id.strip(), args.out))
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
