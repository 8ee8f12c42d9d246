"""The pinned environment is installed with hashes, pip included, and torch by build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ["requirements-pip.lock", "requirements.lock", "requirements-test.lock",
         "requirements-torch-cpu.lock", "requirements-torch-cuda.lock",
         "requirements-workflow.lock"]


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


#: pins of requirements.txt that are programs the build runs, not modules the code imports
TOOLS = {"jupyter-book", "sphinx", "myst-nb", "myst-parser", "docutils", "sphinx-book-theme",
         "pydata-sphinx-theme", "sphinx-proof", "sphinxcontrib-bibtex", "jupyter-cache",
         "nbclient", "ipykernel", "pytest", "pytest-xdist", "ruff"}
#: distribution name -> the module it is imported as, where they differ
MODULE = {"scikit-learn": "sklearn", "pot": "ot", "pyyaml": "yaml"}


def test_every_pinned_package_is_imported_or_a_tool_the_build_runs():
    """No pin that nothing uses (seaborn and pooch were pinned and never imported)."""
    sources = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                        for folder in ("fusionlib", "tests", "tools", "benchmarks", "book")
                        for p in (ROOT / folder).rglob("*.py"))
    sources += "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "notebooks").glob("*.md"))
    unused = []
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        pin = line.split("#")[0].strip()
        if not pin:
            continue
        name = pin.split("==")[0].lower()
        if name in TOOLS:
            continue
        module = MODULE.get(name, name.replace("-", "_"))
        m = re.escape(module)
        pattern = rf"^\s*(import|from) {m}\b|importorskip\(\s*['\"]{m}\b"
        if not re.search(pattern, sources, re.M):
            unused.append(name)
    assert unused == []


def test_the_test_extra_is_pinned_so_ci_runs_the_cross_checks():
    lock = {p.split("==")[0].lower() for p in _pins(ROOT / "requirements.lock")}
    assert {"opacus", "ipfn", "prdc", "fairlearn", "sdmetrics"} <= lock
    assert not lock & {"seaborn", "pooch"}


def test_the_test_lock_holds_test_runners_only_and_stays_out_of_the_code_key():
    """requirements-test.lock is not among the lock files hashed into every cell's code key, so
    it may hold only what cannot change a computed number: the test runners."""
    from fusionlib.compendium.cells.store import LOCK_FILES

    names = {p.split("==")[0].lower() for p in _pins(ROOT / "requirements-test.lock")}
    assert names == {"pytest-xdist", "execnet"}
    assert "requirements-test.lock" not in {p.name for p in LOCK_FILES}
    assert "requirements.lock" in {p.name for p in LOCK_FILES}
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-r requirements-test.lock" in makefile  # make env installs it
    conda = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert "- -r requirements-test.lock" in conda  # and so does the conda environment
