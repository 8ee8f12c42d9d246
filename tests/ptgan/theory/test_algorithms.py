"""Algorithms 1 and 3 worked by hand (fusionlib.ptgan.theory.algorithms)."""

import numpy as np
import pytest

import fusionlib.ptgan.theory.algorithms as alg
from fusionlib.ptgan.tempering import TemperedBatch, tempered_minibatch

X6 = np.array([[0, 0], [2, 0], [0, 2], [2, 2], [1, 3], [3, 1]], dtype=float)


def test_algorithm1_by_hand_matches_the_implementation():
    steps, dev = alg.algorithm1_worked(X6, 5, 0.6, 0)
    assert dev <= 1e-6
    assert int(steps.tempered.sum()) == 2  # (1 - r) n_b = 2 rows at alpha < 1
    assert (steps.loc[~steps.tempered, "alpha1"] == 1.0).all()
    untempered = steps[~steps.tempered]
    # an untempered row is its first data point: q1 = x
    assert np.allclose(untempered["q1[0]"], X6[untempered["x index"], 0])


def test_algorithm1_check_fails_on_a_broken_implementation(monkeypatch):
    # an implementation that swaps the roles of x and x' is caught by the hand computation
    def swapped(x, n, r, generator, share="fixed"):
        tb = tempered_minibatch(x, n, r, generator, share=share)
        q1 = tb.q1.clone()
        return TemperedBatch(q1=q1.flip(0), q2=tb.q2, q_tilde=tb.q_tilde, alpha1=tb.alpha1,
                             alpha2=tb.alpha2, nu=tb.nu, alpha_tilde=tb.alpha_tilde)

    monkeypatch.setattr(alg, "tempered_minibatch", swapped)
    _, dev = alg.algorithm1_worked(X6, 5, 0.6, 0)
    assert dev > 0.1


def test_algorithm3_by_hand_matches_one_iteration():
    out = alg.algorithm3_worked(X6, 1)
    assert out["loss_dev"] <= 1e-6
    assert out["critic_dev"] <= 1e-5 and out["generator_dev"] <= 1e-5
    assert out["critic_step"] > 1e-3 and out["generator_step"] > 1e-4  # both networks moved
    assert out["by_hand"]["H"] == pytest.approx(out["by_code"]["H"], rel=1e-5)
