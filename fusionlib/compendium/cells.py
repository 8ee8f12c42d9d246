"""The grid of cells: experiments as independent, cached units of work (DESIGN.md, "Cells").

An :class:`Experiment` is a grid of :class:`Cell` objects (experiment, configuration, seed) and a
``compute`` function that turns one cell into a :class:`Shard` (tidy rows plus optional
JSON-able figure data). ``compute`` is a pure function of the cell: every random draw comes from
:mod:`fusionlib.rng` streams derived from ``cell.seed`` and the configuration.

Shards on disk
    ``<root>/<experiment>/<scale>/<cell_id>.shard.json``: one JSON file holding a header (the
    cell, the *code key*, package versions, wall time) and the shard (the frame in a
    ``split``-like layout with its dtypes, and the figure data). It is written (compact JSON)
    with :func:`fusionlib.io.atomic_write_text`, so a shard is either complete or absent. The
    root is ``<repo>/results/cells`` (ignored by git) unless ``FUSIONLIB_CELLS`` names another
    folder.

Code key
    SHA-256 of the source of the experiment's modules and of every ``fusionlib`` module they
    import, transitively (:func:`fusionlib.compendium.runner.fusionlib_dependencies`), of the
    pinned environment (``requirements.lock`` and both torch locks, :data:`LOCK_FILES`: the key
    does not depend on which torch build is installed, so shards from GPU runners are current
    on the CPU machine that builds the book) and of :data:`SHARD_FORMAT`. A change of code or
    of the pinned environment gives a new key, and every shard written under the old key is
    *stale*: treated as missing and recomputed, never read. The cell machinery itself (this
    module) is not part of the key: it only stores results, and a change of the file layout
    bumps :data:`SHARD_FORMAT` instead, so editing the CLI does not throw away hours of GPU
    work.
    File paths enter the key relative to the ``fusionlib`` folder, so the key is the same on
    every checkout (laptop, cluster node, GPU runner).

Execution
    :func:`results` is what a notebook calls: it loads the shards of every cell of an
    experiment at a scale, computes the missing or stale ones in-process (with a progress bar;
    each shard is written as soon as its cell is done, so a killed run loses at most the cell
    in progress), and returns the aggregated frame and figure data. The Snakemake workflow
    (``workflow/Snakefile``) instead runs one cell per job through :func:`run_cell` /
    ``python -m fusionlib.compendium.cells run``, in parallel, on a cluster or on GPU runners;
    the notebook then finds every shard present.

Concurrency
    Two runs started at once on one checkout (two notebooks, a notebook beside Snakemake, two
    Snakemake jobs) are safe without locks: each writer writes its own temporary file and
    renames it onto the shard path (:func:`os.replace` is atomic on one file system), so a
    duplicate computation is merely wasted work. Both shards are complete and equal up to the
    header's timing fields (compute is deterministic on CPU); the last rename wins, and a
    reader always sees one complete shard or none.

Registry
    Paper packages register their experiments when imported (``fusionlib.ptgan.cells``,
    ``fusionlib.fairtest.cells``). This module never imports them statically (the compendium
    sits below the papers, see ``tests/test_layers.py``): :func:`load_experiments` imports the
    module names listed in :data:`EXPERIMENT_MODULES` (plus ``FUSIONLIB_CELL_MODULES``,
    comma-separated) with :mod:`importlib` on first use.

Command line
    ``python -m fusionlib.compendium.cells list --scale cpu [--experiment X] [--format json]``,
    ``... run EXPERIMENT CELL_ID --scale cpu``, ``... results EXPERIMENT --scale cpu`` and
    ``... plan`` (what the Snakefile reads at parse time); see :func:`main`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import datetime as _dt
import hashlib
import importlib
import importlib.util
import json
import math
import os
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.provenance import package_versions
from fusionlib.compendium.runner import SCORECARD, fusionlib_dependencies, notebook_key
from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.errors import FusionlibError, InvalidInputError
from fusionlib.io import atomic_write_text, clean_stale_temporaries

__all__ = [
    "Cell", "Experiment", "Shard", "EXPERIMENTS", "EXPERIMENT_MODULES", "SHARD_FORMAT",
    "CellsFailedError", "CellsMissingError", "StaleShardWarning",
    "register", "get_experiment", "experiment_names", "load_experiments",
    "default_root", "shard_path", "error_path", "code_key", "write_shard", "load_shard",
    "results", "run_cell", "cell_status", "notebook_status", "frame_to_json", "frame_from_json",
    "main",
]

PACKAGE = Path(__file__).resolve().parents[1]  # the fusionlib folder
REPO = PACKAGE.parent
#: the pinned environment: a change of any pin invalidates every shard. Both torch locks count,
#: whichever build is installed, so that a shard computed on a GPU runner (torch from the cuda
#: lock) is current on the CPU machine that builds the book (and vice versa)
LOCK_FILES: tuple[Path, ...] = (REPO / "requirements.lock", REPO / "requirements-torch-cpu.lock",
                                REPO / "requirements-torch-cuda.lock")
#: version of the shard file layout (bump it when the layout or its meaning changes)
SHARD_FORMAT = 1
#: modules that register experiments; imported by name (never statically: layering)
EXPERIMENT_MODULES: tuple[str, ...] = ("fusionlib.ptgan.cells", "fusionlib.fairtest.cells")
#: modules of the cell machinery, left out of every code key (see the module docstring)
MACHINERY: tuple[str, ...] = ("fusionlib.compendium.cells",)
ENV_ROOT = "FUSIONLIB_CELLS"
ENV_MODULES = "FUSIONLIB_CELL_MODULES"
SHARD_SUFFIX = ".shard.json"
ERROR_SUFFIX = ".error.txt"
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_SLUG_BAD = re.compile(r"[^a-z0-9]+")
_ID_HASH_LEN = 12


class CellsFailedError(FusionlibError, RuntimeError):
    """One or more cells raised; ``failures`` lists ``(cell_id, traceback file)``."""

    def __init__(self, message: str, failures: Sequence[tuple[str, Path]] = ()) -> None:
        super().__init__(message)
        self.failures = list(failures)


class CellsMissingError(FusionlibError, LookupError):
    """Shards are missing and computing them was not allowed (``compute_missing=False``)."""


class StaleShardWarning(UserWarning):
    """A shard file was found but cannot be used (unreadable, truncated or stale code key)."""


# ----------------------------------------------------------------------------- canonical JSON
def _canonical(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces, finite numbers only) of ``obj``."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"a cell configuration must be JSON-able with finite numbers (dicts, lists, str, "
            f"int, float, bool, None); {exc}. Convert tuples/arrays to lists and drop objects"
        ) from exc


def _slug(text: str, limit: int = 40) -> str:
    text = text.lower()
    return _SLUG_BAD.sub("-", text).strip("-")[:limit].strip("-") or "cell"


# ----------------------------------------------------------------------------- cells
@dataclasses.dataclass(frozen=True, eq=True)
class Cell:
    """One unit of work: ``compute(cell)`` depends on nothing else.

    Parameters
    ----------
    experiment:
        Name of the experiment (lower case, digits and ``_``).
    config:
        JSON-able dict (stored in its canonical JSON round-trip form: tuples become lists).
    seed:
        Integer >= 0 from which ``compute`` derives every random stream.
    label:
        Human-readable part of :attr:`cell_id` (e.g. ``"pt+cp rep 3"``); it does not enter the
        hash, which is taken over (experiment, config, seed).
    """

    experiment: str
    config: dict
    seed: int
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.experiment, str) or not _NAME.fullmatch(self.experiment):
            raise InvalidInputError(
                f"experiment names are lower case letters, digits and '_' starting with a "
                f"letter; got {self.experiment!r}")
        if not isinstance(self.config, dict):
            raise InvalidInputError(f"a cell's config must be a dict, got {self.config!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InvalidInputError(f"a cell's seed must be an int >= 0, got {self.seed!r}")
        object.__setattr__(self, "config", json.loads(_canonical(self.config)))

    def __hash__(self) -> int:
        return hash(self.cell_id)

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the canonical JSON of (experiment, config, seed)."""
        text = _canonical({"experiment": self.experiment, "config": self.config,
                           "seed": self.seed})
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    @property
    def cell_id(self) -> str:
        """``<slug of label>-<12 hex digits>``: short, stable across processes and machines
        (hashlib, not :func:`hash`), and safe as a file name."""
        return f"{_slug(self.label)}-{self.digest[:_ID_HASH_LEN]}"

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "cell_id": self.cell_id, "label": self.label,
                "seed": self.seed, "config": self.config}


