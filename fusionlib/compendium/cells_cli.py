"""Command line of the grid of cells: ``python -m fusionlib.compendium.cells list|run|...``.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.cells_exec import cell_status, notebook_status, results, run_cell
from fusionlib.compendium.cells_model import CellsFailedError, CellsMissingError
from fusionlib.compendium.cells_registry import experiment_names, get_experiment
from fusionlib.compendium.cells_store import (
    ENV_ROOT,
    code_key,
    error_path,
    resolve_root,
    shard_path,
)
from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.errors import InvalidInputError

__all__ = ["main"]


def _cell_rows(names: Sequence[str], scale: str, seed: int, root: Path, status: bool
               ) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        exp = get_experiment(name)
        if scale not in exp.scales:
            continue
        key = code_key(exp)
        for c in exp.cells(scale, seed):
            row = {"experiment": exp.name, "cell_id": c.cell_id, "label": c.label,
                   "scale": scale, "seed": seed,
                   "shard": str(shard_path(root, exp.name, scale, c.cell_id)),
                   "error_log": str(error_path(root, exp.name, scale, c.cell_id)),
                   "code_key": key}
            if status:
                row["status"] = cell_status(exp, scale, c, root, key=key)
            rows.append(row)
    return rows


def _summary(rows: pd.DataFrame, figures: dict[str, Any]) -> str:
    with pd.option_context("display.max_columns", 20, "display.width", 160,
                           "display.max_rows", 60):
        return f"{len(rows)} rows from {len(figures)} cells\n{rows}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fusionlib.compendium.cells",
        description="List, run and aggregate the cells of the compendium's experiments.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--scale", default="cpu", help=f"one of {', '.join(SCALES)}")
        sp.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
        sp.add_argument("--root", type=Path, default=None,
                        help=f"shard folder (default ${ENV_ROOT} or <repo>/results/cells)")

    sp = sub.add_parser("list", help="print every cell: experiment, cell id, shard path")
    common(sp)
    sp.add_argument("--experiment", action="append", default=None,
                    help="only this experiment (repeatable; default all)")
    sp.add_argument("--format", choices=("lines", "json"), default="lines")
    sp.add_argument("--status", action="store_true",
                    help="also read each shard: done, missing, stale or failed")
    sp = sub.add_parser("run", help="compute one cell if its shard is missing or stale")
    common(sp)
    sp.add_argument("experiment")
    sp.add_argument("cell_id")
    sp.add_argument("--touch", action="store_true",
                    help="refresh the modification time of an up-to-date shard")
    sp = sub.add_parser("results", help="aggregate (computing what is missing), print a summary")
    common(sp)
    sp.add_argument("experiment")
    sp.add_argument("--no-compute", action="store_true", help="fail if a shard is missing")
    sp = sub.add_parser("plan", help="JSON for the workflow: cells and notebooks with status")
    common(sp)
    sp.add_argument("--experiment", action="append", default=None)
    sp.add_argument("--notebook", action="append", default=[], type=Path,
                    help="notebook whose runner key and status to include (repeatable)")
    sp.add_argument("--out", type=Path, default=None,
                    help="executed notebooks folder (default <repo>/book/executed)")
    sp.add_argument("--no-status", action="store_true",
                    help="cells and shard paths only, reading no shard (the per-job processes "
                         "of cluster executors, which re-parse the workflow)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Command line; unknown experiments, scales or cells print one line on stderr, exit 2."""
    args = _parser().parse_args(argv)
    try:
        validate_scale(args.scale)
        if args.seed < 0:
            raise InvalidInputError(f"--seed must be an integer >= 0, got {args.seed}")
        root = resolve_root(args.root)
        if args.command in ("list", "plan"):
            names = args.experiment or experiment_names()
            for n in names:
                get_experiment(n)
            plan = args.command == "plan"
            status = not args.no_status if plan else args.status
            rows = _cell_rows(names, args.scale, args.seed, root, status)
            if plan:
                notebooks = {}
                for nb in args.notebook:
                    if not nb.is_file():
                        raise InvalidInputError(f"notebook {nb} not found")
                    if status:
                        key, nb_status = notebook_status(nb, args.scale, args.seed, args.out)
                        notebooks[nb.stem] = {"key": key, "status": nb_status}
                    else:
                        notebooks[nb.stem] = {}
                keys = {r["experiment"]: r["code_key"] for r in rows}  # computed once each
                print(json.dumps({"scale": args.scale, "seed": args.seed, "root": str(root),
                                  "cells": rows, "code_keys": keys,
                                  "notebooks": notebooks}, indent=1))
            elif args.format == "json":
                print(json.dumps(rows, indent=1))
            else:
                for r in rows:
                    extra = f"\t{r['status']}" if "status" in r else ""
                    print(f"{r['experiment']}\t{r['cell_id']}\t{r['shard']}{extra}")
        elif args.command == "run":
            path = run_cell(args.experiment, args.scale, args.cell_id, root, seed=args.seed,
                            touch=args.touch)
            print(path)
        elif args.command == "results":
            rows, figures = results(args.experiment, args.scale, seed=args.seed, root=root,
                                    progress=sys.stderr.isatty(),
                                    compute_missing=not args.no_compute)
            print(_summary(rows, figures))
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (CellsFailedError, CellsMissingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
