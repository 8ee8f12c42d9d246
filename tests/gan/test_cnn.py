"""Tests of the convolutional networks of PTGAN's Tables 5 and 6."""

import pytest
import torch
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.gan.cnn import CNNCritic, CNNGenerator, cnn_networks
from fusionlib.gan.cnn_specs import critic_specs, layer_table


@pytest.mark.parametrize(("size", "channels"), [(32, 3), (64, 3), (32, 1)])
def test_table5_shapes_at_small_width(size, channels):
    gen, critic = cnn_networks(size, channels, conditional=False, spectral_norm=False,
                               width=1 / 16)
    z = torch.rand(5, gen.latent_dim)
    x = gen(z)
    assert x.shape == (5, channels * size * size)
    assert gen.latent_dim == 128
    assert critic(x).shape == (5,)
    assert critic(x.reshape(5, channels, size, size)).shape == (5,)
    assert x.abs().max() <= 1.0  # tanh output


def test_table5_full_width_layers_and_parameter_count():
    gen, critic = cnn_networks(32, 3, conditional=False, spectral_norm=False)
    rows = layer_table(gen, critic)
    crit = [(r["kernel"], r["stride"], r["out"]) for r in rows if r["net"] == "critic"][:-1]
    assert crit == [(3, 1, 64), (4, 2, 64), (3, 1, 128), (4, 2, 128), (3, 1, 256), (4, 2, 256),
                    (3, 1, 512)]
    # hand count: conv weights + biases, then dense 4*4*512 -> 1
    convs = [(3, 3, 64), (64, 4, 64), (64, 3, 128), (128, 4, 128), (128, 3, 256), (256, 4, 256),
             (256, 3, 512)]
    expected = sum(ci * co * k * k + co for ci, k, co in convs) + 4 * 4 * 512 + 1
    assert sum(p.numel() for p in critic.parameters()) == expected
    assert gen.dense.out_features == 4 * 4 * 512  # M_Z = 4


def test_table5_64px_uses_stride_two_last_layer():
    gen, critic = cnn_networks(64, 3, conditional=False, spectral_norm=False, width=1 / 16)
    assert gen.layers[-1].stride == (2, 2)
    assert gen(torch.rand(2, 128)).shape == (2, 3 * 64 * 64)
    assert critic.feature_dim == 8 * 8 * critic.convs[-1].out_channels


def test_table6_structure_on_meta_device():
    gen, critic = cnn_networks(256, 3, conditional=False, spectral_norm=False, device="meta")
    rows = layer_table(gen, critic)
    assert [r["out"] for r in rows if r["net"] == "critic"] == [64, 128, 256, 512, 1024, 2048, 1]
    assert [r["kind"] for r in rows if r["net"] == "generator"][1:] == ["up+conv"] * 6
    assert gen.latent_dim == 256
    assert critic.feature_dim == 4 * 4 * 2048


def test_table6_forward_shapes_small_width():
    gen, critic = cnn_networks(256, 3, conditional=True, spectral_norm=False, width=1 / 64)
    t = torch.rand(2)
    x = gen(torch.rand(2, 256), t)
    assert x.shape == (2, 3 * 256 * 256)
    assert critic(x, t).shape == (2,)


def test_conditioning_reaches_every_hidden_layer():
    gen, critic = cnn_networks(32, 1, conditional=True, spectral_norm=False, width=1 / 16)
    # every conv after the first and the dense layer take one extra input for t(alpha)
    for i, conv in enumerate(critic.convs):
        expected = (1 if i == 0 else critic.convs[i - 1].out_channels + 1)
        assert conv.in_channels == expected
    assert critic.dense.in_features == critic.feature_dim + 1
    assert gen.dense.in_features == 128 + 1
    z = torch.rand(4, 128)
    x = gen(z, torch.zeros(4))
    assert not torch.allclose(x, gen(z, torch.ones(4)))
    assert not torch.allclose(critic(x, torch.zeros(4)), critic(x, torch.ones(4)))


def test_t_is_refused_or_required():
    gen, critic = cnn_networks(32, 1, conditional=False, spectral_norm=False, width=1 / 16)
    with pytest.raises(InvalidInputError, match="takes no t"):
        gen(torch.rand(2, 128), torch.rand(2))
    cgen, ccritic = cnn_networks(32, 1, conditional=True, spectral_norm=False, width=1 / 16)
    with pytest.raises(InvalidInputError, match="conditional"):
        ccritic(torch.rand(2, 1024))
    with pytest.raises(InvalidInputError, match="shape"):
        ccritic(torch.rand(2, 1024), torch.rand(3))


def test_wrong_image_shape_or_channels_refused():
    critic = CNNCritic(32, 3, width=1 / 16)
    with pytest.raises(InvalidInputError, match="3072"):
        critic(torch.rand(2, 1024))
    with pytest.raises(InvalidInputError, match="images"):
        critic(torch.rand(2, 1, 32, 32))
    with pytest.raises(InvalidInputError, match="8 \\* M_Z"):
        CNNGenerator(36, 3)
    with pytest.raises(InvalidInputError, match="256"):
        CNNGenerator(128, 3, arch="table6")


def test_spectral_norm_only_when_asked():
    _, sn = cnn_networks(32, 3, conditional=False, spectral_norm=True, width=1 / 16)
    _, plain = cnn_networks(32, 3, conditional=False, spectral_norm=False, width=1 / 16)
    assert all(hasattr(c, "parametrizations") for c in sn.convs)
    assert not any(hasattr(c, "parametrizations") for c in plain.convs)
    w = sn.convs[1].weight.reshape(sn.convs[1].out_channels, -1)
    sn.train()
    for _ in range(30):  # power iterations converge to the top singular value
        sn(torch.rand(2, 3, 32, 32))
    sigma = torch.linalg.matrix_norm(sn.convs[1].weight.reshape(w.shape), ord=2)
    assert float(sigma.detach()) == pytest.approx(1.0, abs=0.05)


def test_initialisation_is_seeded_and_leaves_global_state_alone():
    state = torch.random.get_rng_state()
    a = cnn_networks(32, 1, conditional=True, spectral_norm=True, width=1 / 16, seed=3)
    assert torch.equal(state, torch.random.get_rng_state())
    b = cnn_networks(32, 1, conditional=True, spectral_norm=True, width=1 / 16, seed=3)
    c = cnn_networks(32, 1, conditional=True, spectral_norm=True, width=1 / 16, seed=4)
    for x, y, _z in zip(a[1].state_dict().values(), b[1].state_dict().values(),
                       c[1].state_dict().values(), strict=True):
        assert torch.equal(x, y)
    assert not all(torch.equal(x, z) for x, z in zip(a[0].state_dict().values(),
                                                      c[0].state_dict().values(), strict=True)
                   if x.is_floating_point() and x.numel() > 1)


def test_critic_specs_scale_width():
    assert [s.out for s in critic_specs("table5", 0.5)] == [32, 32, 64, 64, 128, 128, 256]
    assert isinstance(CNNGenerator(32, 3, width=1 / 16).norms[0], nn.BatchNorm2d)