@dataclasses.dataclass
class Shard:
    """The result of one cell.

    ``rows`` is a tidy frame; ``figures`` is JSON-able data for figures (numpy arrays are
    written as lists and read back as lists); ``meta`` is free-form JSON-able information
    (e.g. the device used). A *provisional* shard records a result that depends on something
    outside the code key (e.g. "dataset not on this machine"): it is written, so that a
    workflow job has its output, but every later run recomputes it instead of reading it.
    ``header`` is filled when a shard is read from disk.
    """

    rows: pd.DataFrame
    figures: dict = dataclasses.field(default_factory=dict)
    meta: dict = dataclasses.field(default_factory=dict)
    provisional: bool = False
    header: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rows, pd.DataFrame):
            raise InvalidInputError(
                f"a shard's rows must be a pandas DataFrame, got {type(self.rows).__name__}")
        if self.figures is None:
            self.figures = {}
        if not isinstance(self.figures, dict) or not isinstance(self.meta, dict):
            raise InvalidInputError("a shard's figures and meta must be dicts")


# ----------------------------------------------------------------------------- experiments
@dataclasses.dataclass(frozen=True)
class Experiment:
    """A grid of cells and the function that computes one.

    Parameters
    ----------
    name:
        Registry name, also the folder of its shards.
    grid:
        ``grid(scale, seed) -> list[Cell]``: the cells at ``scale`` for root seed ``seed``.
    compute:
        ``compute(cell) -> Shard``, a pure function of the cell.
    modules:
        Dotted names of the modules holding the experiment's code (default: the module of
        ``compute``). Their source and every ``fusionlib`` module they import make the code key.
    scales:
        Scales the experiment has cells for (default: all).
    description:
        One line shown by ``list``.
    """

    name: str
    grid: Callable[[str, int], list[Cell]]
    compute: Callable[[Cell], Shard]
    modules: tuple[str, ...] = ()
    scales: tuple[str, ...] = SCALES
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise InvalidInputError(
                f"experiment names are lower case letters, digits and '_'; got {self.name!r}")
        if not callable(self.grid) or not callable(self.compute):
            raise InvalidInputError(f"experiment {self.name!r}: grid and compute must be callable")
        modules = tuple(self.modules) or (self.compute.__module__,)
        object.__setattr__(self, "modules", modules)
        for s in self.scales:
            validate_scale(s)

    def check_scale(self, scale: object) -> str:
        validate_scale(scale)
        if scale not in self.scales:
            raise InvalidInputError(
                f"experiment {self.name!r} has no cells at scale {scale!r}; allowed values are "
                f"{', '.join(self.scales)}")
        return str(scale)

    def cells(self, scale: str, seed: int = 0) -> list[Cell]:
        """The cells at ``scale`` for root seed ``seed`` (validated: unique ids, right name)."""
        self.check_scale(scale)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InvalidInputError(f"the root seed must be an int >= 0, got {seed!r}")
        cells = list(self.grid(scale, seed))
        seen: dict[str, Cell] = {}
        for c in cells:
            if not isinstance(c, Cell) or c.experiment != self.name:
                raise InvalidInputError(
                    f"experiment {self.name!r}: grid() returned {c!r}, not a Cell of this "
                    "experiment")
            if c.cell_id in seen:
                raise InvalidInputError(
                    f"experiment {self.name!r}: two cells share the id {c.cell_id} (same "
                    "config and seed); make each cell's config distinct")
            seen[c.cell_id] = c
        return cells


