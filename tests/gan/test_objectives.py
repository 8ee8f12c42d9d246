import numpy as np
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.gan.config import default_config
from fusionlib.gan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.gan.tempering import TemperedBatch, temperature


def hand_inputs() -> StepInputs:
    real = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    alpha1 = torch.tensor([1.0, 0.5])
    tb = TemperedBatch(q1=real, q2=torch.tensor([[0.0, 0.0], [1.0, 1.0]]),
                       q_tilde=torch.zeros(2, 2), alpha1=alpha1, alpha2=torch.tensor([0.2, 0.7]),
                       nu=torch.tensor([0.5, 0.5]), alpha_tilde=torch.tensor([0.6, 0.6]))
    return StepInputs(real=real, alpha=alpha1, z=torch.zeros(2, 4), tempered=tb,
                      t=temperature(alpha1))


def test_ptgan_critic_objective_by_hand(linear_critic):
    # D(x, t) = 3 x1 + 4 x2 + 0.5 t + 0.25, t(alpha1) = (0, 1)
    # D(real) = (3 + 0 + 0.25, 4 + 0.5 + 0.25) = (3.25, 4.75), mean 4.0
    # D(fake = 0) = (0.25, 0.75), mean 0.5 -> Wasserstein critic loss 0.5 - 4.0 = -3.5
    # CP: w . (q1 - q2) = w . (1, 0) = 3 and w . (-1, 0) = -3 -> mean(9, 9) = 9
    cfg = default_config("pt+cp")
    total, parts = critic_objective(linear_critic, torch.zeros(2, 2), hand_inputs(), cfg,
                                    torch.Generator().manual_seed(0))
    assert parts["d_loss"].item() == pytest.approx(-3.5)
    assert parts["penalty"].item() == pytest.approx(9.0)
    assert total.item() == pytest.approx(-3.5 + 100 * 9.0)


def test_generator_objective_by_hand(linear_critic):
    # fake rows (1, 1) at t = (0, 1): D = (7.25, 7.75), generator loss -mean = -7.5
    loss = generator_objective(linear_critic, torch.ones(2, 2), hand_inputs(),
                               default_config("pt+cp"))
    assert loss.item() == pytest.approx(-7.5)


def test_untempered_inputs_use_data_rows_and_alpha_one():
    data = torch.tensor(np.arange(20, dtype=np.float32).reshape(10, 2))
    inp = draw_step_inputs(data, default_config("gp", batch_size=6), torch.Generator())
    assert inp.tempered is None and inp.t is None
    assert bool((inp.alpha == 1).all())
    assert bool((inp.real[:, None, :] == data[None]).all(dim=2).any(dim=1).all())


def test_tempered_inputs_carry_the_algorithm_1_batch():
    data = torch.randn(50, 3)
    cfg = default_config("pt+cp", batch_size=8)
    a = draw_step_inputs(data, cfg, torch.Generator().manual_seed(1))
    b = draw_step_inputs(data, cfg, torch.Generator().manual_seed(1))
    assert torch.equal(a.real, a.tempered.q1) and torch.equal(a.alpha, a.tempered.alpha1)
    assert torch.equal(a.z, b.z) and a.z.shape == (8, cfg.latent_dim)
    assert torch.equal(a.t, temperature(a.alpha))


def test_draw_step_inputs_rejects_vectors():
    with pytest.raises(InvalidInputError, match=r"\(N, d\)"):
        draw_step_inputs(torch.zeros(5), default_config("gp"), torch.Generator())
