"""The shard file: results apart from timings, each part with its content hash.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.

Layout (format 2), one compact JSON object with sorted keys::

    {"format": 2,
     "result": {"cell", "scale", "code_key", "provisional", "meta", "rows", "figures"},
     "result_sha256": "<sha256 of the canonical JSON of result>",
     "run": {"seconds", "written_utc", "machine", "platform", "device", "commit", "versions",
             "slurm_job_id", "timing": {"columns", "rows", "figures"},
             "adopted_from" (only in a shard adopted from the same cell at another scale,
             :func:`adopt_shard`)},
     "run_sha256": "<sha256 of the canonical JSON of run>"}

``result`` is what the cell computed and nothing else: two runs of one cell on one kind of
device give byte-identical ``result`` parts (and equal ``result_sha256``), wherever and whenever
they ran. Everything that differs from run to run lives in ``run``: the wall time, the date, the
machine, the device description, the commit, the package versions, and the *timing fields* of
the shard, i.e. the row columns and top-level figure keys named in :data:`TIMING_FIELDS` (wall
seconds, iterations per second, ...), which :func:`write_shard` moves out of the result and
:func:`load_shard` puts back in their places, so a caller sees the shard it returned.

Both hashes are checked on every read: a shard edited after it was written (a value changed,
even with the right code key) is refused like a stale one and recomputed, never read.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.cells.frames import (
    frame_from_json,
    frame_to_json,
    json_default,
    json_restore,
    json_safe,
)
from fusionlib.compendium.cells.model import Cell, Shard, StaleShardWarning
from fusionlib.compendium.provenance import git_commit, package_versions
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write_text

__all__ = ["SHARD_FORMAT", "TIMING_FIELDS", "canonical_bytes", "sha256_of", "write_shard",
           "read_shard_file", "load_shard", "shard_device", "this_machine", "same_computation",
           "adopt_shard"]

#: version of the shard file layout (bump it when the layout or its meaning changes; it enters
#: every code key, so a bump recomputes every cell once)
SHARD_FORMAT = 2
#: names of row columns and top-level figure keys that hold timings, not results: they are
#: stored in the shard's ``run`` part, outside ``result`` and its hash
TIMING_FIELDS: frozenset[str] = frozenset({
    "seconds", "cpu_seconds", "it_per_s", "fit_s", "fit_seconds", "train_s", "eval_s",
    "timing", "wall_s", "elapsed_s"})


def canonical_bytes(obj: Any) -> bytes:
    """The canonical JSON of ``obj`` (sorted keys, no spaces, ASCII, finite numbers only):
    the bytes that a shard's hashes are taken over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def sha256_of(obj: Any) -> str:
    """SHA-256 (hex) of :func:`canonical_bytes` of ``obj``."""
    return hashlib.sha256(canonical_bytes(obj)).hexdigest()


def this_machine() -> str:
    """The name of this machine (``platform.node()``), as shards and bundles record it."""
    return platform.node() or "unknown"


def shard_device(meta: dict | None = None) -> str:
    """The device a cell ran on: the GPU when torch was imported (it is not imported for this),
    sees one, and the shard's ``meta["device"]`` (if any) does not say ``cpu``; else the CPU."""
    named = str((meta or {}).get("device") or "")
    torch = sys.modules.get("torch")
    if torch is not None and not named.startswith("cpu") and torch.cuda.is_available():
        return f"cuda: {torch.cuda.get_device_name(0)}"
    return f"cpu: {_cpu()}"


