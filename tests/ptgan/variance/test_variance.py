"""Tests of the gradient-variance tools (PTGAN Figures 2, 4, 8 and Proposition 5)."""

from __future__ import annotations

import pytest
import torch
from numpy.testing import assert_allclose
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.gan.diagnostics.variance import (
    critic_gradient_variance,
    critic_gradient_variances,
    last_layer_parameter_names,
    minibatch_gradient_variance,
    per_sample_gradients,
    trace_covariance,
)
from fusionlib.gan.networks import Critic
from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.variance.collapse import CollapseSetup, collapse_trace, sample_two_modes
from fusionlib.ptgan.variance.linear import (
    alpha_variance,
    paper_condition_holds,
    prop5_closed_form,
    prop5_monte_carlo,
    reduction_threshold,
)
from fusionlib.ptgan.variance.runs import gradient_noise, noisy_training_run


def _two_modes(mu: float, sd: float):
    return lambda n, g: sample_two_modes(n, mu, sd, g)


def _left_mode(mu: float, sd: float):
    return lambda n, g: -mu + sd * torch.randn(n, 1, generator=g)


def _pairs(n: int = 12, d: int = 2, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randn(n, d, generator=g) + 1.0, g


class LinearAlphaCritic(nn.Module):
    """D(x, a) = W_1^T [x, a] + b, the linear critic of Proposition 5."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d + 1, 1)

    def forward(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.lin(torch.cat([x, a[:, None]], dim=1)).squeeze(1)


# ----------------------------------------------------------------- Proposition 5: closed form
def test_alpha_variance_hand_values():
    # r = 1: alpha = 1 surely; r = 0: Var U(0,1) = 1/12; r = 1/3 is the maximum 1/9 (SM B.9)
    assert alpha_variance(1.0) == pytest.approx(0.0)
    assert alpha_variance(0.0) == pytest.approx(1 / 12)
    assert alpha_variance(1 / 3) == pytest.approx(1 / 9)
    assert alpha_variance(0.3) < alpha_variance(1 / 3) > alpha_variance(0.4)


def test_prop5_closed_form_hand_worked():
    # tr Cov X = 2, tr Cov G = 1, n_b = m_b = 4, r = 0.5:
    # untempered = 2/4 + 1/4 = 0.75; Var(alpha) = 0.5 (1/3 - 0.5/4) = 0.1041667
    # tempered = (2/3 + 0.5/3) 0.75 + 0.1041667 (1/4 + 1/4) = 0.625 + 0.0520833 = 0.6770833
    out = prop5_closed_form(2.0, 1.0, 0.5, 4, 4)
    assert out["untempered"] == pytest.approx(0.75)
    assert out["tempered"] == pytest.approx(0.6770833, rel=1e-6)
    shared = prop5_closed_form(2.0, 1.0, 0.5, 4, 4, pairing="shared")
    assert shared["tempered"] == pytest.approx(0.625)
    assert shared["alpha_term"] == 0.0


def test_prop5_identity_matches_brute_force_autograd_on_tiny_case():
    # brute force: an actual nn.Linear critic, autograd gradients of L_b per minibatch,
    # covariance over independent minibatches; n_b = m_b = 3, 1-D data
    critic = LinearAlphaCritic(1)
    mu, sd, r, nb = 1.0, 0.5, 0.4, 3
    from fusionlib.ptgan.tempering import interpolate, sample_alpha

    def draw(g):
        x1, x2 = _two_modes(mu, sd)(nb, g), _two_modes(mu, sd)(nb, g)
        y1, y2 = _left_mode(mu, sd)(nb, g), _left_mode(mu, sd)(nb, g)
        a, b = sample_alpha(nb, r, g), sample_alpha(nb, r, g)
        return interpolate(x1, x2, a), interpolate(y1, y2, b), a, b

    est, se = minibatch_gradient_variance(critic, draw, n_batches=2000, seed=3)
    # bias gradient is 1 - 1 = 0 (no variance), so the trace is that of W_1
    cf = prop5_closed_form(mu**2 + sd**2, sd**2, r, nb, nb)["tempered"]
    assert abs(est - cf) < 4 * se
    assert se < 0.08 * cf


@pytest.mark.parametrize("pairing", ["independent", "shared"])
@pytest.mark.parametrize("r", [0.0, 0.5, 0.99])
def test_prop5_monte_carlo_agrees_with_closed_form(r, pairing):
    res = prop5_monte_carlo(_two_modes(1.5, 0.1), _left_mode(1.5, 0.1),
                            trace_cov_x=1.5**2 + 0.01, trace_cov_g=0.01, r=r, n_b=10, m_b=10,
                            n_batches=10_000, seed=1, pairing=pairing)
    assert abs(res.z_tempered) < 4.0
    assert abs(res.z_untempered) < 4.0


def test_reduction_threshold_and_paper_condition_counterexample():
    assert reduction_threshold(0.0) == pytest.approx(0.5)
    assert reduction_threshold(0.99) == pytest.approx(0.5 + 1.5 * 0.99)
    # modes at +-0.5, sd 0.1, G on one mode: tr Cov X + tr Cov G = 0.26 + 0.01 = 0.27 >= 3 Var(a)
    # = 0.25 at r = 0, so the printed condition holds, yet 0.27 < 0.5: tempering adds variance
    assert paper_condition_holds(0.26, 0.01, 0.0)
    cf = prop5_closed_form(0.26, 0.01, 0.0, 10, 10)
    assert cf["tempered"] > cf["untempered"]
    res = prop5_monte_carlo(_two_modes(0.5, 0.1), _left_mode(0.5, 0.1), trace_cov_x=0.26,
                            trace_cov_g=0.01, r=0.0, n_b=10, m_b=10, n_batches=20_000, seed=2)
    assert res.mc_tempered - res.mc_untempered > 4 * (res.se_tempered + res.se_untempered)
    # modes at +-0.6: trace sum 0.38 >= 1/3 >= 3 Var(alpha) for every r, below 1/2 + 3r/2
    for r in (0.0, 1 / 3, 0.5, 0.9, 0.99):
        assert paper_condition_holds(0.37, 0.01, r)
        assert prop5_closed_form(0.37, 0.01, r, 10, 10)["ratio"] > 1.0
        assert prop5_closed_form(0.37, 0.01, r, 10, 10, pairing="shared")["ratio"] < 1.0


# ----------------------------------------------------------------- per-pair gradient variance
def test_per_sample_gradients_match_explicit_autograd_loop():
    real, fake, _ = _pairs(5)
    critic = Critic(2, (6, 5), seed=4)
    got = per_sample_gradients(critic, real, fake)
    for i in range(5):
        loss = critic(real[i : i + 1]).sum() - critic(fake[i : i + 1]).sum()
        grads = torch.autograd.grad(loss, list(critic.parameters()))
        row = torch.cat([g.reshape(-1) for g in grads])
        assert_allclose(got[i].numpy(), row.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("conditional", [False, True])
def test_ghost_norms_agree_with_vmap_reference(conditional):
    real, fake, g = _pairs(20, 3, seed=1)
    critic = Critic(3, (16, 16, 8), conditional=conditional, seed=2)
    a = torch.rand(20, generator=g) if conditional else None
    b = torch.rand(20, generator=g) if conditional else None
    groups = {"all": None, "last": last_layer_parameter_names(critic)}
    ghost = critic_gradient_variances(critic, real, fake, groups, real_alpha=a, fake_alpha=b,
                                      method="ghost")
    ref = critic_gradient_variances(critic, real, fake, groups, real_alpha=a, fake_alpha=b,
                                    method="vmap")
    assert_allclose([ghost["all"], ghost["last"]], [ref["all"], ref["last"]], rtol=1e-6)
    assert ghost["last"] < ghost["all"]


def test_trace_covariance_hand_value():
    # columns [1, 3] and [0, 0, ...]: variances 2 and 0 -> trace 2 (unbiased)
    assert trace_covariance(torch.tensor([[1.0, 5.0], [3.0, 5.0]])) == pytest.approx(2.0)


def test_variance_is_zero_when_fake_equals_real():
    real, _, _ = _pairs(8)
    critic = Critic(2, (8,), seed=0)
    assert critic_gradient_variance(critic, real, real.clone()) == pytest.approx(0.0, abs=1e-10)


def test_variance_scales_quadratically_with_critic_output_scale():
    # D' = c D gives dL'_i/dw = c dL_i/dw for every parameter, hence c^2 times the variance
    real, fake, _ = _pairs(10)
    critic = Critic(2, (8, 8), seed=5)

    class Scaled(nn.Module):
        def __init__(self, inner, c):
            super().__init__()
            self.inner, self.c = inner, c

        def forward(self, x):
            return self.c * self.inner(x)

    base = critic_gradient_variance(critic, real, fake, method="vmap")
    scaled = critic_gradient_variance(Scaled(critic, 3.0), real, fake, method="vmap")
    assert scaled == pytest.approx(9.0 * base, rel=1e-5)


def test_per_sample_trace_over_nb_matches_minibatch_trace_for_linear_critic():
    # for i.i.d. pairs tr Cov(dL_b/dw) = tr Cov_i(dL_i/dw) / n_b; with a linear critic both are
    # (tr Cov X + tr Cov Y)/n_b in expectation: here (1 + 1)/n_b per coordinate, d = 2 -> 4/n_b
    critic = nn.Linear(2, 1)
    g = torch.Generator().manual_seed(0)
    real, fake = torch.randn(4000, 2, generator=g), torch.randn(4000, 2, generator=g)
    per_pair = critic_gradient_variance(critic, real, fake)
    assert per_pair == pytest.approx(4.0, rel=0.05)


# ----------------------------------------------------------------- determinism
def _tiny_setup(**kw) -> CollapseSetup:
    return CollapseSetup(hidden=(8, 8), batch_size=16, n_iter=4, measure_every=2, **kw)


def test_collapse_trace_same_seed_same_output_other_seed_other():
    a = collapse_trace(_tiny_setup(r=0.9), seed=0)
    b = collapse_trace(_tiny_setup(r=0.9), seed=0)
    c = collapse_trace(_tiny_setup(r=0.9), seed=1)
    assert list(a["iteration"]) == [0, 2, 4]
    assert_allclose(a["grad_var"].to_numpy(), b["grad_var"].to_numpy())
    assert not a["grad_var"].equals(c["grad_var"])


def test_collapse_trace_with_coherency_penalty_runs():
    frame = collapse_trace(_tiny_setup(r=0.5, penalty="cp", penalty_weight=100.0), seed=0)
    assert frame["grad_var"].notna().all() and (frame["grad_var"] > 0).all()


def test_prop5_monte_carlo_deterministic():
    kw = dict(trace_cov_x=1.0, trace_cov_g=0.01, r=0.5, n_b=4, m_b=4, n_batches=200)
    a = prop5_monte_carlo(_two_modes(1.0, 0.1), _left_mode(1.0, 0.1), seed=5, **kw)
    b = prop5_monte_carlo(_two_modes(1.0, 0.1), _left_mode(1.0, 0.1), seed=5, **kw)
    c = prop5_monte_carlo(_two_modes(1.0, 0.1), _left_mode(1.0, 0.1), seed=6, **kw)
    assert a == b
    assert a.mc_tempered != c.mc_tempered


def test_noisy_training_run_deterministic_and_noise_matters():
    cfg = default_config("mp")
    kw = dict(n_iter=3, eval_at=[3], n_data=200, n_eval=50)
    a = noisy_training_run(cfg, 0.1, 0, **kw)
    b = noisy_training_run(cfg, 0.1, 0, **kw)
    c = noisy_training_run(cfg, 0.1, 1, **kw)
    clean = noisy_training_run(cfg, 0.0, 0, **kw)
    assert a["w1"].tolist() == b["w1"].tolist()
    assert a["w1"].tolist() != c["w1"].tolist()
    assert a["w1"].tolist() != clean["w1"].tolist()


def test_gradient_noise_has_sigma_and_is_removed_on_exit():
    lin = nn.Linear(50, 40)
    x = torch.randn(3, 50, generator=torch.Generator().manual_seed(0))
    clean = torch.autograd.grad(lin(x).sum(), lin.weight)[0]
    with gradient_noise(lin, 0.5, seed=0):
        noisy = torch.autograd.grad(lin(x).sum(), lin.weight)[0]
    after = torch.autograd.grad(lin(x).sum(), lin.weight)[0]
    assert float((noisy - clean).std()) == pytest.approx(0.5, rel=0.05)
    assert_allclose(after.numpy(), clean.numpy())


# ----------------------------------------------------------------- bad input
def test_mismatched_shapes_raise():
    real, fake, _ = _pairs(6)
    critic = Critic(2, (4,), seed=0)
    with pytest.raises(InvalidInputError, match="same shape"):
        critic_gradient_variance(critic, real, fake[:5])
    with pytest.raises(InvalidInputError, match=r"\(n, d\)"):
        critic_gradient_variance(critic, real[:, 0], fake[:, 0])
    with pytest.raises(InvalidInputError, match="at least 2"):
        critic_gradient_variance(critic, real[:1], fake[:1])


def test_bad_options_raise():
    real, fake, _ = _pairs(6)
    critic = Critic(2, (4,), seed=0)
    with pytest.raises(InvalidInputError, match="unknown parameter"):
        critic_gradient_variance(critic, real, fake, param_names=["nope"])
    with pytest.raises(InvalidInputError, match="both"):
        critic_gradient_variance(critic, real, fake, real_alpha=torch.ones(6))
    with pytest.raises(InvalidInputError, match="method"):
        critic_gradient_variance(critic, real, fake, method="fast")
    with pytest.raises(InvalidInputError):
        critic_gradient_variance(critic, real.numpy(), fake)
    with pytest.raises(InvalidInputError, match="penalty"):
        collapse_trace(CollapseSetup(penalty="gp"), seed=0)
    with pytest.raises(InvalidInputError, match="r must lie"):
        prop5_closed_form(1.0, 1.0, 1.5, 4, 4)
    with pytest.raises(InvalidInputError, match="n_b == m_b"):
        prop5_closed_form(1.0, 1.0, 0.5, 4, 5, pairing="shared")
    with pytest.raises(InvalidInputError, match="sigma"):
        with gradient_noise(critic, -1.0, seed=0):
            pass


def test_collapse_minibatches_hold_one_tempered_point_in_a_hundred():
    # Figure 4: "for the case of r = 0.99, there is only 1% of interpolated samples in each
    # minibatch": the training batches and the measurement batches alike
    from fusionlib.ptgan.tempering import minibatch_alpha
    from fusionlib.ptgan.variance import collapse as vc

    setup = CollapseSetup(mu2=1.5, r=0.99, batch_size=100).validate()
    g = torch.Generator().manual_seed(0)
    assert {int((vc._batch(setup, g)[0].alpha1 < 1).sum()) for _ in range(200)} == {1}
    u = torch.rand(2, 100, generator=g)
    assert int((minibatch_alpha(u[0], u[1], 0.99, g, setup.alpha_share) < 1).sum()) == 1
    with pytest.raises(InvalidInputError, match="alpha_share"):
        CollapseSetup(alpha_share="sometimes").validate()
