"""PTGAN's tabular S_T runs (Tables 3, 10, 11 of seed 001) as cells of the compendium's grid.

Importing this module registers the experiment ``ptgan_tabular`` with two kinds of cells:

``reference`` (one per data set)
    ``S_train`` of RF, SVM and LR trained on D_train
    (:func:`~fusionlib.ptgan.tabular.runs.reference_scores`): one 90/10 split per data set,
    shared by every other cell.
``curves`` (one per data set, discrepancy and *group*)
    One stacked model (:func:`~fusionlib.ptgan.tabular.runs.stacked_curves`) holding every
    repetition of the group's settings: PT+CP x 10 repetitions, MP (Table 3/10's lambda 1) x 10,
    or Table 11's MP with lambda 10 and 100 x 10 each. A cell returns the AUC curves and the
    label balance of its members; S_T is computed when the cells are read
    (:func:`fusionlib.ptgan.tabular.report.s_t_runs`), from the curves and ``S_train``.
``curves`` of the **sensitivity** runs (Adult, ND, paper scale)
    The choices the paper leaves unstated, one stacked cell of 10 repetitions per method and
    choice (:data:`SENSITIVITY`): the Gumbel-softmax temperature (0.5 and 1.0 beside the main
    runs' 0.2), batch norm with the sampled batch's statistics when sampling (beside running
    statistics), and Adult as the package loader gives it (45,222 complete rows of adult.data and
    adult.test, beside adult.data's 32,561 rows as the paper counts them).

So the paper scale is ``3 data sets`` references plus ``3 x 3 x 3`` curve cells and the
sensitivity cells, instead of one cell per repetition. Data sets whose files are absent are left out
of the grid; :func:`tabular_plan` says why, and the chapter turns that into "not run" claims.

:data:`TABULAR_CONFIG` holds the per-scale settings (the chapter reads them from here): trimming
a scale means editing one entry, and the chapter's verdicts follow (a protocol shorter than the
paper's makes its claims "not comparable", naming the reduction).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register
from fusionlib.rng import seed_int

__all__ = ["GROUPS", "ITERATIONS", "PAPER_PROTOCOL", "TABULAR", "TABULAR_CONFIG",
           "TABULAR_METHODS", "method_label", "tabular_plan"]

#: setting key -> (GANConfig method, penalty weight); PT+CP keeps its lambda = 100 (Section 4.3)
TABULAR_METHODS: dict[str, tuple[str, float]] = {
    "pt+cp": ("pt+cp", 100.0),
    "mp-1": ("mp", 1.0),
    "mp-10": ("mp", 10.0),
    "mp-100": ("mp", 100.0),
}
#: setting -> its stacked model's group (a scale picks which settings it runs): Table 3's MP
#: (lambda 1) alone, so that the cells that decide Table 3 are the cheapest to compute
GROUPS: dict[str, str] = {"pt+cp": "pt+cp", "mp-1": "mp", "mp-10": "mp-large",
                          "mp-100": "mp-large"}
#: the seed's iteration counts T (Appendix D.2.3: 200 epochs Adult and Credit, 40 Law School)
ITERATIONS: dict[str, int] = {"adult": 57_000, "law_school": 35_000, "credit_default": 53_000}
#: the paper's protocol: repetitions, evaluation points, rows per generated set, reference rows
PAPER_PROTOCOL: dict[str, Any] = dict(n_seeds=10, n_eval=50, n_rows=1_000, real_rows=None)
#: the Gumbel-softmax temperature of the main runs (the paper gives none)
TAU = 0.2
#: batch norm when sampling in the main runs (the paper does not say): running statistics
BN = "running"
#: the Adult table of the main runs: adult.data as the paper counts it (see tabular.data)
ADULT_VARIANT = "paper"
#: the sensitivity runs: name -> what differs from the main runs (one cell per method and name)
SENSITIVITY: dict[str, dict[str, Any]] = {
    "tau=0.5": dict(tau=0.5), "tau=1": dict(tau=1.0), "bn=batch": dict(bn="batch"),
    "data=uci-complete": dict(variant="uci-complete"),
}
_PAPER: dict[str, Any] = dict(PAPER_PROTOCOL, eval_points="all", tau=TAU)

#: settings per scale. ``settings``: the methods run (grouped into stacked models by GROUPS);
#: ``ablation``: temperatures x methods x repetitions of the Gumbel-softmax ablation (Adult, ND)
TABULAR_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=("adult",), discrepancies=("nd",), settings=("pt+cp", "mp-1"),
                  n_seeds=2, n_iter={"adult": 12}, n_eval=2, eval_points="all", n_rows=300,
                  real_rows=1_000, tau=TAU,
                  ablation=dict(variants=("tau=0.5", "bn=batch"), settings=("pt+cp",),
                                n_seeds=1, n_iter={"adult": 12})),
    # Table 3's Adult ND row at the paper's protocol: two stacked cells of 10 repetitions (about
    # 30 CPU minutes each here). To trim, lower n_seeds (the claims stay comparable, their
    # intervals widen); fewer iterations or evaluation points make them "not comparable"
    "cpu": dict(datasets=("adult",), discrepancies=("nd",), settings=("pt+cp", "mp-1"),
                n_iter={"adult": ITERATIONS["adult"]}, **_PAPER, ablation=None),
    "paper": dict(datasets=("adult", "law_school", "credit_default"),
                  discrepancies=("nd", "jsd", "pd"), settings=tuple(TABULAR_METHODS),
                  n_iter=ITERATIONS, **_PAPER,
                  ablation=dict(variants=tuple(SENSITIVITY), settings=("pt+cp", "mp-1"),
                                n_seeds=10, n_iter={"adult": ITERATIONS["adult"]})),
}


def method_label(key: str) -> str:
    """The paper's label: ``"PT + CP"``, ``"MP"`` (lambda 1), ``"MP (lambda_MP=10)"``; a
    sensitivity member adds its choice (``"PT + CP, tau = 1"``, ``"MP, bn = batch"``)."""
    base, _, variant = key.partition(" ")
    if base == "pt+cp":
        label = "PT + CP"
    else:
        weight = TABULAR_METHODS[base][1]
        label = "MP" if weight == 1.0 else f"MP (lambda_MP={weight:g})"
    return f"{label}, {variant.replace('=', ' = ')}" if variant else label


def _available(name: str) -> str | None:
    from fusionlib.ptgan.tabular.data import availability

    return availability(name)


def tabular_plan(scale: str) -> dict[str, str | None]:
    """``{dataset: None (run) or why it is not run}`` for the datasets of ``scale``."""
    return {d: _available(d) for d in TABULAR_CONFIG[scale]["datasets"]}


def _members(settings, n_seeds: int, seed: int, data: str, variant: str | None = None,
             tau: float = TAU) -> list:
    out = []
    for key in settings:
        for i in range(n_seeds):
            label = key if variant is None else f"{key} {variant}"
            out.append(dict(label=label, rep=i, seed=seed_int(seed, "tabular", data, "rep", i),
                            penalty_weight=TABULAR_METHODS[key][1], tau=tau))
    return out


def _variant(data: str, choice: dict[str, Any]) -> dict[str, Any]:
    """The data-table and batch-norm entries of a curve cell's configuration."""
    out: dict[str, Any] = {"bn": choice.get("bn", BN)}
    if data == "adult":
        out["variant"] = choice.get("variant", ADULT_VARIANT)
    return out


