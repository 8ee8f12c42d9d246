"""Where dataset files live, and checksum verification.

Files are checked against the registry (``hash_policy="strict"``) or, for files whose checksum
nobody publishes (``"record-on-first-use"``), against the lock file ``SHA256SUMS`` beside them,
which the first use writes (see :mod:`fusionlib.data.registry`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from pathlib import Path

from fusionlib.data.plausibility import implausible
from fusionlib.data.registry import LOCK_FILE, RECORD_ON_FIRST_USE, DatasetSpec, FileSpec, get_spec
from fusionlib.errors import DataIntegrityError, DataUnavailableError, InvalidInputError
from fusionlib.io import atomic_write_text

logger = logging.getLogger(__name__)

__all__ = [
    "data_dir", "file_digest", "verify_bytes", "verify_file", "dataset_paths", "read_lock",
    "file_state", "dataset_states", "VERIFIED", "MISSING", "ALTERED", "FOLDER", "NOT_A_FILE",
    "NOT_RECORDED", "not_a_file_error", "shown_path",
]

# The states of a file on disk, as reported by `python -m fusionlib.data status`.
VERIFIED = "present and verified"
MISSING = "missing"
ALTERED = "present but altered (hash mismatch)"
FOLDER = "folder instead of file"
NOT_A_FILE = "present but not a regular file"
NOT_RECORDED = "present, SHA256 not yet recorded (recorded on first load)"

_DEFAULT_FIX = "`make data`, or `python -m fusionlib.data provision <dataset>`"
_LOCK_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")


def data_dir() -> Path:
    """The data folder: ``$FUSIONLIB_DATA`` if set, else ``data/`` in the repository checkout
    (when fusionlib is used from one), else ``~/.cache/fusionlib``. A ``$FUSIONLIB_DATA`` that
    is a file (or lies below one) raises :class:`~fusionlib.errors.InvalidInputError`."""
    env = os.environ.get("FUSIONLIB_DATA")
    if env:
        folder = Path(env).expanduser().resolve()
        blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            where = "" if blocker == folder else f" ({blocker} on its path)"
            raise InvalidInputError(
                f"FUSIONLIB_DATA={env} is a file, not a folder{where}; point it at a folder "
                "(created when missing), or unset it to use the repository's data/ folder")
        return folder
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").is_file() and (repo / "fusionlib").is_dir():
        return repo / "data"
    return Path.home() / ".cache" / "fusionlib"


def shown_path(path: Path) -> str:
    """``path`` as a message shows it: relative to the repository checkout when inside it (so
    that pages built from the messages do not carry this machine's folders), else absolute."""
    repo = Path(__file__).resolve().parents[2]
    try:
        return str(Path(path).resolve().relative_to(repo))
    except ValueError:
        return str(path)


def _digests(path: Path, algorithms: tuple[str, ...]) -> dict[str, str]:
    hs = {a: hashlib.new(a) for a in algorithms}
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            for h in hs.values():
                h.update(block)
    return {a: h.hexdigest() for a, h in hs.items()}


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB blocks."""
    return _digests(path, (algorithm,))[algorithm]


def read_lock(folder: Path) -> dict[str, str]:
    """The first-use hashes recorded in ``folder/SHA256SUMS``: file name -> SHA256 (empty if
    there is no lock file). A malformed lock file raises :class:`DataIntegrityError`."""
    lock = Path(folder) / LOCK_FILE
    try:
        text = lock.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise DataIntegrityError(
            f"{lock} is not a readable checksum list ({type(exc).__name__}). To fix: delete it; "
            "the next load records the hashes again (compare them with the source).") from None
    recorded: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _LOCK_LINE.fullmatch(line)
        if m is None:
            raise DataIntegrityError(
                f"{lock}, line {number}: {line[:80]!r} is not '<sha256>  <file name>'. To fix: "
                "correct that line, or delete the line (or the file) so that the next load "
                "records the hash again.")
        recorded[m.group(2)] = m.group(1)
    return recorded


def _record(folder: Path, name: str, sha: str) -> None:
    """Add ``name``'s hash to the lock file (atomically) and tell the user to compare it."""
    lock = folder / LOCK_FILE
    recorded = read_lock(folder)
    recorded[name] = sha
    text = "".join(f"{h}  {n}\n" for n, h in sorted(recorded.items()))
    try:
        atomic_write_text(lock, text)
    except OSError as exc:
        logger.warning("fusionlib: first use of %s: SHA256 %s. It could not be recorded in %s "
                       "(%s), so this file is not verified; compare the hash with the "
                       "source's.", folder / name, sha, lock, exc)
        return
    logger.warning("fusionlib: first use of %s: recorded its SHA256 %s in %s. Please compare "
                   "it with the checksum published by the source (or a colleague's copy); every "
                   "later load is verified against it.", folder / name, sha, lock)


def _check_plausible(spec: FileSpec, data: bytes | Path, where: str, recorded: str) -> None:
    kind, reason = implausible(spec.name, data)
    if reason is not None:
        raise DataIntegrityError(
            f"{where} does not look like a complete {kind} file: {reason}. {recorded} Fetch "
            "or copy it again from the original source (a download may have been cut short).")


def _registry_mismatch(spec: FileSpec, algorithm: str, got: str, want: str, path: Path,
                       how: str) -> DataIntegrityError:
    return DataIntegrityError(
        f"{path}: its {algorithm} is {got}, but the registry expects {want} for {spec.name!r}; "
        f"the file is altered, truncated or a different release. To fix: delete {path} and "
        f"provision it again ({how})."
    )


def _lock_mismatch(got: str, want: str, path: Path, how: str) -> DataIntegrityError:
    lock = path.parent / LOCK_FILE
    return DataIntegrityError(
        f"{path}: its SHA256 is {got}, but {lock} recorded {want} when the file was first used; "
        f"the file has changed since. To fix: delete {path} and provision it again ({how}). If "
        f"the recorded hash came from a bad first copy, also delete the line for {path.name!r} "
        f"in {lock} (the next load records the new hash)."
    )


def _payload_mismatch(spec: FileSpec, algorithm: str, got: str, want: str, where: str,
                      origin: str) -> DataIntegrityError:
    return DataIntegrityError(
        f"{where}: its {algorithm} is {got}, but {origin} expects {want} for {spec.name!r}; "
        "nothing was installed. The source copy is altered, truncated or a different release: "
        "fetch it again from the original source, or check the expected hash."
    )


def not_a_file_error(path: Path, how: str = _DEFAULT_FIX) -> DataIntegrityError:
    """The error for a path that exists but is not a regular file (typically a folder)."""
    kind = "a folder" if path.is_dir() else "not a regular file"
    return DataIntegrityError(
        f"{path} is {kind}, but a file is expected there; its contents cannot be checked "
        f"against a checksum. To fix: move it away, then provision the file ({how})."
    )


def verify_bytes(spec: FileSpec, payload: bytes, where: str = "payload", *,
                 folder: Path | None = None) -> None:
    """Check ``payload`` against the registry's checksums for ``spec`` (and, for a
    record-on-first-use file, against a hash already recorded in ``folder``'s lock file)."""
    if spec.sha256 is not None:
        got = hashlib.sha256(payload).hexdigest()
        if got != spec.sha256:
            raise _payload_mismatch(spec, "SHA256", got, spec.sha256, where, "the registry")
    if spec.md5 is not None:
        got = hashlib.md5(payload, usedforsecurity=False).hexdigest()
        if got != spec.md5:
            raise _payload_mismatch(spec, "MD5", got, spec.md5, where, "the registry")
    if spec.hash_policy == RECORD_ON_FIRST_USE and folder is not None:
        want = read_lock(folder).get(spec.name)
        got = hashlib.sha256(payload).hexdigest()
        if want is not None and got != want:
            raise _payload_mismatch(spec, "SHA256", got, want, where, str(folder / LOCK_FILE))
        if want is None:  # its hash would be recorded as the reference: check it first
            _check_plausible(spec, payload, where, "Nothing was installed and no hash recorded.")


def verify_file(spec: FileSpec, path: Path, *, record: bool = True,
                how_to_fix: str = _DEFAULT_FIX) -> str:
    """Check a file on disk; returns its SHA256.

    Strict files are compared with the registry. A record-on-first-use file is compared with the
    hash recorded in ``SHA256SUMS`` beside it; if none is recorded yet and ``record`` is true,
    its hash is recorded now (and printed). Raises :class:`DataIntegrityError` for a mismatch or
    when ``path`` is a folder, :class:`DataUnavailableError` when it does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise DataUnavailableError(f"{path} does not exist. To fix: {how_to_fix}.")
    if not path.is_file():
        raise not_a_file_error(path, how_to_fix)
    algorithms = ("sha256", "md5") if spec.md5 is not None else ("sha256",)
    got = _digests(path, algorithms)
    if spec.sha256 is not None and got["sha256"] != spec.sha256:
        raise _registry_mismatch(spec, "SHA256", got["sha256"], spec.sha256, path, how_to_fix)
    if spec.md5 is not None and got["md5"] != spec.md5:
        raise _registry_mismatch(spec, "MD5", got["md5"], spec.md5, path, how_to_fix)
    if spec.hash_policy == RECORD_ON_FIRST_USE:
        want = read_lock(path.parent).get(spec.name)
        if want is None:
            if record:
                _check_plausible(spec, path, str(path), "Its SHA256 was not "
                                 "recorded, so a correct copy will still be accepted.")
                _record(path.parent, spec.name, got["sha256"])
        elif got["sha256"] != want:
            raise _lock_mismatch(got["sha256"], want, path, how_to_fix)
    return got["sha256"]


def file_state(spec: FileSpec, path: Path) -> str:
    """The state of one file, without changing anything: :data:`VERIFIED`, :data:`MISSING`,
    :data:`ALTERED`, :data:`FOLDER`, :data:`NOT_A_FILE` or :data:`NOT_RECORDED`."""
    path = Path(path)
    if not path.exists():
        return MISSING
    if path.is_dir():
        return FOLDER
    if not path.is_file():
        return NOT_A_FILE
    try:
        verify_file(spec, path, record=False)
    except DataIntegrityError:
        return ALTERED
    if spec.hash_policy == RECORD_ON_FIRST_USE and spec.name not in read_lock(path.parent):
        return NOT_RECORDED
    return VERIFIED


def dataset_states(name: str | DatasetSpec) -> dict[str, str]:
    """File name -> :func:`file_state` for every file of a dataset (read-only)."""
    spec = name if isinstance(name, DatasetSpec) else get_spec(name)
    folder = data_dir() / spec.name
    return {f.name: file_state(f, folder / f.name) for f in spec.files}


def dataset_paths(name: str | DatasetSpec, *, verify: bool = True) -> dict[str, Path]:
    """Paths of a dataset's files, checked to exist and (by default) to match their checksums.

    Raises
    ------
    DataUnavailableError
        A file is missing; the message says how to provision it.
    DataIntegrityError
        A file's checksum differs from the registry (or from the hash recorded on its first use),
        or a folder stands where a file is expected (refused even when ``verify`` is false).
    """
    spec = name if isinstance(name, DatasetSpec) else get_spec(name)
    folder = data_dir() / spec.name
    paths = {f.name: folder / f.name for f in spec.files}
    for p in paths.values():
        if p.exists() and not p.is_file():
            raise not_a_file_error(p, spec.how_to_provision)
    missing = [n for n, p in paths.items() if not p.exists()]
    if missing:
        raise DataUnavailableError(
            f"dataset {spec.name!r} ({spec.title}) is not provisioned: missing "
            f"{', '.join(missing)} in {shown_path(folder)}. To fix: {spec.how_to_provision}."
        )
    if verify:
        for f in spec.files:
            verify_file(f, paths[f.name], how_to_fix=spec.how_to_provision)
    return paths
