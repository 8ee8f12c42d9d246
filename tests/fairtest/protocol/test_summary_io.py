"""A CTGAN run's figure data: its timings stay out of the shard's result part."""

from __future__ import annotations

import json

import pandas as pd

from fusionlib.compendium import cells as C
from fusionlib.fairtest.protocol.summary_io import CTGAN_TIMINGS, ctgan_figures, ctgan_from


def ctgan_run(wall: float, cpu: float) -> dict:
    frame = pd.DataFrame({"method": ["CTGAN"], "KL": [0.1]})
    dcc = pd.DataFrame([[1.0, 0.2], [0.2, 1.0]], index=["a", "b"], columns=["a", "b"])
    return {"fidelity": frame, "boots": frame, "table9": frame, "accuracy": {"tree": 0.8},
            "dcc": dcc, "info": {"run": 0, "epochs": 300, "fit_wall_s": wall,
                                 "fit_cpu_s": cpu, "losses": [[1, 0.5, 0.4]]}}


def test_timings_round_trip_and_leave_the_result_part_alone(tmp_path):
    fast, slow = ctgan_figures(ctgan_run(1.5, 1.4)), ctgan_figures(ctgan_run(9.0, 8.8))
    assert "fit_wall_s" not in fast["info"] and fast["timing"] == {"fit_wall_s": 1.5,
                                                                    "fit_cpu_s": 1.4}
    assert ctgan_from(fast)["info"] == ctgan_run(1.5, 1.4)["info"]
    assert set(CTGAN_TIMINGS) == {"fit_wall_s", "fit_cpu_s"}
    cell = C.Cell("fake_ctgan", {"i": 0}, 0, label="ctgan")
    rows = pd.DataFrame({"x": [1.0]})
    a, b = tmp_path / "a.shard.json", tmp_path / "b.shard.json"
    C.write_shard(a, cell, C.Shard(rows, fast), "k" * 64, scale="smoke", seconds=1.0)
    C.write_shard(b, cell, C.Shard(rows, slow), "k" * 64, scale="smoke", seconds=9.0)
    ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ja["result_sha256"] == jb["result_sha256"]
    assert ja["run"]["timing"]["figures"]["timing"]["fit_wall_s"] == 1.5
