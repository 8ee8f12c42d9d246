"""The FusionGAN chapter's summaries of its cells' rows."""

import numpy as np
import pandas as pd
import pytest

from fusionlib.fusion.mixture.report import (
    at_iterations,
    checks,
    finals,
    learned_estimate,
    learned_status,
    not_comparable_reason,
    setting_summary,
    share_sentence,
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


def _final(learned_epochs, shares, setting="s"):
    return pd.DataFrame({"setting": setting, "learned": [e is not None for e in learned_epochs],
                         "learned_epoch": [np.nan if e is None else float(e)
                                           for e in learned_epochs],
                         "rare_share": shares})


def test_learned_status_lists_the_epochs_in_order():
    f = _final([40, None, 20], [0.05, 0.0, 0.06])
    assert learned_status(f, "s") == "2 of 3 seeds learned (at epochs 20, 40)"
    assert learned_status(_final([None], [0.0]), "s") == "0 of 1 seeds learned"


def test_share_sentence_against_the_truth():
    kw = dict(truth_share=0.05, scale="cpu", not_run_text="paper scale only")
    assert share_sentence(_final([10], [0.05]), "x", "uniform", **kw) == (
        "uniform: not run at scale cpu (paper scale only)")
    one = share_sentence(_final([10, None], [0.05, 0.0]), "s", "uniform", **kw)
    assert one.startswith("uniform: not comparable (1 of 2 seeds learned (at epochs 10); "
                          "all seeds, not learned: 0.025, sd 0.035)")
    assert "which matches the truth's 0.050" in share_sentence(
        _final([10, 20], [0.04, 0.06]), "s", "u", **kw)
    assert "which is below the truth's" in share_sentence(
        _final([10, 20], [0.01, 0.02]), "s", "u", **kw)
    assert "which is above the truth's" in share_sentence(
        _final([10, 20], [0.2, 0.3]), "s", "u", **kw)


def test_share_sentence_of_a_weighted_strategy_gives_its_target():
    kw = dict(truth_share=0.05, scale="cpu", not_run_text="paper scale only")
    f = _final([10, 20], [0.25, 0.27]).assign(target_rare_share=[0.26, 0.28])
    assert "above the truth's 0.050; its target share 0.270 (" in share_sentence(
        f, "s", "density, lr 1e-3", **kw)
    assert "target" not in share_sentence(f, "s", "uniform, lr 1e-3", **kw)


def _learned(values, learned=None):
    learned = [True] * len(values) if learned is None else learned
    return pd.DataFrame({"rare_share": values, "learned": learned})


def test_learned_difference_is_welch_over_learned_seeds():
    from fusionlib.fusion.mixture.report import learned_difference

    a = _learned([0.20, 0.25, 0.30, 0.9], learned=[True, True, True, False])
    b = _learned([0.05, 0.06, 0.04])
    d = learned_difference(a, b, "rare_share")
    va, vb = np.var([0.2, 0.25, 0.3], ddof=1) / 3, np.var([0.05, 0.06, 0.04], ddof=1) / 3
    assert d.value == pytest.approx(0.25 - 0.05)
    assert d.se == pytest.approx(np.sqrt(va + vb))
    assert d.df == pytest.approx((va + vb) ** 2 / (va**2 / 2 + vb**2 / 2))
    assert learned_difference(a, _learned([0.05, 0.06], [True, False]), "rare_share") is None
    same = learned_difference(_learned([0.1, 0.1]), _learned([0.0, 0.0]), "rare_share")
    assert same.value == pytest.approx(0.1) and same.se is None  # spread unknown, not exact


def test_mixture_correlations_match_a_large_sample():
    from fusionlib.fusion.mixture.data import sample_mixture
    from fusionlib.fusion.mixture.report import mixture_correlations

    pairs = [("x1", "y1"), ("y1", "z"), ("y2", "z"), ("x1", "x1")]
    exact = mixture_correlations(pairs)
    x, _ = sample_mixture(400_000, 0)
    for a, b in pairs:
        assert exact[f"{a}~{b}"] == pytest.approx(x[a].corr(x[b]), abs=0.005)
    assert exact["x1~x1"] == pytest.approx(1.0)


def test_mmd_floor_is_the_mean_over_fresh_draws():
    from fusionlib.fusion.mixture.data import sample_mixture
    from fusionlib.fusion.mixture.report import mmd_floor

    truth, _ = sample_mixture(300, 1)
    draws = [sample_mixture(300, (2, i))[0] for i in range(3)]
    floor = mmd_floor(truth, draws, seed=0)
    assert floor.n == 3 and floor.value >= 0 and floor.value < 0.2
    far = mmd_floor(truth, [d + 3.0 for d in draws], seed=0)
    assert far.value > 5 * max(floor.value, 1e-3)
