"""Tests of the KL noise floor of seed 002's KL(A, Y) score (fusionlib.fairtest.kl_floor)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.kl_floor import (
    PAPER_ROUNDING,
    kl_noise_floor,
    kl_noise_floors,
    kl_tolerance,
)


def test_kl_noise_floor_hand_worked_value():
    # k = 4 cells, n = m = 100: n_eff = 1 / (1/100 + 1/100) = 50;
    # chi2.ppf(0.95, 3) = 7.814728, so the floor is 7.814728 / (2 * 50) = 0.07814728 nats
    assert kl_noise_floor(100, 100, 4) == pytest.approx(0.07814728, rel=1e-6)
    # its mean version: (k - 1) / 2 * (1/n + 1/m) = 1.5 * 0.02 = 0.03
    assert kl_noise_floor(100, 100, 4, quantile=0.5) == pytest.approx(
        chi2.ppf(0.5, 3) / 100, rel=1e-12)


def test_kl_noise_floor_matches_simulated_kl_between_two_samples():
    # Monte Carlo: KL(p_syn || p_real) of two independent multinomial samples of one law
    rng = np.random.default_rng(0)
    p, n, m, reps = np.array([0.4, 0.3, 0.2, 0.1]), 2000, 1500, 4000
    real = rng.multinomial(n, p, size=reps) / n
    syn = rng.multinomial(m, p, size=reps) / m
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(syn > 0, syn * np.log(syn / real), 0.0)
    kl = terms.sum(axis=1)
    assert np.quantile(kl, 0.95) == pytest.approx(kl_noise_floor(n, m, 4), rel=0.1)
    assert kl.mean() == pytest.approx(1.5 * (1 / n + 1 / m), rel=0.1)


def test_kl_noise_floor_shrinks_with_sample_size_and_grows_with_cells():
    assert kl_noise_floor(10_000, 10_000, 4) < kl_noise_floor(1_000, 1_000, 4)
    assert kl_noise_floor(1_000, 1_000, 6) > kl_noise_floor(1_000, 1_000, 4)


@pytest.mark.parametrize("args, match", [((0, 10, 4), "n_real"), ((10, 10, 1), "n_cells"),
                                         ((10, 2.5, 4), "n_synth")])
def test_kl_noise_floor_rejects_bad_sizes(args, match):
    with pytest.raises(InvalidInputError, match=match):
        kl_noise_floor(*args)


def test_kl_noise_floors_per_protected_attribute(compas_result):
    floors = kl_noise_floors(compas_result)
    n = len(compas_result.prepared.test)
    assert list(floors["attribute"]) == ["race", "sex"]
    assert (floors["cells"] == 4).all() and (floors["n_test"] == n).all()
    assert floors["floor"].iloc[0] == pytest.approx(kl_noise_floor(n, n, 4))


def test_kl_tolerance_adds_the_floor_the_rounding_and_half_the_paper_value():
    floors = {("adult", "sex"): 0.01}
    assert kl_tolerance(floors, "adult", "sex", 0.1) == pytest.approx(0.01 + PAPER_ROUNDING + 0.05)
    assert np.isnan(kl_tolerance(floors, "adult", "race", 0.1))
