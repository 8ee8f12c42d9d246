"""The FusionGAN chapter's runs as cells of the compendium's grid (experiment ``fusiongan``).

Importing this module registers the experiment (``notebooks/fusiongan.md``). Cells:

- one per *setting* of :data:`fusionlib.fusion.mixture.runs.SETTINGS` (the appendix as printed,
  standardised inputs, other learning rates, the section D weightings): all seeds of the
  setting trained at once as one stacked model, each until the held-out criterion passes or
  the budget (``epochs``) runs out, scored against the truth at every check;
- one per seed of the categorical / conditional pair (section I, extensions 2 and 3) and of
  the WGAN-GP loss (extension 1), unstacked (their heads and loss are not stacked).

Every row carries ``learned`` (the last check passed) and ``learned_epoch``: the chapter
states both beside each number, and numbers of runs that did not learn are "not comparable".
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import child, seed_int

__all__ = ["CONFIG", "SKIPPED", "FUSIONGAN", "fusiongan_results"]

#: per scale: rows per source ``n``, epoch budget, epochs between checks, held-out rows per
#: check, truth rows scored, seeds of a setting, seeds of the extensions, their budget
CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(n=300, epochs=2, every=1, rows=60, n_eval=300, seeds=2, ext_seeds=1,
                  ext_epochs=2),
    "cpu": dict(n=2_000, epochs=200, every=20, rows=400, n_eval=2_000, seeds=5, ext_seeds=3,
                ext_epochs=160),
    "paper": dict(n=10_000, epochs=1_000, every=20, rows=1_000, n_eval=10_000, seeds=10,
                  ext_seeds=10, ext_epochs=1_000),
}
#: settings left out at a scale: at cpu scale the section D weightings at the appendix's rate
#: (1e-4), which do not learn within a budget the cpu book affords (the unweighted appendix
#: setting shows how far it gets); they run at paper scale
SKIPPED: dict[str, tuple[str, ...]] = {
    "smoke": (), "cpu": ("cluster", "density", "density, w^2 (origin)"), "paper": (),
}


def _grid(scale: str, seed: int) -> list[Cell]:
    from fusionlib.fusion.mixture.runs import SETTINGS

    cfg = CONFIG[scale]
    root = seed_int(seed, "fusiongan")
    cells = [Cell("fusiongan", dict(kind="setting", setting=name, **cfg), root,
                  label=f"setting {name}") for name in SETTINGS
             if name not in SKIPPED[scale]]
    cells += [Cell("fusiongan", dict(kind=kind, rep=r, **cfg), root, label=f"{kind} rep {r}")
              for kind in ("groups", "wgan-gp") for r in range(cfg["ext_seeds"])]
    return cells


def _compute(cell: Cell) -> Shard:
    from fusionlib.fusion.mixture.extensions import run_groups, run_wgan
    from fusionlib.fusion.mixture.runs import run_setting
    from fusionlib.gan.trainer import torch_threads

    c, seed = cell.config, cell.seed
    with torch_threads(1, cpu_only=True):
        if c["kind"] == "setting":
            checks, finals, figures = run_setting(
                c["setting"], n=c["n"], epochs=c["epochs"], every=c["every"],
                seeds=[child(seed, "rep", r) for r in range(c["seeds"])], n_eval=c["n_eval"],
                rows=c["rows"], seed=seed,
                keep_samples=c["setting"] in ("appendix", "lr 1e-3"))
            rows = pd.concat([checks.assign(part="check"), finals.assign(part="final")],
                             ignore_index=True)
            return Shard(rows.assign(kind="setting"), figures)
        if c["kind"] == "groups":
            rows = run_groups(n=c["n"], epochs=c["ext_epochs"], every=c["every"],
                              rows=c["rows"], rep=c["rep"], seed=seed)
        else:
            rows = run_wgan(n=c["n"], epochs=c["ext_epochs"], every=c["every"], rows=c["rows"],
                            n_eval=c["n_eval"], rep=c["rep"], seed=seed)
    return Shard(rows.assign(kind=c["kind"]))


FUSIONGAN = register(Experiment(
    "fusiongan", _grid, _compute,
    (__name__, "fusionlib.fusion.mixture.runs", "fusionlib.fusion.mixture.extensions"),
    description="FusionGAN on the simulated mixture: settings x seeds trained until learned"))


def fusiongan_results(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                      progress: bool = True) -> tuple[pd.DataFrame, dict]:
    """Every cell's rows at ``scale`` (computing missing cells) and the figure data by cell."""
    return results("fusiongan", scale, seed=seed, root=root, progress=progress)
