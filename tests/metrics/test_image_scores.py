"""Fréchet distance and Inception-style score: closed forms, an independent computation,
properties, and the project's feature classifier."""

import numpy as np
import pytest
import scipy.linalg

from fusionlib.errors import DataUnavailableError, InvalidInputError
from fusionlib.metrics.image_classifier import (
    accuracy,
    classifier_scores,
    train_feature_classifier,
)
from fusionlib.metrics.image_scores import (
    feature_statistics,
    frechet_distance,
    frechet_from_features,
    inception_score,
    require_torch_fidelity,
    torch_fidelity_scores,
)


def _random_cov(rng, k):
    a = rng.normal(size=(k, k))
    return a @ a.T + 0.1 * np.eye(k)


def test_identical_sets_give_zero():
    x = np.random.default_rng(0).normal(size=(200, 5))
    assert frechet_from_features(x, x) == pytest.approx(0.0, abs=1e-9)


def test_closed_form_diagonal_gaussians():
    # diagonal covariances commute: tr(S1 + S2 - 2 sqrt(S1 S2)) = sum (s1 - s2)^2 in std units
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    s1, s2 = np.array([1.0, 4.0, 9.0]), np.array([4.0, 1.0, 1.0])
    expected = 1.0 + 0.0 + 4.0 + (1 - 2) ** 2 + (2 - 1) ** 2 + (3 - 1) ** 2  # = 11
    assert frechet_distance(mu1, np.diag(s1), mu2, np.diag(s2)) == pytest.approx(expected)


def test_closed_form_scaled_covariance():
    # S2 = c^2 S1: tr(S1 + c^2 S1 - 2 c S1) = (1 - c)^2 tr S1
    rng = np.random.default_rng(1)
    s1 = _random_cov(rng, 4)
    mu = rng.normal(size=4)
    assert frechet_distance(mu, s1, mu + 2.0, 9.0 * s1) == pytest.approx(
        4 * 4.0 + 4.0 * np.trace(s1))


def test_against_scipy_sqrtm():
    rng = np.random.default_rng(2)
    for k in (1, 3, 8):
        s1, s2 = _random_cov(rng, k), _random_cov(rng, k)
        m1, m2 = rng.normal(size=k), rng.normal(size=k)
        covmean = scipy.linalg.sqrtm(s1 @ s2).real
        ref = ((m1 - m2) ** 2).sum() + np.trace(s1 + s2 - 2 * covmean)
        assert frechet_distance(m1, s1, m2, s2) == pytest.approx(ref, rel=1e-7, abs=1e-9)


def test_symmetric_and_grows_with_shift():
    rng = np.random.default_rng(3)
    s1, s2 = _random_cov(rng, 3), _random_cov(rng, 3)
    m = np.zeros(3)
    assert frechet_distance(m, s1, m, s2) == pytest.approx(frechet_distance(m, s2, m, s1))
    values = [frechet_distance(m, s1, m + d, s1) for d in (0.0, 0.5, 1.0, 2.0)]
    assert np.all(np.diff(values) > 0)
    assert values[0] == pytest.approx(0.0, abs=1e-9)


def test_feature_statistics_unbiased():
    x = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 8.0]])
    mu, cov = feature_statistics(x)
    np.testing.assert_allclose(mu, [2.0, 4.0])
    np.testing.assert_allclose(cov, np.cov(x.T, ddof=1))


def test_frechet_bad_input():
    with pytest.raises(InvalidInputError, match="shapes"):
        frechet_distance(np.zeros(2), np.eye(3), np.zeros(2), np.eye(2))
    with pytest.raises(InvalidInputError, match="NaN"):
        frechet_distance(np.array([np.nan]), np.eye(1), np.zeros(1), np.eye(1))
    with pytest.raises(InvalidInputError, match="at least 2"):
        feature_statistics(np.zeros((1, 3)))


def test_uniform_classifier_gives_one():
    assert inception_score(np.full((50, 10), 0.1))[0] == pytest.approx(1.0)


def test_confident_even_classifier_gives_class_count():
    probs = np.eye(4)[np.arange(40) % 4]
    assert inception_score(probs)[0] == pytest.approx(4.0, rel=1e-6)


def test_inception_score_hand_case():
    # two images, p(y|x) = (1, 0) and (0.5, 0.5); p(y) = (0.75, 0.25)
    # KL1 = log(1/0.75); KL2 = 0.5 log(0.5/0.75) + 0.5 log(0.5/0.25)
    kl1 = np.log(1 / 0.75)
    kl2 = 0.5 * np.log(0.5 / 0.75) + 0.5 * np.log(2.0)
    probs = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert inception_score(probs)[0] == pytest.approx(np.exp((kl1 + kl2) / 2))


def test_inception_score_splits_and_bad_input():
    probs = np.eye(2)[np.arange(20) % 2]
    mean, sd = inception_score(probs, splits=2)
    assert mean == pytest.approx(2.0) and sd == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(InvalidInputError, match="sum to 1"):
        inception_score(np.full((3, 2), 0.7))
    with pytest.raises(InvalidInputError, match="splits"):
        inception_score(probs, splits=30)


