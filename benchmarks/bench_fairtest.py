"""Benchmark: fit + sample time of the seed-002 joint estimators against CTGAN, side by side.

Run:  python benchmarks/bench_fairtest.py [--ctgan-epochs 1 5] [--repeats 3]

On discretised Adult (Appendix B; 70 % training rows, n_test = the other 30 %) with the
``relationship`` separation of Table 2, it times ``fit(internal, external)`` and
``sample(n_test)`` of Independence Given Overlap, Marginal Preservation, Latent naive Bayes
(defaults: K = 3, 5 restarts) and the Independent model (best of ``--repeats`` runs), and CTGAN
(trained on the complete training table) at two small epoch counts. CTGAN's time is modelled
as fixed + epochs x per_epoch from those two runs and EXTRAPOLATED to the package default of
300 epochs; that number is labelled as extrapolated everywhere. Without the Adult files the
script uses a synthetic table of the same shape and cardinalities and says so.

Writes benchmarks/results/fairtest.json atomically.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import torch

from fusionlib.compendium.provenance import package_versions
from fusionlib.errors import DataUnavailableError
from fusionlib.fairtest import (
    VALUES,
    CTGANBaseline,
    IndependenceGivenOverlap,
    IndependentModel,
    LatentNaiveBayes,
    MarginalPreservation,
    discretise,
    separate,
)
from fusionlib.io import atomic_write_json
from fusionlib.rng import numpy_rng

RESULT = Path(__file__).resolve().parent / "results" / "fairtest.json"
FULL_EPOCHS = 300  # ctgan's default, used by the paper (Section 4.3)


def adult_table(seed: int) -> tuple[pd.DataFrame, str]:
    """Discretised Adult, or a synthetic stand-in of the same shape when it is absent."""
    try:
        from fusionlib.data import load

        return discretise("adult", load("adult")), "real: discretised Adult (45,222 rows)"
    except (DataUnavailableError, ImportError) as exc:
        rng = numpy_rng(seed, "bench-rows")
        cols = {c: rng.choice(v, size=45_222) for c, v in VALUES["adult"].items()}
        return pd.DataFrame(cols), f"SYNTHETIC stand-in (Adult unavailable: {exc})"


def best_time(make, internal, external, n_test, repeats) -> dict:
    fits, samples = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        model = make().fit(internal, external)
        t1 = time.perf_counter()
        model.sample(n_test, seed=r)
        t2 = time.perf_counter()
        fits.append(t1 - t0)
        samples.append(t2 - t1)
    return {"fit_s": min(fits), "sample_s": min(samples), "repeats": repeats,
            "timing": f"best of {repeats}"}


def ctgan_time(train, n_test, epochs_pair, seed) -> dict:
    runs = {}
    for epochs in epochs_pair:
        t0 = time.perf_counter()
        model = CTGANBaseline(epochs=epochs, enable_gpu=False, seed=seed).fit(train)
        t1 = time.perf_counter()
        model.sample(n_test, seed=seed)
        t2 = time.perf_counter()
        runs[epochs] = (t1 - t0, t2 - t1)
    (e_lo, (f_lo, _)), (e_hi, (f_hi, s_hi)) = sorted(runs.items())
    per_epoch = (f_hi - f_lo) / (e_hi - e_lo)
    fixed = max(f_lo - e_lo * per_epoch, 0.0)
    return {
        "measured": {str(e): {"fit_s": f, "sample_s": s} for e, (f, s) in runs.items()},
        "per_epoch_s": per_epoch,
        "fixed_s": fixed,
        "extrapolated_fit_s_300_epochs": fixed + FULL_EPOCHS * per_epoch,
        "sample_s": s_hi,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; exits with a usage message on invalid values."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctgan-epochs", type=int, nargs=2, default=[1, 5])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if len(set(args.ctgan_epochs)) != 2 or min(args.ctgan_epochs) < 1:
        parser.error(f"--ctgan-epochs needs two DIFFERENT epoch counts >= 1 (the per-epoch time "
                     f"is their difference quotient), got {args.ctgan_epochs}; e.g. 1 5")
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    return args


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)

    table, source = adult_table(args.seed)
    order = numpy_rng(args.seed, "bench-split").permutation(len(table))
    n_test = int(round(0.3 * len(table)))
    train = table.iloc[order[n_test:]].reset_index(drop=True)
    internal, external = separate(train, "adult", "relationship")
    print(f"data: {source}; train {len(train)} rows, n_test {n_test}; torch threads 1")

    makers = {
        "Independence Given Overlap": IndependenceGivenOverlap,
        "Marginal Preservation": MarginalPreservation,
        "Latent naive Bayes (K=3, 5 restarts, total-LL tol)": LatentNaiveBayes,
        "Independent model": IndependentModel,
    }
    results = {name: best_time(m, internal, external, n_test, args.repeats)
               for name, m in makers.items()}
    ctgan = ctgan_time(train, n_test, args.ctgan_epochs, args.seed)
    ct_total = ctgan["extrapolated_fit_s_300_epochs"] + ctgan["sample_s"]

    rows = []
    for name, r in results.items():
        total = r["fit_s"] + r["sample_s"]
        rows.append((name, r["fit_s"], r["sample_s"], total, total / ct_total))
    for e, m in ctgan["measured"].items():
        total = m["fit_s"] + m["sample_s"]
        rows.append((f"CTGAN, {e} epochs (measured)", m["fit_s"], m["sample_s"], total,
                     total / ct_total))
    rows.append((f"CTGAN, {FULL_EPOCHS} epochs (EXTRAPOLATED)",
                 ctgan["extrapolated_fit_s_300_epochs"], ctgan["sample_s"], ct_total, 1.0))
    frame = pd.DataFrame(rows, columns=["method", "fit_s", "sample_s", "total_s",
                                        "ratio_vs_ctgan300"])
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"CTGAN per epoch {ctgan['per_epoch_s']:.3g} s, fixed {ctgan['fixed_s']:.3g} s "
          f"(from {args.ctgan_epochs} epochs); 300-epoch time is extrapolated, not measured")

    atomic_write_json(RESULT, {
        "benchmark": "fairtest estimators fit + sample vs CTGAN",
        "data": source, "separation": "adult / relationship", "n_train": len(train),
        "n_test": n_test, "torch_threads": 1, "cpu_count": os.cpu_count(),
        "python": platform.python_version(), "packages": package_versions(),
        "timestamp": datetime.now(UTC).isoformat(),
        "estimators": results, "ctgan": ctgan,
        "table": frame.to_dict(orient="records"),
        "note": "ratio_vs_ctgan300 = total_s / (extrapolated 300-epoch CTGAN fit + sample)",
    })
    print(f"wrote {RESULT}")


if __name__ == "__main__":
    main()
