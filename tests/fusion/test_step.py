import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig, discriminator_loss, generator_loss
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator
from fusionlib.fusion.step import FusionStep, fusion_step
from fusionlib.gan.trainer import Trainer
from fusionlib.rng import numpy_rng, torch_generator

INDICES = [[0, 1], [1, 2]]  # source 0 sees (a, b), source 1 sees (b, c)
CFG = FusionConfig(batch_size=16, hidden=16, latent_dim=8)


def make_data(n0=40, n1=50):
    r = numpy_rng(0, "test-data")
    return (r.normal(size=(n0, 2)).astype(np.float32), r.uniform(0.5, 2, n0).astype(np.float32),
            r.normal(size=(n1, 2)).astype(np.float32), r.uniform(0.5, 2, n1).astype(np.float32))


def make_step(cfg=CFG, seed=0):
    return fusion_step(cfg, 3, INDICES, names=("A", "B"), seed=seed)


def optimizers(step):
    return {k: spec.build(step.modules()) for k, spec in step.optimizers().items()}


# ---------------------------------------------------------------------- configuration
def test_config_defaults_are_appendix_c():
    c = FusionConfig()
    assert (c.latent_dim, c.hidden, c.lr_g, c.lr_d, c.betas) == (32, 128, 1e-4, 1e-4, (0.5, 0.999))
    assert (c.batch_size, c.holdout, c.n_critic) == (64, 0.2, 1)
    assert (c.weighting, c.weight_sampling, c.loss) == ("uniform", False, "bce")


@pytest.mark.parametrize("kw, match", [
    ({"loss": "hinge"}, "'bce', 'wgan-gp'"), ({"weighting": "kde"}, "'uniform', 'cluster'"),
    ({"batch_size": 0}, "batch_size"), ({"n_critic": 1.5}, "n_critic"), ({"lr_g": -1}, "lr_g"),
    ({"betas": (0.5, 1.0)}, "betas"), ({"betas": (0.5,)}, "betas"), ({"holdout": 1.0}, "holdout"),
    ({"holdout": -0.1}, "holdout"), ({"weight_sampling": 1}, "weight_sampling")])
