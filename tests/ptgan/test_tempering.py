import math

import numpy as np
import pytest
import torch
from torch.testing import assert_close

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tempering import (
    interpolate,
    minibatch_alpha,
    mixup_batch,
    n_tempered,
    reference_noise,
    sample_alpha,
    temperature,
    tempered_minibatch,
)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_temperature_is_symmetric_about_one_half():
    a = torch.linspace(0, 1, 101)
    assert_close(temperature(a), temperature(1 - a))


def test_temperature_known_values_and_bounds():
    # t(a) = 1 - 2|a - 0.5|: t(0) = t(1) = 0, t(0.5) = 1, t(0.25) = 0.5
    assert_close(temperature(torch.tensor([0.0, 1.0, 0.5, 0.25])),
                 torch.tensor([0.0, 0.0, 1.0, 0.5]))
    t = temperature(torch.rand(1000, generator=gen(0)))
    assert bool(((t >= 0) & (t <= 1)).all())


@pytest.mark.parametrize("r", [0.1, 0.5, 0.9])
def test_share_of_alpha_one_matches_r(r):
    n = 20_000
    alpha = sample_alpha(n, r, gen(1))
    share = (alpha == 1.0).float().mean().item()
    # Binomial(n, r) share: sd = sqrt(r (1 - r) / n); allow 4 sd
    assert share == pytest.approx(r, abs=4 * math.sqrt(r * (1 - r) / n))
    rest = alpha[alpha < 1.0]
    # the others are U(0, 1): mean 1/2, sd of the mean sqrt(1/12 / m)
    assert rest.mean().item() == pytest.approx(0.5, abs=4 * math.sqrt(1 / 12 / rest.numel()))


def test_alpha_and_noise_are_seeded():
    assert torch.equal(sample_alpha(50, 0.5, gen(1)), sample_alpha(50, 0.5, gen(1)))
    assert not torch.equal(sample_alpha(50, 0.5, gen(1)), sample_alpha(50, 0.5, gen(2)))
    for dist in ("normal", "uniform", "uniform_sign"):
        a, b, c = (reference_noise(20, 3, gen(s), distribution=dist) for s in (4, 4, 5))
        assert torch.equal(a, b) and not torch.equal(a, c)


def test_r_extremes():
    assert bool((sample_alpha(500, 1.0, gen(0)) == 1.0).all())
    assert not bool((sample_alpha(500, 0.0, gen(0)) == 1.0).any())


@pytest.mark.parametrize("r", [-0.1, 1.5])
def test_r_outside_unit_interval_raises(r):
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        sample_alpha(10, r, gen(0))
    with pytest.raises(InvalidInputError, match="r must lie"):
        tempered_minibatch(torch.zeros(5, 2), 4, r, gen(0))


def test_tempered_minibatch_follows_algorithm_1():
    # data {0, 1} in 1-D: every pair difference x - x' is -1, 0 or 1
    x = torch.tensor([[0.0], [1.0]])
    b = tempered_minibatch(x, 400, 0.5, gen(3))
    assert_close(b.q_tilde, b.nu[:, None] * b.q1 + (1 - b.nu[:, None]) * b.q2)
    assert_close(b.alpha_tilde, b.nu * b.alpha1 + (1 - b.nu) * b.alpha2)
    # Remark 4: q1 - q2 = (alpha1 - alpha2)(x - x')
    ratio = ((b.q1 - b.q2)[:, 0] / (b.alpha1 - b.alpha2))
    assert bool(torch.isclose(ratio.abs(), torch.tensor(1.0), atol=1e-4).logical_or(
        ratio.abs() < 1e-4).all())
    assert bool(((b.q1 >= 0) & (b.q1 <= 1) & (b.q2 >= 0) & (b.q2 <= 1)).all())


def test_tempered_points_at_alpha_one_are_data_rows():
    x = torch.randn(30, 3, generator=gen(0))
    b = tempered_minibatch(x, 200, 0.8, gen(5))
    rows = b.q1[b.alpha1 == 1.0]
    # 1 * x + 0 * x' is exactly x
    assert bool((rows[:, None, :] == x[None, :, :]).all(dim=2).any(dim=1).all())