#: name -> experiment; filled by :func:`register` (paper packages call it on import)
EXPERIMENTS: dict[str, Experiment] = {}
_loaded = False


def register(experiment: Experiment) -> Experiment:
    """Add ``experiment`` to :data:`EXPERIMENTS` and return it.

    Registering a name again replaces the entry when it comes from the same modules (a module
    re-imported or reloaded in a notebook); a different experiment under a taken name is an
    error.
    """
    if not isinstance(experiment, Experiment):
        raise InvalidInputError(f"register() takes an Experiment, got {experiment!r}")
    old = EXPERIMENTS.get(experiment.name)
    if old is not None and old is not experiment and old.modules != experiment.modules:
        raise InvalidInputError(
            f"experiment name {experiment.name!r} is already registered by {old.modules}; "
            "choose another name")
    EXPERIMENTS[experiment.name] = experiment
    return experiment


def _registering_modules() -> list[str]:
    extra = [m.strip() for m in os.environ.get(ENV_MODULES, "").split(",") if m.strip()]
    return [*EXPERIMENT_MODULES, *extra]


def load_experiments(modules: Iterable[str] | None = None, *,
                     until: str | None = None) -> dict[str, Experiment]:
    """Import the registering modules (default: :data:`EXPERIMENT_MODULES` plus the
    comma-separated ``FUSIONLIB_CELL_MODULES``); returns :data:`EXPERIMENTS`.

    With ``until``, stop as soon as that experiment is registered (a cell job imports only
    the paper package it needs).
    """
    global _loaded
    everything = modules is None
    for name in _registering_modules() if modules is None else modules:
        if until is not None and until in EXPERIMENTS:
            return EXPERIMENTS
        importlib.import_module(name)
    if everything:
        _loaded = True
    return EXPERIMENTS


