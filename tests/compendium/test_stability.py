"""Seed stability: each claim's verdict at several root seeds."""

from __future__ import annotations

import pandas as pd
import pytest

from fusionlib.compendium import stability
from fusionlib.errors import InvalidInputError


def _claims(verdicts):
    return pd.DataFrame({"claim_id": list(verdicts), "seed_file": "001", "experiment": "e",
                         "verdict": list(verdicts.values())})


def test_stable_and_flipping_claims():
    table = stability.stability_table({
        0: _claims({"a": "reproduced", "b": "differs", "c": "inconclusive"}),
        1: _claims({"a": "reproduced", "b": "inconclusive", "c": "inconclusive"}),
        2: _claims({"a": "reproduced", "b": "differs"}),
    }).set_index("claim_id")
    assert table.loc["a", "stability"] == "stable"
    assert table.loc["b", "stability"] == ("flips: differs at seed 0, 2; "
                                           "inconclusive at seed 1")
    assert table.loc["c", "stability"].startswith("flips: (absent) at seed 2")
    assert table.loc["b", "seed 1"] == "inconclusive" and table.loc["c", "seed 2"] == ""


def test_a_claim_decided_at_another_scale_at_one_seed_compares_scales_not_seeds():
    """Seed 0 reads the paper scale's cells (F4: reproduced), seeds 1 and 2 their own cpu runs
    (inconclusive): "scales differ", neither stable nor a flip. Claims at one scale everywhere
    keep the usual labels."""
    def at(verdicts, scales):
        return _claims(verdicts).assign(scale=[scales[k] for k in verdicts])

    table = stability.stability_table({
        0: at({"f4": "reproduced", "x": "reproduced"}, {"f4": "paper", "x": "cpu"}),
        1: at({"f4": "inconclusive", "x": "differs"}, {"f4": "cpu", "x": "cpu"}),
        2: at({"f4": "inconclusive", "x": "reproduced"}, {"f4": "cpu", "x": "cpu"}),
    }).set_index("claim_id")
    f4 = table.loc["f4", "stability"]
    assert f4.startswith("scales differ: cpu at seed 1, 2; paper at seed 0")
    assert "reproduced at seed 0" in f4 and not f4.startswith("flips")
    assert table.loc["x", "stability"].startswith("flips: differs at seed 1")


def test_one_seed_is_refused():
    with pytest.raises(InvalidInputError, match="two seeds"):
        stability.stability_table({0: _claims({"a": "reproduced"})})


def test_write_and_load(tmp_path, monkeypatch):
    monkeypatch.setattr(stability, "STABILITY_DIR", tmp_path)
    assert stability.load_stability("cpu") is None
    table = stability.stability_table({0: _claims({"a": "reproduced"}),
                                       1: _claims({"a": "differs"})})
    path = stability.write_stability(table, "cpu", [0, 1])
    back = stability.load_stability("cpu")
    assert back.attrs["path"] == str(path) and back.stability.tolist() == [
        "flips: differs at seed 1; reproduced at seed 0"]
    assert '"flips": 1' in path.with_suffix(".json").read_text()


def test_cli_refuses_a_bad_seed_dir_and_an_empty_folder(tmp_path, capsys):
    assert stability.main(["--scale", "cpu", "--seed-dir", "x=y"]) == 2
    assert "SEED=FOLDER" in capsys.readouterr().err
    assert stability.main(["--scale", "cpu", "--seed-dir", f"0={tmp_path}",
                           "--seed-dir", f"1={tmp_path}"]) == 2
    assert "no chapter claims" in capsys.readouterr().err
