"""Sharp fairness bounds from two tables: hand-worked cases, brute force, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.bounds import (
    CouplingMargins,
    InconsistentMarginsError,
    coupling_margins,
    coupling_metrics,
    fairness_bounds,
    metric_bounds,
)
from fusionlib.metrics.fairness import metrics_from_counts


def _one_level(q: list[list[float]], pu: float) -> CouplingMargins:
    return CouplingMargins(("a",), np.array([q], float), np.array([[pu, 1 - pu]]))


def test_hand_worked_single_overlap_value():
    # q[y, yhat] = [[.3, .3], [.1, .3]]: P(Yhat=+) = .6, P(A=u) = P(A=p) = .5.
    # DI = (s/.5) / ((.6 - s)/.5) with s = P(Yhat=+, A=u) in [max(0, .6 - .5), min(.6, .5)]
    #    = [.1, .5]  ->  DI in [.1/.5, .5/.1] = [0.2, 5].
    # EOD: all (y=+, yhat=+) mass .3 in u and all (y=+, yhat=-) .1 in p gives TPR_u = 1,
    #      TPR_p = 0 -> EOD = 1 (and -1 by symmetry).
    # AOD max: u gets (+,+) .3 and (-,+) .2 -> TPR_u = FPR_u = 1; p gets (+,-) .1, (-,+) .1,
    #      (-,-) .3 -> TPR_p = 0, FPR_p = .1/.4 = .25; AOD = .5 * ((1 - .25) + (1 - 0)) = .875.
    table = fairness_bounds(_one_level([[0.3, 0.3], [0.1, 0.3]], 0.5)).set_index("metric")
    assert table.loc["DI", "lower"] == pytest.approx(0.2, abs=1e-8)
    assert table.loc["DI", "upper"] == pytest.approx(5.0, abs=1e-7)
    assert table.loc["EOD", "lower"] == pytest.approx(-1.0, abs=1e-5)
    assert table.loc["EOD", "upper"] == pytest.approx(1.0, abs=1e-5)
    assert table.loc["AOD", "upper"] == pytest.approx(0.875, abs=1e-5)
    assert table.loc["AOD", "lower"] == pytest.approx(-0.875, abs=1e-5)


def test_di_unbounded_when_privileged_rate_can_vanish():
    # P(Yhat=+) = .4 <= P(A=u) = .5: every favourable prediction can go to the unprivileged.
    b = metric_bounds(_one_level([[0.5, 0.1], [0.1, 0.3]], 0.5), "DI")
    assert b.lower == pytest.approx(0.0, abs=1e-9)
    assert b.upper == np.inf


def test_fully_informative_overlap_gives_a_point():
    # A is a function of O (O=a -> unprivileged, O=b -> privileged): one coupling only.
    q = np.array([[[0.2, 0.1], [0.05, 0.15]], [[0.1, 0.1], [0.1, 0.2]]])
    r = np.array([[0.5, 0.0], [0.0, 0.5]])
    table = fairness_bounds(CouplingMargins(("a", "b"), q, r)).set_index("metric")
    truth = metrics_from_counts(np.stack([q[0], q[1]]))  # p[g, y, yhat]
    for m in ("DI", "AOD", "EOD"):
        assert table.loc[m, "lower"] == pytest.approx(float(truth[m]), abs=1e-6)
        assert table.loc[m, "upper"] == pytest.approx(float(truth[m]), abs=1e-6)


def _tables(counts_q: np.ndarray, r0: int):
    """Every integer split of one overlap value's counts q[u] with r0 rows in group u."""
    out = []
    for split in itertools.product(*(range(c + 1) for c in counts_q[:3])):
        last = r0 - sum(split)
        if 0 <= last <= counts_q[3]:
            u = np.array([*split, last])
            out.append(np.stack([u, counts_q - u]))  # [g, u]
    return np.array(out)


def _brute_force(q_counts: np.ndarray, r0: np.ndarray) -> dict[str, np.ndarray]:
    """Metrics of every integer coupling of two overlap values (lattice of the polytope)."""
    a = _tables(q_counts[0].ravel(), r0[0])
    b = _tables(q_counts[1].ravel(), r0[1])
    p = (a[:, None] + b[None, :]).reshape(-1, 2, 2, 2).astype(float)  # [g, y, yhat]
    with np.errstate(invalid="ignore", divide="ignore"):
        return {k: np.asarray(v) for k, v in metrics_from_counts(p).items()}


@pytest.mark.parametrize("scale", [1, 4])
def test_bounds_match_brute_force_on_small_tables(scale):
    q_counts = np.array([[[3, 1], [1, 2]], [[1, 2], [2, 3]]]) * scale  # [o, y, yhat]
    r0 = np.array([3, 2]) * scale  # unprivileged rows per overlap value
    n = q_counts.sum()
    r = np.stack([r0, q_counts.sum((1, 2)) - r0], axis=1) / n
    table = fairness_bounds(CouplingMargins(("a", "b"), q_counts / n, r), n_grid=81)
    brute = _brute_force(q_counts, r0)
    for row in table.itertuples():
        v = brute[row.metric][np.isfinite(brute[row.metric])]
        # nothing on the lattice lies beyond the bound ...
        assert v.max() <= row.upper + 1e-6
        assert v.min() >= row.lower - 1e-6
        # ... and the bound is reached (DI: integer vertices, exactly; the profile metrics
        # are not linear, their extremum may sit between lattice points: a lattice gap)
        gap = 1e-7 if row.metric == "DI" else 0.15 / scale
        assert row.upper - v.max() <= gap
        assert v.min() - row.lower <= gap


