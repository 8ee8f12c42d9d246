"""The image experiments as cells: grids, encoding, "not run" cells without data."""

import numpy as np
import pytest

from fusionlib.ptgan.images import cells as image_cells
from fusionlib.ptgan.images.cells import (
    CLASSIFIER,
    PAPER,
    PROXY,
    decode_images,
    encode_images,
    paper_grid_rows,
)


def test_grids_per_scale():
    cells = PROXY.cells("cpu", 0)
    assert len(cells) == 5 * 2
    assert {c.config["run"]["method"] for c in cells} == {"sn", "mp", "pt+cp"}
    assert len({c.cell_id for c in cells}) == len(cells)
    assert len(PROXY.cells("smoke", 0)) == 5
    assert len(CLASSIFIER.cells("cpu", 0)) == 1
    assert PROXY.cells("cpu", 0) != PROXY.cells("cpu", 1)


def test_slice_runs_ptcp_at_both_table1_r_and_at_r_one():
    # Table 1 takes the better of r = 0.9 and 0.99 (Section 5.1); r = 1 isolates tempering
    # (Figure 5); the arms of one repetition share its seed, so differences are paired
    cells = PROXY.cells("cpu", 0)
    arms = {(c.config["run"]["method"], c.config["run"].get("r")) for c in cells}
    assert {("pt+cp", None), ("pt+cp", 0.99), ("pt+cp", 1.0)} <= arms
    for rep in (0, 1):
        assert len({c.seed for c in cells if c.config["rep"] == rep}) == 1
    assert image_cells.arm_label("pt+cp", 1.0) == "pt+cp r=1"
    # the default PT+CP arm is Table 1's first r
    from fusionlib.ptgan.config import DEFAULTS

    assert DEFAULTS["pt+cp"].r == image_cells.TABLE1_R[0]


def test_paper_grid_covers_the_tables():
    rows = paper_grid_rows()
    # Table 1: 2 data sets x (4 + 4 + 6) methods, PT+CP at two r: 2 x 17; Table 7: 2 x 4;
    # Table 8: 2 x 1 (r = 1; its r = 0.9 column is Table 1's r = 0.9 run); Table 2: 2
    assert len(rows) == 34 + 8 + 2 + 2
    t1 = [(ds, disc, ov.get("r")) for ds, disc, m, ov, t in rows
          if t == "Table 1" and m == "pt+cp"]
    assert sorted(t1) == sorted((ds, disc, r) for ds in ("cifar10", "bloodmnist")
                                for disc in ("jsd", "pd", "nd") for r in (0.9, 0.99))
    assert [ov for _, _, m, ov, t in rows if t == "Table 8"] == [{"r": 1.0}] * 2
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
    from fusionlib.ptgan.images.report import register_paper_tables

    run = Run("ptgan_images", scale="cpu", seed=0, results_dir=tmp_path)
    counts = register_paper_tables(run, "cpu")
    # means and sds: Table 1 28 rows x 4, Table 7 8 x 4, Table 8 4 x 4, Table 2 2 x 4
    assert counts == {"Table 1": 112, "Table 7": 32, "Table 8": 16, "Table 2": 8}
    claims = run.claims
    assert len(claims) == 168 and (claims.verdict == "not run").all()
    cifar = claims[claims.claim_id.str.contains("cifar10")]
    assert cifar.reason.str.contains("cifar-10-python.tar.gz").all()
    assert claims[claims.claim_id.str.contains("MLL")].reason.str.contains("fine-tuned").all()


def _fake_runs(rows):
    import pandas as pd

    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"dataset": "cifar10", "discrepancy": "nd", "method": "pt+cp",
                            "table": table, "r": r, "penalty_weight": 100.0, "status": "run",
                            "is": is_ + rng.normal(0, 0.09, 10),
                            "fid": fid + rng.normal(0, 0.9, 10)})
              for table, r, is_, fid in rows]
    return pd.concat(frames, ignore_index=True)


def test_paper_scale_results_are_compared(tmp_path, monkeypatch):
    from fusionlib.compendium.run import Run
    from fusionlib.ptgan.images import report as image_report

    # r = 0.9: the paper's IS, a bad FID; r = 0.99: a lower IS, the paper's FID; r = 1 (Table 8)
    fake = _fake_runs([("Table 1", 0.9, 7.292, 40.0), ("Table 1", 0.99, 6.0, 24.838),
                       ("Table 8", 1.0, 6.885, 28.551)])
    monkeypatch.setattr(image_report, "_paper_results", lambda scale, seed, root: fake)
    run = Run("ptgan_images", scale="paper", seed=0, results_dir=tmp_path)
    image_report.register_paper_tables(run, "paper")
    c = run.claims.set_index("claim_id")
    v = c.verdict
    # Table 1 takes the better r per metric: IS from r = 0.9, FID from r = 0.99
    assert v["001-T1-cifar10-nd-pt+cp-IS"] == "reproduced"
    assert v["001-T1-cifar10-nd-pt+cp-FID"] == "reproduced"
    is_09 = fake[(fake.r == 0.9)]["is"].mean()
    fid_099 = fake[(fake.r == 0.99)]["fid"].mean()
    assert float(c.loc["001-T1-cifar10-nd-pt+cp-IS", "ours"]) == pytest.approx(is_09, rel=1e-5)
    assert float(c.loc["001-T1-cifar10-nd-pt+cp-FID", "ours"]) == pytest.approx(fid_099,
                                                                               rel=1e-5)
    assert c.loc["001-T1-cifar10-nd-pt+cp-IS", "ours_n"] == "10"
    # Table 8 compares each r with the runs at that r: r = 0.9's FID is 40 against 25.087
    assert v["001-T8-cifar10-nd-pt+cp-0.9-IS"] == "reproduced"
    assert v["001-T8-cifar10-nd-pt+cp-0.9-FID"] == "differs"
    assert v["001-T8-cifar10-nd-pt+cp-1.0-FID"] == "reproduced"
    assert v["001-T1-cifar10-nd-mp-IS"] == "not run"
    assert v["001-T1-bloodmnist-nd-pt+cp-IS"] == "not run"  # needs a fine-tuned Inception
    assert (c.loc[c.verdict != "not run", "kind"] == "result").all()


def test_table1_ptcp_needs_both_r(tmp_path, monkeypatch):
    from fusionlib.compendium.run import Run
    from fusionlib.ptgan.images import report as image_report

    fake = _fake_runs([("Table 1", 0.9, 7.292, 24.838)])
    monkeypatch.setattr(image_report, "_paper_results", lambda scale, seed, root: fake)
    run = Run("ptgan_images", scale="paper", seed=0, results_dir=tmp_path)
    image_report.register_paper_tables(run, "paper")
    c = run.claims.set_index("claim_id")
    assert c.loc["001-T1-cifar10-nd-pt+cp-FID", "verdict"] == "not run"
    assert "r = 0.99" in c.loc["001-T1-cifar10-nd-pt+cp-FID", "reason"]
    # Table 8's r = 0.9 column needs only the r = 0.9 runs
    assert c.loc["001-T8-cifar10-nd-pt+cp-0.9-FID", "verdict"] != "not run"
    assert c.loc["001-T8-cifar10-nd-pt+cp-0.9-FID", "ours_n"] == "10"
