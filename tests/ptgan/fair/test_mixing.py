"""Algorithm 2 (FairPTGAN's group-mixed minibatches) and its builder."""

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.mixing import (
    GroupMixing,
    check_groups,
    group_column,
    group_mixed_minibatch,
)
from fusionlib.rng import torch_generator


def _data(n0=30, n1=20, d=3):
    # group 0 rows are all 0 except column 0 = row id; group 1 rows are all 10 (+ row id)
    x0 = torch.zeros(n0, d)
    x0[:, 0] = torch.arange(n0, dtype=torch.float32)
    x1 = torch.full((n1, d), 10.0)
    x1[:, 0] = 100 + torch.arange(n1, dtype=torch.float32)
    x = torch.cat([x0, x1])
    return x, torch.arange(n0), torch.arange(n0, n0 + n1)


def test_each_pair_mixes_one_row_of_each_group():
    x, r0, r1 = _data()
    tb = group_mixed_minibatch(x, r0, r1, 8, 0.2, torch_generator(0, "t"))
    half = 4
    # column 1 is 0 in group 0 and 10 in group 1: q1 = 10 (1 - alpha1) on the first half and
    # 10 alpha1 on the mirror half, whatever rows were drawn
    a = tb.alpha1[:half]
    torch.testing.assert_close(tb.q1[:half, 1], 10 * (1 - a))
    torch.testing.assert_close(tb.q1[half:, 1], 10 * a)
    torch.testing.assert_close(tb.q2[:half, 1], 10 * (1 - tb.alpha2[:half]))
    torch.testing.assert_close(tb.q2[half:, 1], 10 * tb.alpha2[:half])
    # the mirror shares alpha (the networks see t(alpha) = t(1 - alpha))
    torch.testing.assert_close(tb.alpha1[:half], tb.alpha1[half:])
    torch.testing.assert_close(tb.q_tilde, tb.nu[:, None] * tb.q1 + (1 - tb.nu[:, None]) * tb.q2)
    torch.testing.assert_close(tb.alpha_tilde, tb.nu * tb.alpha1 + (1 - tb.nu) * tb.alpha2)


def test_alpha_one_reproduces_the_two_groups_in_equal_shares():
    x, r0, r1 = _data()
    tb = group_mixed_minibatch(x, r0, r1, 38, 1.0, torch_generator(1, "t"))
    assert (tb.alpha1 == 1).all()
    # at alpha = 1 the first half is group 0 rows, the mirror half group 1 rows
    assert (tb.q1[:19, 1] == 0).all() and (tb.q1[19:, 1] == 10).all()
    assert set(tb.q1[:19, 0].tolist()) <= set(range(30))


def test_alpha_share_at_one_is_r():
    x, r0, r1 = _data(300, 300)
    tb = group_mixed_minibatch(x, r0, r1, 598, 0.2, torch_generator(2, "t"))
    assert float((tb.alpha1 == 1).float().mean()) == pytest.approx(0.2, abs=0.07)
    assert float(tb.alpha2.mean()) == pytest.approx(0.5, abs=0.07)


def test_same_seed_same_batch_other_seed_other_batch():
    x, r0, r1 = _data()
    a = group_mixed_minibatch(x, r0, r1, 10, 0.2, torch_generator(3, "t"))
    b = group_mixed_minibatch(x, r0, r1, 10, 0.2, torch_generator(3, "t"))
    c = group_mixed_minibatch(x, r0, r1, 10, 0.2, torch_generator(4, "t"))
    assert torch.equal(a.q1, b.q1) and torch.equal(a.q_tilde, b.q_tilde)
    assert not torch.equal(a.q1, c.q1)


def test_group_not_larger_than_half_a_batch_raises():
    with pytest.raises(InvalidInputError, match="n_b/2"):
        check_groups(100, 100, 200)
    check_groups(101, 101, 200)
    with pytest.raises(InvalidInputError, match="even"):
        check_groups(100, 100, 7)
    x, r0, r1 = _data(30, 4)
    with pytest.raises(InvalidInputError, match="n_b/2"):
        group_mixed_minibatch(x, r0, r1, 8, 0.2, torch_generator(0, "t"))


