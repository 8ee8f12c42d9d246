"""Helpers and fixtures shared by the seed-002 tests: small hand-made tables, no real data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.fairtest.discretise import VALUES
from fusionlib.fairtest.protocol.runs import ProtocolConfig, run_dataset

#: the protocol with tiny settings (seconds) and only the Independent baseline (no torch)
FAST = ProtocolConfig(n_boot=5, dm_seeds=1, dm_n_estimators=5, latent_restarts=1,
                      ctgan_epochs=1, baselines=("Indep",))


def compas_like(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """A random all-categorical table with COMPAS's discretised columns, label tied to score."""
    rng = np.random.default_rng(seed)
    cols = {}
    for col, values in VALUES["compas"].items():
        values = values or ("0", "1", "2")  # count columns: a few small counts suffice
        cols[col] = rng.choice(values, size=n)
    df = pd.DataFrame(cols)
    high = df["score"].eq("High").to_numpy()
    df["two-year recidivism"] = np.where(rng.random(n) < 0.3 + 0.4 * high, "1", "0")
    return df.astype(object)


def frame(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """Three dependent categorical columns; ``shift`` moves mass towards the last categories."""
    rng = np.random.default_rng(seed)
    p = np.array([0.5, 0.3, 0.2]) + shift * np.array([-1.0, 0.0, 1.0]) * 0.4
    a = rng.choice(["a0", "a1", "a2"], size=n, p=p)
    b = np.where(rng.random(n) < 0.7 - shift * 0.5, np.char.replace(a, "a", "b"), "b9")
    c = rng.choice(["x", "y"], size=n, p=[0.6 - 0.4 * shift, 0.4 + 0.4 * shift])
    return pd.DataFrame({"a": a, "b": b, "c": c}).astype(str)


@pytest.fixture(scope="session")
def compas_result():
    """The whole protocol on a 240-row COMPAS-like table (seed 0, FAST settings)."""
    return run_dataset("compas", FAST, seed=0, table=compas_like())
