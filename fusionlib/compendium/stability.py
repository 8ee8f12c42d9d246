"""Seed stability: the verdict of every claim at several root seeds, and which ones flip.

``make stability`` (``SEEDS="0 1 2"`` by default) runs the cells and chapters of a scale at each
root seed through the workflow (shards are keyed by seed, so nothing is computed twice; the
book's own seed reuses ``book/executed``), then calls this module:

``python -m fusionlib.compendium.stability --scale cpu --seed-dir 0=book/executed
--seed-dir 1=results/stability/cpu/seed-1 ...``

which writes ``results/stability/<scale>/stability.csv`` (one row per claim: its verdict at
each seed and ``stability``, "stable" or "flips: ...") and a ``.json`` beside it (seeds, scale,
commit, date). The scorecard reads it when present.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import pandas as pd

from fusionlib.compendium.provenance import git_commit
from fusionlib.compendium.scales import validate_scale
from fusionlib.compendium.scorecard import collect_claims
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write, atomic_write_json

__all__ = ["STABILITY_DIR", "stability_table", "stability_path", "write_stability",
           "load_stability", "main"]

REPO = Path(__file__).resolve().parents[2]
STABILITY_DIR = REPO / "results" / "stability"


def stability_path(scale: str) -> Path:
    """Where the stability table of ``scale`` lives."""
    return STABILITY_DIR / validate_scale(scale) / "stability.csv"


def stability_table(by_seed: dict[int, pd.DataFrame]) -> pd.DataFrame:
    """One row per claim: its verdict at each seed (``seed <s>`` columns; empty where a seed
    did not register it) and ``stability``: "stable" when every seed gives one verdict, else
    "flips: <verdict> at <seeds>; ...". Needs at least two seeds.

    A claim decided from cells of another scale at some seeds than at others (a cpu page reads
    the paper scale's cells where they exist, for root seed 0 only so far; the claims'
    ``scale`` column) compares scales, not seeds: its label is "scales differ: <scale> at
    <seeds>; ..." (with the verdicts), counted neither as stable nor as a flip."""
    if len(by_seed) < 2:
        raise InvalidInputError(f"seed stability needs at least two seeds, got {list(by_seed)}")
    meta = pd.concat([c[["claim_id", "seed_file", "experiment"]] for c in by_seed.values()])
    out = meta.drop_duplicates("claim_id").set_index("claim_id")
    seed_cols = [f"seed {s}" for s in sorted(by_seed)]
    scales = pd.DataFrame(index=out.index)
    for seed in sorted(by_seed):
        frame = by_seed[seed].set_index("claim_id")
        out[f"seed {seed}"] = frame["verdict"]
        if "scale" in frame:
            scales[seed] = frame["scale"]
    out = out.fillna("")
    scales = scales.reindex(out.index)
    labels = []
    for cid, row in zip(out.index, out[seed_cols].itertuples(index=False), strict=True):
        at = {s: x for s, x in scales.loc[cid].items() if isinstance(x, str) and x}
        if len(set(at.values())) > 1:
            parts = [f"{sc} at seed {', '.join(str(s) for s in sorted(at) if at[s] == sc)}"
                     for sc in sorted(set(at.values()))]
            verdicts = ", ".join(f"{v or '(absent)'} at seed {s}"
                                 for s, v in zip(sorted(by_seed), row, strict=True))
            labels.append(f"scales differ: {'; '.join(parts)} ({verdicts})")
            continue
        present = {v for v in row if v}
        if len(present) <= 1 and all(row):
            labels.append("stable")
            continue
        parts = []
        for v in sorted(present | ({"(absent)"} if not all(row) else set())):
            seeds = [str(s) for s, x in zip(sorted(by_seed), row, strict=True)
                     if (x or "(absent)") == v]
            parts.append(f"{v} at seed {', '.join(seeds)}")
        labels.append("flips: " + "; ".join(parts))
    out["stability"] = labels
    return out.reset_index().rename(columns={"index": "claim_id"})


def write_stability(table: pd.DataFrame, scale: str, seeds: list[int]) -> Path:
    """Write the table and its provenance (atomically)."""
    path = stability_path(scale)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda p: table.to_csv(p, index=False))
    atomic_write_json(path.with_suffix(".json"), {
        "scale": scale, "seeds": seeds, "commit": git_commit() or "unknown",
        "written_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "claims": int(len(table)),
        "flips": int(table["stability"].str.startswith("flips").sum())})
    return path


def load_stability(scale: str) -> pd.DataFrame | None:
    """The stability table of ``scale`` if ``make stability`` wrote one, else None."""
    path = stability_path(scale)
    if not path.is_file():
        return None
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.attrs["path"] = str(path)
    return table


def _seed_dir(text: str) -> tuple[int, Path]:
    seed, sep, folder = text.partition("=")
    if not sep or not seed.strip().isdigit():
        raise InvalidInputError(f"--seed-dir takes SEED=FOLDER (e.g. 1=results/stability/cpu/"
                                f"seed-1), got {text!r}")
    return int(seed), Path(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusionlib.compendium.stability")
    parser.add_argument("--scale", required=True)
    parser.add_argument("--seed-dir", action="append", default=[],
                        help="SEED=FOLDER of executed chapters (repeat per seed)")
    args = parser.parse_args(argv)
    try:
        validate_scale(args.scale)
        dirs = dict(_seed_dir(t) for t in args.seed_dir)
        by_seed = {}
        for seed, folder in dirs.items():
            claims, files = collect_claims(folder)
            if not files:
                raise InvalidInputError(f"seed {seed}: no chapter claims under {folder}; run "
                                        "the chapters at that seed first (make stability)")
            by_seed[seed] = claims
        table = stability_table(by_seed)
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = write_stability(table, args.scale, sorted(by_seed))
    flips = int(table["stability"].str.startswith("flips").sum())
    print(f"stability: {len(table)} claims at seeds {sorted(by_seed)}; {flips} change verdict "
          f"with the seed -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
