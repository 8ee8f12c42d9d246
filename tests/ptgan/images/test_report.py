"""Tests of the image chapter's architecture check and panel claims
(fusionlib.ptgan.images.report)."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.compendium.run import Run
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.images.report import METHOD_NAMES, check_architecture, panel_claim

CFG = {"n_iter": 300, "width": 0.25}
DIV = pd.DataFrame({"panel": ["PTGAN", "SNGAN (SN)"], "mean pair distance": [12.0, 3.0]})


def test_table5_32px_networks_match_the_typed_table():
    ours, params = check_architecture("Table 5", 32)
    assert len(ours) > 0 and ours["matches paper"].all()
    assert params["generator"] > 0 and params["critic"] > 0
    with pytest.raises(InvalidInputError, match="Table 5"):
        check_architecture("Table 9", 32)


def test_a_stand_in_panel_is_not_comparable(tmp_path):
    run = Run("ptgan_images", scale="cpu", seed=0, results_dir=tmp_path)
    panel_claim(run, "Figure 15", "bloodmnist", "generated", ["pt+cp", "sn"], paper_imgs={},
                div=DIV, cfg=CFG)
    row = run.claims.set_index("claim_id").loc["001-F15-panel"]
    assert row["ours"] == "stand-in drawn above; diversity on the stand-in: PTGAN 12, SNGAN 3"
    assert row["verdict"] == "not comparable"
    assert "Fashion-MNIST at 300 iterations and width x0.25" in row["reason"]
    assert "bloodmnist after 100k iterations" in row["reason"]
    assert "PTGAN, SNGAN (SN)" in row["quantity"]


def test_a_paper_panel_without_its_data_is_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path / "data"))
    run = Run("ptgan_images", scale="paper", seed=0, results_dir=tmp_path / "out")
    panel_claim(run, "Figure 12", "cifar10", "real", [], paper_imgs={}, div=DIV, cfg=CFG)
    row = run.claims.set_index("claim_id").loc["001-F12-panel"]
    assert row["verdict"] == "not run"
    assert "cifar-10-python.tar.gz" in row["reason"] and "nothing else" in row["reason"]
    assert "(real images)" in row["quantity"]


def test_method_names():
    assert METHOD_NAMES["pt+cp"] == "PTGAN"


def test_a_real_image_panel_is_an_implementation_claim_with_its_reason(tmp_path, monkeypatch):
    # issue 29 item 2: the drawn real panel was a stated "reproduced" result; a panel of real
    # images measures nothing of the paper's, so it is shown (implementation), never counted
    import numpy as np

    import fusionlib.data.images as images
    import fusionlib.data.store as store

    monkeypatch.setattr(store, "dataset_states", lambda name: {"train": "present (test)"})
    monkeypatch.setattr(images, "load_image_dataset",
                        lambda name, split, limit=None: (np.zeros((64, 3, 32, 32), np.uint8),
                                                         None))
    run = Run("ptgan_images", scale="paper", seed=0, results_dir=tmp_path / "out")
    panel_claim(run, "Figure 12", "cifar10", "real", [], paper_imgs={}, div=DIV, cfg=CFG)
    row = run.claims.set_index("claim_id").loc["001-F12-panel"]
    assert row["kind"] == "implementation" and row["verdict"] == "reproduced"
    assert row["stated"] == "True" and "measures nothing" in row["reason"]
