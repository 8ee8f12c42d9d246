"""What the FusionGAN chapter shows from the rows of its cells
(:mod:`fusionlib.fusion.mixture.cells`).

Every summary keeps the two facts a reader needs beside a number: how many seeds *learned*
(passed the held-out check of :mod:`fusionlib.fusion.convergence` at their last check) and at
which epoch. Estimates of a setting are taken over its learned seeds only; a setting with
fewer than :data:`MIN_LEARNED` learned seeds has no estimate ("not comparable": its generators
were stopped by the budget, not trained).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import Estimate

__all__ = ["MIN_LEARNED", "finals", "checks", "learned_estimate", "learned_difference",
           "not_comparable_reason", "setting_summary", "trajectory_figure", "at_iterations",
           "learned_status", "share_sentence", "mixture_correlations", "mmd_floor"]

#: learned seeds needed for an estimate with a standard error
MIN_LEARNED = 2


def finals(rows: pd.DataFrame) -> pd.DataFrame:
    """The final row of every (setting, seed) of the stacked settings."""
    out = rows[(rows["kind"] == "setting") & (rows["part"] == "final")].copy()
    out["learned"] = out["learned"].astype(bool)
    return out


def checks(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of every check (epoch) of every (setting, seed), up to the seed's first passing
    check: a seed that learned is done there (its generator is the one of that check), so the
    later checks of the stack it trained in are not its model's."""
    out = rows[(rows["kind"] == "setting") & (rows["part"] == "check")].copy()
    out["learned"] = out["learned"].astype(bool)
    done = finals(rows).set_index(["setting", "replica"])["learned_epoch"]
    stop = [done.get((s, r)) for s, r in zip(out["setting"], out["replica"], strict=True)]
    stop = pd.Series(stop, index=out.index, dtype=float)
    return out[stop.isna() | (out["epoch"] <= stop)]


def _learned(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["learned"].astype(bool)]


def learned_estimate(frame: pd.DataFrame, column: str) -> Estimate | None:
    """Mean and standard error of ``column`` over the learned rows, or None when fewer than
    :data:`MIN_LEARNED` learned (or the values are not all finite)."""
    values = _learned(frame)[column].astype(float).to_numpy()
    if len(values) < MIN_LEARNED or not np.isfinite(values).all():
        return None
    return Estimate.from_sample(values)


def learned_difference(a: pd.DataFrame, b: pd.DataFrame, column: str) -> Estimate | None:
    """``mean(a) - mean(b)`` of ``column`` over the learned rows of two settings, with the
    standard error of two independent means and Welch-Satterthwaite degrees of freedom; None
    when either has fewer than :data:`MIN_LEARNED` learned rows."""
    ea, eb = learned_estimate(a, column), learned_estimate(b, column)
    if ea is None or eb is None:
        return None
    return _welch(ea, eb)


def _welch(ea: Estimate, eb: Estimate) -> Estimate:
    """``ea - eb`` for two independent means of samples (se and df from both)."""
    va, vb = float(ea.se) ** 2, float(eb.se) ** 2
    se = float(np.sqrt(va + vb))
    if se == 0:  # every learned seed of both gave the same value: the spread is unknown
        return Estimate(ea.value - eb.value, None, None)
    parts = [(v, e.df) for v, e in ((va, ea), (vb, eb)) if v > 0]
    df = (se**4 / sum(v**2 / d for v, d in parts)
          if all(d for _, d in parts) else None)
    return Estimate(ea.value - eb.value, se, None, df)


def mixture_correlations(pairs: Sequence[tuple[str, str]], design: object = None
                         ) -> dict[str, float]:
    """The population correlation of each ``(a, b)`` pair of the simulated mixture (exact: from
    the components' weights, means and common covariance), keyed ``"a~b"``."""
    from fusionlib.fusion.mixture.data import COLUMNS, DEFAULT_DESIGN

    design = DEFAULT_DESIGN if design is None else design
    w, mu = np.asarray(design.weights), np.asarray(design.means)
    mean = w @ mu
    cov = design.covariance() + (mu - mean).T @ np.diag(w) @ (mu - mean)
    sd = np.sqrt(np.diag(cov))
    out = {}
    for a, b in pairs:
        i, j = COLUMNS.index(a), COLUMNS.index(b)
        out[f"{a}~{b}"] = float(cov[i, j] / (sd[i] * sd[j]))
    return out


def mmd_floor(truth: pd.DataFrame, draws: Sequence[pd.DataFrame], *, seed: object = 0
              ) -> Estimate:
    """The noise floor of the MMD to ``truth`` (section F, columns standardised with the
    truth's statistics, as the cells score a generator): mean and standard error over ``draws``,
    fresh samples of the truth's law of its size (what a generator that had learned the joint
    exactly would score)."""
    from fusionlib.fusion.evaluation import standardise_like
    from fusionlib.metrics.mmd import mmd
    from fusionlib.rng import child

    values = []
    for i, d in enumerate(draws):
        r, s = standardise_like(truth, truth, d[list(truth.columns)])
        values.append(mmd(r, s, seed=child(seed, "floor", i)).mmd)
    return Estimate.from_sample(values)


