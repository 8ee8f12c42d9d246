"""Every notebook executes at smoke scale and leaves its results, claims and provenance."""

from __future__ import annotations

import json

import pytest

from fusionlib.compendium.claims import read_claims
from fusionlib.compendium.runner import REPO, SCORECARD, discover, execute_notebook

NOTEBOOKS = discover(REPO / "notebooks")

# one worker runs every notebook, in order, into one folder: under pytest-xdist (make test,
# --dist loadgroup) the scorecard must see the chapters executed before it
pytestmark = pytest.mark.xdist_group("notebooks")


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("executed")


def test_there_are_notebooks_and_the_scorecard_runs_last():
    assert len(NOTEBOOKS) >= 2
    assert NOTEBOOKS[-1].stem == SCORECARD


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_at_smoke_scale(path, out_dir):
    target = execute_notebook(path, out_dir, "smoke")
    nb = json.loads(target.read_text())
    assert nb["cells"], "executed notebook is empty"
    results = out_dir / path.stem
    provenance = json.loads((results / "provenance.json").read_text())
    assert provenance["scale"] == "smoke"
    claims = read_claims([results / "claims.csv"])
    assert (claims["scale"] == "smoke").all()
    if path.stem == SCORECARD:
        combined = read_claims([results / "all_claims.csv"])
        others = [p for p in NOTEBOOKS if p.stem != SCORECARD]
        assert set(combined["experiment"]) <= {p.stem for p in others}
