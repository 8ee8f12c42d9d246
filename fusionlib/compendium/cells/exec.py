"""Running cells: in-process with a progress bar (:func:`results`) or one per job.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.cells.model import (
    Cell,
    CellsFailedError,
    CellsMissingError,
    Experiment,
    Shard,
    StaleShardWarning,
    canonical_json,
)
from fusionlib.compendium.cells.registry import get_experiment
from fusionlib.compendium.cells.store import (
    REPO,
    code_key,
    error_path,
    load_shard,
    resolve_root,
    shard_path,
    write_shard,
)
from fusionlib.compendium.runner import (
    SCORECARD,
    notebook_key,
    scorecard_inputs,
    stamp_is_current,
)
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write_text, clean_stale_temporaries

__all__ = ["results", "present_results", "present_cells", "run_cell", "cell_status",
           "notebook_status"]

logger = logging.getLogger(__name__)


def _compute_one(exp: Experiment, cell: Cell, scale: str, key: str, root: Path
                 ) -> tuple[Shard | None, Path | None]:
    """Compute and write one cell; on failure write its traceback and return (None, log)."""
    path = shard_path(root, exp.name, scale, cell.cell_id)
    log = error_path(root, exp.name, scale, cell.cell_id)
    t0 = time.perf_counter()
    logger.info("cell %s of %s at scale %s: computing", cell.cell_id, exp.name, scale)
    try:
        shard = exp.compute(cell)
        write_shard(path, cell, shard, key, scale=scale, seconds=time.perf_counter() - t0)
        logger.info("cell %s: written in %.1f s (%s)", cell.cell_id, time.perf_counter() - t0,
                    path)
    except Exception:  # one failing cell must not stop the others; reported at the end
        atomic_write_text(log, (
            f"cell {cell.cell_id} of experiment {exp.name!r} at scale {scale!r} failed after "
            f"{time.perf_counter() - t0:.1f} s\nconfig: {canonical_json(cell.config)}\n"
            f"seed: {cell.seed}\n\n{traceback.format_exc()}"))
        return None, log
    log.unlink(missing_ok=True)  # an old traceback would only mislead
    # hand back what was written, read from the file: a caller gets the same types (lists,
    # not arrays; the stored dtypes) whether the cell was computed now or read from the cache
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleShardWarning)
        stored = load_shard(path, key, cell, quiet=True)
    return (stored if stored is not None else shard), None


def _failed_message(exp: Experiment, scale: str, failures: Sequence[tuple[str, Path]],
                    total: int) -> str:
    lines = [f"  {cid}: traceback in {log}" for cid, log in failures]
    return (f"{len(failures)} of {total} cells of experiment {exp.name!r} at scale {scale!r} "
            "failed (the others were computed and kept):\n" + "\n".join(lines))


def results(experiment: str | Experiment, scale: str, *, seed: int = 0,
            root: str | os.PathLike[str] | None = None, progress: bool = True,
            compute_missing: bool = True) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The aggregated results of every cell of ``experiment`` at ``scale``.

    Present shards of the current code key are read; missing, stale or unreadable ones are
    computed in-process (tqdm progress bar), each written as soon as it is done. If cells fail,
    the others still run and a :class:`CellsFailedError` then lists every failed cell id and
    the file holding its traceback. With ``compute_missing=False`` missing cells raise
    :class:`CellsMissingError` instead.

    Returns
    -------
    (rows, figures): the cells' rows concatenated in grid order with a first column
    ``cell_id``; and ``{cell_id: figure data}``.
    """
    exp = get_experiment(experiment)
    cells = exp.cells(scale, seed)
    root = resolve_root(root)
    key = code_key(exp)
    clean_stale_temporaries(root / exp.name / scale)
    shards: dict[str, Shard] = {}
    todo: list[Cell] = []
    for c in cells:
        s = load_shard(shard_path(root, exp.name, scale, c.cell_id), key, c)
        if s is None:
            todo.append(c)
        else:
            shards[c.cell_id] = s
    if todo and not compute_missing:
        ids = ", ".join(c.cell_id for c in todo[:10]) + (" ..." if len(todo) > 10 else "")
        raise CellsMissingError(
            f"{len(todo)} of {len(cells)} cells of {exp.name!r} at scale {scale!r} have no "
            f"current shard under {root}: {ids}. Run them with `snakemake` (workflow/) or "
            "call results(..., compute_missing=True)")
    failures: list[tuple[str, Path]] = []
    if todo:
        from tqdm import tqdm  # text bars (tqdm.auto warns without ipywidgets in the book)

        bar = tqdm(todo, desc=f"{exp.name} ({scale})", unit="cell", disable=not progress)
        for c in bar:
            bar.set_postfix_str(c.cell_id, refresh=False)
            shard, log = _compute_one(exp, c, scale, key, root)
            if shard is None:
                failures.append((c.cell_id, log))
            else:
                shards[c.cell_id] = shard
        bar.close()
    if failures:
        raise CellsFailedError(_failed_message(exp, scale, failures, len(cells)), failures)
    frames = [shards[c.cell_id].rows.assign(cell_id=c.cell_id) for c in cells]
    # empty frames are left out of the concatenation (pandas warns about their dtypes)
    frames = [f for f in frames if len(f)] or frames[:1]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if "cell_id" in rows.columns:
        rows = rows[["cell_id", *[k for k in rows.columns if k != "cell_id"]]]
    return rows, {c.cell_id: shards[c.cell_id].figures for c in cells}


