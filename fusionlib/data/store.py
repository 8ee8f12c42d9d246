"""Where dataset files live, and checksum verification."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fusionlib.data.registry import DatasetSpec, FileSpec, get_spec
from fusionlib.errors import DataIntegrityError, DataUnavailableError

__all__ = ["data_dir", "file_digest", "verify_bytes", "verify_file", "dataset_paths"]


def data_dir() -> Path:
    """The data folder: ``$FUSIONLIB_DATA`` if set, else ``data/`` in the repository checkout
    (when fusionlib is used from one), else ``~/.cache/fusionlib``."""
    env = os.environ.get("FUSIONLIB_DATA")
    if env:
        return Path(env).expanduser().resolve()
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").is_file() and (repo / "fusionlib").is_dir():
        return repo / "data"
    return Path.home() / ".cache" / "fusionlib"


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _mismatch(spec: FileSpec, what: str, got: str, want: str, where: str) -> DataIntegrityError:
    return DataIntegrityError(
        f"{where}: {what} is {got}, the registry expects {want} for {spec.name}; the file is "
        "altered, truncated or a different release. Delete it and provision it again "
        "(`make data`)."
    )


def verify_bytes(spec: FileSpec, payload: bytes, where: str = "payload") -> None:
    """Check ``payload`` against the registry's checksums for ``spec``."""
    if spec.sha256 is not None:
        got = hashlib.sha256(payload).hexdigest()
        if got != spec.sha256:
            raise _mismatch(spec, "SHA256", got, spec.sha256, where)
    if spec.md5 is not None:
        got = hashlib.md5(payload, usedforsecurity=False).hexdigest()
        if got != spec.md5:
            raise _mismatch(spec, "MD5", got, spec.md5, where)


def verify_file(spec: FileSpec, path: Path) -> str:
    """Check a file on disk; returns its SHA256 (useful when the registry has none)."""
    sha = file_digest(path)
    if spec.sha256 is not None and sha != spec.sha256:
        raise _mismatch(spec, "SHA256", sha, spec.sha256, str(path))
    if spec.md5 is not None:
        md5 = file_digest(path, "md5")
        if md5 != spec.md5:
            raise _mismatch(spec, "MD5", md5, spec.md5, str(path))
    return sha


def dataset_paths(name: str | DatasetSpec, *, verify: bool = True) -> dict[str, Path]:
    """Paths of a dataset's files, checked to exist and (by default) to match their checksums.

    Raises
    ------
    DataUnavailableError
        A file is missing; the message says how to provision it.
    DataIntegrityError
        A file's checksum differs from the registry.
    """
    spec = name if isinstance(name, DatasetSpec) else get_spec(name)
    folder = data_dir() / spec.name
    paths = {f.name: folder / f.name for f in spec.files}
    missing = [n for n, p in paths.items() if not p.exists()]
    if missing:
        raise DataUnavailableError(
            f"dataset {spec.name!r} ({spec.title}) is not provisioned: missing "
            f"{', '.join(missing)} in {folder}. To fix: {spec.how_to_provision}."
        )
    if verify:
        for f in spec.files:
            if paths[f.name].is_file():
                verify_file(f, paths[f.name])
    return paths
