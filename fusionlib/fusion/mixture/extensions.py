"""The FusionGAN chapter's extension runs (section I), one seed each, trained until learned.

- ``groups``: the mixture with its component as a categorical column ``g`` (observed by source
  A only); a categorical model (Gumbel-softmax head) and a conditional model, each trained with
  the held-out criterion of :mod:`fusionlib.fusion.convergence`, at :data:`GROUPS_CONFIG`
  (learning rates 1e-3: at section C's 1e-4 the categorical model had not found the rare
  group within the cpu budget in trial runs); shares, association and within-group fidelity
  against the truth.
- ``wgan-gp``: the section C model with the WGAN-GP loss (extension 1) on the mixture.
"""

from __future__ import annotations

import pandas as pd

from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.convergence import ConvergenceRule
from fusionlib.fusion.evaluation import correlation_ratio, group_mmd, score
from fusionlib.fusion.mixture.data import GROUPS, grouped_sources, mixture_sources, rare_share
from fusionlib.rng import child

__all__ = ["NUMERIC", "GROUPS_CONFIG", "run_groups", "run_wgan"]

NUMERIC = ["x1", "x2", "y1", "y2", "z"]
#: the categorical and conditional models' configuration (section C but both rates 1e-3)
GROUPS_CONFIG = FusionConfig(lr_g=1e-3, lr_d=1e-3)
#: shares requested from the conditional model (far from the training shares)
REQUESTED = {"common": 0.2, "middle": 0.3, "rare": 0.5}


def _fit(sources, *, epochs: int, rule: ConvergenceRule, seed: object, **options):
    from fusionlib.fusion.synthesizer import FusionGAN

    return FusionGAN(epochs, convergence=rule, standardize=False, seed=seed,
                     **options).fit(sources)


def _status(model) -> dict:
    return {"epochs": model.epochs_, "learned_epoch": model.learned_epoch_,
            "learned": model.learned_epoch_ is not None}


def run_groups(*, n: int, epochs: int, every: int, rows: int, rep: int, seed: object
               ) -> pd.DataFrame:
    """Categorical and conditional models of seed ``(seed, "rep", rep)``: one row per
    (model, group) plus one summary row per model (``g`` = "all")."""
    gsrc, gtruth = grouped_sources(n, child(seed, "grouped-data"))
    rule, fit_seed = ConvergenceRule(every=every, rows=rows), child(seed, "rep", rep)
    cat = _fit(gsrc, epochs=epochs, rule=rule, seed=fit_seed, discrete_columns=["g"],
               config=GROUPS_CONFIG)
    cond = _fit(gsrc, epochs=epochs, rule=rule, seed=fit_seed, condition="g",
                config=GROUPS_CONFIG)
    s_cat = cat.sample(n, seed=child(fit_seed, "sample"))
    s_cond = cond.sample(n, seed=child(fit_seed, "sample"))
    out = []
    for name, model, synth in (("categorical", cat, s_cat), ("conditional", cond, s_cond)):
        shares = synth["g"].value_counts(normalize=True).reindex(list(GROUPS)).fillna(0.0)
        truth_shares = gtruth["g"].value_counts(normalize=True).reindex(list(GROUPS))
        eta = max(abs(correlation_ratio(synth, "g", c) - correlation_ratio(gtruth, "g", c))
                  for c in NUMERIC)
        out.append({"model": name, "rep": rep, "g": "all", **_status(model),
                    "share_error": float((shares - truth_shares).abs().max()),
                    "eta_error": float(eta)})
    n_req = 10 * (n // 10)
    got = cond.sample(n_req, seed=child(fit_seed, "sample", "shares"), shares=REQUESTED)
    counts = got["g"].value_counts().reindex(list(GROUPS)).fillna(0)
    out[1]["requested_count_error"] = float(max(abs(counts[g] - REQUESTED[g] * n_req)
                                                for g in GROUPS))
    for i, g in enumerate(GROUPS):
        tg = gtruth[gtruth["g"] == g]
        cg = cond.sample(len(tg), seed=child(fit_seed, "sample", "group", i), group=g)
        kw = dict(reference=gtruth, seed=child(fit_seed, "gm", i))
        half = len(tg) // 2
        out.append({"model": "per group", "rep": rep, "g": g, "truth_rows": len(tg),
                    "categorical_rows": int((s_cat["g"] == g).sum()),
                    "mmd_conditional": group_mmd(tg, cg, NUMERIC, **kw),
                    "mmd_categorical": group_mmd(tg, s_cat[s_cat["g"] == g], NUMERIC, **kw),
                    "mmd_truth_halves": group_mmd(tg.iloc[:half], tg.iloc[half:], NUMERIC,
                                                  **kw)})
    return pd.DataFrame(out)


def run_wgan(*, n: int, epochs: int, every: int, rows: int, n_eval: int, rep: int,
             seed: object) -> pd.DataFrame:
    """The section C model with the WGAN-GP loss on the mixture (seed ``(seed, "rep", rep)``)."""
    sources, truth = mixture_sources(n, child(seed, "data"))
    truth = truth.iloc[:n_eval]
    fit_seed = child(seed, "rep", rep)
    model = _fit(sources, epochs=epochs, rule=ConvergenceRule(every=every, rows=rows),
                 seed=fit_seed, config=FusionConfig(loss="wgan-gp"))
    synth = model.sample(n_eval, seed=child(fit_seed, "sample"))
    return pd.DataFrame([{"setting": "WGAN-GP", "replica": rep, **_status(model),
                          "rare_share": rare_share(synth),
                          **score(truth, synth, seed=child(fit_seed, "score"))}])
