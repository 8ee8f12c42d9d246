"""Section H of seed 000 (computational complexity), counted and measured.

Section H states, per epoch, ``O(K n (d + |V|) h / B)`` with per-source cost ``O(B (d + |V_k|)
h)``. Counting the multiply-adds of the Appendix A networks ourselves (:func:`iteration_macs`):

- generator forward, per record: ``L h + 2 h^2 + h d`` (latent L = 32, three hidden layers of
  width h, output d); section H keeps only ``d h``;
- discriminator k forward, per record: ``|V_k| h + h^2 + h^2/2 + h/2`` (widths h, h, h/2 = 64,
  1);
  section H keeps only ``|V_k| h``;
- one Algorithm-B update of source k (B records): the D step runs G forward once (no gradient)
  and D_k forward and backward on 2B records; the G step runs G forward, D_k forward, and the
  backward pass through both. With a backward pass costing about twice its forward pass, that
  is ``B (4 F_G + 9 F_D)`` per source and iteration (``F`` per record);
- an epoch is ``ceil(n / B)`` iterations (our reading, see
  :class:`~fusionlib.fusion.synthesizer.FusionGAN`), so the epoch cost is ``K n (4 F_G + 9 F_D)``:
  linear in K and n, with no ``1 / B`` factor (section H's ``/ B`` counts batches, not work), and
  quadratic in h through the ``h^2`` terms that section H leaves out; for the defaults (h = 128, L =
  32) they dominate unless d is in the hundreds.

:func:`time_iterations` measures seconds per iteration of the real step on this machine,
:func:`time_sweep` takes the minimum over interleaved repeats of a sweep (load on a shared
machine only adds time), and :func:`loglog_slope` fits the exponent of a power law to a sweep.
Wall-time exponents stay machine-dependent (per-call overheads, cache sizes); the multiply-add
count is the machine-independent check of section H.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.step import fusion_step
from fusionlib.gan.trainer import Trainer
from fusionlib.rng import child, numpy_rng

__all__ = ["MacCount", "iteration_macs", "section_h_macs", "source_widths", "time_iterations",
           "time_sweep", "loglog_slope", "epoch_seconds"]


@dataclass(frozen=True)
class MacCount:
    """Multiply-adds of one trainer iteration (all K sources), split by term."""

    generator: int
    discriminators: int
    hidden_squared: int  # the part that comes from h x h (and h x h/2) layers

    @property
    def total(self) -> int:
        return self.generator + self.discriminators


def source_widths(d: int, k: int) -> list[int]:
    """|V_k| of the benchmark design: one shared column plus an equal share of the other d-1."""
    check_positive_int("d", d)
    check_positive_int("k", k)
    if d - 1 < k:
        raise InvalidInputError(f"d = {d} columns cannot give {k} sources a column of their own "
                                "besides the shared one; use d >= k + 1")
    own = np.array_split(np.arange(d - 1), k)
    return [1 + len(o) for o in own]


def iteration_macs(d: int, widths: list[int], *, hidden: int = 128, latent: int = 32,
                   batch: int = 64) -> MacCount:
    """Multiply-adds of one iteration, counted from the Appendix A architectures."""
    f_g = latent * hidden + 2 * hidden * hidden + hidden * d
    gen = disc = sq = 0
    for v in widths:
        half = hidden // 2  # the third discriminator layer: 128 -> 64 in section A
        f_d = v * hidden + hidden * hidden + hidden * half + half
        gen += batch * 4 * f_g
        disc += batch * 9 * f_d
        sq += batch * (4 * 2 * hidden * hidden + 9 * (hidden * hidden + hidden * half))
    return MacCount(generator=gen, discriminators=disc, hidden_squared=sq)


def section_h_macs(d: int, widths: list[int], *, hidden: int = 128, batch: int = 64) -> int:
    """Section H's per-iteration count: sum over sources of ``B (d + |V_k|) h``."""
    return sum(batch * (d + v) * hidden for v in widths)


def _design(k: int, n: int, d: int, seed: object) -> tuple[list[list[int]], tuple]:
    widths = source_widths(d, k)
    own = np.array_split(np.arange(1, d), k)
    indices = [[0, *o.tolist()] for o in own]
    rng = numpy_rng(seed, "complexity-data")
    data = []
    for w in widths:
        data += [rng.standard_normal((n, w)).astype(np.float32), np.ones(n, dtype=np.float32)]
    return indices, tuple(data)


def time_iterations(k: int, n: int, d: int, hidden: int, *, n_iter: int = 30, batch: int = 64,
                    seed: object = 0, n_threads: int = 1) -> float:
    """Median seconds per trainer iteration of the real FusionGAN step (after a warm-up).

    K sources of ``n`` random rows each; the schema has ``d`` columns: one shared by every
    source, the others split among the sources (:func:`source_widths`).
    """
    check_positive_int("n_iter", n_iter)
    indices, data = _design(k, n, d, seed)
    cfg = FusionConfig(hidden=hidden, batch_size=batch)
    step = fusion_step(cfg, d, indices, seed=child(seed, "nets"))
    trainer = Trainer(step, seed=child(seed, "train"), log_every=0, n_threads=n_threads)
    trainer.fit(data, 5)  # warm-up: allocations, first-call overheads
    times = []
    for i in range(3):
        t0 = time.perf_counter()
        trainer.fit(data, 5 + (i + 1) * n_iter)
        times.append((time.perf_counter() - t0) / n_iter)
    return float(np.median(times))


def time_sweep(configs: list[dict], *, repeats: int = 3, n_iter: int = 20, seed: object = 0
               ) -> list[float]:
    """Seconds per iteration of each configuration (``time_iterations`` keyword arguments):
    the **minimum** over ``repeats`` rounds, the configurations interleaved within a round
    (in a rotated order), so that load on a shared machine, which only ever adds time, hits
    every configuration alike and is filtered out by the minimum."""
    check_positive_int("repeats", repeats)
    best = [math.inf] * len(configs)
    for r in range(repeats):
        order = list(range(len(configs)))
        order = order[r % len(order):] + order[:r % len(order)]
        for i in order:
            t = time_iterations(**configs[i], n_iter=n_iter, seed=child(seed, "sweep", i))
            best[i] = min(best[i], t)
    return best


def loglog_slope(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log y on log x (the exponent of a power law y ~ x^slope)."""
    if len(x) != len(y) or len(x) < 2 or min(x) <= 0 or min(y) <= 0:
        raise InvalidInputError("need at least two positive (x, y) pairs of equal length")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def epoch_seconds(seconds_per_iteration: float, n: int, batch: int = 64) -> float:
    """Seconds of one epoch: ``ceil(n / B)`` iterations."""
    return seconds_per_iteration * math.ceil(n / batch)

