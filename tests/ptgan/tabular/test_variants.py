"""The unstated choices of PTGAN's tabular runs as parameters: Adult's table, batch norm when
sampling, the label balance recorded at each evaluation point; and the synthesizer surface."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.gan.networks import batch_statistics, eval_mode
from fusionlib.ptgan.tabular.runs import balance_row
from fusionlib.ptgan.tabular.stacked import StackedTabularPTGAN


def test_balance_row_by_hand():
    # D_train: c = a a b b (shares a .5, b .5); synthetic: a a a z (a .75, z .25)
    # TVD = 0.5 * (|.75 - .5| + |0 - .5| + |.25 - 0|) = 0.5 * 1.0 = 0.5; label share 1 of 4
    ref = {"c": pd.Series(["a", "a", "b", "b"]).value_counts(normalize=True)}
    synth = pd.DataFrame({"c": ["a", "a", "a", "z"], "y": [0, 0, 1, 0]})
    out = balance_row(synth, ref, "y")
    assert out == pytest.approx({"label_share": 0.25, "tvd_c": 0.5})
    # identity: the data against itself is 0; disjoint categories give 1
    same = balance_row(pd.DataFrame({"c": ["a", "b"], "y": [1, 1]}), ref, "y")
    assert same == pytest.approx({"label_share": 1.0, "tvd_c": 0.0})
    apart = balance_row(pd.DataFrame({"c": ["q", "r"], "y": [0, 0]}), ref, "y")
    assert apart["tvd_c"] == pytest.approx(1.0) and apart["label_share"] == 0.0


def test_adult_as_the_paper_counts_it_and_the_complete_variant():
    from fusionlib.ptgan.tabular.data import ADULT_VARIANTS, availability, load_tabular

    if availability("adult") is not None:
        pytest.skip("Adult is not provisioned (make data)")
    paper = load_tabular("adult")
    assert ADULT_VARIANTS[0] == "paper" and len(paper.frame) == 32_561
    assert (paper.frame["workclass"] == "?").sum() > 0  # a missing value is a category
    assert {"education", "fnlwgt"}.isdisjoint(paper.frame.columns)
    complete = load_tabular("adult", "uci-complete")
    assert len(complete.frame) == 45_222 and not (complete.frame == "?").any().any()
    with pytest.raises(InvalidInputError, match="variant"):
        load_tabular("adult", "adult.test")
    with pytest.raises(InvalidInputError, match="only for adult"):
        load_tabular("law_school", "paper")


def _fitted(seeds=(5, 6)):
    g = np.random.default_rng(4)
    df = pd.DataFrame({"x": g.normal(size=300), "c": g.choice(["a", "b", "c"], 300),
                       "y": g.choice(["0", "1"], 300)})
    return StackedTabularPTGAN("pt+cp", seeds=list(seeds), discrete_columns=("c", "y"),
                               n_iter=6, overrides={"batch_size": 32}).fit(df)


def test_batch_statistics_sampling_leaves_the_model_unchanged_and_differs_from_running():
    model = _fitted()
    gen = model.step_.generator
    before = [b.clone() for b in gen.buffers()]
    assert before, "the Table 9 generator has batch norm"
    running = model.sample_encoded(200, [1, 2])
    batch = model.sample_encoded(200, [1, 2], bn="batch")
    for b, old in zip(gen.buffers(), before, strict=True):
        torch.testing.assert_close(b, old, rtol=0, atol=0)
    # the running-statistics draw is unchanged by a batch-statistics draw in between
    np.testing.assert_array_equal(running, model.sample_encoded(200, [1, 2]))
    assert not np.array_equal(running, batch)
    with pytest.raises(InvalidInputError, match="bn"):
        model.sample_encoded(10, [1, 2], bn="train")


def test_batch_statistics_restores_mode_and_buffers_after_an_error():
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    net.eval()
    saved = [b.clone() for b in net.buffers()]
    with pytest.raises(RuntimeError), batch_statistics(net):
        net(torch.randn(8, 3))  # updates the running statistics in training mode
        raise RuntimeError("stop")
    assert not net.training
    for b, old in zip(net.buffers(), saved, strict=True):
        torch.testing.assert_close(b, old, rtol=0, atol=0)
    with eval_mode(net):
        assert not net.training


def test_stacked_sample_needs_no_seed_and_has_a_documented_default():
    model = _fitted()
    a, b = model.sample(30), model.sample(30, [0, 1])
    assert all(x.equals(y) for x, y in zip(a, b, strict=True))  # default: repetition r on r
    other = model.sample(30, [7, 8])
    assert not a[0].equals(other[0])


def test_sampling_more_rows_than_memory_is_a_named_error():
    from fusionlib.ptgan.tabular.model import TabularPTGAN

    model = _fitted(seeds=(5,))
    with pytest.raises(InvalidInputError, match="fewer rows"):
        model.sample_encoded(10**12)
    g = np.random.default_rng(1)
    df = pd.DataFrame({"x": g.normal(size=100), "y": g.choice(["0", "1"], 100)})
    single = TabularPTGAN("mp", seed=1, discrete_columns=("y",), n_iter=2,
                          overrides={"batch_size": 20}).fit(df)
    with pytest.raises(InvalidInputError, match="fewer rows"):
        single.sample(10**12)


def test_encoders_work_inside_scikit_learn_pipelines():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from fusionlib.encoding.onehot import IndicatorEncoder
    from fusionlib.encoding.tabular import TabularEncoder

    g = np.random.default_rng(0)
    X = pd.DataFrame({"x": g.normal(size=60), "c": g.choice(["a", "b"], 60)})
    y = (X["c"] == "a").astype(int)
    pipe = Pipeline([("enc", TabularEncoder(discrete_columns=("c",))),
                     ("clf", LogisticRegression())]).fit(X, y)
    assert pipe.score(X, y) == 1.0
    ct = ColumnTransformer([("c", IndicatorEncoder(), ["c"])]).fit(X, y)
    assert ct.transform(X).shape == (60, 2)
