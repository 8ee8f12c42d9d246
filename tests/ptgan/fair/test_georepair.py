"""GeoRepair in value space and FairWGANGP's fairness penalty."""

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.baselines import (
    FairnessPenalty,
    geometric_repair,
    repair_levels,
    soft_parity_gap,
)


def test_repair_levels_are_five_equally_spaced():
    np.testing.assert_allclose(repair_levels(), [0, 0.25, 0.5, 0.75, 1])
    with pytest.raises(InvalidInputError):
        repair_levels(1)


def test_zero_repair_is_identity_with_ties():
    rng = np.random.default_rng(0)
    x = np.c_[rng.integers(0, 3, 50), rng.normal(size=50)].astype(float)
    g = (np.arange(50) % 3 == 0).astype(float)
    np.testing.assert_array_equal(geometric_repair(x, g, 0.0), x)


def test_shifted_groups_meet_in_the_middle():
    # group 1 is group 0 shifted by 4: quantile functions Q1 = Q0 + 4, so full repair moves
    # every row to Q0(q) + 2 and lambda_p = 0.5 moves group 0 up by 1, group 1 down by 1
    base = np.arange(10, dtype=float)
    x = np.r_[base, base + 4][:, None]
    g = np.r_[np.zeros(10), np.ones(10)]
    full = geometric_repair(x, g, 1.0)[:, 0]
    np.testing.assert_allclose(full, np.r_[base + 2, base + 2])
    half = geometric_repair(x, g, 0.5)[:, 0]
    np.testing.assert_allclose(half, np.r_[base + 1, base + 3])


def test_full_repair_equalises_group_distributions_and_keeps_ranks():
    rng = np.random.default_rng(1)
    x = np.r_[rng.normal(0, 1, 40), rng.exponential(2, 40)][:, None]
    g = np.r_[np.zeros(40), np.ones(40)]
    out = geometric_repair(x, g, 1.0)[:, 0]
    np.testing.assert_allclose(np.sort(out[:40]), np.sort(out[40:]))
    for m in (g == 0, g == 1):
        assert (np.argsort(np.argsort(out[m])) == np.argsort(np.argsort(x[m, 0]))).all()


def test_repair_is_value_space_not_rank_space():
    # unequal group sizes: value-space repair of group 0 (sizes 4 and 2) at lambda_p = 1
    # averages the two groups' quantile functions at the row's own mid-CDF level
    x = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [20.0]])
    g = np.array([0, 0, 0, 0, 1, 1], float)
    out = geometric_repair(x, g, 1.0)[:, 0]
    # group 0 levels q = 1/8, 3/8, 5/8, 7/8 -> Q1 = 10, 10, 20, 20 -> means 5, 5.5, 11, 11.5
    np.testing.assert_allclose(out[:4], [5.0, 5.5, 11.0, 11.5])
    # group 1 levels q = 1/4, 3/4 -> Q0 = 0 and 2 -> means 5 and 11
    np.testing.assert_allclose(out[4:], [5.0, 11.0])


def test_repair_bad_input_raises():
    x = np.zeros((4, 1))
    with pytest.raises(InvalidInputError, match="both groups"):
        geometric_repair(x, np.zeros(4), 0.5)
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        geometric_repair(x, np.array([0, 1, 0, 1.0]), 1.5)
    with pytest.raises(InvalidInputError, match="0/1"):
        geometric_repair(x, np.array([0, 2, 0, 1.0]), 0.5)
    with pytest.raises(InvalidInputError, match="NaN"):
        geometric_repair(np.array([[np.nan], [0], [1], [2]]), np.array([0, 1, 0, 1.0]), 0.5)


def test_soft_parity_gap_hand_computed():
    # A=1 rows: y = 1, 0 -> mean 0.5; A=0 rows: y = 1, 1, 0, 0, 0 -> mean 0.4; gap 0.1
    y = torch.tensor([1.0, 0, 1, 1, 0, 0, 0])
    a = torch.tensor([1.0, 1, 0, 0, 0, 0, 0])
    assert float(soft_parity_gap(y, a)) == pytest.approx(0.1)
    # soft memberships: weights a and 1 - a
    ys, as_ = torch.tensor([0.2, 0.8]), torch.tensor([0.25, 0.75])
    m1 = (0.2 * 0.25 + 0.8 * 0.75) / 1.0
    m0 = (0.2 * 0.75 + 0.8 * 0.25) / 1.0
    assert float(soft_parity_gap(ys, as_)) == pytest.approx(abs(m1 - m0))


def test_fairness_penalty_term_has_a_gradient():
    df = pd.DataFrame({"race": ["W", "N", "W", "N"], "y": ["0", "1", "1", "1"]})
    enc = TabularEncoder(("race", "y")).fit(df)
    term = FairnessPenalty("race", "W", "y", "1", weight=10.0)(enc)
    fake = torch.tensor(enc.transform(df), dtype=torch.float32, requires_grad=True)
    value = term(fake, None)
    # W rows: y = 0, 1 -> 0.5; N rows: y = 1, 1 -> 1; 10 * 0.5
    assert float(value.detach()) == pytest.approx(5.0)
    value.backward()
    assert fake.grad is not None and float(fake.grad.abs().sum()) > 0
    with pytest.raises(InvalidInputError, match=">= 0"):
        FairnessPenalty("race", "W", "y", "1", weight=-1.0)(enc)
