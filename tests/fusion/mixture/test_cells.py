"""The FusionGAN chapter's experiment: its grid and one cell of each kind, on tiny settings."""

import pytest

from fusionlib.compendium.cells import Cell
from fusionlib.fusion.mixture.cells import CONFIG, FUSIONGAN, SKIPPED, _compute
from fusionlib.fusion.mixture.runs import SETTINGS

TINY = dict(n=200, epochs=2, every=1, rows=30, n_eval=200, seeds=2, ext_seeds=1,
            ext_epochs=1)


def test_grid_has_one_cell_per_setting_and_the_extension_seeds():
    cells = FUSIONGAN.cells("cpu", 0)
    settings = [c.config["setting"] for c in cells if c.config["kind"] == "setting"]
    assert settings == [s for s in SETTINGS if s not in SKIPPED["cpu"]]
    assert "appendix" in settings and "density, lr 1e-3" in settings
    assert [c.config["setting"] for c in FUSIONGAN.cells("paper", 0)
            if c.config["kind"] == "setting"] == list(SETTINGS)
    for kind in ("groups", "wgan-gp"):
        reps = [c.config["rep"] for c in cells if c.config["kind"] == kind]
        assert reps == list(range(CONFIG["cpu"]["ext_seeds"]))
    assert len({c.cell_id for c in cells}) == len(cells)
    assert FUSIONGAN.cells("cpu", 0) == cells and FUSIONGAN.cells("cpu", 1) != cells


def test_setting_cell_records_checks_and_finals_of_every_seed():
    shard = _compute(Cell("fusiongan", dict(kind="setting", setting="appendix", **TINY), 3))
    rows = shard.rows
    checks, finals = rows[rows["part"] == "check"], rows[rows["part"] == "final"]
    assert sorted(checks["epoch"].unique()) == [1, 2] and len(checks) == 4
    assert finals["replica"].tolist() == [0, 1]
    assert set(finals["learned"]) <= {True, False}
    assert finals["rare_share"].between(0, 1).all() and (finals["mmd"] >= 0).all()
    assert list(shard.figures["sample"]) == ["x1", "x2", "y1", "y2", "z"]
    again = _compute(Cell("fusiongan", dict(kind="setting", setting="appendix", **TINY), 3))
    assert again.rows.drop(columns="calibration_refused").equals(
        rows.drop(columns="calibration_refused"))


@pytest.mark.parametrize("kind", ["groups", "wgan-gp"])
def test_extension_cells_state_whether_they_learned(kind):
    rows = _compute(Cell("fusiongan", dict(kind=kind, rep=0, **TINY), 3)).rows
    models = rows[rows["g"] == "all"] if kind == "groups" else rows
    assert models["epochs"].eq(1).all() and "learned" in models
