"""A paper cell that is the same computation as a present cpu cell adopts its shard.

``same_computation`` by hand (oracle cases), ``adopt_shard`` on real shard files (the result is
the twin's, the provenance kept and marked, refusals for another key, an altered file and
another configuration), and ``adopt_twins`` through the plan of a fake experiment whose cpu
and paper grids share two cells of three. Planted faults: a twin shard edited after it was
written, a configuration that differs in one setting, a GPU twin.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from fusionlib.compendium import cells as C
from fusionlib.compendium import paperplan as P
from fusionlib.compendium.cells.bundle import MANIFEST, import_bundle, read_archive
from fusionlib.compendium.cells.shardfile import adopt_shard, same_computation
from fusionlib.errors import InvalidInputError

TWIN = "paperplan_twin_fake"
REPO = Path(__file__).resolve().parents[2]


def _grid(scale: str, seed: int) -> list[C.Cell]:
    device = "cpu" if scale == "cpu" else "auto"
    # the third cell runs longer at paper scale: not the same computation
    return [C.Cell(TWIN, {"n": 3 + i, "iters": 10 if (i < 2 or scale != "paper") else 99,
                          "device": device}, seed + i, label=f"twin {i}") for i in range(3)]


def _compute(cell: C.Cell) -> C.Shard:
    n = cell.config["n"]
    return C.Shard(pd.DataFrame({"n": [n], "value": [cell.seed * 0.5 + n], "seconds": [1.25]}),
                   figures={"curve": [float(n), 2.0 * n]}, meta={"device": "cpu"})


C.register(C.Experiment(TWIN, _grid, _compute, (__name__,)))


def _cell(experiment="e", seed=1, **config):
    return {"experiment": experiment, "seed": seed, "config": {"n": 3, **config}}


@pytest.mark.parametrize("source, target, same", [
    (_cell(device="cpu"), _cell(device="auto"), True),
    (_cell(device="cpu"), _cell(device="cpu"), True),
    (_cell(), _cell(), True),  # no device at all: the CPU
    (_cell(device="cpu"), _cell(device="cuda"), False),  # a GPU computes other numbers
    (_cell(device="cuda"), _cell(device="auto"), False),  # the twin ran on a GPU
    (_cell(device="cuda"), _cell(device="cuda"), False),  # GPU runs are not bitwise repeatable
    (_cell(device="auto"), _cell(device="auto"), False),  # where "auto" ran is not known
    (_cell(device="cpu"), _cell(device="auto", n=4), False),  # one setting differs
    (_cell(device="cpu"), _cell(device="auto", extra=1), False),
    (_cell(seed=1), _cell(seed=2), False),
    (_cell("e"), _cell("f"), False),
    ({"experiment": "e", "config": {"n": 3}}, {"experiment": "e", "config": {"n": 3}}, False),
])
def test_same_computation_by_hand(source, target, same):
    assert same_computation(source, target) is same


def _cpu_shards(root):
    exp = C.get_experiment(TWIN)
    for cell in exp.cells("cpu", 0):
        C.run_cell(TWIN, "cpu", cell.cell_id, root, seed=0)
    return exp


def test_an_adopted_shard_is_the_twins_result_with_its_provenance(tmp_path):
    exp = _cpu_shards(tmp_path)
    key = C.code_key(exp)
    cpu, paper = exp.cells("cpu", 0)[0], exp.cells("paper", 0)[0]
    src = C.shard_path(tmp_path, TWIN, "cpu", cpu.cell_id)
    dst = C.shard_path(tmp_path, TWIN, "paper", paper.cell_id)
    adopt_shard(src, dst, paper, key, scale="paper")
    got, want = C.load_shard(dst, key, paper), C.load_shard(src, key, cpu)
    pd.testing.assert_frame_equal(got.rows, want.rows)  # the timing column comes back too
    assert got.figures == want.figures and got.meta == want.meta
    assert got.header["scale"] == "paper" and got.header["cell"]["cell_id"] == paper.cell_id
    assert got.header["seconds"] == want.header["seconds"]  # where and when: the twin's
    assert got.header["written_utc"] == want.header["written_utc"]
    adopted = got.header["adopted_from"]
    assert adopted["cell_id"] == cpu.cell_id and adopted["scale"] == "cpu"
    assert adopted["result_sha256"] == want.header["result_sha256"]
    # recomputing the paper cell writes the same result part: adopting changed only labels
    fresh = tmp_path / "fresh"
    C.run_cell(TWIN, "paper", paper.cell_id, fresh, seed=0)
    again = json.loads(C.shard_path(fresh, TWIN, "paper", paper.cell_id).read_text())
    assert again["result_sha256"] == json.loads(dst.read_text())["result_sha256"]


def test_adoption_refuses_another_key_an_altered_twin_and_another_computation(tmp_path):
    exp = _cpu_shards(tmp_path)
    key = C.code_key(exp)
    cpus, papers = exp.cells("cpu", 0), exp.cells("paper", 0)
    src = C.shard_path(tmp_path, TWIN, "cpu", cpus[0].cell_id)
    dst = tmp_path / "out.shard.json"
    with pytest.raises(InvalidInputError, match="other code"):
        adopt_shard(src, dst, papers[0], "0" * 64, scale="paper")
    with pytest.raises(InvalidInputError, match="not the same computation"):
        adopt_shard(src, dst, papers[1], key, scale="paper")  # another seed and n
    with pytest.raises(InvalidInputError, match="not the same computation"):  # iters 10 vs 99
        adopt_shard(C.shard_path(tmp_path, TWIN, "cpu", cpus[2].cell_id), dst, papers[2], key,
                    scale="paper")
    # planted fault: a twin that ran on a GPU (its run part says so; hashes made consistent)
    from fusionlib.compendium.cells.shardfile import canonical_bytes, sha256_of
    gpu = json.loads(src.read_text())
    gpu["run"]["device"] = "cuda: NVIDIA H100"
    gpu["run_sha256"] = sha256_of(gpu["run"])
    on_gpu = tmp_path / "gpu.shard.json"
    on_gpu.write_bytes(canonical_bytes(gpu))
    with pytest.raises(InvalidInputError, match="not on a CPU"):
        adopt_shard(on_gpu, dst, papers[0], key, scale="paper")
    # planted fault: a value of the twin edited after it was written
    text = src.read_text()
    src.write_text(text.replace('"data":[[3,3.0]]', '"data":[[3,4.0]]', 1))
    assert src.read_text() != text
    with pytest.raises(InvalidInputError, match="altered"):
        adopt_shard(src, dst, papers[0], key, scale="paper")
    assert not dst.exists()  # nothing half-written


def test_the_plan_adopts_the_twins_and_computes_the_rest(tmp_path, monkeypatch):
    monkeypatch.setitem(P.WORK, TWIN, P.Work(lambda c: ("run", {"iter": float(c["iters"])})))
    exp = _cpu_shards(tmp_path)
    cells = P.build_plan(0, root=tmp_path, experiments=[TWIN])
    assert [c.twin is not None for c in cells] == [True, True, False]
    adopted = P.adopt_twins(cells, 0, tmp_path)
    assert [c.cell_id for c in adopted] == [c.cell_id for c in cells[:2]]
    assert [c.status for c in cells] == ["done", "done", "missing"]
    # an adopted shard is no second measurement of the plan's rates (its seconds are the twin's)
    paper_ids, twin_id = [c.cell_id for c in cells], cells[0].twin
    assert P.shard_point(C.shard_path(tmp_path, TWIN, "cpu", twin_id)) is not None
    assert P.shard_point(C.shard_path(tmp_path, TWIN, "paper", paper_ids[0])) is None
    again = P.build_plan(0, root=tmp_path, experiments=[TWIN])
    assert [c.done for c in again] == [True, True, False]
    # the origin line says where the numbers were computed, and that they are the cpu cells'
    info = C.bundle_origin(TWIN, "paper", root=tmp_path)
    assert info["present"] == 2 and info["sources"][0]["adopted_from"] == "cpu"
    assert "adopted from their cpu-scale twins (the same computation on a CPU)" in info["text"]
    # a twin edited since the plan was built is not adopted: the cell stays to be computed
    paper = exp.cells("paper", 0)
    for c in paper[:2]:
        C.shard_path(tmp_path, TWIN, "paper", c.cell_id).unlink()
    src = C.shard_path(tmp_path, TWIN, "cpu", exp.cells("cpu", 0)[0].cell_id)
    src.write_text(src.read_text().replace('"data":[[3,3.0]]', '"data":[[3,5.0]]', 1))
    fresh = P.build_plan(0, root=tmp_path, experiments=[TWIN])
    assert [c.twin is not None for c in fresh] == [False, True, False]  # the plan sees it
    fresh[0].twin = exp.cells("cpu", 0)[0].cell_id  # as a plan built before the edit would
    assert [c.cell_id for c in P.adopt_twins(fresh, 0, tmp_path)] == [paper[1].cell_id]
    assert [c.status for c in fresh] == ["missing", "done", "missing"]


def test_a_dry_run_says_what_it_would_adopt_and_adopts_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FUSIONLIB_CELLS", str(tmp_path))
    exp = _cpu_shards(tmp_path)
    assert P.main(["cells", "--budget", "1", "--only", TWIN, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 missing cells are the same computation as a present cpu cell: they would take " \
           "its shard" in out
    assert "1 missing CPU cells to try" in out  # the two it would adopt are not scheduled
    assert P.main(["cells", "--budget", "1", "--only", TWIN, "--dry-run", "--no-adopt"]) == 0
    out = capsys.readouterr().out
    assert "(--no-adopt: computed again)" in out and "3 missing CPU cells to try" in out
    assert not any(C.shard_path(tmp_path, TWIN, "paper", c.cell_id).exists()
                   for c in exp.cells("paper", 0))


def test_paper_cells_adopt_compute_and_export_a_bundle_that_installs_whole(tmp_path,
                                                                           monkeypatch):
    """The real command, no mocks: ``paperplan cells`` adopts the two twins, computes the
    third in its own process (the experiment found through FUSIONLIB_CELL_MODULES) and exports
    one bundle; installed into an empty root it gives the whole paper grid, the adopted shards
    marked as such and the computed one not."""
    root, empty = tmp_path / "cells", tmp_path / "fresh"
    monkeypatch.setenv("FUSIONLIB_CELLS", str(root))
    monkeypatch.setenv(C.ENV_MODULES, __name__)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setattr(P, "BUNDLES_DIR", tmp_path / "bundles")
    monkeypatch.chdir(REPO)
    monkeypatch.setitem(P.WORK, TWIN, P.Work(lambda c: ("run", {"iter": float(c["iters"])})))
    exp = _cpu_shards(root)
    assert P.main(["cells", "--budget", "5", "--only", TWIN]) == 0
    bundle, = (tmp_path / "bundles").glob("*.tar.gz")
    report = import_bundle(bundle, root=empty)
    paper = exp.cells("paper", 0)
    assert len(report.installed) == 3 and not report.refused
    runs = [json.loads(C.shard_path(empty, TWIN, "paper", c.cell_id).read_text())["run"]
            for c in paper]
    assert [("adopted_from" in r) for r in runs] == [True, True, False]
    manifest = json.loads(read_archive(bundle)[MANIFEST])
    assert "adopted_seconds" in manifest and len(manifest["shards"]) == 3


def test_a_bundle_whose_adopted_shard_names_no_twin_is_refused_that_shard(tmp_path):
    """adopted_from is checked on import: a shard (hashes consistent, a forged provenance)
    that claims adoption from a cell that is not its twin here is not installed; its genuine
    neighbour is."""
    from fusionlib.compendium.cells.shardfile import canonical_bytes, sha256_of

    root, fresh = tmp_path / "cells", tmp_path / "fresh"
    exp = _cpu_shards(root)
    key = C.code_key(exp)
    cpus, papers = exp.cells("cpu", 0), exp.cells("paper", 0)
    for i in (0, 1):
        adopt_shard(C.shard_path(root, TWIN, "cpu", cpus[i].cell_id),
                    C.shard_path(root, TWIN, "paper", papers[i].cell_id), papers[i], key,
                    scale="paper")
    forged = C.shard_path(root, TWIN, "paper", papers[1].cell_id)
    obj = json.loads(forged.read_text())
    obj["run"]["adopted_from"]["cell_id"] = cpus[0].cell_id  # twin 0's cell: another seed
    obj["run_sha256"] = sha256_of(obj["run"])
    forged.write_text(canonical_bytes(obj).decode("ascii") + "\n")
    bundle = tmp_path / "b.tar.gz"
    C.export_bundle("paper", root=root, out=bundle, experiments=[TWIN])
    report = import_bundle(bundle, root=fresh)
    assert [p.name for p in report.installed] == [f"{papers[0].cell_id}.shard.json"]
    (member, why), = report.refused
    assert papers[1].cell_id in member and "not its twin" in why
