"""The grid of cells: ids, shards, code keys, caching, failures, resume, concurrency, CLI.

Tiny fake experiments are registered here (the real ones are only listed, in one smoke test).
Their compute functions count their calls in ``COMPUTED`` (and, for subprocesses, in the file
named by ``FAKE_CELLS_COUNTER``); ``FAKE_CELLS_FAIL`` (cell indices) makes cells raise and
``FAKE_CELLS_SLOW`` (one index) makes a cell sleep, so that a subprocess can be killed while
it computes that cell.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium import cells as C
from fusionlib.compendium.cells import frames as cells_frames
from fusionlib.compendium.cells import registry as cells_registry
from fusionlib.compendium.cells import shardfile as cells_shardfile
from fusionlib.compendium.cells import store as cells_store
from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

REPO = Path(__file__).resolve().parents[2]
COMPUTED: list[int] = []
N_FAKE = 4


def _fake_grid(scale: str, seed: int) -> list[C.Cell]:
    n = N_FAKE if scale != "paper" else 2
    return [C.Cell("fake_grid", {"i": i, "n": n}, seed, label=f"part {i}") for i in range(n)]


def _fake_compute(cell: C.Cell) -> C.Shard:
    i = cell.config["i"]
    COMPUTED.append(i)
    counter = os.environ.get("FAKE_CELLS_COUNTER")
    if counter:
        with open(counter, "a", encoding="utf-8") as f:
            f.write(f"{i}\n")
    if str(i) in os.environ.get("FAKE_CELLS_FAIL", "").split(","):
        raise ZeroDivisionError(f"planted failure in cell {i}")
    if os.environ.get("FAKE_CELLS_SLOW") == str(i):
        time.sleep(60)
    x = numpy_rng(cell.seed, "fake", i).random(3)
    rows = pd.DataFrame({"i": [i] * 3, "k": [0, 1, 2], "x": x, "ok": [True, False, True],
                         "name": ["a", "b", None]})
    return C.Shard(rows, {"points": np.arange(i), "i": i})


FAKE = C.register(C.Experiment("fake_grid", _fake_grid, _fake_compute, (__name__,)))
SMOKE_ONLY = C.register(C.Experiment(
    "fake_smoke_only", lambda scale, seed: [C.Cell("fake_smoke_only", {}, seed)],
    _fake_compute, (__name__,), scales=("smoke",)))


@pytest.fixture(autouse=True)
def _clean_counter(monkeypatch):
    COMPUTED.clear()
    for var in ("FAKE_CELLS_FAIL", "FAKE_CELLS_SLOW", "FAKE_CELLS_COUNTER"):
        monkeypatch.delenv(var, raising=False)


def _paths(root: Path, scale: str = "smoke") -> list[Path]:
    return [C.shard_path(root, "fake_grid", scale, c.cell_id) for c in FAKE.cells(scale)]


def _rewrite(path: Path, *, rehash: bool = True, **result) -> None:
    """Change fields of the shard's result part, as a shard of other code would have them
    (``rehash``: with matching hashes; without, an edit after the write)."""
    obj = json.loads(path.read_text())
    obj["result"].update(result)
    if rehash:
        obj["result_sha256"] = cells_shardfile.sha256_of(obj["result"])
    path.write_text(json.dumps(obj))


# ----------------------------------------------------------------------------- cells and ids
def test_cell_ids_are_stable_safe_and_depend_on_config_and_seed():
    a = C.Cell("fake_grid", {"i": 1, "n": (2, 3)}, 5, label="Part 1: pt+cp")
    b = C.Cell("fake_grid", {"n": [2, 3], "i": 1}, 5, label="Part 1: pt+cp")
    assert a.cell_id == b.cell_id and a == b and hash(a) == hash(b)
    assert a.config == {"i": 1, "n": [2, 3]}  # canonical JSON form
    assert re.fullmatch(r"[a-z0-9-]+", a.cell_id) and a.cell_id.startswith("part-1-pt-cp-")
    assert C.Cell("fake_grid", {"i": 1, "n": [2, 3]}, 6).cell_id != a.cell_id
    assert C.Cell("fake_grid", {"i": 2, "n": [2, 3]}, 5).digest != a.digest
    # the same id in another process with another hash seed (hashlib, not hash())
    code = ("from fusionlib.compendium.cells import Cell; "
            "print(Cell('fake_grid', {'n': [2, 3], 'i': 1}, 5, label='Part 1: pt+cp').cell_id)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True)
    assert out.stdout.strip() == a.cell_id


def test_bad_cells_are_rejected():
    with pytest.raises(InvalidInputError, match="JSON"):
        C.Cell("fake_grid", {"x": object()}, 0)
    with pytest.raises(InvalidInputError, match="finite"):
        C.Cell("fake_grid", {"x": float("nan")}, 0)
    with pytest.raises(InvalidInputError, match="seed"):
        C.Cell("fake_grid", {}, -1)
    with pytest.raises(InvalidInputError, match="experiment names"):
        C.Cell("Bad Name", {}, 0)
    dup = C.Experiment("fake_dup", lambda s, seed: [C.Cell("fake_dup", {}, 0)] * 2,
                       _fake_compute, (__name__,))
    with pytest.raises(InvalidInputError, match="share the id"):
        dup.cells("smoke")


def test_unknown_experiment_scale_and_cell_name_the_allowed_values(tmp_path, capsys):
    with pytest.raises(InvalidInputError, match="unknown experiment 'nope'.*fake_grid"):
        C.results("nope", "smoke", root=tmp_path)
    with pytest.raises(InvalidInputError, match="smoke, cpu, paper"):
        C.results("fake_grid", "huge", root=tmp_path)
    with pytest.raises(InvalidInputError, match="allowed values are smoke"):
        C.results("fake_smoke_only", "cpu", root=tmp_path)
    with pytest.raises(InvalidInputError, match="unknown cell 'zzz'.*part-0-"):
        C.run_cell("fake_grid", "smoke", "zzz", tmp_path)
    assert C.main(["run", "nope", "x", "--scale", "smoke", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown experiment 'nope'" in err
    assert C.main(["list", "--scale", "huge"]) == 2
    assert "unknown scale 'huge'" in capsys.readouterr().err


def test_register_refuses_a_taken_name_from_other_code():
    C.register(FAKE)  # the same experiment again: fine
    other = C.Experiment("fake_grid", _fake_grid, _fake_compute, ("some.other.module",))
    with pytest.raises(InvalidInputError, match="already registered"):
        C.register(other)
    assert C.get_experiment("fake_grid") is FAKE


# ----------------------------------------------------------------------------- shards
def test_shard_round_trip(tmp_path):
    cell = FAKE.cells("smoke")[1]
    rows = pd.DataFrame({"a": [1, 2], "x": [0.1 + 0.2, np.nan], "inf": [np.inf, -np.inf],
                         "ok": [True, False], "s": ["u", None], "f32": np.float32([1.5, 2])})
    shard = C.Shard(rows, {"curve": np.linspace(0, 1, 3), "nested": {"k": [1, 2]}},
                    meta={"device": "cpu"})
    path = C.write_shard(tmp_path / "x.shard.json", cell, shard, "k" * 64, scale="smoke",
                         seconds=1.23456)
    back = C.load_shard(path, "k" * 64, cell)
    pd.testing.assert_frame_equal(back.rows, rows)
    assert back.figures == {"curve": [0.0, 0.5, 1.0], "nested": {"k": [1, 2]}}
    assert back.meta == {"device": "cpu"}
    assert back.header["cell"]["cell_id"] == cell.cell_id and back.header["seconds"] == 1.235
    assert back.header["versions"]["python"] and back.header["scale"] == "smoke"
    empty = C.frame_from_json(C.frame_to_json(rows.iloc[:0]))
    assert list(empty.columns) == list(rows.columns) and len(empty) == 0


def _strict_json(text: str):
    def refuse(token):
        raise ValueError(f"bare {token} token: not valid JSON")
    return json.loads(text, parse_constant=refuse)


def test_non_finite_meta_and_figures_are_written_as_valid_json_and_read_back_alike(tmp_path):
    cell = FAKE.cells("smoke")[0]
    figures = {"curve": np.array([0.5, np.nan, np.inf, -np.inf]), "scalar": np.float64("nan"),
               "nested": {"m": [[1.0, float("nan")]], "names": ["a", None]},
               "frame": C.frame_to_json(pd.DataFrame({"x": [np.nan, 1.0]})), "none": None}
    shard = C.Shard(pd.DataFrame({"x": [1.0]}), figures, meta={"loss": float("nan"),
                                                               "top": float("inf")})
    path = C.write_shard(tmp_path / "x.shard.json", cell, shard, "k" * 64, scale="smoke")
    _strict_json(path.read_text())  # no NaN / Infinity tokens
    back = C.load_shard(path, "k" * 64, cell)
    assert back.figures["curve"][0] == 0.5 and np.isnan(back.figures["curve"][1])
    assert back.figures["curve"][2:] == [np.inf, -np.inf]
    assert np.isnan(back.figures["nested"]["m"][0][1])  # numeric lists stay numeric
    assert back.figures["nested"]["names"] == ["a", None] and back.figures["none"] is None
    assert back.figures["scalar"] is None and back.meta == {"loss": None, "top": "inf"}
    assert np.isnan(C.frame_from_json(back.figures["frame"])["x"].iloc[0])
    # figure data with bare NaN tokens (as format-1 shards had) is restored alike
    old = cells_frames.json_restore(json.loads('{"scalar": NaN, "curve": [0.5, NaN]}'))
    assert old["scalar"] is None and old["curve"][0] == 0.5 and np.isnan(old["curve"][1])


def test_a_failed_recompute_over_a_stale_shard_is_listed_as_failed(tmp_path, monkeypatch):
    C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    cell = FAKE.cells("smoke")[1]
    p1 = _paths(tmp_path)[1]
    _rewrite(p1, code_key="0" * 64)  # stale: written by other code
    assert C.cell_status(FAKE, "smoke", cell, tmp_path) == "stale"
    monkeypatch.setenv("FAKE_CELLS_FAIL", "1")
    with pytest.raises(C.CellsFailedError), pytest.warns(C.StaleShardWarning):
        C.run_cell("fake_grid", "smoke", cell.cell_id, tmp_path)
    assert p1.is_file() and C.error_path(tmp_path, "fake_grid", "smoke", cell.cell_id).is_file()
    assert C.cell_status(FAKE, "smoke", cell, tmp_path) == "failed"
    monkeypatch.delenv("FAKE_CELLS_FAIL")
    with pytest.warns(C.StaleShardWarning):
        C.run_cell("fake_grid", "smoke", cell.cell_id, tmp_path)
    assert C.cell_status(FAKE, "smoke", cell, tmp_path) == "done"
    assert not C.error_path(tmp_path, "fake_grid", "smoke", cell.cell_id).exists()


def test_present_shards_are_read_never_recomputed(tmp_path):
    rows, figs = C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    assert sorted(COMPUTED) == [0, 1, 2, 3]
    assert list(rows.columns[:2]) == ["cell_id", "i"] and len(rows) == 12
    assert figs[rows.cell_id.iloc[-1]] == {"points": [0, 1, 2], "i": 3}
    assert all(p.is_file() for p in _paths(tmp_path))
    COMPUTED.clear()
    again, figs2 = C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    assert COMPUTED == []
    pd.testing.assert_frame_equal(again, rows)
    assert figs2 == figs
    # another root seed is another grid
    C.results("fake_grid", "smoke", seed=1, root=tmp_path, progress=False)
    assert sorted(COMPUTED) == [0, 1, 2, 3]


def test_truncated_and_stale_shards_are_recomputed_with_a_warning(tmp_path):
    C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    p0, p1, p2, _ = _paths(tmp_path)
    text = p0.read_text()
    p0.write_text(text[: len(text) // 2])  # truncated
    _rewrite(p1, code_key="0" * 64)  # written by other code
    p2.write_bytes(b"\x00\xff garbage")
    COMPUTED.clear()
    with pytest.warns(C.StaleShardWarning) as record:
        C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    assert sorted(COMPUTED) == [0, 1, 2]
    messages = " ".join(str(w.message) for w in record)
    assert str(p0) in messages and str(p1) in messages and str(p2) in messages
    assert "other code" in messages and "truncated" in messages
    key = C.code_key("fake_grid")
    assert all(C.load_shard(p, key) is not None for p in (p0, p1, p2))


def test_compute_missing_false_raises(tmp_path):
    with pytest.raises(C.CellsMissingError, match="4 of 4 cells"):
        C.results("fake_grid", "smoke", root=tmp_path, compute_missing=False)
    assert COMPUTED == []


def test_a_failing_cell_does_not_stop_the_others(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CELLS_FAIL", "1")
    with pytest.raises(C.CellsFailedError) as info:
        C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    bad = FAKE.cells("smoke")[1]
    log = C.error_path(tmp_path, "fake_grid", "smoke", bad.cell_id)
    assert sorted(COMPUTED) == [0, 1, 2, 3]
    msg = str(info.value)
    assert bad.cell_id in msg and str(log) in msg and "1 of 4 cells" in msg
    assert info.value.failures == [(bad.cell_id, log)]
    assert "ZeroDivisionError: planted failure in cell 1" in log.read_text()
    assert [p.is_file() for p in _paths(tmp_path)] == [True, False, True, True]
    # fixed: only the failed cell runs, and its stale traceback goes
    monkeypatch.delenv("FAKE_CELLS_FAIL")
    COMPUTED.clear()
    C.results("fake_grid", "smoke", root=tmp_path, progress=False)
    assert COMPUTED == [1] and not log.exists()


def test_run_cell_computes_once_and_fails_with_its_log(tmp_path, monkeypatch):
    cell = FAKE.cells("smoke")[2]
    path = C.run_cell("fake_grid", "smoke", cell.cell_id, tmp_path)
    assert path.is_file() and COMPUTED == [2]
    os.utime(path, (1, 1))
    assert C.run_cell("fake_grid", "smoke", cell.cell_id, tmp_path, touch=True) == path
    assert COMPUTED == [2] and path.stat().st_mtime > 1
    monkeypatch.setenv("FAKE_CELLS_FAIL", "3")
    bad = FAKE.cells("smoke")[3]
    with pytest.raises(C.CellsFailedError, match=bad.cell_id):
        C.run_cell("fake_grid", "smoke", bad.cell_id, tmp_path)
    assert C.error_path(tmp_path, "fake_grid", "smoke", bad.cell_id).is_file()
    assert C.main(["run", "fake_grid", bad.cell_id, "--scale", "smoke",
                   "--root", str(tmp_path)]) == 1


def test_killed_run_resumes_with_the_missing_cells_only(tmp_path):
    counter = tmp_path / "counter.txt"
    root = tmp_path / "cells"
    code = ("import sys; import tests.compendium.test_cells; "
            "from fusionlib.compendium.cells import results; "
            "results('fake_grid', 'smoke', root=sys.argv[1], progress=False)")
    env = {**os.environ, "FAKE_CELLS_SLOW": "2", "FAKE_CELLS_COUNTER": str(counter)}
    proc = subprocess.Popen([sys.executable, "-c", code, str(root)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    paths = _paths(root)
    try:
        deadline = time.monotonic() + 30
        while not (paths[1].is_file() and counter.is_file()
                   and counter.read_text().split() == ["0", "1", "2"]):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the subprocess did not reach cell 2"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    assert [p.is_file() for p in paths] == [True, True, False, False]
    C.results("fake_grid", "smoke", root=root, progress=False)
    assert COMPUTED == [2, 3]


def test_concurrent_writers_leave_one_valid_shard(tmp_path):
    cell = FAKE.cells("smoke")[0]
    key = "c" * 64
    path = C.shard_path(tmp_path, "fake_grid", "smoke", cell.cell_id)
    big = C.Shard(pd.DataFrame({"x": np.arange(3_000.0)}), {"who": "big"})
    small = C.Shard(pd.DataFrame({"x": [1.0]}), {"who": "small"})
    errors: list[BaseException] = []
    stop = threading.Event()

    def write(shard: C.Shard) -> None:
        try:
            for _ in range(10):
                C.write_shard(path, cell, shard, key, scale="smoke")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def read() -> None:
        while not stop.is_set():
            if path.exists():
                got = C.load_shard(path, key, cell)  # never partial: a warning would fail
                if got is None or got.figures["who"] not in ("big", "small"):
                    errors.append(AssertionError("a reader saw an incomplete shard"))

    threads = [threading.Thread(target=write, args=(s,)) for s in (big, small)]
    reader = threading.Thread(target=read)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", C.StaleShardWarning)
        reader.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        reader.join()
    assert not errors, errors
    final = C.load_shard(path, key, cell)
    assert final is not None and final.figures["who"] in ("big", "small")
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporaries left
    # two whole runs at once: both complete, every shard valid
    runs = [threading.Thread(target=C.results, args=("fake_grid", "smoke"),
                             kwargs={"root": tmp_path / "two", "progress": False})
            for _ in range(2)]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    ok, _ = C.results("fake_grid", "smoke", root=tmp_path / "two", compute_missing=False)
    assert len(ok) == 12


# ----------------------------------------------------------------------------- code key
def test_code_key_covers_the_module_its_imports_and_the_lock(tmp_path, monkeypatch):
    files = [rel for rel, _ in C.key_files(FAKE.modules)]
    assert f"<{__name__}>" in files and "rng.py" in files and "errors.py" in files
    assert not any(f.startswith("compendium/cells") for f in files)
    key = C.code_key("fake_grid")
    assert re.fullmatch(r"[0-9a-f]{64}", key) and C.code_key(FAKE) == key
    assert {p.name for p in C.LOCK_FILES} == {
        "requirements.lock", "requirements-torch-cpu.lock", "requirements-torch-cuda.lock"}
    lock, cuda = tmp_path / "requirements.lock", tmp_path / "requirements-torch-cuda.lock"
    lock.write_text("numpy==1\n")
    cuda.write_text("torch==2\n")
    monkeypatch.setattr(cells_store, "LOCK_FILES", (lock, cuda))
    k1 = C.code_key("fake_grid")
    lock.write_text("numpy==2\n")
    k2 = C.code_key("fake_grid")
    cuda.write_text("torch==3\n")
    assert len({key, k1, k2, C.code_key("fake_grid")}) == 4


def test_code_key_leaves_out_what_only_the_machinery_imports():
    # an experiment that reads its frames through the machinery (fairtest_protocol's
    # summary_io does) must not key on the modules the machinery imports (the runner, the
    # claims and scorecard code): editing those would make every such shard stale
    C.load_experiments()
    files = [rel for rel, _ in C.key_files(C.get_experiment("fairtest_protocol").modules)]
    assert "fairtest/protocol/summary_io.py" in files and "fairtest/protocol/cells.py" in files
    assert not [f for f in files if f.startswith("compendium/") and f != "compendium/__init__.py"]
    # the planted fault: following the machinery's own imports brings them back
    from fusionlib.compendium.runner import fusionlib_dependencies

    reached = fusionlib_dependencies((REPO / "fusionlib/fairtest/protocol/summary_io.py")
                                     .read_text(encoding="utf-8"))
    assert "compendium/claims.py" in reached and "compendium/runner.py" in reached
    # and nothing else is dropped: the key is every module the experiment's own code reaches
    # when the machinery is followed, less the compendium modules only the machinery reaches
    full: set[str] = set()
    for name in C.get_experiment("fairtest_protocol").modules:
        path = REPO / "fusionlib" / Path(*name.split(".")[1:]).with_suffix(".py")
        full |= {rel for rel in fusionlib_dependencies(path.read_text(encoding="utf-8"))
                 if not rel.startswith("compendium/cells/")}
        full.add(str(path.relative_to(REPO / "fusionlib")))
    only_machinery = {f for f in full
                      if f.startswith("compendium/") and f != "compendium/__init__.py"}
    assert only_machinery and set(files) == full - only_machinery


def test_default_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(C.ENV_ROOT, raising=False)
    assert C.default_root() == REPO / "results" / "cells"
    monkeypatch.setenv(C.ENV_ROOT, str(tmp_path))
    assert C.default_root() == tmp_path
    assert C.shard_path(None, "e", "cpu", "c-1") == tmp_path / "e" / "cpu" / "c-1.shard.json"


# ----------------------------------------------------------------------------- command line
def test_cli_list_run_results(tmp_path, capsys):
    root = ["--root", str(tmp_path)]
    assert C.main(["list", "--scale", "smoke", "--experiment", "fake_grid", "--format", "json",
                   "--status", *root]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["cell_id"] for r in listed] == [c.cell_id for c in FAKE.cells("smoke")]
    assert {r["status"] for r in listed} == {"missing"}
    assert listed[0]["shard"] == str(_paths(tmp_path)[0])
    assert C.main(["run", "fake_grid", listed[0]["cell_id"], "--scale", "smoke", *root]) == 0
    assert capsys.readouterr().out.strip() == listed[0]["shard"]
    assert C.main(["list", "--scale", "smoke", "--experiment", "fake_grid", "--status",
                   *root]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["fake_grid", listed[0]["cell_id"], listed[0]["shard"],
                                    "done"]
    assert C.main(["results", "fake_grid", "--scale", "smoke", "--no-compute", *root]) == 1
    assert "3 of 4 cells" in capsys.readouterr().err
    assert C.main(["results", "fake_grid", "--scale", "smoke", *root]) == 0
    assert "12 rows from 4 cells" in capsys.readouterr().out
    assert C.main(["plan", "--scale", "smoke", "--experiment", "fake_grid", *root]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["code_keys"]["fake_grid"] == C.code_key("fake_grid")
    assert len(plan["cells"]) == 4
    assert {c["status"] for c in plan["cells"]} == {"done"}
    # a cluster job's re-parse: the same cells and paths, no shard read
    assert C.main(["plan", "--scale", "smoke", "--experiment", "fake_grid", "--no-status",
                   *root]) == 0
    quick = json.loads(capsys.readouterr().out)
    assert [c["shard"] for c in quick["cells"]] == [c["shard"] for c in plan["cells"]]
    assert not any("status" in c for c in quick["cells"])


def test_plan_names_the_experiments_whose_complete_paper_grid_replaces_their_cpu_cells(
        tmp_path, capsys):
    """At scale cpu, `plan --paper-replaces X` lists X in paper_complete once every paper cell of
    X is current (the workflow then does not compute X's cpu cells for the notebooks); never at
    another scale, and not while one paper cell is missing."""
    root = ["--root", str(tmp_path)]

    def complete(scale: str) -> list[str]:
        assert C.main(["plan", "--scale", scale, "--experiment", "fake_grid", "--paper-replaces",
                       "fake_grid", *root]) == 0
        return json.loads(capsys.readouterr().out)["paper_complete"]

    assert complete("cpu") == []
    paper = FAKE.cells("paper")
    C.run_cell("fake_grid", "paper", paper[0].cell_id, tmp_path)
    assert complete("cpu") == []  # 1 of 2 paper cells
    C.run_cell("fake_grid", "paper", paper[1].cell_id, tmp_path)
    assert complete("cpu") == ["fake_grid"]
    assert complete("smoke") == [] and complete("paper") == []


def test_real_experiments_list_their_cells(capsys):
    """Smoke test of the registered experiments (listing only; nothing is computed)."""
    assert C.main(["list", "--scale", "cpu", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    counts = pd.Series([r["experiment"] for r in listed]).value_counts().to_dict()
    real = {k: v for k, v in counts.items() if not k.startswith("fake_")}
    # other experiments may be registered beside these (discovered *_cells modules)
    assert real.items() >= {"ptgan_ring": 18, "ptgan_mixup": 6, "ptgan_fig11": 8}.items()
    assert {"ptgan_ring", "fairtest_protocol", "ptgan_var_noise"} <= set(C.experiment_names())


def test_notebook_status_follows_the_runners_stamp(tmp_path):
    nb = tmp_path / "tiny.md"
    nb.write_text("# tiny\n\n```{code-cell} ipython3\nimport fusionlib.rng\n```\n")
    out = tmp_path / "executed"
    key, status = C.notebook_status(nb, "smoke", 0, out)
    assert status == "missing" and re.fullmatch(r"[0-9a-f]{64}", key)
    out.mkdir()
    (out / "tiny.ipynb").write_text("{}")
    assert C.notebook_status(nb, "smoke", 0, out) == (key, "stale")
    (out / "tiny.stamp.json").write_text(json.dumps({"key": key}))
    assert C.notebook_status(nb, "smoke", 0, out) == (key, "stale")  # no results folder
    (out / "tiny").mkdir()
    assert C.notebook_status(nb, "smoke", 0, out) == (key, "done")
    assert C.notebook_status(nb, "cpu", 0, out)[1] == "stale"
    assert C.notebook_status(nb, "smoke", 1, out)[1] == "stale"


def test_workflow_config_names_real_experiments_and_notebooks():
    import yaml

    cfg = yaml.safe_load((REPO / "workflow" / "config.yaml").read_text())
    assert cfg["scale"] in ("smoke", "cpu", "paper") and cfg["seed"] == 0
    registered = set(C.experiment_names())
    assert set(cfg["experiments"]) <= registered
    notebooks = {p.stem for p in (REPO / "notebooks").glob("*.md")}
    for nb, exps in cfg["notebooks"].items():
        assert nb in notebooks and set(exps) <= set(cfg["experiments"])
    for name, by_scale in cfg["resources"].items():
        assert name in registered | notebooks, name
        for scale, res in by_scale.items():
            assert scale in ("smoke", "cpu", "paper")
            assert set(res) <= set(cfg["defaults"]) == {"gpu", "mem_mb", "runtime"}


# ----------------------------------------------------------------------------- discovery
def _plant(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_experiment_modules_are_found_by_name_without_import(tmp_path, monkeypatch):
    pkg = tmp_path / "plantedpkg"
    for rel in ("__init__.py", "a/__init__.py", "a/cells.py", "a/tabular_cells.py",
                "a/cellsish.py", "a/cells_helpers.py", "compendium/__init__.py",
                "compendium/cells/__init__.py", "loose/extra_cells.py", "b/__init__.py",
                "b/deep/__init__.py", "b/deep/image_cells.py"):
        # a module that would fail if imported: discovery must not import anything
        _plant(pkg, rel, "raise RuntimeError('imported')\n" if rel.endswith("cells.py") else "")
    monkeypatch.delenv(C.ENV_MODULES, raising=False)
    found = C.experiment_modules(pkg, "plantedpkg")
    assert found == ["plantedpkg.a.cells", "plantedpkg.a.tabular_cells",
                     "plantedpkg.b.deep.image_cells"]
    monkeypatch.setenv(C.ENV_MODULES, " my.own_cells , plantedpkg.a.cells,")
    assert C.experiment_modules(pkg, "plantedpkg") == [*found, "my.own_cells"]


def test_the_real_package_modules_are_discovered(monkeypatch):
    monkeypatch.delenv(C.ENV_MODULES, raising=False)
    found = C.experiment_modules()
    assert {"fusionlib.ptgan.toys.cells", "fusionlib.fairtest.protocol.cells",
            "fusionlib.ptgan.variance.cells"} <= set(found)
    assert found == sorted(found) and not any(".compendium." in m for m in found)
    assert all(m.rsplit(".", 1)[1] == "cells" or m.endswith("_cells") for m in found)


def test_a_cell_job_imports_the_module_that_names_its_experiment_first():
    """`cells run identification ...` must not import every registering module sorted before
    fusionlib.studies.identification.cells (the paper packages and their torch / sklearn)."""
    assert cells_registry._mentions("fusionlib.studies.identification.cells", "identification")
    assert not cells_registry._mentions("fusionlib.ptgan.toys.cells", "identification")
    assert not cells_registry._mentions("my.own_cells", "identification")
    code = ("import sys\n"
            "from fusionlib.compendium.cells.registry import get_experiment\n"
            "assert get_experiment('identification').name == 'identification'\n"
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('fusionlib.')}))")
    env = {k: v for k, v in os.environ.items() if k != C.ENV_MODULES}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True)
    packages = done.stdout.strip()
    assert "'studies'" in packages and "'ptgan'" not in packages and "'fairtest'" not in packages


def test_a_planted_module_registers_its_experiment(tmp_path, monkeypatch):
    pkg = tmp_path / "plantpkg2"
    _plant(pkg, "__init__.py")
    _plant(pkg, "x_cells.py", (
        "from fusionlib.compendium.cells import Cell, Experiment, Shard, register\n"
        "import pandas as pd\n"
        "register(Experiment('planted_x', lambda s, seed: [Cell('planted_x', {}, seed)],\n"
        "                    lambda c: Shard(pd.DataFrame({'v': [1]})), (__name__,)))\n"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cells_registry, "_loaded", False)
    monkeypatch.setenv(C.ENV_MODULES, "plantpkg2.x_cells")
    try:
        assert "planted_x" in C.experiment_names()
        assert C.get_experiment("planted_x").cells("smoke")[0].experiment == "planted_x"
        with pytest.raises(InvalidInputError, match="already registered"):
            C.register(C.Experiment("planted_x", FAKE.grid, FAKE.compute, (__name__,)))
    finally:
        C.EXPERIMENTS.pop("planted_x", None)


def test_resume_of_a_killed_cell_job_recomputes_missing_truncated_and_foreign_shards(tmp_path):
    """Shard-level resume as the workflow does it: one cell per process (`cells run`, the
    experiment found through FUSIONLIB_CELL_MODULES), the job computing cell 2 killed mid-way;
    then shard 0 is truncated and shard 1 carries another code key and planted values. The
    next run recomputes cells 0, 1, 2 and 3, reads neither bad shard, keeps no temporary."""
    root = tmp_path / "cells"
    ids = [c.cell_id for c in FAKE.cells("smoke")]
    for cid in ids[:2]:
        C.run_cell("fake_grid", "smoke", cid, root)
    counter = tmp_path / "counter.txt"
    env = {**os.environ, "FAKE_CELLS_SLOW": "2", "FAKE_CELLS_COUNTER": str(counter),
           C.ENV_MODULES: "tests.compendium.test_cells"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fusionlib.compendium.cells", "run", "fake_grid", ids[2],
         "--scale", "smoke", "--root", str(root)], cwd=REPO, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (counter.is_file() and counter.read_text().split() == ["2"]):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the job did not reach cell 2"
            time.sleep(0.05)
    finally:  # killed while it computes cell 2
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    p0, p1, p2, p3 = _paths(root)
    assert p0.is_file() and p1.is_file() and not p2.exists() and not p3.exists()
    text = p0.read_text()
    p0.write_text(text[: len(text) // 3])
    rows = json.loads(p1.read_text())["result"]["rows"]
    rows["data"] = [[999 if isinstance(v, float) else v for v in r] for r in rows["data"]]
    _rewrite(p1, code_key="f" * 64, rows=rows)
    COMPUTED.clear()
    with pytest.warns(C.StaleShardWarning):
        rows, _ = C.results("fake_grid", "smoke", root=root, progress=False)
    assert sorted(COMPUTED) == [0, 1, 2, 3]
    assert (rows["x"] < 1).all()  # the planted 999s were never read
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == sorted(
        p.name for p in (p0, p1, p2, p3))
    COMPUTED.clear()
    C.results("fake_grid", "smoke", root=root, progress=False)
    assert COMPUTED == []
