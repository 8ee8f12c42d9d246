"""Stacked FusionGAN: R replicas in one model equal R separate runs."""

import numpy as np
import pandas as pd
import pytest
import torch
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.convergence import ConvergenceRule
from fusionlib.fusion.replicas import StackedFusionGAN
from fusionlib.fusion.stacked import StackedFusionStep, StackedLinear, StackedMLP, stack_linears
from fusionlib.fusion.step import fusion_step
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.rng import torch_generator

SMALL = FusionConfig(batch_size=32, hidden=16, latent_dim=8)


def sources(n=160, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=2 * n)
    a = pd.DataFrame({"x": x[:n], "y": 2 * x[:n] + rng.normal(size=n)})
    b = pd.DataFrame({"x": x[n:], "z": -x[n:] + 0.5 * rng.normal(size=n)})
    return {"A": a, "B": b}


def test_stacked_linear_equals_each_linear():
    layers = [torch.nn.Linear(5, 3) for _ in range(4)]
    stacked = stack_linears(layers)
    x = torch.randn(4, 7, 5)
    out = stacked(x)
    for r, lin in enumerate(layers):
        torch.testing.assert_close(out[r], lin(x[r]), rtol=1e-6, atol=1e-6)
    assert stacked.replicas == 4 and "replicas=4" in repr(stacked)


def test_stacked_mlp_round_trips_a_replica():
    nets = [fusion_step(SMALL, 3, [[0, 1], [0, 2]], seed=s).generator.net for s in range(3)]
    stacked = StackedMLP(nets)
    copy = fusion_step(SMALL, 3, [[0, 1], [0, 2]], seed=9).generator.net
    stacked.unstack(1, copy)
    for a, b in zip(copy.parameters(), nets[1].parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_one_adam_over_stacked_parameters_equals_independent_adams():
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(3, 4, 5, generator=gen) for _ in range(2)]
    stacked = [torch.nn.Parameter(p.clone()) for p in params]
    single = [[torch.nn.Parameter(p[r].clone()) for p in params] for r in range(3)]
    opt = torch.optim.Adam(stacked, lr=1e-2, betas=(0.5, 0.999), fused=True)
    opts = [torch.optim.Adam(s, lr=1e-2, betas=(0.5, 0.999), fused=True) for s in single]
    for _ in range(5):
        grads = [torch.randn(3, 4, 5, generator=gen) for _ in params]
        for p, g in zip(stacked, grads, strict=True):
            p.grad = g.clone()
        opt.step()
        for r in range(3):
            for p, g in zip(single[r], grads, strict=True):
                p.grad = g[r].clone()
            opts[r].step()
    for r in range(3):
        for p, q in zip(stacked, single[r], strict=True):
            torch.testing.assert_close(p[r], q, rtol=0, atol=0)  # bitwise


def test_one_replica_equals_the_unstacked_fusiongan():
    # R = 1: the same draws, networks and Adam updates as FusionGAN's step; equal up to float
    # rounding (about 3e-8: FlatAdam's one buffer splits the kernel's vector loop differently)
    stacked = StackedFusionGAN([3], 3, SMALL).fit(sources())
    plain = FusionGAN(3, SMALL, standardize=False, seed=3).fit(sources())
    pd.testing.assert_frame_equal(stacked.sample(50, seed=1)[0], plain.sample(50, seed=1))


def test_three_replicas_equal_three_separate_runs():
    # batched products round differently from addmm: equal within 1e-5 after 15 iterations
    seeds = [0, 1, 2]
    stacked = StackedFusionGAN(seeds, 3, SMALL, standardize=True).fit(sources())
    got = stacked.sample(40, seed=5)
    for r, s in enumerate(seeds):
        want = FusionGAN(3, SMALL, standardize=True, seed=s).fit(sources()).sample(40, seed=5)
        assert_allclose(got[r].to_numpy(), want.to_numpy(), rtol=1e-5, atol=1e-5)
    assert not np.allclose(got[0].to_numpy(), got[1].to_numpy())


def test_replicas_on_their_own_sources_and_with_weights():
    srcs = [sources(seed=s) for s in (0, 1)]
    cfg = FusionConfig(batch_size=32, hidden=16, latent_dim=8, weighting="density",
                       weight_sampling=True)
    stacked = StackedFusionGAN([4, 5], 2, cfg).fit(srcs)
    got = stacked.sample(30, seed=0)
    for r, (s, src) in enumerate(zip((4, 5), srcs, strict=True)):
        want = FusionGAN(2, cfg, standardize=False, seed=s).fit(src).sample(30, seed=0)
        assert_allclose(got[r].to_numpy(), want.to_numpy(), rtol=1e-5, atol=1e-5)


