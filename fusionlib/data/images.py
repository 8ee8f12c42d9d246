"""Image datasets for PTGAN's image experiments, as ``uint8`` arrays ``(N, C, H, W)``.

Every file is located and hash-checked through the registry
(:func:`fusionlib.data.store.dataset_paths`): a missing file raises
:class:`~fusionlib.errors.DataUnavailableError` saying how to provide it, an altered one
:class:`~fusionlib.errors.DataIntegrityError`.

* ``fashion_mnist`` (offline, Debian package): 28 px grey images, zero-padded to 32 px (the
  cpu-scale stand-in for CIFAR-10: same side, one channel);
* ``cifar10``: ``cifar-10-python.tar.gz`` (the python pickles), 32 px RGB;
* ``bloodmnist``: MedMNIST's ``bloodmnist_64.npz``, 64 px RGB;
* ``celeba_hq``: a user-provided ``celeba_hq_256.zip`` of image files, read with Pillow and
  resized to 256 px when needed (labels are zeros: the attributes are not used).

:func:`to_unit` / :func:`from_unit` map pixels to the networks' range [-1, 1] and back, and
:func:`check_images` refuses images of the wrong shape, channel count or pixel range.
"""

from __future__ import annotations

import functools
import io
import pickle
import tarfile
import zipfile

import numpy as np

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.data.loaders import load_images
from fusionlib.data.store import data_dir, dataset_paths
from fusionlib.errors import InvalidInputError

__all__ = ["IMAGE_DATASETS", "check_images", "from_unit", "image_grid", "load_image_dataset",
           "to_unit"]

#: name -> (channels, side) of the arrays returned by :func:`load_image_dataset`
IMAGE_DATASETS: dict[str, tuple[int, int]] = {
    "fashion_mnist": (1, 32), "cifar10": (3, 32), "bloodmnist": (3, 64), "celeba_hq": (3, 256),
}


def _fashion(split: str) -> tuple[np.ndarray, np.ndarray]:
    return _fashion_cached(split, str(data_dir()))


@functools.lru_cache(maxsize=2)
def _fashion_cached(split: str, folder: str) -> tuple[np.ndarray, np.ndarray]:
    # keyed by the data folder, so another FUSIONLIB_DATA is read (and verified) afresh
    x, y = load_images("fashion_mnist", split)
    return np.pad(x[:, None], ((0, 0), (0, 0), (2, 2), (2, 2))), y


