"""How many compute threads this process may use (:func:`thread_budget`).

A scheduler that runs several jobs on one machine gives each job its share of the cores through
``OMP_NUM_THREADS``: Snakemake sets it to the rule's ``threads`` (1 for every cell and notebook
of the workflow), and Slurm and most batch systems do the same. OpenMP, OpenBLAS and torch read
it; the package's own thread pools (the MMD tiles of :mod:`fusionlib.metrics.mmd`) follow it
too, so two one-thread jobs on a two-core machine use two cores, not four. Without the
variable the budget is every core this process may run on.
"""

from __future__ import annotations

import os

__all__ = ["thread_budget"]


def thread_budget() -> int:
    """Threads this process may use: the first entry of ``OMP_NUM_THREADS`` when it is a
    positive integer (OpenMP also allows a list such as ``"4,2"`` for nested levels), else the
    number of cores in this process's affinity mask (``os.cpu_count()`` where that is not
    available); at least 1."""
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if value.isdigit() and int(value) >= 1:
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)
