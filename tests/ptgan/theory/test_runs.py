"""Theory checks along ring runs, the theory cells and their summaries."""

import json

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.cells import get_experiment
from fusionlib.ptgan.theory.cells import THEORY_CONFIG, TRAINING_METHODS
from fusionlib.ptgan.theory.report import (
    exponent_estimate,
    held_decision,
    instance_directions,
    layer_columns,
    ratio_check,
)
from fusionlib.ptgan.theory.runs import training_checks


@pytest.fixture(scope="module")
def pt_rows():
    return training_checks("pt+cp", 3, 4, check_every=2, n_check=60)


def test_training_checks_rows(pt_rows):
    assert list(pt_rows.iteration) == [1, 1, 2, 2, 4, 4]
    assert list(pt_rows.view) == ["alpha=1", "tempered"] * 3
    assert (pt_rows[layer_columns(pt_rows, "thm1_viol_l")].to_numpy() == 0).all()
    assert (pt_rows.ratio <= 1).all()
    tempered = pt_rows[pt_rows.view == "tempered"]
    assert (tempered.r4_factor_dev < 1e-5).all() and (tempered.r4_two > tempered.r4_same).all()


def test_training_checks_are_seeded(pt_rows):
    again = training_checks("pt+cp", 3, 4, check_every=2, n_check=60)
    pd.testing.assert_frame_equal(pt_rows, again)
    other = training_checks("pt+cp", 4, 4, check_every=2, n_check=60)
    assert not np.allclose(other.w1, pt_rows.w1)


def test_untempered_method_has_one_view():
    rows = training_checks("mp", 0, 2, check_every=2, n_check=40)
    assert set(rows.view) == {"alpha=1"} and "r4_same" not in rows


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_theory_grids(scale):
    cfg = THEORY_CONFIG[scale]
    sizes = {"ptgan_theory_training": len(TRAINING_METHODS) * cfg["t_seeds"],
             "ptgan_theory_collapse": 2 * cfg["c_seeds"],
             "ptgan_theory_rates": cfg["r_reps"]}
    for name, n in sizes.items():
        cells = get_experiment(name).cells(scale, 0)
        assert len(cells) == n and len({c.cell_id for c in cells}) == n
        json.dumps([c.config for c in cells])
    seeds = {c.seed for c in get_experiment("ptgan_theory_collapse").cells(scale, 0)}
    assert seeds != {c.seed for c in get_experiment("ptgan_theory_collapse").cells(scale, 1)}


def test_report_helpers():
    frame = pd.DataFrame({"a": [0.5, np.nan, 1.0], "b": [0.2, 0.9, 1.2]})
    chk = ratio_check(frame, ["a", "b"])
    assert chk == {"instances": 5, "held": 4, "max_ratio": 1.2, "min_slack": pytest.approx(-0.2)}
    assert held_decision(chk, "x").verdict == "differs"
    assert held_decision(ratio_check(frame, ["a"]), "x").verdict == "reproduced"
    est = exponent_estimate([10, 100, 1000], [1.0, 10**-0.5, 0.1])
    assert est.value == pytest.approx(-0.5) and est.df == 1
    assert instance_directions([1.0, 2.0], [0.1, 0.1], ["a", "b"], ">0").verdict == "reproduced"
    assert instance_directions([1.0, 0.0], [0.1, 1.0], ["a", "b"], ">0").verdict == \
        "inconclusive"


def test_remark4_terms_take_other_pairs():
    from fusionlib.gan.networks import toy_networks
    from fusionlib.ptgan.theory.planted import _line_pairs
    from fusionlib.ptgan.theory.runs import remark4_terms

    critic = toy_networks("small", conditional=True, seed=0)[1]
    out = remark4_terms(critic, 500, 0.5, 1, pairs=_line_pairs)
    assert out["r4_two"] > out["r4_same"] and out["r4_factor_dev"] < 1e-5
