"""A small image classifier trained in the project, whose features stand in for InceptionV3's.

The build machines reach no model hub, so there are no Inception weights offline; the image
chapter therefore scores generators with the Fréchet distance and the Inception-style score
computed on *this* classifier's penultimate features and class probabilities, trained on the
real training images. These are "classifier-FID" and "classifier-IS": internally consistent
(same classifier for every method), never comparable numerically with Inception-based values.

Training is seeded (:mod:`fusionlib.rng`), runs on one thread by default and never touches the
global random state.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from fusionlib import rng
from fusionlib.checks import check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.metrics.image_scores import frechet_from_features, inception_score

__all__ = ["FeatureClassifier", "classifier_scores", "train_feature_classifier"]


class FeatureClassifier(nn.Module):
    """Three conv + max-pool blocks, a ``feature_dim`` dense layer, then the class logits."""

    def __init__(self, channels: int, image_size: int, n_classes: int, *, width: int = 16,
                 feature_dim: int = 64, seed: int = 0) -> None:
        super().__init__()
        if image_size % 8:
            raise InvalidInputError(f"image_size must be a multiple of 8, got {image_size}")
        self.image_shape = (channels, image_size, image_size)
        g = rng.torch_generator(seed, "init")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(2**31 - 1, (1,), generator=g)))
            c = (channels, width, 2 * width, 4 * width)
            self.body = nn.Sequential(*[m for i in range(3) for m in (
                nn.Conv2d(c[i], c[i + 1], 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))])
            self.feature = nn.Linear(c[3] * (image_size // 8) ** 2, feature_dim)
            self.head = nn.Linear(feature_dim, n_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate features ``(n, feature_dim)`` of images ``(n, C, H, W)`` in [-1, 1]."""
        return torch.relu(self.feature(self.body(x).flatten(1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def _pixels(x: object) -> torch.Tensor:
    """Images as a float32 tensor; text and NaN or infinite pixels are refused."""
    try:
        t = torch.as_tensor(np.asarray(x, dtype=np.float32))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"images must be numeric pixel arrays, got {type(x).__name__} "
                                f"({exc})") from None
    if not bool(torch.isfinite(t).all()):
        raise InvalidInputError("images contain NaN or infinite pixels; a generator that "
                                "produces them has diverged (or clean the data first)")
    return t


def _labels(labels: object, n: int, n_classes: int | None) -> torch.Tensor:
    """Class indices 0..k-1 as a long tensor (k = ``n_classes`` or max + 1)."""
    y = np.asarray(labels)
    integral = y.dtype.kind in "biu" or (y.dtype.kind == "f" and np.isfinite(y).all()
                                        and (y % 1 == 0).all())
    if y.shape != (n,) or not integral:
        raise InvalidInputError(
            f"labels must be {n} integer class indices 0..k-1 (one per image), got shape "
            f"{y.shape} of dtype {y.dtype}; map class names first, e.g. pd.factorize(labels)[0]")
    k = int(n_classes) if n_classes else int(y.max()) + 1
    if y.size and (y.min() < 0 or y.max() >= k):
        raise InvalidInputError(f"labels must lie in 0..{k - 1} (n_classes={k}), got values "
                                f"from {y.min()} to {y.max()}; pass n_classes= to match")
    return torch.as_tensor(y, dtype=torch.long)


def _images(x: object, shape: tuple[int, ...]) -> torch.Tensor:
    t = _pixels(x)
    if t.ndim == 2 and t.shape[1] == int(np.prod(shape)):
        t = t.reshape(-1, *shape)
    if tuple(t.shape[1:]) != shape:
        raise InvalidInputError(f"images must have shape (n, {', '.join(map(str, shape))}), got "
                                f"{tuple(t.shape)}")
    return t


def train_feature_classifier(images: object, labels: object, *, seed: int, epochs: int = 2,
                             batch_size: int = 128, lr: float = 1e-3, width: int = 16,
                             n_classes: int | None = None) -> FeatureClassifier:
    """Train a :class:`FeatureClassifier` on images ``(n, C, H, W)`` in [-1, 1] and labels."""
    x = _pixels(images)
    if x.ndim != 4:
        raise InvalidInputError(f"need images (n, C, H, W) and labels (n,), got images of shape "
                                f"{tuple(x.shape)}")
    y = _labels(labels, x.shape[0], n_classes)
    check_positive_int("epochs", epochs)
    check_positive_int("batch_size", batch_size)
    check_positive("lr", lr)
    k = int(n_classes or int(y.max()) + 1)
    model = FeatureClassifier(x.shape[1], x.shape[2], k, width=width, seed=seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = rng.torch_generator(seed, "classifier-batches")
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), batch_size):
            idx = order[i:i + batch_size]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return model.eval()


@torch.no_grad()
def _outputs(model: FeatureClassifier, x: torch.Tensor, chunk: int = 500
             ) -> tuple[np.ndarray, np.ndarray]:
    feats, probs = [], []
    for i in range(0, len(x), chunk):
        f = model.features(x[i:i + chunk])
        feats.append(f.numpy())
        probs.append(torch.softmax(model.head(f), dim=1).double().numpy())
    return np.concatenate(feats), np.concatenate(probs)


def classifier_scores(model: FeatureClassifier, real: object, fake: object, *,
                      splits: int = 1) -> dict[str, float]:
    """Classifier-FID between ``real`` and ``fake`` images and classifier-IS of ``fake``.

    Images are ``(n, C, H, W)`` (or flat rows) in [-1, 1]. Returns ``fid``, ``is``, ``is_std``
    (named by the formula; they are *classifier* scores, see the module docstring).
    """
    model.eval()
    r = _images(real, model.image_shape)
    f = _images(fake, model.image_shape)
    fr, _ = _outputs(model, r)
    ff, pf = _outputs(model, f)
    is_mean, is_std = inception_score(pf, splits=splits)
    return {"fid": frechet_from_features(fr, ff), "is": is_mean, "is_std": is_std}


@torch.no_grad()
def accuracy(model: FeatureClassifier, images: object, labels: object) -> float:
    """Share of correctly classified images."""
    x = _images(images, model.image_shape)
    if np.shape(labels) != (len(x),):
        raise InvalidInputError(f"{len(x)} images but {np.size(labels)} labels; pass one label "
                                "per image")
    pred = np.concatenate([model(x[i:i + 500]).argmax(1).numpy() for i in range(0, len(x), 500)])
    return float((pred == np.asarray(labels)).mean())


__all__ += ["accuracy"]
