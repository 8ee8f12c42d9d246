"""The grid of cells: experiments as independent, cached units of work.

See the book page "How this compendium is built" (book/design.md), "Cells and shards".

An :class:`Experiment` is a grid of :class:`Cell` objects (experiment, configuration, seed) and a
``compute`` function that turns one cell into a :class:`Shard` (tidy rows plus optional
JSON-able figure data). ``compute`` is a pure function of the cell: every random draw comes from
:mod:`fusionlib.rng` streams derived from ``cell.seed`` and the configuration.

Shards on disk
    ``<root>/<experiment>/<scale>/<cell_id>.shard.json``: one JSON file in two parts, each with
    its SHA-256 (:mod:`~fusionlib.compendium.cells.shardfile`): the *result* (the cell, the
    *code key*, the frame in a ``split``-like layout with its dtypes, the figure data), which
    two runs of a cell on one kind of device write byte-identical, and the *run* (wall time,
    date, machine, device, commit, package versions, and the timing columns and figure keys
    named in :data:`TIMING_FIELDS`). It is written (compact JSON) with
    :func:`fusionlib.io.atomic_write_text`, so a shard is either complete or absent, and both
    hashes are checked on every read, so an edited shard is recomputed, never read. The root is
    ``<repo>/results/cells`` (ignored by git) unless ``FUSIONLIB_CELLS`` names another folder.

Bundles
    The shards of a scale travel between checkouts as one archive with a manifest
    (:func:`export_bundle`, :func:`import_bundle`: every hash, cell and code key is checked on
    import); :func:`verify_bundle` recomputes a few installed cells and compares, and
    :func:`bundle_origin` says where the shards of an experiment came from.

Code key
    SHA-256 of the source of the experiment's modules and of every ``fusionlib`` module they
    import, transitively (:func:`fusionlib.compendium.runner.fusionlib_dependencies`), of the
    pinned environment (``requirements.lock`` and both torch locks, :data:`LOCK_FILES`: the key
    does not depend on which torch build is installed, so shards from GPU runners are current
    on the CPU machine that builds the book) and of :data:`SHARD_FORMAT`. A change of code or
    of the pinned environment gives a new key, and every shard written under the old key is
    *stale*: treated as missing and recomputed, never read. The cell machinery itself (this
    package and its modules, :data:`MACHINERY`) is not part of the key, nor is what only the
    machinery imports (the notebook runner, the claims code): it only stores results, and a
    change of the file layout bumps :data:`SHARD_FORMAT` instead, so editing the CLI does not
    throw away hours of GPU work.
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
    Paper packages register their experiments when imported (``fusionlib.ptgan.toys.cells``,
    ``fusionlib.fairtest.protocol.cells``, ...). This module never imports them statically (the
    compendium sits below the papers, see ``tests/test_layers.py``): every module of
    ``fusionlib`` named ``cells`` or ``*_cells`` outside the compendium is found by walking the
    package's files (:func:`experiment_modules`, no import needed), ``FUSIONLIB_CELL_MODULES``
    (comma-separated) adds others, and :func:`load_experiments` imports them on first use.

Modules
    This package's ``__init__`` is the public face of the machinery; the code lives in
    :mod:`~fusionlib.compendium.cells.model` (records), ``registry`` (registry and discovery),
    ``frames`` (frames as JSON), ``store`` (paths, code key), ``shardfile`` (the shard file),
    ``exec`` (running cells), ``bundle`` (export and import), ``origin`` (origin and
    verification), ``cli`` (command line) and ``__main__`` (``python -m``).

Command line
    ``python -m fusionlib.compendium.cells list --scale cpu [--experiment X] [--format json]``,
    ``... run EXPERIMENT CELL_ID --scale cpu``, ``... results EXPERIMENT --scale cpu``,
    ``... plan`` (what the Snakefile reads at parse time), ``... export``, ``... import BUNDLE``,
    ``... verify -n 3`` and ``... origin``; see :func:`main`.
"""

from __future__ import annotations

from fusionlib.compendium.cells import registry as _registry
from fusionlib.compendium.cells.bundle import export_bundle, import_bundle
from fusionlib.compendium.cells.cli import main
from fusionlib.compendium.cells.exec import (
    cell_status,
    notebook_status,
    present_cells,
    present_results,
    results,
    run_cell,
)
from fusionlib.compendium.cells.frames import frame_from_json, frame_to_json
from fusionlib.compendium.cells.model import (
    Cell,
    CellsFailedError,
    CellsMissingError,
    Experiment,
    Shard,
    StaleShardWarning,
)
from fusionlib.compendium.cells.origin import (
    bundle_origin,
    origin_summary,
    origin_text,
    verify_bundle,
)
from fusionlib.compendium.cells.registry import (
    ENV_MODULES,
    experiment_modules,
    experiment_names,
    get_experiment,
    load_experiments,
    register,
)
from fusionlib.compendium.cells.shardfile import TIMING_FIELDS
from fusionlib.compendium.cells.store import (
    ENV_ROOT,
    ERROR_SUFFIX,
    LOCK_FILES,
    MACHINERY,
    SHARD_FORMAT,
    SHARD_SUFFIX,
    code_key,
    default_root,
    error_path,
    key_files,
    load_shard,
    shard_path,
    write_shard,
)

#: name -> experiment: the registry that paper packages fill on import (the same dict as
#: ``fusionlib.compendium.cells.registry.EXPERIMENTS``)
EXPERIMENTS = _registry.EXPERIMENTS

__all__ = [
    "Cell", "Experiment", "Shard", "EXPERIMENTS", "MACHINERY", "SHARD_FORMAT", "LOCK_FILES",
    "ENV_ROOT", "ENV_MODULES", "SHARD_SUFFIX", "ERROR_SUFFIX",
    "CellsFailedError", "CellsMissingError", "StaleShardWarning",
    "register", "get_experiment", "experiment_names", "experiment_modules", "load_experiments",
    "default_root", "shard_path", "error_path", "code_key", "key_files", "write_shard",
    "load_shard", "results", "present_results", "present_cells", "run_cell", "cell_status",
    "notebook_status", "frame_to_json",
    "frame_from_json", "main", "TIMING_FIELDS", "export_bundle", "import_bundle",
    "verify_bundle", "bundle_origin", "origin_text", "origin_summary",
]
