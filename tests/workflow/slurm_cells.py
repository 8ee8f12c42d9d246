"""A tiny experiment for the Slurm test (registered through ``FUSIONLIB_CELL_MODULES``).

Cell 2 is *gated*: while the file named by ``FAKE_SLURM_GATE`` exists, it writes
``<gate>.started`` and waits, so that the test can cancel its Slurm job mid-compute; without the
gate it computes at once like the others.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register
from fusionlib.rng import numpy_rng


def _grid(scale: str, seed: int) -> list[Cell]:
    return [Cell("fake_slurm", {"i": i, "gated": i == 2}, seed, label=f"slurm {i}")
            for i in range(3)]


def _compute(cell: Cell) -> Shard:
    gate = os.environ.get("FAKE_SLURM_GATE")
    if cell.config["gated"] and gate and Path(gate).exists():
        Path(f"{gate}.started").write_text(os.environ.get("SLURM_JOB_ID", "?"))
        while Path(gate).exists():
            time.sleep(0.2)
    x = numpy_rng(cell.seed, "fake-slurm", cell.config["i"]).random(5)
    return Shard(pd.DataFrame({"i": cell.config["i"], "x": x, "seconds": time.perf_counter()}))


FAKE_SLURM = register(Experiment("fake_slurm", _grid, _compute, (__name__,)))
