import pytest
import torch
from torch.testing import assert_close

from fusionlib.errors import InvalidInputError
from fusionlib.gan.networks import Critic
from fusionlib.gan.penalties import (
    coherency_penalty,
    gradient_penalty,
    input_gradient,
    max_penalty,
    r1_penalty,
    random_interpolates,
)

POINTS = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
# q1 - q2 rows of a coherency batch
DIRECTION = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
Q_TILDE = torch.tensor([[0.2, 0.1], [0.0, -1.0], [3.0, 2.0]])


def test_linear_critic_gradient_is_its_weight(linear_critic):
    assert_close(input_gradient(linear_critic, POINTS), torch.tensor([[3.0, 4.0]] * 2))


def test_max_penalty_of_linear_critic_is_squared_weight_norm(linear_critic):
    # grad D = w = (3, 4) everywhere: ||w||^2 = 9 + 16 = 25
    assert max_penalty(linear_critic, POINTS).item() == pytest.approx(25.0)


def test_gradient_penalty_of_linear_critic(linear_critic):
    # (||w|| - 1)^2 = (5 - 1)^2 = 16
    assert gradient_penalty(linear_critic, POINTS).item() == pytest.approx(16.0)


def test_penalties_of_quadratic_critic(quadratic_critic):
    # grad D(x) = (2 x1, 3 x2): at (1,0) -> (2,0), |.|^2 = 4; at (0,2) -> (0,6), |.|^2 = 36
    assert max_penalty(quadratic_critic, POINTS).item() == pytest.approx(36.0)
    # GP: ((2-1)^2 + (6-1)^2) / 2 = (1 + 25) / 2 = 13; R1: (4 + 36) / 2 = 20
    assert gradient_penalty(quadratic_critic, POINTS).item() == pytest.approx(13.0)
    assert r1_penalty(quadratic_critic, POINTS).item() == pytest.approx(20.0)


def test_coherency_penalty_of_linear_critic(linear_critic):
    # w . (q1 - q2) = 3, 4, 7 -> mean(9, 16, 49) = 74 / 3, whatever q~ and t are
    t = torch.tensor([0.1, 0.5, 0.9])
    value = coherency_penalty(linear_critic, Q_TILDE, DIRECTION, t)
    assert value.item() == pytest.approx(74.0 / 3.0)


def test_coherency_penalty_gradient_wrt_weight(linear_critic):
    # d/dw mean((w . d_i)^2) = 2 mean((w . d_i) d_i) = 2/3 (3(1,0) + 4(0,1) + 7(1,1)) = (20/3, 22/3)
    coherency_penalty(linear_critic, Q_TILDE, DIRECTION).backward()
    assert_close(linear_critic.w.grad, torch.tensor([20.0 / 3.0, 22.0 / 3.0]))


def test_coherency_penalty_of_quadratic_critic_at_penalty_points(quadratic_critic):
    # grad at q~ = (2 q1, 3 q2): rows (0.4, 0.3), (0, -3), (6, 6); dots with d: 0.4, -3, 12
    # mean(0.16, 9, 144) = 153.16 / 3
    value = coherency_penalty(quadratic_critic, Q_TILDE, DIRECTION)
    assert value.item() == pytest.approx(153.16 / 3.0, rel=1e-6)


def test_jvp_and_double_backward_coherency_penalties_agree():
    critic = Critic(5, (16, 16), conditional=True, seed=3)
    g = torch.Generator().manual_seed(0)
    q, d = torch.randn(7, 5, generator=g), torch.randn(7, 5, generator=g)
    t = torch.rand(7, generator=g)
    a = coherency_penalty(critic, q, d, t)
    b = coherency_penalty(critic, q, d, t, mode="jvp")
    assert_close(a, b)
    # the output bias does not enter a derivative: its gradient is zero (materialised)
    params = list(critic.parameters())
    ga = torch.autograd.grad(a, params, allow_unused=True, materialize_grads=True)
    gb = torch.autograd.grad(b, params, allow_unused=True, materialize_grads=True)
    for x, y in zip(ga, gb, strict=True):
        assert_close(x, y, rtol=1e-5, atol=1e-7)


def test_penalties_back_propagate_into_critic_parameters():
    critic = Critic(2, (8,), seed=0)
    max_penalty(critic, POINTS).backward()
    assert all(p.grad is not None for p in critic.net[0].parameters())


def test_random_interpolates_lie_on_segments_and_are_seeded():
    real, fake = torch.zeros(50, 3), torch.ones(50, 3)
    a = random_interpolates(real, fake, torch.Generator().manual_seed(1))
    b = random_interpolates(real, fake, torch.Generator().manual_seed(1))
    c = random_interpolates(real, fake, torch.Generator().manual_seed(2))
    assert_close(a, b)
    assert not torch.equal(a, c)
    assert bool(((a >= 0) & (a <= 1)).all())
    assert_close(a[:, 0], a[:, 1])  # one eps per row


def test_mismatched_shapes_raise(linear_critic):
    with pytest.raises(InvalidInputError, match="differ"):
        coherency_penalty(linear_critic, Q_TILDE, DIRECTION[:2])
    with pytest.raises(InvalidInputError, match="differ"):
        random_interpolates(torch.zeros(2, 2), torch.zeros(3, 2), torch.Generator())


def test_unknown_coherency_mode_lists_allowed(linear_critic):
    with pytest.raises(InvalidInputError, match="double_backward"):
        coherency_penalty(linear_critic, Q_TILDE, DIRECTION, mode="finite_difference")