def test_tempered_minibatch_is_seeded():
    x = torch.randn(50, 2, generator=gen(0))
    a, b, c = (tempered_minibatch(x, 16, 0.5, gen(s)) for s in (7, 7, 8))
    assert torch.equal(a.q1, b.q1) and torch.equal(a.alpha_tilde, b.alpha_tilde)
    assert not torch.equal(a.q1, c.q1)


def test_bad_data_shape_raises():
    with pytest.raises(InvalidInputError, match=r"\(N, d\)"):
        tempered_minibatch(torch.zeros(5), 4, 0.5, gen(0))


def test_interpolated_noise_at_alpha_one_or_zero_is_one_of_its_two_draws():
    # Z^1 = Z1 and Z^0 = Z2 exactly: the sign coordinates stay in {-1, 1} (no mixing)
    for a in (1.0, 0.0):
        z = reference_noise(400, 3, gen(2), alpha=torch.full((400,), a), interpolated=True,
                            distribution="uniform_sign")
        assert set(z[:, 1:].unique().tolist()) == {-1.0, 1.0}
    z1 = reference_noise(5, 3, gen(2), alpha=torch.ones(5), interpolated=True)
    z0 = reference_noise(5, 3, gen(2), alpha=torch.zeros(5), interpolated=True)
    half = reference_noise(5, 3, gen(2), alpha=torch.full((5,), 0.25), interpolated=True)
    assert_close(half, 0.25 * z1 + 0.75 * z0)  # the same two draws, convexly combined


def test_interpolated_noise_has_the_convex_combination_law():
    # Z ~ U(-1, 1): Var(Z^a) = (a^2 + (1 - a)^2) / 3; a = 0.5 -> 1/6
    z = reference_noise(40_000, 2, gen(9), alpha=torch.full((40_000,), 0.5), interpolated=True,
                        distribution="uniform")
    assert z.var().item() == pytest.approx(1 / 6, rel=0.03)


def test_interpolated_noise_without_alpha_raises():
    with pytest.raises(InvalidInputError, match="alpha"):
        reference_noise(4, 2, gen(0), interpolated=True)


def test_uniform_sign_noise_support():
    z = reference_noise(500, 3, gen(0), distribution="uniform_sign")
    assert bool((z[:, 0].abs() < 1).all())
    assert set(z[:, 1:].unique().tolist()) == {-1.0, 1.0}


def test_unknown_noise_distribution_lists_allowed():
    with pytest.raises(InvalidInputError, match="normal.*uniform"):
        reference_noise(4, 2, gen(0), distribution="cauchy")


def test_interpolate_rejects_mismatched_alpha():
    with pytest.raises(InvalidInputError, match="one weight per row"):
        interpolate(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(2))


def test_mixup_batch_mixes_real_and_fake_with_beta_labels():
    real, fake = torch.ones(20_000, 2), torch.zeros(20_000, 2)
    mixed, lam = mixup_batch(real, fake, gen(0), a=2.0, b=5.0)
    assert_close(mixed[:, 0], lam)  # lam * 1 + (1 - lam) * 0
    assert bool(((lam >= 0) & (lam <= 1)).all())
    # Beta(2, 5): mean 2/7, variance 2*5/(7^2 * 8) = 10/392
    sd_mean = math.sqrt(10 / 392 / lam.numel())
    assert lam.mean().item() == pytest.approx(2 / 7, abs=4 * sd_mean)
    assert lam.var().item() == pytest.approx(10 / 392, rel=0.05)


def test_mixup_beta_is_seeded_and_rejects_bad_parameters():
    r, f = torch.ones(8, 1), torch.zeros(8, 1)
    a, b, c = (mixup_batch(r, f, gen(s))[1] for s in (1, 1, 2))
    assert torch.equal(a, b) and not torch.equal(a, c)
    with pytest.raises(InvalidInputError, match="positive"):
        mixup_batch(r, f, gen(0), a=0.0)


