"""Image loaders: shapes, ranges, hash checks and refusals."""

import gzip
import shutil

import numpy as np
import pytest

from fusionlib.data.images import (
    check_images,
    from_unit,
    image_grid,
    load_image_dataset,
    to_unit,
)
from fusionlib.data.store import data_dir
from fusionlib.errors import DataIntegrityError, DataUnavailableError, InvalidInputError

FASHION = data_dir() / "fashion_mnist"
needs_fashion = pytest.mark.skipif(not (FASHION / "t10k-images-idx3-ubyte.gz").exists(),
                                   reason="Fashion-MNIST not provisioned (make data)")


@needs_fashion
def test_fashion_mnist_padded_to_32px():
    x, y = load_image_dataset("fashion_mnist", "test", limit=50)
    assert x.shape == (50, 1, 32, 32) and x.dtype == np.uint8
    assert y.shape == (50,) and set(np.unique(y)) <= set(range(10))
    assert np.all(x[:, :, :2] == 0) and np.all(x[:, :, :, -2:] == 0)  # the padding
    full, _ = load_image_dataset("fashion_mnist", "test")
    assert len(full) == 10_000
    np.testing.assert_array_equal(full[:50], x)


def test_pixel_conversions_round_trip():
    x = np.arange(256, dtype=np.uint8).reshape(1, 1, 16, 16)
    u = to_unit(x)
    assert u.min() == -1.0 and u.max() == 1.0
    np.testing.assert_array_equal(from_unit(u), x)
    with pytest.raises(InvalidInputError, match="uint8"):
        to_unit(x.astype(float))


def test_check_images_refuses_bad_shapes_channels_and_ranges():
    good = np.zeros((4, 3, 32, 32), np.float32)
    check_images(good, 3, 32)
    with pytest.raises(InvalidInputError, match="N, C, H, W"):
        check_images(np.zeros((4, 32, 32)), 3, 32)
    with pytest.raises(InvalidInputError, match="channel"):
        check_images(np.zeros((4, 1, 32, 32)), 3, 32)
    with pytest.raises(InvalidInputError, match="32x32"):
        check_images(np.zeros((4, 3, 28, 28)), 3, 32)
    with pytest.raises(InvalidInputError, match=r"\[-1, 1\]"):
        check_images(good + 2.0, 3, 32)
    with pytest.raises(InvalidInputError, match=r"\[-1, 1\]"):
        check_images(np.full((1, 3, 32, 32), np.nan), 3, 32)
    with pytest.raises(InvalidInputError, match="uint8"):
        check_images(good, 3, 32, dtype="uint8")


def test_unknown_dataset_and_split_refused():
    with pytest.raises(InvalidInputError, match="dataset"):
        load_image_dataset("mnist")
    with pytest.raises(InvalidInputError, match="split"):
        load_image_dataset("fashion_mnist", "valid")


@needs_fashion
def test_altered_file_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "fashion_mnist"
    shutil.copytree(FASHION, folder)
    path = folder / "t10k-labels-idx1-ubyte.gz"
    raw = gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(raw[:-1] + bytes([(raw[-1] + 1) % 256])))
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path))
    with pytest.raises(DataIntegrityError):
        load_image_dataset("fashion_mnist", "test")


def test_missing_files_say_what_to_provide(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path))
    for name, file in (("cifar10", "cifar-10-python.tar.gz"), ("bloodmnist", "bloodmnist_64.npz"),
                       ("celeba_hq", "celeba_hq_256.zip")):
        with pytest.raises(DataUnavailableError, match=file):
            load_image_dataset(name)


def test_a_fake_cifar_archive_is_refused(tmp_path, monkeypatch):
    (tmp_path / "cifar10").mkdir()
    (tmp_path / "cifar10" / "cifar-10-python.tar.gz").write_bytes(b"not the archive")
    monkeypatch.setenv("FUSIONLIB_DATA", str(tmp_path))
    with pytest.raises(DataIntegrityError):
        load_image_dataset("cifar10")


def test_image_grid_tiles():
    x = np.zeros((5, 1, 4, 4), np.uint8)
    x[1] = 255
    g = image_grid(x, nrow=3)
    assert g.shape == (2 * 5 - 1, 3 * 5 - 1)
    assert g[0, 5:9].tolist() == [255] * 4
    assert image_grid(np.zeros((2, 3, 4, 4), np.uint8), nrow=2).shape == (4, 9, 3)