def test_witnesses_are_feasible_and_attain_the_bounds():
    q = np.array([[[0.2, 0.1], [0.05, 0.15]], [[0.1, 0.1], [0.1, 0.2]]])
    r = np.array([[0.2, 0.3], [0.25, 0.25]])
    m = CouplingMargins(("a", "b"), q, r)
    for metric in ("DI", "AOD", "EOD"):
        b = metric_bounds(m, metric)
        for side, value in (("lower", b.lower), ("upper", b.upper)):
            pi = b.witnesses[side]
            np.testing.assert_allclose(pi.sum(1), q, atol=1e-8)
            np.testing.assert_allclose(pi.sum((2, 3)), r, atol=1e-8)
            assert pi.min() >= -1e-9
            assert coupling_metrics(pi)[metric] == pytest.approx(value, abs=1e-5)


def test_true_joint_lies_inside_its_bounds():
    rng = np.random.default_rng(3)
    n = 400
    o = rng.integers(0, 3, n)
    g = rng.random(n) < 0.3 + 0.2 * o
    y = rng.random(n) < 0.3 + 0.3 * g
    yhat = rng.random(n) < np.where(y, 0.7, 0.2) + 0.05 * o
    m = coupling_margins(o, y, yhat, o, g)
    truth = metrics_from_counts(np.bincount(g * 4 + y * 2 + yhat, minlength=8).reshape(2, 2, 2))
    for row in fairness_bounds(m).itertuples():
        assert row.lower - 1e-6 <= float(truth[row.metric]) <= row.upper + 1e-6
        assert row.upper - row.lower > 0.01  # the overlap does not identify the metric


def test_inconsistent_overlap_margins_raise_and_name_the_value():
    o_int = np.array(["a", "a", "b", "b"])
    o_ext = np.array(["a", "b", "b", "b"])
    y = yhat = np.array([1, 0, 1, 0])
    with pytest.raises(InconsistentMarginsError, match="P\\(O='a'\\)"):
        coupling_margins(o_int, y, yhat, o_ext, [1, 0, 1, 0])


def test_overlap_value_in_one_table_only_raises():
    with pytest.raises(InconsistentMarginsError, match="one table only"):
        coupling_margins(["a", "b"], [1, 0], [1, 1], ["a", "c"], [1, 0])


def test_infeasible_margins_passed_directly_raise():
    q = np.array([[[0.25, 0.25], [0.25, 0.25]]])
    r = np.array([[0.5, 0.6]])  # sums to 1.1: the external constraints contradict q
    with pytest.raises(InconsistentMarginsError, match="infeasible"):
        fairness_bounds(CouplingMargins(("a",), q, r))


def test_nan_in_tables_raises():
    with pytest.raises(InvalidInputError, match="missing"):
        coupling_margins(["a", None], [1, 0], [1, 1], ["a", "a"], [1, 0])
    with pytest.raises(InvalidInputError, match="binary"):
        coupling_margins(["a", "a"], [1, 2], [1, 1], ["a", "a"], [1, 0])
    q = np.array([[[np.nan, 0.25], [0.25, 0.25]]])
    with pytest.raises(InvalidInputError, match="NaN"):
        fairness_bounds(CouplingMargins(("a",), q, np.array([[0.5, 0.5]])))


def test_unknown_metric_raises():
    with pytest.raises(InvalidInputError, match="DI"):
        metric_bounds(_one_level([[0.3, 0.3], [0.1, 0.3]], 0.5), "SPD")


def test_charnes_cooper_matches_the_monotone_form_of_di():
    # DI = (s / P(A=u)) / ((P(Yhat=+) - s) / P(A=p)) is increasing in s = P(Yhat=+, A=u), so
    # its bounds are DI at the two ends of the range of s (two plain LPs): an independent route.
    from fusionlib.fairtest.bounds_lp import LinearProgram

    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.dirichlet(np.ones(12)).reshape(3, 2, 2)
        r = np.stack([q.sum((1, 2)) * w for w in (rng.uniform(0.2, 0.8, 3),)], 1)[:, 0]
        r = np.stack([r, q.sum((1, 2)) - r], axis=1)
        m = CouplingMargins(("a", "b", "c"), q, r)
        lp = LinearProgram(m)
        s_vec = lp.marginal_vector(g=0, yhat=1)
        total = q[:, :, 1].sum()
        pu, pp = r[:, 0].sum(), r[:, 1].sum()
        ends = [lp.optimise(s_vec, sense=k)[0] for k in ("min", "max")]
        expected = [(s / pu) / ((total - s) / pp) for s in ends]
        b = metric_bounds(m, "DI")
        assert b.lower == pytest.approx(expected[0], rel=1e-7)
        assert b.upper == pytest.approx(expected[1], rel=1e-7)
