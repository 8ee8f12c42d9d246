"""The workflow refuses output folders that are, contain or sit inside the checkout's sources,
data or shards (workflow/outdirs.py, checked by workflow/Snakefile before anything runs).

``executed=.`` was accepted: every chapter's job then wrote into the checkout's root, and the
``data`` chapter's job replaced ``data/``. A dry run (``snakemake -n``) now stops at once with one
line naming the key; ``executed=book/executed`` (the default) and folders of their own (``make
stability``: ``results/stability/<scale>/seed-<s>``) are allowed.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = REPO / ".venv" / "workflow" / "bin" / "snakemake"


def _outdirs():
    spec = importlib.util.spec_from_file_location("workflow_outdirs", REPO / "workflow" /
                                                  "outdirs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def checkout(tmp_path):
    for name in ("fusionlib", "notebooks", "book/executed", "data", "results/cells", "tests",
                 "workflow"):
        (tmp_path / name).mkdir(parents=True)
    return tmp_path


REFUSED = {
    ".": "is the checkout itself", "./": "is the checkout itself", "data": "is the checkout's "
    "data/", "data/": "is the checkout's data/", "data/raw": "sits inside the checkout's data/",
    "fusionlib": "is the checkout's fusionlib/", "notebooks/x": "sits inside the checkout's "
    "notebooks/", "book": "is the checkout's book/", "book/other": "sits inside the "
    "checkout's book/", "results": "contains the checkout's results/cells/", "results/cells":
    "is the checkout's results/cells/", "results/cells/smoke": "sits inside the checkout's "
    "results/cells/", "tests": "is the checkout's tests/", "workflow/x": "sits inside the "
    "checkout's workflow/", ".git": "is the checkout's .git/",
    "/tmp/x": "must be a folder inside the checkout", "results/../data": "without '..'",
}


@pytest.mark.parametrize("value", sorted(REFUSED))
def test_output_folders_over_sources_data_or_shards_are_refused(checkout, value):
    with pytest.raises(ValueError) as exc:
        _outdirs().check_output_folder(checkout, "executed", value)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"config executed={value!r} ")
    assert REFUSED[value] in message and "e.g. results/stability/cpu/seed-1" in message


@pytest.mark.parametrize("value", ["book/executed", "book/executed/", "book/executed/sub",
                                   "results/stability/cpu/seed-1", "results/workflow/x",
                                   "_build/chapters"])
def test_output_folders_of_their_own_are_allowed(checkout, value):
    assert _outdirs().check_output_folder(checkout, "executed", value) == value.rstrip("/")


def test_a_symbolic_link_to_data_is_refused(checkout, tmp_path):
    (checkout / "results" / "link").symlink_to(checkout / "data", target_is_directory=True)
    with pytest.raises(ValueError, match="is the checkout's data/"):
        _outdirs().check_output_folder(checkout, "executed", "results/link")
    (checkout / "out").symlink_to(tmp_path.parent, target_is_directory=True)
    with pytest.raises(ValueError, match="leads outside the checkout"):
        _outdirs().check_output_folder(checkout, "executed", "out")


@pytest.mark.skipif(not SNAKEMAKE.is_file(), reason="needs the workflow venv (make "
                    "workflow-env)")
@pytest.mark.parametrize("value, why", [(".", "is the checkout itself"),
                                        ("data", "is the checkout's data/")])
def test_the_snakefile_refuses_executed_over_the_checkout_in_a_dry_run(value, why):
    before = sorted(p.name for p in (REPO / "data").iterdir())
    done = subprocess.run([str(SNAKEMAKE), "-s", "workflow/Snakefile", "-n", "--config",
                           f"executed={value}"], cwd=REPO, text=True, capture_output=True,
                          timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"config executed={value!r} {why}, whose files the jobs would overwrite" in out
    assert "fusionlib.compendium.cells plan" not in out  # stopped before the plan
    assert sorted(p.name for p in (REPO / "data").iterdir()) == before
