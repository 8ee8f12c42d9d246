"""The identification study as cells of the compendium's grid (experiment ``identification``).

One cell per (source law, method, seed). Designs (a) and (b) of
:mod:`fusionlib.studies.identification.data` have identical sources (same laws of (x, y) and
(x, z), same streams), so a method is fitted once on them and its one answer is scored against
both truths; design (c) has sources of its own. Each cell returns one row per design it
covers, with the method's cross-source estimates (``rho``: corr(y, z); ``p11``:
P(y > 0, z > 0)), the shared metrics against a held-out truth sample (coverage, MMD on the
standardised continuous columns; ``tv``: total variation between the discretised (x, y, z)
laws), the estimated bounds (method ``bounds``) and the fit time.

Methods (:data:`METHODS`): ``oracle`` (an independent complete sample of the truth: the noise
floor), ``bounds`` (sample bounds from the sources), ``hotdeck_nnd`` (nearest-neighbour
hot-deck on continuous x), ``hotdeck_random`` (random hot-deck within the x bins),
``fusiongan`` (seed 000: section C's networks and defaults, learning rates ``gan_lr`` of G
and D, raw values, the seeds of a source law trained
at once as one stacked model, each until the held-out check of
:mod:`fusionlib.fusion.convergence` passes or the epoch budget ends; its rows say whether it
``learned`` and at which epoch), and seed 002's estimators on the discretised sources: ``igo``
(independence given overlap), ``mp`` (marginal preservation), ``lnb`` (latent naive Bayes),
``independent``.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import child, seed_int

__all__ = ["CONFIG", "METHODS", "SOURCE_LAWS", "CONTINUOUS", "IDENTIFICATION",
           "identification_results"]

#: per-scale settings: rows per source, truth rows, seeds; FusionGAN's epoch budget, epochs
#: between held-out checks (it trains until the check of fusionlib.fusion.convergence passes),
#: seeds (the first ``gan_seeds``, trained at once as one stacked model per source law) and
#: learning rates of G and D (G 2e-4, D 1e-3: with section C's 1e-4 for both the generator had
#: not learned these designs' laws after 4,000 iterations, with 1e-3 for both it oscillated
#: without passing the check in 5,000; with the faster discriminator every seed passed at the
#: first check, epoch 20; the FusionGAN chapter shows the rates side by side)
CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(n=300, n_eval=300, epochs=2, every=1, n_seeds=1, gan_seeds=1,
                  gan_lr=(2e-4, 1e-3)),
    "cpu": dict(n=2_000, n_eval=2_000, epochs=200, every=20, n_seeds=3, gan_seeds=3,
                gan_lr=(2e-4, 1e-3)),
    "paper": dict(n=10_000, n_eval=10_000, epochs=500, every=20, n_seeds=10, gan_seeds=10,
                  gan_lr=(2e-4, 1e-3)),
}
METHODS: tuple[str, ...] = ("oracle", "bounds", "hotdeck_nnd", "hotdeck_random", "fusiongan",
                            "igo", "mp", "lnb", "independent")
#: methods whose samples are continuous (scored by coverage and MMD)
CONTINUOUS: tuple[str, ...] = ("oracle", "hotdeck_nnd", "fusiongan")
#: source law -> the designs that share it (identical sources)
SOURCE_LAWS: dict[str, tuple[str, ...]] = {"ab": ("a_cia_holds", "b_cia_fails"),
                                           "c": ("c_no_information",),
                                           "d": ("d_strong_overlap",)}


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = CONFIG[scale]
    reps = [seed_int(seed, "identification", "rep", i) for i in range(cfg["n_seeds"])]
    cells = [Cell("identification", dict(law=law, method=m, rep=i, **cfg), reps[i],
                  label=f"{m} {law} rep {i}")
             for i in range(cfg["n_seeds"]) for law in SOURCE_LAWS for m in METHODS
             if m != "fusiongan"]
    # FusionGAN: the seeds of a source law stacked in one cell (rep_seeds: each rep's seed)
    return cells + [Cell("identification", dict(law=law, method="fusiongan",
                                                rep_seeds=reps[:cfg["gan_seeds"]], **cfg),
                         seed_int(seed, "identification", "fusiongan"),
                         label=f"fusiongan {law} stacked") for law in SOURCE_LAWS]


def _fit_continuous(method: str, sources, cfg: dict, seed: int, design) -> pd.DataFrame:
    from fusionlib.matching import HotDeckMatcher
    from fusionlib.studies.identification.data import truth_sample

    if method == "oracle":
        return truth_sample(design, cfg["n_eval"], child(seed, "oracle"))
    model = HotDeckMatcher("nnd", seed=child(seed, "hotdeck")).fit(sources)
    return model.sample(cfg["n_eval"], seed=child(seed, "sample"))[["x", "y", "z"]]


def _fusiongan(cfg: dict) -> tuple[list[pd.DataFrame], list[dict], float]:
    """FusionGAN (section C's networks and defaults but the learning rates ``gan_lr`` of G and
    D, raw values) on each rep's sources, the reps stacked, each until the held-out check passes or
    the budget ends: samples, status, seconds per rep."""
    from fusionlib.fusion.config import FusionConfig
    from fusionlib.fusion.convergence import ConvergenceRule
    from fusionlib.fusion.replicas import StackedFusionGAN
    from fusionlib.studies.identification.data import DESIGNS, make_sources

    seeds = cfg["rep_seeds"]
    design = DESIGNS[SOURCE_LAWS[cfg["law"]][0]]
    sources = [make_sources(design, cfg["n"], child(s, "sources")) for s in seeds]
    rule = ConvergenceRule(every=cfg["every"], rows=min(400, int(0.2 * cfg["n"])))
    start = time.perf_counter()
    config = FusionConfig(lr_g=cfg["gan_lr"][0], lr_d=cfg["gan_lr"][1])
    model = StackedFusionGAN([child(s, "fusiongan") for s in seeds], cfg["epochs"], config,
                             convergence=rule).fit(sources)
    seconds = (time.perf_counter() - start) / len(seeds)
    samples = model.sample(cfg["n_eval"], seed=[child(s, "sample") for s in seeds])
    status = [{"learned": model.learned_[r], "learned_epoch": model.learned_epoch_[r],
               "epochs": model.epochs_} for r in range(len(seeds))]
    return [x[["x", "y", "z"]] for x in samples], status, seconds


def _fit_discrete(method: str, sources, seed: int) -> pd.DataFrame:
    """The method's exact (x, y, z) probability table on the discretised sources."""
    from fusionlib.fairtest.estimators import (
        IndependenceGivenOverlap,
        IndependentModel,
        LatentNaiveBayes,
        MarginalPreservation,
    )
    from fusionlib.matching import HotDeckMatcher
    from fusionlib.studies.identification.data import discretise

    disc = {name: discretise(sources[name]) for name in sources}
    if method == "hotdeck_random":
        fused = HotDeckMatcher("random", seed=child(seed, "hotdeck")).fit(disc).fused_
        return fused.value_counts(["x", "y", "z"], normalize=True).rename("proba").reset_index()
    model = {"igo": IndependenceGivenOverlap(), "mp": MarginalPreservation(),
             "independent": IndependentModel(),
             "lnb": LatentNaiveBayes(seed=seed_int(seed, "lnb"))}[method]
    return model.fit(disc["A"], disc["B"]).proba_table(["x", "y", "z"])


