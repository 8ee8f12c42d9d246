"""The theory, identification and fairness-bounds chapters read the paper scale's cells at cpu
scale where all are present. Their paper grids are complete in the committed bundles, so this
runs each chapter's
code cells in-process at scale ``cpu`` against a shard folder holding only those bundles: the
paper branch must run to the end, read (never compute) the cells, say so, and label its claims
with scale ``paper``. Without the bundles the same chapters take their own-scale branch (that one
runs in every smoke build)."""

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
