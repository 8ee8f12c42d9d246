"""Identification study: designs, exact population values, identical sources, cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal

from fusionlib.compendium.cells import Cell
from fusionlib.errors import InvalidInputError
from fusionlib.studies.identification.data import (
    DESIGNS,
    Design,
    discretise,
    make_sources,
    p11,
    population_values,
    truth_sample,
)


def test_designs_a_and_b_have_identical_sources():
    a = make_sources(DESIGNS["a_cia_holds"], 200, 3)
    b = make_sources(DESIGNS["b_cia_fails"], 200, 3)
    for name in ("A", "B"):
        pd.testing.assert_frame_equal(a[name], b[name])
    assert not make_sources(DESIGNS["a_cia_holds"], 200, 4)["A"].equals(a["A"])


def test_sources_and_truth_follow_the_design():
    d = DESIGNS["b_cia_fails"]
    n = 40_000
    src = make_sources(d, n, 0)
    truth = truth_sample(d, n, 0)
    tol = 4 / np.sqrt(n)  # sampling sd of a correlation <= 1/sqrt(n)
    assert src["A"].corr().iloc[0, 1] == pytest.approx(d.rho_xy, abs=tol)
    assert src["B"].corr().iloc[0, 1] == pytest.approx(d.rho_xz, abs=tol)
    np.testing.assert_allclose(truth.corr().to_numpy(), d.corr(), atol=tol)


def test_population_values_match_closed_forms_and_monte_carlo():
    d = DESIGNS["b_cia_fails"]
    v = population_values(d)
    assert v["rho_cia"] == pytest.approx(0.36)
    assert v["rho_lower"] == pytest.approx(0.36 - 0.64)
    # orthant probability of a bivariate normal: 1/4 + arcsin(rho) / (2 pi)
    mvn = multivariate_normal([0, 0], [[1, d.rho_yz], [d.rho_yz, 1]])
    assert v["p11_truth"] == pytest.approx(float(mvn.cdf([0, 0])), abs=1e-6)
    # cell bounds and CIA value against a large sample of the discretised sources
    n = 400_000
    disc = discretise(truth_sample(d, n, 1))
    py = disc.groupby("x")["y"].apply(lambda s: (s == "1").mean())
    pz = disc.groupby("x")["z"].apply(lambda s: (s == "1").mean())
    cia = float((0.25 * py * pz).sum())
    assert v["p11_cia"] == pytest.approx(cia, abs=0.005)
    assert v["p11_lower"] <= v["p11_truth"] <= v["p11_upper"]
    assert p11(disc) == pytest.approx(v["p11_truth"], abs=0.005)


def test_uninformative_overlap_gives_the_widest_bounds():
    v = population_values(DESIGNS["c_no_information"])
    assert (v["rho_lower"], v["rho_cia"], v["rho_upper"]) == pytest.approx((-1, 0, 1))
    assert (v["p11_lower"], v["p11_cia"], v["p11_upper"]) == pytest.approx((0, 0.25, 0.5))


def test_discretise_bins_and_signs():
    df = pd.DataFrame({"x": [-2.0, -0.1, 0.1, 2.0], "y": [-1.0, 0.5, 0.0, 3.0]})
    out = discretise(df)
    assert out["x"].tolist() == ["q0", "q1", "q2", "q3"]
    assert out["y"].tolist() == ["0", "1", "0", "1"]


def test_design_outside_the_bounds_raises():
    with pytest.raises(InvalidInputError, match="positive definite"):
        Design(0.9, 0.9, -0.5, "bad").corr()


def test_truth_sample_determinism():
    d = DESIGNS["a_cia_holds"]
    pd.testing.assert_frame_equal(truth_sample(d, 50, 1), truth_sample(d, 50, 1))
    assert not truth_sample(d, 50, 1).equals(truth_sample(d, 50, 2))


@pytest.mark.parametrize("method", ["bounds", "hotdeck_nnd", "igo", "hotdeck_random"])
def test_cells_compute_one_row_per_design(method):
    from fusionlib.studies.identification.cells import CONFIG, _compute

    cfg = dict(CONFIG["smoke"], law="ab", method=method, rep=0)
    shard = _compute(Cell("identification", cfg, 5))
    rows = shard.rows
    assert rows["design"].tolist() == ["a_cia_holds", "b_cia_fails"]
    assert rows["p11"].between(0, 1).all()
    # identical sources: every method gives the same answer in (a) and (b)
    assert rows["p11"].iloc[0] == rows["p11"].iloc[1]
    again = _compute(Cell("identification", cfg, 5)).rows
    pd.testing.assert_frame_equal(rows.drop(columns="fit_seconds"),
                                  again.drop(columns="fit_seconds"))


def test_grid_has_every_method_and_law():
    from fusionlib.studies.identification.cells import IDENTIFICATION, METHODS, SOURCE_LAWS
    from fusionlib.studies.identification.data import DESIGNS

    cells = IDENTIFICATION.cells("smoke", 0)
    assert {(c.config["method"], c.config["law"]) for c in cells} == {
        (m, law) for m in METHODS for law in SOURCE_LAWS}
    assert sorted(d for ds in SOURCE_LAWS.values() for d in ds) == sorted(DESIGNS)


def test_fusiongan_cell_stacks_its_seeds_and_states_whether_they_learned():
    from fusionlib.studies.identification.cells import CONFIG, IDENTIFICATION, _compute

    cells = [c for c in IDENTIFICATION.cells("cpu", 0) if c.config["method"] == "fusiongan"]
    assert len(cells) == 3 and all(len(c.config["rep_seeds"]) == 3 for c in cells)
    cfg = dict(CONFIG["smoke"], law="ab", method="fusiongan", rep_seeds=[11, 12])
    rows = _compute(Cell("identification", cfg, 5)).rows
    assert rows["rep"].tolist() == [0, 0, 1, 1]
    assert rows["design"].tolist() == ["a_cia_holds", "b_cia_fails"] * 2
    assert rows["learned"].dtype == bool and (rows["epochs"] <= cfg["epochs"]).all()
    # one answer per seed for the identical sources of (a) and (b); other seeds, other answers
    assert rows["rho"].iloc[0] == rows["rho"].iloc[1] != rows["rho"].iloc[2]
