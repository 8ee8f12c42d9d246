"""Bounds against brute force: LP and enumeration over joint tables, PSD grid searches."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from fusionlib.errors import InvalidInputError
from fusionlib.matching import (
    completion_bounds,
    correlation_bounds,
    cross_correlation_bounds,
    frechet_bounds_from_sources,
    frechet_cell_bounds,
    is_psd,
)


def random_margins(rng, i, j, k):
    px = rng.dirichlet(np.ones(i))
    return px, rng.dirichlet(np.ones(j), size=i), rng.dirichlet(np.ones(k), size=i)


def lp_cell_range(px, py, pz, cell):
    """min and max of p(y, z) over all p(x, y, z) >= 0 with margins p(x, y) and p(x, z)."""
    i, j, k = len(px), py.shape[1], pz.shape[1]
    rows, rhs = [], []
    for x, y in itertools.product(range(i), range(j)):  # sum_z p(x, y, z) = p(x) p(y|x)
        a = np.zeros((i, j, k))
        a[x, y, :] = 1
        rows.append(a.ravel())
        rhs.append(px[x] * py[x, y])
    for x, z in itertools.product(range(i), range(k)):
        a = np.zeros((i, j, k))
        a[x, :, z] = 1
        rows.append(a.ravel())
        rhs.append(px[x] * pz[x, z])
    c = np.zeros((i, j, k))
    c[:, cell[0], cell[1]] = 1
    out = []
    for sign in (1, -1):
        res = linprog(sign * c.ravel(), A_eq=np.array(rows), b_eq=rhs, bounds=(0, None),
                      method="highs")
        assert res.status == 0
        out.append(sign * res.fun)
    return out


@pytest.mark.parametrize("seed, shape", [(0, (2, 2, 2)), (1, (3, 2, 3)), (2, (2, 4, 3)),
                                         (3, (4, 3, 3))])
def test_frechet_bounds_equal_the_lp_over_all_joint_tables(seed, shape):
    px, py, pz = random_margins(np.random.default_rng(seed), *shape)
    lower, cia, upper = frechet_cell_bounds(px, py, pz)
    for cell in itertools.product(range(shape[1]), range(shape[2])):
        lo, hi = lp_cell_range(px, py, pz, cell)
        assert lower[cell] == pytest.approx(lo, abs=1e-8)
        assert upper[cell] == pytest.approx(hi, abs=1e-8)
        assert lower[cell] - 1e-12 <= cia[cell] <= upper[cell] + 1e-12
    assert cia.sum() == pytest.approx(1.0)


def integer_tables(nxy, nxz):
    """Every integer table n(y, z) (one x) with row sums nxy and column sums nxz."""
    j, k = len(nxy), len(nxz)
    for free in itertools.product(*[range(min(nxy[a], nxz[b]) + 1)
                                    for a in range(j - 1) for b in range(k - 1)]):
        t = np.zeros((j, k), dtype=int)
        t[:j - 1, :k - 1] = np.reshape(free, (j - 1, k - 1))
        t[:j - 1, k - 1] = nxy[:j - 1] - t[:j - 1, :k - 1].sum(axis=1)
        t[j - 1, :] = nxz - t[:j - 1, :].sum(axis=0)
        if (t >= 0).all() and (t.sum(axis=1) == nxy).all():
            yield t


def test_frechet_bounds_equal_enumeration_of_integer_tables():
    # counts n(x, y) and n(x, z) for x in two classes, 10 records per class
    nxy = np.array([[3, 5, 2], [6, 4, 0]])
    nxz = np.array([[4, 6], [1, 9]])
    per_x = [list(integer_tables(nxy[x], nxz[x])) for x in range(2)]
    totals = np.array([a + b for a in per_x[0] for b in per_x[1]]) / 20
    lower, _, upper = frechet_cell_bounds(np.array([0.5, 0.5]), nxy / 10, nxz / 10)
    np.testing.assert_allclose(totals.min(axis=0), lower, atol=1e-12)
    np.testing.assert_allclose(totals.max(axis=0), upper, atol=1e-12)


def test_bounds_from_sources_match_the_exact_margins():
    # tables built so that their empirical margins are exact
    a = pd.DataFrame({"x": ["a"] * 4 + ["b"] * 6,
                      "y": ["0", "1", "1", "1"] + ["0"] * 3 + ["1"] * 3})
    b = pd.DataFrame({"x": ["a"] * 2 + ["b"] * 3, "z": ["0", "1", "0", "0", "1"]})
    got = frechet_bounds_from_sources({"A": a, "B": b}, "y", "z")
    px = np.array([6, 9]) / 15
    lower, cia, upper = frechet_cell_bounds(px, [[0.25, 0.75], [0.5, 0.5]],
                                            [[0.5, 0.5], [2 / 3, 1 / 3]])
    np.testing.assert_allclose(got["lower"], lower.ravel())
    np.testing.assert_allclose(got["cia"], cia.ravel())
    np.testing.assert_allclose(got["upper"], upper.ravel())
    assert got[["y", "z"]].to_numpy().tolist() == [["0", "0"], ["0", "1"], ["1", "0"], ["1", "1"]]


def test_no_overlap_gives_the_unconditional_frechet_bounds():
    lower, cia, upper = frechet_cell_bounds([1.0], [[0.3, 0.7]], [[0.6, 0.4]])
    np.testing.assert_allclose(lower, [[0.0, 0.0], [0.3, 0.1]])
    np.testing.assert_allclose(upper, [[0.3, 0.3], [0.6, 0.4]])
    np.testing.assert_allclose(cia, [[0.18, 0.12], [0.42, 0.28]])


def psd_range(corr, i, j, grid):
    ok = []
    for r in grid:
        m = corr.copy()
        m[i, j] = m[j, i] = r
        if np.linalg.eigvalsh(m).min() >= -1e-12:
            ok.append(r)
    return min(ok), max(ok)


@pytest.mark.parametrize("rxy, rxz", [(0.6, 0.6), (0.0, 0.0), (0.9, -0.3), (0.95, 0.95)])
def test_correlation_bounds_equal_the_psd_grid(rxy, rxz):
    lo, cia, hi = correlation_bounds(rxy, rxz)
    grid = np.linspace(-1, 1, 20_001)
    corr = np.array([[1, rxy, rxz], [rxy, 1, 0], [rxz, 0, 1.0]])
    glo, ghi = psd_range(corr, 1, 2, grid)
    assert lo == pytest.approx(glo, abs=2e-4) and hi == pytest.approx(ghi, abs=2e-4)
    assert cia == pytest.approx(rxy * rxz)


def random_corr(rng, d):
    a = rng.standard_normal((d, d + 2))
    c = a @ a.T
    s = np.sqrt(np.diag(c))
    return c / np.outer(s, s)


def test_completion_bounds_equal_the_psd_grid_in_four_dimensions():
    corr = random_corr(np.random.default_rng(5), 4)
    lo, centre, hi = completion_bounds(corr, 1, 3)
    glo, ghi = psd_range(corr, 1, 3, np.linspace(-1, 1, 40_001))
    assert lo == pytest.approx(glo, abs=1e-4) and hi == pytest.approx(ghi, abs=1e-4)
    assert lo <= corr[1, 3] <= hi and lo <= centre <= hi


def test_block_bounds_hold_every_completion_and_are_attained():
    rng = np.random.default_rng(7)
    r = random_corr(rng, 6)  # X = 0,1; Y = 2,3; Z = 4,5
    xx, xy, xz = r[:2, :2], r[:2, 2:4], r[:2, 4:]
    yy, zz = r[2:4, 2:4], r[4:, 4:]
    lo, centre, hi = cross_correlation_bounds(xx, xy, xz, yy, zz)
    assert (lo <= r[2:4, 4:] + 1e-12).all() and (r[2:4, 4:] <= hi + 1e-12).all()

    def full(yz):
        return np.block([[xx, xy, xz], [xy.T, yy, yz], [xz.T, yz.T, zz]])

    assert is_psd(full(centre))
    for a, b, sign in itertools.product(range(2), range(2), (1, -1)):
        c = np.zeros((2, 2))
        c[a, b] = sign
        sa = np.linalg.cholesky(yy - xy.T @ np.linalg.solve(xx, xy))
        sb = np.linalg.cholesky(zz - xz.T @ np.linalg.solve(xx, xz))
        # a completion with the (a, b) entry at a bound: rank-one contraction on the
        # normalised directions; its (a, b) entry is centre +/- sqrt(A_aa B_bb)
        u = sa[a] / np.linalg.norm(sa[a])
        v = sb[b] / np.linalg.norm(sb[b])
        yz = centre + sign * sa @ np.outer(u, v) @ sb.T
        assert is_psd(full(yz), 1e-9)
        assert yz[a, b] == pytest.approx(hi[a, b] if sign > 0 else lo[a, b], abs=1e-10)


def test_block_bounds_reduce_to_the_scalar_formula():
    lo, centre, hi = cross_correlation_bounds([[1.0]], [[0.6]], [[-0.4]], [[1.0]], [[1.0]])
    assert (lo[0, 0], centre[0, 0], hi[0, 0]) == pytest.approx(correlation_bounds(0.6, -0.4))


@pytest.mark.parametrize("call, match", [
    (lambda: frechet_cell_bounds([0.5, 0.6], [[1, 0], [0, 1]], [[1, 0], [0, 1]]), "sum to 1"),
    (lambda: frechet_cell_bounds([1.0], [[0.5, 0.6]], [[1, 0]]), "conditional"),
    (lambda: frechet_cell_bounds([0.5, 0.5], [[1, 0]], [[1, 0], [0, 1]]), "one row per"),
    (lambda: frechet_cell_bounds([np.nan, 1.0], [[1, 0]] * 2, [[1, 0]] * 2), "NaN"),
    (lambda: correlation_bounds(1.2, 0.0), r"\[-1, 1\]"),
    (lambda: cross_correlation_bounds([[1.0]], [[0.9]], [[0.1]], [[0.5]], [[1.0]]),
     "positive semi-definite"),
    (lambda: completion_bounds(np.eye(3), 1, 1), "two different"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()


def test_bounds_from_sources_reject_one_sided_categories():
    a = pd.DataFrame({"x": ["a", "b"], "y": ["0", "1"]})
    b = pd.DataFrame({"x": ["a", "a"], "z": ["0", "1"]})
    with pytest.raises(InvalidInputError, match="one source only"):
        frechet_bounds_from_sources({"A": a, "B": b}, "y", "z")


@pytest.mark.parametrize("rho", ["0.5", None, [0.1, 0.2], float("nan"), True])
def test_a_correlation_that_is_not_a_number_is_an_input_error(rho):
    with pytest.raises(InvalidInputError, match=r"rho_xy must be a correlation in \[-1, 1\]"):
        correlation_bounds(rho, 0.5)
    assert correlation_bounds(np.float32(0.5), 0.5) == correlation_bounds(0.5, 0.5)


@pytest.mark.parametrize("overlap, match", [
    (("nope",), r"overlap column\(s\) \['nope'\] must be in both sources"),
    (("x", "y"), r"overlap column\(s\) \['y'\] must be in both sources"),
    ("x", "overlap must be a tuple of column names"),
])
def test_an_overlap_that_is_not_in_both_sources_is_an_input_error(overlap, match):
    a = pd.DataFrame({"x": ["a", "b"] * 2, "y": ["0", "1", "1", "0"]})
    b = pd.DataFrame({"x": ["a", "b"] * 2, "z": ["0", "1", "0", "0"]})
    with pytest.raises(InvalidInputError, match=match):
        frechet_bounds_from_sources({"A": a, "B": b}, "y", "z", overlap=overlap)


@pytest.mark.parametrize("i, j", [("0", 1), (0, 1.0), (None, 1), (-1, 1)])
def test_completion_indices_must_be_integers_in_range(i, j):
    with pytest.raises(InvalidInputError, match="two different indices below 3"):
        completion_bounds(np.eye(3), i, j)
