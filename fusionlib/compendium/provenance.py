"""Provenance of a run: code version, packages, device, time."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["git_commit", "package_versions", "device_description", "provenance_record"]

_PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "torch", "matplotlib", "pot", "ctgan")


def git_commit(cwd: str | Path | None = None) -> str:
    """The current git commit (with ``-dirty`` if the tree has changes), or ``"unknown"``."""
    cwd = Path(cwd) if cwd else Path(__file__).resolve().parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd, capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def package_versions() -> dict[str, str]:
    """Installed versions of the packages whose behaviour the results depend on."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def device_description() -> str:
    """A human description of the compute device (GPU name if torch sees one, else the CPU)."""
    try:
        import torch

        if torch.cuda.is_available():
            return f"cuda: {torch.cuda.get_device_name(0)}"
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return f"cpu: {platform.processor() or platform.machine()}"


def provenance_record(**extra: Any) -> dict[str, Any]:
    """A provenance dictionary; ``extra`` (parameters, scale, seeds, wall time) is merged in."""
    record: dict[str, Any] = {
        "git_commit": git_commit(),
        "versions": package_versions(),
        "device": device_description(),
        "platform": platform.platform(),
        "finished_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    record.update(extra)
    return record