def experiment_names() -> list[str]:
    """Registered experiment names (after loading the registering modules), sorted."""
    if not _loaded:
        load_experiments()
    return sorted(EXPERIMENTS)


def get_experiment(name: str | Experiment) -> Experiment:
    """The registered experiment ``name``; an unknown name is an error naming the known ones."""
    if isinstance(name, Experiment):
        return name
    if name not in EXPERIMENTS and not _loaded:
        load_experiments(until=name if isinstance(name, str) else None)
    if name not in EXPERIMENTS:
        raise InvalidInputError(
            f"unknown experiment {name!r}; allowed values are {', '.join(sorted(EXPERIMENTS))}")
    return EXPERIMENTS[name]


# ----------------------------------------------------------------------------- paths
def default_root() -> Path:
    """``$FUSIONLIB_CELLS`` if set, else ``<repo>/results/cells``."""
    env = os.environ.get(ENV_ROOT)
    return Path(env) if env else REPO / "results" / "cells"


def _root(root: str | os.PathLike[str] | None) -> Path:
    return Path(root) if root is not None else default_root()


def shard_path(root: str | os.PathLike[str] | None, experiment: str, scale: str,
               cell_id: str) -> Path:
    """``<root>/<experiment>/<scale>/<cell_id>.shard.json``."""
    return _root(root) / experiment / scale / f"{cell_id}{SHARD_SUFFIX}"


def error_path(root: str | os.PathLike[str] | None, experiment: str, scale: str,
               cell_id: str) -> Path:
    """``<root>/<experiment>/<scale>/<cell_id>.error.txt`` (traceback of a failed compute)."""
    return _root(root) / experiment / scale / f"{cell_id}{ERROR_SUFFIX}"


