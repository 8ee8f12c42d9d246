"""The exact search behind the fairness bounds: vertices, metric terms, certified gaps."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlib.fairtest.bounds.exact import (
    certified_extremum,
    metric_terms,
    polytope_vertices,
)
from fusionlib.fairtest.bounds.sharp import metrics_of_counts

from .bounds_oracle import x_vertices


def _random(rng, n_levels):
    q = rng.dirichlet(np.ones(4 * n_levels)).reshape(n_levels, 4)
    return q, q.sum(1) * rng.uniform(0.05, 0.95, n_levels)


def test_vertices_span_the_same_set_as_basis_enumeration():
    # Same support function in 500 random directions as the oracle's vertex candidates
    # (every basis of every overlap value's constraints, summed, pruned by Qhull).
    rng = np.random.default_rng(0)
    for n_levels in (1, 2, 3, 5):
        q, r0 = _random(rng, n_levels)
        ours = polytope_vertices(q, r0)
        theirs = x_vertices(q.reshape(-1, 2, 2), np.stack([r0, q.sum(1) - r0], 1))
        w = rng.normal(size=(500, 4))
        np.testing.assert_allclose((ours.points @ w.T).max(0), (theirs @ w.T).max(0),
                                   atol=1e-13)
        assert len(ours.points) <= 24
        # each vertex's per-level parts are couplings of that level: 0 <= x <= q, sum = r0
        assert (ours.parts >= 0).all() and (ours.parts <= q + 1e-15).all()
        np.testing.assert_allclose(ours.parts.sum(2), np.broadcast_to(r0, ours.parts.shape[:2]),
                                   atol=1e-15)
        np.testing.assert_allclose(ours.parts.sum(1), ours.points, atol=1e-15)


@pytest.mark.parametrize("metric", ["EOD", "AOD", "DI", "DP"])
def test_terms_reproduce_the_metric(metric):
    rng = np.random.default_rng(1)
    qa = rng.dirichlet(np.ones(4))
    x = qa * rng.uniform(0.1, 0.9, (20, 4))
    pu = x.sum(1)
    for xi, pui in zip(x, pu, strict=True):
        const, terms = metric_terms(metric, qa, pui, 1 - pui)
        value = const + sum(c * (n @ xi + n0) / (d @ xi + d0) for c, n, n0, d, d0 in terms)
        p = np.stack([xi, qa - xi]).reshape(2, 2, 2)
        assert value == pytest.approx(float(metrics_of_counts(p)[metric]), abs=1e-12)


def test_certified_gap_stops_at_the_tolerance_and_more_work_tightens_it():
    rng = np.random.default_rng(2)
    q, r0 = _random(rng, 4)
    v = polytope_vertices(q, r0)
    pu = r0.sum()
    coarse = certified_extremum(v, "AOD", q.sum(0), pu, 1 - pu, sense="max", tol=1e-4)
    fine = certified_extremum(v, "AOD", q.sum(0), pu, 1 - pu, sense="max", tol=1e-12)
    assert coarse[1] <= 1e-4 and fine[1] <= 1e-12
    assert fine[0] >= coarse[0]
    assert fine[0] <= coarse[0] + coarse[1] + 1e-15  # the coarse certificate holds


def test_undefined_everywhere_gives_nan():
    q = np.array([[0.5, 0.5, 0.0, 0.0]])  # no Y = + at all: TPR undefined for every coupling
    v = polytope_vertices(q, np.array([0.4]))
    value, gap, parts = certified_extremum(v, "EOD", q[0], 0.4, 0.6, sense="min", tol=1e-9)
    assert np.isnan(value) and np.isnan(gap) and parts is None
