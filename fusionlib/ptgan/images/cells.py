"""PTGAN's image experiments (seed 001: Tables 1, 2, 7, 8; Figures 5, 6) as cells of the grid.

Importing this module registers three experiments:

``ptgan_images``
    the stated slice that runs everywhere: Fashion-MNIST padded to 32 px, the neural distance
    (ND), the arms of :data:`PROXY_ARMS` (SN, MP, PT+CP at r = 0.9 and 0.99, the two values
    between which the paper chooses for Table 1, and PT+CP at r = 1, which isolates tempering
    for Figure 5), one cell per (arm, seed) with the reduced settings of :data:`IMAGE_CONFIG`
    (iterations, width, training images); each cell stores the
    minibatch-loss variance over training (Figure 5) and generated images at alpha = 1
    (uint8, base64) from which the notebook computes classifier-FID/IS and draws Figure 6.
``ptgan_images_classifier``
    the feature classifier of the classifier scores, trained on the real Fashion-MNIST training
    images (one cell; its weights travel in the shard).
``ptgan_images_paper``
    the paper's grid (paper scale only): CIFAR-10 and BloodMNIST x {JSD, PD, ND} x the methods of
    Table 1 (PT+CP at r = 0.9 and r = 0.99: Table 1 reports the better, Section 5.1), the lambda
    sweeps of Table 7, r = 1 for Table 8 (whose r = 0.9 column is the r = 0.9 run of Table 1's
    grid), CelebA-HQ MP vs PT+CP
    (Table 2), 10 seeds, 100k (70k) iterations, scored by torch-fidelity's InceptionV3 at 10
    equally spaced points (best kept). A cell whose data files or torch-fidelity are missing
    returns a *provisional* "not run" row naming what to provide, so it is retried later.

Heavy imports (torch, the trainer) happen inside the compute functions.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, default_root, register
from fusionlib.errors import DataIntegrityError, DataUnavailableError
from fusionlib.rng import seed_int

__all__ = ["IMAGE_CONFIG", "PROXY_METHODS", "PROXY_ARMS", "TABLE1_R", "CLASSIFIER", "PAPER",
           "PROXY", "arm_label", "decode_images", "encode_images", "paper_grid_rows"]

#: per-scale settings of the Fashion-MNIST slice and its classifier (notebooks/ptgan_images.md)
IMAGE_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(n_iter=4, batch_size=16, width=1 / 32, n_train=256, var_every=2, n_var=32,
                  n_samples=64, n_seeds=1, clf_train=512, clf_epochs=1, n_test=256,
                  device="cpu"),
    "cpu": dict(n_iter=240, batch_size=64, width=1 / 16, n_train=10_000, var_every=20,
                n_var=256, n_samples=1_000, n_seeds=2, clf_train=10_000, clf_epochs=1,
                n_test=2_000, device="cpu"),
    "paper": dict(n_iter=20_000, batch_size=100, width=1.0, n_train=None, var_every=1_000,
                  n_var=1_000, n_samples=5_000, n_seeds=10, clf_train=60_000, clf_epochs=5,
                  n_test=10_000, device="auto"),
}
#: methods of the slice (ND): the SN and MP competitors and PTGAN
PROXY_METHODS: tuple[str, ...] = ("sn", "mp", "pt+cp")
#: the r between which Section 5.1 chooses PT+CP's Table 1 run ("we choose r in {0.9, 0.99}
#: that maximizes the evaluation metrics"); 0.9 is the package default
TABLE1_R: tuple[float, ...] = (0.9, 0.99)
#: (method, r) of every run of the slice; r None keeps the method's default (0.9 for PT+CP)
PROXY_ARMS: tuple[tuple[str, float | None], ...] = (
    ("sn", None), ("mp", None), ("pt+cp", None), ("pt+cp", 0.99), ("pt+cp", 1.0))
DATASET = "fashion_mnist"


def arm_label(method: str, r: float | None) -> str:
    """``"pt+cp"`` for a method at its default r, else ``"pt+cp r=0.99"``."""
    return method if r is None else f"{method} r={r:g}"


def encode_images(x: np.ndarray) -> dict[str, Any]:
    """uint8 images -> JSON-able ``{"shape": [...], "b64": ...}``."""
    arr = np.ascontiguousarray(x, dtype=np.uint8)
    return {"shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode("ascii")}


def decode_images(obj: dict[str, Any]) -> np.ndarray:
    """Inverse of :func:`encode_images`."""
    raw = base64.b64decode(obj["b64"])
    return np.frombuffer(raw, dtype=np.uint8).reshape(obj["shape"]).copy()


# ----------------------------------------------------------------------------- the slice
def _proxy_grid(scale: str, seed: int) -> list[Cell]:
    cfg = IMAGE_CONFIG[scale]
    run = dict(dataset=DATASET, discrepancy="nd", n_iter=cfg["n_iter"],
               batch_size=cfg["batch_size"], width=cfg["width"], n_train=cfg["n_train"])
    measure = dict(var_at=list(range(cfg["var_every"], cfg["n_iter"] + 1, cfg["var_every"])),
                   n_var=cfg["n_var"], n_samples=cfg["n_samples"], device=cfg["device"])
    # every arm of repetition i shares its seed: per-seed differences between arms are paired
    return [Cell("ptgan_images",
                 dict(run=dict(run, method=m, **({} if r is None else {"r": r})),
                      measure=measure, rep=i),
                 seed_int(seed, "images", "rep", i),
                 label=f"{arm_label(m, r)} nd {DATASET} rep {i}")
            for m, r in PROXY_ARMS for i in range(cfg["n_seeds"])]


def _row(cell: Cell, status: str = "run", reason: str = "", **extra: Any) -> dict[str, Any]:
    from fusionlib.ptgan.images.step import ImageRunConfig, gan_config

    r = cell.config["run"]
    g = gan_config(ImageRunConfig(**r))  # the effective lambda and r (paper defaults)
    return {"method": r["method"], "arm": arm_label(r["method"], r.get("r")),
            "discrepancy": r["discrepancy"], "dataset": r["dataset"],
            "penalty_weight": g.penalty_weight, "r": g.r, "rep": cell.config["rep"],
            "table": cell.config.get("table", "slice"),
            "seed": cell.seed, "n_iter": r["n_iter"], "status": status, "reason": reason,
            **extra}


def _proxy_compute(cell: Cell) -> Shard:
    from fusionlib.ptgan.images.runs import train_image_run
    from fusionlib.ptgan.images.step import ImageRunConfig

    m = cell.config["measure"]
    out = train_image_run(ImageRunConfig(**cell.config["run"]), cell.seed, var_at=m["var_at"],
                          n_var=m["n_var"], n_samples=m["n_samples"], device=m["device"])
    row = _row(cell, seconds=out.seconds, cpu_seconds=out.cpu_seconds,
               it_per_s=out.iterations_per_second)
    figures = {"variance": out.variance.to_dict("records"), "samples": encode_images(out.samples)}
    return Shard(pd.DataFrame([row]), figures, meta={"device": out.device})


# ----------------------------------------------------------------------------- classifier
def _classifier_grid(scale: str, seed: int) -> list[Cell]:
    cfg = IMAGE_CONFIG[scale]
    return [Cell("ptgan_images_classifier",
                 dict(dataset=DATASET, n_train=cfg["clf_train"], epochs=cfg["clf_epochs"],
                      n_test=cfg["n_test"]),
                 seed_int(seed, "images", "classifier"), label=f"classifier {DATASET}")]


def _classifier_compute(cell: Cell) -> Shard:
    import torch

    from fusionlib.data.images import load_image_dataset, to_unit
    from fusionlib.gan.trainer import torch_threads
    from fusionlib.metrics.image_classifier import accuracy, train_feature_classifier

    c = cell.config
    x, y = load_image_dataset(c["dataset"], "train", limit=c["n_train"])
    xt, yt = load_image_dataset(c["dataset"], "test", limit=c["n_test"])
    with torch_threads(1):
        model = train_feature_classifier(to_unit(x), y, seed=cell.seed, epochs=c["epochs"],
                                         n_classes=10)
        test_accuracy = accuracy(model, to_unit(xt), yt)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    row = {"dataset": c["dataset"], "n_train": c["n_train"], "epochs": c["epochs"],
           "test_accuracy": test_accuracy}
    return Shard(pd.DataFrame([row]),
                 {"state": base64.b64encode(buf.getvalue()).decode("ascii")})


# ----------------------------------------------------------------------------- paper grid
#: (dataset, discrepancy, method, overrides, table) of the paper's image runs
def paper_grid_rows() -> list[tuple[str, str, str, dict, str]]:
    """Every (dataset, discrepancy, method, overrides, table) of Tables 1, 2, 7 and 8."""
    rows: list[tuple[str, str, str, dict, str]] = []
    for ds in ("cifar10", "bloodmnist"):
        for disc in ("jsd", "pd", "nd"):
            methods = ("sn", "mp", "pt+mp") + (("gp", "pt+gp") if disc == "nd" else ())
            rows += [(ds, disc, m, {}, "Table 1") for m in methods]
            # Table 1's PT+CP is the better of r in {0.9, 0.99} (Section 5.1); Table 8's r = 0.9
            # column is this grid's r = 0.9 run
            rows += [(ds, disc, "pt+cp", {"r": r}, "Table 1") for r in TABLE1_R]
        rows += [(ds, "nd", "mp", {"penalty_weight": w}, "Table 7") for w in (10.0, 100.0)]
        rows += [(ds, "nd", "gp", {"penalty_weight": w}, "Table 7") for w in (1.0, 100.0)]
        rows += [(ds, "nd", "pt+cp", {"r": 1.0}, "Table 8")]
    rows += [("celeba_hq", "nd", m, {"batch_size": 50, "n_iter": 70_000}
              | ({"r": 0.98} if m == "pt+cp" else {}), "Table 2") for m in ("mp", "pt+cp")]
    return rows


def _paper_grid(scale: str, seed: int) -> list[Cell]:
    cells = []
    for ds, disc, m, ov, table in paper_grid_rows():
        run = {"dataset": ds, "discrepancy": disc, "method": m, "n_iter": 100_000,
               "batch_size": 100, **ov}
        tag = " ".join(f"{k} {v:g}" for k, v in ov.items() if k in ("penalty_weight", "r"))
        cells += [Cell("ptgan_images_paper", dict(run=run, table=table, rep=i, n_eval=10_000),
                       seed_int(seed, "images", "rep", i),
                       label=f"{m} {disc} {ds} {tag} rep {i}")
                  for i in range(10)]
    return cells


def _paper_compute(cell: Cell) -> Shard:
    from fusionlib.data.images import load_image_dataset
    from fusionlib.metrics.image_scores import require_torch_fidelity, torch_fidelity_scores
    from fusionlib.ptgan.images.runs import resolve_device, train_image_run
    from fusionlib.ptgan.images.step import ImageRunConfig

    run = ImageRunConfig(**cell.config["run"])
    device = resolve_device("auto")
    try:
        real, _ = load_image_dataset(run.dataset, "train", limit=cell.config["n_eval"])
    except (DataUnavailableError, DataIntegrityError) as exc:
        reason = f"not run: {exc}"
        return Shard(pd.DataFrame([_row(cell, "not run", reason)]), provisional=True)
    if device != "cuda":
        return Shard(pd.DataFrame([_row(cell, "not run", "needs a GPU runner (100k iterations "
                                        "of the full-width networks)")]), provisional=True)
    try:
        require_torch_fidelity()  # importable? (checked before any training)
    except DataUnavailableError as exc:
        return Shard(pd.DataFrame([_row(cell, "not run", f"not run: {exc}")]),
                     provisional=True)

    def scorer(images: np.ndarray) -> dict:
        return torch_fidelity_scores(images, real, device=device)

    n = run.n_iter
    out = train_image_run(run, cell.seed, var_at=list(range(n // 100, n + 1, n // 100)),
                          n_var=1_000, n_samples=cell.config["n_eval"],
                          eval_at=[n * k // 10 for k in range(1, 11)], scorer=scorer,
                          device=device, checkpoint_every=5_000,
                          # a killed GPU job resumes from here (bitwise on CPU, see the trainer)
                          checkpoint_path=str(default_root() / "checkpoints" /
                                              f"{cell.cell_id}.pt"))
    best = {"is": max(s["is"] for s in out.scores), "fid": min(s["fid"] for s in out.scores)}
    figures = {"variance": out.variance.to_dict("records"), "scores": out.scores,
               "samples": encode_images(out.samples[:64])}
    return Shard(pd.DataFrame([_row(cell, **best, seconds=out.seconds)]), figures,
                 meta={"device": device})


_MODULES = (__name__,)
PROXY = register(Experiment(
    "ptgan_images", _proxy_grid, _proxy_compute, _MODULES,
    description="PTGAN images: Fashion-MNIST 32 px, ND, SN/MP/PT+CP per seed; Figures 5, 6"))
CLASSIFIER = register(Experiment(
    "ptgan_images_classifier", _classifier_grid, _classifier_compute, _MODULES,
    description="PTGAN images: feature classifier of the classifier-FID/IS (Fashion-MNIST)"))
PAPER = register(Experiment(
    "ptgan_images_paper", _paper_grid, _paper_compute, _MODULES, scales=("paper",),
    description="PTGAN images: the paper's grid (Tables 1, 2, 7, 8) for GPU runners"))