def test_torch_fidelity_absent_is_a_clear_error():
    pytest.importorskip("torch")
    try:
        import torch_fidelity  # noqa: F401
    except Exception:
        with pytest.raises(DataUnavailableError, match="torch-fidelity"):
            torch_fidelity_scores(np.zeros((2, 3, 32, 32), np.uint8),
                                  np.zeros((2, 3, 32, 32), np.uint8))
        with pytest.raises(DataUnavailableError, match="make env TORCH=cuda"):
            require_torch_fidelity()
    else:  # pragma: no cover - GPU runners only
        pytest.skip("torch-fidelity is installed")


def _toy_images(seed, n=240):
    # class k: a bright horizontal band at rows 4k..4k+7 of a 16 px image, plus noise
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    x = np.full((n, 1, 16, 16), -1.0, np.float32)
    for i, k in enumerate(y):
        x[i, 0, 4 * k: 4 * k + 6] = 1.0
    x += rng.normal(0, 0.1, size=x.shape).astype(np.float32)
    return np.clip(x, -1, 1), y


def test_feature_classifier_learns_and_good_beats_bad():
    x, y = _toy_images(0)
    model = train_feature_classifier(x, y, seed=0, epochs=8, batch_size=32, width=4)
    assert accuracy(model, x, y) > 0.9
    xt, _ = _toy_images(1)
    good = classifier_scores(model, x, xt)
    bad = classifier_scores(model, x, xt[_toy_images(1)[1] == 0])  # one class only
    assert good["fid"] < bad["fid"]
    assert good["is"] > bad["is"]


def test_feature_classifier_is_deterministic():
    x, y = _toy_images(0, 96)
    a = train_feature_classifier(x, y, seed=0, epochs=1, batch_size=32, width=4)
    b = train_feature_classifier(x, y, seed=0, epochs=1, batch_size=32, width=4)
    c = train_feature_classifier(x, y, seed=1, epochs=1, batch_size=32, width=4)
    sa, sb, sc = (classifier_scores(m, x, x[:48]) for m in (a, b, c))
    assert sa == sb
    assert sa != sc


@pytest.mark.parametrize("which, matrix, match", [
    ("sigma1", -np.eye(2), "not positive semi-definite"),
    ("sigma2", -np.eye(2), "not positive semi-definite"),
    ("sigma1", np.array([[1.0, 5.0], [0.0, 1.0]]), "not symmetric"),
    ("sigma2", np.array([[1.0, 0.0], [5.0, 1.0]]), "not symmetric"),
])
def test_frechet_refuses_a_matrix_that_is_not_a_covariance(which, matrix, match):
    """Such matrices gave a distance of 0 (clipped eigenvalues), with no error."""
    args = {"mu1": np.zeros(2), "sigma1": np.eye(2), "mu2": np.zeros(2), "sigma2": np.eye(2),
            which: matrix}
    with pytest.raises(InvalidInputError, match=f"{which} is {match}.*feature_statistics"):
        frechet_distance(**args)


def test_frechet_accepts_rank_deficient_covariances_with_rounding():
    x = np.random.default_rng(0).normal(size=(5, 40))  # 5 rows, 40 features: rank 4
    mu, s = feature_statistics(x)
    assert frechet_distance(mu, s, mu, s) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("call", [
    lambda: frechet_distance("a", "b", "c", "d"),
    lambda: frechet_from_features("abc", np.zeros((3, 2))),
    lambda: frechet_from_features([["a", "b"], ["c", "d"]], np.zeros((3, 2))),
    lambda: inception_score("abc"),
    lambda: inception_score([["a", "b"]]),
])
def test_text_instead_of_numbers_is_an_input_error(call):
    with pytest.raises(InvalidInputError, match="numeric"):
        call()


def test_classifier_refuses_nan_pixels_and_labels_out_of_range():
    x, y = _toy_images(0, 64)
    bad = x.copy()
    bad[3, 0, 2, 2] = np.nan
    with pytest.raises(InvalidInputError, match="images contain NaN or infinite"):
        train_feature_classifier(bad, y, seed=0, epochs=1, width=4)
    for labels, match in ((np.r_[y[:-1], 7], r"labels must lie in 0\.\.2 \(n_classes=3\)"),
                          (np.r_[y[:-1], -1], "labels must lie in"),
                          (y + 0.5, "integer class indices"),
                          (np.array(["a"] * 64), "integer class indices")):
        with pytest.raises(InvalidInputError, match=match):
            train_feature_classifier(x, labels, seed=0, epochs=1, width=4, n_classes=3)
    model = train_feature_classifier(x, y, seed=0, epochs=1, width=4)
    with pytest.raises(InvalidInputError, match="images contain NaN or infinite"):
        classifier_scores(model, x, bad)
    with pytest.raises(InvalidInputError, match="images contain NaN or infinite"):
        accuracy(model, bad, y)
    with pytest.raises(InvalidInputError, match="64 images but 10 labels"):
        accuracy(model, x, y[:10])
