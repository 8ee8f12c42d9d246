"""Shards keep timings apart from results and carry content hashes; results bundles are
exported, verified on import (altered, stale, foreign shards refused), recomputed by
``verify`` and traced by ``bundle_origin``.

A tiny fake experiment whose rows carry a timing column (``seconds``) and whose figures carry a
timing key (``timing``) that change at every run, beside deterministic results.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
from pathlib import Path

import pandas as pd
import pytest

from fusionlib.compendium import cells as C
from fusionlib.compendium.cells import origin as cells_origin
from fusionlib.compendium.cells import shardfile as cells_shardfile
from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

MODULE = __name__


def _grid(scale: str, seed: int) -> list[C.Cell]:
    return [C.Cell("fake_bundle", {"i": i}, seed, label=f"b {i}") for i in range(3)]


def _compute(cell: C.Cell) -> C.Shard:
    i = cell.config["i"]
    x = numpy_rng(cell.seed, "fake-bundle", i).random(4)
    rows = pd.DataFrame({"i": [i] * 4, "seconds": [time.perf_counter()] * 4, "x": x})
    return C.Shard(rows, {"curve": x * 2, "timing": {"train_s": time.perf_counter()}},
                   meta={"device": "cpu"})


FAKE = C.register(C.Experiment("fake_bundle", _grid, _compute, (MODULE,)))


@pytest.fixture
def env(monkeypatch):
    # subprocesses (verify recomputes in one) find the fake experiment through this module
    monkeypatch.setenv(C.ENV_MODULES, MODULE)
    monkeypatch.delenv(C.ENV_ROOT, raising=False)


def _fill(root: Path) -> None:
    C.results("fake_bundle", "smoke", root=root, progress=False)


def _result_bytes(path: Path) -> bytes:
    text = path.read_bytes()
    start = text.index(b'"result":') + len(b'"result":')
    end = text.index(b',"result_sha256"')
    return text[start:end]


# ----------------------------------------------------------------------------- shard parts
def test_timings_live_apart_from_results_which_are_byte_identical_across_runs(tmp_path):
    cell = FAKE.cells("smoke")[1]
    a, b = tmp_path / "a.shard.json", tmp_path / "b.shard.json"
    key = "k" * 64
    shard_a, shard_b = _compute(cell), _compute(cell)
    C.write_shard(a, cell, shard_a, key, scale="smoke", seconds=1.0)
    time.sleep(1.1)  # another written_utc
    C.write_shard(b, cell, shard_b, key, scale="smoke", seconds=2.0)
    assert a.read_bytes() != b.read_bytes()
    assert _result_bytes(a) == _result_bytes(b)
    ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ja["result_sha256"] == jb["result_sha256"] != ja["run_sha256"]
    assert ja["result_sha256"] == cells_shardfile.sha256_of(ja["result"])
    assert "seconds" not in ja["result"]["rows"]["columns"]
    assert "timing" not in ja["result"]["figures"] and ja["run"]["timing"]["figures"]["timing"]
    # read back: the timing column in its place, the timing figure key back
    back = C.load_shard(a, key, cell)
    assert list(back.rows.columns) == ["i", "seconds", "x"]
    pd.testing.assert_frame_equal(back.rows, shard_a.rows)
    assert back.figures["timing"] == shard_a.figures["timing"]
    assert back.header["seconds"] == 1.0
    assert back.header["machine"] == cells_shardfile.this_machine()
    assert back.header["device"].startswith("cpu") and back.header["code_key"] == key
    assert set(C.TIMING_FIELDS) >= {"seconds", "fit_s", "train_s", "it_per_s"}


def test_an_edited_shard_is_refused_and_recomputed_never_read(tmp_path):
    _fill(tmp_path)
    path = C.shard_path(tmp_path, "fake_bundle", "smoke", FAKE.cells("smoke")[0].cell_id)
    obj = json.loads(path.read_text())
    obj["result"]["rows"]["data"][0][-1] = 123.0  # the right key, a planted value
    path.write_text(json.dumps(obj, sort_keys=True, separators=(",", ":")))
    with pytest.warns(C.StaleShardWarning, match="altered"):
        rows, _ = C.results("fake_bundle", "smoke", root=tmp_path, progress=False)
    assert (rows["x"] < 1).all()
    # an edited timing is detected too
    obj = json.loads(path.read_text())
    obj["run"]["seconds"] = (obj["run"]["seconds"] or 0.0) + 1234.5  # never the value it had
    path.write_text(json.dumps(obj))
    assert C.cell_status(FAKE, "smoke", FAKE.cells("smoke")[0], tmp_path) == "stale"


# ----------------------------------------------------------------------------- bundles
def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {i.name: tar.extractfile(i).read() for i in tar}


def _pack(files: dict[str, bytes], path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_export_import_round_trip_between_two_checkouts(tmp_path, env):
    here, there = tmp_path / "here", tmp_path / "there"
    _fill(here)
    rep = C.export_bundle("smoke", root=here, out=tmp_path / "b.tar.gz",
                          experiments=["fake_bundle"])
    assert rep.shards == 3 and rep.missing == []
    with tarfile.open(rep.path) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
    assert manifest["scale"] == "smoke" and manifest["machine"] == cells_shardfile.this_machine()
    assert {"versions", "lock_sha256"} <= set(manifest["environment"])
    entry = manifest["shards"][0]
    assert {"cell_id", "code_key", "file_sha256", "result_sha256", "device", "machine",
            "seconds", "written_utc", "commit"} <= set(entry)
    got = C.import_bundle(rep.path, root=there)
    assert len(got.installed) == 3 and got.refused == [] and got.replaced == 0
    for p in got.installed:
        rel = p.relative_to(there)
        assert p.read_bytes() == (here / rel).read_bytes()
    a, _ = C.results("fake_bundle", "smoke", root=here, compute_missing=False)
    b, _ = C.results("fake_bundle", "smoke", root=there, compute_missing=False)
    pd.testing.assert_frame_equal(a, b)
    info = C.bundle_origin("fake_bundle", "smoke", root=there)
    assert info["present"] == 3 and info["sources"][0]["origin"] == "bundle b.tar.gz"
    assert "from bundle b.tar.gz, computed on" in info["text"]
    assert "on this machine" in C.bundle_origin("fake_bundle", "smoke", root=here)["text"]


def test_import_refuses_altered_stale_and_foreign_shards_and_installs_the_rest(tmp_path, env):
    here, there = tmp_path / "here", tmp_path / "there"
    _fill(here)
    good = C.export_bundle("smoke", root=here, out=tmp_path / "good.tar.gz",
                           experiments=["fake_bundle"]).path
    files = _members(good)
    manifest = json.loads(files["manifest.json"])
    entries = {e["cell_id"]: e for e in manifest["shards"]}
    ids = [c.cell_id for c in FAKE.cells("smoke")]
    flipped, stale = (f"cells/fake_bundle/smoke/{i}.shard.json" for i in ids[:2])
    # one byte of a value flipped, the manifest left as it was
    data = files[flipped]
    at = data.index(b'"data":[[') + 12
    files[flipped] = data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]
    # a shard of other code, consistently hashed and listed (stale here)
    obj = json.loads(files[stale])
    obj["result"]["code_key"] = "0" * 64
    obj["result_sha256"] = cells_shardfile.sha256_of(obj["result"])
    files[stale] = cells_shardfile.canonical_bytes(obj)
    entries[ids[1]].update(file_sha256=hashlib.sha256(files[stale]).hexdigest(),
                           result_sha256=obj["result_sha256"], code_key="0" * 64)
    files["manifest.json"] = json.dumps(manifest).encode()
    files["cells/fake_bundle/smoke/extra-000000000000.shard.json"] = b"{}"  # not listed
    bad = _pack(files, tmp_path / "bad.tar.gz")
    got = C.import_bundle(bad, root=there)
    reasons = dict(got.refused)
    assert reasons[flipped].startswith("altered")
    assert reasons[stale].startswith("stale: computed by other code")
    assert reasons["cells/fake_bundle/smoke/extra-000000000000.shard.json"] == \
        "not listed in the manifest"
    assert len(reasons) == 3
    assert [p.name for p in got.installed] == [f"{ids[2]}.shard.json"]
    assert C.main(["import", str(bad), "--root", str(there)]) == 1
    # a flipped byte of the compressed archive: nothing readable, nothing installed
    raw = bytearray(good.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(bytes(raw))
    with pytest.raises(InvalidInputError, match="nothing was installed"):
        C.import_bundle(broken, root=tmp_path / "third")
    assert not (tmp_path / "third" / "fake_bundle").exists()


def test_export_of_nothing_is_an_error_and_missing_cells_are_listed(tmp_path, env):
    with pytest.raises(InvalidInputError, match="make cells SCALE=smoke"):
        C.export_bundle("smoke", root=tmp_path, out=tmp_path / "x.tar.gz",
                        experiments=["fake_bundle"])
    C.run_cell("fake_bundle", "smoke", FAKE.cells("smoke")[0].cell_id, tmp_path)
    rep = C.export_bundle("smoke", root=tmp_path, out=tmp_path / "x.tar.gz",
                          experiments=["fake_bundle"])
    assert rep.shards == 1 and [m["status"] for m in rep.missing] == ["missing", "missing"]


def test_export_of_some_cells_ships_those_only(tmp_path, env, capsys):
    """``--cell PATTERN`` ships a grid in parts; the parts import side by side into one root;
    a pattern that matches no cell is an error that says how to list the ids."""
    _fill(tmp_path / "here")
    ids = [c.cell_id for c in FAKE.cells("smoke")]
    assert C.main(["export", "--scale", "smoke", "--root", str(tmp_path / "here"), "--experiment",
                   "fake_bundle", "--cell", ids[0], "--cell", "b-2-*",
                   "--out", str(tmp_path / "a.tar.gz")]) == 0
    manifest = json.loads(_members(tmp_path / "a.tar.gz")["manifest.json"])
    assert [e["cell_id"] for e in manifest["shards"]] == [ids[0], ids[2]]
    assert manifest["missing"] == []  # a cell left out on purpose is not "missing"
    assert manifest["selected_cells"] == [ids[0], "b-2-*"]  # ... and the manifest says so
    rest = C.export_bundle("smoke", root=tmp_path / "here", out=tmp_path / "b.tar.gz",
                           experiments=["fake_bundle"], cells=["b-1-*"])
    assert rest.shards == 1
    there = tmp_path / "there"
    for b in ("a", "b"):
        C.import_bundle(tmp_path / f"{b}.tar.gz", root=there)
    assert all(C.cell_status(FAKE, "smoke", c, there) == "done" for c in FAKE.cells("smoke"))
    assert C.main(["export", "--scale", "smoke", "--root", str(tmp_path / "here"), "--experiment",
                   "fake_bundle", "--cell", "pt-gp-*", "--out", str(tmp_path / "c.tar.gz")]) == 2
    err = capsys.readouterr().err
    assert "--cell 'pt-gp-*' matches no cell of fake_bundle" in err
    assert "cells list --scale smoke" in err
    assert not (tmp_path / "c.tar.gz").exists()


def test_verify_recomputes_cells_and_catches_a_changed_result(tmp_path, env, capsys):
    here, there = tmp_path / "here", tmp_path / "there"
    _fill(here)
    bundle = C.export_bundle("smoke", root=here, out=tmp_path / "b.tar.gz",
                             experiments=["fake_bundle"]).path
    C.import_bundle(bundle, root=there)
    with pytest.raises(InvalidInputError, match="import one first"):
        C.verify_bundle("smoke", 2, seed=0, root=here)
    records = C.verify_bundle("smoke", 2, seed=0, root=there)
    assert len(records) == 2 and {r["verdict"] for r in records} == {"identical"}
    assert {r["comparison"] for r in records} == {"bitwise"}
    # a shard whose result was changed (hashes made consistent): verify says it differs
    for c in FAKE.cells("smoke"):
        p = C.shard_path(there, "fake_bundle", "smoke", c.cell_id)
        obj = json.loads(p.read_text())
        obj["result"]["rows"]["data"][0][-1] += 1e-12
        obj["result_sha256"] = cells_shardfile.sha256_of(obj["result"])
        p.write_text(json.dumps(obj))
    assert C.main(["verify", "--scale", "smoke", "-n", "1", "--pick-seed", "3",
                   "--root", str(there)]) == 1
    assert "differs" in capsys.readouterr().out


def test_tolerance_comparison_of_results():
    acc: dict[str, float] = {}
    a = {"rows": [[1.0, "x", None]], "meta": {}}
    assert cells_origin._diff(a, {"rows": [[1.0 + 1e-9, "x", None]], "meta": {}}, 1e-6, 0, acc)
    assert acc["max_abs_diff"] == pytest.approx(1e-9, rel=1e-3)
    assert not cells_origin._diff(a, {"rows": [[1.1, "x", None]], "meta": {}}, 1e-3, 1e-6, {})
    assert not cells_origin._diff(a, {"rows": [[1.0, "y", None]], "meta": {}}, 1, 1, {})
    assert not cells_origin._diff(a, {"rows": [[1.0, "x"]], "meta": {}}, 1, 1, {})
    numbers, other = {}, {}
    assert not cells_origin._diff(a, {"rows": [[1.5, "x", None]], "meta": {}}, 0, 0, numbers)
    assert "structure" not in numbers  # numbers only
    assert not cells_origin._diff(a, {"rows": [[1.0, "y", None]], "meta": {}}, 0, 0, other)
    assert other["structure"] == 1.0
    nan = float("nan")
    assert cells_origin._diff({"v": nan}, {"v": nan}, 0, 0, {})
    flag: dict[str, float] = {}
    assert not cells_origin._diff({"v": nan}, {"v": 1.0}, 1, 1, flag) and flag["structure"]


def test_export_says_why_nothing_could_be_exported(tmp_path, env):
    """Nothing computed: "compute the cells first". Shard files of another grid (here: another
    root seed's, as when the data sets present differ from those the cells were computed
    with): the message names them and what the grid depends on, not "compute the cells"."""
    with pytest.raises(InvalidInputError, match="compute the cells first"):
        C.export_bundle("smoke", root=tmp_path, experiments=["fake_bundle"],
                        out=tmp_path / "b.tar.gz")
    _fill(tmp_path)
    with pytest.raises(InvalidInputError, match=r"3 shard file\(s\) there belong to no cell of "
                       r"this grid .* root seed \(--seed\) and on the data sets") as exc:
        C.export_bundle("smoke", seed=7, root=tmp_path, experiments=["fake_bundle"],
                        out=tmp_path / "b.tar.gz")
    assert "compute the cells first" not in str(exc.value)
    assert not (tmp_path / "b.tar.gz").exists()


def test_export_names_stale_shards(tmp_path, env, monkeypatch):
    from fusionlib.compendium.cells import bundle as cells_bundle

    _fill(tmp_path)
    monkeypatch.setattr(cells_bundle, "code_key", lambda exp: "0" * 64)  # other code
    with pytest.raises(InvalidInputError, match=r"3 shard\(s\) are stale"):
        C.export_bundle("smoke", root=tmp_path, experiments=["fake_bundle"],
                        out=tmp_path / "b.tar.gz")


def test_present_results_read_only_complete_current_grids(tmp_path, env, monkeypatch):
    """None (and nothing written) while cells are missing; results() once all are present; None
    with one "not read" warning when every shard is stale (a planted other code key)."""
    import warnings

    from fusionlib.compendium.cells import exec as cells_exec

    assert C.present_results("fake_bundle", "smoke", root=tmp_path) is None
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
    _fill(tmp_path)
    rows, _ = C.present_results("fake_bundle", "smoke", root=tmp_path)
    want, _ = C.results("fake_bundle", "smoke", root=tmp_path, progress=False)
    pd.testing.assert_frame_equal(rows.drop(columns="seconds"), want.drop(columns="seconds"))
    monkeypatch.setattr(cells_exec, "code_key", lambda exp: "0" * 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert C.present_results("fake_bundle", "smoke", root=tmp_path) is None
    stale = [str(w.message) for w in caught if issubclass(w.category, C.StaleShardWarning)]
    assert len(stale) == 1 and "3 shard(s) of fake_bundle" in stale[0] and "not read" in stale[0]


def test_present_cells_read_a_subset_only_when_each_is_current(tmp_path, env, monkeypatch):
    """{cell_id: Shard} in the order asked once each asked-for cell has a current shard (the
    others may be missing); None while one is missing or stale, with one "not read" warning for
    stale ones; an id outside the grid is an error; nothing is ever written."""
    import warnings

    from fusionlib.compendium.cells import exec as cells_exec

    ids = [c.cell_id for c in C.get_experiment("fake_bundle").cells("smoke", 0)]
    assert C.present_cells("fake_bundle", "smoke", ids[:2], root=tmp_path) is None
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
    C.run_cell("fake_bundle", "smoke", ids[1], root=tmp_path)
    C.run_cell("fake_bundle", "smoke", ids[0], root=tmp_path)
    got = C.present_cells("fake_bundle", "smoke", ids[1::-1], root=tmp_path)
    assert list(got) == [ids[1], ids[0]] and all(isinstance(s, C.Shard) for s in got.values())
    assert C.present_cells("fake_bundle", "smoke", ids, root=tmp_path) is None  # one missing
    with pytest.raises(InvalidInputError, match="are not cells of 'fake_bundle'"):
        C.present_cells("fake_bundle", "smoke", [ids[0], "no-such-cell"], root=tmp_path)
    with pytest.raises(InvalidInputError, match="at least one cell id"):
        C.present_cells("fake_bundle", "smoke", [], root=tmp_path)
    twice = C.present_cells("fake_bundle", "smoke", [ids[0], ids[0]], root=tmp_path)
    assert list(twice) == [ids[0]]
    monkeypatch.setattr(cells_exec, "code_key", lambda exp: "0" * 64)  # planted: other code
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert C.present_cells("fake_bundle", "smoke", ids[:2], root=tmp_path) is None
    stale = [w for w in caught if issubclass(w.category, C.StaleShardWarning)]
    assert len(stale) == 1 and stale[0].filename == __file__  # points at the caller
    assert "2 shard(s) of fake_bundle" in str(stale[0].message)
    assert "not read" in str(stale[0].message)


def test_verify_tells_another_cpu_model_from_a_changed_result(tmp_path, env, capsys,
                                                              monkeypatch):
    """A cell recomputed on another CPU model: within the tolerance it is "within tolerance";
    beyond it, "other CPU" (rounding amplified by training), which fails nothing; the same
    difference on the same CPU model "differs" and fails. --same-device draws only among the
    cells computed on this device."""
    here, there = tmp_path / "here", tmp_path / "there"
    _fill(here)
    bundle = C.export_bundle("smoke", root=here, out=tmp_path / "b.tar.gz",
                             experiments=["fake_bundle"]).path
    C.import_bundle(bundle, root=there)
    real = cells_origin._recompute

    def elsewhere(delta: float, device: str | None, extra_row: bool = False):
        def recompute(*args, **kwargs):
            new = real(*args, **kwargs)
            data = new["result"]["rows"]["data"]
            data[0][-1] += delta
            if extra_row:  # not a rounding difference: one row more
                data.append(list(data[0]))
            new["result_sha256"] = cells_shardfile.sha256_of(new["result"])
            if device is not None:
                new["run"]["device"] = device
            return new
        return recompute

    for delta, device, extra, verdict in (
            (1e-9, "cpu: Another CPU", False, "within tolerance"),
            (0.5, "cpu: Another CPU", False, cells_origin.OTHER_CPU),
            (0.5, "cpu: Another CPU", True, "differs"),  # a structural change: on any CPU
            (1e-9, None, False, "differs"),  # the same CPU model: bitwise
            (1e-9, "cuda: Some GPU", False, "within tolerance"),
            (0.5, "cuda: Some GPU", False, "differs")):  # a GPU beyond the tolerance
        monkeypatch.setattr(cells_origin, "_recompute", elsewhere(delta, device, extra))
        (r,) = C.verify_bundle("smoke", 1, seed=0, root=there)
        assert r["verdict"] == verdict, (delta, device, extra)
        if not extra:  # rows of another count are not compared number by number
            assert r["max_abs_diff"] == pytest.approx(delta, rel=1e-3, abs=1e-12)
    monkeypatch.setattr(cells_origin, "_recompute", elsewhere(0.5, "cpu: Another CPU"))
    # nothing refuted, but nothing confirmed either: its own exit status
    assert C.main(["verify", "--scale", "smoke", "-n", "1", "--pick-seed", "3",
                   "--root", str(there)]) == 3
    out = capsys.readouterr()
    assert "computed on another CPU model" in out.out and "confirmed 0 of 1" in out.out
    assert "no drawn cell could be confirmed" in out.err
    monkeypatch.setattr(cells_origin, "_recompute", real)
    assert C.main(["verify", "--scale", "smoke", "-n", "2", "--pick-seed", "3",
                   "--root", str(there)]) == 0
    assert "confirmed 2 of 2" in capsys.readouterr().out
    assert len(C.verify_bundle("smoke", 2, seed=0, root=there, same_device=True)) == 2
    monkeypatch.setattr(cells_origin, "shard_device", lambda meta=None: "cpu: Elsewhere")
    with pytest.raises(InvalidInputError, match="computed on this device"):
        C.verify_bundle("smoke", 1, seed=0, root=there, same_device=True)
