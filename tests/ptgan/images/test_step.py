"""PTGAN on images: configuration, the image step, training through the shared trainer."""

import numpy as np
import pytest
import torch

from fusionlib.data.store import data_dir
from fusionlib.errors import InvalidInputError
from fusionlib.gan.cnn import cnn_networks
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.images.runs import build_trainer, train_image_run
from fusionlib.ptgan.images.step import ImagePTGANStep, ImageRunConfig, gan_config

needs_fashion = pytest.mark.skipif(
    not (data_dir() / "fashion_mnist" / "train-images-idx3-ubyte.gz").exists(),
    reason="Fashion-MNIST not provisioned (make data)")
TINY = dict(dataset="fashion_mnist", n_iter=3, batch_size=8, width=1 / 32, n_train=64)


def test_gan_config_follows_the_paper_defaults():
    sn = gan_config(ImageRunConfig("cifar10", "sn"))
    assert (sn.penalty, sn.conditional, sn.r, sn.loss) == ("none", False, 1.0, "wasserstein")
    cp = gan_config(ImageRunConfig("cifar10", "pt+cp", discrepancy="jsd"))
    assert (cp.penalty, cp.penalty_weight, cp.r, cp.loss, cp.latent_dim) == (
        "cp", 100.0, 0.9, "js", 128)
    assert cp.conditional and cp.interpolated_noise
    mp = gan_config(ImageRunConfig("bloodmnist", "mp", discrepancy="pd", penalty_weight=10))
    assert (mp.penalty_weight, mp.loss, mp.batch_size) == (10.0, "pearson", 100)
    assert gan_config(ImageRunConfig("celeba_hq", "pt+cp", r=0.98)).latent_dim == 256
    assert gan_config(ImageRunConfig("cifar10", "gp")).penalty_weight == 10.0


def test_bad_run_configs_refused():
    with pytest.raises(InvalidInputError, match="method"):
        ImageRunConfig("cifar10", "wgan")
    with pytest.raises(InvalidInputError, match="untempered"):
        ImageRunConfig("cifar10", "sn", r=0.9)
    with pytest.raises(InvalidInputError, match="discrepancy"):
        ImageRunConfig("cifar10", "mp", discrepancy="kl")


def _step(method="pt+cp", batch_size=8):
    cfg = gan_config(ImageRunConfig("fashion_mnist", method, batch_size=batch_size,
                                    width=1 / 32))
    gen, critic = cnn_networks(32, 1, conditional=cfg.conditional,
                               spectral_norm=method == "sn", width=1 / 32)
    return ImagePTGANStep(cfg, gen, critic)


def test_image_step_refuses_bad_images():
    step = _step()
    good = torch.rand(16, 1, 32, 32) * 2 - 1
    assert step.prepare(good, "cpu")[0].shape == (16, 1024)
    with pytest.raises(InvalidInputError, match="channel"):
        step.prepare(torch.rand(16, 3, 32, 32), "cpu")
    with pytest.raises(InvalidInputError, match="32x32"):
        step.prepare(torch.rand(16, 1, 28, 28), "cpu")
    with pytest.raises(InvalidInputError, match=r"\[-1, 1\]"):
        step.prepare(good * 255, "cpu")
    with pytest.raises(InvalidInputError, match="fewer than one minibatch"):
        step.prepare(good[:5], "cpu")


def _fit(method, seed, n_iter, tmp_path=None, data=None, **kw):
    data = data if data is not None else torch.rand(32, 1, 32, 32) * 2 - 1
    tr = Trainer(_step(method), seed=seed, **kw)
    return tr.fit(data, n_iter)


@pytest.mark.parametrize("method", ["sn", "mp", "pt+cp", "gp", "pt+gp", "pt+mp"])
def test_every_method_trains_and_samples(method):
    tr = _fit(method, 0, 2)
    x = tr.step.sample_images(6, torch.Generator().manual_seed(0))
    assert x.shape == (6, 1, 32, 32) and x.abs().max() <= 1


