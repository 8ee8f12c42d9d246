"""Tests of fusionlib.threads (the thread budget a scheduler gives a job) and its use by MMD."""

from __future__ import annotations

import os

import numpy as np
import pytest

from fusionlib.metrics import mmd as mmd_module
from fusionlib.threads import thread_budget


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@pytest.mark.parametrize("value, expected", [("1", 1), ("3", 3), ("4,2", 4), (" 2 ", 2)])
def test_omp_num_threads_sets_the_budget(monkeypatch, value, expected):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert thread_budget() == expected


@pytest.mark.parametrize("value", ["", "0", "-1", "two", "1.5"])
def test_without_a_usable_value_the_budget_is_every_core_of_the_process(monkeypatch, value):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert thread_budget() == _cores() >= 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert thread_budget() == _cores()


class _NoPool:
    def __init__(self, workers):
        raise AssertionError(f"a pool of {workers} threads was started")


def test_mmd_follows_the_budget_and_its_value_does_not_depend_on_it(monkeypatch):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(300, 3)), rng.normal(0.3, 1.0, size=(300, 3))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setattr(mmd_module, "ThreadPoolExecutor", _NoPool)
    one = mmd_module.mmd(x, y, gamma=0.5, chunk=64).mmd2  # one thread: no pool at all
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    with pytest.raises(AssertionError, match="pool of 2 threads"):
        mmd_module.mmd(x, y, gamma=0.5, chunk=64)
    monkeypatch.undo()
    assert mmd_module.mmd(x, y, gamma=0.5, chunk=64, workers=3).mmd2 == one