def _encoded(levels=("White", "Black", "White", "Other")):
    df = pd.DataFrame({"age": np.arange(len(levels), dtype=float), "race": list(levels),
                       "y": ["no", "yes"] * (len(levels) // 2)})
    return TabularEncoder(("race", "y")).fit(df), df


def test_group_column_checks_the_sensitive_attribute():
    enc, df = _encoded(("White", "Non-white") * 2)
    col = group_column(enc, "race", "White")
    x = enc.transform(df)
    np.testing.assert_array_equal(x[:, col], (df["race"] == "White").astype(float))
    with pytest.raises(InvalidInputError, match="unknown sensitive"):
        group_column(enc, "sex", "Male")
    with pytest.raises(InvalidInputError, match="discrete"):
        group_column(enc, "age", 1.0)
    with pytest.raises(InvalidInputError, match="not a level"):
        group_column(enc, "race", "Martian")
    enc3, _ = _encoded()
    with pytest.raises(InvalidInputError, match="binary"):
        group_column(enc3, "race", "White")


def test_builder_draws_from_the_right_groups():
    levels = ["White"] * 12 + ["Non-white"] * 8
    df = pd.DataFrame({"v": np.r_[np.zeros(12), np.ones(8)], "race": levels})
    enc = TabularEncoder(("race",)).fit(df)
    x = enc.transform(df).astype(np.float32)
    fn = GroupMixing("race", "White")(enc, x)
    tb = fn(torch.as_tensor(x), 6, 1.0, torch_generator(0, "t"))
    v = enc.spans_[0].start
    # A = 1 is White (v = 0, encoded -1) -> drawn as x^(1) in the mirror half at alpha = 1
    assert (tb.q1[:3, v] == 1).all() and (tb.q1[3:, v] == -1).all()
    one = pd.DataFrame({"v": [0.0, 1.0], "race": ["White", "White"]})
    enc1 = TabularEncoder(("race",)).fit(pd.concat([one, df.iloc[12:]]))
    x1 = enc1.transform(one).astype(np.float32)
    with pytest.raises(InvalidInputError, match="empty group"):
        GroupMixing("race", "White")(enc1, x1)


def _tiny_table(n_white=150, n_other=150):
    rng = np.random.default_rng(0)
    n = n_white + n_other
    return pd.DataFrame({"x": rng.normal(size=n),
                         "race": ["White"] * n_white + ["Non-white"] * n_other,
                         "y": rng.integers(0, 2, n).astype(str)})


def test_fairptgan_trains_through_the_synthesizer_and_samples_every_level():
    from fusionlib.ptgan.tabular.model import TabularPTGAN

    def fit(seed):
        return TabularPTGAN("pt+cp", discrete_columns=("race", "y"), n_iter=3,
                            overrides={"r": 0.2, "batch_size": 20},
                            minibatch=GroupMixing("race", "White"), seed=seed).fit(_tiny_table())

    a, b, c = fit(0), fit(0), fit(1)
    for alpha in (0.5, 0.75, 1.0):
        s = a.sample(50, 7, alpha=alpha)
        assert list(s.columns) == ["x", "race", "y"] and len(s) == 50
    np.testing.assert_array_equal(a.sample_encoded(20, 7, alpha=0.6),
                                  b.sample_encoded(20, 7, alpha=0.6))
    assert not np.array_equal(a.sample_encoded(20, 7), c.sample_encoded(20, 7))


def test_fairptgan_with_a_group_below_half_a_batch_raises():
    from fusionlib.ptgan.tabular.model import TabularPTGAN

    model = TabularPTGAN("pt+cp", discrete_columns=("race", "y"), n_iter=2,
                         overrides={"r": 0.2, "batch_size": 200},
                         minibatch=GroupMixing("race", "White"), seed=0)
    with pytest.raises(InvalidInputError, match="n_b/2"):
        model.fit(_tiny_table(150, 60))
