"""A chapter at cpu scale reads the paper scale's CTGAN runs of a dataset where every one is
present (fusionlib.fairtest.protocol.present), and never computes them.

The smoke grid stands in for the paper's: its cells are computed once (compas only, about 10 s)
and ``present._ids`` / ``present.present_cells`` are pointed at them when asked for "paper".
"""

from __future__ import annotations

import shutil
import warnings

import pandas as pd
import pytest

from fusionlib.compendium import cells as C
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.protocol import cells as F
from fusionlib.fairtest.protocol import present as P


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    root = tmp_path_factory.mktemp("cells")
    return root, F.protocol_results("smoke", root=root, progress=False)


@pytest.fixture
def as_paper(monkeypatch):
    """The 'paper' cells of the functions under test are the smoke grid's, and the runs read
    from them are stamped (``info["read_as"] = "paper"``) so a test can tell them apart."""
    ids, cells, from_fig = P._ids, P.present_cells, P.ctgan_from

    def _ids(scale, seed, dataset, part):
        return ids("smoke" if scale == "paper" else scale, seed, dataset, part)

    def present(exp, scale, wanted, **kw):
        found = cells(exp, "smoke" if scale == "paper" else scale, wanted, **kw)
        if found is not None and scale == "paper":
            for shard in found.values():
                shard.figures = {**shard.figures, "read_as": "paper"}
        return found

    def stamped(fig):
        run = from_fig(fig)
        run["info"] = {**run["info"], "read_as": fig.get("read_as", "own")}
        return run

    monkeypatch.setattr(P, "_ids", _ids)
    monkeypatch.setattr(P, "present_cells", present)
    monkeypatch.setattr(P, "ctgan_from", stamped)


def _ctgan_shard(root):
    (cell,) = [c for c in F.PROTOCOL.cells("smoke") if c.config["part"] == "ctgan"]
    return C.shard_path(root, "fairtest_protocol", "smoke", cell.cell_id)


def test_the_source_runs_replace_the_scales_own_as_protocol_results_merges_them(smoke, as_paper):
    root, protocol = smoke
    # smoke's COMPAS CTGAN (1 epoch, 1 run) differs from the paper's (300 epochs, 3 runs)
    out, replaced = P.with_source_ctgan(protocol, "smoke", source="paper", root=root)
    assert replaced == {"compas": "paper"}
    got, want = out["datasets"]["compas"], protocol["datasets"]["compas"]
    assert got is not want
    # the runs in the summary are the source's (stamped when read as 'paper')
    assert [i["read_as"] for i in got.ctgan_info] == ["paper"] * len(want.ctgan_info)
    # the same runs read back and merged: exactly what protocol_results built (the oracle)
    for field in ("fidelity", "boots", "table9", "ctgan_runs", "ctgan_diffs"):
        pd.testing.assert_frame_equal(getattr(got, field), getattr(want, field))
    pd.testing.assert_frame_equal(got.accuracy, want.accuracy)
    assert [{k: v for k, v in i.items() if k != "read_as"} for i in got.ctgan_info] \
        == want.ctgan_info
    assert list(got.dcc) == list(want.dcc)
    assert out["datasets"]["adult"] is protocol["datasets"]["adult"]  # not run: untouched
    assert out["disjoint"] is protocol["disjoint"] and out is not protocol
    assert protocol["datasets"]["compas"] is want  # the input is not changed


def test_nothing_is_replaced_without_every_source_cell(smoke, as_paper, tmp_path):
    root, protocol = smoke
    copy = tmp_path / "cells"
    shutil.copytree(root, copy)
    _ctgan_shard(copy).unlink()  # planted: the one CTGAN run is missing
    out, replaced = P.with_source_ctgan(protocol, "smoke", source="paper", root=copy)
    assert replaced == {} and out["datasets"]["compas"] is protocol["datasets"]["compas"]
    assert P.source_ctgan_runs("compas", "paper", root=copy) is None
    assert not _ctgan_shard(copy).exists()  # read only: nothing computed


