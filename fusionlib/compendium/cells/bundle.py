"""Results bundles: the shards of a scale, carried from one checkout to another.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.

A bundle is one ``.tar.gz`` holding ``manifest.json`` and the current shards of a scale, under
``cells/<experiment>/<scale>/<cell_id>.shard.json``. The manifest lists, for every shard, the
cell, its code key, the SHA-256 of the file and of its result part, the device, machine, wall
time and commit it was computed with, and, for the bundle, the environment (package versions,
SHA-256 of the lock files), the machine it was made on and the commit.

:func:`export_bundle` writes one (``make export-results``). :func:`import_bundle`
(``make import-results``) checks every shard against the manifest and against this checkout:
a file whose bytes differ from the manifest, a shard altered after it was written (its own
hashes), a cell that is not in this checkout's grid and a shard of other code (another code
key: stale here) are refused, each named with its reason; the rest are installed all at once
(staged beside the shards, then renamed) and recorded in a ledger
(``<root>/_imports/<bundle>.json``). :func:`verify_bundle` (``make verify-results``)
recomputes a few installed cells here and compares them, and
:func:`~fusionlib.compendium.cells.origin.bundle_origin` says where the shards of an experiment
came from (this machine, or a bundle made on which machine and device, and when); both live in
:mod:`fusionlib.compendium.cells.origin`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fusionlib.compendium.cells.registry import experiment_names, get_experiment
from fusionlib.compendium.cells.shardfile import read_shard_file, this_machine
from fusionlib.compendium.cells.store import (
    LOCK_FILES,
    REPO,
    SHARD_SUFFIX,
    code_key,
    error_path,
    load_shard,
    resolve_root,
    shard_path,
)
from fusionlib.compendium.provenance import git_commit, package_versions
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write, atomic_write_json

__all__ = ["BUNDLE_FORMAT", "LEDGER_DIR", "MANIFEST", "ExportReport", "ImportReport",
           "export_bundle", "import_bundle"]

#: version of the bundle layout
BUNDLE_FORMAT = 1
#: folder under the shard root holding one ledger per imported bundle (not an experiment name:
#: those start with a letter)
LEDGER_DIR = "_imports"
MANIFEST = "manifest.json"
_MEMBER = re.compile(r"cells/([a-z][a-z0-9_]*)/(smoke|cpu|paper)/([a-z0-9-]+)"
                     + re.escape(SHARD_SUFFIX))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


@dataclasses.dataclass
class ExportReport:
    """What :func:`export_bundle` wrote: the archive, the shards in it, the cells left out."""

    path: Path
    shards: int
    missing: list[dict[str, str]]


@dataclasses.dataclass
class ImportReport:
    """What :func:`import_bundle` did: installed shard paths (``replaced`` of them overwrote a
    different local shard) and the refused members with their reasons."""

    installed: list[Path]
    replaced: int
    refused: list[tuple[str, str]]
    ledger: Path | None


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
            "commit": run.get("commit")}


def export_bundle(scale: str, *, seed: int = 0, root: str | os.PathLike[str] | None = None,
                  out: str | os.PathLike[str] | None = None,
                  experiments: Sequence[str] | None = None) -> ExportReport:
    """Write the current shards of every experiment (or ``experiments``) at ``scale`` and root
    seed ``seed`` to one archive with its manifest; returns what was written.

    Cells without a current shard are left out and listed in the manifest (``missing``); a
    scale with no current shard at all is an error. ``out`` defaults to
    ``results/bundles/fusionlib-results-<scale>-seed<seed>-<commit>-<time>.tar.gz``.
    """
    root = resolve_root(root)
    names = list(experiments) if experiments else experiment_names()
    entries, members, missing = [], {}, []
    for name in names:
        exp = get_experiment(name)
        if scale not in exp.scales:
            continue
        key = code_key(exp)
        for cell in exp.cells(scale, seed):
            path = shard_path(root, exp.name, scale, cell.cell_id)
            if load_shard(path, key, cell, quiet=True) is None:
                missing.append({"experiment": exp.name, "cell_id": cell.cell_id,
                                "status": "stale" if path.is_file() else "missing"})
                continue
            data = path.read_bytes()
            entry = _entry(exp.name, scale, cell.cell_id, data)
            entries.append(entry)
            members[entry["member"]] = data
    if not entries:
        raise InvalidInputError(
            f"no current shard at scale {scale!r} (seed {seed}) under {root}: compute the cells "
            f"first (make cells SCALE={scale}), then export")
    commit = git_commit()
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(out) if out else (REPO / "results" / "bundles" /
                                 f"fusionlib-results-{scale}-seed{seed}-{commit[:12]}-{stamp}.tar.gz")
    manifest = {
        "bundle_format": BUNDLE_FORMAT, "scale": scale, "seed": seed, "created_utc": _now(),
        "machine": this_machine(), "commit": commit, "environment": _environment(),
        "devices": sorted({str(e["device"]) for e in entries}),
        "wall_seconds": round(sum(e["seconds"] or 0.0 for e in entries), 3),
        "code_keys": {e["experiment"]: e["code_key"] for e in entries},
        "shards": entries, "missing": missing}
    blob = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()

    def write(tmp: Path) -> None:
        with tarfile.open(tmp, "w:gz") as tar:
            for name, data in [(MANIFEST, blob), *sorted(members.items())]:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))

    atomic_write(out, write)
    return ExportReport(out, len(entries), missing)


# ----------------------------------------------------------------------------- import
def _check_gzip(bundle: Path) -> None:
    """Read a gzip archive to its end, so that its CRC is checked (tarfile stops at the tar
    end blocks, before the gzip trailer, and would read a damaged stream without a word)."""
    with open(bundle, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return
    with gzip.open(bundle, "rb") as g:
        while g.read(1 << 20):
            pass


def _read_archive(bundle: Path) -> tuple[dict[str, Any], dict[str, bytes], list[tuple[str, str]]]:
    """(manifest, member name -> bytes, refused members) of ``bundle``; an unreadable archive or
    manifest is an :class:`InvalidInputError` (nothing is installed)."""
    refused, files = [], {}
    try:
        _check_gzip(bundle)
        with tarfile.open(bundle, "r:*") as tar:
            for info in tar:
                if not info.isfile():
                    refused.append((info.name, "not a regular file"))
                    continue
                files[info.name] = tar.extractfile(info).read()
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise InvalidInputError(
            f"bundle {bundle} is not a readable archive ({type(exc).__name__}: {exc}); it was "
            "damaged or cut short: nothing was installed. Copy it again or export a new one"
        ) from exc
    try:
        manifest = json.loads(files.pop(MANIFEST))
        if manifest.get("bundle_format") != BUNDLE_FORMAT:
            raise ValueError(f"bundle format {manifest.get('bundle_format')!r}, "
                             f"not {BUNDLE_FORMAT}")
    except (KeyError, ValueError, AttributeError) as exc:
        raise InvalidInputError(
            f"bundle {bundle} has no readable {MANIFEST} ({type(exc).__name__}: {exc}); nothing "
            "was installed. Export the bundle again with `make export-results`") from exc
    return manifest, files, refused


def _local(exp: str, scale: str, seed: int,
           cache: dict[str, tuple[set[str], str] | None]) -> tuple[set[str], str] | None:
    """(cell ids of this checkout's grid, code key here) of ``exp``; None if unknown here."""
    if exp not in cache:
        try:
            e = get_experiment(exp)
        except InvalidInputError:
            cache[exp] = None
        else:
            ids = {c.cell_id for c in e.cells(scale, seed)} if scale in e.scales else set()
            cache[exp] = (ids, code_key(e))
    return cache[exp]


def _check(entry: dict[str, Any], data: bytes | None, scale: str, seed: int,
           cache: dict[str, tuple[set[str], str] | None]) -> str | None:
    """Why the shard of ``entry`` is refused here, or None when it can be installed."""
    if data is None:
        return "listed in the manifest but absent from the archive"
    if _sha256(data) != entry.get("file_sha256"):
        return "altered: its bytes differ from the SHA-256 in the manifest"
    try:
        obj = read_shard_file(data)
    except ValueError as exc:
        return f"altered or unreadable: the shard {exc}"
    result = obj["result"]
    m = _MEMBER.fullmatch(str(entry.get("member")))
    cell = result.get("cell") or {}
    if m is None or m.group(2) != scale or (
            cell.get("experiment"), result.get("scale"), cell.get("cell_id")) != m.groups():
        return "mislabelled: the shard's cell or scale is not the one its name says"
    if obj["result_sha256"] != entry.get("result_sha256"):
        return "altered: its result hash differs from the manifest"
    local = _local(m.group(1), scale, seed, cache)
    if local is None:
        return f"unknown experiment {m.group(1)!r} in this checkout"
    ids, key = local
    if m.group(3) not in ids:
        return (f"not a cell of this checkout's grid of {m.group(1)!r} at scale {scale!r} and "
                f"seed {seed}")
    if result.get("code_key") != key:
        return (f"stale: computed by other code or other pins (code key "
                f"{str(result.get('code_key'))[:12]}..., here {key[:12]}...)")
    if result.get("provisional"):
        return "provisional (its result depends on something outside the code key)"
    return None


def import_bundle(bundle: str | os.PathLike[str], *,
                  root: str | os.PathLike[str] | None = None) -> ImportReport:
    """Verify every shard of ``bundle`` and install those that pass (see the module
    docstring); returns what was installed and what was refused, and why."""
    bundle, root = Path(bundle), resolve_root(root)
    if not bundle.is_file():
        raise InvalidInputError(f"bundle {bundle} not found; give the path of a .tar.gz written "
                                "by `make export-results` (BUNDLE=...)")
    manifest, files, refused = _read_archive(bundle)
    scale, seed = manifest.get("scale"), manifest.get("seed", 0)
    listed = {e.get("member") for e in manifest.get("shards", [])}
    refused += [(name, "not listed in the manifest") for name in sorted(set(files) - listed)]
    cache: dict[str, tuple[set[str], str] | None] = {}
    accepted: list[tuple[dict[str, Any], bytes]] = []
    for entry in manifest.get("shards", []):
        data = files.get(entry.get("member", ""))
        why = _check(entry, data, scale, seed, cache)
        if why is None:
            accepted.append((entry, data))
        else:
            refused.append((entry.get("member", "?"), why))
    installed, replaced = _install(root, scale, accepted)
    ledger = None
    if installed:
        ledger = root / LEDGER_DIR / f"{bundle.name.removesuffix('.tar.gz')}.json"
        atomic_write_json(ledger, {
            "bundle": bundle.name, "bundle_sha256": _sha256(bundle.read_bytes()),
            "imported_utc": _now(), "imported_on": this_machine(),
            **{k: manifest.get(k) for k in ("scale", "seed", "created_utc", "machine",
                                            "commit", "devices", "environment")},
            "shards": {e["member"].removeprefix("cells/"): {
                "run_sha256": e["run_sha256"], "result_sha256": e["result_sha256"]}
                for e, _ in accepted}})
    return ImportReport(installed, replaced, refused, ledger)


def _install(root: Path, scale: str, accepted: list[tuple[dict[str, Any], bytes]]
             ) -> tuple[list[Path], int]:
    """Stage every accepted shard beside the shards, then rename them all into place."""
    if not accepted:
        return [], 0
    (root / LEDGER_DIR).mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root / LEDGER_DIR))
    try:
        moves = []
        for i, (entry, data) in enumerate(accepted):
            tmp = staging / f"{i}{SHARD_SUFFIX}"
            tmp.write_bytes(data)
            os.chmod(tmp, 0o666 & ~_umask())
            moves.append((entry, tmp))
        replaced, done = 0, []
        for entry, tmp in moves:
            path = shard_path(root, entry["experiment"], scale, entry["cell_id"])
            path.parent.mkdir(parents=True, exist_ok=True)
            replaced += path.is_file() and path.read_bytes() != tmp.read_bytes()
            os.replace(tmp, path)
            error_path(root, entry["experiment"], scale, entry["cell_id"]).unlink(
                missing_ok=True)
            done.append(path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return done, int(replaced)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