def test_same_seeds_same_output_other_seeds_other_output():
    a = StackedFusionGAN([0, 1], 1, SMALL).fit(sources()).sample(20, seed=0)
    b = StackedFusionGAN([0, 1], 1, SMALL).fit(sources()).sample(20, seed=0)
    c = StackedFusionGAN([2, 1], 1, SMALL).fit(sources()).sample(20, seed=0)
    pd.testing.assert_frame_equal(a[0], b[0])
    assert not np.allclose(a[0].to_numpy(), c[0].to_numpy())
    pd.testing.assert_frame_equal(a[1], c[1])  # replica 1 is the same run in both


def test_sample_takes_one_seed_per_replica():
    model = StackedFusionGAN([0, 1], 1, SMALL).fit(sources())
    both = model.sample(10, seed=[3, 4])
    pd.testing.assert_frame_equal(both[0], model.sample(10, seed=3)[0])
    pd.testing.assert_frame_equal(both[1], model.sample(10, seed=4)[1])
    with pytest.raises(InvalidInputError, match="one per replica"):
        model.sample(10, seed=[3])


def test_convergence_checks_match_the_unstacked_checks():
    rule = ConvergenceRule(every=1, rows=40)
    stacked = StackedFusionGAN([7], 2, SMALL, convergence=rule, stop_when_learned=False)
    stacked.fit(sources())
    plain = FusionGAN(2, SMALL, standardize=False, convergence=rule, seed=7)
    plain.fit(sources())
    got = stacked.checks_table_.drop(columns="replica")
    want = plain.convergence_
    if plain.learned_epoch_ is not None:  # the unstacked run stops at its first pass
        got = got[got["epoch"] <= plain.learned_epoch_]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want[got.columns])
    assert stacked.learned_epoch_ == [plain.learned_epoch_]


def test_a_replica_that_learned_keeps_its_generator_of_that_check():
    # the stack trains 3 epochs, but replica 0 passed at epoch 1: its samples are those of the
    # unstacked run, which stops there (R = 1 path of the same draws, up to float rounding)
    easy = ConvergenceRule(every=1, rows=40, mmd_factor=1e6, coverage_factor=1e6,
                           uncovered=0.999)
    stacked = StackedFusionGAN([7], 3, SMALL, convergence=easy, stop_when_learned=False)
    stacked.fit(sources())
    assert stacked.epochs_ == 3 and stacked.learned_epoch_ == [1] and stacked.learned_ == [True]
    plain = FusionGAN(3, SMALL, convergence=easy, seed=7).fit(sources())
    assert plain.epochs_ == 1
    pd.testing.assert_frame_equal(stacked.sample(20, seed=2)[0], plain.sample(20, seed=2))


def test_callback_sees_every_check_and_stops_when_all_learned():
    seen = []
    rule = ConvergenceRule(every=1, rows=40, mmd_factor=1e6, coverage_factor=1e6,
                           uncovered=0.999)
    model = StackedFusionGAN([0, 1], 5, SMALL, convergence=rule)
    model.fit(sources(), callback=lambda m, e: seen.append(e))
    assert seen == [1] and model.epochs_ == 1 and model.learned_ == [True, True]
    assert model.learned_epoch_ == [1, 1]


def test_step_rejects_what_it_does_not_cover():
    step = fusion_step(SMALL, 3, [[0, 1], [0, 2]], seed=0)
    with pytest.raises(InvalidInputError, match="BCE"):
        StackedFusionStep(FusionConfig(batch_size=32, hidden=16, latent_dim=8, loss="wgan-gp"),
                          [step.generator], [step.discriminators], [[0, 1], [0, 2]])
    with pytest.raises(InvalidInputError, match="one generator and one list"):
        StackedFusionStep(SMALL, [step.generator], [], [[0, 1], [0, 2]])
    stacked = StackedFusionStep(SMALL, [step.generator], [step.discriminators], [[0, 1], [0, 2]])
    with pytest.raises(InvalidInputError, match="one generator per replica"):
        stacked.iteration((), [torch_generator(0), torch_generator(1)], stacked.optimizers())
    with pytest.raises(InvalidInputError, match="weight"):
        StackedLinear(torch.zeros(2, 3), torch.zeros(2))


def test_front_end_rejects_bad_input():
    with pytest.raises(InvalidInputError, match="at least one seed"):
        StackedFusionGAN([], 1, SMALL).fit(sources())
    with pytest.raises(InvalidInputError, match="one per replica"):
        StackedFusionGAN([0, 1], 1, SMALL).fit([sources()])
    with pytest.raises(InvalidInputError, match="same names, columns"):
        StackedFusionGAN([0, 1], 1, SMALL).fit([sources(160), sources(200)])
    with pytest.raises(InvalidInputError, match="epochs"):
        StackedFusionGAN([0], 0, SMALL).fit(sources())
    with pytest.raises(NotFittedError):
        StackedFusionGAN([0], 1, SMALL).sample(3)