def test_stale_source_cells_are_not_read(smoke, as_paper, tmp_path):
    root, protocol = smoke
    copy = tmp_path / "cells"
    shutil.copytree(root, copy)
    path = _ctgan_shard(copy)
    path.write_text(path.read_text().replace('"code_key":"', '"code_key":"0'))  # other code
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, replaced = P.with_source_ctgan(protocol, "smoke", source="paper", root=copy)
    assert replaced == {}
    assert any("not read" in str(w.message) for w in caught
               if issubclass(w.category, C.StaleShardWarning))


def test_no_mixing_where_the_rest_of_the_protocol_differs(smoke, monkeypatch, as_paper):
    root, protocol = smoke
    ids = P._ids

    def other_protocol_cell(scale, seed, dataset, part):  # planted: the scales' cells differ
        got = ids(scale, seed, dataset, part)
        return [f"{i}-other" for i in got] if scale == "paper" and part == "protocol" else got

    monkeypatch.setattr(P, "_ids", other_protocol_cell)
    _, replaced = P.with_source_ctgan(protocol, "smoke", source="paper", root=root)
    assert replaced == {}


def test_same_settings_or_same_scale_change_nothing(smoke, monkeypatch, as_paper):
    root, protocol = smoke
    out, replaced = P.with_source_ctgan(protocol, "smoke", source="smoke", root=root)
    assert replaced == {} and out["datasets"] == protocol["datasets"]
    same = {**F.PROTOCOL_CONFIG, "paper": {**F.PROTOCOL_CONFIG["paper"],
                                           "ctgan": F.PROTOCOL_CONFIG["smoke"]["ctgan"]}}
    monkeypatch.setattr(P, "PROTOCOL_CONFIG", same)
    _, replaced = P.with_source_ctgan(protocol, "smoke", source="paper", root=root)
    assert replaced == {}
    with pytest.raises(InvalidInputError, match="scales must be among"):
        P.with_source_ctgan(protocol, "gpu", root=root)


def test_cpu_reads_the_paper_scales_adult_ctgan_cells():
    """The real grids: at cpu only Adult's CTGAN settings differ from the paper's, and its
    protocol cell is the same cell at both scales (what makes the mix the paper's protocol)."""
    cpu, paper = F.PROTOCOL_CONFIG["cpu"]["ctgan"], F.PROTOCOL_CONFIG["paper"]["ctgan"]
    assert [d for d in paper if cpu.get(d) != paper[d]] == ["adult"]
    assert P._ids("cpu", 0, "adult", "protocol") == P._ids("paper", 0, "adult", "protocol")
    assert len(P._ids("paper", 0, "adult", "ctgan")) == 3


def test_register_labels_the_ctgan_rows_of_a_replaced_dataset_only():
    """register(..., ctgan_scales={"adult": "paper"}) puts scale paper on the claims of Adult's
    CTGAN rows and on no other row; without it no claim carries a scale."""
    from fusionlib.compendium.verdicts import Estimate
    from fusionlib.fairtest.protocol.claims import register

    class Recorder:
        def __init__(self):
            self.claims = []

        def claim(self, claim_id, *args, **kw):
            self.claims.append((claim_id, kw.get("scale"), kw.get("not_comparable")))
            return type("C", (), {"verdict": "reproduced"})()

    rows = [("adult", "CTGAN"), ("adult", "IGO"), ("compas", "CTGAN")]
    table = pd.DataFrame([{"dataset": d, "method": m, "overlap": "", "CS paper": 0.9,
                           "CS ours": 0.9} for d, m in rows])
    est = pd.DataFrame([{"dataset": d, "method": m, "overlap": "", "metric": "CS",
                         "estimate": Estimate(0.9, 0.01, 3)} for d, m in rows])
    for scales, want in (({"adult": "paper"}, ["paper", None, None]), (None, [None] * 3)):
        run = Recorder()
        register(run, table, "T7", "Table 7", ["CS"], est=est, reduced={},
                 why=lambda *a: "", ctgan_scales=scales)
        assert [c[1] for c in run.claims] == want
        assert [c[2] for c in run.claims] == [None] * 3  # nothing reduced: all comparable
