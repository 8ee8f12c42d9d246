"""The FusionGAN chapter's runs on the simulated mixture: one setting, several seeds, trained
until learned (or the budget), scored against the known truth.

A *setting* is a named choice of what the appendix leaves open or what the chapter varies
(:data:`SETTINGS`): learning rates, standardisation, the section D weighting, the origin
project's double use of the weights. :func:`run_setting` trains the seeds of one setting as
one :class:`~fusionlib.fusion.replicas.StackedFusionGAN`, checks the held-out criterion of
:mod:`fusionlib.fusion.convergence` every ``every`` epochs, and records at every check the
truth-side scores of each seed (for the figure of scores against epochs; the criterion never
sees the truth), then the final scores, calibration and memorisation of each seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fusionlib.errors import FusionlibError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.convergence import ConvergenceRule
from fusionlib.fusion.evaluation import cross_correlations, score, standardise_like
from fusionlib.fusion.mixture.data import mixture_sources, rare_mask, rare_share
from fusionlib.metrics.coverage import coverage
from fusionlib.metrics.mmd import mmd
from fusionlib.metrics.privacy import dcr
from fusionlib.rng import child

__all__ = ["SETTINGS", "PAIRS", "run_setting", "calibration_error", "calibration_targets",
           "target_rare_share"]

#: name -> (FusionConfig fields, standardize). "appendix": section C as printed, raw inputs
SETTINGS: dict[str, tuple[dict[str, Any], bool]] = {
    "appendix": ({}, False),
    "standardised": ({}, True),
    "lr 1e-3": ({"lr_g": 1e-3, "lr_d": 1e-3}, False),
    "G 2e-4, D 1e-3": ({"lr_g": 2e-4, "lr_d": 1e-3}, False),
    "cluster": ({"weighting": "cluster"}, False),
    "density": ({"weighting": "density"}, False),
    "density, w^2 (origin)": ({"weighting": "density", "weight_sampling": True}, False),
    "cluster, lr 1e-3": ({"weighting": "cluster", "lr_g": 1e-3, "lr_d": 1e-3}, False),
    "density, lr 1e-3": ({"weighting": "density", "lr_g": 1e-3, "lr_d": 1e-3}, False),
    "density, w^2 (origin), lr 1e-3": ({"weighting": "density", "weight_sampling": True,
                                        "lr_g": 1e-3, "lr_d": 1e-3}, False),
}
#: truth and generated rows scored at each check (the figure against epochs); finals use n_eval
CHECK_ROWS = 1_000
#: correlations shown (y1~z: never observed together)
PAIRS = [("x1", "y1"), ("y1", "z"), ("y2", "z")]


def calibration_targets(truth: pd.DataFrame) -> dict:
    """The chapter's aggregate targets from the truth: counts per sign of x1 and of z, totals
    of |y1| per sign of x1 (stand-ins for an official table's counts and totals)."""
    ref = _with_groups(truth)
    return {"counts": {"side": ref["side"].value_counts().to_dict(),
                       "z_side": ref["z_side"].value_counts().to_dict()},
            "totals": {"abs_y1": {f"side={g}": float(ref.loc[ref.side == g, "abs_y1"].sum())
                                  for g in ("neg", "pos")}}}


def _with_groups(t: pd.DataFrame) -> pd.DataFrame:
    return t.assign(side=np.where(t["x1"] > 0, "pos", "neg"),
                    z_side=np.where(t["z"] > 0, "pos", "neg"), abs_y1=t["y1"].abs())


def calibration_error(truth: pd.DataFrame, synthetic: pd.DataFrame) -> tuple[float, str]:
    """Largest relative error of the raking-calibrated totals, or (NaN, why it was refused)."""
    from fusionlib.fusion.calibration import calibrate

    try:
        cal = calibrate(_with_groups(synthetic), calibration_targets(truth), method="raking")
    except (FusionlibError, ValueError) as exc:
        return float("nan"), str(exc)
    return float(cal.residuals["rel_error"].abs().max()), ""


def _truth_scores(truth: pd.DataFrame, synth: pd.DataFrame, seed: object) -> dict[str, float]:
    r, s = standardise_like(truth, truth, synth)
    return {"mmd": mmd(r, s, seed=seed).mmd, "coverage": coverage(r, s),
            "rare_share": rare_share(synth)}


def _final_row(model, r: int, truth: pd.DataFrame, synth: pd.DataFrame, seed: object) -> dict:
    m = model.models_[r]
    cols = list(m.train_["A"].columns)
    tr, ho = m.train_["A"][cols], m.holdout_["A"][cols]
    k = min(len(tr), len(ho))
    row = {"rare_share": rare_share(synth), **score(truth, synth, seed=seed)}
    row.update({f"corr {a}~{b}": v for (a, b), v in
                zip(PAIRS, cross_correlations(synth, PAIRS).values(), strict=True)})
    row.update({f"sd {c}": float(synth[c].std()) for c in truth.columns})
    t_std, h_std, s_std = standardise_like(tr, tr.iloc[:k], ho.iloc[:k], synth[cols])
    mem = dcr(t_std, s_std, holdout=h_std)
    row["memorisation_excess"] = max(0.0, mem.closer_to_train_share
                                     - mem.closer_to_train_expected)
    row["calibration_error"], row["calibration_refused"] = calibration_error(truth, synth)
    row["target_rare_share"] = target_rare_share(m)
    return row


def target_rare_share(model) -> float:
    """The rare-mode share of the law a fitted FusionGAN aims at: each source's training rows
    reweighted by the run's section D weights (squared with ``weight_sampling``), averaged over
    the sources (the rare mode is read on columns every source has). The truth's share for
    uniform weights; a weighted generator that has learned its target sits near this value,
    not near the truth's."""
    power, shares = 1 + int(model.config.weight_sampling), []
    for name in model.sources_:
        w = np.asarray(model.weights_[name], dtype=np.float64) ** power
        shares.append(float(w[rare_mask(model.train_[name])].sum() / w.sum()))
    return float(np.mean(shares))


def run_setting(setting: str, *, n: int, epochs: int, every: int, seeds: list, n_eval: int,
                rows: int, seed: object, keep_samples: bool = False
                ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Train ``seeds`` of ``setting`` on the mixture sources of ``seed``; returns the checks
    (one row per seed and check), the final rows (one per seed) and, with ``keep_samples``,
    seed 0's final synthetic records (figure data)."""
    from fusionlib.fusion.replicas import StackedFusionGAN

    fields, standardize = SETTINGS[setting]
    sources, truth = mixture_sources(n, child(seed, "data"))
    truth = truth.iloc[:n_eval]
    rule = ConvergenceRule(every=every, rows=rows)
    traj: list[dict] = []

    def on_check(model, epoch: int) -> None:
        last = model.last_check_
        n_check = min(n_eval, CHECK_ROWS)
        for r, synth in enumerate(model.sample(n_check, seed=child(seed, "check", epoch))):
            mine = last[last["replica"] == r]
            traj.append({"setting": setting, "replica": r, "epoch": epoch,
                         "learned": bool(mine["learned"].all()),
                         "heldout_mmd_ratio": float(mine["mmd_ratio"].max()),
                         "heldout_coverage_ratio": float(mine["coverage_ratio"].max()),
                         "heldout_uncovered": float(mine["uncovered"].max()),
                         **_truth_scores(truth.iloc[:n_check], synth,
                                         child(seed, "score", epoch, r))})

    model = StackedFusionGAN(seeds, epochs, FusionConfig(**fields), standardize=standardize,
                             convergence=rule)
    model.fit(sources, callback=on_check)
    finals = []
    samples = model.sample(n_eval, seed=child(seed, "sample"))
    for r, synth in enumerate(samples):
        finals.append({"setting": setting, "replica": r, "epochs": model.epochs_,
                       "learned_epoch": model.learned_epoch_[r],
                       "learned": model.learned_[r],
                       **_final_row(model, r, truth, synth, child(seed, "final", r))})
    figures = {"sample": samples[0].to_dict("list")} if keep_samples else {}
    return pd.DataFrame(traj), pd.DataFrame(finals), figures
