"""The theory, identification and fairness-bounds chapters read the paper scale's cells at cpu
scale where all are present. Their paper grids are complete in the committed bundles, so this
runs each chapter's
code cells in-process at scale ``cpu`` against a shard folder holding only those bundles: the
paper branch must run to the end, read (never compute) the cells, say so, and label its claims
with scale ``paper``. Without the bundles the same chapters take their own-scale branch (that one
runs in every smoke build). The FairPTGAN chapter's Adult cells and the variance chapter's three
grids are committed complete too: their readers find every cell (those chapters also compute
cpu cells of their own, so they are not run whole here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionlib.compendium.cells.bundle import import_bundle

from .test_paper_branches import _run

BUNDLES = Path(__file__).resolve().parents[1] / "bundles"


def _install(root: Path, pattern: str) -> int:
    bundles = sorted(BUNDLES.glob(pattern))
    assert bundles, f"no committed bundle {pattern} under {BUNDLES}"
    return sum(len(import_bundle(b, root=root).installed) for b in bundles)


@pytest.mark.parametrize("chapter, pattern, n_cells, settings", [
    ("identification.md", "paper-seed0-identification*.tar.gz", 243, set()),
    ("fairness_bounds.md", "paper-seed0-fairness_bounds*.tar.gz", 3, set()),
    ("ptgan_theory.md", "paper-seed0-ptgan_theory_*.tar.gz", 50,
     {"001-A2-critics", "001-A4-generators"}),
])
def test_a_cpu_chapter_reads_its_committed_paper_grid(chapter, pattern, n_cells, settings,
                                                      tmp_path, monkeypatch):
    root = tmp_path / "cells"
    assert _install(root, pattern) == n_cells
    monkeypatch.setenv("FUSIONLIB_CELLS", str(root))
    import fusionlib.compendium.cells.exec as exec_mod

    def no_compute(*args, **kwargs):
        raise AssertionError("a cell was computed; the paper branch only reads")

    monkeypatch.setattr(exec_mod, "_compute_one", no_compute)
    ns = _run(chapter, tmp_path / "out")
    assert ns["c_scale"] == "paper" and ns["c_label"] == "paper"
    claims = ns["run"].claims
    assert len(claims) > 0
    scales = dict(zip(claims.claim_id, claims.scale, strict=True))
    assert {c for c, s in scales.items() if s != "paper"} == settings


def test_the_committed_adult_fair_cells_are_complete_and_fairwgangp_is_not_compared(tmp_path):
    """Adult's 4 FairPTGAN/FairWGANGP paper cells are committed: the cpu chapter reads them for
    Tables 4 and 12. 9 of FairWGANGP's 10 repetitions collapsed to a single-class label, so its
    rows are not compared and Figure 7's gap is read against GeoRepair alone."""
    from fusionlib.ptgan.fair.cells import THRESHOLDS
    from fusionlib.ptgan.fair.report import (
        collapsed_reps,
        lowest_gap_reading,
        present_paper_scores,
    )

    root = tmp_path / "cells"
    n = sum(_install(root, f"paper-seed0-{m}-adult-reps*.tar.gz")
            for m in ("fairptgan", "fairwgangp"))
    scores, present, total = present_paper_scores("adult", 0, root=root)
    assert (n, present, total) == (4, 4, 4) and scores is not None
    assert collapsed_reps(scores, "adult", "FairWGANGP") == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert collapsed_reps(scores, "adult", "FairPTGAN") == []
    assert collapsed_reps(scores, "adult", "GeoRepair") == []
    read = lowest_gap_reading(scores, "adult", "RF", THRESHOLDS["Table 12"]["adult"])
    assert read.dropped == ("FairWGANGP",) and read.against == ("GeoRepair",)


@pytest.mark.parametrize("kind, n_cells", [("collapse", 40), ("training", 20), ("noise", 40)])
def test_the_variance_chapters_committed_paper_grids_are_complete(kind, n_cells, tmp_path):
    """Every paper run of Figures 2/4, Section 4.2's training comparison and Figure 8 is
    committed: the cpu variance chapter reads them (``present_traces``), computing none."""
    from fusionlib.compendium.cells import get_experiment
    from fusionlib.ptgan.variance.present import present_traces

    root = tmp_path / "cells"
    for pattern in ("paper-seed0-ptgan_var_*.tar.gz", "paper-seed0-cpu-vm-*.tar.gz"):
        _install(root, pattern)
    assert len(get_experiment(f"ptgan_var_{kind}").cells("paper", 0)) == n_cells
    traces = present_traces(kind, "paper", 0, root=root)
    assert traces is not None and traces["seed"].nunique() == 10