# ----------------------------------------------------------------------------- code key
def _module_source(name: str) -> tuple[str, Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise InvalidInputError(f"cannot find the source file of module {name!r}")
    return name, Path(spec.origin)


class _DropMachinery(ast.NodeTransformer):
    """Replace imports of the cell machinery by ``pass`` (it is not part of the key)."""

    def _hits(self, names: Iterable[str]) -> bool:
        return any(n == m or n.startswith(m + ".") for n in names for m in MACHINERY)

    def visit_Import(self, node: ast.Import) -> ast.AST:
        return ast.Pass() if self._hits(a.name for a in node.names) else node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        mod = node.module or ""
        if node.level == 0 and self._hits([mod, *(f"{mod}.{a.name}" for a in node.names)]):
            return ast.Pass()
        return node


def _key_files(modules: Sequence[str]) -> list[tuple[str, Path]]:
    """(name in the key, file) of the modules and their fusionlib dependencies, sorted."""
    files: dict[str, Path] = {}
    for name in modules:
        _, path = _module_source(name)
        try:
            rel = str(path.resolve().relative_to(PACKAGE))
        except ValueError:  # a module outside fusionlib (tests): named by its dotted name
            rel = f"<{name}>"
        if name not in MACHINERY:
            files[rel] = path
        tree = _DropMachinery().visit(ast.parse(path.read_text(encoding="utf-8")))
        for dep in fusionlib_dependencies(ast.unparse(ast.fix_missing_locations(tree))):
            files.setdefault(dep, PACKAGE / dep)
    for m in MACHINERY:  # never part of the key, even if reached through another module
        files.pop(str(_module_source(m)[1].resolve().relative_to(PACKAGE)), None)
    return sorted(files.items())


def code_key(experiment: str | Experiment) -> str:
    """SHA-256 of the experiment's code, its fusionlib dependencies, the lock files
    (:data:`LOCK_FILES`) and :data:`SHARD_FORMAT` (see the module docstring)."""
    exp = get_experiment(experiment)
    h = hashlib.sha256(f"fusionlib-cells-format-{SHARD_FORMAT}\0".encode())
    for rel, path in _key_files(exp.modules):
        h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    for lock in LOCK_FILES:
        h.update(lock.name.encode() + b"\0")
        h.update(lock.read_bytes() if lock.is_file() else b"<absent>")
    return h.hexdigest()


# ----------------------------------------------------------------------------- frames as JSON
def _json_default(obj: Any) -> Any:
    # numpy arrays and scalars, paths, frames inside figure data
    if isinstance(obj, pd.DataFrame):
        return frame_to_json(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to a shard; use JSON-able figure data")


def _plain(value: Any) -> Any:
    if value is None or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, list | dict | str):
        value = value.item()  # numpy / pandas scalars
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, pd.Timestamp | _dt.datetime | _dt.date):
        return value.isoformat()
    return value


def frame_to_json(df: pd.DataFrame) -> dict[str, Any]:
    """A JSON-able dict of ``df`` (columns, dtypes, rows as lists; the index is dropped).

    Floats keep full precision (``repr``); NaN becomes ``null``; infinities become the strings
    ``"inf"`` / ``"-inf"`` in float columns. :func:`frame_from_json` reverses it.
    """
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"expected a DataFrame, got {type(df).__name__}")
    if df.columns.has_duplicates:
        raise InvalidInputError(f"a shard frame needs unique column names, got {list(df.columns)}")
    cols = [str(c) for c in df.columns]
    data = [[_plain(v) for v in row] for row in df.itertuples(index=False, name=None)]
    return {"columns": cols, "dtypes": [str(t) for t in df.dtypes], "data": data}


_INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def frame_from_json(obj: dict[str, Any]) -> pd.DataFrame:
    """The frame written by :func:`frame_to_json`."""
    cols, dtypes, data = obj["columns"], obj["dtypes"], obj["data"]
    if len(cols) != len(dtypes) or any(len(r) != len(cols) for r in data):
        raise ValueError("frame JSON: columns, dtypes and rows disagree")
    df = pd.DataFrame(data, columns=cols, dtype=object) if data else pd.DataFrame(
        {c: pd.Series([], dtype=object) for c in cols})
    for c, t in zip(cols, dtypes, strict=True):
        if t.startswith(("float", "Float")):
            df[c] = pd.to_numeric(df[c].map(_INFINITIES.get, na_action=None).where(
                df[c].isin(list(_INFINITIES)), df[c]), errors="raise").astype(t)
        elif t != "object":
            with contextlib.suppress(TypeError, ValueError):
                df[c] = df[c].astype(t)
    return df


# ----------------------------------------------------------------------------- shard files
def write_shard(path: str | os.PathLike[str], cell: Cell, shard: Shard, key: str, *,
                scale: str, seconds: float | None = None) -> Path:
    """Write ``shard`` of ``cell`` to ``path`` atomically (complete or absent)."""
    if not isinstance(shard, Shard):
        raise InvalidInputError(
            f"compute() of {cell.experiment!r} returned {type(shard).__name__}, not a Shard")
    obj = {
        "format": SHARD_FORMAT,
        "cell": cell.to_dict(),
        "scale": scale,
        "code_key": key,
        "provisional": bool(shard.provisional),
        "versions": package_versions(),
        "seconds": None if seconds is None else round(float(seconds), 3),
        "written_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "meta": shard.meta,
        "rows": frame_to_json(shard.rows),
        "figures": shard.figures,
    }
    # compact JSON (bootstrap tables and snapshots are long); atomic: complete or absent
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)
    return atomic_write_text(path, text + "\n")


def _read(path: Path) -> dict[str, Any]:
    obj = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(obj, dict) or "rows" not in obj or "code_key" not in obj:
        raise ValueError("not a shard file")
    return obj


