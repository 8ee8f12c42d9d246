"""Image-generation scores as a chain of pure stages: features -> statistics -> number.

* :func:`frechet_distance` between two Gaussians ``N(mu1, S1)`` and ``N(mu2, S2)``:
  ``||mu1 - mu2||^2 + tr(S1 + S2 - 2 (S1 S2)^(1/2))`` (Dowson & Landau 1982; the FID of Heusel
  et al. 2017 when the features are InceptionV3's pool features). The trace of the matrix square
  root is computed from the eigenvalues of ``S1^(1/2) S2 S1^(1/2)`` (symmetric positive
  semi-definite), which needs no complex arithmetic and no ``scipy.linalg.sqrtm``.
* :func:`feature_statistics` and :func:`frechet_from_features`: the stages before it.
* :func:`inception_score` from class probabilities: ``exp(E_x KL(p(y|x) || p(y)))``
  (Salimans et al. 2016), optionally averaged over ``splits`` as is customary.

Which network produces the features and probabilities is the caller's business: at paper scale
torch-fidelity's InceptionV3 (:func:`torch_fidelity_scores`, an optional import used on GPU
runners only); offline, a classifier trained in the project on the real training set. Scores on
other features are *not* Inception scores and are never comparable to the published numbers.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from fusionlib.checks import check_positive_int
from fusionlib.errors import DataUnavailableError, InvalidInputError

__all__ = ["feature_statistics", "frechet_distance", "frechet_from_features",
           "inception_score", "require_torch_fidelity", "torch_fidelity_scores"]


def _floats(name: str, x: object) -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be numeric, got {type(x).__name__} ({exc}); pass "
                                "arrays of numbers") from None


def _as_2d(name: str, x: object, min_rows: int = 2) -> np.ndarray:
    arr = _floats(name, x)
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D array (n, features), got shape "
                                f"{arr.shape}")
    if arr.shape[0] < min_rows:
        raise InvalidInputError(f"{name} needs at least {min_rows} rows, got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} contains NaN or infinite values")
    return arr


def feature_statistics(features: object) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``(k,)`` and unbiased covariance ``(k, k)`` of ``(n, k)`` features (n >= 2)."""
    f = _as_2d("features", features)
    return f.mean(axis=0), np.cov(f, rowvar=False, ddof=1).reshape(f.shape[1], f.shape[1])


def _check_covariance(name: str, s: np.ndarray, eigenvalues: np.ndarray) -> None:
    """Refuse a matrix that is not symmetric or has a negative eigenvalue beyond rounding (the
    clipped square root would otherwise hide it, e.g. -I gave a distance of 0)."""
    size = float(np.abs(s).max()) if s.size else 0.0
    asym = float(np.abs(s - s.T).max()) if s.size else 0.0
    if asym > 1e-6 * size:
        raise InvalidInputError(
            f"{name} is not symmetric (largest |S - S^T| = {asym:.3g}); pass a covariance "
            "matrix, e.g. from feature_statistics(features)")
    if eigenvalues.size and eigenvalues.min() < -1e-6 * float(np.abs(eigenvalues).max()):
        raise InvalidInputError(
            f"{name} is not positive semi-definite (smallest eigenvalue "
            f"{eigenvalues.min():.3g}); pass a covariance matrix, e.g. from "
            "feature_statistics(features)")


