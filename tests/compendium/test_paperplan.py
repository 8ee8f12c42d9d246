"""Paper scale: plan, compute, ship (fusionlib.compendium.paperplan).

The cost model by hand on a fake experiment, the value orders of ``make paper-cells`` and
``make paper-gpu`` (on the real paper-scale grids), the budget logic with a mocked runner and
clock, the cut-off of a real process, the GPU refusal, and the idempotence of ``make
install-bundles``. Nothing here computes a paper cell.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fusionlib.compendium import cells as C
from fusionlib.compendium import paperplan as P
from fusionlib.errors import InvalidInputError

REPO = Path(__file__).resolve().parents[2]
FAKE = "paperplan_fake"


def _fake_grid(scale: str, seed: int) -> list[C.Cell]:
    return [C.Cell(FAKE, {"n_iter": 100 * (i + 1), "device": "cuda" if i == 2 else "auto"},
                   seed, label=f"fake {i}") for i in range(3)]


def _fake_compute(cell: C.Cell) -> C.Shard:
    return C.Shard(pd.DataFrame({"n_iter": [cell.config["n_iter"]]}))


C.register(C.Experiment(FAKE, _fake_grid, _fake_compute, (__name__,)))
FAKE_WORK = P.Work(lambda c: ("run", {"iter": float(c["n_iter"])}),
                   {"iter": lambda c: {**c, "n_iter": c["n_iter"] * 10}})


def _cell(experiment: str = FAKE, config: dict | None = None, *, est: float | None = 60.0,
          gpu: bool = False, status: str = "missing", label: str = "",
          checkpoint: float | None = None, progress: float = 0.0,
          missing_data: str | None = None) -> P.PlanCell:
    cfg = config or {}
    cid = f"{label or experiment}-{len(json.dumps(cfg, sort_keys=True))}".replace(" ", "-")
    return P.PlanCell(experiment, cid, label, cfg, gpu, status, estimate_s=est,
                      checkpoint_every=checkpoint, progress=progress, missing_data=missing_data)


# ----------------------------------------------------------------------------- cost model
def test_the_model_separates_the_fixed_part_from_the_rate_by_hand():
    pts = [P.Point(FAKE, "run", {"iter": 10.0}, 2.0), P.Point(FAKE, "run", {"iter": 110.0}, 12.0),
           P.Point(FAKE, "run", {"iter": 60.0}, 7.0)]
    model = P.fit_models(pts)[(FAKE, "run", "cpu")]
    assert model.intercept == pytest.approx(1.0) and model.rates["iter"] == pytest.approx(0.1)
    assert model.seconds({"iter": 1000.0}) == pytest.approx(101.0)
    assert model.seconds({"other": 1.0}) is None  # a component never measured: no estimate


def test_two_components_and_one_configuration():
    # 3 s fixed + 0.5 s per train unit + 2 s per eval unit, recovered exactly
    units = [{"train": 1.0, "eval": 1.0}, {"train": 5.0, "eval": 1.0}, {"train": 1.0, "eval": 4.0}]
    pts = [P.Point(FAKE, "curves", u, 3 + 0.5 * u["train"] + 2 * u["eval"]) for u in units]
    m = P.fit_models(pts)[(FAKE, "curves", "cpu")]
    assert (m.intercept, m.rates["train"], m.rates["eval"]) == pytest.approx((3.0, 0.5, 2.0))
    # one configuration measured twice: no intercept, the rate carries the fixed part (an
    # upper bound when scaling up)
    one = P.fit_models([P.Point(FAKE, "run", {"iter": 20.0}, 4.0),
                        P.Point(FAKE, "run", {"iter": 20.0}, 6.0)])[(FAKE, "run", "cpu")]
    assert one.intercept == 0.0 and one.rates["iter"] == pytest.approx(0.25)
    # CPU and GPU points are separate models
    both = P.fit_models([P.Point(FAKE, "run", {"iter": 1.0}, 1.0, "cuda"),
                         P.Point(FAKE, "run", {"iter": 1.0}, 9.0, "cpu")])
    assert both[(FAKE, "run", "cuda")].rates["iter"] == pytest.approx(1.0)
    assert both[(FAKE, "run", "cpu")].rates["iter"] == pytest.approx(9.0)


def test_the_plan_of_a_fake_experiment(tmp_path, monkeypatch):
    monkeypatch.setitem(P.WORK, FAKE, FAKE_WORK)
    grid = C.get_experiment(FAKE).cells("paper", 0)
    C.run_cell(FAKE, "paper", grid[0].cell_id, tmp_path)  # one shard present
    points = [P.Point(FAKE, "run", {"iter": 100.0}, 12.0, source="calibration: smoke"),
              P.Point(FAKE, "run", {"iter": 1000.0}, 102.0, source="calibration: smoke")]
    plan = P.build_plan(0, root=tmp_path, experiments=[FAKE], points=points)
    assert [c.status for c in plan] == ["done", "missing", "missing"]
    assert [c.gpu for c in plan] == [False, False, True]  # device cuda needs a GPU, auto not
    # 2 s + 0.1 s per iteration
    assert plan[1].estimate_s == pytest.approx(22.0) and plan[1].units == {"iter": 200.0}
    assert plan[2].estimate_s is None  # no GPU point: no GPU estimate
    lines = P.format_plan(plan)
    assert any(grid[1].cell_id in ln and " 0.4 " in ln for ln in lines)
    total = next(ln for ln in lines if ln.startswith("all "))
    assert total.split()[1:4] == ["3", "1", "2"]  # cells, done, missing
    # the shard computed here is a measured point of this machine
    here = P.shard_points(tmp_path)
    assert [(p.experiment, p.kind, p.units) for p in here] == [(FAKE, "run", {"iter": 100.0})]
    assert here[0].source.startswith("shard: paper on ")
    assert P.shard_points(tmp_path, machine="elsewhere") == []  # CPU points: this machine only


def test_every_real_paper_cell_has_a_work_function():
    names = sorted(P.chapters())  # the experiments of workflow/config.yaml
    assert len(names) == 19
    for name in names:
        for c in C.get_experiment(name).cells("paper", 0):
            got = P.work_units(name, c.config)
            assert got is not None and all(v > 0 for v in got[1].values()), (name, c.label)
    gpu = sum(P.needs_gpu(n, c.config) for n in names
              for c in C.get_experiment(n).cells("paper", 0))
    assert gpu == 511  # the image cells


def test_a_resumed_tabular_run_counts_only_what_it_trained():
    cfg = {"kind": "curves", "members": [{}] * 10, "n_iter": 57_000, "n_eval": 50, "n_rows": 1000}
    assert P.WORK["ptgan_tabular"].done(cfg, {"resumed_at": 57_000 * 3 // 10}) == pytest.approx(0.7)
    assert P.WORK["ptgan_tabular"].checkpoint(cfg) == pytest.approx(1 / 50)
    assert P.work_units("ptgan_tabular", cfg) == (
        "curves", {"iter": 57_000.0, "member_iter": 570_000.0, "eval": 500.0})


def test_a_resumed_fair_run_counts_only_what_it_trained():
    cfg = {"method": "fairwgangp", "reps": [0, 1, 2, 3, 4], "rep_seeds": [1, 2, 3, 4, 5],
           "n_iter": 100_000, "n_sets": 20, "n_rows": 1000}
    # FairWGANGP trains 150,000 iterations: resumed at 60,000 it trained 60 % of them
    assert P.WORK["fairptgan"].done(cfg, {"timing": {"resumed_at": 60_000}}) == \
        pytest.approx(0.6)
    assert P.WORK["fairptgan"].checkpoint(cfg) == pytest.approx(1_000 / 150_000)
    assert P.work_units("fairptgan", cfg) == (
        "fairwgangp", {"iter": 100_000.0, "member_iter": 500_000.0, "sets": 100.0})
    assert P.WORK["fairptgan"].checkpoint({**cfg, "n_iter": 1_500}) is None
    more = P.WORK["fairptgan"].stretch["member_iter"](cfg)
    assert len(more["reps"]) == len(more["rep_seeds"]) == 20 and len(set(more["reps"])) == 20


def test_the_plan_finds_a_fair_cells_checkpoint_and_how_far_it_came(tmp_path):
    import torch

    exp = C.get_experiment("fairptgan")
    cell = next(c for c in exp.cells("paper", 0) if c.config["method"] == "fairwgangp")
    key = C.code_key(exp)
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    assert P._checkpoint_files(tmp_path, "fairptgan", cell.cell_id, key) == []
    path = folder / f"{cell.cell_id}-{key[:12]}.pt"
    torch.save({"iteration": 75_000}, path)
    files = P._checkpoint_files(tmp_path, "fairptgan", cell.cell_id, key)
    assert files == [path]
    assert P._PROGRESS["fairptgan"](cell.config, files) == pytest.approx(0.5)  # of 150,000
    # a checkpoint of other code (another key in its name) is not this cell's
    assert P._checkpoint_files(tmp_path, "fairptgan", cell.cell_id, "f" * 64) == []


def test_a_run_resumed_from_its_last_checkpoint_is_no_rate_point(tmp_path):
    cell = next(c for c in C.get_experiment("fairptgan").cells("paper", 0)
                if c.config["method"] == "fairwgangp")
    total = cell.config["n_iter"] * 3 // 2  # T, then T / 2 with the penalty
    shard = C.Shard(pd.DataFrame({"x": [1]}),
                    {"timing": {"resumed_at": total, "train_s": 1.0}})
    path = C.write_shard(tmp_path / "s.shard.json", cell, shard,
                         C.code_key("fairptgan"), scale="paper", seconds=30.0)
    assert P.shard_point(path) is None
    half = C.Shard(pd.DataFrame({"x": [1]}), {"timing": {"resumed_at": total // 2}})
    path = C.write_shard(tmp_path / "h.shard.json", cell, half, C.code_key("fairptgan"),
                         scale="paper", seconds=30.0)
    point = P.shard_point(path)  # half the iterations trained: half the work
    assert point is not None and point.units["iter"] == pytest.approx(50_000.0)


def test_the_committed_calibration_is_readable():
    rates = P.load_rates()
    if not rates:
        pytest.skip("no fusionlib/compendium/paper_rates.json (make paper-plan CALIBRATE=1)")
    pts = P.rate_points(rates)
    assert pts and {"machine", "written_utc", "cores", "checks"} <= set(rates)
    assert ("ptgan_tabular", "curves", "cpu") in P.fit_models(pts)


# ----------------------------------------------------------------------------- value order
def _grid_cells(name: str, **kw) -> list[P.PlanCell]:
    out = []
    for c in C.get_experiment(name).cells("paper", 0):
        kind, units = P.work_units(name, c.config)
        out.append(P.PlanCell(name, c.cell_id, c.label, c.config, P.needs_gpu(name, c.config),
                              "missing", kind, units, **kw))
    return out


def test_paper_cells_take_table_3_then_the_sensitivity_runs_then_fairptgan():
    cells = [*_grid_cells("identification", estimate_s=1.0),
             *_grid_cells("fairtest_protocol", estimate_s=60.0),
             *_grid_cells("fusiongan", estimate_s=60.0), *_grid_cells("fairptgan", estimate_s=60.0),
             *_grid_cells("ptgan_tabular", estimate_s=60.0)]
    order = P.cpu_order(cells)
    labels = [f"{c.experiment}: {c.label}" for c in order]
    assert labels[:4] == ["ptgan_tabular: adult reference", "ptgan_tabular: adult nd pt+cp x10",
                          "ptgan_tabular: adult nd mp x10", "ptgan_tabular: adult nd mp-large x20"]
    sens = labels[4:13]
    assert sens[0] == "ptgan_tabular: adult reference (uci-complete)"
    assert all(any(s in x for s in ("tau=", "bn=", "data=")) for x in sens[1:])
    # FairPTGAN: both methods of a block of repetitions together, Adult first
    fair = [c for c in order if c.experiment == "fairptgan"]
    assert order.index(fair[0]) == 13
    assert [(c.config["method"], c.config["reps"]) for c in fair[:4]] == [
        ("fairptgan", [0, 1, 2, 3, 4]), ("fairwgangp", [0, 1, 2, 3, 4]),
        ("fairptgan", [5, 6, 7, 8, 9]), ("fairwgangp", [5, 6, 7, 8, 9])]
    assert all(c.config["dataset"] == "adult" for c in fair[:4])
    assert all(c.config["dataset"] == "law_school" for c in fair[4:])
    after = [c.experiment for c in order[13 + len(fair):]]
    assert after[:30] == ["fusiongan"] * 30
    adult_ctgan = [c for c in order[13 + len(fair) + 30:][:3]]
    assert all(c.config["part"] == "ctgan" and c.config["dataset"] == "adult"
               for c in adult_ctgan)
    rest = [c.experiment for c in order[13 + len(fair) + 33:]]
    # the rest: whole experiments, the cheapest missing total first
    assert rest.index("identification") < rest.index("ptgan_tabular") < rest.index(
        "fairtest_protocol")
    assert [e for i, e in enumerate(rest) if i == 0 or rest[i - 1] != e] == [
        "identification", "ptgan_tabular", "fairtest_protocol"]


def test_paper_gpu_starts_with_pt_cp_and_its_best_competitor_at_100k_iterations():
    best = P.best_competitors()
    assert best[("cifar10", "nd")] == "pt+mp" and best[("bloodmnist", "nd")] == "mp"
    cells = [*_grid_cells("ptgan_images"), *_grid_cells("ptgan_images_classifier"),
             *_grid_cells("ptgan_images_paper")]
    order = sorted(cells, key=lambda c: P.gpu_value_key(c, best))
    first = [(c.config["run"]["dataset"], c.config["run"]["discrepancy"],
              c.config["run"]["method"], c.config["run"].get("r"), c.config["rep"])
             for c in order[:6]]
    assert first == [("cifar10", "nd", "pt+cp", 0.9, 0), ("cifar10", "nd", "pt+mp", None, 0),
                     ("cifar10", "nd", "pt+cp", 0.99, 0), ("bloodmnist", "nd", "pt+cp", 0.9, 0),
                     ("bloodmnist", "nd", "mp", None, 0), ("bloodmnist", "nd", "pt+cp", 0.99, 0)]
    assert all(c.config["run"]["n_iter"] == 100_000 for c in order[:6])
    # the proxies come last, after the classifier; CelebA-HQ (Table 2) before them
    assert [c.experiment for c in order[-51:]] == [
        "ptgan_images_classifier", *["ptgan_images"] * 50]
    tables = [c.config.get("table") for c in order if c.experiment == "ptgan_images_paper"]
    rank = {"Table 1": 0, "Table 8": 1, "Table 7": 2, "Table 2": 3}
    assert tables == sorted(tables, key=rank.get) and tables[-20:] == ["Table 2"] * 20


# ----------------------------------------------------------------------------- budget
class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _runner(clock: _Clock, started: list):
    def run(cell: P.PlanCell, left: float) -> str:
        started.append((cell.label, left))
        need = cell.remaining_s if cell.remaining_s is not None else left
        clock.now += min(need, left)
        return "done" if need <= left else "cut off"
    return run


def test_a_cell_that_does_not_fit_is_not_started_and_a_smaller_one_after_it_is():
    cells = [_cell(label="a", est=600), _cell(label="big", est=3000), _cell(label="c", est=300),
             _cell(label="unknown", est=None), _cell(label="d", est=900)]
    clock, started = _Clock(), []
    out = P.run_budget(cells, 30 * 60, _runner(clock, started), clock=clock, say=lambda s: None)
    assert [s[0] for s in started] == ["a", "c", "d"]
    assert [o.status for o in out] == ["done", "skipped", "done", "skipped", "done"]
    assert "needs ~50.0 min, 20.0 min left" in out[1].message
    assert "no estimate" in out[3].message
    assert clock.now == 1800  # the budget used to the second


def test_a_checkpointed_cell_starts_when_one_interval_fits_and_is_cut_off():
    cells = [_cell(label="small", est=1200), _cell(label="tabular", est=3000, checkpoint=1 / 50),
             _cell(label="after", est=60)]
    clock, started = _Clock(), []
    out = P.run_budget(cells, 30 * 60, _runner(clock, started), clock=clock, say=lambda s: None)
    assert started == [("small", 1800), ("tabular", 600)]  # given what is left, then stopped
    assert [o.status for o in out] == ["done", "cut off", "skipped"]
    assert out[2].message == "budget spent"
    # resumed next time from its checkpoint: only what is left counts
    again = _cell(label="tabular", est=3000, checkpoint=1 / 50, progress=0.8)
    clock, started = _Clock(), []
    out = P.run_budget([again], 15 * 60, _runner(clock, started), clock=clock, say=lambda s: None)
    assert [o.status for o in out] == ["done"] and clock.now == pytest.approx(600)
    # too little time for one interval: not started
    tight = _cell(label="tabular", est=30_000, checkpoint=1 / 50)
    out = P.run_budget([tight], 9 * 60, _runner(_Clock(), []), clock=_Clock(),
                       say=lambda s: None)
    assert out[0].status == "skipped"


def test_a_cell_of_unknown_cost_starts_on_the_gpu_runner_only():
    cells = [_cell(label="first gpu cell", est=None, gpu=True), _cell(label="next", est=60)]
    clock, started = _Clock(), []
    out = P.run_budget(cells, 600, _runner(clock, started), clock=clock, unknown=True,
                       say=lambda s: None)
    assert started == [("first gpu cell", 600)]  # with all the time left
    assert out[1].message == "budget spent"
    assert P.run_budget(cells[:1], 600, _runner(_Clock(), []), clock=_Clock(),
                        say=lambda s: None)[0].status == "skipped"


def test_a_finished_cell_measures_the_others_of_its_kind():
    cells = [_cell(label=str(i), est=None, gpu=True) for i in range(3)]
    for c in cells:
        c.kind, c.units = "run", {"iter": 100.0}
    cells[0].status = "done"
    P.reestimate(cells, [P.Point(FAKE, "run", {"iter": 100.0}, 300.0, "cuda")])
    assert [c.estimate_s for c in cells] == [None, 300.0, 300.0]


class _Session:
    """``main`` with the plan, the cell processes, the export and the clock mocked."""

    def __init__(self, monkeypatch, tmp_path, cells: list[P.PlanCell]) -> None:
        self.clock, self.started, self.exported = _Clock(), [], []
        monkeypatch.setattr(P, "build_plan", lambda *a, **k: cells)
        monkeypatch.setattr(P, "plan_points", lambda *a, **k: [])
        monkeypatch.setattr(P, "BUNDLES_DIR", tmp_path / "bundles")
        monkeypatch.setattr(P, "_has_fidelity", lambda: True)
        monkeypatch.setattr(P, "cuda_device", lambda: "NVIDIA H100 (mocked)")
        run_budget = P.run_budget

        def timed(*a, **k):
            return run_budget(*a, **{**k, "clock": self.clock})

        def process(cell, left, **k):
            self.started.append(cell)
            need = cell.remaining_s if cell.remaining_s is not None else left
            self.clock.now += min(need, left)
            return "done" if need <= left else "cut off"

        def export(experiments, seed, out, **k):
            self.exported.append((sorted(set(experiments)), seed, out))
            return 0
        monkeypatch.setattr(P, "run_budget", timed)
        monkeypatch.setattr(P, "run_cell_process", process)
        monkeypatch.setattr(P, "export_bundle", export)


def test_paper_gpu_runs_the_most_valuable_image_cells_that_fit(monkeypatch, tmp_path, capsys):
    cells = _grid_cells("ptgan_images_paper", estimate_s=45 * 60.0, checkpoint_every=0.05)
    cells += _grid_cells("ptgan_images", estimate_s=60.0)
    run = _Session(monkeypatch, tmp_path, cells)
    assert P.main(["gpu", "--budget", "100", "--seed", "0"]) == 0
    labels = [c.label for c in run.started]
    # two whole 100k-iteration cells (PT+CP r 0.9 and PT+MP, CIFAR-10, ND, rep 0), then the
    # third (PT+CP r 0.99) for the 10 minutes left, stopped there and resumed next time
    assert labels == ["pt+cp nd cifar10 r 0.9 rep 0", "pt+mp nd cifar10  rep 0",
                      "pt+cp nd cifar10 r 0.99 rep 0"]
    assert run.clock.now == 100 * 60
    (experiments, seed, out), = run.exported
    assert experiments == ["ptgan_images_paper"] and seed == 0
    assert out.parent == tmp_path / "bundles" and "-gpu-" in out.name
    text = capsys.readouterr().out
    assert "on NVIDIA H100 (mocked)" in text and "2 done, 1 cut off" in text


def test_paper_cells_with_only_runs_that_experiment(monkeypatch, tmp_path, capsys):
    cells = [*_grid_cells("fairptgan", estimate_s=600.0),
             *_grid_cells("ptgan_tabular", estimate_s=60.0)]
    for c in cells:  # law school is not provisioned
        if c.config.get("dataset") == "law_school":
            c.missing_data = "needs data: law_school"
    run = _Session(monkeypatch, tmp_path, cells)
    assert P.main(["cells", "--budget", "25", "--only", "fairptgan"]) == 0
    assert [(c.config["method"], c.config["reps"][0]) for c in run.started] == [
        ("fairptgan", 0), ("fairwgangp", 0)]  # a third 10-minute cell does not fit 5 minutes
    assert run.exported[0][0] == ["fairptgan"] and "-cpu-" in run.exported[0][2].name
    assert "2 done, 0 cut off" in capsys.readouterr().out


def test_only_one_experiment_and_never_the_other_devices_cells():
    cells = [_cell("fairptgan", label="f"), _cell("fusiongan", label="g"),
             _cell("ptgan_images", label="img", gpu=True),
             _cell("fairptgan", label="law", missing_data="needs data: law_school"),
             _cell("fairptgan", label="done", status="done")]
    said = []
    assert [c.label for c in P.select_cells(cells, gpu=False, only="fairptgan",
                                            say=said.append)] == ["f"]
    assert any("needs data: law_school" in s for s in said)
    said.clear()
    assert [c.label for c in P.select_cells(cells, gpu=False, say=said.append)] == ["f", "g"]
    assert said[0].startswith("left out: 1 missing cells that need a GPU")
    assert [c.label for c in P.select_cells(cells, gpu=True, say=said.append)] == ["img"]


def test_budget_and_only_are_checked(capsys):
    for bad in ("0", "-3", "abc", "nan", "inf"):
        with pytest.raises(SystemExit) as exc:
            P.main(["cells", "--budget", bad])
        assert exc.value.code == 2
        assert f"BUDGET={bad} is not allowed; give a positive number of minutes" in \
            capsys.readouterr().err
    assert P.main(["cells", "--budget", "5", "--only", "nope", "--dry-run"]) == 2
    assert "ONLY=nope is not allowed; use one of:" in capsys.readouterr().err


def test_paper_gpu_refuses_without_cuda(monkeypatch, capsys):
    monkeypatch.setattr(P, "cuda_device", lambda: None)
    monkeypatch.setattr(P, "build_plan", lambda *a, **k: pytest.fail("planned without a GPU"))
    assert P.main(["gpu", "--budget", "10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: make paper-gpu needs a CUDA device and torch sees none")
    assert err.count("\n") == 1


def test_a_cell_process_is_stopped_at_the_end_of_its_time(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "STOP_GRACE_S", 2.0)
    fake = tmp_path / "python"
    cell = _cell(FAKE, label="slow")
    for body, timeout, want in (("exec sleep 60", 1.0, "cut off"), ("exit 0", 30.0, "done"),
                                ("exit 3", 30.0, "failed")):
        fake.write_text(f"#!/bin/sh\n{body}\n")
        fake.chmod(0o755)
        assert P.run_cell_process(cell, timeout, python=str(fake), root=tmp_path) == want
    assert (tmp_path / FAKE / "paper" / f"{cell.cell_id}.log").is_file()


def test_the_bundle_name_says_seed_device_machine_and_time():
    import datetime as dt

    name = P.bundle_name(3, "gpu", dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    assert name.startswith("paper-seed3-gpu-") and name.endswith("-20260102T030405Z.tar.gz")


# ----------------------------------------------------------------------------- bundles
def test_install_bundles_imports_each_bundle_once(tmp_path):
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    a.write_bytes(b"bundle a")
    b.write_bytes(b"bundle b")
    calls, said = [], []

    def importer(path: Path) -> tuple[int, str]:
        calls.append(path.name)
        return (1, "refused cells/x: stale") if path.name == "b.tar.gz" else (0, "installed 3")

    def run(code: str = "c1") -> list[dict]:
        return P.install_bundles([a, b], stamp_dir=tmp_path / "stamps", importer=importer,
                                 code=code, say=said.append)

    assert [r["status"] for r in run()] == ["installed", "refused"]
    assert calls == ["a.tar.gz", "b.tar.gz"]
    assert any("refused in part or in whole" in s for s in said)
    said.clear()
    assert [r["status"] for r in run()] == ["already installed", "refused before"]
    assert calls == ["a.tar.gz", "b.tar.gz"]  # nothing imported again
    assert any("b.tar.gz was refused" in s for s in said)
    a.write_bytes(b"bundle a, new")  # a changed bundle is imported again
    assert [r["status"] for r in run()] == ["installed", "refused before"]
    run(code="c2")  # other code: both are checked again
    assert calls == ["a.tar.gz", "b.tar.gz", "a.tar.gz", "a.tar.gz", "b.tar.gz"]


def test_a_refused_bundle_does_not_stop_the_build(tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive")
    out = subprocess.run([sys.executable, "-m", "fusionlib.compendium.paperplan",
                          "install-bundles", "--stamp-dir", str(tmp_path / "stamps"),
                          str(junk)], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "FUSIONLIB_CELLS": str(tmp_path / "cells")})
    assert out.returncode == 0, out.stderr
    assert "was refused in part or in whole" in out.stdout
    assert len(list((tmp_path / "stamps").glob("*.json"))) == 1


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_every_build_installs_the_bundles_first():
    for target in ("book", "cells", "notebooks", "paper-cells"):
        done = subprocess.run(["make", "-n", "--no-print-directory", target,
                               "BUNDLES=bundles/x.tar.gz", "BUDGET=5"], cwd=REPO, text=True,
                              capture_output=True, timeout=60)
        lines = done.stdout.splitlines()
        install = [i for i, ln in enumerate(lines) if "paperplan install-bundles" in ln]
        work = [i for i, ln in enumerate(lines) if "snakemake" in ln or "paperplan cells" in ln]
        assert install and work and install[0] < work[0], (target, done.stdout[-2000:])
    none = subprocess.run(["make", "-n", "--no-print-directory", "install-bundles", "BUNDLES="],
                          cwd=REPO, text=True, capture_output=True, timeout=60)
    assert "paperplan" not in none.stdout  # no bundle: no Python started


def test_no_cells_module_imports_the_plan():
    """paperplan sits above the cells: importing it from a registering module or the machinery
    would put it in code keys (and make every plan edit recompute cells)."""
    from fusionlib.compendium.cells import experiment_modules
    from fusionlib.compendium.cells.store import MACHINERY

    for module in [*experiment_modules(), *MACHINERY]:
        if not module.startswith("fusionlib."):
            continue
        path = REPO.joinpath(*module.split(".")).with_suffix(".py")
        if not path.is_file():
            path = REPO.joinpath(*module.split("."), "__init__.py")
        assert "paperplan" not in path.read_text(encoding="utf-8"), module


def test_lower_autogroup_writes_the_nice_value_where_the_kernel_offers_it(tmp_path):
    from fusionlib.compendium.paperplan import lower_autogroup

    (tmp_path / "123").mkdir()
    (tmp_path / "123" / "autogroup").write_text("/autogroup-7 nice 0\n")
    assert lower_autogroup(123, 10, proc=tmp_path)
    assert (tmp_path / "123" / "autogroup").read_text() == "10"
    # no such process or no autogroup file (another kernel, another OS): nothing, no error
    assert not lower_autogroup(456, 10, proc=tmp_path)


# ----------------------------------------------------------------------------- several jobs
def test_several_jobs_run_cells_side_by_side_in_value_order():
    """JOBS=3: three cells at once, started in value order; a cell that no longer fits is not
    started. Planted fault: one job at a time (the jobs ignored) never overlaps two cells."""
    import threading

    lock, live, most, started = threading.Lock(), [0], [0], []

    def runner(cell: P.PlanCell, left: float) -> str:
        with lock:
            started.append(cell.label)
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.2)
        with lock:
            live[0] -= 1
        return "done"

    cells = [_cell(label=str(i), est=1.0) for i in range(7)] + [_cell(label="big", est=1e6)]
    said: list[str] = []  # written by the scheduling thread, in the order cells start
    out = P.run_budget(cells, 600, runner, jobs=3, say=said.append)
    starts = [ln.split("(")[1].split(";")[0] for ln in said if "] start " in ln]
    assert most[0] == 3 and starts == [str(i) for i in range(7)]
    assert sorted(started) == sorted(starts)
    assert sorted(o.status for o in out) == ["done"] * 7 + ["skipped"]
    live[0], most[0] = 0, 0
    P.run_budget(cells[:4], 600, runner, jobs=1, say=lambda s: None)
    assert most[0] == 1
    with pytest.raises(InvalidInputError, match="jobs"):
        P.run_budget(cells, 600, runner, jobs=0, say=lambda s: None)


def test_a_runner_that_breaks_fails_its_cell_and_the_others_go_on():
    def runner(cell: P.PlanCell, left: float) -> str:
        if cell.label == "bad":
            raise RuntimeError("boom")
        return "done"

    cells = [_cell(label="bad"), _cell(label="good"), _cell(label="also good")]
    said = []
    out = P.run_budget(cells, 600, runner, jobs=2, say=said.append)
    assert {o.cell.label: o.status for o in out} == {"bad": "failed", "good": "done",
                                                     "also good": "done"}
    assert any("boom" in s for s in said)


def test_the_dry_run_schedules_the_estimates_on_the_slots():
    """Two slots: a and b side by side, c after a; d (50 min) no longer fits the 10 minutes
    left on either slot. One slot: the sequential rule of run_budget (its oracle)."""
    cells = [_cell(label="a", est=600), _cell(label="b", est=600), _cell(label="c", est=600),
             _cell(label="d", est=3000), _cell(label="e", est=300)]
    out = P.simulate_budget(cells, 1200, jobs=2, say=lambda s: None)
    assert [o.status for o in out] == ["done", "done", "done", "skipped", "done"]
    assert "needs ~50.0 min, 10.0 min left" in out[3].message
    clock, started = _Clock(), []
    seq = P.run_budget(cells, 1800, _runner(clock, started), clock=clock, say=lambda s: None)
    sim = P.simulate_budget(cells, 1800, jobs=1, say=lambda s: None)
    assert [(o.cell.label, o.status, o.message) for o in sim] == \
        [(o.cell.label, o.status, o.message) for o in seq]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_paper_cells_passes_jobs_only_when_given():
    def recipe(*extra: str) -> str:
        done = subprocess.run(["make", "-n", "--no-print-directory", "paper-cells", "BUNDLES=",
                               "BUDGET=5", *extra], cwd=REPO, text=True, capture_output=True,
                              timeout=60)
        return next(ln for ln in done.stdout.splitlines() if "paperplan cells" in ln)
    assert "--jobs" not in recipe()  # JOBS defaults to the core count for builds, not here
    assert "--jobs 3" in recipe("JOBS=3")
    with pytest.raises(SystemExit) as bad:
        P.main(["cells", "--budget", "5", "--jobs", "0", "--dry-run"])
    assert bad.value.code == 2


# ----------------------------------------------------------------------------- twins
def test_twins_match_the_configuration_but_the_device(monkeypatch):
    """A cpu cell with a current shard and the paper cell's configuration but for device is a
    twin; another setting, a missing shard or a GPU device is not."""
    from types import SimpleNamespace

    from fusionlib.compendium import cells as cells_module

    def cell(cid, seed=7, **cfg):
        return SimpleNamespace(cell_id=cid, seed=seed,
                               config={"n_iter": 57_000, "device": "cpu", **cfg})
    cpu = [cell("same"), cell("other", n_iter=1_000), cell("absent", rep=3),
           cell("gpu", rep=4, device="cuda"), cell("seeded", seed=8, rep=5)]
    exp = SimpleNamespace(scales=("smoke", "cpu", "paper"), cells=lambda scale, seed: cpu)
    monkeypatch.setattr(cells_module, "cell_status",
                        lambda exp, scale, c, root, key=None: "missing" if c.cell_id == "absent"
                        else "done")
    got = P.twins(exp, 0, Path("."), "key")
    assert sorted(got.values()) == ["other", "same", "seeded"]
    assert got[P._without_device({"n_iter": 57_000, "device": "auto"}, 7)] == "same"
    assert P._without_device({"n_iter": 57_000, "rep": 3, "device": "auto"}, 7) not in got
    # the same configuration with another seed is another computation
    assert P._without_device({"n_iter": 57_000, "rep": 5, "device": "auto"}, 7) not in got
    assert P.twins(SimpleNamespace(scales=("paper",), cells=None), 0, Path("."), "k") == {}


def test_cells_with_a_present_cpu_twin_come_last():
    """... but a reference cell, which the others of its data set need, keeps its place."""
    cells = [_cell(label="twin", est=60), _cell(label="a", est=600), _cell(label="b", est=60),
             _cell(label="ref", est=60, config={"kind": "reference"})]
    cells[0].twin = cells[3].twin = "cpu-cell"
    assert [c.label for c in P.cpu_order(cells)] == ["a", "b", "ref", "twin"]
    lines = P.format_plan(cells)
    assert any("same computation as cpu cell cpu-cell" in ln for ln in lines)


def test_an_interrupt_stops_the_running_cells_at_once():
    """Ctrl-C reaches the scheduling thread only: it stops the cells (each thread waits on its
    own 'process', here an event) and re-raises without waiting for them to end. Planted
    fault: without the stop hook the interrupt would wait the cells' 60 s out."""
    import threading

    events: list[threading.Event] = []
    stopped = []

    def runner(cell: P.PlanCell, left: float) -> str:
        if cell.label == "quick":
            return "done"
        ev = threading.Event()
        events.append(ev)
        return "cut off" if ev.wait(60) else "done"

    def stop():
        stopped.append(len(events))
        for ev in events:
            ev.set()

    def say(line: str) -> None:
        if "done    " in line:  # the quick cell ended: the user presses Ctrl-C now
            raise KeyboardInterrupt

    cells = [_cell(label="long"), _cell(label="quick"), _cell(label="next")]
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        P.run_budget(cells, 600, runner, jobs=2, say=say, stop=stop)
    assert time.monotonic() - t0 < 10 and stopped and all(ev.is_set() for ev in events)