def not_comparable_reason(frame: pd.DataFrame, budget: int, what: str) -> str | None:
    """None when enough seeds learned, else the reason naming the reduction."""
    k, n = int(frame["learned"].astype(bool).sum()), len(frame)
    if k >= MIN_LEARNED:
        return None
    return (f"{what}: {k} of {n} seeds learned (held-out check) within the budget of {budget} "
            f"epochs; a generator stopped by the budget is not a trained FusionGAN")


def setting_summary(final: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """One row per setting: seeds, learned seeds, learned epochs, and mean (sd) of ``columns``
    over the learned seeds (all seeds when none learned, marked in ``over``)."""
    out = []
    for name, g in final.groupby("setting", sort=False):
        lg = _learned(g)
        use = lg if len(lg) else g
        epochs = sorted(int(e) for e in lg["learned_epoch"].dropna()) if len(lg) else []
        row = {"setting": name, "seeds": len(g), "learned": len(lg),
               "learned at epochs": ", ".join(map(str, epochs)) or "-",
               "epochs trained": int(g["epochs"].max()),
               "over": "learned seeds" if len(lg) else "all seeds (none learned)"}
        for c in columns:
            v = use[c].astype(float)
            row[c] = v.mean()
            row[f"{c} sd"] = v.std(ddof=1) if len(v) > 1 else np.nan
        out.append(row)
    return pd.DataFrame(out)


def at_iterations(check: pd.DataFrame, setting: str, epoch: int) -> pd.DataFrame:
    """Each seed's last check of ``setting`` at or before ``epoch`` (one row per seed)."""
    g = check[(check["setting"] == setting) & (check["epoch"] <= epoch)]
    return g.sort_values("epoch").groupby("replica").tail(1).sort_values("replica")


def trajectory_figure(check: pd.DataFrame, settings: Sequence[str], truth_share: float,
                      title: str):
    """Rare-mode share (top) and MMD to the truth (bottom) against epochs, one panel column
    per setting, one line per seed; filled markers where the held-out check passed."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(settings), figsize=(min(11.0, 2.8 * len(settings)), 6.2),
                             sharex=True, sharey="row", squeeze=False)
    for j, name in enumerate(settings):
        g = check[check["setting"] == name]
        for _, seed_rows in g.groupby("replica"):
            seed_rows = seed_rows.sort_values("epoch")
            for i, col in enumerate(("rare_share", "mmd")):
                ax = axes[i, j]
                line, = ax.plot(seed_rows["epoch"], seed_rows[col], lw=1, alpha=0.8)
                ok = seed_rows[seed_rows["learned"]]
                ax.plot(ok["epoch"], ok[col], "o", color=line.get_color(), ms=4)
        axes[0, j].axhline(truth_share, color="k", ls="--", lw=1)
        axes[0, j].set_title(name, fontsize=11)
        axes[1, j].set_xlabel("epoch")
    axes[0, 0].set_ylabel("rare-mode share")
    axes[1, 0].set_ylabel("MMD to the truth")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def learned_status(final: pd.DataFrame, setting: str) -> str:
    """``"k of n seeds learned (at epochs e1, e2)"`` for ``setting`` in the final rows (one per
    seed: ``setting``, ``learned``, ``learned_epoch``); the epochs in increasing order."""
    g = final[final["setting"] == setting]
    ep = sorted(int(e) for e in g.loc[g["learned"], "learned_epoch"].dropna())
    return (f"{int(g['learned'].sum())} of {len(g)} seeds learned"
            + (f" (at epochs {', '.join(map(str, ep))})" if ep else ""))


def share_sentence(final: pd.DataFrame, setting: str, label: str, *, truth_share: float,
                   scale: str, not_run_text: str, tolerance: float = 0.02) -> str:
    """One sentence: a weighting strategy's rare-mode share on its learned seeds against the
    truth's ``truth_share`` (it matches within ``tolerance``, else is below or above); not run
    (``not_run_text``) when the setting has no rows at ``scale``, not comparable when fewer
    than :data:`MIN_LEARNED` seeds learned (with the all-seed mean and sd). A weighted
    strategy's sentence also gives its target share (the reweighted law's, column
    ``target_rare_share``), which a learned weighted generator approaches instead of the
    truth's."""
    if not (final["setting"] == setting).any():
        return f"{label}: not run at scale {scale} ({not_run_text})"
    g = final[final["setting"] == setting]
    e = learned_estimate(g, "rare_share")
    status = learned_status(final, setting)
    if e is None:
        return (f"{label}: not comparable ({status}; all seeds, not learned: "
                f"{g['rare_share'].mean():.3f}, sd {g['rare_share'].std():.3f})")
    side = ("matches" if abs(e.value - truth_share) <= tolerance else
            "is below" if e.value < truth_share else "is above")
    target = ("" if "target_rare_share" not in g or label.startswith("uniform") else
              f"; its target share {g['target_rare_share'].mean():.3f}")
    return (f"{label}: {e.text(3)}, which {side} the truth's {truth_share:.3f}{target} "
            f"({status})")
