"""The seed-002 protocol as cells: one per dataset, with the notebook's ProtocolConfig; a dataset
that is not on the machine gives a provisional shard that is recomputed on the next request."""

from __future__ import annotations

import json

import pytest

from fusionlib.compendium import cells as C
from fusionlib.fairtest import cells as F
from fusionlib.fairtest import protocol
from fusionlib.fairtest.records import ProtocolConfig


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_one_cell_per_dataset_with_the_scales_protocol(scale):
    cfg = F.PROTOCOL_CONFIG[scale]
    cells = F.PROTOCOL.cells(scale, seed=3)
    assert [c.config["dataset"] for c in cells] == cfg["datasets"]
    assert all(c.seed == 3 for c in cells)
    pc = ProtocolConfig(**cells[0].config["protocol"])
    assert pc.n_boot == cfg["n_boot"] and pc.ctgan_epochs == cfg["ctgan_epochs"]
    assert pc.baselines == ("CTGAN", "Indep") and pc.test_size == 0.3


def test_missing_data_gives_a_provisional_shard(tmp_path, monkeypatch):
    calls = []

    def fake_run_dataset(dataset, cfg, *, seed=0, **_):
        calls.append(dataset)
        return protocol.not_run_result(dataset, cfg, "data unavailable: test")

    monkeypatch.setattr(protocol, "run_dataset", fake_run_dataset)
    tables = F.protocol_tables("smoke", root=tmp_path, progress=False)
    assert calls == ["compas"]
    assert set(tables["fidelity"].status) == {"not run"}
    assert set(tables["table9"].status) == {"not run"} and len(tables["boots"]) == 0
    assert tables["status"].to_dict("records") == [dict(
        dataset="compas", status="not run", reason="data unavailable: test", train_rows=None,
        test_rows=None)]
    cell = F.PROTOCOL.cells("smoke")[0]
    path = C.shard_path(tmp_path, "fairtest_protocol", "smoke", cell.cell_id)
    assert json.loads(path.read_text())["provisional"] is True
    F.protocol_tables("smoke", root=tmp_path, progress=False)
    assert calls == ["compas", "compas"]  # recomputed, not read
