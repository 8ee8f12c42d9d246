"""The image experiments as cells: grids, encoding, "not run" cells without data."""

import numpy as np
import pytest

from fusionlib.ptgan import image_cells
from fusionlib.ptgan.image_cells import (
    CLASSIFIER,
    PAPER,
    PROXY,
    decode_images,
    encode_images,
    paper_grid_rows,
)


def test_grids_per_scale():
    cells = PROXY.cells("cpu", 0)
    assert len(cells) == 3 * 2
    assert {c.config["run"]["method"] for c in cells} == {"sn", "mp", "pt+cp"}
    assert len({c.cell_id for c in cells}) == len(cells)
    assert len(PROXY.cells("smoke", 0)) == 3
    assert len(CLASSIFIER.cells("cpu", 0)) == 1
    assert PROXY.cells("cpu", 0) != PROXY.cells("cpu", 1)


def test_paper_grid_covers_the_tables():
    rows = paper_grid_rows()
    # Table 1: 2 data sets x (4 + 4 + 6) methods; Table 7: 2 x 4; Table 8: 2 x 2; Table 2: 2
    assert len(rows) == 28 + 8 + 4 + 2
    cells = PAPER.cells("paper", 0)
    assert len(cells) == 10 * len(rows)
    assert all(c.config["run"]["n_iter"] in (100_000, 70_000) for c in cells)
    with pytest.raises(Exception, match="scale"):
        PAPER.cells("cpu", 0)


def test_images_round_trip():
    x = np.random.default_rng(0).integers(0, 256, size=(3, 1, 4, 4), dtype=np.uint8)
    np.testing.assert_array_equal(decode_images(encode_images(x)), x)


def test_paper_cell_without_data_is_provisional_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path))
    cell = next(c for c in PAPER.cells("paper", 0) if c.config["run"]["dataset"] == "cifar10")
    shard = image_cells._paper_compute(cell)
    assert shard.provisional
    row = shard.rows.iloc[0]
    assert row.status == "not run" and "cifar-10-python.tar.gz" in row.reason


def test_every_number_of_tables_1_2_7_8_gets_a_claim(tmp_path):
    from fusionlib.compendium.run import Run
    from fusionlib.ptgan.image_report import register_paper_tables

    run = Run("ptgan_images", scale="cpu", seed=0, results_dir=tmp_path)
    counts = register_paper_tables(run, "cpu")
    # means and sds: Table 1 28 rows x 4, Table 7 8 x 4, Table 8 4 x 4, Table 2 2 x 4
    assert counts == {"Table 1": 112, "Table 7": 32, "Table 8": 16, "Table 2": 8}
    claims = run.claims
    assert len(claims) == 168 and (claims.verdict == "not run").all()
    cifar = claims[claims.claim_id.str.contains("cifar10")]
    assert cifar.reason.str.contains("cifar-10-python.tar.gz").all()
    assert claims[claims.claim_id.str.contains("MLL")].reason.str.contains("fine-tuned").all()


def test_paper_scale_results_are_compared(tmp_path, monkeypatch):
    import pandas as pd

    from fusionlib.compendium.run import Run
    from fusionlib.ptgan import image_report

    rng = np.random.default_rng(0)
    fake = pd.DataFrame({"dataset": "cifar10", "discrepancy": "nd", "method": "pt+cp",
                         "table": "Table 1", "r": 0.9, "penalty_weight": 100.0, "status": "run",
                         "is": 7.292 + rng.normal(0, 0.09, 10),
                         "fid": 40.0 + rng.normal(0, 0.9, 10)})
    monkeypatch.setattr(image_report, "_paper_results", lambda scale, seed, root: fake)
    run = Run("ptgan_images", scale="paper", seed=0, results_dir=tmp_path)
    image_report.register_paper_tables(run, "paper")
    c = run.claims.set_index("claim_id").verdict
    assert c["001-T1-cifar10-nd-pt+cp-IS"] == "reproduced"
    assert c["001-T1-cifar10-nd-pt+cp-FID"] == "differs"  # 40 against 24.838
    assert c["001-T8-cifar10-nd-pt+cp-0.9-IS"] == "reproduced"  # Table 1's default run
    assert c["001-T8-cifar10-nd-pt+cp-1.0-IS"] == "not run"
    assert c["001-T1-cifar10-nd-mp-IS"] == "not run"
    assert c["001-T1-bloodmnist-nd-pt+cp-IS"] == "not run"  # needs a fine-tuned Inception