def load_shard(path: str | os.PathLike[str], expected_key: str, cell: Cell | None = None,
               *, quiet: bool = False) -> Shard | None:
    """The shard at ``path`` if it is complete, of the current code and of ``cell``; else None.

    A missing file gives None silently; a truncated or unreadable file, a shard of another
    code key, format or cell gives None with a :class:`StaleShardWarning` naming the file (the
    caller recomputes it and overwrites the file). A provisional shard gives None silently.
    """
    path = Path(path)
    if not path.is_file():
        return None

    def reject(why: str) -> None:
        if not quiet:
            warnings.warn(f"shard {path} {why}; it is treated as missing and recomputed",
                          StaleShardWarning, stacklevel=3)

    try:
        obj = _read(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        reject(f"is unreadable or truncated ({type(exc).__name__}: {str(exc)[:120]})")
        return None
    if obj.get("format") != SHARD_FORMAT:
        reject(f"has format {obj.get('format')!r}, not {SHARD_FORMAT}")
        return None
    if obj.get("code_key") != expected_key:
        reject(f"was computed by other code or another environment (code key "
               f"{str(obj.get('code_key'))[:12]}..., now {expected_key[:12]}...)")
        return None
    if cell is not None and obj.get("cell", {}).get("cell_id") != cell.cell_id:
        reject(f"belongs to cell {obj.get('cell', {}).get('cell_id')!r}, not {cell.cell_id!r}")
        return None
    if obj.get("provisional"):
        return None
    try:
        rows = frame_from_json(obj["rows"])
    except (KeyError, TypeError, ValueError) as exc:
        reject(f"has an unreadable frame ({type(exc).__name__}: {str(exc)[:120]})")
        return None
    header = {k: v for k, v in obj.items() if k not in ("rows", "figures", "meta")}
    return Shard(rows, obj.get("figures") or {}, obj.get("meta") or {}, False, header)


# ----------------------------------------------------------------------------- running cells
def _compute_one(exp: Experiment, cell: Cell, scale: str, key: str, root: Path
                 ) -> tuple[Shard | None, Path | None]:
    """Compute and write one cell; on failure write its traceback and return (None, log)."""
    path = shard_path(root, exp.name, scale, cell.cell_id)
    log = error_path(root, exp.name, scale, cell.cell_id)
    t0 = time.perf_counter()
    try:
        shard = exp.compute(cell)
        write_shard(path, cell, shard, key, scale=scale, seconds=time.perf_counter() - t0)
    except Exception:  # one failing cell must not stop the others; reported at the end
        atomic_write_text(log, (
            f"cell {cell.cell_id} of experiment {exp.name!r} at scale {scale!r} failed after "
            f"{time.perf_counter() - t0:.1f} s\nconfig: {_canonical(cell.config)}\n"
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
    root = _root(root)
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
        from tqdm.auto import tqdm

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
    root = _root(root)
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
                root: str | os.PathLike[str] | None = None, *, key: str | None = None) -> str:
    """``"done"`` (a current shard), ``"stale"`` (a shard that will be recomputed: unreadable,
    truncated, of other code, or provisional), ``"failed"`` (no shard, a traceback file) or
    ``"missing"``."""
    exp = get_experiment(experiment)
    path = shard_path(root, exp.name, scale, cell.cell_id)
    if path.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StaleShardWarning)
            ok = load_shard(path, key or code_key(exp), cell, quiet=True) is not None
        return "done" if ok else "stale"
    return "failed" if error_path(root, exp.name, scale, cell.cell_id).is_file() else "missing"


def notebook_status(notebook: str | os.PathLike[str], scale: str, seed: int = 0,
                    out_dir: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """``(runner key, status)`` of an executed notebook, as the notebook runner judges it
    (:func:`fusionlib.compendium.runner.run_all`, ``params={"seed": seed}``): ``"done"`` when
    ``<out>/<stem>.ipynb`` exists and ``<out>/<stem>.stamp.json`` holds the current key,
    ``"missing"`` without the ``.ipynb``, else ``"stale"``."""
    path = Path(notebook).resolve()
    out = Path(out_dir).resolve() if out_dir else (REPO / "book" / "executed").resolve()
    extra = sorted(out.glob("*/claims.csv")) if path.stem == SCORECARD else None
    key = notebook_key(path, scale, {"seed": seed}, extra)
    if not (out / f"{path.stem}.ipynb").is_file():
        return key, "missing"
    try:  # the runner's stamp file (runner._stamp_path)
        stamped = json.loads((out / f"{path.stem}.stamp.json").read_text()).get("key")
    except (OSError, ValueError, AttributeError):
        stamped = None
    return key, "done" if stamped == key else "stale"


# ----------------------------------------------------------------------------- command line
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
    return p


def main(argv: list[str] | None = None) -> int:
    """Command line; unknown experiments, scales or cells print one line on stderr, exit 2."""
    args = _parser().parse_args(argv)
    try:
        validate_scale(args.scale)
        if args.seed < 0:
            raise InvalidInputError(f"--seed must be an integer >= 0, got {args.seed}")
        root = _root(args.root)
        if args.command in ("list", "plan"):
            names = args.experiment or experiment_names()
            for n in names:
                get_experiment(n)
            rows = _cell_rows(names, args.scale, args.seed, root,
                              args.command == "plan" or args.status)
            if args.command == "plan":
                notebooks = {}
                for nb in args.notebook:
                    if not nb.is_file():
                        raise InvalidInputError(f"notebook {nb} not found")
                    key, status = notebook_status(nb, args.scale, args.seed, args.out)
                    notebooks[nb.stem] = {"key": key, "status": status}
                print(json.dumps({"scale": args.scale, "seed": args.seed, "root": str(root),
                                  "cells": rows, "code_keys": {n: code_key(n) for n in names},
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


if __name__ == "__main__":
    # run the imported module's main, not this __main__ copy: the paper packages register
    # into fusionlib.compendium.cells.EXPERIMENTS, which is a different dict from __main__'s
    sys.exit(importlib.import_module("fusionlib.compendium.cells").main())
