"""The identification study as cells of the compendium's grid (experiment ``identification``).

One cell per (source law, method, seed). Designs (a) and (b) of
:mod:`fusionlib.studies.identification` have identical sources (same laws of (x, y) and
(x, z), same streams), so a method is fitted once on them and its one answer is scored against
both truths; design (c) has sources of its own. Each cell returns one row per design it
covers, with the method's cross-source estimates (``rho``: corr(y, z); ``p11``:
P(y > 0, z > 0)), the shared metrics against a held-out truth sample (coverage, MMD on the
standardised continuous columns; ``tv``: total variation between the discretised (x, y, z)
laws), the estimated bounds (method ``bounds``) and the fit time.

Methods (:data:`METHODS`): ``oracle`` (an independent complete sample of the truth: the noise
floor), ``bounds`` (sample bounds from the sources), ``hotdeck_nnd`` (nearest-neighbour
hot-deck on continuous x), ``hotdeck_random`` (random hot-deck within the x bins),
``fusiongan`` (seed 000), and seed 002's estimators on the discretised sources: ``igo``
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

#: per-scale settings: rows per source, truth rows, FusionGAN epochs, seeds (FusionGAN is fitted
#: on the first ``gan_seeds`` of them only: at cpu scale its training is the whole budget)
CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(n=300, n_eval=300, epochs=1, n_seeds=1, gan_seeds=1),
    "cpu": dict(n=2_000, n_eval=2_000, epochs=60, n_seeds=3, gan_seeds=1),
    "paper": dict(n=10_000, n_eval=10_000, epochs=100, n_seeds=10, gan_seeds=10),
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
    return [Cell("identification", dict(law=law, method=m, rep=i, **cfg),
                 seed_int(seed, "identification", "rep", i), label=f"{m} {law} rep {i}")
            for i in range(cfg["n_seeds"]) for law in SOURCE_LAWS for m in METHODS
            if m != "fusiongan" or i < cfg["gan_seeds"]]


def _fit_continuous(method: str, sources, cfg: dict, seed: int, design) -> pd.DataFrame:
    from fusionlib.matching import HotDeckMatcher
    from fusionlib.studies.identification import truth_sample

    if method == "oracle":
        return truth_sample(design, cfg["n_eval"], child(seed, "oracle"))
    if method == "hotdeck_nnd":
        model = HotDeckMatcher("nnd", seed=child(seed, "hotdeck")).fit(sources)
    else:
        from fusionlib.fusion.synthesizer import FusionGAN

        model = FusionGAN(epochs=cfg["epochs"], seed=child(seed, "fusiongan")).fit(sources)
    return model.sample(cfg["n_eval"], seed=child(seed, "sample"))[["x", "y", "z"]]


def _fit_discrete(method: str, sources, seed: int) -> pd.DataFrame:
    """The method's exact (x, y, z) probability table on the discretised sources."""
    from fusionlib.fairtest.estimators import (
        IndependenceGivenOverlap,
        IndependentModel,
        LatentNaiveBayes,
        MarginalPreservation,
    )
    from fusionlib.matching import HotDeckMatcher
    from fusionlib.studies.identification import discretise

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


def _compute(cell: Cell) -> Shard:
    """Fit one method on one source law and score it against each design's truth."""
    from fusionlib.metrics.coverage import coverage
    from fusionlib.metrics.mmd import mmd
    from fusionlib.studies.identification import (
        DESIGNS,
        discretise,
        make_sources,
        p11,
        truth_sample,
    )

    cfg, method, seed = cell.config, cell.config["method"], cell.seed
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
            mu, sd = truth.mean(), truth.std()
            r, s = ((truth - mu) / sd).to_numpy(), ((synth - mu) / sd).to_numpy()
            disc = discretise(synth).value_counts(normalize=True).rename("proba").reset_index()
            row.update(rho=float(synth["y"].corr(synth["z"])), p11=p11(synth),
                       rho_xy=float(synth["x"].corr(synth["y"])),
                       rho_xz=float(synth["x"].corr(synth["z"])),
                       coverage=coverage(r, s), mmd=mmd(r, s, seed=child(seed, "mmd")).mmd,
                       tv=_tv(disc, discretise(truth)))
        elif method == "bounds":
            row.update(fitted)
        else:
            row.update(p11=_p11_of_table(fitted), tv=_tv(fitted, discretise(truth)))
        rows.append(dict(row, fit_seconds=seconds))
    return Shard(pd.DataFrame(rows))


def _bounds_row(sources) -> dict[str, float]:
    """Sample bounds: correlations from each source, Fréchet cells from the discretised ones."""
    from fusionlib.matching import correlation_bounds, frechet_bounds_from_sources
    from fusionlib.studies.identification import discretise

    lo, cia, hi = correlation_bounds(sources["A"].corr().iloc[0, 1], sources["B"].corr().iloc[0, 1])
    disc = {name: discretise(sources[name]) for name in sources}
    cells = frechet_bounds_from_sources(disc, "y", "z").set_index(["y", "z"]).loc[("1", "1")]
    return {"rho": cia, "rho_lower": lo, "rho_upper": hi, "p11": float(cells["cia"]),
            "p11_lower": float(cells["lower"]), "p11_upper": float(cells["upper"])}


IDENTIFICATION = register(Experiment(
    "identification", _grid, _compute, (__name__, "fusionlib.studies.identification"),
    description="identification study: methods on two sources with a known truth "
                "(designs where the CIA holds, fails, or the overlap is uninformative)"))


def identification_results(scale: str, seed: int = 0, *, root=None,
                           progress: bool = True) -> pd.DataFrame:
    """The rows of every cell at ``scale`` (computing missing cells in-process)."""
    rows, _ = results("identification", scale, seed=seed, root=root, progress=progress)
    return rows
