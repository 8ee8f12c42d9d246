"""Lemmas 6-8 and Proposition 4's constructions (fusionlib.ptgan.theory.approx)."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import fusionlib.ptgan.theory.approx as ta
from fusionlib.errors import InvalidInputError


def test_square_approx_by_hand():
    # m = 1: f_1(x) = x - g(x)/4; g(1/4) = 1/2 -> f_1(1/4) = 1/8 while (1/4)^2 = 1/16: the
    # error 1/16 = 4^-2 attains Lemma 6's bound; g(1/2) = 1 -> f_1(1/2) = 1/4 exactly
    assert ta.square_approx(np.array([0.25]), 1)[0] == pytest.approx(0.125)
    assert ta.square_approx(np.array([0.5]), 1)[0] == pytest.approx(0.25)


@pytest.mark.parametrize("m", [1, 2, 5])
def test_square_network_is_the_construction_and_meets_the_bound(m):
    x = np.linspace(0, 1, 2**12 + 1)
    net = ta.square_network(m)
    assert len(net) == m + 1 and max(w.shape[0] for w, _ in net) <= 7
    assert_allclose(ta.network_eval(net, x), ta.square_approx(x, m), atol=1e-13)
    err = np.abs(x**2 - ta.square_approx(x, m)).max()
    assert err == pytest.approx(4.0 ** -(m + 1))


def test_lemma6_check_fails_on_a_broken_tooth(monkeypatch):
    # a tooth of the wrong height breaks the construction: the error exceeds 4^-(m+1)
    monkeypatch.setattr(ta, "tooth", lambda x: 0.9 * (2 * np.maximum(x, 0)
                                                   - 4 * np.maximum(x - 0.5, 0)
                                                   + 2 * np.maximum(x - 1, 0)))
    x = np.linspace(0, 1, 1025)
    assert np.abs(x**2 - ta.square_approx(x, 3)).max() > 4.0**-4


def test_product_at_the_stated_depth_misses_4_to_the_minus_l():
    g = np.linspace(-1, 1, 201)
    x, y = (a.ravel() for a in np.meshgrid(g, g))
    err = np.abs(ta.product_approx(x, y, 3, 1.0) - x * y).max()  # eta depth 4: L = 4
    # each eta errs by up to 4^-L, so |2 M^2 (e1 - e2 - e3)| can reach about 4 x 4^-L
    assert 3 * 4.0**-4 < err <= 4 * 4.0**-4 + 1e-12
    deep = ta.eta_depth_for(4, 1.0)
    assert deep == 4 + math.ceil(math.log(6, 4))
    assert np.abs(ta.product_approx(x, y, deep - 1, 1.0) - x * y).max() <= 4.0**-4


def test_product_refuses_arguments_outside_the_bound():
    with pytest.raises(InvalidInputError, match="M"):
        ta.product_approx(np.array([2.0]), np.array([0.0]), 2, 1.0)


@pytest.mark.parametrize("d_x", [1, 3])
def test_interpolation_error_meets_lemma8(d_x):
    for L in (2, 3, 4):
        assert ta.interpolation_error(L, d_x, n_grid=101) <= math.sqrt(d_x) * 4.0**-L


def test_adaptive_interpolant_is_exact_on_a_line_and_improves_with_pieces():
    u = (np.arange(1000) + 0.5) / 1000
    _, err = ta.adaptive_interpolant(2 * u + 1, u, 1)
    assert err == pytest.approx(0.0, abs=1e-12)
    q = ta.mixture_quantile(u)
    errs = [ta.adaptive_interpolant(q, u, k)[1] for k in (2, 8, 32)]
    assert errs[0] > errs[1] > errs[2]


def test_fit_exponent_recovers_a_power_law():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    slope, se = ta.fit_exponent(x, 3 * x**-2.0)
    assert slope == pytest.approx(-2.0) and se == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(InvalidInputError):
        ta.fit_exponent([1, 2], [1, 2])


def test_planted_faults_of_lemmas_7_and_8_break_the_bounds():
    g = np.linspace(-2, 2, 81)
    x, y = (a.ravel() for a in np.meshgrid(g, g))
    m = ta.eta_depth_for(3, 1.0) - 1
    assert np.abs(ta.product_approx(x, y, m, 1.0, strict=False) - x * y).max() > 1.0
    assert ta.interpolation_error(3, 1, n_grid=61, outputs=2.0) > 4.0**-3
