"""Paper scale: plan, compute, ship (``make paper-plan``, ``make paper-cells``, ``make paper-gpu``,
``make install-bundles``).

The paper scale is about 1,372 cells; a laptop computes a few of them at a time, a GPU runner
the image cells. This module says what each cell costs and whether its shard is already here
(:func:`build_plan`, printed by ``make paper-plan``), runs the most valuable missing cells that fit
a budget of minutes, one at a time (:func:`run_budget`; ``make paper-cells`` on the CPU,
``make paper-gpu`` on a CUDA device), exports what finished as a results bundle under
``bundles/``, and installs the committed bundles before a build (:func:`install_bundles`, ``make
install-bundles``). It sits above the cell machinery and calls it (the grids, shard status, the
``python -m fusionlib.compendium.cells`` command line); no cells module imports it, so it is part
of no code key.

**Cost model.** Each experiment has a work function (:data:`WORK`) that reads a cell's
configuration and returns its *kind* (cells of one experiment that do different things: a
``ptgan_tabular`` reference or stacked curves, a ``fairtest_protocol`` protocol, CTGAN run,
disjoint-rows or EM-start cell, a benchmark generator, an identification method) and its *work
units*, one number per component, e.g. ``ptgan_tabular`` curves: ``iter`` = iterations (a
stacked step's part that does not grow with the members), ``member_iter`` = members x
iterations and ``eval`` = members x evaluation points x generated rows / 1,000; the ring toys:
iterations; CTGAN: optimiser steps (epochs x training rows // 500) / 1,000. The seconds of a
cell of kind k are modelled as ``a_k + sum_c b_kc u_c``: a fixed part and a rate per unit of
each component, fitted by non-negative least squares (:func:`fit_models`) to measured points of
that experiment and kind:

* every shard present under ``results/cells`` at any scale (the wall time its ``run`` part
  records; CPU points only from shards computed on this machine, GPU points from shards
  computed on a CUDA device anywhere, e.g. installed from a bundle; a resumed
  ``ptgan_tabular`` run counts only the iterations it trained);
* the calibration in :data:`RATES_FILE` (``paper_rates.json``, committed, with the machine and
  date), written by ``make paper-plan CALIBRATE=1``: each experiment's smoke grid timed once
  in-process here, plus, for the first cell of each kind, the same cell with one component's
  knob multiplied (iterations x 20, bootstraps x 10, CTGAN epochs x 100, ...), so that the
  fixed part and the rates separate. Calibration times are CPU seconds of the process (one
  thread), so other jobs on the machine slow them less than wall times (they still share the
  caches and, on two vCPUs, one core). Smoke shards are used only for kinds the calibration
  lacks (their wall time is mostly their process's imports).

With a single measured configuration there is no intercept (the fixed part is charged to the
rate: an upper bound when scaling up). Core-minutes are the estimate of one cell on one thread.
A GPU cell has an estimate once a shard computed on a GPU is present; the GPU runner refits
after every cell it finishes (:func:`reestimate`).

**How far off.** Three things are not in the units. (1) Sizes that smoke and paper scale set
differently and that no component follows: the toys' and variance runs' networks (``size``
``small`` at smoke, ``paper`` at paper scale; the collapse critic's 16 x 16 against 256 x 4),
the fairness protocol's data (600 rows at smoke), classifier fits on 1,000 generated rows
against 300. These paper estimates are low, by the ratio of per-iteration costs. (2) Early
stopping: FusionGAN stops at its first passing held-out check, so its epoch budget gives an upper
bound. (3) The process around a cell (start, imports, code keys: 5-15 s here). Where it can be
checked, the estimates run high: smoke cells pay per-tree, per-step and per-iteration overheads
that larger cells spread, and the calibration of 2026-11-28 shared the two cores with other jobs
(load average 6 to 10). Table 3's Adult ND cell (10 repetitions x 57,000 iterations, 50
evaluation points of 1,000 rows) is the same computation at cpu and paper scale: estimated at
2,623 s, measured at 1,771 s and 1,676 s with one job (README, code of fa16227), so 1.5 x high.
FusionGAN's 13 cpu cells: 985 s against 564 s (1.7 x, and a budget); ``fairtest_protocol``'s 14
cpu cells: 2,359 s against 558 s (4.2 x: its forests are costed per row from 180-row fits); an
Adult CTGAN run of 300 epochs: 11.8 minutes against the "about 15 minutes" the chapter's
settings state. ``paper_rates.json`` records these predictions under ``checks``
(:func:`calibration_checks`, beside :data:`README_MEASURED`).

**Value order.** ``make paper-cells`` takes the missing CPU cells in the order of :data:`CPU_VALUE`
(Table 3's Adult ND cells of ``ptgan_tabular`` first, then its sensitivity cells, FairPTGAN,
FusionGAN, the Adult CTGAN runs of the fairness protocol, then the rest, whole experiments cheapest
first so that chapters complete), ``JOBS=<n>`` at a time; a cell whose cpu twin is present
(:func:`twins`: the same cell, same seed and configuration, computed on a CPU) is not computed
again but adopts the twin's shard first (:func:`adopt_twins`; the shard says so and keeps where and
when the twin was computed; ``--no-adopt`` computes it, last), and ``make paper-gpu`` the image
cells in the order of :func:`gpu_value_key` (one repetition of PT+CP and of its best competitor in
the paper's Table 1 on CIFAR-10 with ND at 100k iterations first; more repetitions of that
comparison, the other discrepancies, Tables 8, 7 and 2; the Fashion-MNIST proxies last). A cell is
started when its estimate fits the minutes left, or, where the experiment checkpoints
(``ptgan_tabular``, ``fairptgan``, ``ptgan_images_paper``), when one checkpoint interval fits: it
is then stopped at the end of the budget and the next run resumes it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from fusionlib.checks import check_positive_int

__all__ = ["SCALE", "RATES_FILE", "BUNDLES_DIR", "STAMP_DIR", "WORK", "GPU_EXPERIMENTS",
           "CPU_VALUE", "Work", "Point", "Model", "PlanCell", "Outcome", "fit_models",
           "shard_point", "shard_points", "reestimate", "rate_points", "plan_points",
           "merge_rates", "build_plan", "twins", "adopt_twins", "format_plan", "cpu_order",
           "gpu_value_key", "select_cells", "run_budget", "simulate_budget", "run_cell_process",
           "stop_live", "LIVE", "lower_autogroup",
           "export_bundle",
           "install_bundles", "calibrate", "calibration_checks", "cuda_device", "main",
           "MIN_CHUNK_S", "README_MEASURED", "format_totals", "source_key"]

SCALE = "paper"
PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parent
#: the committed calibration (points and fitted models, with the machine and date)
RATES_FILE = Path(__file__).resolve().with_name("paper_rates.json")
#: committed results bundles, installed before every build (bundles/README.md)
BUNDLES_DIR = REPO / "bundles"
#: one stamp per (bundle SHA-256, code): ``make install-bundles`` imports a bundle once
STAMP_DIR = REPO / "results" / "bundles-installed"
#: the workflow's configuration: chapter -> experiments
WORKFLOW_CONFIG = REPO / "workflow" / "config.yaml"
#: when a cell is cut off at the end of the budget: SIGTERM, then SIGKILL after this many seconds
STOP_GRACE_S = 30.0
#: a checkpointed cell that does not fit is started only with at least this much time left
MIN_CHUNK_S = 120.0


# ----------------------------------------------------------------------------- work functions
#: rows of the tables the fairness protocol and the benchmark read (fusionlib.data.loaders.load:
#: adult 45,222 complete rows, compas 5,278, german 1,000), and of the tabular PTGAN tables
#: (Adult as the paper counts it: adult.data's 32,561 rows; law school and credit default:
#: their published sizes, approximate)
DATASET_ROWS: dict[str, int] = {"adult": 45_222, "compas": 5_278, "german": 1_000,
                                "law_school": 20_798, "credit_default": 30_000}
TABULAR_ROWS: dict[str, int] = {"paper": 32_561, "uci-complete": 45_222}


def _rows(dataset: str | None, cap: int | None = None) -> float:
    n = DATASET_ROWS.get(str(dataset), 10_000)
    return float(min(n, cap) if cap else n)


def _ctgan_steps(epochs: int, rows: float, cap: int | None) -> float:
    """CTGAN's optimiser steps, ``epochs * max(train rows // 500, 1)`` (batch 500; the
    training rows: 70 % of the table, at most ``cap``), in thousands."""
    train = 0.7 * rows
    train = min(train, cap) if cap else train
    return epochs * max(train // 500, 1) / 1000


def _times(config: dict, key: str, k: float) -> dict:
    return {**config, key: int(math.ceil(config[key] * k))}


@dataclasses.dataclass(frozen=True)
class Work:
    """How much work a cell of one experiment is (module docstring: cost model).

    ``units(config)`` gives ``(kind, {component: units})``; ``stretch`` maps a component to a
    function returning a configuration with more of it (calibration);
    ``checkpoint(config)`` the fraction of the cell between two checkpoints (None: the cell
    does not checkpoint); ``done(config, figures)`` the fraction a shard's own run computed
    (below 1 for a resumed run); ``progress(config, files)`` the fraction a checkpoint holds.
    """

    units: Callable[[dict], tuple[str, dict[str, float]]]
    stretch: dict[str, Callable[[dict], dict]] = dataclasses.field(default_factory=dict)
    checkpoint: Callable[[dict], float | None] = lambda config: None
    done: Callable[[dict, dict], float] = lambda config, figures: 1.0


def _iterations(key: str = "n_iter", k: float = 20) -> Work:
    return Work(lambda c: ("run", {"iter": float(c[key])}), {"iter": lambda c: _times(c, key, k)})


def _tabular_units(c: dict) -> tuple[str, dict[str, float]]:
    if c["kind"] == "reference":
        rows = c.get("real_rows") or 0.9 * TABULAR_ROWS.get(
            c.get("variant") or "", DATASET_ROWS.get(c["dataset"], 30_000))
        return "reference", {"rows": rows / 1000}
    m = len(c["members"])
    # a stacked step costs a part per iteration and a part per member and iteration
    return "curves", {"iter": float(c["n_iter"]), "member_iter": float(m * c["n_iter"]),
                      "eval": m * c["n_eval"] * c["n_rows"] / 1000}


def _more_members(c: dict, k: int = 4) -> dict:
    """``c`` with ``k`` times the members (copies with other repetition numbers and seeds)."""
    members = [{**m, "rep": m["rep"] + 1000 * j, "seed": (m["seed"] + j) % 2**32}
               for j in range(k) for m in c["members"]]
    return {**_times(c, "n_iter", 25), "members": members}


def _tabular_eval_stretch(c: dict) -> dict:
    n_eval = c["n_eval"] * 4
    return {**c, "n_eval": n_eval, "n_iter": max(c["n_iter"], n_eval)}


def _tabular_done(c: dict, figures: dict) -> float:
    at = figures.get("resumed_at") or 0
    return 1.0 - at / c["n_iter"] if c.get("kind") == "curves" and c.get("n_iter") else 1.0


def _fair_units(c: dict) -> tuple[str, dict[str, float]]:
    r = len(c["reps"])  # a stacked model: a part per iteration, a part per repetition
    return c["method"], {"iter": float(c["n_iter"]), "member_iter": float(r * c["n_iter"]),
                         "sets": r * c["n_sets"] * c["n_rows"] / 1000}


def _more_reps(c: dict, k: int = 4) -> dict:
    """``c`` with ``k`` times the repetitions (other repetition numbers and seeds)."""
    reps = [r + 1000 * j for j in range(k) for r in c["reps"]]
    seeds = [(s + j) % 2**32 for j in range(k) for s in c["rep_seeds"]]
    return {**_times(c, "n_iter", 20), "reps": reps, "rep_seeds": seeds}


def _fair_iterations(c: dict) -> int:
    return c["n_iter"] + (c["n_iter"] // 2 if c["method"] == "fairwgangp" else 0)


def _fair_done(c: dict, figures: dict) -> float:
    at = (figures.get("timing") or {}).get("resumed_at") or 0
    return 1.0 - at / _fair_iterations(c)


def _fusiongan_units(c: dict) -> tuple[str, dict[str, float]]:
    if c["kind"] == "setting":
        return "setting", {"train": c["seeds"] * c["epochs"] * c["n"] / 1000}
    return c["kind"], {"train": c["ext_epochs"] * c["n"] / 1000}


def _fusiongan_stretch(c: dict) -> dict:
    # every = the budget: no held-out check stops the calibration run early
    key = "epochs" if c["kind"] == "setting" else "ext_epochs"
    out = _times(c, key, 10)
    return {**out, "every": out[key]}


_DESIGNS = {"ab": 2}
_CONTINUOUS = ("oracle", "hotdeck_nnd")


def _identification_units(c: dict) -> tuple[str, dict[str, float]]:
    designs = _DESIGNS.get(c["law"], 1)
    if c["method"] == "fusiongan":
        reps = len(c["rep_seeds"])
        return "fusiongan", {"train": reps * c["epochs"] * c["n"] / 1000,
                             "eval": reps * designs * (c["n_eval"] / 1000) ** 2}
    if c["method"] in _CONTINUOUS:
        return c["method"], {"rows": designs * c["n"] / 1000,
                             "eval": designs * (c["n_eval"] / 1000) ** 2}
    return c["method"], {"rows": designs * (c["n"] + c["n_eval"]) / 1000}


def _identification_train(c: dict) -> dict:
    out = _times(c, "epochs", 10)
    return {**out, "every": out["epochs"]}


def _protocol_rows(c: dict, dataset: str | None = None) -> float:
    return _rows(dataset or c.get("dataset"), c["protocol"].get("max_rows"))


def _protocol_units(c: dict) -> tuple[str, dict[str, float]]:
    p, part = c["protocol"], c["part"]
    if part == "em_starts":
        first = (c.get("candidates") or ["adult"])[0]
        return part, {"fits": len(c["em_seeds"]) * _protocol_rows(c, first) / 1000}
    if part == "ctgan":
        return part, {"train": _ctgan_steps(p["ctgan_epochs"], _protocol_rows(c),
                                            p.get("ctgan_max_rows"))}
    rows = _protocol_rows(c) / 1000
    boot = {"boot": rows * (p["n_boot"] + p["fidelity_boot"])}
    if part == "disjoint":
        return part, boot
    dm_rows = min(0.3 * rows, (p.get("dm_max_rows") or math.inf) / 1000)  # the test rows
    return part, {**boot, "forest": dm_rows * p["dm_seeds"] * p["dm_n_estimators"],
                  "fits": rows * (p["latent_fits"] + p["latent_restarts"])}


def _protocol_stretch(key: str | tuple[str, ...], k: float) -> Callable[[dict], dict]:
    keys = (key,) if isinstance(key, str) else key

    def go(c: dict) -> dict:
        p = dict(c["protocol"])
        for name in keys:
            p[name] = int(math.ceil(p[name] * k))
        return {**c, "protocol": p}
    return go


def _em_stretch(c: dict) -> dict:
    return {**c, "em_seeds": list(range(len(c["em_seeds"]) * 5))}


def _bounds_units(c: dict) -> tuple[str, dict[str, float]]:
    p = c["protocol"]
    rows = _rows(c["dataset"], p.get("max_rows"))
    return "bounds", {"ctgan": _ctgan_steps(p.get("ctgan_epochs", 300), rows,
                                            p.get("ctgan_max_rows")),
                      "grid": (c["n_grid"] + c["n_boot"]) * rows / 1000}


def _bounds_ctgan(c: dict) -> dict:
    p = dict(c["protocol"])
    p["ctgan_epochs"] = int(p.get("ctgan_epochs", 300) * 100)
    return {**c, "protocol": p}


_BENCH_TRAIN = {"CTGAN": ("ctgan_epochs", "ctgan_max_rows", 300),
                "FusionGAN": ("fusion_epochs", "fusion_max_rows", 100),
                "PTGAN": ("ptgan_iter", None, 1000)}


def _bench_units(c: dict) -> tuple[str, dict[str, float]]:
    s, g = c["settings"], c["generator"]
    n_ov = len(c["overlaps"])
    rows = _rows(c["dataset"], s.get("max_rows"))
    out = {"fit": n_ov * rows / 1000, "eval": n_ov * (s.get("n_eval", 2000) / 1000) ** 2}
    if g == "CTGAN":
        out["train"] = n_ov * _ctgan_steps(s.get("ctgan_epochs", 300), rows,
                                           s.get("ctgan_max_rows"))
    elif g in _BENCH_TRAIN:
        knob, cap, default = _BENCH_TRAIN[g]
        scale = 1.0 if cap is None else min(rows, s.get(cap) or rows) / 1000
        out["train"] = n_ov * s.get(knob, default) * scale
    return g, out


def _bench_stretch(component: str) -> Callable[[dict], dict]:
    def go(c: dict) -> dict:
        s = dict(c["settings"])
        if component == "train":
            knob, _, default = _BENCH_TRAIN[c["generator"]]
            # CTGAN: one optimiser step per epoch on the smoke rows, so 100 x
            s[knob] = int(s.get(knob, default) * (100 if c["generator"] == "CTGAN" else 10))
            if c["generator"] == "FusionGAN":
                s["fusion_every"] = s[knob]
        elif component == "eval":
            s["n_eval"] = int(s.get("n_eval", 2000) * 5)
        else:
            s["max_rows"] = int((s.get("max_rows") or 1000) * 5)
        return {**c, "settings": s}
    return go


def _images_paper_progress(c: dict, files: list[Path]) -> float:
    for f in files:
        if f.suffix == ".pt":
            try:
                import torch

                at = torch.load(f, map_location="cpu", weights_only=True)["iteration"]
                return min(1.0, int(at) / c["run"]["n_iter"])
            except Exception:  # unreadable: the trainer decides; assume none
                return 0.0
    return 0.0


def _fair_progress(c: dict, files: list[Path]) -> float:
    for f in files:
        try:
            import torch

            at = torch.load(f, map_location="cpu", weights_only=True)["iteration"]
            return min(1.0, int(at) / _fair_iterations(c))
        except Exception:  # unreadable: the trainer decides; assume none
            return 0.0
    return 0.0


def _tabular_progress(c: dict, files: list[Path]) -> float:
    for f in files:
        if f.name.endswith(".rows.json"):
            try:
                at = json.loads(f.read_text(encoding="utf-8"))["iteration"]
                return min(1.0, int(at) / c["n_iter"])
            except (OSError, ValueError, KeyError, TypeError):
                return 0.0
    return 0.0


#: experiment -> its work function (module docstring); an experiment missing here has no
#: estimate (the plan prints "?")
#:
#: :meta hide-value:
WORK: dict[str, Work] = {
    "ptgan_ring": _iterations(), "ptgan_mixup": _iterations(), "ptgan_fig11": _iterations(),
    "ptgan_var_collapse": _iterations(), "ptgan_var_training": _iterations(),
    "ptgan_var_noise": _iterations(), "ptgan_theory_training": _iterations(),
    "ptgan_theory_collapse": _iterations(),
    "ptgan_theory_rates": Work(lambda c: ("rates", {"steps": c["steps"] * sum(c["sizes"]) / 1e3}),
                               {"steps": lambda c: _times(c, "steps", 10)}),
    "ptgan_tabular": Work(
        _tabular_units,
        {"iter": lambda c: _times(c, "n_iter", 25), "member_iter": _more_members,
         "eval": _tabular_eval_stretch,
         "rows": lambda c: {**c, "real_rows": int((c.get("real_rows") or 1000) * 10)}},
        checkpoint=lambda c: 1 / c["n_eval"] if c.get("kind") == "curves" else None,
        done=_tabular_done),
    "fairptgan": Work(_fair_units, {"iter": lambda c: _times(c, "n_iter", 20),
                                    "member_iter": _more_reps,
                                    "sets": lambda c: _times(c, "n_sets", 4)},
                      # fusionlib.ptgan.fair.cells.CHECKPOINT_EVERY = 1,000 iterations
                      checkpoint=lambda c: (1_000 / _fair_iterations(c)
                                            if c["n_iter"] >= 2_000 else None),
                      done=_fair_done),
    "fusiongan": Work(_fusiongan_units, {"train": _fusiongan_stretch}),
    "identification": Work(_identification_units, {
        "train": _identification_train, "rows": lambda c: _times(c, "n", 10),
        "eval": lambda c: _times(c, "n_eval", 10)}),
    "fairtest_protocol": Work(_protocol_units, {
        "boot": _protocol_stretch(("n_boot", "fidelity_boot"), 10),
        "forest": _protocol_stretch("dm_n_estimators", 5),
        "train": _protocol_stretch("ctgan_epochs", 100),
        "fits": lambda c: _em_stretch(c) if c["part"] == "em_starts"
        else _protocol_stretch("latent_fits", 3)(c)}),
    "fairness_bounds": Work(_bounds_units, {"ctgan": _bounds_ctgan,
                                            "grid": lambda c: _times(c, "n_boot", 10)}),
    "benchmark": Work(_bench_units, {k: _bench_stretch(k) for k in ("train", "eval", "fit")}),
    "ptgan_images": Work(lambda c: ("run", {"iter": c["run"]["n_iter"]
                                            * (c["run"].get("width") or 1.0) ** 2})),
    "ptgan_images_classifier": Work(lambda c: ("classifier",
                                               {"epochs": c["epochs"] * c["n_train"] / 1000})),
    "ptgan_images_paper": Work(
        lambda c: ("run", {"iter": c["run"]["n_iter"] * c["run"].get("batch_size", 100) / 100}),
        checkpoint=lambda c: 5_000 / c["run"]["n_iter"]),
}
#: how far a checkpoint on disk has come, per experiment that checkpoints
_PROGRESS: dict[str, Callable[[dict, list[Path]], float]] = {
    "ptgan_tabular": _tabular_progress, "ptgan_images_paper": _images_paper_progress,
    "fairptgan": _fair_progress}
#: experiments whose paper-scale cells need a GPU, and why (any other cell needs one when its
#: configuration names ``device: cuda``; ``auto`` runs on the CPU when there is no GPU)
GPU_EXPERIMENTS: dict[str, str] = {
    "ptgan_images_paper": "its compute returns a provisional 'needs a GPU runner' row without "
                          "CUDA (100k iterations of the full-width networks)",
    "ptgan_images": "full-width networks, 20,000 iterations per cell at paper scale",
    "ptgan_images_classifier": "the image chapter's classifier: 60,000 images x 5 epochs, "
                               "run with the image cells",
}


def needs_gpu(experiment: str, config: Any) -> bool:
    """Whether a paper-scale cell needs a GPU (:data:`GPU_EXPERIMENTS`, or ``device: cuda``
    anywhere in its configuration)."""
    if experiment in GPU_EXPERIMENTS:
        return True

    def cuda(obj: Any) -> bool:
        if isinstance(obj, dict):
            return obj.get("device") == "cuda" or any(cuda(v) for v in obj.values())
        if isinstance(obj, list):
            return any(cuda(v) for v in obj)
        return False
    return cuda(config)


def work_units(experiment: str, config: dict) -> tuple[str, dict[str, float]] | None:
    """``(kind, units)`` of a cell, or None when its experiment has no work function (or the
    configuration lacks a key it reads)."""
    spec = WORK.get(experiment)
    if spec is None:
        return None
    try:
        kind, units = spec.units(config)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    return str(kind), {k: float(v) for k, v in units.items()}


# ----------------------------------------------------------------------------- the model
@dataclasses.dataclass(frozen=True)
class Point:
    """One measured cell: its experiment and kind, work units, seconds, device (``cpu`` or
    ``cuda``) and where the measurement came from."""

    experiment: str
    kind: str
    units: dict[str, float]
    seconds: float
    device: str = "cpu"
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Model:
    """``seconds = intercept + sum(rates[c] * units[c])`` for one (experiment, kind, device)."""

    intercept: float
    rates: dict[str, float]
    n_points: int
    sources: tuple[str, ...] = ()

    def seconds(self, units: dict[str, float]) -> float | None:
        if any(k not in self.rates for k in units):
            return None  # a component never measured
        return self.intercept + sum(self.rates[k] * v for k, v in units.items())

    def to_dict(self) -> dict[str, Any]:
        return {"intercept_s": round(self.intercept, 6),
                "seconds_per_unit": {k: float(f"{v:.6g}") for k, v in self.rates.items()},
                "points": self.n_points, "sources": list(self.sources)}


def fit_models(points: Iterable[Point]) -> dict[tuple[str, str, str], Model]:
    """A :class:`Model` per (experiment, kind, device) from its points: non-negative least
    squares of the seconds on an intercept and the units of each component; without an
    intercept when every point has the same units (one configuration cannot separate them)."""
    from scipy.optimize import nnls

    groups: dict[tuple[str, str, str], list[Point]] = {}
    for p in points:
        if p.seconds is not None and math.isfinite(p.seconds) and p.seconds >= 0:
            groups.setdefault((p.experiment, p.kind, p.device), []).append(p)
    out = {}
    for key, pts in groups.items():
        comps = sorted({c for p in pts for c in p.units})
        rows = [[p.units.get(c, 0.0) for c in comps] for p in pts]
        y = [p.seconds for p in pts]
        distinct = {tuple(r) for r in rows}
        if comps and len(distinct) > 1:
            coef, _ = nnls([[1.0, *r] for r in rows], y)
            intercept, rates = float(coef[0]), [float(v) for v in coef[1:]]
        elif comps and any(any(r) for r in rows):
            coef, _ = nnls(rows, y)
            intercept, rates = 0.0, [float(v) for v in coef]
            if not any(rates):  # a unit vector of zeros: nothing to charge
                intercept = sum(y) / len(y)
        else:
            intercept, rates = sum(y) / len(y), [0.0] * len(comps)
        out[key] = Model(intercept, dict(zip(comps, rates, strict=True)), len(pts),
                         tuple(sorted({p.source.split(":")[0] for p in pts})))
    return out


def _this_machine() -> str:
    return platform.node() or "unknown"


def shard_point(path: str | os.PathLike[str], *, machine: str | None = None) -> Point | None:
    """The measured point of one shard file (None: unreadable, provisional, without a wall time
    or work function, a CPU shard of another machine than ``machine``, default this one, or a
    shard adopted from its twin, whose seconds are the twin's point already)."""
    from fusionlib.compendium.cells.shardfile import read_shard_file

    try:
        obj = read_shard_file(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    result, run = obj["result"], obj["run"]
    cell = result.get("cell") or {}
    exp, config = str(cell.get("experiment")), cell.get("config")
    seconds = run.get("seconds")
    got = work_units(exp, config) if isinstance(config, dict) else None
    if got is None or result.get("provisional") or not isinstance(seconds, int | float) \
            or run.get("adopted_from"):
        return None
    device = "cuda" if str(run.get("device", "")).startswith("cuda") else "cpu"
    if device == "cpu" and run.get("machine") != (machine or _this_machine()):
        return None
    # the figures as the cell returned them: its timing figures are kept in the run part
    figures = {**(result.get("figures") or {}),
               **((run.get("timing") or {}).get("figures") or {})}
    share = WORK[exp].done(config, figures)
    if share <= 0:  # resumed from its last checkpoint: its seconds measured no training
        return None
    kind, units = got
    return Point(exp, kind, {k: v * share for k, v in units.items()}, float(seconds), device,
                 f"shard: {result.get('scale')} on {run.get('machine')}")


def shard_points(root: str | os.PathLike[str] | None = None, *,
                 machine: str | None = None) -> list[Point]:
    """The measured points (:func:`shard_point`) of every shard under ``root`` (default
    ``results/cells``), at any scale: CPU shards computed on ``machine`` (default this one),
    CUDA shards from anywhere."""
    from fusionlib.compendium.cells.store import resolve_root

    found = (shard_point(p, machine=machine)
             for p in sorted(resolve_root(root).glob("*/*/*.shard.json")))
    return [p for p in found if p is not None]


def reestimate(cells: Sequence[PlanCell], points: Sequence[Point]) -> None:
    """Set the estimate of every cell of ``cells`` not done from models fitted to ``points``
    (after a cell finished: the first GPU cell of a kind measures the others)."""
    models = fit_models(points)
    for c in cells:
        if not c.done and c.units is not None:
            model = models.get((c.experiment, c.kind, "cuda" if c.gpu else "cpu"))
            if model is not None:
                c.estimate_s = model.seconds(c.units)


def plan_points(root: str | os.PathLike[str] | None = None,
                rates: dict[str, Any] | None = None) -> list[Point]:
    """The points the plan fits: the calibration (``rates``, default :data:`RATES_FILE`), the
    shards here above smoke scale, and smoke shards only for (experiment, kind) pairs without
    calibration points (a smoke shard's wall time is mostly its process's imports)."""
    cal = rate_points(load_rates() if rates is None else rates)
    calibrated = {(p.experiment, p.kind) for p in cal}
    shards = [p for p in shard_points(root) if not p.source.startswith("shard: smoke ")
              or (p.experiment, p.kind) not in calibrated]
    return [*cal, *shards]


def load_rates(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The calibration file (:data:`RATES_FILE`), or ``{}`` when there is none."""
    path = Path(path) if path is not None else RATES_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def rate_points(rates: dict[str, Any]) -> list[Point]:
    """The points of a calibration file."""
    out = []
    for p in rates.get("points") or []:
        try:
            out.append(Point(str(p["experiment"]), str(p["kind"]),
                             {str(k): float(v) for k, v in p["units"].items()},
                             float(p["seconds"]), str(p.get("device", "cpu")),
                             str(p.get("source", "calibration"))))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out


# ----------------------------------------------------------------------------- the plan
@dataclasses.dataclass
class PlanCell:
    """One paper-scale cell as the plan sees it.

    ``estimate_s``: core-seconds on this machine for a CPU cell, GPU seconds for a GPU cell
    (None: no measured rate); ``checkpoint_every``: fraction of the cell between two
    checkpoints (None: none); ``progress``: fraction a checkpoint on disk already holds;
    ``missing_data``: why the cell cannot run here (its data set is not provisioned);
    ``twin``: the id of a cpu-scale cell with a current shard whose configuration is this one's
    but for ``device`` (``"auto"`` here, which is the CPU on a machine without CUDA): on such a
    machine the paper cell recomputes that shard bit for bit (:func:`twins`).
    """

    experiment: str
    cell_id: str
    label: str
    config: dict
    gpu: bool
    status: str
    kind: str = ""
    units: dict[str, float] | None = None
    estimate_s: float | None = None
    checkpoint_every: float | None = None
    progress: float = 0.0
    missing_data: str | None = None
    chapter: str = ""
    twin: str | None = None

    @property
    def done(self) -> bool:
        return self.status == "done"

    @property
    def remaining_s(self) -> float | None:
        return None if self.estimate_s is None else self.estimate_s * (1.0 - self.progress)

    @property
    def chunk_s(self) -> float | None:
        """Seconds between two checkpoints (None: the cell does not checkpoint)."""
        if self.checkpoint_every is None:
            return None
        return None if self.estimate_s is None else self.estimate_s * self.checkpoint_every


def chapters(config: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """experiment -> the chapter (notebook) that reads it (``workflow/config.yaml``)."""
    path = Path(config) if config is not None else WORKFLOW_CONFIG
    if not path.is_file():
        return {}
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(e): str(nb) for nb, exps in (data.get("notebooks") or {}).items()
            for e in exps or []}


def _dataset_of(config: dict) -> str | None:
    run = config.get("run")
    name = config.get("dataset") or (run.get("dataset") if isinstance(run, dict) else None)
    return str(name) if name else None


_DATA_CACHE: dict[str, str | None] = {}


def missing_data(name: str | None) -> str | None:
    """Why dataset ``name`` cannot be read here (a file not provisioned), or None."""
    if not name:
        return None
    if name not in _DATA_CACHE:
        from fusionlib.data.registry import get_spec
        from fusionlib.data.store import data_dir
        from fusionlib.errors import InvalidInputError

        try:
            spec = get_spec(name)
        except InvalidInputError:  # not a registered data set (e.g. simulated data)
            _DATA_CACHE[name] = None
        else:
            folder = data_dir() / spec.name
            gone = [f.name for f in spec.files if not (folder / f.name).is_file()]
            _DATA_CACHE[name] = (f"needs data: {name} ({', '.join(gone)} missing; python -m "
                                 f"fusionlib.data provision {name})") if gone else None
    return _DATA_CACHE[name]


def _checkpoint_files(root: Path, experiment: str, cell_id: str, key: str) -> list[Path]:
    folder = root / "checkpoints"
    if experiment in ("ptgan_tabular", "fairptgan"):  # named with the code key: other code
        stem = f"{cell_id}-{key[:12]}.pt"                # never resumes
        return [p for p in (folder / stem, folder / f"{stem}.rows.json") if p.is_file()]
    return [p for p in (folder / f"{cell_id}.pt",) if p.is_file()]


def build_plan(seed: int = 0, *, root: str | os.PathLike[str] | None = None,
               experiments: Sequence[str] | None = None,
               rates: dict[str, Any] | None = None,
               points: Sequence[Point] | None = None) -> list[PlanCell]:
    """Every paper-scale cell of ``experiments`` (default all) for root seed ``seed``: its
    status under ``root`` (done, missing, stale or failed), whether it needs a GPU, its
    estimate (models fitted to ``points``, default: the shards under ``root`` and the
    calibration ``rates``, default :data:`RATES_FILE`), checkpoint and data."""
    from fusionlib.compendium.cells import cell_status, code_key, experiment_names, get_experiment
    from fusionlib.compendium.cells.store import resolve_root

    root = resolve_root(root)
    if points is None:
        points = plan_points(root, rates)
    models = fit_models(points)
    where = chapters()
    out = []
    for name in experiments or experiment_names():
        exp = get_experiment(name)
        if SCALE not in exp.scales:
            continue
        key = code_key(exp)
        spec = WORK.get(name)
        twin_of: dict[str, str] | None = None
        for c in exp.cells(SCALE, seed):
            gpu = needs_gpu(name, c.config)
            cell = PlanCell(name, c.cell_id, c.label, c.config, gpu,
                            cell_status(exp, SCALE, c, root, key=key), chapter=where.get(name, ""))
            got = work_units(name, c.config)
            if got is not None:
                cell.kind, cell.units = got
                model = models.get((name, cell.kind, "cuda" if gpu else "cpu"))
                cell.estimate_s = None if model is None else model.seconds(cell.units)
            if spec is not None:
                cell.checkpoint_every = spec.checkpoint(c.config)
            if cell.checkpoint_every is not None and not cell.done and name in _PROGRESS:
                files = _checkpoint_files(root, name, c.cell_id, key)
                cell.progress = _PROGRESS[name](c.config, files) if files else 0.0
            cell.missing_data = missing_data(_dataset_of(c.config))
            if not gpu and not cell.done:
                if twin_of is None:
                    twin_of = twins(exp, seed, root, key)
                cell.twin = twin_of.get(_without_device(c.config, c.seed))
            out.append(cell)
    return out


def _without_device(config: dict, seed: object = None) -> str:
    """The key of a cell for :func:`twins`: its seed and configuration but ``device``."""
    return json.dumps([str(seed), {k: v for k, v in config.items() if k != "device"}],
                      sort_keys=True, default=str)


def twins(exp: Any, seed: int, root: Path, key: str) -> dict[str, str]:
    """``{seed and configuration without device: cpu cell id}`` of the cpu-scale cells of
    ``exp`` with a current shard under ``root`` whose device is the CPU: a paper cell of the
    same seed and configuration with ``device`` ``"auto"`` or ``"cpu"`` computes the same thing
    on a machine without CUDA
    (tabular Table 3's Adult ND cells: the cpu scale runs the paper's protocol)."""
    from fusionlib.compendium.cells import cell_status

    if "cpu" not in exp.scales:
        return {}
    out = {}
    for c in exp.cells("cpu", seed):
        if c.config.get("device", "cpu") != "cpu":
            continue
        if cell_status(exp, "cpu", c, root, key=key) == "done":
            out[_without_device(c.config, c.seed)] = c.cell_id
    return out


def adopt_twins(cells: Sequence[PlanCell], seed: int, root: Path | None = None, *,
                only: str | None = None) -> list[PlanCell]:
    """Give each missing CPU cell of ``cells`` whose cpu ``twin`` is present (:func:`twins`)
    that twin's shard, as the paper cell's own
    (:func:`~fusionlib.compendium.cells.shardfile.adopt_shard`: the same computation on a
    CPU, so recomputing it on a machine without CUDA would write the same result; the shard
    keeps where, when and on what the twin was computed and says it was adopted). The paper
    cell's old traceback and checkpoints, if any, are removed, as a finished compute does.
    Returns the cells adopted (their status is now ``"done"``); one that cannot be adopted
    (the twin changed since the plan was built) stays missing and is computed as usual."""
    from fusionlib.compendium.cells import code_key, get_experiment
    from fusionlib.compendium.cells.shardfile import adopt_shard
    from fusionlib.compendium.cells.store import error_path, resolve_root, shard_path
    from fusionlib.errors import InvalidInputError

    root = resolve_root(root)
    todo = [c for c in cells if c.twin and not c.done and not c.gpu
            and (only is None or c.experiment == only)]
    adopted = []
    for name in sorted({c.experiment for c in todo}):
        exp = get_experiment(name)
        key = code_key(exp)
        grid = {c.cell_id: c for c in exp.cells(SCALE, seed)}
        for c in (c for c in todo if c.experiment == name):
            try:
                adopt_shard(shard_path(root, name, "cpu", c.twin),
                            shard_path(root, name, SCALE, c.cell_id), grid[c.cell_id], key,
                            scale=SCALE)
            except (InvalidInputError, KeyError):
                continue
            c.status = "done"
            adopted.append(c)
            error_path(root, name, SCALE, c.cell_id).unlink(missing_ok=True)
            if c.twin != c.cell_id:  # one id at both scales: the file may be the twin's
                for f in _checkpoint_files(root, name, c.cell_id, key):
                    Path(f).unlink(missing_ok=True)
    return adopted


# ----------------------------------------------------------------------------- value order
def _tabular_main(c: PlanCell) -> bool:
    cfg = c.config
    if cfg.get("dataset") != "adult":
        return False
    if cfg.get("kind") == "reference":
        return cfg.get("variant", "paper") == "paper"
    return cfg.get("discrepancy") == "nd" and "=" not in str(cfg.get("group"))


_SENSITIVITY = ("tau=", "bn=", "data=")


def _tabular_sensitivity(c: PlanCell) -> bool:
    cfg = c.config
    if cfg.get("kind") == "reference":  # the table of the data= cells
        return cfg.get("dataset") == "adult" and cfg.get("variant", "paper") != "paper"
    return any(s in str(cfg.get("group")) for s in _SENSITIVITY)


#: the tiers of ``make paper-cells``, most valuable first: (name, predicate); within a tier the
#: grid's order (FairPTGAN: both methods of a repetition together); what no tier takes comes
#: after, whole experiments cheapest first (so that chapters complete)
#:
#: :meta hide-value:
CPU_VALUE: tuple[tuple[str, Callable[[PlanCell], bool]], ...] = (
    ("ptgan_tabular: Table 3's Adult ND cells",
     lambda c: c.experiment == "ptgan_tabular" and _tabular_main(c)),
    ("ptgan_tabular: sensitivity (tau=, bn=, data=)",
     lambda c: c.experiment == "ptgan_tabular" and _tabular_sensitivity(c)),
    ("fairptgan", lambda c: c.experiment == "fairptgan"),
    ("fusiongan", lambda c: c.experiment == "fusiongan"),
    ("fairtest_protocol: Adult CTGAN runs",
     lambda c: c.experiment == "fairtest_protocol" and c.config.get("part") == "ctgan"
     and c.config.get("dataset") == "adult"),
)


def _tier_key(c: PlanCell, index: int) -> tuple:
    if c.experiment == "fairptgan":  # block by block, both methods together
        return (str(c.config.get("dataset") != "adult"), (c.config.get("reps") or [0])[0],
                index)
    return (index,)


def cpu_order(cells: Sequence[PlanCell]) -> list[PlanCell]:
    """``cells`` in the order of :data:`CPU_VALUE`; the rest by experiment, cheapest missing
    total first (cells without an estimate count as free), each in grid order; cells with a
    present cpu ``twin`` (:func:`twins`) last of all."""
    tiers: list[list[tuple[tuple, PlanCell]]] = [[] for _ in CPU_VALUE]
    rest: dict[str, list[PlanCell]] = {}
    for i, c in enumerate(cells):
        for t, (_, pred) in enumerate(CPU_VALUE):
            if pred(c):
                tiers[t].append((_tier_key(c, i), c))
                break
        else:
            rest.setdefault(c.experiment, []).append(c)
    out = [c for tier in tiers for _, c in sorted(tier, key=lambda kc: kc[0])]
    total = {e: sum(c.remaining_s or 0.0 for c in cs) for e, cs in rest.items()}
    for e in sorted(rest, key=lambda e: (total[e], e)):
        out += rest[e]
    # a cell whose cpu twin is present would recompute that shard here: last (but a reference
    # cell, which the other cells of its data set need to be read, keeps its place)
    last = [c for c in out if c.twin and c.config.get("kind") != "reference"]
    return [c for c in out if not any(c is x for x in last)] + last


_DATASET_RANK = {"cifar10": 0, "bloodmnist": 1, "celeba_hq": 2}
_DISC_RANK = {"nd": 0, "jsd": 1, "pd": 2}
_TABLE1_RANK = {"Table 1": 0, "Table 8": 5, "Table 7": 6, "Table 2": 7}


def best_competitors() -> dict[tuple[str, str], str]:
    """(dataset, discrepancy) -> the method other than PT+CP with the lowest FID in the paper's
    Table 1 (seed 001)."""
    from fusionlib.compendium.paper import paper_table

    t1 = paper_table("001", "Table 1")
    t1 = t1[t1["method"] != "pt+cp"]
    best = t1.loc[t1.groupby(["dataset", "discrepancy"])["FID"].idxmin()]
    return {(r.dataset, r.discrepancy): r.method for r in best.itertuples()}


def gpu_value_key(c: PlanCell, best: dict[tuple[str, str], str] | None = None) -> tuple:
    """Sort key of ``make paper-gpu`` (smaller first): tier, repetition, data set,
    discrepancy, method. Tiers: 0 one repetition (rep 0) of PT+CP (r 0.9), its best Table 1
    competitor and PT+CP (r 0.99) with ND, CIFAR-10 before BloodMNIST; 1 reps 1-2 of those;
    2 rep 0 of that trio under JSD and PD; 3 the trio's other reps; 4 Table 1's other methods;
    5 Table 8 (r 1); 6 Table 7; 7 Table 2 (CelebA-HQ); 8 the classifier; 9 the Fashion-MNIST
    proxies; 10 any other GPU cell."""
    if c.experiment == "ptgan_images_classifier":
        return (8, 0, 0, 0, 0)
    if c.experiment == "ptgan_images":
        return (9, c.config.get("rep", 0), 0, 0, 0)
    if c.experiment != "ptgan_images_paper":
        return (10, 0, 0, 0, 0)
    best = best_competitors() if best is None else best
    run, table, rep = c.config["run"], c.config.get("table"), int(c.config.get("rep", 0))
    ds, disc, method = run["dataset"], run["discrepancy"], run["method"]
    d, k = _DATASET_RANK.get(ds, 9), _DISC_RANK.get(disc, 9)
    if table != "Table 1":
        return (_TABLE1_RANK.get(table, 9), rep, d, k, 0)
    extra = {key for key in ("r", "penalty_weight") if key in run}
    if method == "pt+cp":
        m = 0 if run.get("r") == 0.9 else 2
    elif method == best.get((ds, disc)) and not extra:
        m = 1
    else:
        return (4, rep, d, k, 3)
    if disc == "nd":
        tier = 0 if rep == 0 else 1 if rep <= 2 else 3
    else:
        tier = 2 if rep == 0 else 3
    return (tier, rep, d, k, m)


# ----------------------------------------------------------------------------- printing
def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    m = seconds / 60
    return f"{m:,.1f}" if m < 100 else f"{m:,.0f}"


def _totals(cells: Sequence[PlanCell]) -> dict[str, Any]:
    cpu = [c for c in cells if not c.gpu]
    gpu = [c for c in cells if c.gpu]
    todo = [c for c in cpu if not c.done]
    return {"cells": len(cells), "done": sum(c.done for c in cells),
            "missing": sum(not c.done for c in cells), "cpu_missing": len(todo),
            # a cell whose cpu twin is present costs nothing: make paper-cells adopts its shard
            "cpu_min": sum(c.remaining_s or 0.0 for c in todo if not c.twin) / 60,
            "cpu_unknown": sum(c.remaining_s is None for c in todo if not c.twin),
            "gpu": len(gpu), "gpu_missing": sum(not c.done for c in gpu),
            "no_data": sum(c.missing_data is not None and not c.done for c in cells)}


_TOTAL_HEAD = (f"{'':28s} {'cells':>6s} {'done':>5s} {'missing':>7s} {'CPU core-min':>13s} "
               f"{'GPU cells':>9s} {'GPU missing':>11s} {'need data':>9s}")


def _total_line(name: str, t: dict[str, Any]) -> str:
    core = f"{t['cpu_min']:,.0f}" + (f" +{t['cpu_unknown']}?" if t["cpu_unknown"] else "")
    return (f"{name:28s} {t['cells']:>6,d} {t['done']:>5,d} {t['missing']:>7,d} {core:>13s} "
            f"{t['gpu']:>9,d} {t['gpu_missing']:>11,d} {t['no_data']:>9,d}")


def format_totals(cells: Sequence[PlanCell]) -> list[str]:
    """The totals per experiment, per chapter and overall (CPU core-minutes of the missing CPU
    cells; "+n?": n cells without an estimate)."""
    lines = ["Totals per experiment (CPU core-min: the missing CPU cells, one thread each, "
             "those that need data included, those whose cpu twin is present left out: "
             "make paper-cells adopts their shards)",
             _TOTAL_HEAD]
    by_exp: dict[str, list[PlanCell]] = {}
    by_chapter: dict[str, list[PlanCell]] = {}
    for c in cells:
        by_exp.setdefault(c.experiment, []).append(c)
        by_chapter.setdefault(c.chapter or "(no chapter)", []).append(c)
    lines += [_total_line(e, _totals(cs)) for e, cs in by_exp.items()]
    lines += ["", "Totals per chapter", _TOTAL_HEAD]
    lines += [_total_line(ch, _totals(cs)) for ch, cs in sorted(by_chapter.items())]
    lines += ["", _total_line("all", _totals(cells))]
    return lines


def format_plan(cells: Sequence[PlanCell], *, totals_only: bool = False) -> list[str]:
    """The plan's lines: one per cell (experiment, cell id, label, estimated core-minutes or
    GPU minutes, GPU, shard status, order of ``make paper-cells`` / ``paper-gpu``, notes), then
    :func:`format_totals`."""
    lines: list[str] = []
    if not totals_only:
        order = _order_numbers(cells)
        lines.append(f"{'experiment':24s} {'cell id':44s} {'label':40s} {'core-min':>8s} "
                     f"{'gpu':>3s} {'shard':7s} {'order':>5s}  notes")
        for c in cells:
            notes = []
            if c.missing_data and not c.done:
                notes.append(c.missing_data)
            if c.twin and not c.done:
                notes.append(f"same computation as cpu cell {c.twin} (present): make "
                             "paper-cells adopts its shard")
            if c.progress:
                notes.append(f"checkpoint at {c.progress:.0%}")
            elif c.checkpoint_every is not None:
                notes.append("checkpoints")
            est = _minutes(c.estimate_s) + (" gpu" if c.gpu and c.estimate_s is not None else "")
            lines.append(f"{c.experiment:24s} {c.cell_id:44s} {c.label[:40]:40s} {est:>8s} "
                         f"{'yes' if c.gpu else 'no':>3s} {c.status:7s} "
                         f"{order.get(id(c), ''):>5}  {'; '.join(notes)}")
        lines.append("")
    return lines + format_totals(cells)


def _order_numbers(cells: Sequence[PlanCell]) -> dict[int, int]:
    todo = [c for c in cells if not c.done and c.missing_data is None]
    cpu = cpu_order([c for c in todo if not c.gpu])
    try:
        best = best_competitors()
    except Exception:  # the paper table is package data; order without it
        best = {}
    gpu = sorted((c for c in todo if c.gpu), key=lambda c: gpu_value_key(c, best))
    out = {id(c): i for i, c in enumerate(cpu, 1)}
    out.update({id(c): i for i, c in enumerate(gpu, 1)})
    return out


def plan_header(seed: int, rates: dict[str, Any], n_shard_points: int) -> str:
    cal = (f"calibration of {rates.get('written_utc', '?')[:10]} on {rates.get('machine', '?')}"
           if rates else "no calibration (make paper-plan CALIBRATE=1)")
    return (f"paper-scale plan, root seed {seed}: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC "
            f"on {_this_machine()} ({os.cpu_count()} cores); rates from {cal} and "
            f"{n_shard_points} shards here")


# ----------------------------------------------------------------------------- running
@dataclasses.dataclass
class Outcome:
    """What :func:`run_budget` did with one cell: ``status`` is ``done``, ``cut off`` (stopped
    at the end of the budget; resumes from its checkpoint), ``failed`` or ``skipped``."""

    cell: PlanCell
    status: str
    seconds: float = 0.0
    message: str = ""


Runner = Callable[[PlanCell, float], str]


def select_cells(cells: Sequence[PlanCell], *, gpu: bool, only: str | None = None,
                 say: Callable[[str], None] = print) -> list[PlanCell]:
    """The missing cells ``make paper-cells`` (``gpu`` False) or ``make paper-gpu`` would try,
    most valuable first; says what it leaves out (the other device's cells, missing data)."""
    todo = [c for c in cells if not c.done and (only is None or c.experiment == only)]
    other = [c for c in todo if c.gpu != gpu]
    if other:
        say(f"left out: {len(other)} missing cells that "
            + ("run on the CPU (make paper-cells)" if gpu else
               "need a GPU (make paper-gpu on a CUDA machine): "
               + ", ".join(sorted({c.experiment for c in other}))))
    mine = [c for c in todo if c.gpu == gpu]
    no_data = [c for c in mine if c.missing_data is not None]
    for why in sorted({c.missing_data for c in no_data}):
        n = sum(c.missing_data == why for c in no_data)
        say(f"left out: {n} cells, {why}")
    mine = [c for c in mine if c.missing_data is None]
    if gpu:
        if any(c.experiment == "ptgan_images_paper" for c in mine) and not _has_fidelity():
            n = sum(c.experiment == "ptgan_images_paper" for c in mine)
            say(f"left out: {n} ptgan_images_paper cells, torch-fidelity is not installed "
                "(make env TORCH=cuda)")
            mine = [c for c in mine if c.experiment != "ptgan_images_paper"]
        try:
            best = best_competitors()
        except Exception:  # order without the paper's table
            best = {}
        return sorted(mine, key=lambda c: gpu_value_key(c, best))
    return cpu_order(mine)


def _has_fidelity() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch_fidelity") is not None


def _decide(c: PlanCell, left: float, unknown: bool) -> tuple[Outcome | None, str]:
    """Whether ``c`` starts with ``left`` seconds of budget (:func:`run_budget`'s rule):
    ``(None, note)`` to start it (``note``: how it will end), else ``(skipped outcome, "")``."""
    need, chunk = c.remaining_s, c.chunk_s
    if left <= 0:
        return Outcome(c, "skipped", 0.0, "budget spent"), ""
    resumable = c.checkpoint_every is not None and left >= MIN_CHUNK_S and (
        chunk is None or chunk <= left)
    if need is None and not resumable and not unknown:
        return Outcome(c, "skipped", 0.0, "no estimate (make paper-plan CALIBRATE=1)"), ""
    if need is not None and need > left and not resumable:
        return Outcome(c, "skipped", 0.0,
                       f"needs ~{_minutes(need)} min, {_minutes(left)} min left"), ""
    return None, ("" if need is not None and need <= left else " (to be cut off and resumed)"
                  if c.checkpoint_every is not None else " (cost unknown: stopped if it runs "
                  "past the budget; no checkpoint, so its work would be lost)")


def _start_line(c: PlanCell, at_s: float, note: str) -> str:
    return (f"[{at_s / 60:6.1f} min] start {c.experiment}/{c.cell_id} ({c.label}; est "
            f"{_minutes(c.remaining_s)} min"
            f"{', from ' + format(c.progress, '.0%') if c.progress else ''}){note}")


def run_budget(cells: Sequence[PlanCell], budget_s: float, runner: Runner, *,
               clock: Callable[[], float] = time.monotonic, unknown: bool = False,
               say: Callable[[str], None] = print, jobs: int = 1,
               stop: Callable[[], object] | None = None) -> list[Outcome]:
    """Run ``cells`` (already in value order) within ``budget_s`` seconds, ``jobs`` at a time
    (each in a thread of its own that waits on its cell's process; the next cell in value
    order starts when one ends).

    A cell starts when its estimate (what its checkpoint has not done yet) fits the time left;
    a cell of a checkpointing experiment also starts when one checkpoint interval and
    :data:`MIN_CHUNK_S` fit (it is stopped at the end of the budget and resumes next time). A
    cell without an estimate starts if it checkpoints, or with ``unknown`` (the GPU runner,
    where nothing has been measured before the first cell of a kind: it starts with the time
    left and is stopped when that runs out). Estimates are read when a cell's turn comes, so a
    runner may refine them (:func:`reestimate`; with ``jobs`` > 1 from several threads, so it
    must lock). ``runner(cell, seconds_left)`` runs one cell and returns ``done``, ``cut off``
    or ``failed``. Outcomes are returned in the order the cells were tried (one job) or ended.
    ``stop()`` stops every running cell: with ``jobs`` > 1 an interrupt (Ctrl-C) reaches this
    thread only, which then calls it until the cells' threads have returned, and re-raises.
    """
    check_positive_int("jobs", jobs)
    if jobs > 1:
        return _run_parallel(cells, budget_s, runner, clock=clock, unknown=unknown, say=say,
                             jobs=jobs, stop=stop)
    start = clock()
    out: list[Outcome] = []
    for c in cells:
        skipped, note = _decide(c, budget_s - (clock() - start), unknown)
        if skipped is not None:
            out.append(skipped)
            if skipped.message.startswith("no estimate"):
                say(f"skip  {c.experiment}/{c.cell_id}: no estimate of its cost")
            continue
        say(_start_line(c, clock() - start, note))
        t0 = clock()
        status = runner(c, budget_s - (t0 - start))
        spent = clock() - t0
        out.append(Outcome(c, status, spent))
        say(f"[{(clock() - start) / 60:6.1f} min] {status:7s} {c.experiment}/{c.cell_id} after "
            f"{spent / 60:.1f} min")
    return out


def _run_parallel(cells: Sequence[PlanCell], budget_s: float, runner: Runner, *,
                  clock: Callable[[], float], unknown: bool, say: Callable[[str], None],
                  jobs: int, stop: Callable[[], object] | None) -> list[Outcome]:
    """:func:`run_budget` with ``jobs`` > 1: a pool of threads, each running one cell."""
    from concurrent.futures import ThreadPoolExecutor, wait

    start = clock()
    out: list[Outcome] = []
    pending = list(cells)
    running: dict[Any, tuple[PlanCell, float]] = {}
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="paper-cell") as pool:
        try:
            _schedule(pending, running, out, pool, budget_s, runner, clock=clock, start=start,
                      unknown=unknown, say=say, jobs=jobs)
        except BaseException:  # Ctrl-C: stop the cells (a thread blocks on each), then raise
            for f in running:
                f.cancel()
            while any(not f.done() for f in running):
                if stop is not None:
                    stop()  # again each second: a thread may start its process just now
                wait(list(running), timeout=1.0)
            raise
    return out


def _schedule(pending: list[PlanCell], running: dict, out: list[Outcome], pool: Any,
              budget_s: float, runner: Runner, *, clock: Callable[[], float], start: float,
              unknown: bool, say: Callable[[str], None], jobs: int) -> None:
    """The loop of :func:`_run_parallel`: start cells while a job is free, collect the ends
    (``running``: future -> (cell, start time), shared with the caller, which stops them on an
    interrupt)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    while pending or running:
        while pending and len(running) < jobs:
            c = pending.pop(0)
            skipped, note = _decide(c, budget_s - (clock() - start), unknown)
            if skipped is not None:
                out.append(skipped)
                continue
            t0 = clock()
            say(_start_line(c, t0 - start, note))
            running[pool.submit(runner, c, budget_s - (t0 - start))] = (c, t0)
        if not running:
            continue
        finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for f in finished:
            c, t0 = running.pop(f)
            try:
                status = f.result()
            except Exception as exc:  # the runner itself broke: the cell failed
                status = "failed"
                say(f"error in the runner of {c.experiment}/{c.cell_id}: {exc!r}")
            spent = clock() - t0
            out.append(Outcome(c, status, spent))
            say(f"[{(clock() - start) / 60:6.1f} min] {status:7s} {c.experiment}/{c.cell_id} "
                f"after {spent / 60:.1f} min")


def simulate_budget(cells: Sequence[PlanCell], budget_s: float, *, jobs: int = 1,
                    unknown: bool = False, say: Callable[[str], None] = print
                    ) -> list[Outcome]:
    """What :func:`run_budget` would do if every cell took its estimate (``--dry-run``): list
    scheduling over ``jobs`` slots, each cell on the slot free first."""
    check_positive_int("jobs", jobs)
    free = [0.0] * jobs
    out: list[Outcome] = []
    for c in cells:
        slot = min(range(jobs), key=free.__getitem__)
        left = budget_s - free[slot]
        skipped, note = _decide(c, left, unknown)
        if skipped is not None:
            out.append(skipped)
            if skipped.message.startswith("no estimate"):
                say(f"skip  {c.experiment}/{c.cell_id}: no estimate of its cost")
            continue
        say(_start_line(c, free[slot], note))
        need = c.remaining_s
        spent = min(left, need if need is not None else left)
        free[slot] += spent
        status = "done" if need is not None and need <= left else "cut off"
        out.append(Outcome(c, status, spent))
        say(f"[{free[slot] / 60:6.1f} min] {status:7s} {c.experiment}/{c.cell_id} after "
            f"{spent / 60:.1f} min")
    return out


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group this module started, then SIGKILL after the grace."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def lower_autogroup(pid: int, nice: int = 10, *, proc: Path = Path("/proc")) -> bool:
    """Give the session of process ``pid`` the CPU share of ``nice`` (Linux, best effort).

    A process started in a session of its own (``start_new_session``) gets its own scheduling
    *autogroup* where the kernel groups by session (``/proc/sys/kernel/sched_autogroup_enabled``
    = 1, the default on desktop and many server kernels), and autogroups share the CPU equally
    whatever their members' nice values: a ``nice -n 10`` cell then takes a full core from the
    work beside it (measured here: two "niced" background cells at 50 % each beside a build).
    Writing the nice value to ``/proc/<pid>/autogroup`` lowers the whole group. Returns whether
    it was set (False where there is no such file or it cannot be written)."""
    path = proc / str(pid) / "autogroup"
    try:
        with open(path, "w") as f:
            f.write(str(int(nice)))
    except OSError:
        return False
    return True


def run_cell_process(cell: PlanCell, timeout_s: float, *, seed: int = 0,
                     python: str | None = None, gpu: bool = False,
                     root: str | os.PathLike[str] | None = None) -> str:
    """Run one cell as ``python -m fusionlib.compendium.cells run <experiment> <cell_id>
    --scale paper --seed <seed>`` in a process group of its own (CPU: niced, one thread),
    its output in ``<cell_id>.log`` beside the shard; stopped after ``timeout_s`` seconds.
    Returns ``done``, ``cut off`` or ``failed``."""
    from fusionlib.compendium.cells.store import resolve_root

    log = resolve_root(root) / cell.experiment / SCALE / f"{cell.cell_id}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [python or sys.executable, "-m", "fusionlib.compendium.cells", "run", cell.experiment,
           cell.cell_id, "--scale", SCALE, "--seed", str(seed)]
    if root is not None:
        cmd += ["--root", str(root)]
    env = dict(os.environ)
    if not gpu:
        env.update({k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                     "OPENBLAS_NUM_THREADS")})
        if shutil.which("nice"):
            cmd = ["nice", "-n", "10", *cmd]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        LIVE.add(proc)
        if not gpu:
            lower_autogroup(proc.pid)
        try:
            rc = proc.wait(timeout=max(1.0, timeout_s))
        except subprocess.TimeoutExpired:
            _stop(proc)
            return "cut off"
        except BaseException:  # Ctrl-C: stop the cell too, then let it propagate
            _stop(proc)
            raise
        finally:
            LIVE.discard(proc)
    return "done" if rc == 0 else "failed"


#: the cell processes running now (:func:`run_cell_process`): with several jobs, Ctrl-C reaches
#: the main thread only, which stops these (:func:`stop_live`)
LIVE: set[subprocess.Popen] = set()


def stop_live() -> int:
    """Stop every cell process still running (their checkpoints are kept); returns how many."""
    procs = list(LIVE)
    for proc in procs:
        _stop(proc)
        LIVE.discard(proc)
    return len(procs)


def bundle_name(seed: int, device: str, when: _dt.datetime | None = None) -> str:
    """``paper-seed<seed>-<cpu|gpu>-<machine>-<UTC time>.tar.gz``."""
    when = when or _dt.datetime.now(_dt.UTC)
    machine = re.sub(r"[^A-Za-z0-9]+", "-", _this_machine()).strip("-")[:30] or "machine"
    return f"paper-seed{seed}-{device}-{machine}-{when:%Y%m%dT%H%M%SZ}.tar.gz"


def export_bundle(experiments: Sequence[str], seed: int, out: Path, *,
                  python: str | None = None) -> int:
    """``python -m fusionlib.compendium.cells export --scale paper --seed S --out OUT
    --experiment E ...``; then stamps the bundle as installed here (its shards are)."""
    cmd = [python or sys.executable, "-m", "fusionlib.compendium.cells", "export", "--scale",
           SCALE, "--seed", str(seed), "--out", str(out)]
    for e in sorted(set(experiments)):
        cmd += ["--experiment", e]
    rc = subprocess.run(cmd, cwd=REPO).returncode
    if rc == 0 and out.is_file():
        _write_stamp(out, {"status": "installed", "note": "exported here"})
    return rc


# ----------------------------------------------------------------------------- bundles
def source_key() -> str:
    """SHA-256 of the lock files and every fusionlib source file: a bundle refused (or
    installed) under other code is imported again."""
    h = hashlib.sha256()
    files = sorted(PACKAGE.rglob("*.py")) + [REPO / n for n in (
        "requirements.lock", "requirements-torch-cpu.lock", "requirements-torch-cuda.lock")]
    for f in files:
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _stamp_path(bundle: Path, stamp_dir: Path, code: str) -> Path:
    return stamp_dir / f"{_sha256(bundle)[:32]}-{code[:16]}.json"


def _write_stamp(bundle: Path, record: dict[str, Any], stamp_dir: Path | None = None,
                 code: str | None = None) -> Path:
    from fusionlib.io import atomic_write_json

    path = _stamp_path(bundle, stamp_dir or STAMP_DIR, code or source_key())
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_json(path, {"bundle": str(bundle), "sha256": _sha256(bundle),
                                    "written_utc": _dt.datetime.now(_dt.UTC).isoformat(
                                        timespec="seconds"), **record})


def _cli_import(bundle: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "fusionlib.compendium.cells", "import",
                           str(bundle)], cwd=REPO, capture_output=True, text=True)
    return done.returncode, (done.stdout + done.stderr).strip()


def install_bundles(bundles: Sequence[str | os.PathLike[str]], *,
                    stamp_dir: str | os.PathLike[str] | None = None,
                    importer: Callable[[Path], tuple[int, str]] = _cli_import,
                    code: str | None = None,
                    say: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Import each bundle with ``python -m fusionlib.compendium.cells import`` unless a stamp
    says it was imported already under this code (:func:`source_key`): one stamp per (bundle
    SHA-256, code) in ``stamp_dir`` (default :data:`STAMP_DIR`). A bundle refused in part or
    in whole prints the refusal, is stamped ``refused`` (not retried until it or the code
    changes) and the build goes on. Returns one record per bundle (``status``: ``installed``,
    ``refused``, ``already installed``, ``refused before``)."""
    folder = Path(stamp_dir) if stamp_dir is not None else STAMP_DIR
    code = code or source_key()
    out = []
    for b in map(Path, bundles):
        if not b.is_file():
            say(f"install-bundles: {b}: no such file")
            continue
        stamp = _stamp_path(b, folder, code)
        if stamp.is_file():
            try:
                before = json.loads(stamp.read_text(encoding="utf-8")).get("status")
            except (OSError, ValueError, AttributeError):
                before = None
            if before in ("installed", "refused"):
                if before == "refused":
                    say(f"install-bundles: {b} was refused in part when imported under this "
                        f"code ({stamp}: delete it to retry); the build computes what is "
                        "missing")
                status = "already installed" if before == "installed" else "refused before"
                out.append({"bundle": str(b), "status": status})
                continue
        rc, text = importer(b)
        status = "installed" if rc == 0 else "refused"
        if text:
            say(text)
        if rc != 0:
            say(f"install-bundles: {b} was refused in part or in whole (above); the build "
                "goes on and computes what is missing")
        _write_stamp(b, {"status": status, "returncode": rc, "output": text[-4000:]}, folder,
                     code)
        out.append({"bundle": str(b), "status": status})
    return out


# ----------------------------------------------------------------------------- calibration
def _time_compute(exp: Any, cell: Any) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of ``exp.compute(cell)``."""
    c0, w0 = time.process_time(), time.perf_counter()
    exp.compute(cell)
    return time.process_time() - c0, time.perf_counter() - w0


def calibrate(experiments: Sequence[str] | None = None, *, seed: int = 0,
              say: Callable[[str], None] = print) -> dict[str, Any]:
    """Time each experiment's smoke grid in-process (after one untimed warm-up cell), and the
    first cell of each kind with each component stretched (:data:`WORK`); returns the content
    of :data:`RATES_FILE` (points, fitted models, machine, date, load). Checkpoints and files
    the cells write go to a temporary folder. GPU experiments are left out."""
    from fusionlib.compendium.cells import Cell, experiment_names, get_experiment

    names = [n for n in (experiments or experiment_names())
             if n in WORK and n not in GPU_EXPERIMENTS and "smoke" in get_experiment(n).scales]
    points: list[Point] = []
    failures: list[str] = []
    load0, t_start = _load(), time.perf_counter()
    old = os.environ.get("FUSIONLIB_CELLS")
    with tempfile.TemporaryDirectory(prefix="fusionlib-calibrate-") as tmp:
        os.environ["FUSIONLIB_CELLS"] = tmp
        try:
            for name in names:
                exp, spec = get_experiment(name), WORK[name]
                cells = exp.cells("smoke", seed)
                t0 = time.perf_counter()
                if cells:
                    try:
                        exp.compute(cells[0])  # warm-up: imports, data loaded once
                    except Exception as exc:  # reported, the rest go on
                        failures.append(f"{name} warm-up: {type(exc).__name__}: {exc}")
                first: dict[str, Any] = {}
                for c in cells:
                    kind, units = spec.units(c.config)
                    first.setdefault(kind, c)
                    try:
                        cpu, _ = _time_compute(exp, c)
                    except Exception as exc:
                        failures.append(f"{name}/{c.cell_id}: {type(exc).__name__}: {exc}")
                        continue
                    points.append(Point(name, kind, units, cpu, "cpu", "calibration: smoke"))
                for kind, c in first.items():
                    for comp, stretch in spec.stretch.items():
                        if comp not in spec.units(c.config)[1]:
                            continue  # a knob this kind of cell does not have
                        cfg = stretch(dict(c.config))
                        cell = Cell(name, cfg, c.seed, label=f"{c.label} {comp} x")
                        try:
                            cpu, _ = _time_compute(exp, cell)
                        except Exception as exc:
                            failures.append(f"{name}/{kind} stretched {comp}: "
                                            f"{type(exc).__name__}: {exc}")
                            continue
                        points.append(Point(name, spec.units(cfg)[0], spec.units(cfg)[1], cpu,
                                            "cpu", f"calibration: smoke, {comp} stretched"))
                say(f"calibrated {name}: {len(cells)} smoke cells and stretched copies in "
                    f"{time.perf_counter() - t0:.1f} s")
        finally:
            if old is None:
                os.environ.pop("FUSIONLIB_CELLS", None)
            else:
                os.environ["FUSIONLIB_CELLS"] = old
    models = fit_models(points)
    import torch

    return {
        "what": "seconds per work unit of the paper-scale cells (fusionlib.compendium.paperplan"
                "): smoke cells timed in-process (CPU seconds of the process, one thread) and "
                "stretched copies; refitted with the shards present wherever it is read",
        "written_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": _this_machine(), "cpu": _cpu_name(), "cores": os.cpu_count(),
        "python": platform.python_version(), "torch": torch.__version__,
        "threads": os.environ.get("OMP_NUM_THREADS"),
        "load_average_before": load0, "load_average_after": _load(),
        "seconds": round(time.perf_counter() - t_start, 1), "seed": seed,
        "failures": failures,
        "models": {f"{e}/{k}/{d}": m.to_dict() for (e, k, d), m in sorted(models.items())},
        "points": [p.to_dict() for p in points],
    }


def merge_rates(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` (a calibration of some experiments) with the points of ``old`` for the
    experiments ``new`` did not calibrate; the models refitted; each experiment's calibration
    date and machine kept under ``calibrated``."""
    mine = {p["experiment"] for p in new.get("points", [])}
    points = [p for p in old.get("points", []) if p.get("experiment") not in mine]
    points += new.get("points", [])
    when = {p["experiment"]: {"written_utc": old.get("written_utc"),
                              "machine": old.get("machine"),
                              "load_average_before": old.get("load_average_before")}
            for p in points}
    when.update(old.get("calibrated") or {})
    when = {e: v for e, v in when.items() if e not in mine}
    when.update({e: {"written_utc": new["written_utc"], "machine": new["machine"],
                     "load_average_before": new.get("load_average_before"),
                     "seconds": new.get("seconds")} for e in mine})
    models = fit_models(rate_points({"points": points}))
    return {**old, **new, "points": points, "calibrated": dict(sorted(when.items())),
            "models": {f"{e}/{k}/{d}": m.to_dict() for (e, k, d), m in sorted(models.items())}}


def _load() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def _cpu_name() -> str:
    """The processor's model name: the one the shards record (cells.shardfile)."""
    from fusionlib.compendium.cells.shardfile import _cpu

    return _cpu()


#: what the README measured with one job (cpu scale, code of fa16227): seconds
README_MEASURED: dict[str, Any] = {
    "ptgan_tabular Adult ND curves cell (10 x 57,000 iterations, 50 points)": [1771, 1676],
    "fusiongan, 13 cpu cells": 564, "fairtest_protocol, 14 cpu cells": 558,
}


def calibration_checks(points: Sequence[Point], seed: int = 0) -> dict[str, Any]:
    """What the models fitted to ``points`` predict for the cpu-scale cells the README timed
    (:data:`README_MEASURED`), beside the measurements."""
    from fusionlib.compendium.cells import get_experiment

    models = fit_models(points)

    def predict(name: str, pick: Callable[[dict], bool] = lambda c: True) -> list[float | None]:
        out = []
        for c in get_experiment(name).cells("cpu", seed):
            if pick(c.config):
                kind, units = work_units(name, c.config) or ("", {})
                m = models.get((name, kind, "cpu"))
                out.append(None if m is None else m.seconds(units))
        return out

    def total(xs: list[float | None]) -> float | None:
        return None if any(x is None for x in xs) else round(sum(xs), 1)  # type: ignore[arg-type]

    tab = predict("ptgan_tabular", lambda c: c.get("kind") == "curves")
    fg, ft = predict("fusiongan"), predict("fairtest_protocol")
    return {
        "measured_s (README, one job, code of fa16227)": README_MEASURED,
        "predicted_s": {
            "ptgan_tabular Adult ND curves cells": [None if x is None else round(x, 1)
                                                    for x in tab],
            f"fusiongan, {len(fg)} cpu cells": total(fg),
            f"fairtest_protocol, {len(ft)} cpu cells": total(ft)},
    }


# ----------------------------------------------------------------------------- GPU
def cuda_device() -> str | None:
    """The name of the CUDA device torch sees, or None."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


# ----------------------------------------------------------------------------- command line
def _positive_minutes(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"BUDGET={text} is not allowed; give a positive number of minutes, e.g. BUDGET=60")
    return value


def _parser() -> Any:
    import argparse

    p = argparse.ArgumentParser(prog="python -m fusionlib.compendium.paperplan",
                                description="Paper scale: plan, compute, ship.")
    sub = p.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("plan", help="every paper-scale cell with its estimate; totals")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--only", default=None, help="one experiment")
    sp.add_argument("--totals", action="store_true", help="the totals only")
    sp.add_argument("--calibrate", action="store_true",
                    help=f"time the smoke grids first and write {RATES_FILE.name}")
    for name, what in (("cells", "the most valuable missing CPU cells that fit the budget"),
                       ("gpu", "the most valuable missing GPU (image) cells that fit")):
        sp = sub.add_parser(name, help=what)
        sp.add_argument("--budget", type=_positive_minutes, required=True, help="minutes")
        sp.add_argument("--only", default=None, help="one experiment")
        sp.add_argument("--seed", type=int, default=0)
        sp.add_argument("--dry-run", action="store_true",
                        help="say what would start (from the estimates), run nothing")
        if name == "cells":
            sp.add_argument("--jobs", type=_positive_int, default=1,
                            help="cells at a time, one core each (default 1: one background job)")
        sp.add_argument("--no-export", action="store_true", help="write no bundle")
        if name == "cells":
            sp.add_argument("--no-adopt", action="store_true",
                            help="compute again the cells whose cpu twin is present instead of "
                                 "adopting its shard")
    sp = sub.add_parser("install-bundles", help="import each bundle once (stamped)")
    sp.add_argument("bundles", nargs="*", type=Path)
    sp.add_argument("--stamp-dir", type=Path, default=None,
                    help=f"where the stamps go (default {STAMP_DIR.relative_to(REPO)})")
    return p


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"JOBS must be a whole number >= 1, got {text!r}")
    return value


def _check_only(only: str | None) -> None:
    if only is None:
        return
    from fusionlib.compendium.cells import experiment_names

    names = experiment_names()
    if only not in names:
        from fusionlib.errors import InvalidInputError

        raise InvalidInputError(f"ONLY={only} is not allowed; use one of: {' '.join(names)}")


def _run(args: Any, gpu: bool) -> int:
    device = None
    if gpu:
        device = cuda_device()
        if device is None and not args.dry_run:
            print("error: make paper-gpu needs a CUDA device and torch sees none here; run it "
                  "on a GPU machine after `make env TORCH=cuda` (the CPU cells: make "
                  "paper-cells)", file=sys.stderr)
            return 2
    _check_only(args.only)
    cells = build_plan(args.seed, experiments=[args.only] if args.only else None)
    adopted: list[PlanCell] = []
    if not gpu:
        twinned = [c for c in cells if c.twin and not c.done
                   and (args.only is None or c.experiment == args.only)]
        if args.dry_run or args.no_adopt:
            if twinned:
                print(f"{len(twinned)} missing cells are the same computation as a present cpu "
                      "cell" + (" (--no-adopt: computed again)" if args.no_adopt else
                                ": they would take its shard, not be computed"))
            if not args.no_adopt:  # what a real run would adopt is not scheduled
                cells = [c for c in cells if not any(c is t for t in twinned)]
        else:
            adopted = adopt_twins(cells, args.seed, only=args.only)
            if adopted:
                print(f"adopted {len(adopted)} cells: each is the same computation as a present "
                      "cpu cell (same seed and configuration, on a CPU), whose shard it takes: "
                      + ", ".join(sorted({c.experiment for c in adopted})))
    chosen = select_cells(cells, gpu=gpu, only=args.only)
    what = "GPU" if gpu else "CPU"
    print(f"paper-{'gpu' if gpu else 'cells'}: budget {args.budget:g} min, root seed "
          f"{args.seed}, {len(chosen)} missing {what} cells to try, most valuable first"
          + (f" on {device}" if device else ""))
    jobs = getattr(args, "jobs", 1)
    if jobs > 1:
        cores = os.cpu_count() or 1
        print(f"{jobs} cells at a time, one thread each"
              + (f"; warning: this machine has {cores} cores, so the cells share them and run "
                 "slower than their estimates (some the plan shows done will be cut off)"
                 if jobs > cores else ""))
    if args.dry_run:
        outcomes = simulate_budget(chosen, args.budget * 60, jobs=jobs, unknown=gpu)
    else:
        import threading

        from fusionlib.compendium.cells.store import shard_path

        points = plan_points()
        lock = threading.Lock()

        def runner(c: PlanCell, left: float) -> str:
            status = run_cell_process(c, left, seed=args.seed, gpu=gpu)
            if status == "done":  # its wall time refines the estimates of its kind
                got = shard_point(shard_path(None, c.experiment, SCALE, c.cell_id))
                with lock:
                    c.status = "done"
                    if got is not None:
                        points.append(got)
                        reestimate(chosen, points)
            return status
        try:
            outcomes = run_budget(chosen, args.budget * 60, runner, unknown=gpu, jobs=jobs,
                                  stop=stop_live)
        except KeyboardInterrupt:
            stop_live()
            print("interrupted: the running cells were stopped (their checkpoints, if any, are "
                  "kept)", file=sys.stderr)
            return 130
    done = [o for o in outcomes if o.status == "done"]
    cut = [o for o in outcomes if o.status == "cut off"]
    failed = [o for o in outcomes if o.status == "failed"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    print(f"{len(done)} done, {len(cut)} cut off (resume next time), {len(failed)} failed, "
          f"{len(skipped)} not started (did not fit)")
    for o in failed:
        print(f"failed: {o.cell.experiment}/{o.cell.cell_id} (traceback beside its shard: "
              f"results/cells/{o.cell.experiment}/{SCALE}/{o.cell.cell_id}.error.txt)")
    if (done or adopted) and not args.dry_run and not args.no_export:
        out = BUNDLES_DIR / bundle_name(args.seed, "gpu" if gpu else "cpu")
        out.parent.mkdir(parents=True, exist_ok=True)
        if export_bundle([o.cell.experiment for o in done] + [c.experiment for c in adopted],
                         args.seed, out) != 0:
            print(f"error: exporting {out} failed", file=sys.stderr)
            return 1
        shown = out.relative_to(REPO) if out.is_relative_to(REPO) else out
        print(f"bundle {shown}: commit it (git add {shown}) to ship the results")
    return 1 if failed else 0


def _plan(args: Any) -> int:
    _check_only(args.only)
    rates = load_rates()
    if args.calibrate:
        rates = merge_rates(rates, calibrate([args.only] if args.only else None,
                                             seed=args.seed))
        rates["checks"] = calibration_checks(rate_points(rates), args.seed)
        from fusionlib.io import atomic_write_text

        atomic_write_text(RATES_FILE, json.dumps(rates, indent=1, sort_keys=True) + "\n")
        print(f"wrote {RATES_FILE} ({len(rates['points'])} points)")
    points = plan_points(rates=rates)
    cells = build_plan(args.seed, experiments=[args.only] if args.only else None, points=points)
    print(plan_header(args.seed, rates, sum(p.source.startswith("shard") for p in points)))
    print("\n".join(format_plan(cells, totals_only=args.totals)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``plan`` / ``cells`` / ``gpu`` / ``install-bundles``; bad arguments: one line, exit 2."""
    args = _parser().parse_args(argv)
    if args.command == "install-bundles":
        install_bundles(args.bundles, stamp_dir=args.stamp_dir)
        return 0  # a refused bundle never stops the build
    if getattr(args, "calibrate", False):  # one thread, set before numpy and torch load
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[k] = "1"
    from fusionlib.errors import InvalidInputError

    try:
        if args.command == "plan":
            return _plan(args)
        return _run(args, gpu=args.command == "gpu")
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
