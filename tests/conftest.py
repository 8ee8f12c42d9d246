"""Shared fixtures. Real-data tests skip (with the reason) only when the data are absent;
`make test` provisions them first, so in CI they always run."""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn

from fusionlib.errors import DataUnavailableError


def _share_of_cores(workers: str | None, cores: int, preset: str | None) -> int | None:
    """Threads for one pytest-xdist worker: its share of the cores (torch would otherwise take
    every core in every worker, 2 workers x 2 threads on 2 cores); None outside xdist or when
    the caller set OMP_NUM_THREADS."""
    if not workers or not workers.isdigit() or int(workers) < 1 or preset:
        return None
    return max(1, cores // int(workers))


_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
_THREADS = _share_of_cores(os.environ.get("PYTEST_XDIST_WORKER_COUNT"), _CORES or 1,
                           os.environ.get("OMP_NUM_THREADS"))
if _THREADS is not None:
    torch.set_num_threads(_THREADS)
    os.environ["OMP_NUM_THREADS"] = str(_THREADS)  # the notebooks' kernels, other subprocesses


def require_data(name: str):
    from fusionlib.data import load

    try:
        return load(name)
    except DataUnavailableError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"{name} not provisioned ({exc}); run `make data`")



class LinearCritic(nn.Module):
    """D(x, t) = w . x + c t + b: its input gradient is the constant w (analytic)."""

    def __init__(self, w: list[float], c: float = 0.5, b: float = 0.25) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(w, dtype=torch.float32))
        self.c = nn.Parameter(torch.tensor(c))
        self.b = nn.Parameter(torch.tensor(b))

    def forward(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        out = x @ self.w + self.b
        return out if t is None else out + self.c * t


class QuadraticCritic(nn.Module):
    """D(x) = 0.5 x^T diag(a) x: its input gradient is a * x (analytic)."""

    def __init__(self, a: list[float]) -> None:
        super().__init__()
        self.a = nn.Parameter(torch.tensor(a, dtype=torch.float32))

    def forward(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        return 0.5 * (x.pow(2) * self.a).sum(dim=1)


@pytest.fixture
def linear_critic() -> LinearCritic:
    return LinearCritic([3.0, 4.0])


@pytest.fixture
def quadratic_critic() -> QuadraticCritic:
    return QuadraticCritic([2.0, 3.0])
