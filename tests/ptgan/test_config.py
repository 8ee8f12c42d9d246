import dataclasses

import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.config import DEFAULTS, METHODS, TABULAR_R, GANConfig, default_config


def test_ptgan_defaults_follow_the_paper():
    cfg = default_config("pt+cp")
    assert cfg.penalty == "cp" and cfg.penalty_weight == 100.0
    assert cfg.lr_d == cfg.lr_g == 1e-4 and cfg.betas == (0.0, 0.9)
    assert cfg.n_critic == 1 and cfg.r == 0.9 and cfg.interpolated_noise and cfg.conditional
    assert default_config("pt+cp", r=TABULAR_R).r == 0.5


def test_every_method_has_defaults():
    assert set(DEFAULTS) == set(METHODS)
    assert default_config("plain").tempered is False
    assert default_config("gp").penalty_weight == 10.0
    assert default_config("mp").penalty_weight == 1.0
    assert default_config("mixup").mixup


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        default_config("pt+cp").r = 0.3


def test_unknown_method_lists_methods():
    with pytest.raises(InvalidInputError, match="pt\\+cp"):
        default_config("ptgan")


def test_unknown_override_is_rejected_with_allowed_names():
    with pytest.raises(InvalidInputError, match="unknown option.*lamda.*allowed.*penalty_weight"):
        default_config("pt+cp", lamda=10)


@pytest.mark.parametrize("r", [-0.01, 1.01])
def test_r_outside_unit_interval_raises(r):
    with pytest.raises(InvalidInputError, match="r must lie in"):
        default_config("pt+cp", r=r)


def test_tempering_without_temperature_input_raises():
    with pytest.raises(InvalidInputError, match="conditional=True"):
        GANConfig("custom", penalty="cp", penalty_weight=1.0)


def test_mixup_with_penalty_raises():
    with pytest.raises(InvalidInputError, match="Mixup"):
        default_config("mixup", penalty="gp")


@pytest.mark.parametrize("field,value,match", [
    ("loss", "hinge", "wasserstein"), ("penalty", "l2", "none"), ("n_critic", 0, "positive"),
    ("penalty_weight", -1.0, ">= 0"), ("betas", (0.5, 1.0), "betas"),
])
def test_bad_fields_raise(field, value, match):
    with pytest.raises(InvalidInputError, match=match):
        default_config("pt+gp", **{field: value})


@pytest.mark.parametrize("field", ["lr_d", "lr_g"])
@pytest.mark.parametrize("value", [0.0, -1e-4])
def test_non_positive_learning_rate_raises(field, value):
    with pytest.raises(InvalidInputError, match=f"{field} must be > 0"):
        default_config("pt+cp", **{field: value})


@pytest.mark.parametrize("field", ["mixup_a", "mixup_b"])
@pytest.mark.parametrize("value", [0.0, -0.2])
def test_non_positive_mixup_beta_parameter_raises(field, value):
    with pytest.raises(InvalidInputError, match=f"{field} must be > 0"):
        default_config("mixup", **{field: value})


def test_conditional_mixup_is_rejected():
    with pytest.raises(InvalidInputError, match="Mixup GAN has no temperature input.*"
                                                "conditional=False"):
        default_config("mixup", conditional=True)


def test_to_dict_round_trip():
    cfg = default_config("pt+gp")
    assert GANConfig(**cfg.to_dict()) == cfg


def test_wgan_gp_with_its_published_settings_takes_five_critic_steps():
    shared, own = default_config("gp"), default_config("wgan-gp")
    assert shared.n_critic == 1 and own.n_critic == 5
    assert (own.penalty, own.penalty_weight, own.betas) == ("gp", 10.0, (0.0, 0.9))