def _curve_cell(scale, seed, data, disc, group, members, n_iter, cfg,
                choice: dict[str, Any] | None = None) -> Cell:
    config = dict(kind="curves", dataset=data, discrepancy=disc, group=group,
                  method=TABULAR_METHODS[members[0]["label"].split(" ")[0]][0],
                  members=members, n_iter=n_iter, n_eval=cfg["n_eval"],
                  eval_points=cfg["eval_points"], n_rows=cfg["n_rows"],
                  split_seed=seed_int(seed, "tabular", data, "split"),
                  device="auto" if scale == "paper" else "cpu", **_variant(data, choice or {}))
    return Cell("ptgan_tabular", config, seed_int(seed, "tabular", data, disc, group),
                label=f"{data} {disc} {group} x{len(members)}")


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = TABULAR_CONFIG[scale]
    cells = []
    for data, missing in tabular_plan(scale).items():
        if missing is not None:
            continue
        variants = [None]
        abl = cfg.get("ablation")
        if abl and data in abl["n_iter"]:
            variants += sorted({SENSITIVITY[v]["variant"] for v in abl["variants"]
                                if "variant" in SENSITIVITY[v]})
        for v in variants:  # S_train of each table the cells train on
            ref = dict(kind="reference", dataset=data, real_rows=cfg["real_rows"],
                       split_seed=seed_int(seed, "tabular", data, "split"))
            if data == "adult":
                ref["variant"] = v or ADULT_VARIANT
            cells.append(Cell("ptgan_tabular", ref, seed_int(seed, "tabular", data, "split"),
                              label=f"{data} reference" + (f" ({v})" if v else "")))
        for disc in cfg["discrepancies"]:
            for group in dict.fromkeys(GROUPS[k] for k in cfg["settings"]):
                keys = [k for k in cfg["settings"] if GROUPS[k] == group]
                members = _members(keys, cfg["n_seeds"], seed, data)
                cells.append(_curve_cell(scale, seed, data, disc, group, members,
                                         cfg["n_iter"][data], cfg))
        if abl and data in abl["n_iter"]:
            for name in abl["variants"]:
                choice = SENSITIVITY[name]
                for key in abl["settings"]:
                    members = _members([key], abl["n_seeds"], seed, data, name,
                                       choice.get("tau", cfg["tau"]))
                    cells.append(_curve_cell(scale, seed, data, "nd", f"{GROUPS[key]} {name}",
                                             members, abl["n_iter"][data], cfg, choice))
    return cells


