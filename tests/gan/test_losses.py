import math

import pytest
import torch
from torch.testing import assert_close

from fusionlib.errors import InvalidInputError
from fusionlib.gan.losses import LOSSES, critic_loss, generator_loss, soft_label_bce

REAL = torch.tensor([1.0, 2.0, 3.0])
FAKE = torch.tensor([0.0, 1.0])


def test_wasserstein_losses_on_known_scores():
    # critic: mean(fake) - mean(real) = 0.5 - 2 = -1.5; generator: -mean(fake) = -0.5
    assert critic_loss(REAL, FAKE, "wasserstein").item() == pytest.approx(-1.5)
    assert generator_loss(FAKE, "wasserstein").item() == pytest.approx(-0.5)


def test_js_losses_at_zero_logits_equal_log_two():
    # sigmoid(0) = 1/2: critic -log(1/2) - log(1/2) = 2 ln 2; generator -log(1/2) = ln 2
    zeros = torch.zeros(4)
    assert critic_loss(zeros, zeros, "js").item() == pytest.approx(2 * math.log(2))
    assert generator_loss(zeros, "js").item() == pytest.approx(math.log(2))


def test_js_critic_loss_matches_independent_bce():
    real, fake = torch.tensor([0.3, -1.2]), torch.tensor([2.0, -0.4])
    expected = sum(-math.log(1 / (1 + math.exp(-v))) for v in real.tolist()) / 2 + sum(
        -math.log(1 - 1 / (1 + math.exp(-v))) for v in fake.tolist()) / 2
    assert critic_loss(real, fake, "js").item() == pytest.approx(expected, rel=1e-6)


def test_js_generator_is_non_saturating():
    # -log sigmoid(f): gradient stays near -1 for very negative f instead of vanishing
    fake = torch.tensor([-10.0], requires_grad=True)
    generator_loss(fake, "js").backward()
    assert fake.grad.item() == pytest.approx(-1.0, abs=1e-4)


def test_pearson_losses_on_known_scores():
    # critic: 0.5 mean((1-1)^2, (3-1)^2) + 0.5 mean((-1+1)^2, (1+1)^2) = 1 + 1 = 2
    # generator: 0.5 mean((-1)^2, 1^2) = 0.5
    real, fake = torch.tensor([1.0, 3.0]), torch.tensor([-1.0, 1.0])
    assert critic_loss(real, fake, "pearson").item() == pytest.approx(2.0)
    assert generator_loss(fake, "pearson").item() == pytest.approx(0.5)


@pytest.mark.parametrize("kind", LOSSES)
def test_critic_loss_lower_when_critic_separates_better(kind):
    good = critic_loss(torch.full((3,), 1.0), torch.full((3,), -1.0), kind)
    bad = critic_loss(torch.full((3,), -1.0), torch.full((3,), 1.0), kind)
    assert good.item() < bad.item()


def test_soft_label_bce_at_half_label():
    assert soft_label_bce(torch.zeros(3), torch.full((3,), 0.5)).item() == pytest.approx(
        math.log(2))
    assert_close(soft_label_bce(torch.tensor([0.7]), torch.tensor([1.0])),
                 critic_loss(torch.tensor([0.7]), torch.tensor([-1e9]), "js"))


def test_pearson_with_the_papers_labels_on_known_scores():
    real, fake = torch.tensor([1.0, 3.0]), torch.tensor([0.0, 2.0])
    # critic: 0.5 mean((1-1)^2, (3-1)^2) + 0.5 mean(0^2, 2^2) = 0.5 * 2 + 0.5 * 2 = 2
    assert critic_loss(real, fake, "pearson01").item() == pytest.approx(2.0)
    # generator: 0.5 mean((0-1)^2, (2-1)^2) = 0.5
    assert generator_loss(fake, "pearson01").item() == pytest.approx(0.5)
    # the critic's optimum puts D = 1 on real and D = 0 on generated rows
    assert critic_loss(torch.ones(3), torch.zeros(3), "pearson01").item() == 0.0


def test_unknown_loss_name_lists_allowed_names():
    with pytest.raises(InvalidInputError, match="wasserstein.*js.*pearson"):
        critic_loss(REAL, FAKE, "hinge")
    with pytest.raises(InvalidInputError, match="choose one of"):
        generator_loss(FAKE, "kl")


def test_unsqueezed_or_mismatched_scores_raise():
    with pytest.raises(InvalidInputError, match="squeeze"):
        critic_loss(REAL[:, None], FAKE, "wasserstein")
    with pytest.raises(InvalidInputError, match="squeeze"):
        generator_loss(FAKE[:, None], "wasserstein")
    with pytest.raises(InvalidInputError, match="leading"):
        critic_loss(torch.stack([REAL, REAL]), FAKE, "js")


def test_stacked_scores_give_one_loss_per_repetition():
    both = critic_loss(torch.stack([REAL, 2 * REAL]), torch.stack([FAKE, FAKE]), "wasserstein")
    assert both.shape == (2,)
    assert both[0] == critic_loss(REAL, FAKE, "wasserstein")
    assert both[1] == critic_loss(2 * REAL, FAKE, "wasserstein")


def test_soft_labels_outside_unit_interval_raise():
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        soft_label_bce(torch.zeros(2), torch.tensor([0.5, 1.5]))