def test_training_is_deterministic():
    data = torch.rand(32, 1, 32, 32) * 2 - 1
    a = _fit("pt+cp", 0, 3, data=data).sample(4, seed=1)
    b = _fit("pt+cp", 0, 3, data=data).sample(4, seed=1)
    c = _fit("pt+cp", 1, 3, data=data).sample(4, seed=1)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_checkpoint_resume_is_bitwise_and_other_configs_refused(tmp_path):
    data = torch.rand(32, 1, 32, 32) * 2 - 1
    ck = tmp_path / "run.pt"
    whole = _fit("pt+cp", 0, 4, data=data).sample(4, seed=1)
    _fit("pt+cp", 0, 2, data=data, checkpoint_path=ck)
    resumed = _fit("pt+cp", 0, 4, data=data, checkpoint_path=ck).sample(4, seed=1)
    assert torch.equal(whole, resumed)
    with pytest.raises(InvalidInputError, match="different"):
        _fit("mp", 0, 4, data=data, checkpoint_path=ck)


def test_amp_flag_runs_and_enters_the_signature():
    step = _step("mp")
    amp = ImagePTGANStep(step.config, step.generator, step.critic, amp=True)
    assert amp.signature()["amp"] is True and step.signature()["amp"] is False
    Trainer(amp, seed=0).fit(torch.rand(16, 1, 32, 32) * 2 - 1, 1)


@needs_fashion
def test_train_image_run_records_variance_and_samples():
    run = ImageRunConfig(method="pt+cp", **TINY)
    out = train_image_run(run, 0, var_at=[1, 3], n_var=16, n_samples=5)
    assert list(out.variance.iteration) == [1, 3]
    assert (out.variance.var_loss > 0).all() and (out.variance.grad_var_last > 0).all()
    assert out.samples.shape == (5, 1, 32, 32) and out.samples.dtype == np.uint8
    again = train_image_run(run, 0, var_at=[1, 3], n_var=16, n_samples=5)
    np.testing.assert_array_equal(out.samples, again.samples)
    other = train_image_run(run, 1, var_at=[1, 3], n_var=16, n_samples=5)
    assert not np.array_equal(out.samples, other.samples)


@needs_fashion
def test_variance_callback_does_not_perturb_training():
    run = ImageRunConfig(method="mp", **TINY)
    with_cb = train_image_run(run, 0, var_at=[1, 2], n_var=16, n_samples=4)
    without = train_image_run(run, 0, n_samples=4)
    np.testing.assert_array_equal(with_cb.samples, without.samples)


def test_build_trainer_uses_the_requested_device():
    tr = build_trainer(ImageRunConfig(method="sn", **TINY), 0, device="auto")
    assert tr.device == ("cuda" if torch.cuda.is_available() else "cpu")


def test_celeba_minibatch_holds_one_interpolated_image():
    # Section 5.1: "n_b is set to 50 ... and r = 0.98, i.e., there is only one interpolated
    # image in every minibatch" (drawn row by row, 36 % of minibatches would hold none)
    from fusionlib.ptgan.objectives import draw_step_inputs

    cfg = gan_config(ImageRunConfig("celeba_hq", "pt+cp", batch_size=50, r=0.98))
    data = torch.rand(500, 12, generator=torch.Generator().manual_seed(0)) * 2 - 1
    g = torch.Generator().manual_seed(1)
    counts = {int((draw_step_inputs(data, cfg, g).alpha < 1).sum()) for _ in range(200)}
    assert counts == {1}


def test_minibatch_loss_variance_is_the_variance_of_the_minibatch_mean():
    # two strata with different means: with a fixed share the minibatch mean's variance lacks
    # the between-strata term that the pooled Var_i(L_i) / n_b contains
    from fusionlib.ptgan.images.runs import minibatch_loss_variance

    g = torch.Generator().manual_seed(0)
    n_b, r = 50, 0.9  # 45 untempered, 5 tempered per minibatch
    pool = torch.cat([torch.randn(9000, generator=g, dtype=torch.float64) + 3.0,
                      2.0 * torch.randn(1000, generator=g, dtype=torch.float64)])
    untempered = torch.arange(10_000) < 9000
    est = minibatch_loss_variance(pool, untempered, n_b, r, "fixed")
    exact = (45 * 1.0 + 5 * 4.0) / n_b**2
    assert est == pytest.approx(exact, rel=0.08)
    # brute force: means of minibatches of 45 + 5 draws
    ones = torch.randn(20_000, 45, generator=g, dtype=torch.float64) + 3.0
    temp = 2.0 * torch.randn(20_000, 5, generator=g, dtype=torch.float64)
    assert torch.cat([ones, temp], 1).mean(1).var().item() == pytest.approx(exact, rel=0.05)
    pooled = minibatch_loss_variance(pool, untempered, n_b, r, "per_row")
    assert pooled == pytest.approx(pool.var().item() / n_b)
    assert pooled > 1.5 * exact  # the between-strata spread (mean gap 3) dominates
