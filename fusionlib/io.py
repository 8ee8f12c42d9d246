"""Atomic file writing: a result file is either complete or absent, never half-written.

How a write works
    :func:`atomic_write` creates a temporary file ``.<name>.<8 random characters>.tmp`` in the
    destination folder (so that :func:`os.replace` is a rename on one file system), lets the
    caller write it, flushes it to disk (``fsync``), renames it onto the destination and flushes
    the folder, so that after a crash or power loss the destination holds the old content or
    the new, never an empty or partial file (a rename alone only orders the two in memory).

Permissions
    The result gets the permissions a plain ``open(path, "w")`` gives a new file: mode
    ``0o666`` filtered by the process umask (``0o644`` under umask ``022``, ``0o600`` under
    ``077``). This holds when a file is replaced too (its old permission bits are not carried
    over), so results left ``0o600`` by earlier versions get the umask's mode when rewritten.

Temporary files of killed writes
    A process killed in the middle of a write leaves its temporary file behind (it can never be
    taken for a finished result: the name is hidden and ends in ``.tmp``).
    :func:`clean_stale_temporaries` removes such files once they are older than a threshold;
    provisioning and the notebook runner call it on the folders they write to.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fusionlib.errors import InvalidInputError

__all__ = [
    "atomic_write", "atomic_write_text", "atomic_write_json", "clean_stale_temporaries",
    "is_own_temporary", "DEFAULT_STALE_AGE_S",
]

#: Age (seconds since the last modification) after which a temporary file is taken as left by a
#: killed write. A write in progress keeps touching its file, so an hour is generous.
DEFAULT_STALE_AGE_S = 3600.0

_TMP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
_TMP_RANDOM_LEN = 8
_TMP_SUFFIX = ".tmp"
# ".<target name>.<8 characters of the alphabet>.tmp": the exact names atomic_write creates
# (tempfile.mkstemp, used by earlier versions, drew from the same alphabet and length)
_TMP_NAME = re.compile(rf"\.(?P<target>.+)\.[a-z0-9_]{{{_TMP_RANDOM_LEN}}}\.tmp", re.DOTALL)


def is_own_temporary(name: str, target: str | None = None) -> bool:
    """Whether file ``name`` is a temporary file of :func:`atomic_write` (for ``target``, when
    given: the name of the destination file)."""
    m = _TMP_NAME.fullmatch(name)
    return m is not None and (target is None or m.group("target") == target)


def _create_temporary(path: Path) -> Path:
    """Create an empty, new temporary file beside ``path`` with the mode of a plain open."""
    for _ in range(100):
        token = "".join(secrets.choice(_TMP_ALPHABET) for _ in range(_TMP_RANDOM_LEN))
        tmp = path.parent / f".{path.name}.{token}{_TMP_SUFFIX}"
        try:
            # mode 0o666 is filtered by the umask (and any default ACL) exactly as for open(path,
            # "w"); O_EXCL never follows or reuses an existing name, symlinks included
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"could not create a temporary file for {path} (100 names taken)")


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` then move the temporary file onto ``path`` atomically.

    The temporary file lives in the destination folder so that :func:`os.replace` is a rename on
    one file system. If ``write`` raises, the temporary file is removed and ``path`` is untouched.
    The result has the permissions of a new file opened with ``open(path, "w")``: ``0o666``
    filtered by the umask (see the module docstring).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = _create_temporary(path)
    try:
        write(tmp_path)
        _fsync(tmp_path)
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    _fsync(path.parent, folder=True)
    return path


def _fsync(path: Path, *, folder: bool = False) -> None:
    """Flush ``path`` (a file, or a folder's entries) to disk; a folder that cannot be opened
    for that (some platforms and file systems) is left as it is."""
    try:
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if folder else 0))
    except OSError:
        if folder:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not folder:
            raise
    finally:
        os.close(fd)


def clean_stale_temporaries(folder: str | os.PathLike[str],
                            older_than_s: float = DEFAULT_STALE_AGE_S) -> list[Path]:
    """Remove the temporary files of killed :func:`atomic_write` calls from ``folder``.

    Only regular files directly inside ``folder`` whose names follow this module's exact pattern
    (``.<name>.<8 random characters>.tmp``) and that were last modified more than
    ``older_than_s`` seconds ago are removed; folders, symbolic links, sub-folders and every
    other file are left alone. A missing ``folder`` is not an error. Returns the removed paths.
    """
    if not (isinstance(older_than_s, int | float) and math.isfinite(older_than_s)
            and older_than_s >= 0):
        raise InvalidInputError(
            f"older_than_s must be a finite number of seconds >= 0, got {older_than_s!r}")
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    now = time.time()
    removed: list[Path] = []
    for entry in entries:
        if not is_own_temporary(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime <= older_than_s:
                continue
            os.unlink(entry.path)
        except FileNotFoundError:  # removed meanwhile (another process cleaning or finishing)
            continue
        removed.append(Path(entry.path))
    return removed


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def _json_default(obj: Any) -> Any:
    # numpy scalars/arrays and paths appear in parameters and results
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as indented JSON to ``path`` atomically (numpy values are converted)."""
    text = json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n"
    return atomic_write_text(path, text)