def _cifar(split: str) -> tuple[np.ndarray, np.ndarray]:
    path = dataset_paths("cifar10")["cifar-10-python.tar.gz"]
    wanted = ([f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"])
    parts: dict[str, dict] = {}
    with tarfile.open(path, "r:gz") as tar:
        for member in tar.getmembers():
            base = member.name.rsplit("/", 1)[-1]
            if base in wanted:
                parts[base] = pickle.load(tar.extractfile(member), encoding="bytes")  # noqa: S301
    missing = [w for w in wanted if w not in parts]
    if missing:
        raise InvalidInputError(f"{path} lacks {missing}; is it cifar-10-python.tar.gz?")
    x = np.concatenate([parts[w][b"data"] for w in wanted]).reshape(-1, 3, 32, 32)
    y = np.concatenate([parts[w][b"labels"] for w in wanted]).astype(np.int64)
    return x.astype(np.uint8), y


def _blood(split: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = load_images("bloodmnist", split)
    return np.ascontiguousarray(np.moveaxis(x, -1, 1)), y


def _celeba(split: str, limit: int | None) -> tuple[np.ndarray, np.ndarray]:
    from PIL import Image  # noqa: PLC0415  (Pillow comes with matplotlib)

    path = dataset_paths("celeba_hq")["celeba_hq_256.zip"]
    with zipfile.ZipFile(path) as zf:
        names = sorted(n for n in zf.namelist()
                       if n.lower().endswith((".png", ".jpg", ".jpeg")))
        if not names:
            raise InvalidInputError(f"{path} holds no .png/.jpg images")
        cut = int(0.9 * len(names))  # a fixed 90/10 split by sorted file name
        names = names[:cut] if split == "train" else names[cut:]
        names = names[:limit] if limit else names
        out = np.empty((len(names), 3, 256, 256), np.uint8)
        for i, n in enumerate(names):
            img = Image.open(io.BytesIO(zf.read(n))).convert("RGB")
            if img.size != (256, 256):
                img = img.resize((256, 256), Image.BILINEAR)
            out[i] = np.moveaxis(np.asarray(img), -1, 0)
    return out, np.zeros(len(out), np.int64)


def load_image_dataset(name: str, split: str = "train", *, limit: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(images uint8 (N, C, H, W), labels int64 (N,))`` of an image dataset.

    ``limit`` keeps the first ``limit`` images (cpu-scale subsets).
    """
    check_choice("dataset", name, tuple(IMAGE_DATASETS))
    check_choice("split", split, ("train", "test"))
    if limit is not None:
        check_positive_int("limit", limit)
    if name == "celeba_hq":
        return _celeba(split, limit)
    # the files are hash-checked on the first read of a process; Fashion-MNIST is then cached
    x, y = {"fashion_mnist": _fashion, "cifar10": _cifar, "bloodmnist": _blood}[name](split)
    x, y = (x[:limit], y[:limit]) if limit is not None else (x, y)
    x, y = x.copy(), y.copy()
    check_images(x, *IMAGE_DATASETS[name], dtype="uint8")
    return x, y


def check_images(x: object, channels: int, size: int, *, dtype: str = "float") -> np.ndarray:
    """Refuse anything but images ``(N, channels, size, size)`` in the expected range.

    ``dtype="uint8"``: integers in [0, 255]; ``"float"``: finite values in [-1, 1].
    """
    arr = np.asarray(x)
    if arr.ndim != 4:
        raise InvalidInputError(
            f"images must have shape (N, C, H, W), got {arr.shape}; add the channel axis "
            "(N, 1, H, W) for grey images")
    if arr.shape[1] != channels:
        raise InvalidInputError(f"images must have {channels} channel(s), got {arr.shape[1]} "
                                f"(shape {arr.shape}); channels come second (N, C, H, W)")
    if arr.shape[2:] != (size, size):
        raise InvalidInputError(f"images must be {size}x{size} px, got {arr.shape[2:]}")
    if dtype == "uint8":
        if arr.dtype != np.uint8:
            raise InvalidInputError(f"raw images must be uint8, got {arr.dtype}")
    elif not np.all(np.isfinite(arr)):
        raise InvalidInputError("pixel values must lie in [-1, 1]; got NaN or infinite values")
    elif arr.size and (arr.min() < -1.0 or arr.max() > 1.0):
        raise InvalidInputError(
            "pixel values must lie in [-1, 1] (convert uint8 images with to_unit); got range "
            f"[{arr.min():.3g}, {arr.max():.3g}]")
    return arr


def to_unit(x: np.ndarray) -> np.ndarray:
    """uint8 [0, 255] -> float32 [-1, 1]."""
    arr = np.asarray(x)
    if arr.dtype != np.uint8:
        raise InvalidInputError(f"to_unit expects uint8 pixels, got {arr.dtype}")
    return arr.astype(np.float32) / 127.5 - 1.0


def from_unit(x: object) -> np.ndarray:
    """float [-1, 1] -> uint8 [0, 255] (rounded, clipped)."""
    arr = np.asarray(x, dtype=np.float64)
    return np.clip(np.rint((arr + 1.0) * 127.5), 0, 255).astype(np.uint8)


def image_grid(images: object, nrow: int = 8) -> np.ndarray:
    """Tile ``(N, C, H, W)`` images into one ``(rows*H, nrow*W[, C])`` array (1 px gaps)."""
    arr = np.asarray(images)
    if arr.ndim != 4:
        raise InvalidInputError(f"images must have shape (N, C, H, W), got {arr.shape}")
    n, c, h, w = arr.shape
    rows = -(-n // nrow)
    fill = arr.max() if n else 0
    out = np.full((c, rows * (h + 1) - 1, nrow * (w + 1) - 1), fill, dtype=arr.dtype)
    for i in range(n):
        r, k = divmod(i, nrow)
        out[:, r * (h + 1): r * (h + 1) + h, k * (w + 1): k * (w + 1) + w] = arr[i]
    return out[0] if c == 1 else np.moveaxis(out, 0, -1)