def _tv(table: pd.DataFrame, truth_disc: pd.DataFrame) -> float:
    """Total variation between a (x, y, z, proba) table and the truth's discretised sample."""
    ref = truth_disc.value_counts(["x", "y", "z"], normalize=True).rename("ref")
    got = table.set_index(["x", "y", "z"])["proba"]
    both = pd.concat([got, ref], axis=1).fillna(0.0)
    return float(0.5 * (both["proba"] - both["ref"]).abs().sum())


def _p11_of_table(table: pd.DataFrame) -> float:
    return float(table.loc[(table["y"] == "1") & (table["z"] == "1"), "proba"].sum())


def _continuous_scores(synth: pd.DataFrame, truth: pd.DataFrame, seed: int) -> dict:
    """Cross-source estimates and the shared metrics of continuous records against a truth."""
    from fusionlib.metrics.coverage import coverage
    from fusionlib.metrics.mmd import mmd
    from fusionlib.studies.identification.data import discretise, p11

    mu, sd = truth.mean(), truth.std()
    r, s = ((truth - mu) / sd).to_numpy(), ((synth - mu) / sd).to_numpy()
    disc = discretise(synth).value_counts(normalize=True).rename("proba").reset_index()
    return dict(rho=float(synth["y"].corr(synth["z"])), p11=p11(synth),
                rho_xy=float(synth["x"].corr(synth["y"])),
                rho_xz=float(synth["x"].corr(synth["z"])),
                coverage=coverage(r, s), mmd=mmd(r, s, seed=child(seed, "mmd")).mmd,
                tv=_tv(disc, discretise(truth)))