def _reporting_stale(name: str, scale: str) -> Any:
    """A context that records :class:`StaleShardWarning` and, on exit, says once how many
    shards of ``name`` at ``scale`` were stale and not read (other warnings pass through)."""
    @contextlib.contextmanager
    def ctx():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StaleShardWarning)
            yield
        stale = sum(issubclass(w.category, StaleShardWarning) for w in caught)
        for w in caught:
            if not issubclass(w.category, StaleShardWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if stale:
            warnings.warn(f"{stale} shard(s) of {name} at scale {scale} are stale (computed by "
                          "other code): not read, so the page falls back to its own runs",
                          StaleShardWarning, stacklevel=4)
    return ctx()


def present_results(experiment: str | Experiment, scale: str, *, seed: int = 0,
                    root: str | os.PathLike[str] | None = None
                    ) -> tuple[pd.DataFrame, dict[str, Any]] | None:
    """:func:`results` when every cell of ``experiment`` at ``scale`` has a current shard; None
    when any is missing or stale. Nothing is computed: a page reads another scale's cells this
    way. Stale shards give one warning that says they are not read (instead of one
    :class:`StaleShardWarning` per shard saying it is recomputed, untrue here)."""
    name = get_experiment(experiment).name
    out = None
    with _reporting_stale(name, scale):
        try:
            out = results(experiment, scale, seed=seed, root=root, progress=False,
                          compute_missing=False)
        except CellsMissingError:
            out = None
    return out


def present_cells(experiment: str | Experiment, scale: str, cell_ids: Sequence[str], *,
                  seed: int = 0, root: str | os.PathLike[str] | None = None
                  ) -> dict[str, Shard] | None:
    """The shards of the cells ``cell_ids`` of ``experiment`` at ``scale`` when each has a
    current shard, as ``{cell_id: Shard}`` in the order given; None when any is missing or
    stale (one warning then says how many were stale). Nothing is computed: a page reads a
    few cells of another scale this way (:func:`present_results` reads them all). An id that
    is not a cell of that grid is an error."""
    exp = get_experiment(experiment)
    if not cell_ids:
        raise InvalidInputError(f"present_cells: give at least one cell id of {exp.name!r} "
                                f"(`cells list --scale {scale}` prints them)")
    cell_ids = list(dict.fromkeys(cell_ids))  # an id asked twice is read once
    cells = {c.cell_id: c for c in exp.cells(scale, seed)}
    unknown = [i for i in cell_ids if i not in cells]
    if unknown:
        raise InvalidInputError(f"present_cells: {unknown} are not cells of {exp.name!r} at "
                                f"scale {scale!r} and seed {seed} (`cells list --scale {scale}` "
                                "prints them)")
    key, root = code_key(exp), resolve_root(root)
    out: dict[str, Shard] = {}
    with _reporting_stale(exp.name, scale):
        for i in cell_ids:
            s = load_shard(shard_path(root, exp.name, scale, i), key, cells[i])
            if s is None:
                continue
            out[i] = s
    return out if len(out) == len(cell_ids) else None


def _find_cell(exp: Experiment, scale: str, seed: int, cell_id: str) -> Cell:
    cells = exp.cells(scale, seed)
    for c in cells:
        if c.cell_id == cell_id:
            return c
    shown = ", ".join(c.cell_id for c in cells[:8]) + (" ..." if len(cells) > 8 else "")
    raise InvalidInputError(
        f"unknown cell {cell_id!r} of experiment {exp.name!r} at scale {scale!r} and seed "
        f"{seed}; allowed values are {shown} (`list --scale {scale}` prints them all)")


def run_cell(experiment: str | Experiment, scale: str, cell_id: str,
             root: str | os.PathLike[str] | None = None, *, seed: int = 0,
             touch: bool = False) -> Path:
    """Compute one cell unless its current shard is present; returns the shard path.

    What the workflow engine calls (``python -m fusionlib.compendium.cells run``). A failed
    compute writes its traceback to the cell's ``.error.txt`` and raises
    :class:`CellsFailedError`. With ``touch`` an up-to-date shard gets a fresh modification
    time (Snakemake compares times with the code-key file it writes).
    """
    exp = get_experiment(experiment)
    cell = _find_cell(exp, scale, seed, cell_id)
    root = resolve_root(root)
    key = code_key(exp)
    path = shard_path(root, exp.name, scale, cell.cell_id)
    if load_shard(path, key, cell) is not None:
        if touch:
            os.utime(path)
        return path
    clean_stale_temporaries(path.parent)
    shard, log = _compute_one(exp, cell, scale, key, root)
    if shard is None:
        raise CellsFailedError(_failed_message(exp, scale, [(cell.cell_id, log)], 1),
                               [(cell.cell_id, log)])
    return path


def cell_status(experiment: str | Experiment, scale: str, cell: Cell,
                root: str | os.PathLike[str] | None = None, *, key: str | None = None,
                unreadable: Callable[[str], None] | None = None) -> str:
    """``"done"`` (a current shard), ``"failed"`` (no current shard and a traceback file: the
    last compute failed, whether or not an old shard is left), ``"stale"`` (a shard that will be
    recomputed: unreadable, truncated, malformed, of other code, or provisional) or
    ``"missing"``. ``unreadable`` gets the one-line message of a shard file that cannot be read
    (:func:`~fusionlib.compendium.cells.shardfile.load_shard`)."""
    exp = get_experiment(experiment)
    path = shard_path(root, exp.name, scale, cell.cell_id)
    if path.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StaleShardWarning)
            if load_shard(path, key or code_key(exp), cell, quiet=True,
                          unreadable=unreadable) is not None:
                return "done"
    if error_path(root, exp.name, scale, cell.cell_id).is_file():
        return "failed"  # a successful compute deletes the traceback file
    return "stale" if path.is_file() else "missing"


def notebook_status(notebook: str | os.PathLike[str], scale: str, seed: int = 0,
                    out_dir: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """``(runner key, status)`` of an executed notebook, as the notebook runner judges it
    (:func:`fusionlib.compendium.runner.run_all`, ``params={"seed": seed}``): ``"done"`` when
    ``<out>/<stem>.ipynb`` exists, ``<out>/<stem>.stamp.json`` holds the current key and the
    results it lists are present (:func:`~fusionlib.compendium.runner.stamp_is_current`),
    ``"missing"`` without the ``.ipynb``, else ``"stale"``."""
    path = Path(notebook).resolve()
    out = Path(out_dir).resolve() if out_dir else (REPO / "book" / "executed").resolve()
    extra = scorecard_inputs(out, scale) if path.stem == SCORECARD else None
    key = notebook_key(path, scale, {"seed": seed}, extra)
    if not (out / f"{path.stem}.ipynb").is_file():
        return key, "missing"
    return key, "done" if stamp_is_current(out, path.stem, key) else "stale"