def test_config_rejects_bad_values(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        FusionConfig(**kw)


def test_modules_and_optimisers():
    step = make_step()
    assert list(step.modules()) == ["generator", "discriminator_0", "discriminator_1"]
    specs = step.optimizers()
    assert {k: s.modules for k, s in specs.items()} == {k: (k,) for k in step.modules()}
    assert all(s.lr == 1e-4 and s.betas == (0.5, 0.999) for s in specs.values())


# ---------------------------------------------------------------------- losses
def test_discriminator_loss_equals_hand_computation_with_weights():
    real, fake = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([0.3, -0.2, 1.0])
    w = torch.tensor([0.5, 2.0, 1.0])

    def sig(v):
        return 1 / (1 + math.exp(-v))

    expected = -sum(wi * math.log(sig(r)) + math.log(1 - sig(f))
                    for wi, r, f in zip(w.tolist(), real.tolist(), fake.tolist(), strict=True)) / 3
    assert float(discriminator_loss(real, fake, w)) == pytest.approx(expected, rel=1e-6)
    # the weights act on the real term only: scaling them leaves the fake part unchanged
    fake_part = -sum(math.log(1 - sig(f)) for f in fake.tolist()) / 3
    assert float(discriminator_loss(real, fake, torch.zeros(3))) == pytest.approx(fake_part)


def test_unit_weights_equal_torch_bce():
    real, fake = torch.randn(8), torch.randn(8)
    bce = (F.binary_cross_entropy(torch.sigmoid(real), torch.ones(8))
           + F.binary_cross_entropy(torch.sigmoid(fake), torch.zeros(8)))
    torch.testing.assert_close(discriminator_loss(real, fake, torch.ones(8)), bce)
    torch.testing.assert_close(generator_loss(fake),
                               F.binary_cross_entropy(torch.sigmoid(fake), torch.ones(8)))


def test_losses_stay_finite_when_the_discriminator_saturates():
    real, fake = torch.full((2,), -200.0), torch.full((2,), 200.0)
    assert torch.isinf(torch.log(torch.sigmoid(real))).all()  # the naive form is -inf
    assert float(discriminator_loss(real, fake, torch.ones(2))) == pytest.approx(400.0)
    assert float(generator_loss(-fake)) == pytest.approx(200.0)


def test_wasserstein_losses_use_raw_scores_with_weights_on_real():
    real, fake, w = torch.tensor([1.0, 3.0]), torch.tensor([0.5, -0.5]), torch.tensor([2.0, 0.0])
    assert float(discriminator_loss(real, fake, w, "wgan-gp")) == pytest.approx(0.0 - 1.0)
    assert float(generator_loss(fake, "wgan-gp")) == pytest.approx(0.0)


# ---------------------------------------------------------------------- one iteration
def reference_iteration(g, discs, opts, data, rng, cfg):
    """Algorithm B written out independently of FusionStep (same float operations)."""
    b = cfg.batch_size
    for k, (d, cols) in enumerate(zip(discs, INDICES, strict=True)):
        x, w = torch.as_tensor(data[2 * k]), torch.as_tensor(data[2 * k + 1])
        rows = torch.randint(len(x), (b,), generator=rng)
        z = torch.randn(b, cfg.latent_dim, generator=rng)
        fake = g(z).detach()[:, cols]
        logits = d.logits(torch.cat([x[rows], fake]))
        d_loss = -(w[rows] * F.logsigmoid(logits[:b])).mean() - F.logsigmoid(-logits[b:]).mean()
        opts[f"discriminator_{k}"].zero_grad()
        d_loss.backward()
        opts[f"discriminator_{k}"].step()
        d.requires_grad_(False)
        g_loss = -F.logsigmoid(d.logits(g(z)[:, cols])).mean()
        opts["generator"].zero_grad()
        g_loss.backward()
        opts["generator"].step()
        d.requires_grad_(True)


def test_iteration_is_algorithm_b():
    step, data = make_step(), make_data()
    ref_g, ref_d = copy.deepcopy(step.generator), copy.deepcopy(step.discriminators)
    ref = FusionStep(CFG, ref_g, ref_d, INDICES)
    losses = step.iteration(step.prepare(data, "cpu"), torch_generator(1, "t"), optimizers(step))
    reference_iteration(ref_g, ref_d, optimizers(ref), data, torch_generator(1, "t"), CFG)
    for a, b in zip(step.modules().values(), ref.modules().values(), strict=True):
        for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
            assert torch.equal(pa, pb)
            assert pa.requires_grad
    # D_k's gradients are those of its own loss: the G step left them untouched
    for da, db in zip(step.discriminators, ref_d, strict=True):
        assert all(torch.equal(pa.grad, pb.grad)
                   for pa, pb in zip(da.parameters(), db.parameters(), strict=True))
    assert set(losses) == {"d_loss_0", "g_loss_0", "d_loss_1", "g_loss_1", "d_loss", "g_loss"}
    assert float(losses["d_loss"]) == pytest.approx(
        (float(losses["d_loss_0"]) + float(losses["d_loss_1"])) / 2)


def test_default_sampling_ignores_weights_and_weight_sampling_follows_them():
    step, w = make_step(), torch.cat([torch.zeros(20), torch.ones(20)])
    a = step.draw_rows(40, w, torch_generator(0, "r"))
    b = step.draw_rows(40, torch.ones(40), torch_generator(0, "r"))
    assert torch.equal(a, b) and torch.equal(a, torch.randint(40, (16,),
                                                              generator=torch_generator(0, "r")))
    assert (a < 20).any()
    weighted = make_step(FusionConfig(batch_size=16, hidden=16, latent_dim=8,
                                      weight_sampling=True))
    rows = weighted.draw_rows(40, w, torch_generator(0, "r"))
    assert bool((rows >= 20).all())


def test_weight_sampling_changes_training():
    data = make_data()
    runs = []
    for ws in (False, True):
        cfg = FusionConfig(batch_size=16, hidden=16, latent_dim=8, weight_sampling=ws)
        step = make_step(cfg)
        Trainer(step, seed=0).fit(data, 3)
        runs.append(step.generator.net[0].weight.detach().clone())
    assert not torch.equal(*runs)


def test_n_critic_and_wgan_gp_train_with_finite_losses():
    cfg = FusionConfig(batch_size=16, hidden=16, latent_dim=8, loss="wgan-gp", n_critic=2)
    tr = Trainer(make_step(cfg), seed=0, log_every=1).fit(make_data(), 3)
    last = tr.history_[-1]
    assert {"penalty_0", "penalty_1"} <= set(last)
    assert all(math.isfinite(v) for h in tr.history_ for v in h.values())


def test_sample_shape_eval_mode_and_reproducibility():
    step = make_step()
    a = step.sample(10, torch_generator(0, "s"))
    assert a.shape == (10, 3) and step.generator.training
    assert torch.equal(a, step.sample(10, torch_generator(0, "s")))
    with pytest.raises(InvalidInputError, match="unknown sample option"):
        step.sample(10, torch_generator(0, "s"), alpha=1.0)


# ---------------------------------------------------------------------- bad input
def replace(data, i, value):
    return tuple(value if j == i else v for j, v in enumerate(data))


@pytest.mark.parametrize("i, value, match", [
    (0, np.zeros((40, 3), np.float32), "discriminator_0 takes 2 columns"),
    (2, np.full((50, 2), np.nan, np.float32), "source 'B'.*NaN"),
    (0, np.array([["a", "b"]] * 40), "numeric.*encode"),
    (0, np.zeros((10, 2), np.float32), r"'A' has 10 rows.*batch_size=16.*lower batch_size"),
    (1, -np.ones(40, np.float32), "negative.*>= 0"),
    (1, np.full(40, np.nan, np.float32), "weights of source 'A'.*NaN"),
    (3, np.zeros(50, np.float32), "all zero"),
    (3, np.ones(49, np.float32), r"one weight per row, shape \(50,\)")])
def test_prepare_rejects_bad_data(i, value, match):
    with pytest.raises(InvalidInputError, match=match):
        make_step().prepare(replace(make_data(), i, value), "cpu")


def test_prepare_rejects_wrong_layout_and_accepts_none_weights():
    step = make_step()
    with pytest.raises(InvalidInputError, match=r"\(x_0, w_0, \.\.\., x_1, w_1\) of 4 items"):
        step.prepare(make_data()[:3], "cpu")
    x0, _, x1, _ = make_data()
    out = step.prepare((x0, None, x1, None), "cpu")
    assert torch.equal(out[1], torch.ones(40))


def test_construction_rejects_inconsistent_networks():
    g = FusionGenerator(3, latent_dim=8, hidden=16)
    d2, d1 = SourceDiscriminator(2, hidden=16), SourceDiscriminator(1, hidden=16)
    with pytest.raises(InvalidInputError, match="no columns"):
        FusionStep(CFG, g, [d2, d2], [[0, 1], []], names=("A", "B"))
    with pytest.raises(InvalidInputError, match="built for 1 columns.*in_dim"):
        FusionStep(CFG, g, [d2, d1], INDICES)
    with pytest.raises(InvalidInputError, match=r"observed by no source.*\[2\]|\[2\].*no source"):
        FusionStep(CFG, g, [d2, d2], [[0, 1], [0, 1]])
    with pytest.raises(InvalidInputError, match="distinct schema positions"):
        FusionStep(CFG, g, [d2, d2], [[0, 1], [2, 3]])
    with pytest.raises(InvalidInputError, match="latent_dim"):
        FusionStep(CFG, FusionGenerator(3, latent_dim=4), [d2, d2], INDICES)
    with pytest.raises(InvalidInputError, match="one discriminator"):
        FusionStep(CFG, g, [d2], INDICES)
    with pytest.raises(InvalidInputError, match="FusionConfig"):
        FusionStep({}, g, [d2, d2], INDICES)


# ---------------------------------------------------------------------- categorical columns
# encoded layout: g (3 categories) = 0..2, a = 3, b = 4; source 0 sees (g, a), source 1 (g, b)
CAT_SPANS = (Span("g", "discrete", 0, 3), Span("a", "continuous", 3, 4),
             Span("b", "continuous", 4, 5))
CAT_INDICES = [[0, 1, 2, 3], [0, 1, 2, 4]]


def cat_data(n0=40, n1=50):
    r = numpy_rng(0, "test-cat-data")
    out = []
    for n in (n0, n1):
        onehot = np.eye(3, dtype=np.float32)[r.integers(0, 3, n)]
        out += [np.c_[onehot, r.normal(size=(n, 1))].astype(np.float32), None]
    return tuple(out)


def cat_step(seed=0, **kw):
    return fusion_step(CFG, 5, CAT_INDICES, names=("A", "B"), spans=CAT_SPANS, seed=seed, **kw)


class Recording(SourceDiscriminator):
    """A discriminator that keeps every batch its logits see."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.seen: list[torch.Tensor] = []

    def logits(self, x):
        self.seen.append(x.detach().clone())
        return super().logits(x)


def test_categorical_step_has_a_gumbel_head_and_encoded_discriminators():
    step = cat_step()
    assert step.generator.stochastic and step.generator.head.spans == CAT_SPANS
    assert [d.in_dim for d in step.discriminators] == [4, 4]
    assert "TabularHead" in step.signature()["generator"]


def test_generator_step_sees_the_same_gumbel_noise_as_the_discriminator_step():
    step = cat_step()
    discs = [Recording(4, hidden=16, seed=k) for k in range(2)]
    step = FusionStep(CFG, step.generator, discs, CAT_INDICES)
    step.iteration(step.prepare(cat_data(), "cpu"), torch_generator(0, "t"), optimizers(step))
    for d in discs:
        d_batch, g_batch = d.seen  # D step: [real; fake], G step: fake
        fake = d_batch[CFG.batch_size:]
        assert torch.equal(fake, g_batch)
        assert set(fake[:, :3].round().unique().tolist()) == {0.0, 1.0}  # hard one-hot blocks
        assert len(set(map(tuple, fake[:, :3].tolist()))) > 1  # several categories drawn


def test_gumbel_noise_comes_from_the_training_rng_after_rows_and_z():
    step, data = cat_step(), cat_data()
    rng = torch_generator(0, "t")
    step.iteration(step.prepare(data, "cpu"), rng, optimizers(step))
    expected = torch_generator(0, "t")
    for x in data[::2]:  # per source: rows, z, one (B, 3) Gumbel draw
        torch.randint(len(x), (CFG.batch_size,), generator=expected)
        torch.randn(CFG.batch_size, CFG.latent_dim, generator=expected)
        torch.rand(CFG.batch_size, 3, generator=expected)
    assert torch.equal(rng.get_state(), expected.get_state())


def test_categorical_training_is_reproducible_and_sample_draws_categories():
    runs = []
    for _ in range(2):
        step = cat_step()
        Trainer(step, seed=0).fit(cat_data(), 3)
        runs.append(step.generator.head.layers[0].weight.detach().clone())
    assert torch.equal(*runs)
    a = step.sample(200, torch_generator(0, "s"))
    assert torch.equal(a, step.sample(200, torch_generator(0, "s")))
    assert not torch.equal(a, step.sample(200, torch_generator(1, "s")))
    assert a.shape == (200, 5) and step.generator.training
    # categories are drawn (Gumbel-max), not only the modal category of each z
    z = torch.randn(200, CFG.latent_dim, generator=torch_generator(0, "s"))
    step.generator.eval()
    modal = step.generator(z)[:, :3].argmax(1)
    assert not torch.equal(a[:, :3].argmax(1), modal)
