import numpy as np
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.theory.moments import prop3_closed_form, prop3_monte_carlo


def test_closed_form_by_hand():
    # mu = (3, -3), sigma = 0.1: gap = 3/4 * 6 = 4.5
    # paper: sigma*^2 = 0.75 * 0.01 + 5 * 36 / 192 = 0.0075 + 0.9375 = 0.945
    # derived: 2/3 * 0.01 + 0.9375 = 0.944166...
    p = prop3_closed_form(3.0, -3.0, 0.1)
    d = prop3_closed_form(3.0, -3.0, 0.1, variant="derived")
    assert p.gap == d.gap == pytest.approx(4.5)
    assert p.sigma**2 == pytest.approx(0.945)
    assert d.sigma**2 == pytest.approx(0.01 * 2 / 3 + 0.9375)


def test_monte_carlo_matches_gap_and_the_derived_variance():
    mc = prop3_monte_carlo(1.0, -1.0, 1.0, n=200_000, seed=0)
    d = prop3_closed_form(1.0, -1.0, 1.0, variant="derived")
    assert mc["gap"] == pytest.approx(d.gap, abs=4 * mc["gap_se"])
    assert mc["sigma1"] == pytest.approx(d.sigma, abs=4 * mc["sigma_se"])
    assert mc["sigma2"] == pytest.approx(d.sigma, abs=4 * mc["sigma_se"])


def test_monte_carlo_rejects_the_printed_three_quarters_when_sigma_is_large():
    # sigma = 1, |mu1 - mu2| = 2: printed sigma* = 0.924, derived 0.878, se ~ 0.0014
    mc = prop3_monte_carlo(1.0, -1.0, 1.0, n=200_000, seed=1)
    p = prop3_closed_form(1.0, -1.0, 1.0)
    assert abs(mc["sigma1"] - p.sigma) > 10 * mc["sigma_se"]


def test_monte_carlo_is_seeded():
    a, b, c = (prop3_monte_carlo(3, -3, 0.1, 1000, s)["gap"] for s in (4, 4, 5))
    assert a == b and a != c


def test_components_union_has_the_law_of_q_alpha_with_uniform_alpha():
    # the construction with alpha ~ U(0.5, 1) reproduces Q^alpha with alpha ~ U(0, 1)
    rng = np.random.default_rng(0)
    n = 100_000
    c1, c2 = prop3_monte_carlo(2.0, -2.0, 0.5, n, seed=2)["samples"]
    x1 = np.where(rng.integers(2, size=n) == 0, 2.0, -2.0) + 0.5 * rng.standard_normal(n)
    x2 = np.where(rng.integers(2, size=n) == 0, 2.0, -2.0) + 0.5 * rng.standard_normal(n)
    a = rng.uniform(size=n)
    q = a * x1 + (1 - a) * x2
    qs = [0.05, 0.25, 0.5, 0.75, 0.95]
    np.testing.assert_allclose(np.quantile(np.r_[c1, c2], qs), np.quantile(q, qs), atol=0.03)


def test_bad_inputs_raise():
    with pytest.raises(InvalidInputError, match="sigma"):
        prop3_closed_form(1, -1, -0.5)
    with pytest.raises(InvalidInputError, match="variant"):
        prop3_closed_form(1, -1, 0.5, variant="mine")
