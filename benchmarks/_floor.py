"""The arithmetic floor shared by the benchmarks: this core's single-precision matrix rate."""

from __future__ import annotations

import math
import time

import torch

from fusionlib.gan.trainer import torch_threads


def peak_gflops(n: int = 1024, repeats: int = 5) -> float:
    """Single-precision matrix-product rate of this core (one thread), GFLOP/s: the best of
    ``repeats`` products of two ``n`` x ``n`` matrices."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    best = math.inf
    with torch_threads(1):
        a @ b
        for _ in range(repeats):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9
