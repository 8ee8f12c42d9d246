"""Reading a results bundle as untrusted input: bounded reading, member names, the manifest and
every shard checked before anything is written.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
:func:`~fusionlib.compendium.cells.bundle.import_bundle` calls these.

A bundle comes from another machine and may have been altered, repacked or forged. Reading it:

* **Limits.** The archive is decompressed as a stream, counted as it goes, and refused once it
  passes :data:`MAX_ARCHIVE_BYTES` (a zip bomb stops there, whatever its header says). A member
  is read in chunks of :data:`CHUNK_BYTES` and refused when its header announces more than
  :data:`MAX_MEMBER_BYTES` (before any byte of it is read) or when more arrive; all members
  together may hold :data:`MAX_TOTAL_BYTES` (they are held in memory until installed), an
  extended header (a long name) :data:`MAX_HEADER_BYTES`, and an archive may have
  :data:`MAX_MEMBERS` entries.
* **Names.** The only members are ``manifest.json`` and regular files named
  ``cells/<experiment>/<scale>/<cell_id>.shard.json`` (:data:`MEMBER`, which admits no ``..``,
  no absolute path, no other character); the folder entries ``cells/``,
  ``cells/<experiment>/`` and ``cells/<experiment>/<scale>/`` that ``tar`` adds when a bundle is
  repacked are skipped. A symbolic or hard link, a device, a FIFO, another folder, a sparse
  file, any other name or a name given twice refuses the whole bundle.
* **Manifest.** A JSON object of this :data:`BUNDLE_FORMAT` whose keys have the types
  :func:`check_manifest` lists; every shard entry names its member, and the entry's experiment,
  scale and cell id must be the member's.
* **Shards.** Each shard's own header (the cell recorded in the file: experiment, scale, cell
  id; for a cell of this checkout's grid also its configuration and seed) must be the one its
  member name says, and the manifest's hashes and code key must be the shard's.

A bundle that breaks any of these is refused whole (:class:`BundleRefusedError`, naming the
member and the reason; nothing is installed): it was not written by ``make export-results`` or
was altered since. What remains refuses one shard at a time (:func:`check_shard`): bytes that
differ from the manifest, a shard of other code (stale here), a cell outside this checkout's
grid, a provisional shard. Install paths come only from checked member names.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import re
import tarfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from fusionlib.compendium.cells.registry import get_experiment
from fusionlib.compendium.cells.shardfile import read_shard_file
from fusionlib.compendium.cells.store import SHARD_SUFFIX, code_key
from fusionlib.compendium.scales import SCALES
from fusionlib.errors import InvalidInputError

__all__ = ["BUNDLE_FORMAT", "MANIFEST", "MEMBER", "MAX_MEMBER_BYTES", "MAX_TOTAL_BYTES",
           "MAX_ARCHIVE_BYTES", "MAX_HEADER_BYTES", "MAX_MEMBERS", "CHUNK_BYTES",
           "BundleRefusedError", "read_archive", "check_manifest", "check_shard", "check_root",
           "target_path", "sha256_file", "show"]

#: version of the bundle layout
BUNDLE_FORMAT = 1
MANIFEST = "manifest.json"
#: the name of a shard member: ``cells/<experiment>/<scale>/<cell_id>.shard.json``
MEMBER = re.compile(r"cells/([a-z][a-z0-9_]*)/(smoke|cpu|paper)/([a-z0-9-]+)"
                    + re.escape(SHARD_SUFFIX))
#: folder entries a repacked bundle may hold (skipped, never created)
_FOLDER = re.compile(r"cells(/[a-z][a-z0-9_]*(/(smoke|cpu|paper))?)?/?")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MiB = 1 << 20
#: largest member (the manifest or one shard), in bytes: 64 MiB
MAX_MEMBER_BYTES = 64 * _MiB
#: largest sum of all members, in bytes: 2 GiB (held in memory until installed)
MAX_TOTAL_BYTES = 2048 * _MiB
#: largest decompressed archive stream (tar headers and anything after the archive's end
#: included), in bytes: MAX_TOTAL_BYTES + 256 MiB
MAX_ARCHIVE_BYTES = MAX_TOTAL_BYTES + 256 * _MiB
#: largest extended header (a PAX header, a GNU long name), read whole by :mod:`tarfile`: 1 MiB
MAX_HEADER_BYTES = _MiB
#: most entries of an archive
MAX_MEMBERS = 100_000
#: size of each read of a member or of the decompressed stream: 1 MiB
CHUNK_BYTES = _MiB
_FIX = "Export it again with `make export-results` and copy it again"


class BundleRefusedError(InvalidInputError):
    """A bundle refused whole: nothing of it was installed (the message names why)."""


def show(name: object, limit: int = 100) -> str:
    """``name`` for a one-line message: quoted, escaped, at most ``limit`` characters."""
    text = repr(name)
    return text if len(text) <= limit else text[:limit] + "...'"


def _size(n: int) -> str:
    return f"{n / _MiB:g} MiB"


def check_root(root: Path) -> Path:
    """``root`` if it can be a shard folder (a folder, or absent under a folder); else an
    :class:`InvalidInputError` naming it and the fix."""
    for p in (root, *root.parents):
        try:
            present = p.exists() or p.is_symlink()
        except OSError:
            continue
        if present:
            if not p.is_dir():
                where = "is" if p == root else f"sits under {p}, which is"
                what = "a file" if p.is_file() else "a broken link or special file"
                raise InvalidInputError(
                    f"the shard root {root} {where} {what}, not a folder: give --root (or "
                    f"FUSIONLIB_CELLS) a folder, e.g. results/cells")
            return root
    return root


# ----------------------------------------------------------------------------- reading
class _Counted:
    """A readable stream that refuses once more than ``limit`` bytes came out of ``raw``."""

    def __init__(self, raw: BinaryIO, limit: int, bundle: Path) -> None:
        self.raw, self.limit, self.count, self.bundle = raw, limit, 0, bundle

    def read(self, n: int = -1) -> bytes:
        n = CHUNK_BYTES if n is None or n < 0 else n
        data = self.raw.read(min(n, self.limit - self.count + 1))
        self.count += len(data)
        if self.count > self.limit:
            raise BundleRefusedError(
                f"bundle {self.bundle} refused: it decompresses to more than "
                f"{_size(self.limit)} (the limit of a bundle; a damaged or hostile archive); "
                f"nothing was installed. {_FIX}")
        return data


class _LongHeader(Exception):
    """An extended header larger than :data:`MAX_HEADER_BYTES` (``args``: its size)."""


class _BoundedTarInfo(tarfile.TarInfo):
    """A tar header whose extended headers (read whole by :mod:`tarfile`) are refused above
    :data:`MAX_HEADER_BYTES`, before they are read."""

    _EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
                 tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)

    def _proc_member(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in self._EXTENDED and self.size > MAX_HEADER_BYTES:
            raise _LongHeader(self.size)
        return super()._proc_member(tarfile)


def _decompressed(f: BinaryIO) -> BinaryIO:
    head = f.read(6)
    f.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=f, mode="rb")
    if head.startswith(b"BZh"):
        return bz2.BZ2File(f)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(f)
    return f


def _kind(info: tarfile.TarInfo) -> str | None:
    """What a member is when not a plain regular file (None for one)."""
    for test, what in ((info.issym, "symbolic link"), (info.islnk, "hard link"),
                       (info.ischr, "character device"), (info.isblk, "block device"),
                       (info.isfifo, "FIFO"), (info.isdir, "folder"),
                       (info.issparse, "sparse file")):
        if test():
            return what
    return None if info.isreg() else "special member"


def _read_member(tar: tarfile.TarFile, info: tarfile.TarInfo, refuse: Any) -> bytes:
    f = tar.extractfile(info)
    buf = bytearray()
    while chunk := f.read(min(CHUNK_BYTES, MAX_MEMBER_BYTES + 1 - len(buf))):
        buf += chunk
        if len(buf) > MAX_MEMBER_BYTES:
            refuse(f"member {show(info.name)} holds more than {_size(MAX_MEMBER_BYTES)}")
    return bytes(buf)


def read_archive(bundle: Path) -> dict[str, bytes]:
    """``{member name: bytes}`` of ``bundle`` (the manifest included), read within the limits
    and with the names of the module docstring; else :class:`BundleRefusedError` (or an
    :class:`InvalidInputError` for an archive that cannot be read)."""
    def refuse(why: str) -> None:
        raise BundleRefusedError(f"bundle {bundle} refused: {why}; nothing was installed. {_FIX}")

    files: dict[str, bytes] = {}
    total = entries = 0
    try:
        with open(bundle, "rb") as raw:
            stream = _Counted(_decompressed(raw), MAX_ARCHIVE_BYTES, bundle)
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=_BoundedTarInfo) as tar:
                for info in tar:
                    entries += 1
                    if entries > MAX_MEMBERS:
                        refuse(f"it has more than {MAX_MEMBERS} entries")
                    name = info.name
                    if info.isdir() and _FOLDER.fullmatch(name):
                        continue  # a folder entry of a repacked bundle: nothing to install
                    if (what := _kind(info)) is not None:
                        refuse(f"member {show(name)} is a {what}, not a regular file")
                    if name != MANIFEST and not MEMBER.fullmatch(name):
                        refuse(f"member {show(name)} is not named manifest.json or "
                               "cells/<experiment>/<scale>/<cell_id>.shard.json")
                    if name in files:
                        refuse(f"member {show(name)} appears twice")
                    if info.size > MAX_MEMBER_BYTES:
                        refuse(f"member {show(name)} holds {_size(info.size)}, more than "
                               f"{_size(MAX_MEMBER_BYTES)} (the limit of one member)")
                    total += info.size
                    if total > MAX_TOTAL_BYTES:
                        refuse(f"its members hold more than {_size(MAX_TOTAL_BYTES)} together "
                               "(the limit of a bundle)")
                    files[name] = _read_member(tar, info, refuse)
            while stream.read(CHUNK_BYTES):  # to the end: the gzip CRC and length are checked
                pass
    except BundleRefusedError:
        raise
    except _LongHeader as exc:
        refuse(f"an extended tar header holds {_size(exc.args[0])}, more than "
               f"{_size(MAX_HEADER_BYTES)} (the limit of a header)")
    except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError, ValueError,
            RecursionError) as exc:
        raise InvalidInputError(
            f"bundle {bundle} is not a readable archive ({type(exc).__name__}: "
            f"{str(exc)[:200]}); it was damaged or cut short: nothing was installed. {_FIX}"
        ) from exc
    return files


# ----------------------------------------------------------------------------- manifest
def _need(where: str, value: Any, ok: bool, what: str, refuse: Any) -> None:
    if not ok:
        refuse(f"{where} must be {what}, not {type(value).__name__} {show(value, 60)}")


def check_manifest(bundle: Path, raw: bytes | None) -> dict[str, Any]:
    """The manifest of ``bundle`` (bytes of ``manifest.json``) after checking its shape: an
    object with ``bundle_format`` (:data:`BUNDLE_FORMAT`), ``scale`` (a scale), ``seed`` (an
    integer >= 0), ``shards`` (a list of objects, each with text ``member``, ``experiment``,
    ``cell_id``, ``code_key`` and SHA-256 ``file_sha256``, ``result_sha256``, ``run_sha256``,
    the first three agreeing, no member twice); optional ``missing`` and ``devices`` lists,
    ``machine``, ``commit``, ``created_utc`` texts, ``environment`` and ``metadata`` objects.
    Anything else is an :class:`InvalidInputError` (:class:`BundleRefusedError` for an entry
    whose labels disagree with its member) naming the key."""
    def bad(why: str) -> None:
        raise InvalidInputError(f"bundle {bundle}: {MANIFEST} {why}; nothing was installed. "
                                f"{_FIX}")

    def refuse(why: str) -> None:
        raise BundleRefusedError(f"bundle {bundle} refused: {why}; nothing was installed. {_FIX}")

    if raw is None:
        bad("is missing from the archive")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        bad(f"is not JSON ({type(exc).__name__}: {str(exc)[:120]})")
    if not isinstance(manifest, dict):
        bad(f"is a JSON {type(manifest).__name__}, not an object")
    for key in ("bundle_format", "scale", "seed", "shards"):
        if key not in manifest:
            bad(f"has no {key!r}")
    fmt = manifest["bundle_format"]
    if type(fmt) is not int or fmt != BUNDLE_FORMAT:
        bad(f"has bundle format {show(fmt, 40)}; this checkout reads format {BUNDLE_FORMAT} "
            "(export the bundle with a checkout of this version)")
    scale, seed, shards = manifest["scale"], manifest["seed"], manifest["shards"]
    _need("'scale'", scale, scale in SCALES, f"one of {', '.join(SCALES)}", bad)
    _need("'seed'", seed, type(seed) is int and seed >= 0, "an integer >= 0", bad)
    _need("'shards'", shards, isinstance(shards, list), "a list", bad)
    for key, types, what in (("missing", list, "a list"), ("devices", list, "a list"),
                             ("environment", dict, "an object"), ("metadata", dict, "an object"),
                             ("machine", str, "text"), ("commit", str, "text"),
                             ("created_utc", str, "text")):
        value = manifest.get(key)
        _need(f"{key!r}", value, value is None or isinstance(value, types), what, bad)
    seen: set[str] = set()
    for i, entry in enumerate(shards):
        where = f"shards[{i}]"
        _need(where, entry, isinstance(entry, dict), "an object", bad)
        for key in ("member", "experiment", "cell_id", "code_key", "file_sha256",
                    "result_sha256", "run_sha256"):
            if key not in entry:
                bad(f"{where} has no {key!r}")
            value = entry[key]
            if key.endswith("sha256"):
                _need(f"{where}.{key}", value,
                      isinstance(value, str) and _SHA256.fullmatch(value) is not None,
                      "a SHA-256 (64 hex digits)", bad)
            else:
                _need(f"{where}.{key}", value, isinstance(value, str), "text", bad)
        m = MEMBER.fullmatch(entry["member"])
        if m is None:
            refuse(f"{where} names member {show(entry['member'])}, not "
                   "cells/<experiment>/<scale>/<cell_id>.shard.json")
        labels = (entry["experiment"], scale, entry["cell_id"])
        if labels != m.groups():
            refuse(f"{where} is labelled experiment {show(labels[0])}, scale {show(scale)}, "
                   f"cell_id {show(labels[2])} but its member is {show(entry['member'])}")
        if entry["member"] in seen:
            refuse(f"{where}: member {show(entry['member'])} is listed twice")
        seen.add(entry["member"])
    return manifest


# ----------------------------------------------------------------------------- shards
def _local(exp: str, scale: str, seed: int, cache: dict[str, Any]) -> tuple[dict, str] | None:
    """({cell id: cell} of this checkout's grid, code key here) of ``exp``; None if unknown."""
    if exp not in cache:
        try:
            e = get_experiment(exp)
        except InvalidInputError:
            cache[exp] = None
        else:
            cells = e.cells(scale, seed) if scale in e.scales else []
            cache[exp] = ({c.cell_id: c for c in cells}, code_key(e))
    return cache[exp]


def check_shard(bundle: Path, entry: dict[str, Any], data: bytes | None, scale: str, seed: int,
                cache: dict[str, Any]) -> str | None:
    """Why the shard of ``entry`` (checked by :func:`check_manifest`) is refused here, or None
    when it can be installed; :class:`BundleRefusedError` when the shard's own header or hashes
    disagree with its member name or with the manifest (module docstring)."""
    def refuse(why: str) -> None:
        raise BundleRefusedError(f"bundle {bundle} refused: member {show(entry['member'])} "
                                 f"{why}; nothing was installed. {_FIX}")

    if data is None:
        return "listed in the manifest but absent from the archive"
    try:
        obj, problem = read_shard_file(data), None
    except ValueError as exc:
        obj, problem = None, str(exc)
    exp, _, cell_id = MEMBER.fullmatch(entry["member"]).groups()
    if obj is not None:
        result = obj["result"]
        cell = result["cell"]
        got = (cell["experiment"], result["scale"], cell["cell_id"])
        if got != (exp, scale, cell_id):
            refuse(f"holds the shard of experiment {show(got[0])}, scale {show(got[1])}, cell "
                   f"{show(got[2])} (mislabelled: not the cell its name says)")
    if hashlib.sha256(data).hexdigest() != entry["file_sha256"]:
        return "altered: its bytes differ from the SHA-256 in the manifest"
    if obj is None:
        return f"altered or unreadable: the shard {problem}"
    for key, value in (("result_sha256", obj["result_sha256"]), ("run_sha256", obj["run_sha256"]),
                       ("code_key", result["code_key"])):
        if value != entry[key]:
            refuse(f"has {key} {show(value, 20)}, the manifest says {show(entry[key], 20)}")
    local = _local(exp, scale, seed, cache)
    if local is None:
        return f"unknown experiment {exp!r} in this checkout"
    cells, key = local
    if cell_id not in cells:
        return f"not a cell of this checkout's grid of {exp!r} at scale {scale!r} and seed {seed}"
    mine = cells[cell_id].to_dict()
    if any(cell.get(k) != mine[k] for k in ("seed", "config")):
        refuse(f"records another configuration or seed than this checkout's cell {cell_id} "
               "(a forged header)")
    if result["code_key"] != key:
        return (f"stale: computed by other code or other pins (code key "
                f"{result['code_key'][:12]}..., here {key[:12]}...)")
    if result.get("provisional"):
        return "provisional (its result depends on something outside the code key)"
    adopted = (obj.get("run") or {}).get("adopted_from")
    if adopted is not None and not _is_twin(exp, seed, adopted, mine, cache):
        return ("adopted from a cell that is not its twin here (adopted_from names "
                f"{show(str((adopted or {}).get('cell_id')))} at scale "
                f"{show(str((adopted or {}).get('scale')))}: no cell of this checkout's grid "
                "that is the same computation)")
    return None


def _is_twin(exp: str, seed: int, adopted: object, mine: dict[str, Any],
             cache: dict[Any, Any]) -> bool:
    """Whether ``adopted`` (a shard's ``adopted_from``) names a cell of this checkout's grid
    at a known scale that is the same computation as the cell ``mine``."""
    from fusionlib.compendium.cells.shardfile import same_computation

    if not isinstance(adopted, dict) or adopted.get("scale") not in SCALES:
        return False
    scale = adopted["scale"]
    if (exp, scale) not in cache:
        e = get_experiment(exp)
        cells = e.cells(scale, seed) if scale in e.scales else []
        cache[(exp, scale)] = {c.cell_id: c for c in cells}
    twin = cache[(exp, scale)].get(adopted.get("cell_id"))
    return twin is not None and same_computation(twin.to_dict(), mine)


def target_path(root: Path, member: str) -> Path:
    """Where the checked ``member`` goes under ``root``:
    ``<root>/<experiment>/<scale>/<cell_id>.shard.json``, refused (:class:`BundleRefusedError`)
    if that resolves outside ``root`` (a symbolic link under it) or is not a file there."""
    m = MEMBER.fullmatch(member)
    if m is None:  # never: members are checked before
        raise BundleRefusedError(f"member {show(member)} is not a shard name")
    exp, scale, cell_id = m.groups()
    path = root / exp / scale / f"{cell_id}{SHARD_SUFFIX}"
    top = root.resolve()
    if not path.parent.resolve().is_relative_to(top) or path.is_symlink() or (
            path.exists() and not path.is_file()):
        raise BundleRefusedError(
            f"member {show(member)} would be installed at {path}, which resolves outside the "
            f"shard root {root} or is not a plain file (a symbolic link or folder there); "
            "nothing was installed. Remove it, or import into another --root")
    return path


def sha256_file(path: Path) -> str:
    """SHA-256 of the file at ``path``, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            h.update(chunk)
    return h.hexdigest()
