import numpy as np
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.ptgan.tempering import TemperedBatch, temperature, tempered_minibatch


class InteractingCritic(torch.nn.Module):
    """D(x, t) = (w . x)(1 + t): grad_x D = w (1 + t) depends on the temperature input."""

    def __init__(self, w: list[float]) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(w))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return (x @ self.w) * (1.0 + t)


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


@pytest.mark.parametrize("mode", ["double_backward", "jvp"])
def test_coherency_penalty_is_taken_at_alpha_tilde(mode):
    # D(x, t) = (w . x)(1 + t), w = (3, 4): the penalty is mean(((1 + t_i) w . (q1 - q2)_i)^2)
    # w . (q1 - q2) = w . (1, 0) = 3 and w . (-1, 0) = -3
    # at alpha~ = (0.6, 0.6): t = 1 - 2|0.6 - 0.5| = 0.8 -> (1.8 * 3)^2 = 29.16 in both rows
    # (alpha1 = (1, 0.5) would give t = (0, 1): mean(9, 36) = 22.5;
    #  alpha2 = (0.2, 0.7) would give t = (0.4, 0.6): mean(17.64, 23.04) = 20.34)
    cfg = default_config("pt+cp", cp_mode=mode)
    _, parts = critic_objective(InteractingCritic([3.0, 4.0]), torch.zeros(2, 2), hand_inputs(),
                                cfg, torch.Generator().manual_seed(0))
    assert parts["penalty"].item() == pytest.approx(29.16, rel=1e-6)


def test_interpolated_noise_generator_input_is_z_alpha1():
    # replay the random stream: Algorithm 1 batch first, then the two uniform noise draws
    data = torch.randn(40, 2, generator=torch.Generator().manual_seed(5))
    cfg = default_config("pt+cp", batch_size=16, r=0.5)
    inp = draw_step_inputs(data, cfg, torch.Generator().manual_seed(1))
    replay = torch.Generator().manual_seed(1)
    tb = tempered_minibatch(data, 16, 0.5, replay)
    z1, z2 = torch.empty(2, 16, cfg.latent_dim).uniform_(-1.0, 1.0, generator=replay)
    a1, at = tb.alpha1[:, None], tb.alpha_tilde[:, None]
    torch.testing.assert_close(inp.z, a1 * z1 + (1 - a1) * z2)
    assert not torch.allclose(inp.z, at * z1 + (1 - at) * z2)
    ones = tb.alpha1 == 1.0
    assert 0 < int(ones.sum()) < 16 and torch.equal(inp.z[ones], z1[ones])  # Z^1 = Z1 exactly


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