def _compute_fusiongan(cell: Cell) -> Shard:
    """FusionGAN's stacked reps on one source law, scored against each design's truth."""
    from fusionlib.gan.trainer import torch_threads
    from fusionlib.studies.identification.data import DESIGNS, truth_sample

    cfg = cell.config
    with torch_threads(1, cpu_only=True):
        samples, status, seconds = _fusiongan(cfg)
    rows = []
    for rep, (seed, synth, st) in enumerate(zip(cfg["rep_seeds"], samples, status,
                                                strict=True)):
        for name in SOURCE_LAWS[cfg["law"]]:
            truth = truth_sample(DESIGNS[name], cfg["n_eval"], child(seed, "truth"))
            rows.append({"design": name, "method": "fusiongan", "rep": rep, "seed": seed,
                         "n": cfg["n"], **_continuous_scores(synth, truth, seed), **st,
                         "fit_seconds": seconds})
    return Shard(pd.DataFrame(rows))


def _compute(cell: Cell) -> Shard:
    """Fit one method on one source law and score it against each design's truth."""
    from fusionlib.studies.identification.data import (
        DESIGNS,
        discretise,
        make_sources,
        truth_sample,
    )

    cfg, method, seed = cell.config, cell.config["method"], cell.seed
    if method == "fusiongan":
        return _compute_fusiongan(cell)
    designs = SOURCE_LAWS[cfg["law"]]
    sources = make_sources(DESIGNS[designs[0]], cfg["n"], child(seed, "sources"))
    start = time.perf_counter()
    fitted = None
    if method == "bounds":
        fitted = _bounds_row(sources)
    elif method in CONTINUOUS and method != "oracle":
        fitted = _fit_continuous(method, sources, cfg, seed, None)
    elif method not in CONTINUOUS:
        fitted = _fit_discrete(method, sources, seed)
    seconds = time.perf_counter() - start
    rows = []
    for name in designs:
        truth = truth_sample(DESIGNS[name], cfg["n_eval"], child(seed, "truth"))
        row: dict[str, Any] = {"design": name, "method": method, "rep": cfg["rep"],
                               "seed": seed, "n": cfg["n"]}
        if method in CONTINUOUS:
            synth = (fitted if method != "oracle" else
                     _fit_continuous(method, sources, cfg, seed, DESIGNS[name]))
            row.update(_continuous_scores(synth, truth, seed))
        elif method == "bounds":
            row.update(fitted)
        else:
            row.update(p11=_p11_of_table(fitted), tv=_tv(fitted, discretise(truth)))
        rows.append(dict(row, fit_seconds=seconds))
    return Shard(pd.DataFrame(rows))


def _bounds_row(sources) -> dict[str, float]:
    """Sample bounds: correlations from each source, Fréchet cells from the discretised ones."""
    from fusionlib.matching import correlation_bounds, frechet_bounds_from_sources
    from fusionlib.studies.identification.data import discretise

    lo, cia, hi = correlation_bounds(sources["A"].corr().iloc[0, 1], sources["B"].corr().iloc[0, 1])
    disc = {name: discretise(sources[name]) for name in sources}
    cells = frechet_bounds_from_sources(disc, "y", "z").set_index(["y", "z"]).loc[("1", "1")]
    return {"rho": cia, "rho_lower": lo, "rho_upper": hi, "p11": float(cells["cia"]),
            "p11_lower": float(cells["lower"]), "p11_upper": float(cells["upper"])}


IDENTIFICATION = register(Experiment(
    "identification", _grid, _compute, (__name__, "fusionlib.studies.identification.data"),
    description="identification study: methods on two sources with a known truth "
                "(designs where the CIA holds, fails, or the overlap is uninformative)"))


def identification_results(scale: str, seed: int = 0, *, root=None,
                           progress: bool = True) -> pd.DataFrame:
    """The rows of every cell at ``scale`` (computing missing cells in-process)."""
    rows, _ = results("identification", scale, seed=seed, root=root, progress=progress)
    return rows
