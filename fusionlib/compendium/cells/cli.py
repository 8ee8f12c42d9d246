"""Command line of the grid of cells: ``python -m fusionlib.compendium.cells list|run|...``.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.cells.bundle import export_bundle, import_bundle
from fusionlib.compendium.cells.bundle_checks import check_root
from fusionlib.compendium.cells.exec import cell_status, notebook_status, results, run_cell
from fusionlib.compendium.cells.model import CellsFailedError, CellsMissingError
from fusionlib.compendium.cells.origin import (
    GPU_ATOL,
    GPU_RTOL,
    OTHER_CPU,
    bundle_origin,
    verify_bundle,
)
from fusionlib.compendium.cells.registry import experiment_names, get_experiment
from fusionlib.compendium.cells.store import (
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
                row["status"] = cell_status(exp, scale, c, root, key=key, unreadable=_warn)
            rows.append(row)
    return rows


def _warn(message: str) -> None:
    """One line on stderr (a shard file that cannot be read: treated as missing)."""
    print(f"warning: {' '.join(message.split())}", file=sys.stderr)


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
    sp.add_argument("--paper-replaces", action="append", default=[], metavar="EXPERIMENT",
                    help="at scale cpu: name this experiment in paper_complete when every one "
                         "of its paper cells is current here (repeatable)")
    sp.add_argument("--no-status", action="store_true",
                    help="cells and shard paths only, reading no shard (the per-job processes "
                         "of cluster executors, which re-parse the workflow)")
    _bundle_parsers(sub, common)
    return p


def _paper_complete(args: argparse.Namespace, root: Path) -> list[str]:
    """The experiments of ``--paper-replaces`` whose paper cells are all current under ``root``
    (only at scale cpu: a chapter built at cpu reads a complete paper grid instead of its own
    cells; at other scales, none)."""
    if args.scale != "cpu":
        return []
    done = []
    for name in args.paper_replaces:
        get_experiment(name)
        rows = _cell_rows([name], "paper", args.seed, root, True)
        if rows and all(r["status"] == "done" for r in rows):
            done.append(name)
    return done


def _bundle_parsers(sub: Any, common: Any) -> None:
    sp = sub.add_parser("export", help="write the current shards of a scale to one bundle")
    common(sp)
    sp.add_argument("--experiment", action="append", default=None,
                    help="only this experiment (repeatable; default all)")
    sp.add_argument("--cell", action="append", default=None, metavar="PATTERN",
                    help="only cells whose id matches (shell-style, e.g. 'pt-gp-*'; repeatable)")
    sp.add_argument("--out", type=Path, default=None,
                    help="archive path (default results/bundles/fusionlib-results-...tar.gz)")
    sp = sub.add_parser("import", help="verify a bundle and install its shards")
    common(sp)
    sp.add_argument("bundle", type=Path)
    sp = sub.add_parser("verify", help="recompute N cells installed from bundles; compare")
    common(sp)
    sp.add_argument("-n", type=int, default=3, help="how many cells (default 3)")
    sp.add_argument("--pick-seed", type=int, default=None,
                    help="seed of the draw of cells (default: a fresh one, printed)")
    sp.add_argument("--rtol", type=float, default=GPU_RTOL,
                    help=f"relative tolerance where a GPU or another CPU model computed a side "
                         f"({GPU_RTOL:g})")
    sp.add_argument("--atol", type=float, default=GPU_ATOL,
                    help=f"absolute tolerance where a GPU or another CPU model computed a side "
                         f"({GPU_ATOL:g})")
    sp.add_argument("--same-device", action="store_true",
                    help="draw only among shards computed on this device (the bitwise check; "
                         "the device is the processor's model name)")
    sp = sub.add_parser("origin", help="where the shards of each experiment came from")
    common(sp)
    sp.add_argument("--experiment", action="append", default=None)


def _list_or_plan(args: argparse.Namespace, root: Path) -> None:
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
                          "cells": rows, "code_keys": keys, "notebooks": notebooks,
                          "paper_complete": _paper_complete(args, root)}, indent=1))
    elif args.format == "json":
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            extra = f"\t{r['status']}" if "status" in r else ""
            print(f"{r['experiment']}\t{r['cell_id']}\t{r['shard']}{extra}")


def _export(args: argparse.Namespace, root: Path) -> int:
    rep = export_bundle(args.scale, seed=args.seed, root=root, out=args.out,
                        experiments=args.experiment, cells=args.cell)
    print(f"bundle {rep.path}: {rep.shards} shards at scale {args.scale} (seed {args.seed})"
          + (f"; {len(rep.missing)} cells without a current shard left out (listed in the "
             "manifest)" if rep.missing else ""))
    return 0


def _import(args: argparse.Namespace, root: Path) -> int:
    rep = import_bundle(args.bundle, root=root)
    print(f"bundle {args.bundle}: installed {len(rep.installed)} of {rep.listed} shards under "
          f"{root}" + (f" ({rep.replaced} replaced a different local shard)" if rep.replaced
                       else "") + (f"; ledger {rep.ledger}" if rep.ledger else ""))
    for member, why in rep.refused:
        print(f"refused {member}: {why}", file=sys.stderr)
    summary = rep.summary()
    if summary:
        print(f"error: {summary} (each named above)", file=sys.stderr)
    return 1 if rep.refused else 0


def _verify(args: argparse.Namespace, root: Path) -> int:
    pick = args.pick_seed if args.pick_seed is not None else secrets.randbelow(2**31)
    print(f"verify: {args.n} cells drawn with --pick-seed {pick}"
          + (" among those computed on this device" if args.same_device else "")
          + f", recomputed here (the same CPU model: bitwise; a GPU on either side or "
          f"another CPU model: |diff| <= {args.atol:g} + {args.rtol:g} x |value|)")
    records = verify_bundle(args.scale, args.n, seed=pick, root=root, rtol=args.rtol,
                            atol=args.atol, same_device=args.same_device)
    for r in records:
        print(f"{r['verdict']:>16}  {r['experiment']}/{r['cell_id']}  ({r['comparison']}; "
              f"bundle: {r['device_bundle']}, here: {r['device_here']}; max |diff| "
              f"{r['max_abs_diff']:.3g}; {r['seconds']} s)")
    other = [r for r in records if r["verdict"] == OTHER_CPU]
    confirmed = len(records) - len(other) - sum(r["verdict"] == "differs" for r in records)
    print(f"confirmed {confirmed} of {len(records)}")
    if other:
        print(f"note: {len(other)} of {len(records)} cells were computed on another CPU model "
              "and differ beyond the tolerance in their numbers only: its kernels round "
              "differently and training amplifies it, so they neither confirm nor refute the "
              "bundle; --same-device (make verify-results SAME_DEVICE=1) draws among the cells "
              "this machine can check bitwise")
    bad = [r for r in records if r["verdict"] == "differs"]
    if bad:
        print(f"error: {len(bad)} of {len(records)} recomputed cells differ from the bundle",
              file=sys.stderr)
        return 1
    if not confirmed:
        print("error: no drawn cell could be confirmed on this machine (every one was computed "
              "on another CPU model); draw again, or use --same-device where this CPU model "
              "computed some", file=sys.stderr)
        return 3
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line; unknown experiments, scales or cells print one line on stderr, exit 2."""
    args = _parser().parse_args(argv)
    if args.command in ("run", "results", "verify"):
        # the job's log (a cell's .log beside its shard) gets the library's progress lines: a
        # long training run reports its iteration, losses and time left every minute
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        validate_scale(args.scale)
        if args.seed < 0:
            raise InvalidInputError(f"--seed must be an integer >= 0, got {args.seed}")
        root = check_root(resolve_root(args.root))
        if args.command in ("list", "plan"):
            _list_or_plan(args, root)
        elif args.command == "run":
            print(run_cell(args.experiment, args.scale, args.cell_id, root, seed=args.seed,
                           touch=args.touch))
        elif args.command == "results":
            rows, figures = results(args.experiment, args.scale, seed=args.seed, root=root,
                                    progress=sys.stderr.isatty(),
                                    compute_missing=not args.no_compute)
            print(_summary(rows, figures))
        elif args.command == "origin":
            for name in args.experiment or experiment_names():
                if args.scale in get_experiment(name).scales:
                    info = bundle_origin(name, args.scale, seed=args.seed, root=root)
                    print(f"{name}: {info['text']}")
        else:
            return {"export": _export, "import": _import, "verify": _verify}[args.command](
                args, root)
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (CellsFailedError, CellsMissingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
