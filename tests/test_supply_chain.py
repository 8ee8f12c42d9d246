"""The pinned environment is installed with hashes, pip included, and torch by build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ["requirements-pip.lock", "requirements.lock", "requirements-torch-cpu.lock",
         "requirements-torch-cuda.lock"]


def _pins(path: Path) -> dict[str, list[str]]:
    """name==version -> its hashes, from a pip requirements file with continuation lines."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        pin = line.split()[0]
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\],]+==[^\s=]+", pin), f"{path.name}: {pin}"
        pins[pin] = re.findall(r"--hash=sha256:([0-9a-f]{64})", line)
    return pins


@pytest.mark.parametrize("lock", LOCKS)
def test_every_pin_is_exact_and_hashed(lock):
    pins = _pins(ROOT / lock)
    assert pins
    unhashed = [p for p, h in pins.items() if not h]
    assert not unhashed, f"{lock}: pins without --hash: {unhashed}"


def test_torch_only_in_its_build_locks():
    assert not [p for p in _pins(ROOT / "requirements.lock") if p.startswith("torch==")]
    assert list(_pins(ROOT / "requirements-torch-cpu.lock")) == ["torch==2.13.0+cpu"]
    assert "torch==2.13.0" in _pins(ROOT / "requirements-torch-cuda.lock")


def test_image_score_extra_only_in_the_cuda_lock_and_matching_torch():
    cuda = _pins(ROOT / "requirements-torch-cuda.lock")
    # torchvision 0.28.x is the series built for torch 2.13 (its wheels require torch==2.13.0)
    assert "torchvision==0.28.0" in cuda and "torch-fidelity==0.4.0" in cuda
    for lock in ("requirements.lock", "requirements-torch-cpu.lock"):
        names = {p.split("==")[0] for p in _pins(ROOT / lock)}
        assert not names & {"torchvision", "torch-fidelity"}, lock


def test_make_env_pins_pip_and_requires_hashes():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--upgrade pip" not in makefile
    installs = [ln for ln in makefile.splitlines() if "pip install" in ln and "-r " in ln]
    assert installs and all("--require-hashes" in ln for ln in installs)
    assert any("requirements-pip.lock" in ln for ln in installs)
