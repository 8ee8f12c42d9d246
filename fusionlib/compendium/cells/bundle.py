"""Results bundles: the shards of a scale, carried from one checkout to another.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.

A bundle is one ``.tar.gz`` holding ``manifest.json`` and the current shards of a scale, under
``cells/<experiment>/<scale>/<cell_id>.shard.json``. The manifest lists, for every shard, the
cell, its code key, the SHA-256 of the file and of its result part, the device, machine, wall
time and commit it was computed with, and, for the bundle, the environment (package versions,
SHA-256 of the lock files), the machine it was made on, the commit, and ``metadata`` for a
deposit (Zenodo, RO-Crate: title, version, licence, creators, related identifiers, read from the
repository's ``CITATION.cff``; :func:`bundle_metadata`).

:func:`export_bundle` writes one (``make export-results``). :func:`import_bundle`
(``make import-results``) reads a bundle as untrusted input
(:mod:`fusionlib.compendium.cells.bundle_checks`: bounded reading, member names, manifest, and
each shard's own header against its name and the manifest; a bundle that fails those is refused
whole and nothing is installed). Then it checks every shard against this checkout: a file whose
bytes differ from the manifest, a shard altered after it was written (its own hashes), a cell
that is not in this checkout's grid and a shard of other code (another code key: stale here)
are refused, each named with its reason; the rest are installed all at once (each written
beside its destination first, then all renamed into place; install paths come only from the
checked member names) and recorded in a ledger (``<root>/_imports/<bundle>.json``).
:func:`verify_bundle` (``make verify-results``) recomputes a few installed cells here and
compares them, and :func:`~fusionlib.compendium.cells.origin.bundle_origin` says where the
shards of an experiment came from (this machine, or a bundle made on which machine and device,
and when); both live in :mod:`fusionlib.compendium.cells.origin`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import fnmatch
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fusionlib.compendium.cells.bundle_checks import (
    BUNDLE_FORMAT,
    MANIFEST,
    MAX_MEMBER_BYTES,
    MAX_TOTAL_BYTES,
    MEMBER,
    check_manifest,
    check_root,
    check_shard,
    read_archive,
    sha256_file,
    target_path,
)
from fusionlib.compendium.cells.bundle_meta import CITATION, bundle_metadata
from fusionlib.compendium.cells.registry import experiment_names, get_experiment
from fusionlib.compendium.cells.shardfile import read_shard_file, this_machine
from fusionlib.compendium.cells.store import (
    ERROR_SUFFIX,
    LOCK_FILES,
    REPO,
    SHARD_SUFFIX,
    code_key,
    load_shard,
    resolve_root,
    shard_path,
)
from fusionlib.compendium.provenance import git_commit, package_versions
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write, atomic_write_json

__all__ = ["BUNDLE_FORMAT", "LEDGER_DIR", "MANIFEST", "CITATION", "UNLISTED", "ExportReport",
           "ImportReport", "export_bundle", "import_bundle", "bundle_metadata"]

#: folder under the shard root holding one ledger per imported bundle (not an experiment name:
#: those start with a letter)
LEDGER_DIR = "_imports"
_MEMBER = MEMBER
#: the reason given for a file of the archive that the manifest does not list
UNLISTED = "not listed in the manifest"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _n(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


@dataclasses.dataclass
class ExportReport:
    """What :func:`export_bundle` wrote: the archive, the shards in it, the cells left out."""

    path: Path
    shards: int
    missing: list[dict[str, str]]


#: short names of the reasons a shard is refused, for the counts of :meth:`ImportReport.summary`
_REASONS = (("altered", "altered"), ("stale", "stale here"),
            ("not a cell", "not in this checkout's grid"),
            ("unknown experiment", "of an unknown experiment"),
            ("listed in the manifest but absent", "absent from the archive"),
            ("provisional", "provisional"))


@dataclasses.dataclass
class ImportReport:
    """What :func:`import_bundle` did: installed shard paths (``replaced`` of them overwrote a
    different local shard), the refused members with their reasons (shards the manifest lists,
    and files it does not list: reason :data:`UNLISTED`), and ``listed``, the number of shards
    the manifest lists."""

    installed: list[Path]
    replaced: int
    refused: list[tuple[str, str]]
    ledger: Path | None
    listed: int = 0

    def counts(self) -> dict[str, int]:
        """``{short reason: number of refused listed shards}`` and ``{"unlisted": files}``."""
        out: dict[str, int] = {}
        for _, why in self.refused:
            short = "unlisted" if why == UNLISTED else next(
                (name for start, name in _REASONS if why.startswith(start)), "refused")
            out[short] = out.get(short, 0) + 1
        return out

    def summary(self) -> str | None:
        """One line when anything was refused (how many of the listed shards, and why; how
        many files the manifest does not list; how many were installed); else None."""
        counts = self.counts()
        unlisted = counts.pop("unlisted", 0)
        shards = sum(counts.values())
        if not shards and not unlisted:
            return None
        parts = []
        if shards:
            why = ", ".join(f"{k} {name}" for name, k in counts.items())
            parts.append(f"{shards} of {_n(self.listed, 'shard')} listed in the manifest "
                         f"({why})")
        if unlisted:
            parts.append(f"{_n(unlisted, 'file')} the manifest does not list")
        return (f"refused {' and '.join(parts)}; installed {len(self.installed)} of "
                f"{_n(self.listed, 'listed shard')}")


# ----------------------------------------------------------------------------- export
def _environment() -> dict[str, Any]:
    locks = {p.name: _sha256(p.read_bytes()) if p.is_file() else None for p in LOCK_FILES}
    return {"versions": package_versions(), "lock_sha256": locks}


def _entry(exp: str, scale: str, cell_id: str, data: bytes) -> dict[str, Any]:
    obj = read_shard_file(data)
    result, run = obj["result"], obj["run"]
    return {"experiment": exp, "cell_id": cell_id, "label": result["cell"].get("label", ""),
            "member": f"cells/{exp}/{scale}/{cell_id}{SHARD_SUFFIX}",
            "code_key": result["code_key"], "file_sha256": _sha256(data),
            "result_sha256": obj["result_sha256"], "run_sha256": obj["run_sha256"],
            "device": run.get("device"), "machine": run.get("machine"),
            "seconds": run.get("seconds"), "written_utc": run.get("written_utc"),
            "commit": run.get("commit"),
            **({"adopted_from": run["adopted_from"]} if run.get("adopted_from") else {})}


def _nothing_to_export(root: Path, scale: str, seed: int, names: Sequence[str],
                       missing: Sequence[dict[str, Any]]) -> str:
    """Why no shard could be exported: none computed, stale ones, or shard files that belong to
    no cell of this grid (the grid depends on the root seed and on the data sets present);
    ``names``: the experiments that run at ``scale``."""
    head = f"no current shard at scale {scale!r} (seed {seed}) under {root}"
    stale = sum(m["status"] == "stale" for m in missing)
    wanted = {(m["experiment"], m["cell_id"]) for m in missing}
    strays = sorted(
        f"{n}/{scale}/{p.name}" for n in names if (root / n / scale).is_dir()
        for p in (root / n / scale).glob(f"*{SHARD_SUFFIX}")
        if (n, p.name[: -len(SHARD_SUFFIX)]) not in wanted)
    if strays:
        data = os.environ.get("FUSIONLIB_DATA", "<repository>/data")
        return (f"{head}: {len(strays)} shard file(s) there belong to no cell of this grid "
                f"(e.g. {strays[0]}). The grid depends on the root seed (--seed) and on the data "
                f"sets present in the data folder ({data}; FUSIONLIB_DATA): export with the "
                "seed and the data folder the cells were computed with")
    if stale:
        return (f"{head}: {stale} shard(s) are stale (computed by other code or other pins): "
                f"recompute them (make cells SCALE={scale}), then export")
    return f"{head}: compute the cells first (make cells SCALE={scale}), then export"


def export_bundle(scale: str, *, seed: int = 0, root: str | os.PathLike[str] | None = None,
                  out: str | os.PathLike[str] | None = None,
                  experiments: Sequence[str] | None = None,
                  citation: str | os.PathLike[str] | None = None,
                  cells: Sequence[str] | None = None) -> ExportReport:
    """Write the current shards of every experiment (or ``experiments``) at ``scale`` and root
    seed ``seed`` to one archive with its manifest; returns what was written.

    ``cells``: only the cells whose id matches one of these shell-style patterns
    (:func:`fnmatch.fnmatchcase`; an id matches itself, ``"pt-gp-*"`` a method's cells), to
    ship a grid in parts; a pattern that matches no cell of the grid is an error.

    Cells without a current shard are left out and listed in the manifest (``missing``); a
    scale with no current shard at all, a shard larger than a bundle member may be
    (:data:`~fusionlib.compendium.cells.bundle_checks.MAX_MEMBER_BYTES`), a shard root that is
    not a folder and an ``out`` that cannot be written are errors. ``out`` defaults to
    ``results/bundles/fusionlib-results-<scale>-seed<seed>-<commit>-<time>.tar.gz``; the
    manifest's ``metadata`` comes from ``citation`` (default :data:`CITATION`).
    """
    root = check_root(resolve_root(root))
    names = list(experiments) if experiments else experiment_names()
    entries, members, missing, total = [], {}, [], 0
    patterns, matched = list(cells or []), set()
    for name in names:
        exp = get_experiment(name)
        if scale not in exp.scales:
            continue
        key = code_key(exp)
        for cell in exp.cells(scale, seed):
            if patterns:
                hits = {p for p in patterns if fnmatch.fnmatchcase(cell.cell_id, p)}
                if not hits:
                    continue
                matched |= hits
            path = shard_path(root, exp.name, scale, cell.cell_id)
            if load_shard(path, key, cell, quiet=True) is None:
                missing.append({"experiment": exp.name, "cell_id": cell.cell_id,
                                "status": "stale" if path.is_file() else "missing"})
                continue
            data = path.read_bytes()
            total += len(data)
            if len(data) > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
                raise InvalidInputError(
                    f"shard {path} ({len(data) / 2**20:.1f} MiB) would make the bundle larger "
                    f"than an import reads ({MAX_MEMBER_BYTES >> 20} MiB a shard, "
                    f"{MAX_TOTAL_BYTES >> 20} MiB in all): export fewer experiments at once "
                    "(--experiment)")
            entry = _entry(exp.name, scale, cell.cell_id, data)
            entries.append(entry)
            members[entry["member"]] = data
    unmatched = [p for p in patterns if p not in matched]
    if unmatched:
        raise InvalidInputError(
            f"--cell {unmatched[0]!r} matches no cell of {', '.join(names)} at scale {scale!r} "
            f"(seed {seed}); list the ids with: python -m fusionlib.compendium.cells list "
            f"--scale {scale} --seed {seed}")
    if not entries:
        ran = [n for n in names if scale in get_experiment(n).scales]
        raise InvalidInputError(_nothing_to_export(root, scale, seed, ran, missing))
    commit = git_commit()
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(out) if out else (REPO / "results" / "bundles" /
                                 f"fusionlib-results-{scale}-seed{seed}-{commit[:12]}-{stamp}.tar.gz")
    if out.is_dir():
        raise InvalidInputError(f"--out {out} is a folder; give the archive's file name, e.g. "
                                f"{out / 'results.tar.gz'} (make: BUNDLE=<file>)")
    manifest = {
        "bundle_format": BUNDLE_FORMAT, "scale": scale, "seed": seed, "created_utc": _now(),
        "machine": this_machine(), "commit": commit, "environment": _environment(),
        "metadata": bundle_metadata(scale, seed, commit, citation=citation),
        "devices": sorted({str(e["device"]) for e in entries}),
        # compute time spent for this bundle; an adopted shard's seconds are its twin's
        "wall_seconds": round(sum(e["seconds"] or 0.0 for e in entries
                                  if not e.get("adopted_from")), 3),
        "adopted_seconds": round(sum(e["seconds"] or 0.0 for e in entries
                                     if e.get("adopted_from")), 3),
        # a part of the grid on purpose (--cell): the cells of the grid left out are not missing
        "selected_cells": patterns or None,
        "code_keys": {e["experiment"]: e["code_key"] for e in entries},
        "shards": entries, "missing": missing}
    blob = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()

    def write(tmp: Path) -> None:
        with tarfile.open(tmp, "w:gz") as tar:
            for name, data in [(MANIFEST, blob), *sorted(members.items())]:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))

    try:
        atomic_write(out, write)
    except OSError as exc:
        raise InvalidInputError(
            f"cannot write the bundle to {out} ({type(exc).__name__}: {exc}): give --out "
            "(make: BUNDLE=) a file name in a writable folder") from exc
    return ExportReport(out, len(entries), missing)


# ----------------------------------------------------------------------------- import
def import_bundle(bundle: str | os.PathLike[str], *,
                  root: str | os.PathLike[str] | None = None) -> ImportReport:
    """Verify every shard of ``bundle`` and install those that pass (see the module
    docstring); returns what was installed and what was refused, and why. A bundle refused
    whole, or that cannot be read or installed, is an :class:`InvalidInputError` (nothing
    installed)."""
    bundle, root = Path(bundle), check_root(resolve_root(root))
    if not bundle.is_file():
        raise InvalidInputError(f"bundle {bundle} not found; give the path of a .tar.gz written "
                                "by `make export-results` (BUNDLE=...)")
    files = read_archive(bundle)
    manifest = check_manifest(bundle, files.pop(MANIFEST, None))
    scale, seed, entries = manifest["scale"], manifest["seed"], manifest["shards"]
    listed = {e["member"] for e in entries}
    refused = [(name, UNLISTED) for name in sorted(set(files) - listed)]
    cache: dict[str, Any] = {}
    accepted: list[tuple[dict[str, Any], bytes]] = []
    for entry in entries:  # every check (a bundle refused whole raises) before any write
        data = files.get(entry["member"])
        why = check_shard(bundle, entry, data, scale, seed, cache)
        if why is None:
            accepted.append((entry, data))
        else:
            refused.append((entry["member"], why))
    targets = [(target_path(root, e["member"]), data) for e, data in accepted]
    installed, replaced = _install(root, targets)
    ledger = None
    if installed:
        ledger = root / LEDGER_DIR / f"{bundle.name.removesuffix('.tar.gz')}.json"
        try:
            atomic_write_json(ledger, {
                "bundle": bundle.name, "bundle_sha256": sha256_file(bundle),
                "imported_utc": _now(), "imported_on": this_machine(),
                **{k: manifest.get(k) for k in ("scale", "seed", "created_utc", "machine",
                                                "commit", "devices", "environment")},
                "shards": {e["member"].removeprefix("cells/"): {
                    "run_sha256": e["run_sha256"], "result_sha256": e["result_sha256"]}
                    for e, _ in accepted}})
        except OSError as exc:
            raise InvalidInputError(
                f"the {len(installed)} shards of bundle {bundle} were installed, but its ledger "
                f"{ledger} could not be written ({type(exc).__name__}: {exc}); `origin` will "
                "not name the bundle. Make the folder writable and import again") from exc
    return ImportReport(installed, replaced, refused, ledger, len(entries))


def _stage(path: Path, data: bytes) -> Path:
    """``data`` in a new temporary file beside ``path`` (the name :mod:`fusionlib.io` gives its
    temporaries: ``.<name>.<8 characters>.tmp``), flushed to disk, with a plain file's mode."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(name, 0o666 & ~_umask())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _install(root: Path, targets: list[tuple[Path, bytes]]) -> tuple[list[Path], int]:
    """Write every accepted shard beside its destination, then rename them all into place;
    a failure while writing removes what was written (nothing is installed)."""
    staged: list[tuple[Path, Path, bytes]] = []
    try:
        for path, data in targets:
            path.parent.mkdir(parents=True, exist_ok=True)
            staged.append((_stage(path, data), path, data))
    except OSError as exc:
        for tmp, _, _ in staged:
            tmp.unlink(missing_ok=True)
        raise InvalidInputError(
            f"cannot write under the shard root {root} ({type(exc).__name__}: {exc}); nothing "
            "was installed. Give --root (or FUSIONLIB_CELLS) a writable folder") from exc
    replaced, done = 0, []
    try:
        for tmp, path, data in staged:
            replaced += path.is_file() and path.read_bytes() != data
            os.replace(tmp, path)
            path.with_name(path.name.removesuffix(SHARD_SUFFIX) + ERROR_SUFFIX).unlink(
                missing_ok=True)
            done.append(path)
    except OSError as exc:
        for tmp, _, _ in staged:
            tmp.unlink(missing_ok=True)
        raise InvalidInputError(
            f"installing stopped after {len(done)} of {len(staged)} shards under {root} "
            f"({type(exc).__name__}: {exc}); import the bundle again") from exc
    return done, int(replaced)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
