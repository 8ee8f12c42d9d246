"""Tests of the gradient-variance measurements during training (PTGAN Figures 4 and 8)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from numpy.testing import assert_allclose
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.gan.diagnostics.variance import last_layer_parameter_names
from fusionlib.gan.networks import Critic, Generator
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.step import ptgan_trainer
from fusionlib.ptgan.variance.runs import (
    VarianceCallback,
    gradient_noise,
    late_log_mean,
    variance_training_run,
)

DATA = np.random.default_rng(0).normal(size=(200, 2)).astype(np.float32)
CFG = default_config("pt+cp", r=0.5, batch_size=16)


def trainer(seed: int = 0) -> Trainer:
    # a batch-norm generator and a spectral-norm critic: both have state that a forward pass in
    # train mode would change (running statistics, power-iteration vectors)
    gen = Generator(CFG.latent_dim, 2, (8,), conditional=True, batch_norm=True, seed=seed)
    critic = Critic(2, (8,), conditional=True, spectral_norm=True, seed=seed + 1)
    return ptgan_trainer(CFG, gen, critic, seed=seed)


def state(tr: Trainer) -> list[torch.Tensor]:
    """Every parameter AND buffer of both networks."""
    nets = (tr.step.generator, tr.step.critic)
    return [v.clone() for net in nets for v in net.state_dict().values()]


def test_variance_callback_does_not_change_training():
    callback = VarianceCallback(DATA, seed=5)
    measured = trainer().fit(DATA, 6, callback=callback, callback_at=(2, 4, 6))
    plain = trainer().fit(DATA, 6)
    assert all(torch.equal(a, b) for a, b in zip(state(measured), state(plain), strict=True))
    assert measured.history_ == plain.history_
    assert measured.step.generator.training and measured.step.critic.training  # modes restored
    assert torch.equal(measured.sample(5, seed=1), plain.sample(5, seed=1))


def test_variance_callback_records_and_mode_restoring():
    tr = trainer().fit(DATA, 2)
    tr.step.generator.eval()  # a network left in eval mode stays in eval mode
    callback = VarianceCallback(DATA, seed=5)
    callback(tr, 2)
    callback(tr, 3)
    assert not tr.step.generator.training and tr.step.critic.training
    frame = callback.frame()
    assert list(frame.columns) == ["iteration", "loss_mean", "grad_var", "grad_var_last"]
    assert frame["iteration"].tolist() == [2, 3]
    assert (frame["grad_var"] > 0).all() and (frame["grad_var_last"] > 0).all()
    assert (frame["grad_var_last"] <= frame["grad_var"]).all()  # a subset of the parameters
    assert all(math.isfinite(v) for v in frame["loss_mean"])


def test_last_layer_of_a_spectral_norm_critic_includes_its_weight():
    critic = Critic(2, (8,), spectral_norm=True, seed=0)
    assert last_layer_parameter_names(critic) == ["net.2.bias",
                                                  "net.2.parametrizations.weight.original"]


def test_variance_callback_same_seed_same_records_other_seed_other():
    tr = trainer().fit(DATA, 2)
    a, b, c = (VarianceCallback(DATA, seed=s) for s in (1, 1, 2))
    for cb in (a, b, c):
        cb(tr, 2)
    assert a.records_ == b.records_
    assert a.records_ != c.records_


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_variance_callback_runs_on_cuda():
    tr = trainer()
    tr.device = "cuda"
    callback = VarianceCallback(DATA, seed=0)
    tr.fit(DATA, 2, callback=callback, callback_at=(2,))
    assert callback.frame()["grad_var"].gt(0).all()


def test_variance_training_run_same_seed_same_frame_other_seed_other():
    cfg = default_config("pt+cp", batch_size=16)
    kw = dict(n_iter=3, measure_at=[2, 3], n_data=100, device="cpu")
    a = variance_training_run(cfg, 0, **kw)
    b = variance_training_run(cfg, 0, **kw)
    c = variance_training_run(cfg, 1, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert not a["grad_var"].equals(c["grad_var"])
    assert a["iteration"].tolist() == [2, 3]
    assert (a["r"] == 0.9).all() and (a["seed"] == 0).all()


def test_late_log_mean_by_hand():
    # iterations 1..4, late part (start_fraction 0.5) = iterations >= 2
    # group A: values e^1, e^2, e^3, e^4 -> late logs 2, 3, 4 -> mean 3
    # group B: values 1, 1, e^6, e^0 -> late logs 0, 6, 0 -> mean 2
    frame = pd.DataFrame({"iteration": [1, 2, 3, 4] * 2, "key": ["A"] * 4 + ["B"] * 4,
                          "v": np.exp([1.0, 2, 3, 4, 0, 0, 6, 0])})
    out = late_log_mean(frame, "v", ["key"])
    assert_allclose(out.loc[["A", "B"]].to_numpy(), [3.0, 2.0])
    # start_fraction 1: only iteration 4 -> logs 4 and 0
    assert_allclose(late_log_mean(frame, "v", ["key"], start_fraction=1.0).to_numpy(), [4.0, 0.0])


def test_late_log_mean_bad_input_raises():
    frame = pd.DataFrame({"iteration": [1, 2], "key": ["A", "A"], "v": [1.0, 0.0]})
    with pytest.raises(InvalidInputError, match="lacks columns"):
        late_log_mean(frame, "w", ["key"])
    with pytest.raises(InvalidInputError, match="> 0"):
        late_log_mean(frame, "v", ["key"])
    with pytest.raises(InvalidInputError, match="start_fraction"):
        late_log_mean(frame, "v", ["key"], start_fraction=1.5)


def test_gradient_noise_same_seed_same_noise_other_seed_other():
    lin = nn.Linear(5, 3)
    x = torch.ones(2, 5)

    def noisy_grad(seed: int) -> torch.Tensor:
        with gradient_noise(lin, 0.1, seed=seed):
            return torch.autograd.grad(lin(x).sum(), lin.weight)[0]

    assert torch.equal(noisy_grad(0), noisy_grad(0))
    assert not torch.equal(noisy_grad(0), noisy_grad(1))
