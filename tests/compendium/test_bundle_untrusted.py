"""A results bundle is untrusted input: labels, names, sizes, manifests and shards that do not
agree are refused (the whole bundle, with nothing installed, where they could misplace a file),
never written outside the shard root, never a traceback.

Each test here stood for a failure of the importer before (a manifest's ``experiment:
"../escaped/relx"`` wrote outside the shard root; a relabelled ``cell_id`` replaced another
cell's shard; a 1 GiB member was read whole; a shard whose ``cell`` is text crashed ``plan``;
malformed manifests and unwritable paths gave tracebacks; folder entries of a repacked bundle
were counted as refused shards), plus the deposit metadata and a seeded fuzz of manifests and
member names.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import io
import json
import tarfile
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fusionlib.compendium import cells as C
from fusionlib.compendium.cells import shardfile as cells_shardfile
from fusionlib.compendium.cells.store import REPO
from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

MODULE = __name__
EXP = "fake_untrusted"


def _grid(scale: str, seed: int) -> list[C.Cell]:
    return [C.Cell(EXP, {"i": i}, seed, label=f"u {i}") for i in range(3)]


def _compute(cell: C.Cell) -> C.Shard:
    x = numpy_rng(cell.seed, "fake-untrusted", cell.config["i"]).random(3)
    return C.Shard(pd.DataFrame({"i": [cell.config["i"]] * 3, "x": x}), {"curve": x},
                   meta={"device": "cpu"})


FAKE = C.register(C.Experiment(EXP, _grid, _compute, (MODULE,)))
IDS = [c.cell_id for c in FAKE.cells("smoke")]
MEMBERS = [f"cells/{EXP}/smoke/{i}.shard.json" for i in IDS]


def _checks():
    """The checks module, imported when a test runs (it did not exist before)."""
    return importlib.import_module("fusionlib.compendium.cells.bundle_checks")


class Good:
    """A bundle exported from a filled shard folder: its path, members and manifest."""

    def __init__(self, tmp: Path) -> None:
        self.here = tmp / "here"
        C.results(EXP, "smoke", root=self.here, progress=False)
        self.path = C.export_bundle("smoke", root=self.here, out=tmp / "good.tar.gz",
                                    experiments=[EXP]).path
        with tarfile.open(self.path) as tar:
            self.files = {i.name: tar.extractfile(i).read() for i in tar}
        self.manifest = json.loads(self.files["manifest.json"])

    def entry(self, member: str) -> dict:
        return next(e for e in self.manifest["shards"] if e["member"] == member)


@pytest.fixture
def good(tmp_path, monkeypatch):
    monkeypatch.delenv(C.ENV_ROOT, raising=False)
    return Good(tmp_path)


def _info(name: str, size: int = 0, kind: bytes = tarfile.REGTYPE,
          link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.linkname, info.mode = size, kind, link, 0o644
    return info


def _pack(path: Path, files: dict[str, bytes], extra: list[tarfile.TarInfo] = (),
          manifest: dict | None = None, first: list[tarfile.TarInfo] = ()) -> Path:
    """A .tar.gz of ``first`` (entries without data), ``files`` (``manifest`` replacing
    manifest.json when given) and ``extra`` entries."""
    if manifest is not None:
        files = {**files, "manifest.json": json.dumps(manifest).encode()}
    with tarfile.open(path, "w:gz") as tar:
        for info in first:
            tar.addfile(info)
        for name, data in files.items():
            tar.addfile(_info(name, len(data)), io.BytesIO(data))
        for info in extra:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.size else None)
    return path


def _all_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def _snapshot(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in _all_files(folder)}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


# ----------------------------------------------------------------------------- 1. labels, names
def test_a_manifest_experiment_with_dotdot_is_refused_and_nothing_is_written(tmp_path, good,
                                                                             capsys):
    manifest = json.loads(json.dumps(good.manifest))
    manifest["shards"][0]["experiment"] = "../escaped/relx"
    bad = _pack(tmp_path / "bad.tar.gz", good.files, manifest=manifest)
    sandbox = tmp_path / "w"
    root = sandbox / "root"
    with pytest.raises(InvalidInputError, match=r"refused: shards\[0\] is labelled experiment "
                       r"'\.\./escaped/relx'.*nothing was installed") as exc:
        C.import_bundle(bad, root=root)
    assert "\n" not in str(exc.value)
    assert _all_files(tmp_path / "w") == [] and not (tmp_path / "escaped").exists()
    assert C.main(["import", str(bad), "--root", str(root)]) == 2
    assert "'../escaped/relx'" in _one_line_error(capsys)
    assert _all_files(sandbox) == []


def test_a_relabelled_cell_id_never_replaces_another_cells_shard(tmp_path, good):
    root = tmp_path / "root"
    assert len(C.import_bundle(good.path, root=root).installed) == 3
    before = _snapshot(root / EXP)
    # only the first shard, its manifest entry relabelled as the second cell
    entry = dict(good.entry(MEMBERS[0]), cell_id=IDS[1])
    manifest = dict(good.manifest, shards=[entry])
    files = {k: v for k, v in good.files.items() if k in ("manifest.json", MEMBERS[0])}
    bad = _pack(tmp_path / "relabelled.tar.gz", files, manifest=manifest)
    with pytest.raises(InvalidInputError, match=f"cell_id '{IDS[1]}' but its member is"):
        C.import_bundle(bad, root=root)
    assert _snapshot(root / EXP) == before


def test_a_shard_stored_under_another_cells_name_refuses_the_whole_bundle(tmp_path, good):
    files = dict(good.files)
    files[MEMBERS[1]] = good.files[MEMBERS[0]]  # cell 0's shard under cell 1's name
    manifest = json.loads(json.dumps(good.manifest))
    e0, e1 = (next(e for e in manifest["shards"] if e["member"] == m) for m in MEMBERS[:2])
    e1.update({k: e0[k] for k in ("file_sha256", "result_sha256", "run_sha256")})
    bad = _pack(tmp_path / "swapped.tar.gz", files, manifest=manifest)
    with pytest.raises(InvalidInputError, match=f"member '{MEMBERS[1]}' holds the shard of "
                       f"experiment '{EXP}', scale 'smoke', cell '{IDS[0]}'"):
        C.import_bundle(bad, root=tmp_path / "root")
    assert _all_files(tmp_path / "root") == []


def test_manifest_hashes_that_disagree_with_the_shard_refuse_the_whole_bundle(tmp_path, good):
    manifest = json.loads(json.dumps(good.manifest))
    manifest["shards"][2]["result_sha256"] = "0" * 64  # file hash right, result hash not
    bad = _pack(tmp_path / "hash.tar.gz", good.files, manifest=manifest)
    with pytest.raises(InvalidInputError, match="has result_sha256 .* the manifest says '0000"):
        C.import_bundle(bad, root=tmp_path / "root")
    assert _all_files(tmp_path / "root") == []


def test_a_forged_cell_header_with_consistent_hashes_is_refused(tmp_path, good):
    obj = json.loads(good.files[MEMBERS[0]])
    obj["result"]["cell"]["config"] = {"i": 99}  # cell id kept, configuration changed
    obj["result_sha256"] = cells_shardfile.sha256_of(obj["result"])
    data = cells_shardfile.canonical_bytes(obj)
    manifest = json.loads(json.dumps(good.manifest))
    entry = next(e for e in manifest["shards"] if e["member"] == MEMBERS[0])
    entry.update(file_sha256=hashlib.sha256(data).hexdigest(), result_sha256=obj["result_sha256"])
    bad = _pack(tmp_path / "forged.tar.gz", {**good.files, MEMBERS[0]: data}, manifest=manifest)
    with pytest.raises(InvalidInputError, match="another configuration or seed"):
        C.import_bundle(bad, root=tmp_path / "root")
    assert _all_files(tmp_path / "root") == []


UNSAFE = [
    ("../evil.shard.json", tarfile.REGTYPE, "", "is not named"),
    ("/tmp/fusionlib-abs.shard.json", tarfile.REGTYPE, "", "is not named"),
    (f"cells/{EXP}/smoke/../../../evil.shard.json", tarfile.REGTYPE, "", "is not named"),
    (f"cells/{EXP}/smoke\\x-000000000000.shard.json", tarfile.REGTYPE, "", "is not named"),
    ("notes.txt", tarfile.REGTYPE, "", "is not named"),
    (f"cells/{EXP}/smoke/link-000000000000.shard.json", tarfile.SYMTYPE, "/etc/passwd",
     "is a symbolic link"),
    (f"cells/{EXP}/smoke/hard-000000000000.shard.json", tarfile.LNKTYPE, MEMBERS[0],
     "is a hard link"),
    (f"cells/{EXP}/smoke/dev-000000000000.shard.json", tarfile.CHRTYPE, "",
     "is a character device"),
    (f"cells/{EXP}/smoke/fifo-000000000000.shard.json", tarfile.FIFOTYPE, "", "is a FIFO"),
    (f"cells/{EXP}/smoke/sub", tarfile.DIRTYPE, "", "is a folder"),
    ("../escaped", tarfile.DIRTYPE, "", "is a folder"),
    (MEMBERS[0], tarfile.REGTYPE, "", "appears twice"),
]


@pytest.mark.parametrize("name, kind, link, why", UNSAFE,
                         ids=[f"{k.decode()}:{n}" for n, k, _, _ in UNSAFE])
def test_unsafe_members_refuse_the_whole_bundle_by_name(tmp_path, good, name, kind, link, why):
    size = 5 if kind == tarfile.REGTYPE else 0
    bad = _pack(tmp_path / "unsafe.tar.gz", good.files, extra=[_info(name, size, kind, link)])
    sandbox = tmp_path / "w"
    with pytest.raises(InvalidInputError, match="nothing was installed") as exc:
        C.import_bundle(bad, root=sandbox / "root")
    assert f"member {name!r} {why}" in str(exc.value)
    assert _all_files(sandbox) == [] and not Path("/tmp/fusionlib-abs.shard.json").exists()


def test_a_symbolic_link_under_the_root_is_never_followed_outside_it(tmp_path, good):
    outside, root = tmp_path / "outside", tmp_path / "root"
    outside.mkdir()
    root.mkdir()
    (root / EXP).symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidInputError, match="resolves outside the shard root"):
        C.import_bundle(good.path, root=root)
    assert _all_files(outside) == []


# ----------------------------------------------------------------------------- 2. sizes
def test_a_member_announcing_1_gib_is_refused_before_it_is_read(tmp_path, good):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        tar.addfile(_info("manifest.json", len(good.files["manifest.json"])),
                    io.BytesIO(good.files["manifest.json"]))
    body = raw.getvalue().rstrip(b"\0")  # the end blocks off: a header of 1 GiB follows
    body += b"\0" * (-len(body) % 512) + _info(MEMBERS[0], 1 << 30).tobuf(tarfile.GNU_FORMAT)
    bad = tmp_path / "huge.tar.gz"
    bad.write_bytes(gzip.compress(body + b"{" * (1 << 20), compresslevel=1))
    with pytest.raises(InvalidInputError, match=f"member '{MEMBERS[0]}' holds 1024 MiB, more "
                       "than 64 MiB"):
        C.import_bundle(bad, root=tmp_path / "root")
    assert _checks().MAX_MEMBER_BYTES == 64 << 20


def test_an_extended_header_announcing_1_gib_is_refused_before_it_is_read(tmp_path):
    head = _info("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGNAME).tobuf(tarfile.USTAR_FORMAT)
    bad = tmp_path / "longname.tar.gz"
    bad.write_bytes(gzip.compress(head + b"a" * (1 << 20), compresslevel=1))
    with pytest.raises(InvalidInputError, match="an extended tar header holds 1024 MiB, more "
                       "than 1 MiB"):
        C.import_bundle(bad, root=tmp_path / "root")


def test_a_large_member_is_refused_without_holding_it_in_memory(tmp_path, good, monkeypatch):
    checks = _checks()
    monkeypatch.setattr(checks, "MAX_MEMBER_BYTES", 1 << 20)
    big = good.files[MEMBERS[0]] + b" " * (12 << 20)  # 12 MiB, compresses to almost nothing
    bad = _pack(tmp_path / "big.tar.gz", {**good.files, MEMBERS[0]: big})
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInputError, match="more than 1 MiB"):
            C.import_bundle(bad, root=tmp_path / "root")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20, peak
    assert _all_files(tmp_path / "root") == []


def test_a_zip_bomb_and_too_much_in_all_are_refused(tmp_path, good, monkeypatch):
    checks = _checks()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in good.files.items():
            tar.addfile(_info(name, len(data)), io.BytesIO(data))
    bomb = tmp_path / "bomb.tar.gz"  # 64 MiB of zeros after the archive's end
    bomb.write_bytes(gzip.compress(raw.getvalue() + b"\0" * (64 << 20), compresslevel=1))
    assert bomb.stat().st_size < 1 << 20
    with monkeypatch.context() as mp:
        mp.setattr(checks, "MAX_ARCHIVE_BYTES", 8 << 20)
        with pytest.raises(InvalidInputError, match="decompresses to more than 8 MiB"):
            C.import_bundle(bomb, root=tmp_path / "root")
    with monkeypatch.context() as mp:
        mp.setattr(checks, "MAX_TOTAL_BYTES", sum(len(v) for v in good.files.values()) - 1)
        with pytest.raises(InvalidInputError, match="members hold more than .* together"):
            C.import_bundle(good.path, root=tmp_path / "root")
    assert _all_files(tmp_path / "root") == []
    assert len(C.import_bundle(good.path, root=tmp_path / "root").installed) == 3


# ----------------------------------------------------------------------------- 3. bad shards
def _malformed(obj: dict, how: str) -> bytes:
    if how == "deep":
        return b"[" * 100_000
    if how == "cell text":
        obj["result"]["cell"] = "x"
    elif how == "no cell_id":
        del obj["result"]["cell"]["cell_id"]
    elif how == "meta text":
        obj["result"]["meta"] = "m"
    elif how == "rows list":
        obj["result"]["rows"] = []
    elif how == "timing list":
        obj["run"]["timing"] = [1]
    elif how == "timing columns text":
        obj["run"]["timing"]["columns"] = "x"
    for part in ("result", "run"):  # consistently hashed: only the shape is wrong
        obj[f"{part}_sha256"] = cells_shardfile.sha256_of(obj[part])
    return cells_shardfile.canonical_bytes(obj)


MALFORMED = ["cell text", "no cell_id", "meta text", "rows list", "timing list",
             "timing columns text", "deep"]


@pytest.mark.parametrize("how", MALFORMED)
def test_a_malformed_shard_is_unreadable_with_one_warning_line_never_a_traceback(
        tmp_path, capsys, how, monkeypatch):
    monkeypatch.delenv(C.ENV_ROOT, raising=False)
    root = tmp_path / "root"
    C.results(EXP, "smoke", root=root, progress=False)
    path = C.shard_path(root, EXP, "smoke", IDS[1])
    path.write_bytes(_malformed(json.loads(path.read_bytes()), how))
    with pytest.warns(C.StaleShardWarning, match="treated as missing"):
        assert C.load_shard(path, C.code_key(FAKE), FAKE.cells("smoke")[1]) is None
    assert C.cell_status(FAKE, "smoke", FAKE.cells("smoke")[1], root) == "stale"
    capsys.readouterr()
    assert C.main(["plan", "--scale", "smoke", "--experiment", EXP, "--root", str(root)]) == 0
    out, err = capsys.readouterr()
    status = {c["cell_id"]: c["status"] for c in json.loads(out)["cells"]}
    assert status == {IDS[0]: "done", IDS[1]: "stale", IDS[2]: "done"}
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: shard {path} "), err
    assert C.main(["list", "--status", "--scale", "smoke", "--experiment", EXP, "--root",
                   str(root)]) == 0
    out, err = capsys.readouterr()
    assert f"{IDS[1]}\t{path}\tstale" in out and len(err.strip().splitlines()) == 1
    rep = C.export_bundle("smoke", root=root, out=tmp_path / "b.tar.gz", experiments=[EXP])
    assert rep.shards == 2 and rep.missing == [
        {"experiment": EXP, "cell_id": IDS[1], "status": "stale"}]


# ----------------------------------------------------------------------------- 4. bad input
def _manifest_case(m: dict, case: str) -> bytes:
    if case == "not json":
        return b"{not json"
    if case == "not utf-8":
        return b"\xff\xfe"
    if case == "a list":
        return b"[1, 2]"
    e = m["shards"][0]
    edits = {
        "no shards": lambda: m.pop("shards"),
        "shards text": lambda: m.update(shards="x"),
        "entry a number": lambda: m.update(shards=[1]),
        "seed text": lambda: m.update(seed="x"),
        "seed negative": lambda: m.update(seed=-1),
        "seed true": lambda: m.update(seed=True),
        "format 2": lambda: m.update(bundle_format=2),
        "format text": lambda: m.update(bundle_format="1"),
        "scale huge": lambda: m.update(scale="huge"),
        "entry without hash": lambda: e.pop("file_sha256"),
        "hash a number": lambda: e.update(file_sha256=123),
        "member a list": lambda: e.update(member=["x"]),
        "devices text": lambda: m.update(devices="cpu"),
    }
    edits[case]()
    return json.dumps(m).encode()


MANIFEST_CASES = {
    "not json": "is not JSON", "not utf-8": "is not JSON", "a list": "is a JSON list, not an "
    "object", "no shards": "has no 'shards'", "shards text": "'shards' must be a list, not str",
    "entry a number": r"shards\[0\] must be an object, not int",
    "seed text": "'seed' must be an integer >= 0, not str 'x'", "seed negative": "'seed' must",
    "seed true": "'seed' must be an integer >= 0, not bool", "format 2": "has bundle format 2",
    "format text": "has bundle format '1'", "scale huge": "'scale' must be one of",
    "entry without hash": r"shards\[0\] has no 'file_sha256'",
    "hash a number": r"shards\[0\].file_sha256 must be a SHA-256",
    "member a list": r"shards\[0\].member must be text", "devices text": "'devices' must be a list",
}


@pytest.mark.parametrize("case", sorted(MANIFEST_CASES))
def test_a_malformed_manifest_is_one_clear_error(tmp_path, good, capsys, case):
    raw = _manifest_case(json.loads(json.dumps(good.manifest)), case)
    bad = _pack(tmp_path / "m.tar.gz", {**good.files, "manifest.json": raw})
    with pytest.raises(InvalidInputError, match=MANIFEST_CASES[case]) as exc:
        C.import_bundle(bad, root=tmp_path / "root")
    assert "nothing was installed" in str(exc.value) and "make export-results" in str(exc.value)
    assert C.main(["import", str(bad), "--root", str(tmp_path / "root")]) == 2
    _one_line_error(capsys)
    assert _all_files(tmp_path / "root") == []


def test_a_bundle_without_a_manifest_is_one_clear_error(tmp_path, good):
    bad = _pack(tmp_path / "nomanifest.tar.gz",
                {k: v for k, v in good.files.items() if k != "manifest.json"})
    with pytest.raises(InvalidInputError, match="manifest.json is missing from the archive"):
        C.import_bundle(bad, root=tmp_path / "root")


def test_an_unwritable_out_and_a_shard_root_that_is_a_file_are_one_clear_error(
        tmp_path, good, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    export = ["export", "--scale", "smoke", "--experiment", EXP, "--root", str(good.here)]
    assert C.main([*export, "--out", str(afile / "b.tar.gz")]) == 2
    assert "cannot write the bundle to" in _one_line_error(capsys)
    assert C.main([*export, "--out", str(tmp_path)]) == 2
    assert "is a folder; give the archive's file name" in _one_line_error(capsys)
    for argv in (["import", str(good.path)], ["export", "--scale", "smoke"],
                 ["list", "--status", "--scale", "smoke", "--experiment", EXP],
                 ["plan", "--scale", "smoke", "--experiment", EXP]):
        for root in (afile, afile / "cells"):
            assert C.main([*argv, "--root", str(root)]) == 2, argv
            line = _one_line_error(capsys)
            assert f"the shard root {root} " in line and "a file, not a folder" in line
            assert "give --root" in line
    assert afile.read_text() == "x"


# ----------------------------------------------------------------------------- 5. counts
def test_the_summary_counts_one_altered_shard_of_a_repacked_bundle_as_one(tmp_path, good,
                                                                          capsys):
    files = dict(good.files)
    data = files[MEMBERS[0]]
    at = data.index(b'"data":[[') + 12
    files[MEMBERS[0]] = data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]
    folders = [_info(n, 0, tarfile.DIRTYPE) for n in ("cells", f"cells/{EXP}",
                                                      f"cells/{EXP}/smoke")]
    bad = _pack(tmp_path / "repacked.tar.gz", files, first=folders)  # as `tar czf` repacks
    root = tmp_path / "root"
    assert C.main(["import", str(bad), "--root", str(root)]) == 1
    out, err = capsys.readouterr()
    assert "installed 2 of 3 shards" in out
    assert err.splitlines() == [
        f"refused {MEMBERS[0]}: altered: its bytes differ from the SHA-256 in the manifest",
        "error: refused 1 of 3 shards listed in the manifest (1 altered); installed 2 of 3 "
        "listed shards (each named above)"]
    assert sorted(p.name for p in _all_files(root / EXP)) == sorted(
        f"{i}.shard.json" for i in IDS[1:])


def test_the_summary_counts_each_reason(tmp_path, good):
    files = dict(good.files)
    manifest = json.loads(json.dumps(good.manifest))
    files[MEMBERS[0]] = files[MEMBERS[0]].replace(b'"data":[[', b'"data":[[ ', 1)  # altered
    obj = json.loads(files[MEMBERS[1]])  # a shard of other code, consistently hashed
    obj["result"]["code_key"] = "0" * 64
    obj["result_sha256"] = cells_shardfile.sha256_of(obj["result"])
    files[MEMBERS[1]] = cells_shardfile.canonical_bytes(obj)
    entry = next(e for e in manifest["shards"] if e["member"] == MEMBERS[1])
    entry.update(file_sha256=hashlib.sha256(files[MEMBERS[1]]).hexdigest(),
                 result_sha256=obj["result_sha256"], code_key="0" * 64)
    files[f"cells/{EXP}/smoke/extra-000000000000.shard.json"] = b"{}"
    files[f"cells/{EXP}/smoke/other-000000000000.shard.json"] = b"{}"
    rep = C.import_bundle(_pack(tmp_path / "mixed.tar.gz", files, manifest=manifest),
                          root=tmp_path / "root")
    assert rep.listed == 3 and len(rep.installed) == 1 and len(rep.refused) == 4
    assert rep.counts() == {"unlisted": 2, "altered": 1, "stale here": 1}
    assert rep.summary() == ("refused 2 of 3 shards listed in the manifest (1 altered, 1 stale "
                             "here) and 2 files the manifest does not list; installed 1 of 3 "
                             "listed shards")
    assert C.import_bundle(good.path, root=tmp_path / "root").summary() is None


# ----------------------------------------------------------------------------- 6. metadata
def test_the_manifest_carries_deposit_metadata_from_citation_cff(tmp_path, good):
    meta = good.manifest["metadata"]
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert meta["title"].startswith(cff["title"]) and "scale smoke" in meta["title"]
    assert meta["version"] == str(cff["version"]) and meta["license"] == cff["license"]
    assert meta["creators"] and meta["creators"][0]["name"] == (
        cff["authors"][0].get("name") or cff["authors"][0]["family-names"])
    assert meta["source"] == "CITATION.cff" and meta["upload_type"] == "dataset"
    ids = {r["identifier"]: r for r in meta["related_identifiers"]}
    for ref in cff.get("references") or []:
        for i in ref.get("identifiers") or []:
            assert ids[i["value"]]["relation"] == "references"
        if ref.get("url"):
            assert ids[ref["url"]]["scheme"] == "url"
    assert meta["commit"] == good.manifest["commit"] and meta["seed"] == 0
    json.dumps(meta)  # plain JSON


def test_metadata_says_so_when_citation_cff_is_absent_or_unreadable(tmp_path, good):
    meta_mod = importlib.import_module("fusionlib.compendium.cells.bundle_meta")
    absent = meta_mod.bundle_metadata("smoke", 0, "c" * 40, citation=tmp_path / "CITATION.cff")
    assert absent["source"] is None and "no CITATION.cff in this checkout" in absent["note"]
    assert "title" not in absent and absent["scale"] == "smoke"
    broken = tmp_path / "broken.cff"
    broken.write_text("title: [unclosed\n")
    meta = meta_mod.bundle_metadata("cpu", 1, "c" * 40, citation=broken)
    assert meta["note"].startswith("broken.cff is unreadable (")
    dated = tmp_path / "dated.cff"
    dated.write_text("title: T\nversion: 2\ndate-released: 2024-01-02\ndoi: 10.5281/x\n"
                     "authors:\n  - family-names: Doe\n    given-names: Jo\n"
                     "    orcid: https://orcid.org/0000-0000-0000-0001\n")
    meta = meta_mod.bundle_metadata("cpu", 1, "c" * 40, citation=dated)
    assert meta["creators"] == [{"name": "Doe, Jo", "orcid": "0000-0000-0000-0001"}]
    assert meta["related_identifiers"] == [{"identifier": "10.5281/x", "relation":
                                            "isSupplementTo", "scheme": "doi",
                                            "resource_type": "other"}]
    rep = C.export_bundle("smoke", root=good.here, out=tmp_path / "x.tar.gz",
                          experiments=[EXP], citation=tmp_path / "none.cff")
    with tarfile.open(rep.path) as tar:
        assert json.load(tar.extractfile("manifest.json"))["metadata"]["source"] is None


# ----------------------------------------------------------------------------- 7. fuzz
_VALUES = ["../x", "/abs", "", None, 0, -1, True, [], {}, "a" * 300, "cells/../../x", "paper",
           "0" * 64, "é\n\x1b[31m", 1e308, [[[]]], IDS[2], EXP, f"cells/{EXP}/smoke/../x",
           MEMBERS[1], "../escaped/relx"]
_NAMES = ["../f.shard.json", "/tmp/fusionlib-fuzz-abs", "cells/../x", f"cells/{EXP}/smoke/",
          f"cells/{EXP}/smoke/..", f"cells/{EXP}/cpu/{IDS[0]}.shard.json", "manifest.json",
          f"./{MEMBERS[0]}", "cells", "", "é", MEMBERS[1], f"{MEMBERS[0]}/x"]
_KINDS = [tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE]
_KEYS = ["experiment", "cell_id", "member", "file_sha256", "result_sha256", "run_sha256",
         "code_key", "label"]
_TOP = ["scale", "seed", "bundle_format", "shards", "missing", "devices", "machine",
        "environment", "metadata"]


def _mutate(rng: np.random.Generator, good: Good) -> tuple[dict[str, bytes], list]:
    files = dict(good.files)
    manifest = json.loads(json.dumps(good.manifest))
    extra: list[tarfile.TarInfo] = []
    pick = lambda seq: seq[int(rng.integers(len(seq)))]  # noqa: E731
    for _ in range(int(rng.integers(1, 4))):
        what = int(rng.integers(7))
        shards = manifest.get("shards")
        if what in (0, 5) and not (isinstance(shards, list) and shards
                                   and all(isinstance(e, dict) for e in shards)):
            what = 1  # the entries were replaced by an earlier mutation
        if what == 0:
            entry = pick(shards)
            key = pick(_KEYS)
            if rng.random() < 0.2:
                entry.pop(key, None)
            else:
                entry[key] = pick(_VALUES)
        elif what == 1:
            manifest[pick(_TOP)] = pick(_VALUES)
        elif what == 2:  # a member renamed
            old = pick(MEMBERS)
            if old in files:
                files[pick(_NAMES)] = files.pop(old)
        elif what == 3:  # an extra entry of some kind
            kind = pick(_KINDS)
            size = int(rng.integers(1, 50)) if kind == tarfile.REGTYPE else 0
            extra.append(_info(pick(_NAMES), size, kind, pick(["", "/etc/passwd", MEMBERS[0],
                                                                "../.."])))
        elif what == 4:  # bytes of a shard flipped or cut
            name = pick(MEMBERS)
            if name in files and files[name]:
                data = bytearray(files[name])
                at = int(rng.integers(len(data)))
                if rng.random() < 0.5:
                    data[at] ^= int(rng.integers(1, 256))
                else:
                    del data[at:]
                files[name] = bytes(data)
        elif what == 5:  # entries swapped (one relabelled), duplicated or dropped
            i, j = (int(rng.integers(len(shards))) for _ in range(2))
            choice = int(rng.integers(3))
            if choice == 0:
                shards[i], shards[j] = shards[j], shards[i]
                shards[i]["member"] = shards[j]["member"]
            elif choice == 1:
                shards.append(dict(shards[i]))
            else:
                del shards[i]
        else:  # a byte of the manifest's JSON flipped
            raw = bytearray(json.dumps(manifest).encode())
            raw[int(rng.integers(len(raw)))] ^= int(rng.integers(1, 128))
            files["manifest.json"] = bytes(raw)
            return files, extra
    files["manifest.json"] = json.dumps(manifest).encode()
    return files, extra


def test_fuzzed_manifests_and_member_names_are_refused_or_installed_inside_the_root(tmp_path,
                                                                                     good):
    rng = np.random.default_rng(20251128)
    outcomes = {"refused whole": 0, "installed": 0, "nothing installed": 0}  # of 300
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    for k in range(300):
        files, extra = _mutate(rng, good)
        bundle = _pack(bundles / f"{k}.tar.gz", files, extra=extra)
        if rng.random() < 0.2:  # bytes of the tar stream itself (headers too) flipped
            raw = bytearray(gzip.decompress(bundle.read_bytes()))
            for _ in range(int(rng.integers(1, 4))):
                raw[int(rng.integers(len(raw)))] ^= int(rng.integers(1, 256))
            bundle.write_bytes(gzip.compress(bytes(raw), compresslevel=1))
        sandbox = tmp_path / "fuzz" / str(k)
        root = sandbox / "deep" / "root"
        try:
            rep = C.import_bundle(bundle, root=root)
        except InvalidInputError as exc:  # one line, no control characters from the input
            assert not any(ord(ch) < 32 for ch in str(exc)), (k, str(exc))
            outcomes["refused whole"] += 1
            assert _all_files(sandbox) == [], k
            continue
        outcomes["installed" if rep.installed else "nothing installed"] += 1
        for p in _all_files(sandbox):
            rel = p.relative_to(root)  # raises for a file outside the root
            assert rel.parts[0] == "_imports" or (
                rel.parts[:2] == (EXP, "smoke") and p.name in {f"{i}.shard.json" for i in IDS}
            ), (k, rel)
        assert {p.relative_to(root).as_posix() for p in rep.installed} <= {
            m.removeprefix("cells/") for m in MEMBERS}
        assert rep.summary() is None or rep.refused
    assert not list(tmp_path.glob("**/fusionlib-fuzz-abs")) and not Path(
        "/tmp/fusionlib-fuzz-abs").exists()
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "fuzz" / "escaped").exists()
    assert outcomes["refused whole"] > 0 and outcomes["installed"] > 0, outcomes