def test_beta_small_parameter_law_matches_numpy():
    lam = mixup_batch(torch.ones(40_000, 1), torch.zeros(40_000, 1), gen(3), a=0.2, b=0.2)[1]
    ref = np.random.default_rng(0).beta(0.2, 0.2, size=40_000)
    qs = [0.1, 0.25, 0.5, 0.75, 0.9]
    np.testing.assert_allclose(np.quantile(lam.numpy(), qs), np.quantile(ref, qs), atol=0.02)


# ------------------------------------------------- the share of tempered rows per minibatch
def _tempered_counts(batch_size, r, n_draws, share=None, seed=0):
    x = torch.randn(200, 3, generator=gen(seed))
    g = gen(seed + 1)
    kw = {} if share is None else {"share": share}
    return [int((tempered_minibatch(x, batch_size, r, g, **kw).alpha1 < 1.0).sum())
            for _ in range(n_draws)]


def test_default_minibatch_holds_the_share_r_exactly():
    # Section 5.1: n_b = 50, r = 0.98, "there is only one interpolated image in every
    # minibatch"; Figure 4: r = 0.99, "only 1% of interpolated samples in each minibatch"
    assert set(_tempered_counts(50, 0.98, 300)) == {1}
    assert set(_tempered_counts(100, 0.99, 300)) == {1}
    assert set(_tempered_counts(100, 0.9, 100)) == {10}


def test_per_row_share_is_binomial():
    counts = np.array(_tempered_counts(50, 0.98, 2000, share="per_row"))
    # P(no tempered row) = 0.98^50 = 0.364; Binomial sd of the share over 2000 draws ~ 0.011
    assert (counts == 0).mean() == pytest.approx(0.98**50, abs=4 * 0.0108)


def test_fractional_share_rounds_at_random_keeping_the_expected_share():
    counts = np.array(_tempered_counts(64, 0.9, 2000))  # (1 - r) n = 6.4
    assert set(counts.tolist()) <= {6, 7}
    # mean 6.4, sd of one count sqrt(0.4 * 0.6) = 0.49, of the mean over 2000: 0.011
    assert counts.mean() == pytest.approx(6.4, abs=4 * 0.011)


@pytest.mark.parametrize(("n", "r", "expected"), [(100, 0.9, (10, 0.0)), (50, 0.98, (1, 0.0)),
                                                  (100, 0.5, (50, 0.0)), (10, 1.0, (0, 0.0))])
def test_n_tempered_of_the_papers_settings_is_whole(n, r, expected):
    assert n_tempered(n, r) == expected


def test_n_tempered_fraction():
    k, f = n_tempered(64, 0.99)
    assert k == 0 and f == pytest.approx(0.64)


def test_fixed_share_picks_random_rows():
    # every position is tempered equally often: 10 of 100 rows, 400 draws -> 40 per position
    x = torch.randn(200, 2, generator=gen(0))
    g = gen(3)
    hits = sum((tempered_minibatch(x, 100, 0.9, g).alpha1 < 1.0).float() for _ in range(400))
    # Binomial(400, 0.1) per position: mean 40, sd 6; every position within 5 sd
    assert bool(((hits - 40).abs() < 30).all()) and hits.sum().item() == 4000


def test_tempered_rows_of_a_fixed_share_are_uniform():
    a = minibatch_alpha(torch.rand(20_000, generator=gen(1)), torch.rand(20_000, generator=gen(2)),
                        0.5, gen(3))
    rest = a[a < 1.0]
    assert rest.numel() == 10_000
    assert rest.mean().item() == pytest.approx(0.5, abs=4 * math.sqrt(1 / 12 / rest.numel()))


def test_fixed_share_is_seeded():
    x = torch.randn(50, 2, generator=gen(0))
    a, b, c = (tempered_minibatch(x, 64, 0.99, gen(s)).alpha1 for s in (7, 7, 8))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_unknown_share_raises():
    with pytest.raises(InvalidInputError, match="alpha share"):
        tempered_minibatch(torch.zeros(5, 2), 4, 0.5, gen(0), share="binomial")