def frechet_distance(mu1: object, sigma1: object, mu2: object, sigma2: object) -> float:
    """Squared Fréchet (2-Wasserstein) distance between two Gaussians; >= 0.

    Covariances must be symmetric positive semi-definite ``(k, k)`` matrices (others are
    refused, beyond rounding).
    """
    m1, m2 = np.atleast_1d(_floats("mu1", mu1)), np.atleast_1d(_floats("mu2", mu2))
    s1, s2 = np.atleast_2d(_floats("sigma1", sigma1)), np.atleast_2d(_floats("sigma2", sigma2))
    k = m1.shape[0]
    if m1.shape != (k,) or m2.shape != (k,) or s1.shape != (k, k) or s2.shape != (k, k):
        raise InvalidInputError(
            f"shapes do not match: mu1 {m1.shape}, mu2 {m2.shape}, sigma1 {s1.shape}, "
            f"sigma2 {s2.shape}; give two means (k,) and two covariances (k, k)")
    for name, a in (("mu1", m1), ("mu2", m2), ("sigma1", s1), ("sigma2", s2)):
        if not np.all(np.isfinite(a)):
            raise InvalidInputError(f"{name} contains NaN or infinite values")
    w1, v1 = np.linalg.eigh((s1 + s1.T) / 2)
    _check_covariance("sigma1", s1, w1)
    _check_covariance("sigma2", s2, np.linalg.eigvalsh((s2 + s2.T) / 2))
    r1 = (v1 * np.sqrt(np.clip(w1, 0.0, None))) @ v1.T  # S1^(1/2)
    inner = r1 @ s2 @ r1
    eig = np.linalg.eigvalsh((inner + inner.T) / 2)
    tr_sqrt = float(np.sqrt(np.clip(eig, 0.0, None)).sum())
    value = float(((m1 - m2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2.0 * tr_sqrt)
    return max(value, 0.0)  # rounding can leave -1e-12 for identical inputs


def frechet_from_features(real: object, fake: object) -> float:
    """:func:`frechet_distance` between the Gaussian fits of two feature sets (n, k)."""
    return frechet_distance(*feature_statistics(real), *feature_statistics(fake))


def inception_score(probs: object, splits: int = 1, eps: float = 1e-12) -> tuple[float, float]:
    """``exp(E_x KL(p(y|x) || p(y)))`` from class probabilities ``(n, classes)``.

    Rows must be probability vectors. With ``splits > 1`` the score is computed on that many
    consecutive chunks and their mean and standard deviation are returned (``std`` is 0 for one
    split). It lies in ``[1, classes]``: 1 for a constant classifier output, ``classes`` for
    confident predictions spread evenly over every class.
    """
    p = _as_2d("probs", probs, min_rows=1)
    check_positive_int("splits", splits)
    if np.any(p < -1e-9) or not np.allclose(p.sum(axis=1), 1.0, atol=1e-4):
        raise InvalidInputError("probs must have non-negative rows that sum to 1 (apply "
                                "softmax to the classifier's logits)")
    if splits > p.shape[0]:
        raise InvalidInputError(f"splits={splits} exceeds the {p.shape[0]} rows")
    p = np.clip(p, 0.0, None)
    scores = []
    for chunk in np.array_split(p, splits):
        marginal = chunk.mean(axis=0, keepdims=True)
        kl = (chunk * (np.log(chunk + eps) - np.log(marginal + eps))).sum(axis=1)
        scores.append(float(np.exp(kl.mean())))
    return float(np.mean(scores)), float(np.std(scores))


def require_torch_fidelity() -> ModuleType:
    """The ``torch_fidelity`` module (imported, nothing computed).

    Raises
    ------
    DataUnavailableError
        It is not importable here, naming the install that brings it.
    """
    try:
        import torch_fidelity  # noqa: PLC0415  (optional GPU extra)
    except Exception as exc:  # ImportError, or torchvision failing beside a CPU torch
        why = f"{type(exc).__name__}: {exc}"
        raise DataUnavailableError(
            f"torch-fidelity is not importable here ({why}); it comes with the CUDA build "
            "(`make env TORCH=cuda`: torch-fidelity 0.4.0 and torchvision 0.28.0 from "
            "requirements-torch-cuda.lock) on a GPU runner with network access for the "
            "Inception weights") from None
    return torch_fidelity


def torch_fidelity_scores(generated: object, real: object, *, device: str = "cuda",
                          batch_size: int = 200) -> dict[str, float]:
    """IS and FID through torch-fidelity's InceptionV3 (paper scale, GPU runners only).

    ``generated`` and ``real`` are uint8 tensors ``(n, 3, H, W)``. torch-fidelity needs
    torchvision and downloads the Inception weights on first use; both are pinned in
    ``requirements-torch-cuda.lock`` (``make env TORCH=cuda``, the GPU runners' build) and left
    out of the CPU build.

    Raises
    ------
    DataUnavailableError
        torch-fidelity is not installed (the offline path uses classifier features instead).
    """
    torch_fidelity = require_torch_fidelity()
    import torch  # noqa: PLC0415

    class _Images(torch.utils.data.Dataset):
        def __init__(self, x):
            self.x = torch.as_tensor(x)

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.x[i]

    out = torch_fidelity.calculate_metrics(
        input1=_Images(generated), input2=_Images(real), isc=True, fid=True,
        cuda=device.startswith("cuda"), batch_size=batch_size, verbose=False)
    return {"is": float(out["inception_score_mean"]), "is_std": float(out["inception_score_std"]),
            "fid": float(out["frechet_inception_distance"])}
