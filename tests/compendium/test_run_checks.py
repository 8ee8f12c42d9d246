"""Run's constructor: the notebook name and the seed (a bad name must not write elsewhere)."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlib.compendium import cells as C
from fusionlib.compendium.run import Run
from fusionlib.errors import InvalidInputError


@pytest.mark.parametrize("name", ["", " ", ".", "..", "../up", "a/b", "a\\b", None, 3])
def test_run_refuses_a_name_that_is_not_a_file_stem(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match="name.*notebook's file name"):
        Run(name, scale="smoke")
    assert list(tmp_path.iterdir()) == []  # nothing written into results/ itself


def test_run_default_folder_is_results_slash_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = Run("ptgan_toys", scale="smoke")
    assert run.results_dir.as_posix() == "results/ptgan_toys" and run.results_dir.is_dir()


def test_numpy_integer_seeds_are_accepted_where_python_ints_are(tmp_path):
    run = Run("demo", scale="smoke", seed=np.int64(3), results_dir=tmp_path)
    assert run.seed == 3 and type(run.seed) is int
    cell = C.Cell("fake_np_seed", {"i": 1}, np.int64(4))
    assert cell == C.Cell("fake_np_seed", {"i": 1}, 4) and type(cell.seed) is int
    exp = C.Experiment("fake_np_seed", lambda scale, seed: [C.Cell("fake_np_seed", {}, seed)],
                       lambda cell: None, (__name__,))
    assert exp.cells("smoke", np.uint16(2)) == exp.cells("smoke", 2)


@pytest.mark.parametrize("seed", [-1, 1.5, "0", None, True])
def test_bad_seeds_are_refused_alike(seed, tmp_path):
    for make in (lambda: Run("demo", scale="smoke", seed=seed, results_dir=tmp_path),
                 lambda: C.Cell("fake_np_seed", {}, seed)):
        with pytest.raises(InvalidInputError, match="seed must be an integer >= 0"):
            make()


def test_a_claim_may_name_the_scale_of_its_cells(tmp_path, monkeypatch):
    """A cpu chapter's claim decided from paper-scale cells is labelled paper, and the
    opening box's origin line then covers both scales."""
    kw = dict(tolerance=0.1, exact="a test number")
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    run.claim("001-X-1", "001", "Table 3", "q", 1.0, 1.0, **kw)
    run.claim("001-X-2", "001", "Table 10", "q", 1.0, 1.0, scale="paper", **kw)
    labels = dict(zip(run.claims.claim_id, run.claims.scale, strict=True))
    assert labels == {"001-X-1": "cpu", "001-X-2": "paper"}
    with pytest.raises(InvalidInputError, match="scale 'gpu' is not one of"):
        run.claim("001-X-3", "001", "Table 3", "q", 1.0, 1.0, scale="gpu", **kw)
    from fusionlib.compendium.cells import origin

    monkeypatch.setattr(origin, "origin_line",
                        lambda chapter, scale, seed=0, root=None: f"Results at scale {scale}.")
    monkeypatch.setattr(origin, "paper_ahead", lambda chapter, seed=0, root=None: None)
    record = run.finish()
    assert record["origin"] == "Results at scale cpu. Results at scale paper."
    only = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path / "b")
    only.claim("001-X-1", "001", "Table 3", "q", 1.0, 1.0, **kw)
    assert only.finish()["origin"] == "Results at scale cpu."
    # paper-scale cells computed but not read by a cpu page: said as such, once
    monkeypatch.setattr(origin, "paper_ahead", lambda chapter, seed=0, root=None: "Ahead.")
    assert only.finish()["origin"] == "Results at scale cpu. Ahead."
    assert run.finish()["origin"] == "Results at scale cpu. Results at scale paper."


def test_paper_ahead_names_the_paper_cells_computed(monkeypatch):
    from fusionlib.compendium.cells import origin

    monkeypatch.setattr(origin, "chapter_experiments", lambda chapter: ["ptgan_var_training"])
    counts = {"present": 0}

    def summed(scale, *, seed=0, root=None, experiments=None):
        assert scale == "paper" and experiments == ["ptgan_var_training"]
        return {"present": counts["present"], "text": f"{counts['present']} of 20 cells: ..."}
    monkeypatch.setattr(origin, "_summed_origin", summed)
    assert origin.paper_ahead("ptgan_variance") is None
    counts["present"] = 3
    line = origin.paper_ahead("ptgan_variance")
    assert line.startswith("At the paper scale, 3 of 20 cells") and "does not read" in line
    monkeypatch.setattr(origin, "chapter_experiments", lambda chapter: [])
    assert origin.paper_ahead("data") is None
