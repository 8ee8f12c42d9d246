"""The FusionGAN chapter's summaries of its cells' rows."""

import numpy as np
import pandas as pd
import pytest

from fusionlib.fusion.mixture.report import (
    at_iterations,
    checks,
    finals,
    learned_estimate,
    not_comparable_reason,
    setting_summary,
)


def cell_rows():
    check = [{"kind": "setting", "part": "check", "setting": "s", "replica": r, "epoch": e,
              "learned": r == 0 and e == 20, "rare_share": 0.01 * e + r, "mmd": 1.0,
              "coverage": 1.0} for r in (0, 1) for e in (20, 40)]
    final = [{"kind": "setting", "part": "final", "setting": "s", "replica": 0, "epochs": 40,
              "learned_epoch": 20.0, "learned": True, "rare_share": 0.05, "mmd": 0.2,
              "coverage": 0.5},
             {"kind": "setting", "part": "final", "setting": "s", "replica": 1, "epochs": 40,
              "learned_epoch": np.nan, "learned": False, "rare_share": 0.0, "mmd": 0.7,
              "coverage": 1.9}]
    return pd.DataFrame(check + final)


def test_checks_end_at_each_seeds_first_pass():
    c = checks(cell_rows())
    assert sorted(zip(c["replica"], c["epoch"], strict=True)) == [(0, 20), (1, 20), (1, 40)]
    assert at_iterations(c, "s", 40)["epoch"].tolist() == [20, 40]
    assert at_iterations(c, "s", 10).empty


def test_estimates_are_over_learned_seeds_only():
    f = finals(cell_rows())
    assert learned_estimate(f, "mmd") is None  # one learned seed: no estimate
    reason = not_comparable_reason(f, 40, "setting s")
    assert reason.startswith("setting s: 1 of 2 seeds learned") and "40 epochs" in reason
    two = pd.concat([f, f.assign(replica=2, mmd=0.4)], ignore_index=True)
    est = learned_estimate(two, "mmd")
    assert est.value == pytest.approx(0.3) and est.n == 2
    assert not_comparable_reason(two, 40, "x") is None


def test_summary_states_learned_seeds_and_their_epochs():
    s = setting_summary(finals(cell_rows()), ["mmd"]).iloc[0]
    assert (s["seeds"], s["learned"], s["learned at epochs"]) == (2, 1, "20")
    assert s["mmd"] == pytest.approx(0.2) and s["over"] == "learned seeds"
