"""Section H: the multiply-add count against torch's own FLOP counter, and the slope fit."""

from __future__ import annotations

import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.complexity import (
    epoch_seconds,
    iteration_macs,
    loglog_slope,
    section_h_macs,
    source_widths,
    time_iterations,
    time_sweep,
)
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator


def _forward_macs(module: torch.nn.Module, x: torch.Tensor) -> int:
    with FlopCounterMode(display=False) as counter:
        module(x)
    return counter.get_total_flops() // 2  # torch counts a multiply-add as 2 FLOPs


@pytest.mark.parametrize(("d", "h"), [(5, 128), (20, 64)])
def test_forward_counts_match_torch_flop_counter(d, h):
    b, latent = 8, 32
    gen = FusionGenerator(d, hidden=h, seed=0)
    assert _forward_macs(gen, torch.zeros(b, latent)) == b * (latent * h + 2 * h * h + h * d)
    for v in source_widths(d, 2):
        disc = SourceDiscriminator(v, hidden=h, seed=0)
        half = h // 2  # section A: 128 -> 64
        assert _forward_macs(disc, torch.zeros(b, v)) == b * (v * h + h * h + h * half + half)


def test_iteration_count_is_4_generator_and_9_discriminator_passes():
    d, h, b = 5, 128, 64
    widths = source_widths(d, 2)
    macs = iteration_macs(d, widths, hidden=h, batch=b)
    f_g = 32 * h + 2 * h * h + h * d
    assert macs.generator == 2 * b * 4 * f_g
    assert macs.discriminators == sum(b * 9 * (v * h + h * h + h * 64 + 64) for v in widths)
    # section H keeps only B (d + |V_k|) h per source: a small share of the count
    assert section_h_macs(d, widths, hidden=h, batch=b) < 0.01 * macs.total


def test_source_widths_share_one_column():
    assert source_widths(20, 2) == [11, 10]
    assert sum(w - 1 for w in source_widths(9, 4)) == 8
    with pytest.raises(InvalidInputError, match="d >= k"):
        source_widths(3, 4)


def test_loglog_slope_recovers_a_power_law():
    x = [1.0, 2.0, 4.0, 8.0]
    assert loglog_slope(x, [3 * v**1.5 for v in x]) == pytest.approx(1.5)
    with pytest.raises(InvalidInputError):
        loglog_slope([1.0], [1.0])


def test_timing_runs_the_real_step_and_epochs_scale_with_n():
    s = time_iterations(2, 200, 6, 16, n_iter=2)
    assert s > 0 and math.isfinite(s)
    assert epoch_seconds(s, 640) == pytest.approx(10 * s)


def test_sweep_takes_the_minimum_over_interleaved_repeats(monkeypatch):
    import fusionlib.fusion.complexity as cx

    calls = []
    fake = iter([3.0, 5.0, 1.0, 4.0, 2.0, 6.0])

    def timed(**kw):
        calls.append(kw["n"])
        return next(fake)

    monkeypatch.setattr(cx, "time_iterations", timed)
    got = time_sweep([{"k": 2, "n": 10, "d": 4, "hidden": 8},
                      {"k": 2, "n": 20, "d": 4, "hidden": 8}], repeats=3)
    assert calls == [10, 20, 20, 10, 10, 20]  # rotated order in each round
    assert got == [2.0, 1.0]
    with pytest.raises(InvalidInputError, match="repeats"):
        time_sweep([], repeats=0)