def _cpu() -> str:
    """The processor's model name (Linux: /proc/cpuinfo), else its architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name") and ":" in line:
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _plain(obj: Any) -> Any:
    """``obj`` as parsed back from its JSON text (the form the hashes are taken over)."""
    return json.loads(json.dumps(obj, default=json_default, allow_nan=False))


def _split(shard: Shard) -> tuple[pd.DataFrame, dict, dict]:
    """(result rows, result figures, timing part) of ``shard``."""
    rows = shard.rows
    if rows.columns.has_duplicates:
        raise InvalidInputError(
            f"a shard frame needs unique column names, got {list(rows.columns)}")
    timed = [c for c in rows.columns if str(c) in TIMING_FIELDS]
    figures = json_safe(shard.figures)
    timing = {"columns": [str(c) for c in rows.columns],
              "rows": frame_to_json(rows[timed]) if timed else None,
              "figures": {k: v for k, v in figures.items() if k in TIMING_FIELDS}}
    return (rows.drop(columns=timed), {k: v for k, v in figures.items() if k not in TIMING_FIELDS},
            timing)


def write_shard(path: str | os.PathLike[str], cell: Cell, shard: Shard, key: str, *,
                scale: str, seconds: float | None = None) -> Path:
    """Write ``shard`` of ``cell`` to ``path`` atomically (complete or absent): its result
    apart from its timings, each part with its SHA-256 (module docstring)."""
    if not isinstance(shard, Shard):
        raise InvalidInputError(
            f"compute() of {cell.experiment!r} returned {type(shard).__name__}, not a Shard")
    rows, figures, timing = _split(shard)
    meta = json_safe(shard.meta)
    result = _plain({"cell": cell.to_dict(), "scale": scale, "code_key": key,
                     "provisional": bool(shard.provisional), "meta": meta,
                     "rows": frame_to_json(rows), "figures": figures})
    run = _plain({
        "seconds": None if seconds is None else round(float(seconds), 3),
        "written_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": this_machine(), "platform": platform.platform(),
        "device": shard_device(meta), "commit": git_commit(), "versions": package_versions(),
        # the batch job that computed it, under Slurm (None elsewhere)
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"), "timing": timing})
    obj = {"format": SHARD_FORMAT, "result": result, "result_sha256": sha256_of(result),
           "run": run, "run_sha256": sha256_of(run)}
    return atomic_write_text(path, canonical_bytes(obj).decode("ascii") + "\n")


def same_computation(source: dict, target: dict) -> bool:
    """Whether cell ``target`` (a :meth:`Cell.to_dict`) computes on a CPU exactly what cell
    ``source`` computed: same experiment and seed, same configuration but for ``device``, where
    ``source`` ran on the CPU (``"cpu"``) and ``target`` asks for it or for ``"auto"`` (the CPU
    on a machine without CUDA). ``compute(cell)`` depends on nothing else (cells module)."""
    def rest(config: Any) -> Any:
        return {k: v for k, v in config.items() if k != "device"} if isinstance(config, dict) \
            else config

    mine, theirs = source.get("config"), target.get("config")
    if (source.get("experiment") != target.get("experiment") or source.get("seed") is None
            or source.get("seed") != target.get("seed") or not isinstance(mine, dict)
            or not isinstance(theirs, dict) or rest(mine) != rest(theirs)):
        return False
    device, wanted = mine.get("device", "cpu"), theirs.get("device", "cpu")
    return device == "cpu" and wanted in ("cpu", "auto")


def adopt_shard(source: str | os.PathLike[str], path: str | os.PathLike[str], cell: Cell,
                key: str, *, scale: str) -> Path:
    """Write at ``path`` (atomically) the shard of ``cell`` at ``scale`` from the shard file
    ``source``, which holds the same computation (:func:`same_computation`) at another scale.

    The result part is the source's with ``cell`` and ``scale`` in place of its own (rows,
    figures and meta unchanged); the run part is the source's -- where, when, on what device,
    at which commit and in how many seconds it was computed -- plus ``adopted_from``: the
    source's cell id, scale and result SHA-256, and when, where and at which commit it was
    adopted. Refused (:class:`InvalidInputError`, nothing written) if the source is unreadable,
    altered, provisional, of another code key or not the same computation.
    """
    try:
        obj = read_shard_file(Path(source).read_bytes())
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot adopt {source}: {exc}") from None
    result, run = obj["result"], obj["run"]
    if result["code_key"] != key:
        raise InvalidInputError(f"cannot adopt {source}: it was computed by other code (code key "
                                f"{result['code_key'][:12]}..., now {key[:12]}...)")
    if result.get("provisional"):
        raise InvalidInputError(f"cannot adopt {source}: it is provisional")
    if not str(run.get("device") or "").startswith("cpu"):
        raise InvalidInputError(f"cannot adopt {source}: it ran on {run.get('device')!r}, not "
                                "on a CPU (a GPU's numbers are not the CPU's)")
    if not same_computation(result["cell"], cell.to_dict()):
        raise InvalidInputError(f"cannot adopt {source} for cell {cell.cell_id}: not the same "
                                "computation (experiment, seed or configuration differ)")
    mine = _plain({**result, "cell": cell.to_dict(), "scale": scale})
    adopted = {"cell_id": result["cell"]["cell_id"], "scale": result["scale"],
               "result_sha256": obj["result_sha256"],
               "adopted_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
               "machine": this_machine(), "commit": git_commit()}
    theirs = _plain({**run, "adopted_from": adopted})
    out = {"format": SHARD_FORMAT, "result": mine, "result_sha256": sha256_of(mine),
           "run": theirs, "run_sha256": sha256_of(theirs)}
    return atomic_write_text(path, canonical_bytes(out).decode("ascii") + "\n")


def read_shard_file(data: bytes | str) -> dict[str, Any]:
    """The parsed shard file, after checking its format, both hashes and the shape of its parts
    (a ``cell`` object with text ``experiment`` and ``cell_id``, text ``scale`` and
    ``code_key``, objects where objects belong); raises :class:`ValueError` saying what is wrong
    (unreadable, other format, altered, malformed: a file from elsewhere is never trusted)."""
    try:
        obj = json.loads(data)
        if not isinstance(obj, dict) or "format" not in obj:
            raise ValueError("not a shard file")
        if obj["format"] != SHARD_FORMAT:
            raise ValueError(f"has format {str(obj['format'])[:40]!r}, not {SHARD_FORMAT}")
        for part in ("result", "run"):
            if not isinstance(obj.get(part), dict):
                raise ValueError(f"has no {part} part")
            if sha256_of(obj[part]) != obj.get(f"{part}_sha256"):
                raise ValueError(f"was altered after it was written (the {part} part does not "
                                 "match its SHA-256)")
    except RecursionError:
        raise ValueError("is unreadable (nested too deeply)") from None
    _check_shape(obj["result"], obj["run"])
    return obj


def _check_shape(result: dict, run: dict) -> None:
    """Raise :class:`ValueError` (``"has a malformed ..."``) unless ``result`` has a ``cell``
    object with text ``experiment`` and ``cell_id``, text ``scale`` and ``code_key``, an object
    ``rows`` and (if present) objects ``meta`` and ``figures``, and ``run`` a ``timing`` that
    is absent or an object of a ``columns`` list and ``rows`` and ``figures`` objects."""
    def need(where: str, value: Any, types: type | tuple[type, ...], what: str) -> None:
        if not isinstance(value, types):
            raise ValueError(f"has a malformed {where}: {type(value).__name__}, not {what}")

    cell = result.get("cell")
    need("result.cell", cell, dict, "an object")
    for key in ("experiment", "cell_id"):
        need(f"result.cell.{key}", cell.get(key), str, "text")
    for key in ("scale", "code_key"):
        need(f"result.{key}", result.get(key), str, "text")
    need("result.rows", result.get("rows"), dict, "an object")
    for key in ("meta", "figures"):
        need(f"result.{key}", result.get(key), (dict, type(None)), "an object")
    timing = run.get("timing")
    need("run.timing", timing, (dict, type(None)), "an object")
    for key, types, what in (("columns", list, "a list"), ("rows", dict, "an object"),
                             ("figures", dict, "an object")):
        need(f"run.timing.{key}", (timing or {}).get(key), (types, type(None)), what)


def _join(result: dict, run: dict) -> tuple[pd.DataFrame, dict]:
    """The rows and figures of the shard as ``compute`` returned them (timings put back)."""
    rows = frame_from_json(result["rows"])
    timing = run.get("timing") or {}
    if timing.get("rows"):
        timed = frame_from_json(timing["rows"])
        if len(timed) != len(rows):
            raise ValueError("timing rows and result rows differ in length")
        rows = pd.concat([rows.reset_index(drop=True), timed.reset_index(drop=True)], axis=1)
    order = timing.get("columns") or list(rows.columns)
    if sorted(order) != sorted(rows.columns):
        raise ValueError("the stored column order names other columns")
    figures = {**json_restore(result.get("figures") or {}),
               **json_restore(timing.get("figures") or {})}
    return rows[order], figures


def load_shard(path: str | os.PathLike[str], expected_key: str, cell: Cell | None = None,
               *, quiet: bool = False,
               unreadable: Callable[[str], None] | None = None) -> Shard | None:
    """The shard at ``path`` if it is complete, unaltered, of the current code and of ``cell``;
    else None.

    A missing file gives None silently; a truncated, unreadable, malformed or altered file (a
    hash that does not match), a shard of another code key, format or cell gives None with a
    :class:`StaleShardWarning` naming the file (the caller recomputes it and overwrites the
    file). A provisional shard gives None silently. ``quiet`` silences the warning;
    ``unreadable`` (if given) is called, quiet or not, with the one-line message of a file
    that cannot be read as a shard (not of one that is merely stale).
    """
    path = Path(path)
    if not path.is_file():
        return None

    def reject(why: str, broken: bool = False) -> None:
        message = f"shard {path} {why}; it is treated as missing and recomputed"
        if broken and unreadable is not None:
            unreadable(message)
        if not quiet:
            warnings.warn(message, StaleShardWarning, stacklevel=3)

    try:
        obj = read_shard_file(path.read_bytes())
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError included
        why = str(exc) if str(exc).startswith(("has ", "was ", "is ")) else (
            f"is unreadable or truncated ({type(exc).__name__}: {str(exc)[:120]})")
        reject(why, broken=not str(exc).startswith("has format"))
        return None
    except OSError as exc:
        reject(f"is unreadable ({type(exc).__name__}: {str(exc)[:120]})", broken=True)
        return None
    result, run = obj["result"], obj["run"]
    if result.get("code_key") != expected_key:
        reject(f"was computed by other code or another environment (code key "
               f"{str(result.get('code_key'))[:12]}..., now {expected_key[:12]}...)")
        return None
    got = (result.get("cell") or {}).get("cell_id")
    if cell is not None and got != cell.cell_id:
        reject(f"belongs to cell {got!r}, not {cell.cell_id!r}")
        return None
    if result.get("provisional"):
        return None
    try:
        rows, figures = _join(result, run)
        meta = json_restore(result.get("meta") or {})
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        reject(f"has an unreadable frame ({type(exc).__name__}: {str(exc)[:120]})", broken=True)
        return None
    header = {k: v for k, v in result.items() if k not in ("rows", "figures", "meta")}
    header.update({k: v for k, v in run.items() if k != "timing"})
    header.update(format=obj["format"], result_sha256=obj["result_sha256"],
                  run_sha256=obj["run_sha256"])
    return Shard(rows, figures, meta, False, header)
