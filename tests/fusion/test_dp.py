"""Tests of DP-SGD discriminators for FusionGAN (seed 000, Appendix I, privacy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.dp import (
    DEFAULT_ORDERS,
    DPConfig,
    DPFusionStep,
    FuncGradients,
    OpacusAccountant,
    OpacusGradients,
    RDPAccountant,
    clip_and_sum,
    compute_rdp,
    dp_fusion_step,
    epsilon,
    rdp_to_epsilon,
)
from fusionlib.fusion.step import FusionStep, fusion_step
from fusionlib.gan.trainer import Trainer
from fusionlib.rng import numpy_rng, torch_generator

INDICES = [[0, 1], [1, 2]]
CFG = FusionConfig(batch_size=16, hidden=16, latent_dim=8)
WGAN = FusionConfig(batch_size=16, hidden=16, latent_dim=8, loss="wgan-gp")


def make_data(n0=64, n1=80):
    r = numpy_rng(0, "dp-test-data")
    return (r.normal(size=(n0, 2)).astype(np.float32), r.uniform(0.5, 2, n0).astype(np.float32),
            r.normal(size=(n1, 2)).astype(np.float32), r.uniform(0.5, 2, n1).astype(np.float32))


def make_step(dp=None, cfg=CFG, seed=0):
    return dp_fusion_step(cfg, 3, INDICES, dp=dp or DPConfig(), names=("A", "B"), seed=seed)


def batch(cfg=CFG, m=16, seed=0):
    g = torch_generator(seed, "dp-batch")
    return (torch.randn(m, 2, generator=g), torch.rand(m, generator=g) + 0.5,
            torch.randn(m, 2, generator=g))


def state(step):
    return {f"{k}.{n}": t.clone() for k, m in step.modules().items()
            for n, t in m.state_dict().items()}


# ---------------------------------------------------------------------- accountant
def test_accountant_reproduces_the_opacus_documented_example():
    # opacus.accountants.analysis.rdp module docstring: (q, sigma, steps) = (1e-5, 1.0, 10)
    # and (1e-4, 3.0, 4), orders 2..32, delta 1e-5 -> epsilon 0.336 at order 23
    orders = range(2, 33)
    rdp = compute_rdp(1e-5, 1.0, 10, orders) + compute_rdp(1e-4, 3.0, 4, orders)
    eps, order = rdp_to_epsilon(orders, rdp, 1e-5)
    assert (round(eps, 3), order) == (0.336, 23)
    assert eps == pytest.approx(0.33634406339259565, rel=1e-9)  # opacus 1.6.0's value


def test_accountant_realistic_setting_matches_opacus_1_6_0():
    # n = 4,000 rows, batch 64 (q = 0.016), 2,000 steps, sigma 1, delta 1e-5: Opacus 1.6.0's
    # RDPAccountant gives 4.793913250492852 (optimal order 4.9)
    eps = epsilon(sample_rate=64 / 4000, noise_multiplier=1.0, steps=2000, delta=1e-5)
    assert eps == pytest.approx(4.793913250492852, rel=1e-9)


def test_gaussian_mechanism_without_subsampling():
    # q = 1: RDP(alpha) = alpha / (2 sigma^2) per step (Mironov 2017, Proposition 7)
    for sigma, steps in ((1.0, 1), (2.5, 7)):
        rdp = compute_rdp(1.0, sigma, steps)
        np.testing.assert_allclose(rdp, steps * np.array(DEFAULT_ORDERS) / (2 * sigma**2),
                                   rtol=1e-15)
        a = np.array(DEFAULT_ORDERS)
        by_hand = (rdp + np.log((a - 1) / a) - (np.log(1e-5) + np.log(a)) / (a - 1)).min()
        assert rdp_to_epsilon(DEFAULT_ORDERS, rdp, 1e-5)[0] == pytest.approx(by_hand, rel=1e-14)


def test_fractional_order_against_numerical_integration():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    q, sigma, alpha = 0.016, 1.0, 4.9

    def density_ratio_moment():  # E_{mu0} (mu / mu0)^alpha, mu = (1 - q) N(0, s) + q N(1, s)
        def f(z):
            mu0 = mp.npdf(z, 0, sigma)
            return mu0 * (((1 - q) * mu0 + q * mp.npdf(z, 1, sigma)) / mu0) ** alpha
        return mp.quad(f, [-mp.inf, -20, 0, 1, 20, mp.inf])

    exact = float(mp.log(density_ratio_moment()) / (alpha - 1))
    assert compute_rdp(q, sigma, 1, [alpha])[0] == pytest.approx(exact, rel=1e-9)


def test_epsilon_grows_with_steps_and_falls_with_noise():
    def eps(sigma, steps):
        return epsilon(sample_rate=0.016, noise_multiplier=sigma, steps=steps, delta=1e-5)

    by_steps = [eps(1.0, t) for t in (10, 100, 1000, 10000)]
    by_sigma = [eps(s, 1000) for s in (0.6, 0.8, 1.0, 2.0, 4.0)]
    assert all(a < b for a, b in zip(by_steps, by_steps[1:], strict=False))
    assert all(a > b for a, b in zip(by_sigma, by_sigma[1:], strict=False))
    assert eps(1.0, 0) == 0.0
    assert epsilon(sample_rate=0.016, noise_multiplier=0.0, steps=1, delta=1e-5) == math.inf
    assert epsilon(sample_rate=0.0, noise_multiplier=1.0, steps=100, delta=1e-5) == 0.0


def test_accountant_agrees_with_opacus_when_installed():
    pytest.importorskip("opacus")
    ours, theirs = RDPAccountant(), OpacusAccountant()
    for q in (1e-3, 0.016, 0.2, 0.9):
        for sigma in (0.5, 1.0, 3.0):
            kw = {"sample_rate": q, "noise_multiplier": sigma, "steps": 500}
            np.testing.assert_allclose(ours.rdp(**kw), theirs.rdp(**kw), rtol=1e-6, atol=1e-12)
            assert ours.epsilon(**kw, delta=1e-5) == pytest.approx(
                theirs.epsilon(**kw, delta=1e-5), rel=1e-9)


@pytest.mark.parametrize("delta", [0, 1, 1.5, -1e-5, float("nan"), True, "1e-5"])
def test_delta_must_lie_in_the_open_unit_interval(delta):
    with pytest.raises(InvalidInputError, match="delta must lie in"):
        epsilon(sample_rate=0.1, noise_multiplier=1.0, steps=1, delta=delta)


def test_accountant_rejects_bad_arguments():
    with pytest.raises(InvalidInputError, match="sample_rate"):
        compute_rdp(1.5, 1.0, 1)
    with pytest.raises(InvalidInputError, match="noise_multiplier"):
        compute_rdp(0.1, -1.0, 1)
    with pytest.raises(InvalidInputError, match="steps"):
        compute_rdp(0.1, 1.0, -1)
    with pytest.raises(InvalidInputError, match="orders"):
        compute_rdp(0.1, 1.0, 1, [1.0, 2.0])


def test_numpy_numbers_are_accepted_where_python_numbers_are():
    q, sigma, delta = np.float32(0.01), np.float32(1.1), np.float32(1e-5)
    ours = epsilon(sample_rate=q, noise_multiplier=sigma, steps=np.int64(100), delta=delta)
    plain = epsilon(sample_rate=float(q), noise_multiplier=float(sigma), steps=100,
                    delta=float(delta))
    assert ours == plain and 0 < ours < math.inf
    assert rdp_to_epsilon([2.0, 3.0], [0.1, 0.2], np.float32(1e-5)) == rdp_to_epsilon(
        [2.0, 3.0], [0.1, 0.2], float(np.float32(1e-5)))


@pytest.mark.parametrize("call, match", [
    (lambda: compute_rdp("0.01", 1.0, 10), "sample_rate must be a number"),
    (lambda: compute_rdp(0.01, "1.0", 10), "noise_multiplier must be a number"),
    (lambda: compute_rdp(0.01, 1.0, 10, ["a", 2.0]), "orders must be numeric"),
    (lambda: rdp_to_epsilon(["a"], [0.1], 1e-5), "orders must be numeric"),
    (lambda: rdp_to_epsilon([2.0], ["x"], 1e-5), "rdp must be numeric"),
    (lambda: RDPAccountant(["a"]), "orders must be numeric"),
])
def test_text_arguments_of_the_accountant_are_refused(call, match):
    """compute_rdp("0.01", ...) used to be accepted (float() of the string)."""
    with pytest.raises(InvalidInputError, match=match):
        call()


# ---------------------------------------------------------------------- clipping and noise
def test_clipping_bounds_every_per_sample_norm():
    step = make_step(DPConfig(noise_multiplier=0.0, max_grad_norm=0.05))
    real, w, fake = batch()
    grads, _ = FuncGradients()(step.discriminators[0], real, w, fake, None, "bce", 10.0)
    summed, norms = clip_and_sum(grads, 0.05)
    assert (norms > 0.05).all()  # the bound is active for every pair
    factor = (0.05 / (norms + 1e-6)).clamp(max=1.0)
    clipped = torch.stack([torch.cat([(f * g[i]).flatten() for g in grads])
                           for i, f in enumerate(factor)])
    assert (clipped.norm(dim=1) <= 0.05).all()
    # the step's gradient (noise 0) is the sum of the clipped gradients over B
    out, _ = step.private_gradients(step.discriminators[0], real, w, fake,
                                    torch_generator(0, "x"))
    torch.testing.assert_close(torch.cat([o.flatten() for o in out]), clipped.sum(0) / 16)
    assert torch.cat([o.flatten() for o in out]).norm() <= 16 * 0.05 / 16


def test_small_gradients_are_not_clipped():
    g = [torch.tensor([[3.0, 4.0], [0.3, 0.4]])]  # norms 5 and 0.5
    summed, norms = clip_and_sum(g, 1.0)
    torch.testing.assert_close(norms, torch.tensor([5.0, 0.5]))
    torch.testing.assert_close(summed[0], torch.tensor([0.6 + 0.3, 0.8 + 0.4]), atol=1e-6,
                               rtol=0)


@pytest.mark.parametrize("cfg", [CFG, WGAN], ids=["bce", "wgan-gp"])
def test_no_noise_no_clipping_equals_the_non_private_gradient(cfg):
    step = make_step(DPConfig(noise_multiplier=0.0, max_grad_norm=math.inf), cfg=cfg)
    disc = step.discriminators[0]
    real, w, fake = batch(cfg)
    private, loss = step.private_gradients(disc, real, w, fake, torch_generator(0, "gp"))
    d_loss, penalty = step._critic_objective(disc, real, w, fake, torch_generator(0, "gp"))
    total = d_loss if penalty is None else d_loss + cfg.gp_weight * penalty
    expected = torch.autograd.grad(total, list(disc.parameters()))
    for a, b in zip(private, expected, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
    assert float(loss) == pytest.approx(float(total.detach()), rel=1e-5)


class FixedRows(FusionStep):
    def draw_rows(self, n, weights, rng):
        return torch.arange(self.config.batch_size, device=weights.device)


class FixedPrivateRows(DPFusionStep):
    def draw_private_rows(self, n, rng, device):
        return torch.arange(self.config.batch_size, device=device)


def test_one_iteration_equals_algorithm_b_without_noise_and_clipping():
    # same rows, same noise z, plain SGD (so a gradient difference is not magnified by Adam)
    base = fusion_step(CFG, 3, INDICES, seed=0)
    plain = FixedRows(CFG, base.generator, base.discriminators, base.indices)
    other = fusion_step(CFG, 3, INDICES, seed=0)
    private = FixedPrivateRows(CFG, other.generator, other.discriminators, other.indices,
                               dp=DPConfig(noise_multiplier=0.0, max_grad_norm=math.inf,
                                           sampling="uniform"))
    results = []
    for step in (plain, private):
        data = step.prepare(make_data(), "cpu")
        sgd = {k: torch.optim.SGD([p for m in spec.modules for p in step.modules()[m]
                                   .parameters()], lr=0.1)
               for k, spec in step.optimizers().items()}
        losses = step.iteration(data, torch_generator(0, "train"), sgd)
        results.append((losses, {k: v for k, v in state(step).items() if "ledger" not in k}))
    (loss_a, state_a), (loss_b, state_b) = results
    assert state_a.keys() == state_b.keys()
    for k in state_a:
        torch.testing.assert_close(state_b[k], state_a[k], rtol=1e-5, atol=1e-6)
    for k in ("d_loss", "g_loss"):
        assert float(loss_b[k]) == pytest.approx(float(loss_a[k]), rel=1e-5)
    assert private.ledger.steps.tolist() == [1, 1]


def test_noise_has_scale_sigma_c_over_b():
    disc = make_step(DPConfig(), cfg=FusionConfig(batch_size=16, hidden=64, latent_dim=8)
                     ).discriminators[0]
    real, w, fake = batch()
    outs = []
    for sigma in (0.0, 2.0):
        step = make_step(DPConfig(noise_multiplier=sigma, max_grad_norm=0.5))
        outs.append(torch.cat([g.flatten() for g in step.private_gradients(
            disc, real, w, fake, torch_generator(0, "noise"))[0]]))
    z = (outs[1] - outs[0]) * 16 / (2.0 * 0.5)  # standard normal if the scale is sigma C / B
    assert z.numel() > 6000
    assert abs(float(z.mean())) < 0.05 and abs(float(z.std()) - 1) < 0.03


def test_poisson_batches_have_mean_size_b_and_an_empty_batch_is_noise_only():
    step = make_step()
    g = torch_generator(0, "poisson")
    sizes = [step.draw_private_rows(400, g, torch.device("cpu")).numel() for _ in range(400)]
    assert abs(np.mean(sizes) - 16) < 0.5 and np.var(sizes) > 10  # Binomial(400, 0.04)
    empty = torch.zeros(0, 2)
    grads, loss = step.private_gradients(step.discriminators[0], empty, torch.zeros(0), empty,
                                         torch_generator(0, "e"))
    assert float(loss) == 0.0 and all(torch.isfinite(t).all() for t in grads)
    quiet = make_step(DPConfig(noise_multiplier=0.0))
    grads, _ = quiet.private_gradients(quiet.discriminators[0], empty, torch.zeros(0), empty,
                                       torch_generator(0, "e"))
    assert all((t == 0).all() for t in grads)


def test_uniform_batches_are_distinct_rows():
    step = make_step(DPConfig(sampling="uniform"))
    rows = step.draw_private_rows(40, torch_generator(0, "u"), "cpu")
    assert rows.numel() == 16 and len(set(rows.tolist())) == 16


# ---------------------------------------------------------------------- training runs
def test_same_seed_same_run_and_bitwise_resume(tmp_path):
    runs = []
    for seed in (0, 0, 1):
        trainer = Trainer(make_step(), seed=seed, log_every=1)
        trainer.fit(make_data(), 4)
        runs.append(state(trainer.step))
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
    assert not all(torch.equal(runs[0][k], runs[2][k]) for k in runs[0])
    path = tmp_path / "dp.pt"
    Trainer(make_step(), seed=0, checkpoint_path=path).fit(make_data(), 2)
    resumed = Trainer(make_step(), seed=0, checkpoint_path=path)
    resumed.fit(make_data(), 4)
    assert all(torch.equal(runs[0][k], state(resumed.step)[k]) for k in runs[0])
    assert resumed.step.ledger.steps.tolist() == [4, 4]


def test_epsilon_of_a_run():
    step = make_step(DPConfig(noise_multiplier=1.0, max_grad_norm=1.0),
                     cfg=FusionConfig(batch_size=16, hidden=16, latent_dim=8, n_critic=2))
    trainer = Trainer(step, seed=0).fit(make_data(), 3)
    assert step.ledger.steps.tolist() == [6, 6]  # one DP step per critic step
    eps = step.epsilon(1e-5)
    assert eps == {"A": pytest.approx(epsilon(sample_rate=16 / 64, noise_multiplier=1.0,
                                              steps=6, delta=1e-5)),
                   "B": pytest.approx(epsilon(sample_rate=16 / 80, noise_multiplier=1.0,
                                              steps=6, delta=1e-5))}
    assert step.epsilon_composed(1e-5) > max(eps.values())
    planned = step.epsilon(1e-5, steps=600)
    assert planned["A"] > eps["A"] and trainer.iteration_ == 3
    free = make_step(DPConfig(noise_multiplier=0.0, max_grad_norm=math.inf))
    Trainer(free, seed=0).fit(make_data(), 1)
    assert free.epsilon(1e-5) == {"A": math.inf, "B": math.inf}


def test_wgan_gp_runs_privately():
    trainer = Trainer(make_step(cfg=WGAN), seed=0, log_every=1).fit(make_data(), 2)
    assert all(math.isfinite(v) for row in trainer.history_ for v in row.values())


def test_opacus_backend_matches_torch_func():
    pytest.importorskip("opacus")
    step = make_step()
    real, w, fake = batch()
    disc = step.discriminators[0]
    a, la = FuncGradients()(disc, real, w, fake, None, "bce", 10.0)
    b, lb = OpacusGradients()(disc, real, w, fake, None, "bce", 10.0)
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(la, lb)
    assert all(not hasattr(p, "grad_sample") and p.grad is None for p in disc.parameters())
    runs = [state(Trainer(make_step(DPConfig(backend=k)), seed=0).fit(make_data(), 2).step)
            for k in ("func", "opacus")]
    for k in runs[0]:
        torch.testing.assert_close(runs[1][k], runs[0][k], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw, match", [
    ({"max_grad_norm": 0.0}, "max_grad_norm must be > 0"),
    ({"max_grad_norm": -1.0}, "max_grad_norm must be > 0"),
    ({"max_grad_norm": float("nan")}, "max_grad_norm must be a number"),
    ({"max_grad_norm": True}, "max_grad_norm must be a number"),
    ({"noise_multiplier": -0.1}, "noise_multiplier must be finite and >= 0"),
    ({"noise_multiplier": math.inf}, "noise_multiplier must be finite and >= 0"),
    ({"noise_multiplier": "1"}, "noise_multiplier must be a number"),
    ({"max_grad_norm": math.inf}, "infinite noise"),
    ({"sampling": "shuffle"}, "'poisson', 'uniform'"),
    ({"backend": "jax"}, "'func', 'opacus'"),
])
def test_bad_dp_settings_are_refused(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        DPConfig(**kw)


def test_bad_step_arguments_are_refused():
    base = fusion_step(CFG, 3, INDICES)
    with pytest.raises(InvalidInputError, match="dp must be a DPConfig"):
        DPFusionStep(CFG, base.generator, base.discriminators, base.indices, dp={"C": 1})
    sampling = FusionConfig(batch_size=16, hidden=16, latent_dim=8, weight_sampling=True)
    with pytest.raises(InvalidInputError, match="weight_sampling"):
        DPFusionStep(sampling, base.generator, base.discriminators, base.indices)
    with pytest.raises(InvalidInputError, match="fit the trainer first"):
        make_step().epsilon(1e-5)
    step = make_step()
    step.prepare(make_data(), "cpu")
    with pytest.raises(InvalidInputError, match="delta must lie in"):
        step.epsilon(0.0)
    with pytest.raises(InvalidInputError, match="steps"):
        step.epsilon(1e-5, steps=-1)


def test_opacus_backend_refuses_what_it_cannot_do():
    real, w, fake = batch()
    disc = make_step().discriminators[0]
    match = "loss='bce' only" if _has_opacus() else "needs opacus"
    with pytest.raises(InvalidInputError, match=match):
        OpacusGradients()(disc, real, w, fake, real, "wgan-gp", 10.0)


def _has_opacus() -> bool:
    try:
        import opacus  # noqa: F401
    except ImportError:
        return False
    return True


def test_fusiongan_trains_private_discriminators():
    import pandas as pd

    from fusionlib.fusion.synthesizer import FusionGAN

    r = numpy_rng(0, "dp-synth")
    src = {"A": pd.DataFrame(r.normal(size=(80, 2)), columns=["x", "y"]),
           "B": pd.DataFrame(r.normal(size=(80, 2)), columns=["x", "z"])}
    dp = DPConfig(noise_multiplier=1.0, max_grad_norm=1.0)
    m = FusionGAN(epochs=1, iterations_per_epoch=3, config=CFG, dp=dp, standardize=False
                  ).fit(src)
    assert isinstance(m.trainer_.step, DPFusionStep)
    eps = m.trainer_.step.epsilon(1e-5)
    assert eps["A"] == pytest.approx(epsilon(sample_rate=16 / 64, noise_multiplier=1.0,
                                             steps=3, delta=1e-5))
    assert m.sample(5, seed=0).shape == (5, 3)
    with pytest.raises(InvalidInputError, match="dp must be a DPConfig"):
        FusionGAN(dp={"noise_multiplier": 1.0}).fit(src)
    with pytest.raises(InvalidInputError, match="continuous columns only"):
        FusionGAN(dp=dp, discrete_columns=["x"]).fit(src)