def _compute(cell: Cell) -> Shard:
    """One reference or one stacked run (pure function of the cell on CPU)."""
    import torch

    from fusionlib.ptgan.tabular.data import load_tabular
    from fusionlib.ptgan.tabular.runs import Member, reference_scores, stacked_curves

    cfg = cell.config
    data = load_tabular(cfg["dataset"], cfg.get("variant"))
    if cfg["kind"] == "reference":
        s_train = reference_scores(data, cfg["split_seed"], real_rows=cfg["real_rows"])
        rows = pd.DataFrame([dict(kind="reference", dataset=cfg["dataset"],
                                  variant=cfg.get("variant", ""), classifier=c, auc=a)
                             for c, a in s_train.items()])
        return Shard(rows, meta={"device": "cpu"})
    device = cfg["device"]
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    from fusionlib.compendium.cells import code_key, default_root

    members = [Member(**m) for m in cfg["members"]]
    # a killed cell resumes from its last evaluation point; the file name carries the code key,
    # so a checkpoint of other code is never resumed
    folder = default_root() / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    run = stacked_curves(data, cfg["method"], cfg["discrepancy"], members,
                         split_seed=cfg["split_seed"], n_iter=cfg["n_iter"],
                         n_eval=cfg["n_eval"], eval_points=cfg["eval_points"],
                         n_rows=cfg["n_rows"], device=device, bn=cfg["bn"],
                         checkpoint=folder / f"{cell.cell_id}-{code_key(TABULAR)[:12]}.pt")
    rows = run.curve.assign(kind="curves", dataset=cfg["dataset"],
                            variant=cfg.get("variant", ""), discrepancy=cfg["discrepancy"],
                            group=cfg["group"])
    figures = {"train_s": run.train_s, "eval_s": run.eval_s, "n_iter": cfg["n_iter"],
               "balance": run.balance.to_dict(orient="list"),
               "n_members": len(members), "resumed_at": run.resumed_at,
               "diverged": [dict(member=j, label=members[j].label, rep=members[j].rep,
                                 iteration=it) for j, it in sorted(run.diverged.items())]}
    return Shard(rows, figures, meta={"device": device})


TABULAR = register(Experiment(
    "ptgan_tabular", _grid, _compute, (__name__, "fusionlib.ptgan.tabular.runs"),
    description="PTGAN tables: S_train per data set and one stacked model per (dataset, "
                "discrepancy, method group); Tables 3, 10, 11 and the temperature ablation"))
